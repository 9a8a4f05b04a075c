# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# For tests/integration/deploy_*.sh (bash, sourced after common.sh): the
# rendered Kubernetes objects, the agent image, and running one container
# of a rendered workload the way a node would (tests/lib/k8s_container.py).
#
#   need_render_tools            skip unless kubectl and python3 + PyYAML
#   deploy_render OVERLAY FILE   kubectl kustomize deploy/kubernetes/OVERLAY
#   deploy_image                 build ngx-sockmap/agent:test from
#                                docker/agent.Dockerfile (a daemon is started
#                                only when none runs, stopped at exit)
#   pod_run NAME RENDERED WORKLOAD CONTAINER NETNS [k8s_container.py opts]
#                                run it (runc, or docker where the daemon
#                                knows every capability) in NETNS (the pod's,
#                                lo up; docker: a fresh one); POD_PID: its
#                                pid on the host (nsenter -t POD_PID -n
#                                reaches its ports); pod_stop NAME: SIGTERM,
#                                wait, print its exit status
. "$TOP/scripts/compose-lib.sh"

DEPLOY=$TOP/deploy
K8S_CONTAINER=$TOP/tests/lib/k8s_container.py
IMAGE=ngx-sockmap/agent:test

need_render_tools() {
	command -v kubectl >/dev/null || skip "kubectl missing (kubectl kustomize renders deploy/kubernetes)"
	python3 -c 'import yaml' 2>/dev/null || skip "python3 yaml module missing (Debian package python3-yaml)"
}

deploy_render() { # deploy_render OVERLAY OUTFILE
	kubectl kustomize "$DEPLOY/kubernetes/$1" >"$2" 2>"$2.err" ||
		fail "kubectl kustomize deploy/kubernetes/$1: $(cat "$2.err")"
}

# The image as a user builds it (deploy/kubernetes/README.md), on the base
# image the compose scripts use (no Docker Hub here: scripts/base-image.sh).
deploy_image() {
	command -v docker >/dev/null || skip "no docker client: the agent image is built with docker/agent.Dockerfile"
	mkdir -p "$(dirname "$COMPOSE_LOG")"
	DOCKERD_STARTED=$("$TOP/scripts/docker-up.sh" 2>"$TMP/docker-up.err") ||
		skip "no Docker daemon: $(tail -n 1 "$TMP/docker-up.err")"
	on_exit deploy_docker_down
	images_lock
	compose_base_image || fail "$COMPOSE_ERR"
	docker build -q -f "$TOP/docker/agent.Dockerfile" \
		--build-arg BASE_IMAGE="$BASE_IMAGE" \
		--build-arg NGX_SOCKMAP_VERSION="$("$TOP/scripts/version.sh")" \
		-t "$IMAGE" "$TOP" >"$TMP/build.log" 2>&1 ||
		fail "image build failed: $(grep -v '^ *$' "$TMP/build.log" | tail -n 3)"
	images_unlock
	ok "image $IMAGE built from docker/agent.Dockerfile (base $BASE_IMAGE)"
}
deploy_docker_down() {
	[ -n "$DOCKERD_STARTED" ] && "$TOP/scripts/docker-up.sh" --stop "$DOCKERD_STARTED"
	DOCKERD_STARTED=
}

# The container runtime for pod_run.  Docker where its daemon accepts every
# capability the manifest adds; Debian 12's Docker 20.10 knows no CAP_BPF
# or CAP_PERFMON ("invalid CapAdd: unknown capability"), so there runc, the
# OCI runtime under both Docker and containerd, runs the image with the
# OCI config a kubelet + containerd would make from the same manifest.
POD_RUNTIME=
pod_runtime() { # pod_runtime RENDERED WORKLOAD CONTAINER
	local caps
	[ -n "$POD_RUNTIME" ] && return 0
	caps=$(python3 "$K8S_CONTAINER" "$@" docker-args | awk 'p { print; p = 0 } $0 == "--cap-add" { p = 1 }')
	local a=() c
	for c in $caps; do a+=(--cap-add "$c"); done
	if docker run --rm --cap-drop ALL "${a[@]}" --network none --entrypoint true "$IMAGE" \
		>"$TMP/capcheck" 2>&1; then
		POD_RUNTIME=docker
	elif command -v runc >/dev/null; then
		POD_RUNTIME=runc
		log "docker: $(grep -o 'unknown capability[^"]*"[A-Z_]*"' "$TMP/capcheck" | head -n 1) (daemon $(docker version -f '{{.Server.Version}}' 2>/dev/null)): running the image with runc"
	else
		skip "Docker refuses the manifest's capabilities ($(tail -n 1 "$TMP/capcheck")) and runc is missing"
	fi
}

declare -A POD_RT POD_WAIT
POD_PID=
pod_run() { # pod_run NAME RENDERED WORKLOAD CONTAINER NETNS [opts...]
	local name=$1 rendered=$2 wl=$3 ctr=$4 netns=$5 i
	shift 5
	pod_runtime "$rendered" "$wl" "$ctr"
	POD_RT[$name]=$POD_RUNTIME
	if [ "$POD_RUNTIME" = runc ]; then
		local b=$TMP/bundle-$name
		mkdir -p "$b/rootfs"
		if [ ! -s "$TMP/rootfs.tar" ]; then
			local cid
			cid=$(docker create "$IMAGE") || fail "docker create $IMAGE"
			docker export "$cid" >"$TMP/rootfs.tar" || fail "docker export"
			docker rm "$cid" >/dev/null
		fi
		tar -C "$b/rootfs" -xf "$TMP/rootfs.tar" || fail "unpacking the image"
		(cd "$b" && runc spec && mv config.json template.json) || fail "runc spec"
		python3 "$K8S_CONTAINER" "$rendered" "$wl" "$ctr" oci "$b/template.json" \
			--netns "/var/run/netns/$netns" \
			--cgroups-path "/ngx-sockmap-test.$$.ctr-$name" "$@" >"$b/config.json" ||
			fail "translating $wl/$ctr to an OCI config"
		on_exit "pod_remove '$name'"
		runc run --bundle "$b" "nsm$$-$name" >"$TMP/pod-$name.out" 2>"$TMP/pod-$name.err" </dev/null &
		POD_WAIT[$name]=$!
		for i in $(seq 1 100); do
			POD_PID=$(runc state "nsm$$-$name" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])' 2>/dev/null)
			[ -n "$POD_PID" ] && [ "$POD_PID" != 0 ] && return 0
			kill -0 "${POD_WAIT[$name]}" 2>/dev/null || fail "container $name exited at once: $(cat "$TMP/pod-$name.err")"
			sleep 0.1
		done
		fail "container $name did not start"
	else
		local args=()
		mapfile -t args < <(python3 "$K8S_CONTAINER" "$rendered" "$wl" "$ctr" docker-args \
			--image "$IMAGE" "$@") || fail "translating $wl/$ctr to docker run flags"
		on_exit "pod_remove '$name'"
		# Docker can't join a named netns: --network none (lo up) in its place
		docker run -d --name "nsm$$-$name" --network none "${args[@]}" \
			>"$TMP/pod-$name.cid" 2>"$TMP/pod-$name.err" || fail "docker run: $(cat "$TMP/pod-$name.err")"
		POD_PID=$(docker inspect -f '{{.State.Pid}}' "nsm$$-$name")
	fi
}
# pod_stop NAME: SIGTERM (as the kubelet stops a container), up to 15 s;
# its exit status in POD_RC (not in $(...): wait needs this shell)
POD_RC=
pod_stop() {
	local name=$1 rc
	if [ "${POD_RT[$name]}" = runc ]; then
		runc kill "nsm$$-$name" TERM 2>/dev/null
		timeout 15 tail --pid="${POD_WAIT[$name]}" -f /dev/null
		wait "${POD_WAIT[$name]}"
		rc=$?
	else
		docker stop -t 15 "nsm$$-$name" >/dev/null
		rc=$(docker inspect -f '{{.State.ExitCode}}' "nsm$$-$name")
	fi
	POD_RC=$rc
}
pod_logs() { # pod_logs NAME
	if [ "${POD_RT[$1]}" = runc ]; then
		cat "$TMP/pod-$1.out" "$TMP/pod-$1.err"
	else
		docker logs "nsm$$-$1" 2>&1
	fi
}
# pod_exec NAME CMD...: run CMD in the container, as a kubelet's exec
# probe does (the container's own user and capabilities)
pod_exec() {
	local name=$1
	shift
	if [ "${POD_RT[$name]}" = runc ]; then
		runc exec "nsm$$-$name" "$@"
	else
		docker exec "nsm$$-$name" "$@"
	fi
}
pod_remove() {
	if [ "${POD_RT[$1]:-runc}" = runc ]; then
		runc kill "nsm$$-$1" KILL 2>/dev/null
		runc delete -f "nsm$$-$1" 2>/dev/null
	else
		docker rm -f "nsm$$-$1" >/dev/null 2>&1
	fi
}
# pod_cgroup_file NAME FILE: path of FILE of the container's memory cgroup
# (cgroup v2, else the v1 memory hierarchy of a hybrid host), empty if none
pod_cgroup_file() {
	local rel=ngx-sockmap-test.$$.ctr-$1 f
	for f in "$CG2/$rel/$2" "/sys/fs/cgroup/memory/$rel/$2"; do
		[ -e "$f" ] && { echo "$f"; return 0; }
	done
}

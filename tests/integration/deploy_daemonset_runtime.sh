#!/usr/bin/env bash
# timeout: 900
# order: last (its images are built meanwhile: tests/run, .ci/run)
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves, with the DaemonSet of deploy/kubernetes/base as rendered by
# kubectl kustomize: the agent image (docker/agent.Dockerfile) runs with
# exactly that container's security context (capabilities dropped to
# BPF, PERFMON, NET_ADMIN, SYS_ADMIN, SYS_PTRACE, not privileged, read-only root),
# hostPID, its hostPath and emptyDir mounts, its memory and CPU limits, its
# command and arguments, and the private cgroup namespace containerd gives
# such a container on a cgroup v2 node -- every flag derived from the
# rendered YAML (tests/lib/k8s_container.py), none typed here.  With it,
# attached to a real proxy nginx and upstream on this host: the startup,
# readiness and liveness probes' commands succeed in the container (none
# is an HTTP probe: deploy_render.sh), sends on both hops are
# redirected under wrk, the start-up self-test ran, and when the container
# is stopped (SIGTERM, as the kubelet does) it exits 0 and nothing is left
# attached.  A second upstream is pod-like: its own network namespace
# behind a veth (a CNI plugin's), every process another user (65534); the
# agent reaches its /proc/PID/ns/net only with ptrace access
# (CAP_SYS_PTRACE), and without it that hop is never paired (it looks
# remote) and ngx_sockmap_netns_unresolved says so.
#
# --k8s-selector (finding the Nginx pods through the API) needs a cluster:
# that one option is replaced by the agent's --cgroup of the test's nginx
# cgroups; everything else is the manifest's.
. "$(dirname "$0")/../lib/common.sh"
. "$TOP/tests/lib/proxy.sh"
. "$TOP/tests/lib/deploy.sh"
need_render_tools
command -v wrk >/dev/null || skip "wrk missing (make deps)"

deploy_render base "$TMP/base.yaml"
WL=DaemonSet/ngx-sockmap
k8s() { python3 "$K8S_CONTAINER" "$TMP/base.yaml" "$WL" agent "$@"; }
metrics_port=$(k8s get metrics-port) || fail "no --metrics port"
mapfile -t startup < <(k8s get startup-command)
mapfile -t readiness < <(k8s get readiness-command)
mapfile -t liveness < <(k8s get liveness-command)
for p in startup readiness liveness; do
	[ "$(k8s get $p-command | wc -l)" -gt 0 ] || fail "the $p probe is not an exec probe"
done
log "docker run equivalent of $WL/agent (the --k8s-selector pair replaced):"
log "  docker run $(k8s docker-args --image "$IMAGE" --drop-opt=--k8s-selector --add-arg=--cgroup --add-arg=CGROUP | tr '\n' ' ')"

deploy_image

proxy_setup 18510 18511
# the pod-like upstream: nginx as uid 65534 in its own netns, and a proxy
# in P's cgroup in front of it
Q=$(cg_make uq) || fail "$Q"
qns=$(ns_make uq)
veth_quiet "vsm$$h" "vsm$$q" "$qns" 10.213.12.1 10.213.12.2
# not under $TMP (0700): that user must reach its files
qprefix=$(mktemp -d /tmp/nsm-uq.XXXXXX) || fail "mktemp"
chmod 755 "$qprefix"
on_exit "rm -rf '$qprefix'"
mkdir -p "$qprefix/logs" "$qprefix/html"
cp "$TMP/nginx-up/html/64k.bin" "$qprefix/html/"
sed -e "s|@PREFIX@|$qprefix|g" -e "s|@LISTEN@|10.213.12.2:18512|" -e "s|@SENDFILE@|on|" \
	-e '/^user /d' "$TOP/nginx-conf/upstream.conf" >"$qprefix/nginx.conf"
chown -R 65534:65534 "$qprefix"
cg_exec "$Q" ip netns exec "$qns" setpriv --reuid=65534 --regid=65534 --clear-groups \
	nginx -p "$qprefix" -c "$qprefix/nginx.conf" || fail "the pod-like upstream did not start"
on_exit "nginx_stop '$qprefix'"
ip netns exec "$qns" sh -c 'for i in $(seq 50); do ss -ltn | grep -q :18512 && exit 0; sleep 0.1; done; exit 1' ||
	fail "the pod-like upstream is not listening"
nginx_start pxq proxy.conf "$P" LISTEN=127.0.0.1:18513 UPSTREAM=10.213.12.2:18512 >/dev/null
wait_port 127.0.0.1 18513
ns=$(ns_make pod) # the agent pod's network namespace (a CNI plugin's job)
pod_run agent "$TMP/base.yaml" "$WL" agent "$ns" --image "$IMAGE" \
	--drop-opt=--k8s-selector --add-arg=--cgroup --add-arg="$P" \
	--add-arg=--cgroup --add-arg="$U" --add-arg=--cgroup --add-arg="$C" \
	--add-arg=--cgroup --add-arg="$Q"
ok "agent container started ($POD_RUNTIME, pid $POD_PID on the host)"
in_pod() { nsenter -t "$POD_PID" -n "$@"; }
metric() { # metric NAME: its value from the agent's /metrics ("" if absent)
	in_pod curl -s --max-time 5 "127.0.0.1:$metrics_port/metrics" | awk -v m="$1" '$1 == m { print $2 }'
}

# The probes: what the kubelet would see, in the container's security
# context.  The startup probe until it passes (the kubelet's 30 x 2 s),
# then readiness and liveness once.
started=0
for i in $(seq 1 30); do
	out=$(pod_exec agent "${startup[@]}" 2>&1) && { started=1; break; }
	kill -0 "$POD_PID" 2>/dev/null || fail "agent container exited: $(pod_logs agent | tail -n 5)"
	sleep 2
done
assert_eq "$started" 1 "startup probe '${startup[*]}' in the container's security context ($out)"
out=$(pod_exec agent "${readiness[@]}" 2>&1) || fail "readiness probe '${readiness[*]}' in the container: $out"
ok "readiness probe '${readiness[*]}' in the container's security context: $out"
out=$(pod_exec agent "${liveness[@]}" 2>&1) || fail "liveness probe '${liveness[*]}' in the container: $out"
ok "liveness probe '${liveness[*]}' in the container's security context: $out"
for i in $(seq 1 150); do
	[ "$(metric ngx_sockmap_cgroups)" = 4 ] && break
	sleep 0.2
done
assert_eq "$(metric ngx_sockmap_cgroups)" 4 "agent attached to the 4 nginx/client cgroups"
assert_attached "inside the container's security context" "$P" "$U" "$C" "$Q"
assert_eq "$(metric ngx_sockmap_netns_unresolved)" 0 \
	"every attached cgroup's network namespace resolved (the other user's pod too)"
assert_eq "$(metric ngx_sockmap_paused)" 0 "not paused"

# wrk_hops NAME PORT LABEL: wrk (C) through the proxy on PORT; both hops
# must be redirected.  4 sends per proxied request (wrk -> nginx ->
# upstream -> nginx -> wrk), a 64 KiB body often in several: >= 3.5 per
# request means both hops.  Sets reqs.
wrk_hops() {
	local m0 m1
	m0=$(metric ngx_sockmap_redirected_messages_total)
	cg_exec "$C" wrk -t1 -c8 -d3s "http://127.0.0.1:$2/64k.bin" >"$TMP/$1.out" 2>&1 ||
		fail_diag "$3: wrk failed: $(cat "$TMP/$1.out")"
	grep -qE 'Socket errors|Non-2xx' "$TMP/$1.out" && fail_diag "$3: wrk saw errors: $(cat "$TMP/$1.out")"
	reqs=$(sed -n 's/^ *\([0-9]*\) requests in.*/\1/p' "$TMP/$1.out")
	m1=$(metric ngx_sockmap_redirected_messages_total)
	assert_ge "$reqs" 200 "$3: wrk requests through the proxy"
	assert_ge $(((m1 - m0) * 10 / reqs)) 35 "$3: redirected sends per request x10"
}

# Both hops redirected: wrk (C) -> proxy (P) -> upstream (U).
wrk_hops wrk $PORT_PX "upstream in the host's namespace"
assert_ge "$(metric ngx_sockmap_redirected_bytes_total)" $((reqs * 65536)) "redirected bytes cover the bodies"
# And to the pod-like upstream of another user in its own network
# namespace: the proxy -> upstream hop pairs only if the agent opened that
# pod's namespace (its address in local_addrs).
wrk_hops wrk2 18513 "pod-like upstream (uid 65534, own netns)"

# Memory: BPF maps are charged to the agent's memory cgroup, under the
# manifest's limit.
limit=$(k8s get memory-limit)
f=$(pod_cgroup_file agent memory.peak)
[ -n "$f" ] || f=$(pod_cgroup_file agent memory.max_usage_in_bytes)
if [ -n "$f" ]; then
	peak=$(cat "$f")
	log "container memory peak $((peak / 1048576)) MiB of the manifest's limit $((limit / 1048576)) MiB ($f)"
	assert_le "$peak" "$limit" "memory peak within the limit"
fi

# The self-test must have run: it is what keeps a kernel that corrupts
# redirected data from being trusted with nginx's bytes.
selftest=$(in_pod curl -s "127.0.0.1:$metrics_port/metrics" | sed -n 's/^ngx_sockmap_selftest_passed{check="\([a-z_]*\)"[^}]*} \([01]\)$/\1=\2/p' | tr '\n' ' ')
log "selftest in the container: ${selftest:-none}"
selftest_err=$(pod_logs agent | grep -m1 'selftest')
pod_stop agent
assert_eq "$POD_RC" 0 "agent exit status on SIGTERM"
assert_detached "after the container stopped" "$P" "$U" "$C" "$Q"
[ -n "$selftest" ] || fail "the start-up self-test did not run in the DaemonSet's security context ('$selftest_err'): the data plane accelerates unchecked (known agent gap, deploy/kubernetes/README.md 'What is not proven')"
ok "self-test ran in the container"

# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Shared by bench/compose and tests/integration/compose_*.sh (bash, sourced):
# a Docker daemon (scripts/docker-up.sh), a compose command, a base image,
# and a compose project that is brought down again.
#
#   compose_setup PROJECT SUBNET   daemon, compose command, BASE_IMAGE, builds
#   images_lock / images_unlock    one image build at a time in this tree
#                                  (scripts/compose-images.sh builds ahead)
#   compose_up [SERVICE...]        up -d (all, with the bench profile)
#   cid SERVICE                    container id of a running service
#   agent_json                     `ngx-sockmap status --json` of the agent
#   nginx_fresh CONTAINER...       reload nginx there, wait for the old workers
#   compose_down                   down the project (its daemon stays)
#   compose_cgroupns MODE PROJECT SUBNET
#                                  the images compose_setup built, in a second
#                                  daemon whose containers get the cgroup
#                                  namespace MODE (host or private) by default
#                                  (scripts/docker-up.sh --cgroupns); DOCKER_HOST
#                                  and the compose command point there until
#                                  teardown
#   compose_teardown               down, and stop the daemons we started
# compose_setup returns 77 when Docker can't run here at all (no client,
# no daemon and none can be started), 1 on any other failure, with the
# reason in COMPOSE_ERR.

NSM_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
COMPOSE=()
COMPOSE_NAME= # "docker compose" or docker-compose
COMPOSE_ERR=
DOCKERD_STARTED=
DOCKERD_CGNS= # pid of our --cgroupns daemon
DOCKER_HOST_WAS= # DOCKER_HOST before compose_cgroupns ("-": unset)
# where scripts/docker-up.sh --cgroupns's daemon answers
CGNS_DOCKER_HOST=unix:///run/ngx-sockmap/dockerd-cgns/docker.sock
COMPOSE_PROJECT=
# compose/build output, kept for the message of a failure
COMPOSE_LOG=${COMPOSE_LOG:-$NSM_TOP/build/compose.log}
IMAGES_LOCK_FD=

# Image builds of this tree take turns: .ci/run builds the compose images
# (scripts/compose-images.sh) while the tests before the compose test run,
# and that test then waits for them here instead of building them too.
images_lock() {
	mkdir -p "$NSM_TOP/build"
	exec {IMAGES_LOCK_FD}>>"$NSM_TOP/build/.images.lock"
	flock "$IMAGES_LOCK_FD"
}
images_unlock() {
	[ -n "$IMAGES_LOCK_FD" ] || return 0
	exec {IMAGES_LOCK_FD}>&-
	IMAGES_LOCK_FD=
}

# docker compose v2 when the plugin is there, else docker-compose 1.29
# (Debian 12 packages no v2).  The file works with both.
compose_cmd() {
	if docker compose version >/dev/null 2>&1; then
		echo "docker compose"
	elif command -v docker-compose >/dev/null; then
		echo docker-compose
	else
		return 1
	fi
}

# BASE_IMAGE for the Dockerfiles: the caller's, else debian:bookworm when it
# is here or can be pulled, else one debootstrapped from this host's Debian
# mirror (scripts/base-image.sh), for hosts without Docker Hub.
compose_base_image() {
	if [ -n "${BASE_IMAGE:-}" ]; then
		docker image inspect "$BASE_IMAGE" >/dev/null 2>&1 && return 0
		if [ "$BASE_IMAGE" = ngx-sockmap/base:bookworm ]; then
			"$NSM_TOP/scripts/base-image.sh" >&2 && return 0
		fi
		timeout 300 docker pull -q "$BASE_IMAGE" >/dev/null 2>&1 && return 0
		COMPOSE_ERR="BASE_IMAGE=$BASE_IMAGE: not here and can't be pulled"
		return 1
	fi
	if docker image inspect debian:bookworm >/dev/null 2>&1 ||
		timeout 300 docker pull -q debian:bookworm >/dev/null 2>&1; then
		BASE_IMAGE=debian:bookworm
		return 0
	fi
	echo "compose: debian:bookworm can't be pulled (no Docker Hub?): using a base image built from Debian packages" >&2
	BASE_IMAGE=ngx-sockmap/base:bookworm
	"$NSM_TOP/scripts/base-image.sh" >&2 && return 0
	COMPOSE_ERR="no base image: debian:bookworm can't be pulled and scripts/base-image.sh failed"
	return 1
}

compose_setup() { # compose_setup PROJECT SUBNET
	local c
	COMPOSE_PROJECT=$1
	command -v docker >/dev/null || { COMPOSE_ERR="no docker client (apt-get install docker.io)"; return 77; }
	c=$(compose_cmd) || { COMPOSE_ERR="neither 'docker compose' nor docker-compose (apt-get install docker-compose)"; return 77; }
	mkdir -p "$(dirname "$COMPOSE_LOG")"
	if ! DOCKERD_STARTED=$("$NSM_TOP/scripts/docker-up.sh" 2>"$COMPOSE_LOG"); then
		COMPOSE_ERR="no Docker daemon: $(tail -n 1 "$COMPOSE_LOG")"
		return 77
	fi
	COMPOSE_NAME=$c
	read -r -a COMPOSE <<<"$c"
	COMPOSE+=(-f "$NSM_TOP/docker-compose.yml" -p "$COMPOSE_PROJECT" --profile bench)
	images_lock
	compose_base_image || { images_unlock; return 1; }
	export BASE_IMAGE
	export NGX_SOCKMAP_SUBNET=$2
	NGX_SOCKMAP_VERSION=$("$NSM_TOP/scripts/version.sh")
	export NGX_SOCKMAP_VERSION
	# Images are kept (ngx-sockmap/*:compose, the agent's :VERSION): a rebuild with nothing
	# changed takes seconds, a cold one minutes.
	if ! "${COMPOSE[@]}" build -q >>"$COMPOSE_LOG" 2>&1; then
		images_unlock
		COMPOSE_ERR="image build failed (log: $COMPOSE_LOG): $(grep -v '^ *$' "$COMPOSE_LOG" | tail -n 1)"
		return 1
	fi
	images_unlock
	return 0
}

compose_up() {
	"${COMPOSE[@]}" up -d "$@" >>"$COMPOSE_LOG" 2>&1 || {
		COMPOSE_ERR="compose up failed (log: $COMPOSE_LOG): $(tail -n 1 "$COMPOSE_LOG")"
		return 1
	}
}

cid() { "${COMPOSE[@]}" ps -q "$1" 2>/dev/null; }

agent_json() { docker exec "$(cid agent)" ngx-sockmap status --json; }

# Every connection of these nginx containers closed: SIGHUP to nginx (pid 1
# there) starts new workers; the old ones close their idle keep-alive
# connections, upstream pool included, and exit.  Waits up to 10 s for them.
nginx_fresh() {
	local c i busy
	for c in "$@"; do docker kill -s HUP "$c" >/dev/null || return 1; done
	for i in $(seq 1 100); do
		busy=0
		for c in "$@"; do
			# "shutting [d]own": not this sh's own command line
			docker exec "$c" sh -c 'grep -l "shutting [d]own" /proc/[0-9]*/cmdline 2>/dev/null' |
				grep -q . && busy=1
		done
		[ $busy = 0 ] && return 0
		sleep 0.1
	done
	return 1
}

compose_down() {
	[ ${#COMPOSE[@]} -gt 0 ] || return 0
	"${COMPOSE[@]}" down --remove-orphans -t 5 >/dev/null 2>&1 || {
		echo "compose: 'down' failed for project $COMPOSE_PROJECT" >&2
		return 1
	}
}

# The images are copied, not built: that daemon has none of the build
# cache, and a build there would be a cold one (minutes).  Copying them
# (docker save | docker load, 420 MB) takes about 13 s here.
compose_cgroupns() { # compose_cgroupns MODE PROJECT SUBNET
	local images
	compose_down
	images=$("${COMPOSE[@]}" config 2>>"$COMPOSE_LOG" | awk '$1 == "image:" { print $2 }' | sort -u)
	[ -n "$images" ] || { COMPOSE_ERR="no images in '${COMPOSE[*]} config'"; return 1; }
	if ! DOCKERD_CGNS=$("$NSM_TOP/scripts/docker-up.sh" --cgroupns "$1" "$3" 2>>"$COMPOSE_LOG"); then
		COMPOSE_ERR="no --cgroupns $1 daemon: $(tail -n 1 "$COMPOSE_LOG")"
		return 1
	fi
	DOCKER_HOST_WAS=${DOCKER_HOST--}
	# shellcheck disable=SC2086 # image names, one word each
	if ! docker save $images |
		DOCKER_HOST=$CGNS_DOCKER_HOST docker load -q >>"$COMPOSE_LOG" 2>&1; then
		COMPOSE_ERR="copying the images to the --cgroupns daemon failed (log: $COMPOSE_LOG)"
		return 1
	fi
	export DOCKER_HOST=$CGNS_DOCKER_HOST
	export NGX_SOCKMAP_SUBNET=$3
	COMPOSE_PROJECT=$2
	read -r -a COMPOSE <<<"$COMPOSE_NAME"
	COMPOSE+=(-f "$NSM_TOP/docker-compose.yml" -p "$COMPOSE_PROJECT" --profile bench)
}

compose_teardown() {
	compose_down
	COMPOSE=()
	if [ -n "$DOCKERD_CGNS" ]; then
		"$NSM_TOP/scripts/docker-up.sh" --stop "$DOCKERD_CGNS"
		DOCKERD_CGNS=
	fi
	if [ -n "$DOCKER_HOST_WAS" ]; then
		if [ "$DOCKER_HOST_WAS" = - ]; then unset DOCKER_HOST; else export DOCKER_HOST=$DOCKER_HOST_WAS; fi
		DOCKER_HOST_WAS=
	fi
	if [ -n "$DOCKERD_STARTED" ]; then
		"$NSM_TOP/scripts/docker-up.sh" --stop "$DOCKERD_STARTED"
		DOCKERD_STARTED=
	fi
}

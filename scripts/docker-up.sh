#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The one place that starts (and stops) a Docker daemon for ngx-sockmap:
# make deps, .ci/run, make compose-bench and the compose test all use it.
#
#   scripts/docker-up.sh          make sure a daemon answers.  Prints the pid
#                                 of the dockerd it started, or nothing when
#                                 one was already running (leave that alone).
#   scripts/docker-up.sh --cgroupns MODE SUBNET
#                                 start a second, throwaway daemon whose
#                                 containers get the cgroup namespace MODE
#                                 (private, Docker's default on cgroup v2
#                                 hosts, or host, its default on v1 and
#                                 hybrid ones) by default, answering on
#                                 unix:///run/ngx-sockmap/dockerd-cgns/
#                                 docker.sock; containers of its networks
#                                 talk within SUBNET.  Prints its pid.
#   scripts/docker-up.sh --stop PID
#                                 stop a dockerd that this script started
#                                 and printed as PID (refuses any other).
#
# Never a second daemon in the default one's place: two dockerds share
# /var/lib/docker and the host's bridge, and a second one started with
# `--bridge none` deletes the first one's docker0.  So a dockerd that exists
# but does not answer yet is waited for, never doubled.  Whoever got a PID
# from us stops it when done; a daemon someone else started is never
# touched.
#
# The --cgroupns daemon shares nothing with that one: its own
# socket, exec root, data root (emptied at --stop, images included) and
# bridge (nsmcgns0, made here), and no iptables: with iptables on it would
# program the same DOCKER* chains as the host's daemon.  Without, the
# FORWARD policy that daemon set (DROP) would drop frames between the
# containers of one of our bridges (br_netfilter passes bridged IPv4
# through iptables), so one rule accepts SUBNET to SUBNET until --stop.
# It exists so that the compose test meets both of Docker's defaults
# (`--default-cgroupns-mode`) on any host: the private cgroup namespace
# of cgroup v2 hosts where the host's daemon gives its own, and the other
# way round.
#
# The daemon runs in its own session (setsid): Ctrl-C on the terminal that
# started it must not take it down before the caller's cleanup has run
# `compose down` through it.  Log: /var/log/ngx-sockmap-dockerd.log
# (-cgns.log for the second).
set -eu

PIDFILE=/run/ngx-sockmap/dockerd.pid
LOG=/var/log/ngx-sockmap-dockerd.log
MARK=/run/ngx-sockmap/dockerd.docker0-created
CGNS_DIR=/run/ngx-sockmap/dockerd-cgns
# its pid, as this script started it (dockerd's own --pidfile is in
# CGNS_DIR: dockerd refuses to start when its pid file names a live process)
CGNS_PIDFILE=/run/ngx-sockmap/dockerd-cgns.pid
CGNS_SOCK=unix://$CGNS_DIR/docker.sock
CGNS_DATA=/var/lib/ngx-sockmap/dockerd-cgns
CGNS_LOG=/var/log/ngx-sockmap-dockerd-cgns.log
CGNS_RULE=/run/ngx-sockmap/dockerd-cgns.rule # its FORWARD rule, for --stop
# the second daemon's default bridge and its address: next to the
# project's compose subnets (172.29.86-88.0/24)
CGNS_BRIDGE=nsmcgns0
CGNS_BRIDGE_ADDR=172.29.85.1/24

die() { echo "docker-up: $*" >&2; exit 1; }
answers() { docker info >/dev/null 2>&1; }
# pid of a running dockerd (any but our --cgroupns one), empty if none
dockerd_pid() { pgrep -x dockerd | grep -vx "$(cat "$CGNS_PIDFILE" 2>/dev/null || echo none)" | head -n 1; }

# term_wait PID: SIGTERM, up to 30 s for it to exit, then SIGKILL
term_wait() {
	kill -TERM "$1" 2>/dev/null || true
	i=0
	while kill -0 "$1" 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	if kill -0 "$1" 2>/dev/null; then
		echo "docker-up: dockerd $1 did not exit in 30 s, killing it" >&2
		kill -KILL "$1" 2>/dev/null || true
		while kill -0 "$1" 2>/dev/null; do sleep 0.1; done
	fi
}

# Everything of the --cgroupns daemon but the process: its
# containerd, mounts, state, bridge and FORWARD rule.
cgns_clean() {
	i=0
	while pgrep -f "^containerd --config $CGNS_DIR/exec/containerd/containerd.toml" >/dev/null &&
		[ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	# a killed dockerd leaves its mounts behind: overlays, netns files,
	# and its data root bound onto itself
	# shellcheck disable=SC2013 # mount points: no blanks in our paths
	for m in $(awk -v a="$CGNS_DATA" -v b="$CGNS_DIR" \
		'$2 == a || $2 == b || index($2, a "/") == 1 || index($2, b "/") == 1 { print $2 }' \
		/proc/self/mounts | sort -r); do
		umount -l "$m" 2>/dev/null || true
	done
	rm -rf "$CGNS_DATA" "$CGNS_DIR" || echo "docker-up: could not remove all of $CGNS_DATA, $CGNS_DIR" >&2
	rmdir "$(dirname "$CGNS_DATA")" 2>/dev/null || true # made by cgns_start, if empty
	ip link del "$CGNS_BRIDGE" 2>/dev/null || true
	if [ -s "$CGNS_RULE" ]; then
		# shellcheck disable=SC2046 # the rule's words, as written at start
		iptables -D FORWARD $(cat "$CGNS_RULE") 2>/dev/null || true
	fi
	rm -f "$CGNS_RULE" "$CGNS_PIDFILE"
}

cgns_stop() {
	# A throwaway: its containers and networks go first, so that no
	# bridge of theirs outlives the data root that names it.
	if DOCKER_HOST=$CGNS_SOCK docker info >/dev/null 2>&1; then
		c=$(DOCKER_HOST=$CGNS_SOCK docker ps -aq)
		# shellcheck disable=SC2086 # container ids, one word each
		[ -z "$c" ] || DOCKER_HOST=$CGNS_SOCK docker rm -f $c >/dev/null 2>&1 || true
		DOCKER_HOST=$CGNS_SOCK docker network prune -f >/dev/null 2>&1 || true
	fi
	term_wait "$1"
	cgns_clean
}

cgns_start() {
	mode=$1 subnet=$2
	case $mode in host | private) ;; *) die "--cgroupns: host or private, not '$mode'" ;; esac
	case $subnet in
	*[!0-9./]* | */*/* | /* | */) die "--cgroupns: not an IPv4 subnet: '$subnet'" ;;
	*/*) ;;
	*) die "--cgroupns: not an IPv4 subnet: '$subnet'" ;;
	esac
	[ "$(id -u)" = 0 ] || die "starting a daemon needs root"
	command -v dockerd >/dev/null || die "no dockerd: apt-get install docker.io (or: sudo make deps)"
	old=$(cat "$CGNS_PIDFILE" 2>/dev/null || true)
	# (a killed one stays a zombie where nobody reaps it: not running)
	if [ -n "$old" ] && [ "$(cat "/proc/$old/comm" 2>/dev/null)" = dockerd ] &&
		[ "$(awk '{ print $3 }' "/proc/$old/stat" 2>/dev/null)" != Z ]; then
		die "a --cgroupns dockerd runs already (pid $old): $0 --stop $old"
	fi
	cgns_clean # a killed predecessor's leftovers
	mkdir -p "$CGNS_DIR" "$(dirname "$CGNS_DATA")"
	ip link add "$CGNS_BRIDGE" type bridge || die "ip link add $CGNS_BRIDGE failed"
	if ! { ip addr add "$CGNS_BRIDGE_ADDR" dev "$CGNS_BRIDGE" && ip link set "$CGNS_BRIDGE" up; }; then
		cgns_clean
		die "can't set up bridge $CGNS_BRIDGE"
	fi
	rule="-s $subnet -d $subnet -m comment --comment ngx-sockmap-dockerd-cgns -j ACCEPT"
	if command -v iptables >/dev/null; then
		echo "$rule" >"$CGNS_RULE"
		# shellcheck disable=SC2086 # the rule's words
		iptables -I FORWARD 1 $rule || { cgns_clean; die "iptables -I FORWARD failed"; }
	fi
	echo "=== $(date -Iseconds) dockerd --default-cgroupns-mode=$mode started by ngx-sockmap scripts/docker-up.sh" >>"$CGNS_LOG"
	setsid dockerd --default-cgroupns-mode="$mode" -H "$CGNS_SOCK" --pidfile "$CGNS_DIR/dockerd.pid" \
		--exec-root "$CGNS_DIR/exec" --data-root "$CGNS_DATA" --bridge "$CGNS_BRIDGE" \
		--iptables=false --ip6tables=false >>"$CGNS_LOG" 2>&1 </dev/null &
	pid=$!
	echo "$pid" >"$CGNS_PIDFILE"
	i=0
	while ! DOCKER_HOST=$CGNS_SOCK docker info >/dev/null 2>&1; do
		if ! kill -0 "$pid" 2>/dev/null || [ $i -ge 300 ]; then
			term_wait "$pid"
			cgns_clean
			die "dockerd --default-cgroupns-mode=$mode did not come up: $(grep -v '^===' "$CGNS_LOG" | tail -n 1)"
		fi
		sleep 0.1
		i=$((i + 1))
	done
	echo "$pid"
}

if [ "${1:-}" = --stop ]; then
	pid=${2:-}
	[ -n "$pid" ] || exit 0 # nothing was started
	case $pid in *[!0-9]*) die "--stop: not a pid: '$pid'" ;; esac
	if [ "$(cat "$CGNS_PIDFILE" 2>/dev/null)" = "$pid" ]; then
		cgns_stop "$pid"
		exit 0
	fi
	[ "$(cat "$PIDFILE" 2>/dev/null)" = "$pid" ] ||
		die "--stop: pid $pid is not the dockerd this script started ($PIDFILE); leaving it alone"
	# SIGTERM: dockerd stops its containers and exits (moby's daemon
	# shutdown waits up to 15 s for containers, then kills them).
	term_wait "$pid"
	# containerd, started by this dockerd, exits with it; wait for that
	# too so nothing of ours is left running.
	i=0
	while pgrep -f '^containerd --config /var/run/docker/containerd/containerd.toml' >/dev/null &&
		[ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	rm -f "$PIDFILE"
	# docker0 is created by the first dockerd start; drop it again when
	# it was ours, so the host is as we found it (iptables chains named
	# DOCKER* stay: harmless without a daemon, rewritten by the next).
	if [ -e "$MARK" ]; then
		ip link del docker0 2>/dev/null || true
		rm -f "$MARK"
	fi
	exit 0
fi
if [ "${1:-}" = --cgroupns ]; then
	[ $# = 3 ] || die "usage: $0 --cgroupns host|private SUBNET"
	cgns_start "$2" "$3"
	exit 0
fi
[ $# = 0 ] || die "usage: $0 [--stop PID | --cgroupns host|private SUBNET]"

command -v docker >/dev/null || die "no docker client: apt-get install docker.io (or: sudo make deps)"
answers && exit 0

pid=$(dockerd_pid)
if [ -n "$pid" ]; then
	# Someone's dockerd is starting (or hung): wait, never start another.
	i=0
	while ! answers && [ $i -lt 60 ]; do sleep 1; i=$((i + 1)); done
	answers && exit 0
	die "dockerd (pid $pid) is running but does not answer after 60 s; not starting a second one"
fi
[ "$(id -u)" = 0 ] || die "no Docker daemon running, and starting one needs root"
command -v dockerd >/dev/null || die "no Docker daemon running and no dockerd: apt-get install docker.io (or: sudo make deps)"
# The default socket must be free: a stale socket file is fine (dockerd
# replaces it), a DOCKER_HOST elsewhere is not ours to serve.
[ -z "${DOCKER_HOST:-}" ] || die "DOCKER_HOST=$DOCKER_HOST does not answer; not starting a local daemon for it"

mkdir -p "$(dirname "$PIDFILE")"
ip link show docker0 >/dev/null 2>&1 || : >"$MARK"
echo "=== $(date -Iseconds) dockerd started by ngx-sockmap scripts/docker-up.sh" >>"$LOG"
setsid dockerd --pidfile "$PIDFILE" >>"$LOG" 2>&1 </dev/null &
pid=$!
i=0
while ! answers; do
	if ! kill -0 "$pid" 2>/dev/null; then
		rm -f "$MARK"
		die "dockerd exited while starting: $(grep -v '^===' "$LOG" | tail -n 1)"
	fi
	[ $i -lt 300 ] || { kill -TERM "$pid"; rm -f "$MARK"; die "dockerd not answering after 30 s (log: $LOG)"; }
	sleep 0.1
	i=$((i + 1))
done
# dockerd writes its pidfile itself; it must be the process we started
[ "$(cat "$PIDFILE" 2>/dev/null)" = "$pid" ] || echo "$pid" >"$PIDFILE"
echo "$pid"

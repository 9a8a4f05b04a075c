#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The one place that starts (and stops) a Docker daemon for ngx-sockmap:
# make deps, .ci/run, make compose-bench and the compose test all use it.
#
#   scripts/docker-up.sh          make sure a daemon answers.  Prints the pid
#                                 of the dockerd it started, or nothing when
#                                 one was already running (leave that alone).
#   scripts/docker-up.sh --stop PID
#                                 stop the dockerd that this script started
#                                 and printed as PID (refuses any other).
#
# Never a second daemon: two dockerds share /var/lib/docker and the host's
# bridge, and a second one started with `--bridge none` deletes the first
# one's docker0.  So a dockerd that exists but does not answer yet is waited
# for, never doubled.  Whoever got a PID from us stops it when done; a
# daemon someone else started is never touched.
#
# The daemon runs in its own session (setsid): Ctrl-C on the terminal that
# started it must not take it down before the caller's cleanup has run
# `compose down` through it.  Log: /var/log/ngx-sockmap-dockerd.log.
set -eu

PIDFILE=/run/ngx-sockmap/dockerd.pid
LOG=/var/log/ngx-sockmap-dockerd.log
MARK=/run/ngx-sockmap/dockerd.docker0-created

die() { echo "docker-up: $*" >&2; exit 1; }
answers() { docker info >/dev/null 2>&1; }
# pid of a running dockerd (any), empty if none
dockerd_pid() { pgrep -x dockerd | head -n 1; }

if [ "${1:-}" = --stop ]; then
	pid=${2:-}
	[ -n "$pid" ] || exit 0 # nothing was started
	case $pid in *[!0-9]*) die "--stop: not a pid: '$pid'" ;; esac
	[ "$(cat "$PIDFILE" 2>/dev/null)" = "$pid" ] ||
		die "--stop: pid $pid is not the dockerd this script started ($PIDFILE); leaving it alone"
	# SIGTERM: dockerd stops its containers and exits (moby's daemon
	# shutdown waits up to 15 s for containers, then kills them).
	kill -TERM "$pid" 2>/dev/null || true
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	if kill -0 "$pid" 2>/dev/null; then
		echo "docker-up: dockerd $pid did not exit in 30 s, killing it" >&2
		kill -KILL "$pid" 2>/dev/null || true
	fi
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
[ $# = 0 ] || die "usage: $0 [--stop PID]"

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

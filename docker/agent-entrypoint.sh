#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Sidecar entrypoint: find the nginx this container is the sidecar of and
# run `ngx-sockmap run -p PID "$@"` for it.  Nothing to configure.
#
# Which nginx: the one in our network namespace.  docker-compose.yml gives
# the agent `network_mode: "service:nginx"` (nginx's network namespace,
# as a pod shares one) and `pid: host` (every process on the host, which
# the agent's peer following needs: it looks for nginx's peers, upstream and
# clients, through sock_diag in every network namespace under
# /proc/*/ns/net).  In the host's pid namespace a pid file written inside
# the nginx container means nothing, and matching "nginx" by name would
# also find other nginx instances on the host; "an nginx master process in
# my network namespace" names exactly the sidecar's nginx.
#
# Any cgroup namespace will do.  Docker gives containers a private one on
# cgroup v2 hosts (`default-cgroupns-mode`), where /proc/PID/cgroup, which
# is relative to the reader's namespace, would not name nginx's cgroup
# under the host's /sys/fs/cgroup mounted here.  The agent sees to that
# itself (agent/target.c): it joins the host's namespace (setns on
# /proc/1/ns/cgroup: pid: host, CAP_SYS_ADMIN and CAP_SYS_PTRACE), and
# where it may not, resolves paths against its own namespace's root.  So
# the service needs no `cgroup: host`, which docker-compose 1.29 rejects.
set -eu

die() { echo "ngx-sockmap-sidecar: $*" >&2; exit 1; }

me=$(readlink /proc/self/ns/net)
# nginx_master: pid of an nginx process in our network namespace whose
# parent is not nginx (its workers share its cgroup anyway; the master
# outlives a reload)
nginx_master() {
	for d in /proc/[0-9]*; do
		[ "$(cat "$d/comm" 2>/dev/null)" = nginx ] || continue
		[ "$(readlink "$d/ns/net" 2>/dev/null)" = "$me" ] || continue
		ppid=$(awk '/^PPid:/ { print $2 }' "$d/status" 2>/dev/null) || continue
		[ "$(cat "/proc/$ppid/comm" 2>/dev/null)" = nginx ] && continue
		echo "${d#/proc/}"
		return 0
	done
	return 1
}

# depends_on only orders container starts: nginx may still be starting.
i=0
until pid=$(nginx_master); do
	i=$((i + 1))
	[ $i -le 100 ] || die "no nginx process in this container's network namespace after 20 s: the agent service needs network_mode: \"service:nginx\" and pid: host"
	sleep 0.2
done
echo "ngx-sockmap-sidecar: nginx master is pid $pid (host pid namespace)"
exec ngx-sockmap run -p "$pid" "$@"

#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The agent as a container of Nginx's own pod: attach to this pod's cgroup
# (every container of the pod, nginx and its in-pod upstreams, sits below
# it) and to nothing else:  ngx-sockmap run --cgroup POD_CGROUP "$@".
#
# Not the docker-compose entrypoint's way (docker/agent-entrypoint.sh reads
# nginx's cgroup from /proc/PID/cgroup): containerd gives a container that
# is not privileged a private cgroup namespace on cgroup v2 nodes, where
# that path is relative to the reader's own cgroup.  The pod's UID (the
# downward API's metadata.uid, in POD_UID) names the pod's directory under
# the host's cgroup mount instead, in either kubelet cgroup driver's layout:
#   systemd:  .../kubepods[-<qos>].slice/kubepods[-<qos>]-pod<uid, - as _>.slice
#   cgroupfs: .../kubepods[/<qos>]/pod<uid>
# below the kubelet's --cgroup-root, if any (kind: /kubelet.slice/...).
# NGX_SOCKMAP_CGROUP_ROOT searches below another directory (tests).
set -eu

die() { echo "ngx-sockmap-pod: $*" >&2; exit 1; }

[ -n "${POD_UID:-}" ] || die "POD_UID is not set: give the container env POD_UID from fieldRef metadata.uid"
case $POD_UID in *[!0-9a-f-]*) die "POD_UID '$POD_UID' is not a pod UID" ;; esac
root=${NGX_SOCKMAP_CGROUP_ROOT:-$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)}
[ -n "$root" ] || die "no cgroup v2 mount: mount the host's /sys/fs/cgroup (cgroup v2) into this container"
uid_=$(echo "$POD_UID" | tr - _)
i=0
while :; do
	dir=$(find "$root" -maxdepth 6 -type d \( -name "*-pod$uid_.slice" -o -name "pod$POD_UID" \) \
		-print 2>/dev/null | head -n 1)
	[ -n "$dir" ] && break
	i=$((i + 1))
	[ $i -le 50 ] || die "no cgroup directory of pod $POD_UID under $root after 10 s (is the host's /sys/fs/cgroup mounted, and cgroup v2?)"
	sleep 0.2
done
echo "ngx-sockmap-pod: pod $POD_UID is cgroup $dir"
exec ngx-sockmap run --cgroup "$dir" --no-follow "$@"

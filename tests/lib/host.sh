# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
# Host objects that tests (tests/lib/common.sh) and benches (bench/run) both
# make: cgroups and the processes in them, nginx, veth pairs, CPU counters.
# No policy here: the script that sources this file defines
#   fail MSG      stop with a message
#   on_exit CMD   register a clean-up (run when the script exits)
# and nothing here sets traps or creates files by itself.
CG2=${CG2:-$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)}

# cg_procs CGROUP: its pids, one a line.  cgroupfs files report size 0
# (kernfs), so `[ -s cgroup.procs ]` is always false: read, never test -s.
cg_procs() { cat "$1/cgroup.procs" 2>/dev/null; }

# cg_kill CGROUP: SIGKILL whatever is left inside (only what the caller put
# there) until it is empty, up to 2 s; status 0 when empty
cg_kill() {
	local _
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		[ -n "$(cg_procs "$1")" ] || return 0
		xargs -r kill -9 <"$1/cgroup.procs" 2>/dev/null
		sleep 0.2
	done
	[ -z "$(cg_procs "$1")" ]
}

# cg_remove CGROUP: cg_kill, then rmdir (a cgroup with tasks can't go)
cg_remove() {
	[ -d "$1" ] || return 0
	cg_kill "$1"
	rmdir "$1"
}

# cg_exec CGROUP CMD... : exec CMD inside CGROUP (use with & or $(...))
cg_exec() {
	local cg=$1
	shift
	sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg" "$@"
}

# cg_cpu_usec CGROUP [VAR]: CPU time of everything that ran in CGROUP,
# exited tasks included (cpu.stat usage_usec, there on every cgroup v2
# directory even without the cpu controller), into VAR or printed.  With
# VAR, builtins only and no fork: a bench takes it just before and after a
# measured run.
cg_cpu_usec() {
	local k v
	while read -r k v; do
		[ "$k" = usage_usec ] || continue
		if [ -n "${2:-}" ]; then printf -v "$2" '%s' "$v"; else echo "$v"; fi
		return 0
	done <"$1/cpu.stat"
	return 1
}

# alive PID: exists and is not a zombie (a daemon is reaped by init, which
# can take its time, and kill -0 succeeds on a zombie)
alive() {
	local st
	read -r _ _ st _ <"/proc/$1/stat" 2>/dev/null || return 1
	[ "$st" != Z ] && [ "$st" != X ]
}

# port_wait HOST PORT: until something accepts on HOST:PORT (5 s); status 1
# if nothing does
port_wait() {
	local _
	for _ in $(seq 1 50); do
		(exec 3<>"/dev/tcp/$1/$2") 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# nginx_stop PREFIX: graceful stop (QUIT: idle keep-alive connections close
# at once), SIGKILL after 5 s.  Workers are killed by pid with their master:
# a worker does not notice its master's death and would keep its sockets.
nginx_stop() {
	local pid kids _
	pid=$(cat "$1/nginx.pid" 2>/dev/null) || return 0
	kill -QUIT "$pid" 2>/dev/null
	for _ in $(seq 1 50); do
		alive "$pid" || break
		sleep 0.1
	done
	if alive "$pid"; then
		# ppid is the 2nd field after the ")" that ends the command name
		kids=$(awk -v p="$pid" '{ s = $0; sub(/.*\) /, "", s); split(s, f, " ") }
			f[2] == p { print $1 }' /proc/[0-9]*/stat 2>/dev/null)
		# shellcheck disable=SC2086 # pids: words on purpose
		kill -9 "$pid" $kids 2>/dev/null
	fi
	rm -f "$1/nginx.pid"
}

# veth_quiet HOST PEER NS HOSTIP PEERIP... : a veth pair HOST <-> PEER (in
# NS), HOSTIP/24 on HOST and every PEERIP/24 on PEER, with no IPv6 (no
# ND/MLD frames) and static neighbours (no ARP): the only frames on the wire
# are the ones the caller sends.  Removed at exit.
veth_quiet() {
	local host=$1 peer=$2 ns=$3 hip=$4 pip hmac pmac
	shift 4
	ip link add "$host" type veth peer name "$peer" || fail "veth $host"
	on_exit "ip link del '$host'"
	ip link set "$peer" netns "$ns"
	sysctl -qw "net.ipv6.conf.$host.disable_ipv6=1"
	ip netns exec "$ns" sysctl -qw "net.ipv6.conf.$peer.disable_ipv6=1"
	ip addr add "$hip/24" dev "$host"
	for pip in "$@"; do ip -n "$ns" addr add "$pip/24" dev "$peer"; done
	ip link set "$host" up
	ip -n "$ns" link set "$peer" up
	hmac=$(cat "/sys/class/net/$host/address")
	pmac=$(ip netns exec "$ns" cat "/sys/class/net/$peer/address")
	for pip in "$@"; do ip neigh replace "$pip" lladdr "$pmac" dev "$host" nud permanent; done
	ip -n "$ns" neigh replace "$hip" lladdr "$hmac" dev "$peer" nud permanent
}

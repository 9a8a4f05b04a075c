# timeout: 120
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: IPv6 connections pair and redirect byte-exact: a [::1] server
# with a [::1] client (half-duplex 4 MiB each way, then a paced full-duplex
# echo whose whole payload must go through the redirect),
# and a [::] dual-stack listener (IPV6_V6ONLY=0) accepting a plain IPv4
# client on 127.0.0.1: the server end is an AF_INET6 socket with
# v4-mapped addresses (::ffff:127.0.0.1), the client end plain AF_INET,
# and the two must still be recognised as one connection (pairs >= 1,
# redirected bytes > 0), with every byte checked.
. "$(dirname "$0")/../lib/common.sh"

K=$TOOLS/tcpkit
[ -x "$K" ] || fail "$K not built (make tools)"

# cg_new VAR NAME / ns_new VAR NAME: cg_make / ns_make in this shell (a
# $(...) subshell would lose the cleanup they register).  cg_new also kills
# what is left in the cgroup before cg_remove runs: cgroupfs files have size
# 0, so cg_remove's `[ -s cgroup.procs ]` never sees the processes and its
# rmdir fails while one lives.
cg_new() {
	cg_make "$2" >"$TMP/cg_new" || exit 1
	printf -v "$1" '%s' "$(cat "$TMP/cg_new")"
	on_exit "cg_kill '${!1}'"
}
cg_kill() {
	local i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		[ -n "$(cat "$1/cgroup.procs" 2>/dev/null)" ] || return 0
		xargs -r kill -9 <"$1/cgroup.procs" 2>/dev/null
		sleep 0.2
	done
}
ns_new() {
	ns_make "$2" >"$TMP/ns_new" || exit 1
	printf -v "$1" '%s' "$(cat "$TMP/ns_new")"
}
# st VAR FIELD: a numeric field of `ngx-sockmap status --json` into VAR
st() {
	local v
	v=$(stat_get "$2" 2>"$TMP/st.err")
	[[ $v =~ ^[0-9]+$ ]] ||
		fail "status --json field $2: got '$v' $(head -c 200 "$TMP/st.err")"
	printf -v "$1" '%s' "$v"
}
fallbacks() {
	"$AGENT" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["fallbacks"])'
}
# rf NAME FIELD: a field of the result line of tcpkit run NAME
rf() { sed -n "s/^result .* $2=\([^ ]*\).*/\1/p" "$TMP/$1.res" 2>/dev/null | tail -n 1; }
# in_cg_ns CGROUP NETNS CMD...: CMD in CGROUP and, unless NETNS is -, in
# NETNS (cgroup first: `ip netns exec` remounts /sys over the cgroup tree)
in_cg_ns() {
	local cg=$1 ns=$2
	shift 2
	if [ "$ns" = - ]; then
		cg_exec "$cg" "$@"
	else
		cg_exec "$cg" ip netns exec "$ns" "$@"
	fi
}
# tk_server NAME CGROUP NETNS ARGS...: tcpkit server in the background,
# waits until it listens; SPORT[NAME] = its port.  tk_wait NAME: its status.
declare -A PID SPORT
tk_server() {
	local name=$1 cg=$2 ns=$3 i
	shift 3
	rm -f "$TMP/$name.port" "$TMP/$name.res"
	in_cg_ns "$cg" "$ns" "$K" server --ready-file "$TMP/$name.port" \
		--out "$TMP/$name.res" "$@" >"$TMP/$name.log" 2>&1 &
	PID[$name]=$!
	on_exit "kill ${PID[$name]}"
	for i in $(seq 1 100); do
		if [ -s "$TMP/$name.port" ]; then
			SPORT[$name]=$(cat "$TMP/$name.port")
			return 0
		fi
		kill -0 "${PID[$name]}" 2>/dev/null ||
			fail "server $name exited before listening: $(tail -n 5 "$TMP/$name.log")"
		sleep 0.05
	done
	fail "server $name not listening after 5 s"
}
tk_wait() { wait "${PID[$1]}"; }
# tk_client NAME CGROUP NETNS ARGS...: tcpkit client, in the foreground
tk_client() {
	local name=$1 cg=$2 ns=$3
	shift 3
	rm -f "$TMP/$name.res"
	in_cg_ns "$cg" "$ns" "$K" client --out "$TMP/$name.res" "$@" >"$TMP/$name.log" 2>&1
}
# tk_client_bg NAME CGROUP NETNS ARGS...: the same in the background (tk_wait)
tk_client_bg() {
	local name=$1 cg=$2 ns=$3
	shift 3
	rm -f "$TMP/$name.res"
	in_cg_ns "$cg" "$ns" "$K" client --out "$TMP/$name.res" "$@" >"$TMP/$name.log" 2>&1 &
	PID[$name]=$!
	on_exit "kill ${PID[$name]}"
}
# tk_ok NAME LABEL: tcpkit run NAME reported ok=1
tk_ok() {
	local line
	line=$(grep '^result' "$TMP/$1.res" 2>/dev/null)
	log "$1: ${line:-no result line}"
	if [ "$(rf "$1" ok)" != 1 ]; then
		grep -v '^result' "$TMP/$1.log" 2>/dev/null | tail -n 10 | sed 's/^/#   /'
		fail "$2: tcpkit $1 reports a failure: ${line:-no result line}"
	fi
	ok "$2"
}
# wait_file FILE LABEL: wait up to 10 s for FILE to appear
wait_file() {
	local i
	for i in $(seq 1 200); do
		[ -e "$1" ] && return 0
		sleep 0.05
	done
	fail "$2: $1 did not appear within 10 s"
}

[ -e /proc/net/if_inet6 ] || skip "no IPv6 in this kernel"
[ "$(cat /proc/sys/net/ipv6/conf/lo/disable_ipv6 2>/dev/null)" = 0 ] || skip "IPv6 disabled on lo"
grep -q '^0\{31\}1 ' /proc/net/if_inet6 || skip "::1 not configured on lo"

cg_new CS srv
cg_new CC cli
agent_start -c "$CS" -c "$CC"

MIB=1048576 BYTES=$((4 * 1048576))
seed=600
# pair_run NAME LISTEN CONNECT_HOST MODE: one connection, checked, paired.
# MODE paced is echo with 64 KiB in flight at most: the reader keeps up, so
# the whole payload goes through the redirect.  In the other modes a
# direction may move to TCP (slow_reader) mid-stream, so only "some".
pair_run() {
	local name=$1 listen=$2 host=$3 mode=$4 reply=() extra=() want=1
	seed=$((seed + 1))
	[ "$mode" = verify ] && reply=(--reply-bytes $BYTES)
	[ "$mode" = paced ] && mode=echo extra=(--window 64K --chunk 16K) want=$BYTES
	st p0 pairs
	st b0 redirected_bytes
	tk_server s_$name "$CS" - --listen "$listen" --mode $mode --seed $seed --conns 1 \
		--expect-bytes $BYTES "${reply[@]}" --duration 60
	tk_client c_$name "$CC" - --connect "$host:${SPORT[s_$name]}" --mode $mode \
		--seed $seed --bytes $BYTES "${extra[@]}"
	tk_wait s_$name
	tk_ok s_$name "$name: server got every byte right"
	tk_ok c_$name "$name: client got every byte right"
	assert_eq "$(rf s_$name bytes_in)" $BYTES "$name: server read exactly the payload"
	st p1 pairs
	st b1 redirected_bytes
	log "$name: pairs +$((p1 - p0)) redirected_bytes +$((b1 - b0))"
	assert_ge $((p1 - p0)) 1 "$name: paired"
	assert_ge $((b1 - b0)) $want "$name: redirected_bytes grew (by the payload if paced)"
}

pair_run v6_verify "[::1]:0" "[::1]" verify
pair_run v6_paced "[::1]:0" "[::1]" paced
pair_run dual_v4_client "[::]:0" 127.0.0.1 verify
pair_run dual_v4_paced "[::]:0" 127.0.0.1 paced
pair_run dual_v6_client "[::]:0" "[::1]" paced
log "fallbacks: $(fallbacks)"

agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent exited cleanly"

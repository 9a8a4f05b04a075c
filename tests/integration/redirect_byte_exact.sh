# timeout: 180
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: with a tcpkit client and server in two different attached
# cgroups, 1 MiB and 20 MiB streams cross the sockmap redirect byte-exact in
# both directions: every byte the server reads and every byte the client
# reads back is checked against the seeded pattern.  Three shapes:
#  - paced echo (at most 64 KiB in flight): the reader always keeps up, so
#    the whole payload must go through the redirect (redirected_bytes grows
#    by at least the payload each way that redirects; at least once);
#  - verify (client sends N and half-closes; server checks and answers with
#    N bytes of its own pattern) and unpaced echo: the writer outruns the
#    reader, so a direction may move to TCP for good (slow_reader) in the
#    middle of the stream; the bytes must still be exact and in order, some
#    must have been redirected, and every byte is counted as either
#    redirected or TCP.
# Each run must form a pair.
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

cg_new CS srv
cg_new CC cli
agent_start -c "$CS" -c "$CC"

MIB=1048576
seed=100
for size in 1 20; do
	bytes=$((size * MIB))
	for shape in paced verify echo; do
		seed=$((seed + 1))
		name=${shape}_${size}m
		mode=$shape extra=() reply=() ack=0
		case $shape in
		paced) mode=echo extra=(--window 64K --chunk 16K) ;;
		verify) reply=(--reply-bytes $bytes) ack=64 ;; # ack line before the answer
		esac
		st p0 pairs
		st b0 redirected_bytes
		st t0 tcp_bytes
		st r0 fallbacks.slow_reader
		tk_server s_$name "$CS" - --listen 127.0.0.1:0 --mode $mode --seed $seed \
			--conns 1 --expect-bytes $bytes "${reply[@]}" --duration 60
		tk_client c_$name "$CC" - --connect 127.0.0.1:${SPORT[s_$name]} --mode $mode \
			--seed $seed --bytes $bytes "${extra[@]}"
		crc=$?
		tk_wait s_$name
		srv_rc=$?
		tk_ok s_$name "$shape ${size} MiB: server got every byte right (exit $srv_rc)"
		tk_ok c_$name "$shape ${size} MiB: client got every byte right (exit $crc)"
		assert_eq "$(rf s_$name bytes_in)" $bytes "$shape ${size} MiB: server read exactly the payload"
		assert_eq "$(rf c_$name bytes_in)" $((bytes + ack)) \
			"$shape ${size} MiB: client read exactly the answer"
		st p1 pairs
		st b1 redirected_bytes
		st t1 tcp_bytes
		st r1 fallbacks.slow_reader
		log "pairs +$((p1 - p0)), redirected_bytes +$((b1 - b0)), tcp_bytes +$((t1 - t0))," \
			"slow_reader +$((r1 - r0))"
		assert_ge $((p1 - p0)) 1 "$shape ${size} MiB: the connection was paired"
		if [ $shape = paced ]; then
			assert_ge $((b1 - b0)) $bytes "$shape ${size} MiB: redirected_bytes grew by the payload"
		else
			assert_ge $((b1 - b0)) 1 "$shape ${size} MiB: bytes were redirected"
		fi
		assert_ge $((b1 - b0 + t1 - t0)) $((2 * bytes + ack)) \
			"$shape ${size} MiB: every byte counted as redirected or TCP"
	done
done
log "fallbacks: $(fallbacks)"

agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent exited cleanly"

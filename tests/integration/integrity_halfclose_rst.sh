# timeout: 180
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: with both ends attached (and paired), connection endings keep
# their TCP meaning and never cost or corrupt a byte.
#  - half-close: the client sends, shutdown(SHUT_WR)s and reads to EOF; the
#    server reads to EOF (it must see EOF exactly after the payload), then
#    writes an ack and an answer of its own and closes; the client reads the
#    whole answer and then EOF.  Once large (4 MiB each way), then 200
#    connections at 4 at a time.
#  - RST: one end closes with SO_LINGER {1, 0} in the middle of its stream
#    (client mid-upload, server mid-answer, and both ways in echo mode); the
#    other end must see ECONNRESET or EOF, never hang, and every byte it
#    did get must be a correct prefix of the pattern.
# Every case must form a pair, the redirect must carry the answers, and at
# the end no tracked socket may be left (status sockets back to 0).
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
seed=500
# case NAME SERVER_ARGS -- CLIENT_ARGS: one run, both ends must report ok
case_run() {
	local name=$1 sargs=() cargs=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do sargs+=("$1"); shift; done
	shift
	cargs=("$@")
	seed=$((seed + 1))
	st p0 pairs
	st m0 redirected_msgs
	tk_server s_$name "$CS" - --listen 127.0.0.1:0 --seed $seed --duration 60 \
		--timeout 10 "${sargs[@]}"
	tk_client c_$name "$CC" - --connect 127.0.0.1:${SPORT[s_$name]} --seed $seed \
		--timeout 10 "${cargs[@]}"
	tk_wait s_$name
	tk_ok s_$name "$name: server end correct"
	tk_ok c_$name "$name: client end correct"
	st p1 pairs
	st m1 redirected_msgs
	PAIRS=$((p1 - p0)) MSGS=$((m1 - m0))
	log "$name: pairs +$PAIRS redirected_msgs +$MSGS"
	assert_ge $PAIRS 1 "$name: paired"
}

st m_start redirected_msgs

# half-close
case_run halfclose_4m --mode verify --conns 1 --expect-bytes $((4 * MIB)) \
	--reply-bytes $((4 * MIB)) -- --mode verify --bytes $((4 * MIB))
assert_eq "$(rf s_halfclose_4m bytes_in)" $((4 * MIB)) "halfclose_4m: server saw EOF right after the payload"
assert_eq "$(rf c_halfclose_4m bytes_in)" $((4 * MIB + 64)) "halfclose_4m: client got the whole answer, then EOF"
assert_ge $MSGS 1 "halfclose_4m: the answer was redirected"

case_run halfclose_many --mode verify --conns 200 --threads 4 --expect-bytes 65536 \
	--reply-bytes 262144 -- --mode verify --bytes 65536 --conns 200 --parallel 4
assert_eq "$(rf c_halfclose_many conns)" 200 "halfclose_many: 200 connections completed"
assert_ge $PAIRS 200 "halfclose_many: every connection paired"
assert_ge $MSGS 200 "halfclose_many: answers were redirected"

# RST from the client in the middle of its upload
case_run client_rst --mode verify --conns 1 --allow-reset --expect-bytes $((8 * MIB)) \
	-- --mode verify --bytes $((8 * MIB)) --rst-after $((3 * MIB))
assert_eq "$(rf c_client_rst rst_sent)" 1 "client_rst: the client closed with RST"
assert_eq "$(rf s_client_rst resets)" 1 "client_rst: the server saw the reset (ECONNRESET or early EOF)"
assert_eq "$(rf s_client_rst first_bad)" -1 "client_rst: what the server got is a correct prefix"
assert_le "$(rf s_client_rst bytes_in)" $((3 * MIB)) "client_rst: the server got no more than was sent"

# RST from the server in the middle of its answer
case_run server_rst --mode verify --conns 1 --reply-bytes $((8 * MIB)) \
	--rst-after $((3 * MIB)) -- --mode verify --bytes $MIB --allow-reset
assert_eq "$(rf s_server_rst rst_sent)" 1 "server_rst: the server closed with RST"
assert_eq "$(rf c_server_rst resets)" 1 "server_rst: the client saw the reset (ECONNRESET or early EOF)"
assert_eq "$(rf c_server_rst first_bad)" -1 "server_rst: what the client got is a correct prefix"
assert_le "$(rf c_server_rst bytes_in)" $((3 * MIB + 64)) "server_rst: the client got no more than was sent"
assert_ge $MSGS 1 "server_rst: the answer was redirected"

# echo mode (full duplex): RST from either end mid-stream
case_run echo_client_rst --mode echo --conns 1 --allow-reset \
	-- --mode echo --bytes $((8 * MIB)) --rst-after $((3 * MIB))
assert_eq "$(rf s_echo_client_rst resets)" 1 "echo_client_rst: the server saw the reset"
assert_eq "$(rf s_echo_client_rst first_bad)/$(rf c_echo_client_rst first_bad)" -1/-1 \
	"echo_client_rst: both ends got correct prefixes"
assert_ge $MSGS 1 "echo_client_rst: the echo was redirected"

case_run echo_server_rst --mode echo --conns 1 --rst-after $((2 * MIB)) \
	-- --mode echo --bytes $((8 * MIB)) --allow-reset
assert_ge "$(rf c_echo_server_rst resets)" 1 "echo_server_rst: the client saw the reset"
assert_eq "$(rf s_echo_server_rst first_bad)/$(rf c_echo_server_rst first_bad)" -1/-1 \
	"echo_server_rst: both ends got correct prefixes"
assert_le "$(rf c_echo_server_rst bytes_in)" $((2 * MIB)) "echo_server_rst: the client got no more than was echoed"
assert_ge $MSGS 1 "echo_server_rst: the echo was redirected"

st m_end redirected_msgs
assert_ge $((m_end - m_start)) 1 "redirected_msgs moved"
log "fallbacks: $(fallbacks)"

# Every socket of every case is closed by now: nothing may stay tracked.
for i in $(seq 1 50); do
	st socks sockets
	[ "$socks" = 0 ] && break
	sleep 0.2
done
assert_eq "$socks" 0 "no tracked socket left after half-closes and resets"

agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent exited cleanly"

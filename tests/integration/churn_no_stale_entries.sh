# timeout: 200
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: short connections leave no state behind.  100,000 connections
# (one request/response each, both ends attached, 8 at a time, all within
# 60 s) complete byte-exact and each forms one pair; then 20,000 in which
# the client never sends a byte (it half-closes at once and reads the
# server's answer: its endpoint can't be settled at a send); then 10,000
# that the client resets right after connect (no byte either way, no
# packet in after the handshake: only the close can clean up).  Once all
# are closed, status sockets, maps.sock_hash and maps.endpoints must all
# return to 0, and pairs must have grown by about the connection count.
# Runs in a private network namespace (wide local port range, tcp_tw_reuse
# there only); in the first phase the server closes first, so TIME_WAIT
# stays on the server side and the client's ports are reusable at once.
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

NCONN=100000 NSILENT=20000 NRST=10000
ns_new N churn
ip netns exec "$N" sysctl -qw net.ipv4.ip_local_port_range="10000 65000" \
	net.ipv4.tcp_tw_reuse=1 || fail "sysctl in $N"
cg_new CS srv
cg_new CC cli
agent_start -c "$CS" -c "$CC"

st p0 pairs
st s0 sockets_total
st m0 redirected_msgs
tk_server s "$CS" "$N" --listen 127.0.0.1:9000 --mode rr --threads 8 --conns $NCONN \
	--duration 90 --timeout 10 --quiet
tk_client c "$CC" "$N" --connect 127.0.0.1:9000 --mode rr --conns $NCONN --parallel 8 \
	--duration 60 --timeout 10 --req-size 100 --resp-size 300
crc=$?
[ $crc = 0 ] || kill "${PID[s]}" 2>/dev/null
tk_wait s
tk_ok c "client: every connection checked (exit $crc)"
tk_ok s "server: every connection checked"
assert_eq "$(rf c conns)" $NCONN "all $NCONN connections completed within 60 s"
log "elapsed $(rf c elapsed_ms) ms"

# The client never sends: it shuts its write side at once, the server
# answers the EOF with an ack and 1000 bytes and closes.
tk_server s2 "$CS" "$N" --listen 127.0.0.1:9001 --mode verify --threads 8 \
	--conns $NSILENT --expect-bytes 0 --reply-bytes 1000 --duration 60 --timeout 10 --quiet
tk_client c2 "$CC" "$N" --connect 127.0.0.1:9001 --mode verify --bytes 0 \
	--conns $NSILENT --parallel 8 --duration 40 --timeout 10
crc=$?
[ $crc = 0 ] || kill "${PID[s2]}" 2>/dev/null
tk_wait s2
tk_ok c2 "client of silent connections: every answer checked (exit $crc)"
tk_ok s2 "server of silent connections: no byte received on any"
assert_eq "$(rf c2 conns)" $NSILENT "all $NSILENT silent connections completed"

# The client resets right after connect: no byte either way, and no packet
# in for the client after the handshake, so only the close can clean up.
tk_server s3 "$CS" "$N" --listen 127.0.0.1:9002 --mode verify --threads 8 \
	--conns $NRST --expect-bytes 0 --allow-reset --duration 60 --timeout 10 --quiet
tk_client c3 "$CC" "$N" --connect 127.0.0.1:9002 --mode verify --bytes 0 --rst-after 0 \
	--conns $NRST --parallel 8 --duration 40 --timeout 10
crc=$?
[ $crc = 0 ] || kill "${PID[s3]}" 2>/dev/null
tk_wait s3
tk_ok c3 "client of reset connections: every one reset (exit $crc)"
tk_ok s3 "server of reset connections: each saw the reset or EOF, no byte"
assert_eq "$(rf c3 rst_sent)" $NRST "all $NRST connections closed with RST"

# Everything is closed (server side in TIME_WAIT, which is no full socket):
# the gauges must drain to 0 within a few seconds.
gauges() { # "SOCKETS SOCK_HASH ENDPOINTS" from one status call
	"$AGENT" status --json | python3 -c '
import json, sys
v = json.load(sys.stdin)
print(v["sockets"], v["maps"]["sock_hash"], v["maps"]["endpoints"])'
}
for i in $(seq 1 50); do
	read -r socks sh ep < <(gauges)
	[ "$socks $sh $ep" = "0 0 0" ] && break
	sleep 0.2
done
log "after $i polls: sockets $socks, sock_hash $sh, endpoints $ep"
if [ "$socks $sh $ep" != "0 0 0" ]; then
	log "TCP sockets left in $N by state:" \
		"$(ip netns exec "$N" ss -Htan | awk '{ print $1 }' | sort | uniq -c | tr '\n' ' ')"
	ip netns exec "$N" ss -Htanoi state all | grep -v TIME-WAIT | head -n 20 | sed 's/^/#   /'
	log "status: $("$AGENT" status --json)"
fi
assert_eq "$socks" 0 "status sockets back to 0"
assert_eq "$sh" 0 "maps.sock_hash empty"
assert_eq "$ep" 0 "maps.endpoints empty"

st p1 pairs
st s1 sockets_total
st m1 redirected_msgs
log "pairs +$((p1 - p0)) sockets_total +$((s1 - s0)) redirected_msgs +$((m1 - m0))"
log "fallbacks: $(fallbacks)"
TOTAL=$((NCONN + NSILENT + NRST))
assert_ge $((p1 - p0)) $((TOTAL * 95 / 100)) "pairs grew by about the connection count"
assert_le $((p1 - p0)) $TOTAL "no more pairs than connections"
assert_ge $((s1 - s0)) $((2 * TOTAL * 95 / 100)) "both ends of the connections were tracked"

agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent exited cleanly"

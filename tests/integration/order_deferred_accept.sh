# timeout: 240
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: request/response ordering holds when a connection's first bytes
# race its pairing.  The server listens with TCP_DEFER_ACCEPT, so its end
# is established only when the client's first request arrives: the client
# always sends before a peer exists, so the whole connection must stay on
# TCP for good (no pair, nothing redirected, nothing left tracked).  2000
# connections, each sending 8 pipelined requests (one send() each) the
# moment connect() returns, 20 rounds each: the server checks every
# request's sequence number and payload, the client every response's; zero
# ordering errors.  (On loopback the first request establishes and pairs
# the server end inside the client's send(), so the next request would be
# redirected while the first is still unread in the TCP receive queue:
# the naive version read it first.)  Counters must show the race
# (fallbacks.no_peer or sticky_tcp).  A run without TCP_DEFER_ACCEPT
# (same checks, 16 in flight) goes first and covers the plain race where
# the client may send before the server end is established.
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

NCONN=2000 ROUNDS=20

# run NAME SERVER_ARGS -- CLIENT_ARGS: one server/client run, both checked
run() {
	local name=$1 sargs=() cargs=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do sargs+=("$1"); shift; done
	shift
	cargs=("$@")
	tk_server s_$name "$CS" - --listen 127.0.0.1:0 --mode rr --threads 8 \
		--conns $NCONN --duration 120 "${sargs[@]}"
	tk_client c_$name "$CC" - --connect 127.0.0.1:${SPORT[s_$name]} --mode rr \
		--conns $NCONN --parallel 8 --rounds $ROUNDS --duration 120 "${cargs[@]}"
	tk_wait s_$name
	tk_ok s_$name "$name: server saw every request in order and intact"
	tk_ok c_$name "$name: client saw every response in order and intact"
	assert_eq "$(rf s_$name seq_errors)/$(rf c_$name seq_errors)" 0/0 "$name: zero ordering errors"
	assert_eq "$(rf c_$name rounds)" $((NCONN * ROUNDS)) "$name: every response arrived"
	assert_eq "$(rf c_$name conns)" $NCONN "$name: every connection completed"
}
# snap SUFFIX: counters into variables p$SUFFIX, m$SUFFIX, n$SUFFIX, k$SUFFIX
snap() {
	st "p$1" pairs
	st "m$1" redirected_msgs
	st "n$1" fallbacks.no_peer
	st "k$1" fallbacks.sticky_tcp
}

snap 0
run immediate -- --pipeline 16 --split-writes --req-size 50 --resp-size 50
snap 1
log "immediate: pairs +$((p1 - p0)) redirected_msgs +$((m1 - m0))" \
	"no_peer +$((n1 - n0)) sticky_tcp +$((k1 - k0))"
log "fallbacks: $(fallbacks)"
assert_ge $((p1 - p0)) 1 "immediate: pairs formed"
assert_ge $((m1 - m0)) 1 "immediate: messages were redirected"

run deferred --defer-accept 5 -- --pipeline 8 --split-writes --req-size 200 --resp-size 3000
snap 2
log "deferred: pairs +$((p2 - p1)) redirected_msgs +$((m2 - m1))" \
	"no_peer +$((n2 - n1)) sticky_tcp +$((k2 - k1))"
log "fallbacks: $(fallbacks)"
assert_ge $((n2 - n1 + k2 - k1)) 1 "deferred: the client's early first send fell back (no_peer/sticky_tcp)"
# The client's first request leaves before the server end is established,
# so the connection must stay plain TCP for good, both directions: a
# tracked socket may never receive TCP bytes (FIONREAD, docs/DESIGN.md).
assert_eq $((p2 - p1)) 0 "deferred: no pair formed on a connection that started on TCP"
assert_eq $((m2 - m1)) 0 "deferred: nothing redirected on it"
assert_eq "$(stat_get maps.sock_hash)" 0 "deferred: no socket left in the SOCKHASH"

agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent exited cleanly"

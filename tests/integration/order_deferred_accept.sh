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
. "$(dirname "$0")/../lib/tcpkit.sh"
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

# timeout: 150
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: the claim / withdraw race never loses, duplicates or misdelivers
# a byte.  For 6 s per round, 16 client threads (tracked, CPU 1) make short
# connections to a tracked server (16 workers, CPU 0); half send their
# request the moment connect() returns, racing the server's
# PASSIVE_ESTABLISHED_CB (the withdraw path: cmpxchg EP_WITHDRAWN against
# the server's claim), half wait for the server's greeting first.  Every
# direction of every connection carries its own pattern (keyed by client
# port and a fresh nonce); both ends check every byte, the header, the
# length and the EOF after the reply.  Every wait is bounded (3 s).
# Round 1, loopback: the final ACK is processed inside the client's
# connect(), so the window is almost never hit there.  Round 2: client and
# server in two namespaces joined by a veth pair whose receive side is
# steered (RPS) to the other CPU: the server handles the final ACK on CPU 0
# while the client sends on CPU 1, and a few percent of the connections
# withdraw.  Round 3: the veth again, with the window widened by the
# agent's test-only knob (NGX_SOCKMAP_TEST_CLAIM_DELAY: a busy loop between
# the passive end's checks and its compare-and-swap), so the withdraw path
# is taken, and must be, on every run: the bytes of those connections are
# checked like all others.  RACE_AGENT_ARGS passes extra `run` options.
# DURATION overrides the 6 s.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
RK=$TOOLS/racekit
[ -x "$RK" ] || fail "$RK not built (make tools)"
DURATION=${DURATION:-6}
cg_new CS srv
cg_new CC cli
# shellcheck disable=SC2086 # RACE_AGENT_ARGS is a word list
agent_start -c "$CS" -c "$CC" ${RACE_AGENT_ARGS:-}

# race NAME NETNS_SRV NETNS_CLI ADDR: one run of DURATION seconds; sets
# the deltas P (pairs) and N (claims_lost: passive ends that lost the race
# to their peer's withdrawal; fallbacks.no_peer would also count passive
# ends that simply found no endpoint)
race() {
	local name=$1 nss=$2 nsc=$3 addr=$4 p0 p1 n0 n1 m0 m1 t0 t1 crc p1_ p2_ spid conns
	st p0 pairs
	st n0 claims_lost
	st m0 redirected_msgs
	st t0 tcp_msgs
	rm -f "$TMP/$name.ports"
	in_cg_ns "$CS" "$nss" taskset -c 0 "$RK" server --ports-file "$TMP/$name.ports" \
		--addr "$addr" --workers 16 --timeout 3 --seed 4242 \
		>"$TMP/$name.server.res" 2>"$TMP/$name.server.err" &
	PID[$name]=$!
	on_exit "kill ${PID[$name]}"
	wait_file "$TMP/$name.ports" "$name: race server listening"
	read -r p1_ p2_ spid <"$TMP/$name.ports"
	on_exit "kill $spid"
	in_cg_ns "$CC" "$nsc" taskset -c 1 timeout $((DURATION + 20)) "$RK" client \
		--addr "$addr" --port1 "$p1_" --port2 "$p2_" --threads 16 --duration $DURATION \
		--timeout 3 --seed 4242 >"$TMP/$name.client.res" 2>"$TMP/$name.client.err"
	crc=$?
	kill -TERM "$spid" # racekit itself: PID[$name] is a subshell
	wait "${PID[$name]}"
	st p1 pairs
	st n1 claims_lost
	st m1 redirected_msgs
	st t1 tcp_msgs
	log "$name client: $(cat "$TMP/$name.client.res")"
	log "$name server: $(cat "$TMP/$name.server.res")"
	sed 's/^/#   /' "$TMP/$name.client.err" "$TMP/$name.server.err" | head -20
	P=$((p1 - p0)) N=$((n1 - n0))
	log "$name: pairs +$P, claims_lost +$N (the peer withdrew first)," \
		"redirected_msgs +$((m1 - m0)), tcp_msgs +$((t1 - t0))"
	[ "$crc" = 124 ] && fail "$name: the client hung past its own bounded waits"
	conns=$(rk_field $name.client conns)
	assert_ge "${conns:-0}" 200 "$name: the client made connections for ${DURATION} s"
	assert_ge "$(rk_field $name.client client_first)" 100 "$name: client-first connections (racing the claim)"
	assert_ge "$(rk_field $name.client server_first)" 100 "$name: server-first connections"
	assert_eq "$(rk_field $name.client timeouts)" 0 "$name: no client connection hung"
	assert_eq "$(rk_field $name.server timeouts)" 0 "$name: no server connection hung"
	assert_eq "$(rk_field $name.client failed)" 0 \
		"$name: every client connection got exactly its own bytes, then EOF"
	assert_eq "$(rk_field $name.server failed)" 0 "$name: every server connection got exactly its own bytes"
	assert_eq "$(rk_field $name.server conns)" "$conns" "$name: the server saw every connection"
	assert_ge "$P" 1 "$name: connections were paired"
}
rk_field() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" "$TMP/$1.res"; }

# 1. loopback: the final ACK is processed inside the client's connect()
race loopback - - 127.0.0.1
if [ "$N" -gt 0 ]; then
	ok "loopback: the withdraw path was taken $N times"
else
	log "NOTE: loopback: no connection went through the withdraw path (window not hit)"
fi

# 2. two namespaces joined by a veth pair, with RPS sending each side's
# received packets to the other CPU: the server processes the client's
# final ACK on CPU 0 while the client, on CPU 1, is already sending
ns_new NS srv
ns_new NC cli
ip -n "$NC" link add rk0 type veth peer name rk1 netns "$NS" || fail "veth"
ip -n "$NC" addr add 10.214.0.1/24 dev rk0 || fail "address in $NC"
ip -n "$NS" addr add 10.214.0.2/24 dev rk1 || fail "address in $NS"
ip -n "$NC" link set rk0 up && ip -n "$NS" link set rk1 up || fail "link up"
ip netns exec "$NS" sh -c 'echo 1 > /sys/class/net/rk1/queues/rx-0/rps_cpus' || fail "RPS on rk1"
ip netns exec "$NC" sh -c 'echo 2 > /sys/class/net/rk0/queues/rx-0/rps_cpus' || fail "RPS on rk0"
race veth "$NS" "$NC" 10.214.0.2
if [ "$N" -gt 0 ]; then
	ok "veth: the withdraw path was taken $N times (and $P pairs formed)"
else
	log "NOTE: veth: no connection went through the withdraw path (window not hit)"
fi
agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent exited cleanly"

# 3. the veth again, the window widened
# shellcheck disable=SC2086
NGX_SOCKMAP_TEST_CLAIM_DELAY=${CLAIM_DELAY:-20000} agent_start -c "$CS" -c "$CC" ${RACE_AGENT_ARGS:-}
race veth_widened "$NS" "$NC" 10.214.0.2
assert_ge "$N" 1 "veth, window widened: the withdraw path was taken (and $P pairs formed)"
agent_stop || fail "agent did not exit 0 on SIGTERM"

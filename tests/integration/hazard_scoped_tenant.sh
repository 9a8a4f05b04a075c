# timeout: 200
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: a hazard one tenant's connections show changes only that
# tenant's service endpoint, not the port number host-wide (issue 21).
# Two network namespaces, A and B, each with its own tracked server on
# 127.0.0.1:PORT (the same port) and a tracked client.
#  1. A's server reads with splice(2): its first connection is reset
#     (resets.splice), and A's endpoint is learned as a hazard;
#  2. B's echo server on the same port: a new connection in B still pairs,
#     and fallbacks.hazard does not move;
#  3. an echo server in A on that port again: a new connection in A is
#     not paired, fallbacks.hazard grows (both ends).
# Then the same with two pod-like addresses (not loopback: no netns in
# the key) on one port in B's namespace: a splicing reader on the first
# leaves the second paired.
# Once per tier (common.sh): the hazard of a splice is learned by the
# reset iterator (iter/tcp) or by the agent (sock_diag), from the request
# the data plane made, keyed alike.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
SK=$TOOLS/splicekit
[ -x "$SK" ] || fail "$SK not built (make tools)"
cg_new CS srv
cg_new CC cli
ns_new NA a
ns_new NB b

# splice_at NAME NETNS ADDR PORT: a splice server at ADDR:PORT in NETNS and
# 4 connections to it, one at a time: the first is reset (the hazard), and
# its endpoint learned
splice_at() {
	local name=$1 ns=$2 addr=$3 port=$4 r0 r1 spid
	st r0 resets.splice
	rm -f "$TMP/$name.port"
	in_cg_ns "$CS" "$ns" "$SK" server --listen $addr:$port --ready-file "$TMP/$name.port" \
		--out "$TMP/$name.srv" --conns 4 --timeout 3 --seed 7 >"$TMP/$name.srvlog" 2>&1 &
	spid=$!
	on_exit "kill $spid"
	wait_file "$TMP/$name.port" "$name: splice server listening"
	in_cg_ns "$CC" "$ns" "$SK" client --connect $addr:$port --out "$TMP/$name.cli" \
		--conns 4 --parallel 1 --bytes 64K --seed 7 --timeout 5 >"$TMP/$name.clilog" 2>&1
	wait $spid
	st r1 resets.splice
	log "$name: $(grep -c 'outcome=reset' "$TMP/$name.cli") of 4 reset, resets.splice +$((r1 - r0))"
	assert_ge $((r1 - r0)) 1 "$name: the splicing reader's connection was reset"
}

# echo_one NAME NETNS ADDR PORT: one 64 KiB echo connection CC -> CS in
# NETNS; PAIRS and HAZ: what pairs and fallbacks.hazard grew by
echo_one() {
	local p0 p1 f0 f1
	st p0 pairs
	st f0 fallbacks.hazard
	tk_server s_$1 "$CS" "$2" --listen $3:$4 --mode echo --seed 5 --conns 1 \
		--expect-bytes 64K --duration 20
	tk_client c_$1 "$CC" "$2" --connect $3:$4 --mode echo --seed 5 --bytes 64K
	tk_wait s_$1
	tk_ok c_$1 "$1: the echo got every byte back"
	st p1 pairs
	st f1 fallbacks.hazard
	PAIRS=$((p1 - p0)) HAZ=$((f1 - f0))
	log "$1: pairs +$PAIRS, fallbacks.hazard +$HAZ"
}

# two pod-like addresses in B (on its lo: local, never loopback)
POD1=10.213.0.1 POD2=10.213.0.2
ip -n "$NB" addr add $POD1/32 dev lo || fail "adding $POD1 in B"
ip -n "$NB" addr add $POD2/32 dev lo || fail "adding $POD2 in B"
# a process of a tracked cgroup in B all along, so the agent keeps B's
# addresses in local_addrs between the runs
in_cg_ns "$CS" "$NB" sleep 600 &
on_exit "kill $!"

for ((h = 0; h < ${#TIERS_TODO[@]}; h++)); do
	PORT=$((18431 + h))
	# shellcheck disable=SC2046
	agent_start -c "$CS" -c "$CC" $(tier_args "${TIERS_TODO[h]}")
	tier_check "${TIERS_TODO[h]}"
	t=${TIER//\//-}

	# 1. a splicing reader in A: reset, A's endpoint learned
	splice_at "A-$t" "$NA" 127.0.0.1 $PORT
	# 2. B, same port, its own service: still paired
	echo_one "B-$t" "$NB" 127.0.0.1 $PORT
	assert_eq $HAZ 0 "B ($TIER): A's hazard is not B's (fallbacks.hazard unchanged)"
	assert_eq $PAIRS 1 "B ($TIER): a new connection on the same port in B is paired"
	# 3. A again, an ordinary server on the learned endpoint: not paired
	echo_one "A2-$t" "$NA" 127.0.0.1 $PORT
	assert_eq $PAIRS 0 "A ($TIER): a new connection to the learned endpoint is not paired"
	assert_eq $HAZ 2 "A ($TIER): both its ends counted as fallbacks.hazard"

	# 4. two addresses, one port, one namespace: the splicing one only
	sleep 1.5 # a tick: B's addresses are in local_addrs
	splice_at "pod1-$t" "$NB" $POD1 $PORT
	echo_one "pod2-$t" "$NB" $POD2 $PORT
	assert_eq $HAZ 0 "$POD2 ($TIER): $POD1's hazard is not its own"
	assert_eq $PAIRS 1 "$POD2 ($TIER): a new connection to the same port there is paired"
	echo_one "pod1b-$t" "$NB" $POD1 $PORT
	assert_eq $PAIRS 0 "$POD1 ($TIER): a new connection to the learned endpoint is not paired"
	assert_eq $HAZ 2 "$POD1 ($TIER): both its ends counted as fallbacks.hazard"

	agent_stop || fail "agent did not exit 0 on SIGTERM"
	ok "agent ($TIER) exited cleanly"
done

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

# echo_one NAME NETNS PORT: one 64 KiB echo connection CC -> CS in NETNS
echo_one() {
	tk_server s_$1 "$CS" "$2" --listen 127.0.0.1:$3 --mode echo --seed 5 --conns 1 \
		--expect-bytes 64K --duration 20
	tk_client c_$1 "$CC" "$2" --connect 127.0.0.1:$3 --mode echo --seed 5 --bytes 64K
	tk_wait s_$1
	tk_ok c_$1 "$1: the echo got every byte back"
}

for ((h = 0; h < ${#TIERS_TODO[@]}; h++)); do
	PORT=$((18431 + h))
	# shellcheck disable=SC2046
	agent_start -c "$CS" -c "$CC" $(tier_args "${TIERS_TODO[h]}")
	tier_check "${TIERS_TODO[h]}"
	t=${TIER//\//-}

	# 1. a splicing reader in A: reset, A's endpoint learned
	st r0 resets.splice
	rm -f "$TMP/$t.port"
	in_cg_ns "$CS" "$NA" "$SK" server --listen 127.0.0.1:$PORT --ready-file "$TMP/$t.port" \
		--out "$TMP/$t.srv" --conns 4 --timeout 3 --seed 7 >"$TMP/$t.srvlog" 2>&1 &
	spid=$!
	on_exit "kill $spid"
	wait_file "$TMP/$t.port" "A's splice server listening"
	in_cg_ns "$CC" "$NA" "$SK" client --connect 127.0.0.1:$PORT --out "$TMP/$t.cli" \
		--conns 4 --parallel 1 --bytes 64K --seed 7 --timeout 5 >"$TMP/$t.clilog" 2>&1
	wait $spid
	st r1 resets.splice
	log "A, splice ($TIER): $(grep -c 'outcome=reset' "$TMP/$t.cli") of 4 reset, resets.splice +$((r1 - r0))"
	assert_ge $((r1 - r0)) 1 "A ($TIER): the splicing reader's connection was reset"

	# 2. B, same port, its own service: still paired
	st p0 pairs
	st f0 fallbacks.hazard
	echo_one b-$t "$NB" $PORT
	st p1 pairs
	st f1 fallbacks.hazard
	log "B ($TIER): pairs +$((p1 - p0)), fallbacks.hazard +$((f1 - f0))"
	assert_eq $((f1 - f0)) 0 "B ($TIER): A's hazard is not B's (fallbacks.hazard unchanged)"
	assert_eq $((p1 - p0)) 1 "B ($TIER): a new connection on the same port in B is paired"

	# 3. A again, an ordinary server on the learned endpoint: not paired
	echo_one a-$t "$NA" $PORT
	st p2 pairs
	st f2 fallbacks.hazard
	log "A again ($TIER): pairs +$((p2 - p1)), fallbacks.hazard +$((f2 - f1))"
	assert_eq $((p2 - p1)) 0 "A ($TIER): a new connection to the learned endpoint is not paired"
	assert_eq $((f2 - f1)) 2 "A ($TIER): both its ends counted as fallbacks.hazard"

	agent_stop || fail "agent did not exit 0 on SIGTERM"
	ok "agent ($TIER) exited cleanly"
done

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
# Last, hazards on the client side (hazard_client.py): client pod CA reads
# its replies with splice(2) from server pod S, and then leaves a 4 MiB
# reply unread past --max-unread (where moving to TCP is unsafe: the data
# plane ends it from the server's send).  Each time the connection is
# reset and CA's side is learned, not S's: client pod CB's next
# connection to S still pairs, CA's does not (both clients in one cgroup
# here: the address tells them apart; hazard_client_cgroup.sh has two
# cgroups at one address).
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

# echo_one NAME NETNS ADDR PORT [CLIENT ARGS]: one 64 KiB echo connection
# CC -> CS in NETNS; PAIRS and HAZ: what pairs and fallbacks.hazard grew by
echo_one() { tk_echo_count "$1" "$CS" "$CC" "$2" "$3" "$4" "${@:5}"; }

# hazard_client NAME NETNS SERVER PORT CLIENT HOW REASON BYTES: CLIENT
# reads a reply of BYTES from SERVER:PORT the HOW way (hazard_client.py
# --read): its connection is reset and counted as resets.REASON
hazard_client() {
	local name=$1 ns=$2 r0 r1 p0 p1 spid out
	st r0 resets.$7
	st p0 pairs
	rm -f "$TMP/$name.ready"
	in_cg_ns "$CS" "$ns" python3 "$HC" serve --listen $3:$4 --ready "$TMP/$name.ready" \
		--reply $8 --timeout 6 >"$TMP/$name.srvlog" 2>&1 &
	spid=$!
	on_exit "kill $spid"
	wait_file "$TMP/$name.ready" "$name: server listening"
	out=$(in_cg_ns "$CC" "$ns" python3 "$HC" client --connect $3:$4 --bind $5 --read $6 \
		--reply $8 --timeout 5)
	wait $spid
	st r1 resets.$7
	st p1 pairs
	log "$name: client $5 ($6): $out, pairs +$((p1 - p0)), resets.$7 +$((r1 - r0))"
	log "$name: server: $(tail -n 3 "$TMP/$name.srvlog")"
	assert_eq $((p1 - p0)) 1 "$name: the connection was paired"
	case $6 in
	splice) assert_eq "${out%% *}" outcome=reset "$name: the client's connection was reset" ;;
	# the server's send fails (EACCES) and it closes at once: its FIN
	# can reach the client before the agent's reset does
	*) [[ $out =~ ^outcome=(reset|eof)\ bytes=([0-9]+) ]] &&
		[ "${BASH_REMATCH[2]}" -le $((UNREAD_CAP + 65536)) ] ||
		fail "$name: the client got at most --max-unread, then an end: $out"
		ok "$name: the client got at most --max-unread, then an end" ;;
	esac
	assert_ge $((r1 - r0)) 1 "$name: counted as resets.$7"
}

# client_side NAME HOW REASON BYTES PORT: the hazard of client CA against
# the server SRV on PORT (nothing learned there yet) stays CA's
client_side() {
	local port=$5
	hazard_client "ca-$1" "$NB" $SRV $port $CA $2 $3 $4
	echo_one "cb-$1" "$NB" $SRV $port --bind $CB
	assert_eq $HAZ 0 "$CB ($TIER): $CA's $3 hazard is not the server's (fallbacks.hazard unchanged)"
	assert_eq $PAIRS 1 "$CB ($TIER): another client's new connection to the server is paired"
	echo_one "ca2-$1" "$NB" $SRV $port --bind $CA
	assert_eq $PAIRS 0 "$CA ($TIER): its next connection after the $3 hazard is not paired"
	# the client's end only: the server's finds no registration (no_peer),
	# it learns the client's cgroup from the one it claims
	assert_eq $HAZ 1 "$CA ($TIER): its end counted as fallbacks.hazard"
}

# pod-like addresses in B (on its lo: local, never loopback): two servers,
# then a server and two clients
POD1=10.213.0.1 POD2=10.213.0.2 SRV=10.213.0.3 CA=10.213.0.4 CB=10.213.0.5
for a in $POD1 $POD2 $SRV $CA $CB; do
	ip -n "$NB" addr add $a/32 dev lo || fail "adding $a in B"
done
HC=$TOP/tests/lib/hazard_client.py
UNREAD_CAP=$((1 << 20))
# a process of a tracked cgroup in B all along, so the agent keeps B's
# addresses in local_addrs between the runs
in_cg_ns "$CS" "$NB" sleep 600 &
on_exit "kill $!"

for ((h = 0; h < ${#TIERS_TODO[@]}; h++)); do
	PORT=$((18431 + h))
	# shellcheck disable=SC2046
	agent_start -c "$CS" -c "$CC" --max-unread $UNREAD_CAP $(tier_args "${TIERS_TODO[h]}")
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

	# 5. a client that splices, 6. one that leaves its reply unread: its
	# side is learned, not the server's
	# (a 64 KiB reply: one of 4 MiB would cross --max-unread first)
	client_side "$t-splice" splice splice 65536 $((PORT + 10))
	if [ "$(stat_get selftest.checks.slow_reader_bound.result)" = pass ]; then
		log "the reply left unread moves to TCP here (slow_reader_bound): nothing to learn"
	else
		client_side "$t-stall" stall slow_reader $((4 << 20)) $((PORT + 20))
	fi

	agent_stop || fail "agent did not exit 0 on SIGTERM"
	ok "agent ($TIER) exited cleanly"
done

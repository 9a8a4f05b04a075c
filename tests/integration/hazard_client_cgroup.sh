# timeout: 200
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: a hazard a local client shows stops pairing for that client's
# cgroup only, not for every process with its address (issue 37, item 3).
# In one network namespace every local process connects from 127.0.0.1:
# client cgroup CA and an nginx-like client cgroup CB both talk to an
# upstream server (cgroup CS) on 127.0.0.1:PORT.
#  1. CA sends an urgent byte (MSG_OOB) on its connection: the data plane
#     ends it (or sends the byte through TCP where that is safe) and
#     learns CA's side;
#  2. CB's next connection to the port still pairs, fallbacks.hazard does
#     not move;
#  3. CA's next connection is not paired (fallbacks.hazard: CA's end; the
#     server's end finds no registration).
# The same with CA reading its reply with splice(2) (on another port):
# there the enforcer learns CA's side from the socket it ends
# (reset_doomed, or sock_diag's cgroup id of the socket).  Once per tier
# (common.sh).
# Last, hazards kept 3 s (test knob NGX_SOCKMAP_TEST_HAZARD_TTL): CA's
# connection after that time pairs again, a learned hazard ages out.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
HC=$TOP/tests/lib/hazard_client.py
cg_new CS srv
cg_new CA cla
cg_new CB clb

# echo_one NAME CGROUP PORT: one 64 KiB echo connection CGROUP -> CS on
# 127.0.0.1:PORT; PAIRS and HAZ: what pairs and fallbacks.hazard grew by
echo_one() { tk_echo_count "$1" "$CS" "$2" - 127.0.0.1 "$3"; }

# hazard NAME PORT HOW: CA's connection to CS on 127.0.0.1:PORT shows the
# hazard HOW (hazard_client.py --read); it was paired, so its side is learned
hazard() {
	local name=$1 p0 p1 spid out
	st p0 pairs
	rm -f "$TMP/$name.ready"
	cg_exec "$CS" python3 "$HC" serve --listen 127.0.0.1:$2 --ready "$TMP/$name.ready" \
		--timeout 6 >"$TMP/$name.srvlog" 2>&1 &
	spid=$!
	on_exit "kill $spid"
	wait_file "$TMP/$name.ready" "$name: server listening"
	out=$(cg_exec "$CA" python3 "$HC" client --connect 127.0.0.1:$2 --bind 127.0.0.1 \
		--read $3 --timeout 5)
	wait $spid
	st p1 pairs
	log "$name: CA ($3): $out, pairs +$((p1 - p0)), resets: $(stat_get resets)"
	assert_eq $((p1 - p0)) 1 "$name: CA's connection was paired (its hazard can be learned)"
}

# scoped NAME PORT HOW: CA's hazard HOW on PORT, then CB and CA again
scoped() {
	hazard "ca-$1" $2 $3
	echo_one "cb-$1" "$CB" $2
	assert_eq $HAZ 0 "CB ($TIER): CA's $3 hazard is not CB's (fallbacks.hazard unchanged)"
	assert_eq $PAIRS 1 "CB ($TIER): its connection to the same port from 127.0.0.1 is paired"
	echo_one "ca2-$1" "$CA" $2
	assert_eq $PAIRS 0 "CA ($TIER): its next connection after the $3 hazard is not paired"
	assert_eq $HAZ 1 "CA ($TIER): its end counted as fallbacks.hazard"
}

for ((h = 0; h < ${#TIERS_TODO[@]}; h++)); do
	PORT=$((18531 + h))
	# shellcheck disable=SC2046
	agent_start -c "$CS" -c "$CA" -c "$CB" $(tier_args "${TIERS_TODO[h]}")
	tier_check "${TIERS_TODO[h]}"
	t=${TIER//\//-}
	scoped "$t-urgent" $PORT urgent
	scoped "$t-splice" $((PORT + 10)) splice
	agent_stop || fail "agent did not exit 0 on SIGTERM"
	ok "agent ($TIER) exited cleanly"
done

# hazards kept 3 s: CA's side learned, then forgotten
NGX_SOCKMAP_TEST_HAZARD_TTL=3 agent_start -c "$CS" -c "$CA" -c "$CB"
hazard ttl 18551 urgent
sleep 4
echo_one ca-after-ttl "$CA" 18551
assert_eq $HAZ 0 "after the hazard's time: not counted as fallbacks.hazard"
assert_eq $PAIRS 1 "after the hazard's time: CA's connection is paired again"
agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent exited cleanly"

# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The two netns-isolation tests (loopback and veth) run the same experiment
# on differently built worlds.  The caller sets up two worlds, A and B,
# with identical addresses, and names:
#   CAS CAC CBC CBS   cgroups (iso_cgroups makes them): A's server
#                     (attached), A's client (not), B's client (attached),
#                     B's server (not)
#   NAC NAS NBC NBS   each one's network namespace (client and server may
#                     share one)
#   SRV_IP CLI_IP     the server's and the client's address in every world
#   SEED_A SEED_B     the patterns of each world
# then starts the agent on CAS and CBC and calls iso_run "NO-PAIR LABEL".
# An iso_ready function, if defined, runs once the servers listen.
# Source after common.sh and tcpkit.sh.

PORT=9000 BYTES=1048576

# iso_cgroups: the four cgroups, in this shell
iso_cgroups() {
	cg_new CAS a_srv # attached
	cg_new CAC a_cli # not attached
	cg_new CBC b_cli # attached
	cg_new CBS b_srv # not attached
}

# iso_servers: each world's server, two connections each, then the
# caller's wait for the agent to know the worlds (iso_ready, optional)
iso_servers() {
	local srv_args=(--listen $SRV_IP:$PORT --mode verify --expect-bytes $BYTES
		--reply-bytes $BYTES --conns 2 --duration 60)
	tk_server sa "$CAS" "$NAS" "${srv_args[@]}" --seed $SEED_A
	tk_server sb "$CBS" "$NBS" "${srv_args[@]}" --seed $SEED_B
	if declare -F iso_ready >/dev/null; then iso_ready; fi
}

# progs CGROUP: how many BPF programs are attached to CGROUP
iso_progs() {
	bpftool -j cgroup show "$1" 2>/dev/null | python3 -c '
import json, sys
t = sys.stdin.read().strip()
print(len(json.loads(t)) if t else 0)'
}

# iso_round FIRST SPORT: both clients use source port SPORT; FIRST connects
# first and holds its connection idle for 2 s, the other connects while
# it is open, sends after 0.6 s and completes; then FIRST sends.
iso_round() {
	local first=$1 sport=$2 x second ss_a ss_b
	second=B
	[ "$first" = B ] && second=A
	for x in "$first" "$second"; do
		local cg=$CAC ns=$NAC seed=$SEED_A delay=2000
		[ "$x" = B ] && cg=$CBC ns=$NBC seed=$SEED_B
		[ "$x" = "$second" ] && delay=600
		tk_client_bg c$x$sport "$cg" "$ns" --connect $SRV_IP:$PORT \
			--bind $CLI_IP:$sport --mode verify --seed $seed --bytes $BYTES \
			--start-delay $delay --connected-file "$TMP/conn.$x.$sport"
		wait_file "$TMP/conn.$x.$sport" "client $x (port $sport) connected"
	done
	ss_a=$(ip netns exec "$NAS" ss -Htn state established "( dport = :$sport )")
	ss_b=$(ip netns exec "$NBS" ss -Htn state established "( dport = :$sport )")
	log "A server side: $ss_a"
	log "B server side: $ss_b"
	[ -n "$ss_a" ] && [ -n "$ss_b" ] ||
		fail "round $first first: the two connections were not open at the same time"
	for x in A B; do
		tk_wait c$x$sport
		tk_ok c$x$sport "$first first: client $x got its own server's ack and answer"
	done
}

# iso_run NO_PAIR_LABEL: the whole experiment, with the agent running
iso_run() {
	assert_ge "$(iso_progs "$CAS")" 1 "A's server cgroup is attached"
	assert_ge "$(iso_progs "$CBC")" 1 "B's client cgroup is attached"
	assert_eq "$(iso_progs "$CAC")/$(iso_progs "$CBS")" 0/0 \
		"A's client and B's server cgroups are not"

	iso_servers
	st p0 pairs
	st m0 redirected_msgs
	st s0 sockets_total
	st n0 fallbacks.no_peer
	iso_round A 40001
	iso_round B 40002

	tk_wait sa
	tk_ok sa "server A received exactly A's bytes on both connections"
	tk_wait sb
	tk_ok sb "server B received exactly B's bytes on both connections"
	assert_eq "$(rf sa bytes_in)" $((2 * BYTES)) "server A read exactly two payloads"
	assert_eq "$(rf sb bytes_in)" $((2 * BYTES)) "server B read exactly two payloads"

	st p1 pairs
	st m1 redirected_msgs
	st s1 sockets_total
	st n1 fallbacks.no_peer
	log "pairs +$((p1 - p0)) redirected_msgs +$((m1 - m0)) sockets_total +$((s1 - s0))" \
		"no_peer +$((n1 - n0)); fallbacks: $(fallbacks)"
	assert_ge $((s1 - s0 + n1 - n0)) 4 \
		"the data plane saw the attached ends (tracked, or refused as no_peer)"
	assert_eq $((p1 - p0)) 0 "$1"
	assert_eq $((m1 - m0)) 0 "no message was redirected"

	agent_stop || fail "agent did not exit 0 on SIGTERM"
	ok "agent exited cleanly"
}

# iso_run_both_tracked: the same rounds with every cgroup attached, so each
# world pairs its own connection while the other world's twin, with the same
# 4-tuple, is registered too.  Only the namespace cookie in the key keeps
# the two registrations apart (without it the second is ambiguous and
# nothing pairs): every connection must pair, in its own world.
iso_run_both_tracked() {
	iso_servers
	st p0 pairs
	st a0 fallbacks.ambiguous
	st m0 redirected_msgs
	iso_round A 40003
	iso_round B 40004
	tk_wait sa
	tk_ok sa "both tracked: server A received exactly A's bytes"
	tk_wait sb
	tk_ok sb "both tracked: server B received exactly B's bytes"
	st p1 pairs
	st a1 fallbacks.ambiguous
	st m1 redirected_msgs
	log "both tracked: pairs +$((p1 - p0)) ambiguous +$((a1 - a0)) redirected_msgs +$((m1 - m0))"
	assert_eq $((a1 - a0)) 0 "both tracked: no key was ambiguous (the netns cookie tells them apart)"
	assert_eq $((p1 - p0)) 4 "both tracked: every connection paired, in its own world"
	assert_ge $((m1 - m0)) 8 "both tracked: their bytes were redirected"
	agent_stop || fail "agent did not exit 0 on SIGTERM"
}

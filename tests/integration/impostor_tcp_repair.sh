# timeout: 120
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: a tracked process cannot steal a connection by copying its
# 4-tuple and initial sequence numbers into a socket of its own.
# A pair is proven by the mirrored 4-tuple (no netns cookie for a
# non-loopback address) and the ISN cross-match (docs/DESIGN.md); both can
# be forged: TCP_REPAIR sets a socket's sequence numbers
# (net/ipv4/tcp.c tcp_repair_set_window, do_tcp_setsockopt TCP_QUEUE_SEQ).
#   netns V: the tracked server S on 10.215.0.2:80;
#   netns C: the victim, a TCP client made of raw frames (AF_PACKET on the
#            veth whose peer is in V; 10.215.0.1 is not configured in C, so
#            C's kernel neither answers nor resets);
#   netns X: the impostor, in a tracked cgroup, with 10.215.0.1 on a veth
#            of its own (peer in X too: what leaves X goes nowhere).
# The victim sends its SYN and learns S's ISN from the SYN-ACK.  Before it
# sends the final ACK the impostor builds, in X, a socket with the same
# 4-tuple and sequence numbers:
#   repair: TCP_REPAIR, TCP_QUEUE_SEQ = victim ISN + 1 / S's ISN + 1,
#           connect() in repair mode (ESTABLISHED without a packet);
#   copy:   a plain connect() answered by a raw responder in X with a
#           SYN-ACK carrying S's ISN (the victim took the impostor's port
#           and ISN from its SYN).
# Then the victim sends the final ACK and a request; S answers.  The
# impostor must never receive a byte, and the victim must get S's whole
# answer, exactly as without the agent (both variants run first without
# it, the live reference).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
PY=$TOP/tests/lib/impostor.py
NET=10.215.0 PORT=80
cg_new CS srv      # tracked
cg_new CI impostor # tracked
cg_new CU others   # victim and responder: never tracked
ns_new NV v
ns_new NC c
ns_new NX x

# no IPv6 anywhere (no ND/MLD frames), static neighbours (no ARP)
quiet() { ip netns exec "$1" sysctl -qw "net.ipv6.conf.$2.disable_ipv6=1"; }
macof() { ip netns exec "$1" cat "/sys/class/net/$2/address"; }
ip -n "$NV" link add iv type veth peer name ic netns "$NC" || fail "veth V <-> C"
quiet "$NV" iv
quiet "$NC" ic
ip -n "$NV" addr add $NET.2/24 dev iv || fail "address in V"
ip -n "$NV" link set iv up && ip -n "$NC" link set ic up || fail "link up V/C"
ip -n "$NV" neigh replace $NET.1 lladdr "$(macof "$NC" ic)" dev iv nud permanent ||
	fail "neighbour in V"
ip -n "$NX" link add xa type veth peer name xb || fail "veth in X"
quiet "$NX" xa
quiet "$NX" xb
ip -n "$NX" addr add $NET.1/24 dev xa || fail "address in X"
ip -n "$NX" link set xa up && ip -n "$NX" link set xb up || fail "link up X"
ip -n "$NX" neigh replace $NET.2 lladdr "$(macof "$NX" xb)" dev xa nud permanent ||
	fail "neighbour in X"
ok "V ($NET.2) <-> C (raw, no address); X ($NET.1) on its own veth"

# run NAME VARIANT: one attempt, results in $TMP/NAME/
run() {
	local name=$1 variant=$2 d=$TMP/$1 x
	mkdir -p "$d"
	in_cg_ns "$CS" "$NV" python3 "$PY" server "$d" $NET.2 $PORT >"$d/server.log" 2>&1 &
	PID[s$name]=$!
	on_exit "kill ${PID[s$name]}"
	wait_file "$d/server.listening" "$name: S listening"
	if [ "$variant" = copy ]; then
		in_cg_ns "$CU" "$NX" timeout 40 python3 "$PY" responder "$d" xb >"$d/responder.log" 2>&1 &
		PID[r$name]=$!
		on_exit "kill ${PID[r$name]}"
		sleep 0.3 # the responder's packet socket is bound
	fi
	in_cg_ns "$CI" "$NX" timeout 40 python3 "$PY" "$variant" "$d" $NET.1 $NET.2 $PORT \
		>"$d/impostor.log" 2>&1 &
	PID[i$name]=$!
	on_exit "kill ${PID[i$name]}"
	in_cg_ns "$CU" "$NC" timeout 40 python3 "$PY" victim "$d" ic "$(macof "$NC" ic)" $NET.1 \
		"$(macof "$NV" iv)" $NET.2 $PORT "$variant" >"$d/victim.log" 2>&1 ||
		{ cat "$d"/*.log; fail "$name: the victim failed"; }
	for x in i s r; do
		[ -n "${PID[$x$name]:-}" ] && wait "${PID[$x$name]}"
	done
	for x in victim impostor server; do
		[ -s "$d/$x.json" ] || { cat "$d"/*.log; fail "$name: $x wrote no result"; }
		log "$name $x: $(cat "$d/$x.json")"
	done
	log "$name handshake: $(cat "$d/handshake.json")"
}

# check NAME LABEL: what must hold, with or without the agent
check() {
	local d=$TMP/$1
	# $(...) drops the request's final newline
	assert_eq "$(jget "$d/server.json" request)" "GET /secret HTTP/1.0" "$2: S got the victim's request"
	assert_eq "$(jget "$d/impostor.json" got)" 0 "$2: the impostor received nothing"
	assert_eq "$(jget "$d/victim.json" is_answer)" true "$2: the victim got S's whole answer"
}

for variant in repair copy; do
	run ref_$variant $variant
	check ref_$variant "$variant, no agent"
done

agent_start -c "$CS" -c "$CI"
for variant in repair copy; do
	st p0 pairs
	run $variant $variant
	st p1 pairs
	log "$variant: pairs +$((p1 - p0))"
	check $variant "$variant, agent running"
done
agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent exited cleanly"

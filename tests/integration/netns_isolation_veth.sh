# timeout: 120
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves the ISN cross-check: two separate worlds of two namespaces each
# (A-client/A-server joined by one veth pair, B-client/B-server by another)
# use identical addresses and ports, so the two connections have identical
# 4-tuples, and for non-loopback addresses the netns cookie is not part of
# the key.  Only A's server and B's client are in attached cgroups: each is
# the other's perfect mirror-image key.  With both connections open at the
# same time (A established first, then B first) no pair may form: every
# server must receive exactly its own client's seeded bytes and every
# client its own server's answer; pairs and redirected_msgs stay 0.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
cg_new CAS a_srv # attached
cg_new CAC a_cli # not attached
cg_new CBC b_cli # attached
cg_new CBS b_srv # not attached
ns_new NAC ac
ns_new NAS as
ns_new NBC bc
ns_new NBS bs
CLI_IP=10.213.0.1 SRV_IP=10.213.0.2
# veth CLIENT_NS SERVER_NS: one veth pair between them, same addresses in
# every world (deleting the namespaces removes the pair)
veth() {
	ip -n "$1" link add tk0 type veth peer name tk1 netns "$2" || fail "veth $1 <-> $2"
	ip -n "$1" addr add $CLI_IP/24 dev tk0 || fail "address in $1"
	ip -n "$2" addr add $SRV_IP/24 dev tk1 || fail "address in $2"
	ip -n "$1" link set tk0 up || fail "link up in $1"
	ip -n "$2" link set tk1 up || fail "link up in $2"
}
veth "$NAC" "$NAS"
veth "$NBC" "$NBS"
ok "two worlds with identical addresses: $CLI_IP -> $SRV_IP"

agent_start -c "$CAS" -c "$CBC"
# progs CGROUP: how many BPF programs are attached to CGROUP
progs() {
	bpftool -j cgroup show "$1" 2>/dev/null | python3 -c '
import json, sys
t = sys.stdin.read().strip()
print(len(json.loads(t)) if t else 0)'
}
assert_ge "$(progs "$CAS")" 1 "A's server cgroup is attached"
assert_ge "$(progs "$CBC")" 1 "B's client cgroup is attached"
assert_eq "$(progs "$CAC")/$(progs "$CBS")" 0/0 "A's client and B's server cgroups are not"

PORT=9000 BYTES=1048576 SEED_A=3333 SEED_B=4444
srv_args=(--listen $SRV_IP:$PORT --mode verify --expect-bytes $BYTES
	--reply-bytes $BYTES --conns 2 --duration 60)
tk_server sa "$CAS" "$NAS" "${srv_args[@]}" --seed $SEED_A
tk_server sb "$CBS" "$NBS" "${srv_args[@]}" --seed $SEED_B

st p0 pairs
st m0 redirected_msgs
st s0 sockets_total
st n0 fallbacks.no_peer

# round FIRST SPORT: both clients use source port SPORT; FIRST connects
# first and holds its connection idle for 2 s, the other connects while
# it is open, sends after 0.6 s and completes; then FIRST sends.
round() {
	local first=$1 sport=$2 x second
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
round A 40001
round B 40002

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
assert_eq $((p1 - p0)) 0 "no pair formed between the two worlds"
assert_eq $((m1 - m0)) 0 "no message was redirected"

agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent exited cleanly"

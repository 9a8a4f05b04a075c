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
. "$(dirname "$0")/../lib/isolation.sh"
iso_cgroups
ns_new NAC ac
ns_new NAS as
ns_new NBC bc
ns_new NBS bs
CLI_IP=10.213.0.1 SRV_IP=10.213.0.2 SEED_A=3333 SEED_B=4444
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
# The agent learns the addresses of namespaces where tracked processes
# live once a second (local_addrs): until then a connection to or from
# such a namespace is rightly skipped as remote.  B's tracked client only
# lives during its round, so keep a tracked process in its namespace and
# wait until both tracked namespaces' addresses are known.
iso_ready() {
	local i
	in_cg_ns "$CBC" "$NBC" sleep 120 &
	on_exit "kill $!"
	for i in $(seq 1 50); do
		[ "$(stat_get local_addresses)" -ge 2 ] && return 0
		sleep 0.1
	done
	fail "the agent did not learn the tracked namespaces' addresses within 5 s ($(stat_get local_addresses))"
}
iso_run "no pair formed between the two worlds"

# timeout: 90
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: the guard's host-wide syscall tracepoints (MSG_OOB sends,
# splice; --guard-hooks tracepoints, what the agent takes where the kernel
# refuses fentry) are attached only while connections are tracked, and a
# socket never enters the SOCKHASH while they are not.
#  1. At start they are attached (guards_armed yes).
#  2. Remote traffic only (a client in a namespace no tracked process
#     lives in, through a veth): never tracked, so after --guard-idle 2 the
#     tracepoints are detached (no link of the agent's sendto_enter left).
#  3. A local connection (both ends tracked) arriving while idle stays on
#     TCP (fallbacks.arming +1, its bytes exact) and wakes the agent: the
#     tracepoints are attached again within a second and the next
#     connection pairs.
#  4. Closed and idle again: detached again.  5. Agent stopped: nothing left.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
cg_new CS srv
cg_new CC cli

our_tracepoints() { agent_prog_links "$GUARD_TP_PROGS"; }
armed() { [ "$(stat_get guards_armed)" = True ] && echo 1 || echo 0; }
wait_armed() { # wait_armed WANT SECS
	local i
	for i in $(seq 1 $(($2 * 10))); do
		[ "$(armed)" = "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

host_tps() { bpftool -j link list | grep -o '"tracepoint":"sys_[a-z_]*"' | grep -c 'send\|splice' || true; }
before=$(host_tps)
# idling is for the tracepoints (fentry hooks never idle: guard_hooks.sh).
# Every time here is times the test time scale (S): under QEMU TCG a few
# status calls take longer than a 2 s idle.
S=${NGX_SOCKMAP_TEST_TIMEOUT_SCALE:-1}
agent_start -c "$CS" -c "$CC" --guard-idle $((2 * S)) --guard-hooks tracepoints
assert_eq "$(armed)" 1 "armed at start"
assert_ge "$(our_tracepoints)" 6 "the agent's syscall tracepoints are attached at start"

# 2. a "remote" client: another namespace, no tracked process there
ns_new NR remote
ip link add gi0 type veth peer name gi1 netns "$NR" || fail "veth"
on_exit "ip link del gi0 2>/dev/null"
ip addr add 10.215.0.1/24 dev gi0 && ip link set gi0 up || fail "gi0"
ip -n "$NR" addr add 10.215.0.2/24 dev gi1 && ip -n "$NR" link set gi1 up || fail "gi1"
tk_server rsrv "$CS" - --listen 10.215.0.1:0 --duration 20
for i in 1 2 3 4 5 6; do
	ip netns exec "$NR" "$K" client -q --connect "10.215.0.1:${SPORT[rsrv]}" --bytes 4K \
		--out "$TMP/rcli.$i.res" >/dev/null 2>&1 || fail "remote client $i failed"
	sleep 0.5
done
st s0 skipped.remote
assert_ge "$s0" 6 "the remote connections were skipped (never tracked)"
wait_armed 0 $((4 * S)) || fail "still armed $((4 * S)) s after the last tracked socket (--guard-idle $((2 * S)))"
ok "idle: disarmed with only remote traffic"
assert_eq "$(our_tracepoints)" 0 "no syscall tracepoint of the agent is attached while idle"

# 3. a local connection wakes it; the next one pairs
st a0 fallbacks.arming
st p0 pairs
tk_server lsrv "$CS" - --listen 127.0.0.1:0 --duration 20
tk_client first "$CC" - --connect "127.0.0.1:${SPORT[lsrv]}" --bytes 64K
tk_ok first "the connection that woke the guard carried its bytes exactly (TCP)"
st a1 fallbacks.arming
assert_ge $((a1 - a0)) 1 "it was counted as fallbacks.arming"
wait_armed 1 $((2 * S)) || fail "not armed again within $((2 * S)) s of the wake-up"
ok "armed again"
assert_ge "$(our_tracepoints)" 6 "tracepoints attached again"
tk_client second "$CC" - --connect "127.0.0.1:${SPORT[lsrv]}" --bytes 64K
tk_ok second "the next connection carried its bytes exactly"
st p1 pairs
assert_ge $((p1 - p0)) 1 "the next connection paired"

# 4. idle again once nothing is tracked
wait_armed 0 $((6 * S)) || fail "not idle again $((6 * S)) s after the last tracked connection closed"
ok "idle again after the connections closed"
agent_stop || fail "agent did not exit 0"
assert_eq "$(host_tps)" "$before" "no tracepoint link of the agent left after exit"

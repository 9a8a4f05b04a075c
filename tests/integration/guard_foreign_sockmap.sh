# timeout: 60
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: the guard knows this product's sockets by their program, not by
# its name.  Another product's sockmap whose sk_msg program is also called
# msg_redirect (tests/bpf/foreign_sockmap.bpf.c) holds a reader that
# splices 64 KiB (tests/prog/foreign_splice.c): with the agent's guard
# armed, the reader must get every byte and its connection live on, and
# resets.splice not move.  (By name, the guard asked for its reset.)
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
PROG=$TOP/build/prog/foreign_splice
[ -x "$PROG" ] || fail "$PROG is not built (make tools)"
cg_new CS srv

# a process in the attached cgroup: its network namespace (this one) is
# tracked, where the enforcer would end what the guard asks for
cg_exec "$CS" sleep 60 &
on_exit "kill $!"
agent_start -c "$CS"
assert_eq "$(stat_get guards_armed)" True "the guard is armed"
st r0 resets.splice
"$PROG" >"$TMP/foreign.out" 2>&1
rc=$?
cat "$TMP/foreign.out"
assert_eq "$rc" 0 "the foreign sockmap's splicing reader got every byte and kept its connection"
sleep 1.5 # a reset request would have been taken within a tick
st r1 resets.splice
assert_eq $((r1 - r0)) 0 "resets.splice did not count it"
agent_stop || fail "agent did not exit 0"

#!/usr/bin/env bash
# timeout: 60
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: the agent writes its lock and state only into a run directory of
# its own (issue 21, item 6).  NGX_SOCKMAP_RUN_DIR points at a directory
#  - owned by uid 65534, then root's but mode 0777: `run` refuses and says
#    which;
#  - its own, with agent.lock a symbolic link: `run` refuses (no lock
#    through a link), the link's target is untouched;
#  - its own, with agent.state.tmp a link to a victim file: the agent
#    starts, and the victim is untouched (it used to be truncated and
#    overwritten with the agent's state).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
cg_new CS srv
D=$TMP/rundir
echo victim >"$TMP/victim"

refuses() { # refuses LABEL WANT
	local rc=0
	NGX_SOCKMAP_RUN_DIR=$D timeout 60 "$AGENT" run -c "$CS" --no-follow --metrics off \
		>"$TMP/run.out" 2>"$TMP/run.err" || rc=$?
	log "$1: exit $rc: $(head -c 300 "$TMP/run.err")"
	[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "$1: run started (exit $rc)"
	grep -q "$2" "$TMP/run.err" || fail "$1: run did not say '$2'"
	ok "$1: run refuses, saying '$2'"
}

mkdir -m 0700 "$D" && chown 65534:65534 "$D"
refuses "another user's run directory" "another user's"
rm -rf "$D" && mkdir -m 0777 "$D" && chmod 0777 "$D"
refuses "a run directory others may write" "writable by others"
rm -rf "$D" && mkdir -m 0700 "$D"
ln -s "$TMP/victim" "$D/agent.lock"
refuses "agent.lock a link" "cannot create"
assert_eq "$(cat "$TMP/victim")" victim "the lock link's target is untouched"
rm -f "$D/agent.lock"
ln -s "$TMP/victim" "$D/agent.state.tmp"
export NGX_SOCKMAP_RUN_DIR=$D
agent_start -c "$CS"
assert_eq "$(cat "$TMP/victim")" victim "the state link's target is untouched"
[ -L "$D/agent.state.tmp" ] && fail "agent.state.tmp is still a link"
assert_eq "$(stat_get agent.running)" True "the agent wrote its own state; status reads it"
agent_stop || fail "agent did not exit 0"

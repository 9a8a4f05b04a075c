#!/usr/bin/env bash
# timeout: 60
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: `resume` does not lift the pause of a pinned data plane whose
# agent is gone.  The agent ran with --pin on a kernel its self-test
# refused (NGX_SOCKMAP_TEST_FAIL_CHECK=fionread), was SIGKILLed, and its
# verdict went with it: a plain `resume` must refuse and name --force (it
# used to resume, issue 21), `resume --force` resumes, `detach` removes it.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
pin_dir_fresh
cg_new CS srv

AGENT_MAY_REFUSE=1 NGX_SOCKMAP_TEST_FAIL_CHECK=fionread agent_start --pin -c "$CS"
assert_eq "$(stat_get selftest.blocked)" True "the agent kept the data plane paused"
kill -KILL "$AGENT_PID"
wait "$AGENT_PID" 2>/dev/null
AGENT_PID=

rc=0
"$AGENT" resume >"$TMP/resume.out" 2>&1 || rc=$?
log "resume: exit $rc: $(cat "$TMP/resume.out")"
[ $rc -ne 0 ] || fail "resume lifted the pause of a pinned data plane nobody checked"
grep -q -- "--force" "$TMP/resume.out" || fail "resume did not name --force"
ok "resume refuses, and names --force"
"$AGENT" status >"$TMP/status.txt" 2>&1
grep -q "paused" "$TMP/status.txt" || fail "status does not say paused: $(cat "$TMP/status.txt")"
ok "still paused"
"$AGENT" resume --force >"$TMP/force.out" 2>&1 || fail "resume --force failed: $(cat "$TMP/force.out")"
ok "resume --force resumes"
"$AGENT" detach >/dev/null 2>&1 || fail "detach failed"
[ -e "$PIN" ] && fail "$PIN still there after detach"
ok "detach removed the pinned data plane"

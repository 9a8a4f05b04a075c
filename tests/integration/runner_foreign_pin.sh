# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: tests/run does not detach a pinned data plane that may belong to
# an agent no test started.  With such an agent running (here one started
# without the runner's NGX_SOCKMAP_TEST_RUN, as the host's own, a bench's
# or a soak's would be) and /sys/fs/bpf/ngx-sockmap pinned, a tests/run
# refuses (exit 2, saying why) and leaves both alone; with that agent
# gone, an orphaned pin is an earlier run's leftover and is swept as before.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
U=$(ls "$TOP"/build/unit | head -n 1)
[ -n "$U" ] || skip "SKIP: no unit test built (make units)"
pin_dir_fresh
cg_new CG pinned
AGENT_WRAP="env -u NGX_SOCKMAP_TEST_RUN" agent_start -c "$CG" --pin
tr '\0' '\n' <"/proc/$AGENT_PID/environ" | grep -q '^NGX_SOCKMAP_TEST_RUN=' &&
	fail "the agent carries the runner's tag: the test proves nothing"
[ -e "$PIN" ] || fail "run --pin pinned nothing in $PIN"

out=$(NGX_SOCKMAP_TEST_LOGS=$TMP/logs "$TOP/tests/run" "unit/$U" 2>&1)
rc=$?
assert_eq "$rc" 2 "tests/run's exit beside a foreign agent's pinned data plane"
echo "$out" | grep -q "pid $AGENT_PID" || fail "it did not name the agent: $out"
ok "it says why: $(echo "$out" | head -n 1)"
[ -e "$PIN" ] || fail "the pinned data plane was removed"
kill -0 "$AGENT_PID" || fail "the agent is gone"
ok "the pins and the agent are left alone"

agent_stop || fail "agent did not exit 0"
[ -e "$PIN" ] || fail "run --pin left no pin after SIGTERM"
out=$(NGX_SOCKMAP_TEST_LOGS=$TMP/logs "$TOP/tests/run" "unit/$U" 2>&1)
echo "$out" | grep -q "^1 passed, 0 failed" || fail "with the agent gone: $out"
[ -e "$PIN" ] && fail "an orphaned pin (no agent) was not swept"
ok "with the agent gone, the orphaned pin is swept and the run goes on"

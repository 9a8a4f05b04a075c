#!/usr/bin/env bash
# timeout: 90
# Proves: the agent fails closed.  A critical self-test check that fails
# (fionread: nginx hangs on such a kernel), or a self-test that cannot run
# at all, keeps the data plane paused: `ready` says why, status and
# /metrics show it, and a local pair is not redirected.  --force overrides,
# loudly.  Test hooks: NGX_SOCKMAP_TEST_FAIL_CHECK=NAME fails one check,
# NGX_SOCKMAP_TEST_SELFTEST_ERROR=1 makes the self-test unable to run; both
# only under a test run (agent/test_knobs.h), which the last case checks.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
cg_new CS srv
cg_new CC cli
export AGENT_MAY_REFUSE=1
port=19439

# pair PORTVAR: one local connection with 10000 bytes each way; prints the
# redirected_msgs it added
pair() {
	local r0 r1
	st r0 redirected_msgs
	tk_server s "$CS" - --listen 127.0.0.1:0 --mode verify --conns 1 --expect-bytes 10000 \
		--reply-bytes 10000 --duration 20
	tk_client c "$CC" - --connect 127.0.0.1:${SPORT[s]} --mode verify --bytes 10000
	tk_wait s
	tk_ok c "the connection works"
	st r1 redirected_msgs
	echo $((r1 - r0)) >"$TMP/pair"
}

for mode in check error; do
	if [ $mode = check ]; then
		export NGX_SOCKMAP_TEST_FAIL_CHECK=fionread
		want='fionread: made to fail'
	else
		unset NGX_SOCKMAP_TEST_FAIL_CHECK
		export NGX_SOCKMAP_TEST_SELFTEST_ERROR=1
		want='the self-test could not run'
	fi
	agent_start -c "$CS" -c "$CC" --metrics 127.0.0.1:$port
	grep -q "^ready:.*NOT accelerating: $want" "$TMP/agent.out" ||
		fail "$mode: ready line does not say why: $(head -1 "$TMP/agent.out")"
	ok "$mode: ready says NOT accelerating: $want"
	assert_eq "$(stat_get selftest.blocked)" True "$mode: status --json selftest.blocked"
	stat_get selftest.error | grep -q "$want" || fail "$mode: status --json selftest.error: $(stat_get selftest.error)"
	ok "$mode: status --json names the reason"
	"$AGENT" status | grep -q "NOT accelerating (kept paused): $want" ||
		fail "$mode: status text does not say it"
	ok "$mode: status text says it"
	curl -s "127.0.0.1:$port/metrics" >"$TMP/m.txt"
	grep -qx 'ngx_sockmap_accelerating 0' "$TMP/m.txt" || fail "$mode: /metrics accelerating is not 0"
	grep -qx 'ngx_sockmap_paused 1' "$TMP/m.txt" || fail "$mode: /metrics paused is not 1"
	ok "$mode: /metrics: paused 1, accelerating 0"
	pair
	assert_eq "$(cat "$TMP/pair")" 0 "$mode: nothing redirected"
	if [ $mode = check ]; then
		grep -q 'ngx_sockmap_selftest_passed{check="fionread",critical="true"} 0' "$TMP/m.txt" ||
			fail "$mode: /metrics does not mark the failed check critical"
		ok "$mode: /metrics: selftest_passed{check=fionread,critical=true} 0"
		# `resume` must not lift the self-test's verdict; --force does
		"$AGENT" resume >"$TMP/resume.out" 2>&1 && fail "resume lifted the self-test's pause: $(cat "$TMP/resume.out")"
		grep -q "kept paused at start.*resume --force" "$TMP/resume.out" ||
			fail "resume did not say why: $(cat "$TMP/resume.out")"
		assert_eq "$(stat_get paused)" True "$mode: still paused after a plain resume"
		"$AGENT" resume --force >/dev/null || fail "resume --force failed"
		assert_eq "$(stat_get paused)" False "$mode: resume --force lifts it"
	fi
	agent_stop || fail "$mode: agent did not exit 0"
done

unset NGX_SOCKMAP_TEST_SELFTEST_ERROR
export NGX_SOCKMAP_TEST_FAIL_CHECK=fionread
agent_start -c "$CS" -c "$CC" --force
grep -q "CRITICAL, accelerating anyway: --force" "$TMP/agent.err" ||
	fail "--force: no loud warning: $(cat "$TMP/agent.err")"
ok "--force: warns that it accelerates anyway"
assert_eq "$(stat_get selftest.blocked)" False "--force: not blocked"
pair
assert_ge "$(cat "$TMP/pair")" 2 "--force: the pair is redirected"
agent_stop || fail "agent did not exit 0"

# The knobs are the tests' alone: without NGX_SOCKMAP_TEST_RUN (which
# tests/run and common.sh set) an agent ignores them, whatever its
# environment holds.
NGX_SOCKMAP_TEST_FAIL_CHECK=order "$AGENT" selftest >"$TMP/st.on" 2>&1
grep -q "made to fail" "$TMP/st.on" || fail "under test, the knob did not fail 'order': $(cat "$TMP/st.on")"
ok "under test, NGX_SOCKMAP_TEST_FAIL_CHECK fails a check"
env -u NGX_SOCKMAP_TEST_RUN NGX_SOCKMAP_TEST_FAIL_CHECK=order "$AGENT" selftest >"$TMP/st.off" 2>&1
! grep -q "made to fail" "$TMP/st.off" || fail "outside a test run, a test knob was obeyed: $(grep "made to fail" "$TMP/st.off")"
ok "outside a test run, the same knob is ignored"

# timeout: 120
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: the agent starts everywhere and says, hazard by hazard, what
# guards it on this host; where something is unguarded it stays up and
# does not accelerate (DESIGN "What each host allows: the plan").
#  1. auto: status names a mechanism for resets, unread, splice, oob and
#     ulp, in text (at most 80 columns), JSON and /metrics
#     (ngx_sockmap_hazard_guarded); where the caller knows what this host
#     must give (NGX_SOCKMAP_EXPECT_RESETS, NGX_SOCKMAP_EXPECT_GUARD_HOOKS:
#     tests/vm/run's notracing column) that was taken; a local pair forms.
#  2. the weakest of each forced (--guard-hooks tracepoints --resets
#     sock_diag --unread-scan watch) is taken and named with its reason.
#  3. --guard-hooks none (no splice and MSG_OOB hooks): the agent runs,
#     says "NOT accelerating: splice unguarded", /metrics has
#     hazard_guarded 0 and paused 1, a local connection is not paired;
#     'resume' refuses without --force, 'resume --force' pairs the next.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
cg_new CS srv
cg_new CC cli
METRICS=127.0.0.1:18347

# pair_one NAME: one echo connection CC -> CS; prints the pairs it added
pair_one() {
	local p0 p1
	st p0 pairs
	tk_server s_$1 "$CS" - --listen 127.0.0.1:0 --mode echo --seed 5 --conns 1 \
		--expect-bytes 64K --duration 20
	tk_client c_$1 "$CC" - --connect 127.0.0.1:${SPORT[s_$1]} --mode echo --seed 5 \
		--bytes 64K
	tk_wait s_$1
	tk_ok c_$1 "$1: the echo got every byte back" >&2
	st p1 pairs
	echo $((p1 - p0))
}

# 1. what this host gives
agent_start -c "$CS" -c "$CC" --metrics $METRICS
"$AGENT" status >"$TMP/status.txt"
for h in resets unread splice oob ulp; do
	m=$(stat_get "hazards.$h.mechanism")
	log "$h: $m ($(stat_get "hazards.$h.why"))"
	[ -n "$m" ] && [ "$m" != none ] || fail "auto left $h unguarded here: $(stat_get "hazards.$h.why")"
	grep -Eq "^(hazards)? +$h +$m" "$TMP/status.txt" || fail "status text has no '$h $m' line"
	curl -s "http://$METRICS/metrics" | grep -q "^ngx_sockmap_hazard_guarded{hazard=\"$h\",mechanism=\"$m\"} 1$" ||
		fail "/metrics has no hazard_guarded{hazard=$h,mechanism=$m} 1"
done
ok "every hazard is guarded and named in status, status --json and /metrics"
# every line but the cgroups' (a path is as long as it is)
w=$(grep -v '^cgroup ' "$TMP/status.txt" | awk '{ if (length > m) m = length } END { print m + 0 }')
assert_le "$w" 80 "status fits 80 columns (but for cgroup paths)"
[ -n "${NGX_SOCKMAP_EXPECT_RESETS:-}" ] &&
	assert_eq "$(stat_get hazards.resets.mechanism)" "$NGX_SOCKMAP_EXPECT_RESETS" "resets: what this host must give"
[ -n "${NGX_SOCKMAP_EXPECT_GUARD_HOOKS:-}" ] &&
	assert_eq "$(stat_get hazards.oob.mechanism)" "$NGX_SOCKMAP_EXPECT_GUARD_HOOKS" "oob: what this host must give"
assert_eq "$(stat_get accelerating)" True "auto: accelerating"
assert_ge "$(pair_one auto)" 1 "auto: a local connection paired"
agent_stop || fail "agent did not exit 0 on SIGTERM"

# 2. the weakest tier, forced
agent_start -c "$CS" -c "$CC" --metrics $METRICS --guard-hooks tracepoints --resets sock_diag \
	--unread-scan watch
assert_eq "$(agent_tier)" tracepoints/sock_diag/watch "the forced tier was taken"
assert_eq "$(stat_get hazards.resets.why)" "--resets sock_diag" "status says why sock_diag"
assert_eq "$(stat_get hazards.unread.why)" "--unread-scan watch" "status says why watch"
assert_eq "$(stat_get selftest.checks.reset.result)" pass "the self-test ended a connection with sock_diag"
assert_ge "$(pair_one weak)" 1 "weak tier: a local connection paired"
agent_stop || fail "agent did not exit 0 on SIGTERM"

# 3. unguarded: up, paused, saying why
AGENT_MAY_REFUSE=1 agent_start -c "$CS" -c "$CC" --metrics $METRICS --guard-hooks none
grep -q "^ready: .*NOT accelerating: splice unguarded" "$TMP/agent.out" ||
	fail "the ready line does not say splice is unguarded: $(head -n 1 "$TMP/agent.out")"
assert_eq "$(stat_get hazards.oob.mechanism)" none "status: oob unguarded"
assert_eq "$(stat_get accelerating)" False "unguarded: not accelerating"
m=$(curl -s "http://$METRICS/metrics")
grep -q '^ngx_sockmap_hazard_guarded{hazard="oob",mechanism="none"} 0$' <<<"$m" ||
	fail "/metrics does not say oob is unguarded"
grep -q '^ngx_sockmap_paused 1$' <<<"$m" || fail "/metrics: paused is not 1"
assert_eq "$(pair_one paused)" 0 "unguarded: a local connection was not paired"
"$AGENT" resume >"$TMP/resume.out" 2>&1 && fail "resume lifted the pause of an unguarded hazard without --force"
grep -q "force" "$TMP/resume.out" || fail "resume did not name --force: $(cat "$TMP/resume.out")"
"$AGENT" resume --force >/dev/null || fail "resume --force failed"
assert_ge "$(pair_one forced)" 1 "resume --force: the next connection paired"
agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent exited cleanly"

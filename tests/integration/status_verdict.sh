#!/usr/bin/env bash
# timeout: 90
# Proves: `status` answers "is nginx accelerated?" on its first line and
# in its exit code, and `accelerating` (status --json, /metrics) means the
# same: 0 accelerating; 3 paused; 4 attached to no cgroup (it used to say
# "accelerating" attached to nothing); 5 connections made and none paired;
# 1 no agent.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
cg_new CS srv
cg_new CC cli
cg_new CX other # never attached

# verdict WANT_CODE WANT_FIRST_LINE LABEL: status's exit code and first line
verdict() {
	local rc
	"$AGENT" status >"$TMP/status.txt" 2>&1
	rc=$?
	assert_eq "$rc" "$1" "$3: exit code"
	[[ "$(head -1 "$TMP/status.txt")" == $2* ]] ||
		fail "$3: first line: $(head -1 "$TMP/status.txt")"
	ok "$3: first line: $(head -1 "$TMP/status.txt")"
}
# verdict_until CODE SECS: status's exit code is CODE within SECS
verdict_until() {
	local t=$((SECONDS + $2))
	until "$AGENT" status >/dev/null 2>&1; [ $? = "$1" ]; do
		[ $SECONDS -lt $t ] || return 1
		sleep 0.5
	done
}

agent_start -c "$CS" -c "$CC"
verdict 0 "accelerating: 2 cgroups" "attached, nothing to judge yet"
assert_eq "$(stat_get accelerating)" True "status --json says accelerating"
assert_eq "$(stat_get verdict.exit_code)" 0 "and its exit code"

"$AGENT" pause >/dev/null || fail "pause"
verdict 3 "NOT accelerating: paused" "paused"
assert_eq "$(stat_get accelerating)" False "paused: not accelerating in --json"
"$AGENT" resume >/dev/null || fail "resume"
verdict 0 "accelerating" "resumed"

# connections the agent tracks that can't pair: a tracked client to a
# server nobody attached (30 of them, over loopback)
tk_server s "$CX" - --listen 127.0.0.1:0 --mode verify --conns 30 --expect-bytes 100 \
	--reply-bytes 100 --duration 30
for _ in $(seq 1 30); do
	tk_client c "$CC" - --connect 127.0.0.1:${SPORT[s]} --mode verify --bytes 100
done
tk_wait s
verdict_until 5 15 || fail "no 'none paired' verdict: $(head -1 "$TMP/status.txt")"
verdict 5 "NOT accelerating: " "connections made, none paired"
grep -q "none paired" "$TMP/status.txt" || fail "the line does not say none paired"
assert_eq "$(stat_get accelerating)" False "none paired: not accelerating in --json"
agent_stop

# attached to nothing: the only named cgroup goes away
cg_new CG gone
agent_start -c "$CG"
verdict 0 "accelerating: 1 cgroup" "one cgroup"
rmdir "$CG" || fail "rmdir $CG"
verdict_until 4 10 || fail "still not 'no cgroup': $(head -1 "$TMP/status.txt")"
verdict 4 "NOT accelerating: attached to no cgroup" "its cgroup removed"
assert_eq "$(stat_get accelerating)" False "attached to nothing: not accelerating in --json"
agent_stop

"$AGENT" status >/dev/null 2>&1
assert_eq "$?" 1 "no agent: status exits 1"

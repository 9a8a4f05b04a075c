# timeout: 120
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: an agent loads the data plane twice in one process (the
# self-test's private copy, then its own) and starts, with each unread scan,
# twice in a row.  With libbpf before 1.6.1 an __arena global relocated
# through a stale pointer made that second load segfault inside
# bpf_object__load whenever libbpf grew its map array after recording the
# arena (tests/unit/test_map_layout.c says when); the heap decided whether
# it moved, and 'watch' was where it did.
. "$(dirname "$0")/../lib/common.sh"
cg=$(cg_make reload)
AGENT_MAY_REFUSE=1

# start_stop SCAN: the agent reaches ready and exits 0 on SIGTERM
start_stop() {
	local i rc
	: >"$TMP/agent.out" # not the last run's "ready" (agent_start says why)
	"$AGENT" run --no-follow --guard-idle 0 --metrics off --unread-scan "$1" -c "$cg" \
		>"$TMP/agent.out" 2>"$TMP/agent.err" &
	AGENT_PID=$!
	on_exit "agent_stop"
	for i in $(seq 1 150); do
		grep -q '^ready' "$TMP/agent.out" 2>/dev/null && break
		if ! kill -0 "$AGENT_PID" 2>/dev/null; then
			wait "$AGENT_PID"
			rc=$?
			AGENT_PID=
			cat "$TMP/agent.err"
			[ "$rc" -gt 128 ] &&
				fail "--unread-scan $1: the agent died of signal $((rc - 128)) before ready"
			fail "--unread-scan $1: the agent exited $rc before ready"
		fi
		sleep 0.1
	done
	grep -q '^ready' "$TMP/agent.out" || fail "--unread-scan $1: not ready after 15 s"
	agent_stop
	rc=$?
	[ "$rc" = 0 ] || fail "--unread-scan $1: the agent exited $rc on SIGTERM"
	ok "--unread-scan $1: self-test, data plane loaded, clean exit"
}

for scan in watch watch auto auto; do
	start_stop "$scan"
done

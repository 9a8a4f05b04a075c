#!/usr/bin/env bash
# timeout: 90
# Proves: `ngx-sockmap check` answers "would run accelerate here?" with
# run's own options, on its first line and in its exit code (0 would
# accelerate; 3 would stay paused; 4 no nginx found; 1 cannot run: here
# the metrics port in use), in text and --json, and leaves nothing behind:
# no program on the cgroup it looked at, no pinned data plane, no state.
. "$(dirname "$0")/../lib/common.sh"
CS=$(cg_make srv)

# check_is CODE FIRST_LINE LABEL ARGS...: check's exit code and first line
check_is() {
	local code=$1 want=$2 label=$3 rc
	shift 3
	"$AGENT" check "$@" >"$TMP/check.out" 2>"$TMP/check.err"
	rc=$?
	assert_eq "$rc" "$code" "$label: exit code ($(head -1 "$TMP/check.out"))"
	[[ "$(head -1 "$TMP/check.out")" == $want* ]] ||
		fail "$label: first line: $(head -1 "$TMP/check.out") $(tail -3 "$TMP/check.err")"
	ok "$label: $(head -1 "$TMP/check.out")"
}
no_program_on() {
	[ -z "$(bpftool cgroup show "$1" 2>/dev/null | tail -n +2)" ] ||
		fail "check left programs on $1: $(bpftool cgroup show "$1")"
}

check_is 4 "this host can accelerate, but no nginx was found" "no nginx" \
	--nginx-pid-file "$TMP/no-such.pid" --metrics off
grep -q "^hazards " "$TMP/check.out" || fail "no hazards lines: $(cat "$TMP/check.out")"
ok "it says what guards each hazard here"

check_is 0 "run would accelerate here: 1 cgroup" "a cgroup named" -c "$CS" --metrics off
grep -qF "targets     $CS (named" "$TMP/check.out" || fail "the target is not listed: $(cat "$TMP/check.out")"
no_program_on "$CS"
ok "nothing attached to $CS afterwards"
[ -e "$NGX_SOCKMAP_RUN_DIR/agent.state" ] && fail "check left an agent.state"
ok "no state left"

"$AGENT" check -c "$CS" --metrics off --json >"$TMP/check.json" 2>/dev/null
rc=$?
assert_eq "$(jget "$TMP/check.json" exit_code)" "$rc" "--json: exit_code is the exit code"
assert_eq "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["targets"][0]["path"])' "$TMP/check.json")" \
	"$CS" "--json: the target"
python3 -c 'import json,sys; h=json.load(open(sys.argv[1]))["hazards"]; sys.exit(0 if h["ulp"]["mechanism"] else 1)' \
	"$TMP/check.json" || fail "--json: no hazards"
ok "--json: hazards per mechanism"

# a port in use: run would refuse
python3 -c 'import socket, time; s = socket.socket(); s.bind(("127.0.0.1", 19471)); s.listen(); time.sleep(30)' &
holder=$!
on_exit "kill $holder 2>/dev/null"
port_wait 127.0.0.1 19471 || fail "the port holder did not listen"
check_is 1 "run would refuse: metrics on 127.0.0.1:19471" "metrics port in use" \
	-c "$CS" --metrics 127.0.0.1:19471
kill $holder

# a critical self-test failure: run would attach and stay paused
NGX_SOCKMAP_TEST_FAIL_CHECK=order check_is 3 "run would attach but NOT accelerate: order" \
	"critical check failed" -c "$CS" --metrics off
no_program_on "$CS"
ok "nothing attached after any of them"

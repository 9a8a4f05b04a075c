#!/usr/bin/env bash
# timeout: 120
# Proves: whatever state its connections are in, a signalled agent (SIGKILL,
# SIGTERM) leaves them working, byte-exact: a pair with 100 KiB redirected
# and not read yet, an active end registered and not yet claimed, one that
# withdrew to TCP, an idle pair (tests/lib/signal_states.py).  After the
# signal every one of them finishes both ways with every byte right.
# SIGHUP does not end it: it reloads, and a pair keeps redirecting.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
cg_new CS srv
cg_new CX other # not attached
cg_new CC cli

for sig in KILL TERM; do
	agent_start -c "$CS" -c "$CC"
	st p0 pairs
	mkfifo "$TMP/in.$sig"
	python3 "$TOP/tests/lib/signal_states.py" "$CS" "$CX" "$CC" <"$TMP/in.$sig" \
		>"$TMP/states.$sig" 2>&1 &
	py=$!
	exec 9>"$TMP/in.$sig"
	for _ in $(seq 1 100); do grep -q '^ready\|FAIL' "$TMP/states.$sig" && break; sleep 0.1; done
	grep -q '^ready' "$TMP/states.$sig" || fail "$sig: set-up: $(cat "$TMP/states.$sig")"
	st p1 pairs
	assert_ge $((p1 - p0)) 2 "$sig: the two pairs formed before the signal"
	kill -$sig "$AGENT_PID"
	wait "$AGENT_PID" 2>/dev/null
	AGENT_PID=
	ok "$sig: agent gone"
	echo go >&9
	exec 9>&-
	wait $py
	grep -q '^ok' "$TMP/states.$sig" || fail "$sig: after the signal: $(cat "$TMP/states.$sig")"
	ok "$sig: every connection finished byte-exact, both ways"
done

# Killed during its self-test: the self-test's child dies with it, and the
# next agent removes the private cgroup it left.
"$AGENT" run --no-follow --metrics off -c "$CS" >"$TMP/early.out" 2>&1 &
early=$!
for _ in $(seq 1 100); do
	ls -d "$CG2"/ngx-sockmap-selftest.$early >/dev/null 2>&1 && break
	sleep 0.02
done
[ -d "$CG2/ngx-sockmap-selftest.$early" ] || fail "no self-test cgroup seen for pid $early"
kill -KILL $early
wait $early 2>/dev/null
sleep 0.5
[ -z "$(cat "$CG2/ngx-sockmap-selftest.$early/cgroup.procs" 2>/dev/null)" ] ||
	fail "the self-test's child outlived the killed agent"
ok "killed during its self-test: the self-test's child died with it"
agent_start -c "$CS" -c "$CC"
[ -d "$CG2/ngx-sockmap-selftest.$early" ] && fail "the next agent left the killed one's self-test cgroup"
ok "the next agent removed the self-test cgroup the killed one left"
agent_stop

# SIGHUP (systemctl reload, an operator's kill -HUP) reloads: the agent
# stays, says so, and a pair made before it keeps redirecting.
agent_start -c "$CS" -c "$CC"
st p0 pairs
mkfifo "$TMP/hup.go"
python3 - "$CS" "$CC" "$TMP/hup.go" >"$TMP/hup.out" 2>&1 <<'PY' &
import os, socket, sys
cs, cc, go = sys.argv[1:]
open(cs + "/cgroup.procs", "w").write(str(os.getpid()))
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(1)
open(cc + "/cgroup.procs", "w").write(str(os.getpid()))
c = socket.create_connection(l.getsockname()); s = l.accept()[0]
def rounds(n):
    for i in range(n):
        c.sendall(b"x" * 100); assert s.recv(100, socket.MSG_WAITALL) == b"x" * 100
        s.sendall(b"y" * 100); assert c.recv(100, socket.MSG_WAITALL) == b"y" * 100
rounds(10)
print("ready", flush=True)
open(go).read()
rounds(10)
print("ok", flush=True)
PY
py=$!
for _ in $(seq 1 100); do grep -q '^ready\|Error' "$TMP/hup.out" && break; sleep 0.1; done
grep -q '^ready' "$TMP/hup.out" || fail "HUP: set-up: $(cat "$TMP/hup.out")"
st p1 pairs
assert_ge $((p1 - p0)) 1 "HUP: the pair formed before the signal"
st r0 redirected_msgs
kill -HUP "$AGENT_PID"
for _ in $(seq 1 50); do grep -q '^reloaded' "$TMP/agent.out" && break; sleep 0.1; done
grep -q '^reloaded: 2 cgroups attached' "$TMP/agent.out" || fail "HUP: no 'reloaded' line: $(tail -3 "$TMP/agent.out")"
ok "HUP: the agent says it reloaded"
echo go >"$TMP/hup.go"
wait $py || fail "HUP: the connection after the signal: $(cat "$TMP/hup.out")"
kill -0 "$AGENT_PID" 2>/dev/null || fail "HUP ended the agent"
ok "HUP: the agent is still running"
st r1 redirected_msgs
assert_ge $((r1 - r0)) 20 "HUP: the pair kept redirecting after it"
agent_stop || fail "the agent did not exit 0 after a reload"

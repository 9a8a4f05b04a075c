# timeout: 120
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: over sock_diag (--resets sock_diag), a connection the data plane
# dooms is ended and counted even when the socket the request names was
# closed before the agent got to it.  A server's send crosses
# --max-unread (its client reads nothing): the send fails (EACCES), the
# data plane asks for the reset and learns the client's side, and the
# server closes at once.  The agent is stopped (SIGSTOP) meanwhile, so by
# the time it runs the server's socket is
#  a. a timewait socket (an orphan in FIN_WAIT2 goes to tcp_time_wait()),
#     which a lookup finds and ending it deschedules, or
#  b. gone (net.ipv4.tcp_fin_timeout 1 in the test's namespace, and 3 s),
#     and only the request's peer, the client, is left.
# Each time the client must be ended (TCP_CLOSE: having had the server's
# FIN, its reader sees EOF all the same) and resets.slow_reader must count
# the connection once.  Before, in b the agent found the client alone,
# ended it and counted nothing (iter/tcp had the same fault, fixed apart:
# enforce_iter_chunk).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
cg_new CS srv
ns_new NS x
UNREAD_CAP=$((1 << 20))

# closer.py OUT GO: in one process, a tracked connection over loopback;
# the server end sends until its send fails (more than --max-unread the
# client leaves unread), then closes; prints "closed" and waits (10 s at
# most) for the file GO; then the client reads until an end and prints
# "client state=S outcome=reset:ERR|eof|timeout bytes=N" (S: its TCP state
# before it read)
cat >"$TMP/closer.py" <<'PY'
import errno, os, socket, sys, time
go = sys.argv[1]
ls = socket.socket()
ls.bind(("127.0.0.1", 0))
ls.listen(1)
c = socket.create_connection(ls.getsockname())
s, _ = ls.accept()
s.settimeout(5)
sent, why = 0, "none"
chunk = b"u" * 65536
try:
    while sent < (16 << 20):
        sent += s.send(chunk)
except OSError as e:
    why = errno.errorcode.get(e.errno, str(e.errno)) if e.errno else "timeout"
s.close()
print("closed sent=%d send_error=%s" % (sent, why), flush=True)
end = time.monotonic() + 10
while not os.path.exists(go) and time.monotonic() < end:
    time.sleep(0.05)
# tcp_info's first byte: the state (TCP_CLOSE 7 once ended; the FIN it
# got made it TCP_CLOSE_WAIT 8, where a reader sees EOF either way)
state = c.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1)[0]
c.settimeout(5)
n, outcome = 0, "timeout"
try:
    while True:
        b = c.recv(65536)
        if not b:
            outcome = "eof"
            break
        n += len(b)
except socket.timeout:
    pass
except OSError as e:
    outcome = "reset:" + errno.errorcode.get(e.errno, str(e.errno))
print("client state=%d outcome=%s bytes=%d" % (state, outcome, n), flush=True)
PY

# a process of the tracked cgroup in the namespace all along: the agent
# resets there (it looks in the namespaces of tracked processes)
in_cg_ns "$CS" "$NS" sleep 600 &
on_exit "kill $!"

agent_start -c "$CS" --max-unread $UNREAD_CAP $(tier_args "$WEAK_TIER")
tier_check "$WEAK_TIER"
[ "$(stat_get selftest.checks.slow_reader_bound.result)" = pass ] &&
	skip "a reply left unread moves to TCP here (slow_reader_bound): the data plane dooms nothing"
sleep 1.5 # a tick: the agent knows the namespace

# round NAME SETTLE: the connection doomed and its server end closed
# while the agent is stopped, then SETTLE s before it runs again
round() {
	local name=$1 settle=$2 r0 r1 p0 p1 pid i
	st r0 resets.slow_reader
	st p0 pairs
	rm -f "$TMP/go"
	kill -STOP "$AGENT_PID"
	on_exit "kill -CONT $AGENT_PID"
	in_cg_ns "$CS" "$NS" python3 "$TMP/closer.py" "$TMP/go" >"$TMP/$name.out" 2>&1 &
	pid=$!
	on_exit "kill $pid"
	for i in $(seq 1 100); do
		grep -q '^closed' "$TMP/$name.out" && break
		sleep 0.1
	done
	grep -q '^closed' "$TMP/$name.out" || { kill -CONT "$AGENT_PID"; fail "$name: the server end did not close: $(tail -n 3 "$TMP/$name.out")"; }
	sleep "$settle"
	log "$name: server sockets left in the namespace: $(ip netns exec "$NS" ss -Htan state time-wait state fin-wait-2 | wc -l)"
	kill -CONT "$AGENT_PID"
	sleep 0.5
	touch "$TMP/go"
	wait $pid
	st r1 resets.slow_reader
	st p1 pairs
	log "$name: $(tr '\n' ' ' <"$TMP/$name.out"); pairs +$((p1 - p0)), resets.slow_reader +$((r1 - r0))"
	grep -h 'reset\|sock_diag' "$TMP/agent.err" | tail -n 2 | sed 's/^/#   /'
	assert_eq $((p1 - p0)) 1 "$name: the connection was paired"
	grep -q 'send_error=EACCES' "$TMP/$name.out" ||
		fail "$name: the server's send was not refused: $(head -n 1 "$TMP/$name.out")"
	grep -q '^client state=7 ' "$TMP/$name.out" ||
		fail "$name: the client, the request's peer, was not ended (TCP_CLOSE 7): $(tail -n 1 "$TMP/$name.out")"
	ok "$name: the client, the request's peer, was ended"
	assert_eq $((r1 - r0)) 1 "$name: resets.slow_reader counts the connection once"
}

round timewait 0.5
ip netns exec "$NS" sysctl -qw net.ipv4.tcp_fin_timeout=1 || fail "setting tcp_fin_timeout in the test namespace"
round gone 3

agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent ($TIER) exited cleanly"

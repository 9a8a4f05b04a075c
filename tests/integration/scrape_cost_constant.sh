#!/usr/bin/env bash
# timeout: 120
# Proves: what a scrape costs does not grow with the number of sockets.
# status and /metrics read counters the data plane keeps (and gauges the
# agent publishes once a second), never a walk over the maps (get_next_key
# per entry: 10k sockets made each scrape 10k+ syscalls, restarted by
# churn).  The bpf(2) calls of `status --json`, and those the agent makes
# serving each of 10 scrapes of /metrics (from reading the request to
# sending the response: its once-a-second tick, which a loaded machine
# stretches over more of the window, is not a scrape's cost), are counted
# with strace idle and then with 10000 tracked sockets open while
# connections churn.  Neither walks (no get_next_key); each costs the same
# but for the hazard lookups of why-not (agent/whynot.c): one per side of
# a service, made only for a connection seen without its socket storage
# (a churned one between its handshake and sock_ops, or closing), so at
# most two more for the one service here.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
command -v strace >/dev/null || skip "no strace"
cg_new CS srv
cg_new CC cli
port=19441
agent_start -c "$CS" -c "$CC" --metrics 127.0.0.1:$port

# bpf(2) calls of `status --json`: "CALLS WALKS" (a sanitized build's
# LeakSanitizer can't check its exit under ptrace: it reports a fatal
# error instead)
status_calls() {
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	strace -f -e trace=bpf -o "$TMP/strace.st" "$AGENT" status --json >/dev/null ||
		fail "status under strace failed"
	echo "$(grep -c 'bpf(' "$TMP/strace.st") $(grep -c 'BPF_MAP_GET_NEXT_KEY' "$TMP/strace.st")"
}
# The agent serving 10 scrapes: "SCRAPES MOST WALKS", the scrapes seen,
# the most bpf(2) calls one of them made, and the get_next_key among them.
# A scrape is served within one pass of the agent's single-threaded loop
# (agent/runtime_loop.c): from the recvfrom of its request to the
# sendmsg/sendto of its response.
metrics_calls() {
	strace -f -s 16 -e trace=bpf,recvfrom,sendmsg,sendto -o "$TMP/strace.ag" \
		-p "$AGENT_PID" &
	local tr=$!
	sleep 0.5
	for _ in $(seq 1 10); do
		curl -s "127.0.0.1:$port/metrics" >/dev/null || fail "scrape failed"
		sleep 0.2
	done
	kill -INT $tr
	wait $tr 2>/dev/null
	awk '/recvfrom\(.*"GET \/metrics/ { on = 1; n = 0; scrapes++; next }
	     on && /bpf\(/ { n++; if (/BPF_MAP_GET_NEXT_KEY/) walks++ }
	     on && /(sendmsg|sendto)\(.*"HTTP\/1/ { on = 0; if (n > most) most = n }
	     END { print scrapes + 0, most + 0, walks + 0 }' "$TMP/strace.ag"
}

read -r s_idle s_idle_walks <<<"$(status_calls)"
read -r m_idle_n m_idle m_idle_walks <<<"$(metrics_calls)"
log "idle: status ${s_idle} bpf calls; ${m_idle_n} scrapes, at most ${m_idle} each"
assert_eq "$m_idle_n" 10 "the agent served the 10 scrapes, idle"

# 5000 tracked pairs held open, and a churn of short connections meanwhile
# 10000 sockets and the churn's: as many descriptors as the hard limit
# allows (a root without CAP_SYS_RESOURCE can't raise it past that)
ulimit -n 30000 2>/dev/null || ulimit -n "$(ulimit -Hn)"
[ "$(ulimit -n)" = unlimited ] || [ "$(ulimit -n)" -ge 10100 ] ||
	skip "SKIP: 10000 sockets need 10100 open files; the hard limit is $(ulimit -Hn)"
python3 - "$CS" "$CC" "$TMP/held" <<'PY' &
import os, socket, sys, time
cs, cc, flag = sys.argv[1:4]
def enter(cg):
    open(cg + "/cgroup.procs", "w").write("0")
enter(cs)
ls = socket.create_server(("127.0.0.1", 0), backlog=4096)
enter(cc)
held = []
for _ in range(5000):
    c = socket.create_connection(ls.getsockname())
    s, _ = ls.accept()
    c.sendall(b"x")
    s.recv(1)
    held += [c, s]
open(flag, "w").close()
end = time.time() + 20
while time.time() < end and not os.path.exists(flag + ".stop"):
    c = socket.create_connection(ls.getsockname())
    s, _ = ls.accept()
    c.sendall(b"y"); s.recv(1); c.close(); s.close()
PY
holder=$!
on_exit "kill $holder"
for _ in $(seq 1 300); do [ -e "$TMP/held" ] && break; sleep 0.1; done
[ -e "$TMP/held" ] || fail "5000 pairs not made in 30 s"
st n sockets
assert_ge "$n" 10000 "10000 tracked sockets open"
read -r s_busy s_busy_walks <<<"$(status_calls)"
read -r m_busy_n m_busy m_busy_walks <<<"$(metrics_calls)"
log "10000 sockets, churning: status ${s_busy} bpf calls; ${m_busy_n} scrapes, at most ${m_busy} each"
touch "$TMP/held.stop"
assert_eq "$m_busy_n" 10 "the agent served the 10 scrapes, busy"
assert_eq "$((s_idle_walks + s_busy_walks))" 0 "status walks no map (get_next_key)"
assert_eq "$((m_idle_walks + m_busy_walks))" 0 "a scrape walks no map (get_next_key)"
assert_le "$s_busy" $((s_idle + 2)) "status makes the same bpf calls with 10000 sockets (but why-not's two)"
assert_le "$m_busy" $((m_idle + 2)) "a scrape makes the same bpf calls with 10000 sockets (but why-not's two)"

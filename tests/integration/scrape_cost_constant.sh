#!/usr/bin/env bash
# timeout: 120
# Proves: what a scrape costs does not grow with the number of sockets.
# status and /metrics read counters the data plane keeps (and gauges the
# agent publishes once a second), never a walk over the maps (get_next_key
# per entry: 10k sockets made each scrape 10k+ syscalls, restarted by
# churn).  The bpf(2) calls of `status --json`, and of the agent while it
# serves 10 scrapes of /metrics, are counted with strace idle and then with
# 10000 tracked sockets open while connections churn: status's counts
# match exactly, the agent's within what its own once-a-second tick adds.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
command -v strace >/dev/null || skip "no strace"
cg_new CS srv
cg_new CC cli
port=19441
agent_start -c "$CS" -c "$CC" --metrics 127.0.0.1:$port

# bpf(2) calls of `status --json` (a sanitized build's LeakSanitizer
# can't check its exit under ptrace: it reports a fatal error instead)
status_calls() {
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	strace -f -e trace=bpf -c -o "$TMP/strace.st" "$AGENT" status --json >/dev/null ||
		fail "status under strace failed"
	awk '$NF == "bpf" { print $4 }' "$TMP/strace.st"
}
# bpf(2) calls the agent makes serving 10 scrapes (over about 2 s, so two
# of its ticks fall in too: those are the same whatever the sockets), but
# for its writes: a walk is lookups and get_next_key, and the agent's
# writes grow with new connections, not with sockets (the nonce pool takes
# one BPF_MAP_UPDATE_ELEM for each nonce the churn used, agent/nonce_pool.c)
metrics_calls() {
	strace -f -e trace=bpf -o "$TMP/strace.ag" -p "$AGENT_PID" &
	local tr=$!
	sleep 0.5
	for _ in $(seq 1 10); do
		curl -s "127.0.0.1:$port/metrics" >/dev/null || fail "scrape failed"
		sleep 0.2
	done
	kill -INT $tr
	wait $tr 2>/dev/null
	log "agent's bpf writes meanwhile: $(grep -c 'bpf(BPF_MAP_UPDATE_ELEM' "$TMP/strace.ag")" >&2
	grep 'bpf(' "$TMP/strace.ag" | grep -vc 'bpf(BPF_MAP_UPDATE_ELEM'
}

s_idle=$(status_calls)
m_idle=$(metrics_calls)
log "idle: status ${s_idle} bpf calls, agent ${m_idle} for 10 scrapes"

# 5000 tracked pairs held open, and a churn of short connections meanwhile
ulimit -n 30000
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
s_busy=$(status_calls)
m_busy=$(metrics_calls)
log "10000 sockets, churning: status ${s_busy} bpf calls, agent ${m_busy} for 10 scrapes"
touch "$TMP/held.stop"
assert_eq "$s_busy" "$s_idle" "status makes the same bpf calls with 10000 sockets"
# the agent's own tick (addresses, gauges, iterators: a constant handful of
# calls a second) falls into the window more often on a loaded machine; a
# map walk would be 10 scrapes x 10000+ calls
assert_le "$m_busy" $((3 * m_idle + 50)) "the agent's scrapes cost about the same with 10000 sockets"

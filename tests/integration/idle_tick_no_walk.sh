#!/usr/bin/env bash
# timeout: 90
# Proves: the agent's once-a-second tick walks no map it need not.  An
# empty hash map still costs a walk of every bucket (get_next_key with no
# key, bpf_for_each_map_elem: kernel/bpf/hashtab.c), and sock_hash,
# reset_backlog and unread_watch have --max-sockets buckets: idle, the
# tick asked get_next_key of sock_hash (is it empty? the guard's idling)
# and of reset_backlog (anything the ring missed?), and ran the unread
# scan over unread_watch, then copied its 256 KiB result.  The data
# plane's counters answer these.  The agent's bpf(2) calls are counted
# with strace over a few ticks: idle; with a tracked pair open, nothing
# unread (the scan runs, its result is not copied); and after it closed.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
command -v strace >/dev/null || skip "no strace"
command -v bpftool >/dev/null || skip "no bpftool"
cg_new CS srv
cg_new CC cli
# watch: the unread scan this test looks at (iter/sockmap is another);
# tracepoint hooks: the guard idles (and asks if sock_hash is empty) only
# with these, and not before 300 s
agent_start -c "$CS" -c "$CC" --unread-scan watch --guard-hooks tracepoints \
	--guard-idle 300

# the agent's fd of the map named $1 (/proc/PID/fdinfo: map_id)
map_fd() {
	local f id
	for f in /proc/"$AGENT_PID"/fdinfo/*; do
		id=$(awk '$1 == "map_id:" { print $2 }' "$f" 2>/dev/null)
		[ -n "$id" ] || continue
		bpftool map show id "$id" 2>/dev/null | grep -q " name $1 " &&
			{ echo "${f##*/}"; return 0; }
	done
	fail "the agent has no map named $1 open"
}
SH=$(map_fd sock_hash)
BL=$(map_fd reset_backlog)
OUT=$(map_fd unread_scan_out)

# trace NAME: the agent's bpf(2) calls over 3.5 s (three ticks or four)
trace() {
	strace -f -e trace=bpf -o "$TMP/$1.st" -p "$AGENT_PID" &
	local tr=$!
	sleep 3.5
	kill -INT $tr
	wait $tr 2>/dev/null
}
# calls TRACE CMD [FD]: how many bpf(CMD, ...) calls, on map fd FD if named
calls() {
	if [ -n "${3:-}" ]; then
		grep -c "bpf($2, {map_fd=$3," "$TMP/$1.st"
	else
		grep -c "bpf($2," "$TMP/$1.st"
	fi
}
# the tick ran in the window: it writes the gauges' heartbeat each time
ticked() {
	assert_ge "$(calls "$1" BPF_MAP_UPDATE_ELEM)" 3 "$1: the agent ticked (bpf writes)"
}

trace idle
ticked idle
log "idle: $(grep -c 'bpf(' "$TMP/idle.st") bpf calls in 3.5 s"
assert_eq "$(calls idle BPF_MAP_GET_NEXT_KEY "$SH")" 0 "idle: no walk of sock_hash"
assert_eq "$(calls idle BPF_MAP_GET_NEXT_KEY "$BL")" 0 "idle: no walk of reset_backlog"
assert_eq "$(calls idle BPF_MAP_GET_NEXT_KEY)" 0 "idle: no map walked at all"
assert_eq "$(calls idle BPF_PROG_TEST_RUN)" 0 "idle: no unread scan (unread_watch empty)"
assert_eq "$(calls idle BPF_MAP_LOOKUP_ELEM "$OUT")" 0 "idle: unread_scan_out not copied"

# one tracked pair, held open, every byte read
python3 - "$CS" "$CC" "$TMP/held" <<'PY' &
import os, socket, sys, time
cs, cc, flag = sys.argv[1:4]
def enter(cg):
    open(cg + "/cgroup.procs", "w").write("0")
enter(cs)
ls = socket.create_server(("127.0.0.1", 0))
enter(cc)
c = socket.create_connection(ls.getsockname())
s, _ = ls.accept()
c.sendall(b"ping"); assert s.recv(4) == b"ping"
s.sendall(b"pong"); assert c.recv(4) == b"pong"
open(flag, "w").close()
end = time.time() + 30
while time.time() < end and not os.path.exists(flag + ".stop"):
    time.sleep(0.1)
PY
holder=$!
on_exit "kill $holder 2>/dev/null"
wait_file "$TMP/held" "the tracked pair"
st n sockets
assert_eq "$n" 2 "the pair is tracked"
sleep 1.2 # a tick sees the new socket
trace held
ticked held
assert_ge "$(calls held BPF_PROG_TEST_RUN)" 3 "held: the unread scan runs each tick"
assert_eq "$(calls held BPF_MAP_LOOKUP_ELEM "$OUT")" 0 \
	"held: nothing unread, unread_scan_out not copied"
assert_eq "$(calls held BPF_MAP_GET_NEXT_KEY "$SH")" 0 "held: no walk of sock_hash"
assert_eq "$(calls held BPF_MAP_GET_NEXT_KEY "$BL")" 0 "held: no walk of reset_backlog"

touch "$TMP/held.stop"
wait $holder
st_until n sockets 0 5
assert_eq "$n" 0 "the pair left sock_hash"
sleep 2.2 # a scan finds unread_watch empty again
trace closed
ticked closed
assert_eq "$(calls closed BPF_PROG_TEST_RUN)" 0 "closed: the unread scan stops again"
ok "the idle tick walks no map"

#!/usr/bin/env bash
# timeout: 90
# Proves: a reader that stops reading never loses or reorders a byte, and,
# where the kernel self-test says falling back is safe (fionread_tcp), gets
# TCP back-pressure instead of unbounded kernel memory.  A tracked server
# accepts and never reads; a tracked client sends non-blocking until the
# kernel pushes back (or 20 s / 64 MB).  With the bound, the direction falls
# back (fallbacks.slow_reader) and the client stalls at about the TCP
# buffers.  Where the self-test disabled it (6.18: FIONREAD of a sockmap
# socket ignores TCP bytes, so a fallback would hang nginx), the agent must
# say so in status and nothing falls back.
. "$(dirname "$0")/../lib/common.sh"

cg=$(cg_make slow)
agent_start -c "$cg"
port=19311
cat >"$TMP/slow.py" <<'PY'
import os, select, socket, sys, time
mode, port = sys.argv[1], int(sys.argv[2])
pattern = bytes((i * 7 + 3) & 0xff for i in range(65536))
if mode == "server":
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port)); s.listen(1)
    open(sys.argv[3], "w").close()
    c, _ = s.accept()
    # wait until the client says it is stalled, without reading a byte
    while not os.path.exists(sys.argv[4]): time.sleep(0.05)
    c.setblocking(False)
    got, off, bad = 0, 0, -1
    deadline = time.time() + 30
    while time.time() < deadline:
        select.select([c], [], [], 1)
        try: d = c.recv(1 << 20)
        except BlockingIOError: continue   # tcp_bpf spurious EAGAIN is legal here
        if not d: break
        for i in range(0, len(d), 65536):
            chunk = d[i:i + 65536]; o = (off + i) % 65536
            exp = (pattern + pattern)[o:o + len(chunk)]
            if chunk != exp and bad < 0:
                bad = off + i + next(j for j in range(len(chunk)) if chunk[j] != exp[j])
        off += len(d); got += len(d)
    print(f"server got={got} first_bad={bad}")
else:
    c = socket.create_connection(("127.0.0.1", port)); c.setblocking(False)
    sent, stall_since, cap = 0, None, 64 << 20
    deadline = time.time() + 20
    while sent < cap and time.time() < deadline:
        o = sent % 65536
        try:
            n = c.send((pattern + pattern)[o:o + 65536]); sent += n; stall_since = None
        except BlockingIOError:
            stall_since = stall_since or time.time()
            if time.time() - stall_since > 1.0: break
            select.select([], [c], [], 0.2)
    print(f"client sent={sent}", flush=True)
    open(sys.argv[3], "w").close()
    c.setblocking(True); c.sendall(b""); c.shutdown(socket.SHUT_WR)
    time.sleep(0.2)
PY
cg_exec "$cg" python3 "$TMP/slow.py" server $port "$TMP/listening" "$TMP/stalled" >"$TMP/server.out" &
spid=$!
for _ in $(seq 50); do [ -e "$TMP/listening" ] && break; sleep 0.1; done
cg_exec "$cg" python3 "$TMP/slow.py" client $port "$TMP/stalled" >"$TMP/client.out" ||
	fail "client failed"
wait $spid
cat "$TMP/client.out" "$TMP/server.out"
sent=$(sed -n 's/client sent=//p' "$TMP/client.out")
got=$(sed -n 's/server got=\([0-9]*\).*/\1/p' "$TMP/server.out")
bad=$(sed -n 's/.*first_bad=//p' "$TMP/server.out")
assert_ge "$(stat_get pairs)" 1 "client and server paired"
assert_eq "$got" "$sent" "reader got every byte"
assert_eq "$bad" "-1" "every byte in order and intact"
bound=$(stat_get selftest.checks.slow_reader_bound.result)
log "slow-reader bound: $bound ($(stat_get selftest.checks.slow_reader_bound.detail))"
log "client queued $sent bytes before stalling"
if [ "$bound" = pass ]; then
	assert_ge "$(stat_get fallbacks.slow_reader)" 1 "stalled reader sent the direction to TCP"
	# redirected (<= the reader's sk_rcvbuf plus one message) + TCP
	# receive window + the client's send buffer
	rmem_max=$(awk '{print $3}' /proc/sys/net/ipv4/tcp_rmem)
	wmem_max=$(awk '{print $3}' /proc/sys/net/ipv4/tcp_wmem)
	limit=$((rmem_max + wmem_max + 2 * 4194304))
	assert_le "$sent" "$limit" "bytes queued to a stalled reader are bounded"
else
	assert_eq "$(stat_get fallbacks.slow_reader)" 0 "bound disabled: no live pair fell back"
	"$AGENT" status | grep -q "slow_reader_bound.*disabled" ||
		fail "status does not say the bound is disabled"
	ok "status says why the bound is off on this kernel"
fi

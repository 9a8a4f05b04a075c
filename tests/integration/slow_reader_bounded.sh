#!/usr/bin/env bash
# timeout: 90
# Proves: a reader that stops reading gets TCP back-pressure instead of
# unbounded kernel memory.  A server (tracked) accepts and never reads; a
# tracked client sends non-blocking until the kernel pushes back.  Without
# the bound, redirected bytes are charged only against the global tcp_mem
# and the client could queue tens of MB.  With it, the direction falls back
# to TCP (fallbacks.slow_reader) and the client stalls at roughly the TCP
# buffers; then the server reads everything and every byte must be right.
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
assert_ge "$(stat_get fallbacks.slow_reader)" 1 "stalled reader sent the direction to TCP"
# What the client could queue: redirected (<= the reader's sk_rcvbuf plus one
# message) + TCP receive window + the client's send buffer.  Far below the
# 64 MB cap the naive version reaches.
rmem_max=$(awk '{print $3}' /proc/sys/net/ipv4/tcp_rmem)
wmem_max=$(awk '{print $3}' /proc/sys/net/ipv4/tcp_wmem)
limit=$((rmem_max + wmem_max + 2 * 4194304))
log "client queued $sent bytes before stalling (limit $limit)"
assert_le "$sent" "$limit" "bytes queued to a stalled reader are bounded"
assert_eq "$got" "$sent" "reader got every byte"
assert_eq "$bad" "-1" "every byte in order and intact"

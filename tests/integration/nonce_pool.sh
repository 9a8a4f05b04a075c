# timeout: 60
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: the pairing nonce comes from the agent's pool of getrandom(2)
# nonces, and an empty pool means no pairing, not a weak nonce.  With the
# agent stopped (SIGSTOP: nothing refills), the pool (nonce_pool) is
# emptied with bpftool and one nonce put back, marked for a wake-up: the
# next connection pairs, and its final ACK carries exactly that nonce
# without the mark (tcpdump of the option on lo); the one after falls back
# to TCP, counted as fallbacks{no_nonce}, its bytes intact.  Continued, the
# agent (woken, or at its tick) fills the pool again and connections pair.
. "$(dirname "$0")/../lib/common.sh"
command -v tcpdump >/dev/null || skip "tcpdump missing (make deps)"
cg=$(cg_make nonce)
agent_start -c "$cg"

pool_id=$(bpftool -j map show | python3 -c '
import json, sys
ids = [m["id"] for m in json.load(sys.stdin) if m.get("name") == "nonce_pool"]
print(max(ids) if ids else "")')
[ -n "$pool_id" ] || fail "no nonce_pool map"
# the agent's own: the newest (the self-test's private one is gone)
ok "the agent's nonce_pool is map $pool_id"

# conn.py: one tracked connection through 127.0.0.1, 64 KiB each way,
# checked; prints the client's port and ok (or BAD)
cat >"$TMP/conn.py" <<'PY'
import os, socket, sys, threading
ls = socket.socket()
ls.bind(("127.0.0.1", 0))
ls.listen(1)
data = os.urandom(65536)
res = {}
def recv_all(s, n):
    got = b""
    while len(got) < n:
        b = s.recv(65536)
        if not b:
            break
        got += b
    return got
# the server speaks first (as PostgreSQL's and SMTP's do): the passive end
# has claimed the active one before the active end's first packet in, so
# the claim race can't send this connection to TCP (claim_race_stress.sh
# is about that race)
def serve():
    s, _ = ls.accept()
    s.settimeout(10)
    s.sendall(data)
    res["back"] = recv_all(s, len(data))
    s.close()
t = threading.Thread(target=serve)
t.start()
c = socket.create_connection(ls.getsockname())
c.settimeout(10)
c.sendall(recv_all(c, len(data)))
t.join()
print(c.getsockname()[1], "ok" if res.get("back") == data else "BAD")
PY
conn() { cg_exec "$cg" timeout 20 python3 "$TMP/conn.py"; }

# the guard arms at the first tracked connection (the agent does that):
# one before the agent is stopped
read -r _ r0 < <(conn)
assert_eq "$r0" ok "a first connection: bytes exact"
for _ in $(seq 1 50); do [ "$(stat_get guards_armed)" = True ] && break; sleep 0.1; done
assert_eq "$(stat_get guards_armed)" True "the guard is armed"

kill -STOP "$AGENT_PID"
on_exit "kill -CONT $AGENT_PID"
# one bpftool for all (a process each takes minutes): its batch stops at
# the first dequeue that finds the queue empty
yes "map dequeue id $pool_id" | head -n 40000 >"$TMP/drain.batch"
bpftool batch file "$TMP/drain.batch" 2>/dev/null | grep -c '^value:' >"$TMP/drained"
n=$(cat "$TMP/drained")
log "emptied the pool: $n nonces"
assert_ge "$n" 1 "the agent had filled the pool"
bpftool map peek id "$pool_id" >/dev/null 2>&1 && fail "the pool is not empty after $n dequeues"
# the nonce to find on the wire (new_nonce sets the top bit, clears bit 0):
# with bit 0 set, the agent's wake-up mark (NONCE_WAKE_MARK), which must
# not reach the wire
bpftool map enqueue id "$pool_id" value hex 11 32 54 76 98 ba dc 7e ||
	fail "putting one nonce back"
tcpdump -i lo -n -s 128 -w "$TMP/lo.pcap" 'tcp[tcpflags] & tcp-ack != 0 and tcp[tcpflags] & (tcp-syn|tcp-fin|tcp-rst) == 0 and tcp[12] & 0xf0 > 0x50' \
	>/dev/null 2>&1 &
td=$!
on_exit "kill $td 2>/dev/null"
sleep 1

st p0 pairs
st f0 fallbacks.no_nonce
read -r port1 r1 < <(conn)
assert_eq "$r1" ok "first connection: bytes exact"
st p1 pairs
assert_eq $((p1 - p0)) 1 "the connection given the one nonce paired"
read -r port2 r2 < <(conn)
assert_eq "$r2" ok "second connection, pool empty: bytes exact"
st p2 pairs
st f1 fallbacks.no_nonce
assert_eq $((p2 - p1)) 0 "with the pool empty, no pairing"
assert_eq $((f1 - f0)) 1 "counted as fallbacks{no_nonce}"
sleep 0.5
kill $td; wait $td 2>/dev/null
# the experimental option (kind 254, ExID 0x4e53) on the first client's
# final ACK carries the nonce put back, top bit set and mark cleared
tcpdump -r "$TMP/lo.pcap" -n -x "src port $port1" 2>/dev/null | tr -d ' \n' >"$TMP/hex"
grep -q 'fe0c4e53fedcba9876543210' "$TMP/hex" ||
	fail "no final ACK of port $port1 with the nonce that was put back: $(head -c 400 "$TMP/hex")"
ok "the first connection's final ACK carries the nonce taken from the pool"

kill -CONT "$AGENT_PID"
for _ in $(seq 1 30); do
	read -r port3 r3 < <(conn)
	st p3 pairs
	[ $((p3 - p2)) -ge 1 ] && break
	sleep 0.2
done
assert_eq "$r3" ok "after SIGCONT: bytes exact"
assert_ge $((p3 - p2)) 1 "after SIGCONT the agent refilled the pool: connections pair"
agent_stop || fail "agent did not exit 0"

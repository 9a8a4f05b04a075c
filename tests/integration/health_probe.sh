# timeout: 150
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: the agent's liveness can't be taken away by clients of /metrics,
# and a stuck agent loop is seen.  One client holding 64 idle connections
# to the metrics server (its every slot, before the per-client share)
# gets 4 of them; a scrape and /healthz from another address are still
# answered, and `ngx-sockmap health` (the manifests' exec probes, which
# use no slot) says ok.  8 addresses sending a byte every 2 s on 8
# connections each (which took every slot, issue 37) leave /healthz
# answered and are all ended within 30 s; 16 addresses on 4 each, taking
# every slot and reconnecting as they are ended, delay /healthz by at
# most a request's 20 s.  The agent stopped (SIGSTOP) past --max-age:
# health says its loop is stuck and exits 1; continued, ok again.
. "$(dirname "$0")/../lib/common.sh"
cg=$(cg_make health)
# below the ephemeral range (32768-60999): no client socket holds it
port=$((20000 + RANDOM % 12000))
agent_start -c "$cg" --metrics 127.0.0.1:$port
wait_port 127.0.0.1 $port

out=$("$AGENT" health) || fail "health on a running agent: $out"
[[ $out == "ok: agent pid $AGENT_PID ticked "* ]] || fail "health said: $out"
ok "health: $out"

# hold.py PORT N READY: N idle connections from 127.0.0.1, kept open until
# killed; READY gets how many the server has not closed after 1 s
cat >"$TMP/hold.py" <<'PY'
import socket, sys, time
port, n, ready = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
held = []
for _ in range(n):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.connect(("127.0.0.1", port))
    held.append(s)
time.sleep(1)
alive = 0
for s in held:
    s.setblocking(False)
    try:
        alive += s.recv(1) != b""  # data: unexpected, but open
    except BlockingIOError:
        alive += 1                 # nothing yet: open
    except OSError:
        pass
open(ready, "w").write("%d\n" % alive)
time.sleep(60)
PY
python3 "$TMP/hold.py" $port 64 "$TMP/held" &
hold=$!
on_exit "kill $hold"
for _ in $(seq 1 50); do [ -s "$TMP/held" ] && break; sleep 0.1; done
[ -s "$TMP/held" ] || fail "the 64 idle connections were not made"
assert_le "$(cat "$TMP/held")" 4 "one address keeps at most 4 of its 64 idle connections"
code=$(curl -s --interface 127.0.0.2 --max-time 3 -o /dev/null -w '%{http_code}' \
	"http://127.0.0.1:$port/healthz")
assert_eq "$code" 200 "/healthz from another address answered while the idle client holds its share"
curl -s --interface 127.0.0.3 --max-time 3 "http://127.0.0.1:$port/metrics" | grep -q '^ngx_sockmap_sockets ' ||
	fail "a scrape from another address got no metrics"
ok "a scrape from another address answered"
out=$("$AGENT" health) || fail "health while /metrics is held: $out"
ok "health while /metrics is held: $out"
kill $hold

# Many addresses, each sending slowly: 127.0.0.10-17 open 8 connections
# each (the 64 slots of 8 per address before) and send one byte of an
# endless header every 2 s, under the 10 s idle timeout.  /healthz from
# another address must still be answered, the health command too, and the
# server must end every trickling connection: a slow client can't keep a
# slot however often it sends.
# trickle.py PORT DIR N AGAIN ADDR...: N connections from each ADDR;
# DIR/held gets how many the server left open after the first bytes,
# DIR/open how many are open now (rewritten every round), DIR/ended how
# many the server ended so far; AGAIN=1: from then on each one ended is
# opened again at once (a client that wants its slots back).  Exits
# after 80 s.
cat >"$TMP/trickle.py" <<'PY'
import os, socket, sys, time
port, d, n, again = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
msg = b"GET /metrics HTTP/1.1\r\nX-Slow: " + b"a" * 4096
def put(name, v):
    open(d + "/." + name, "w").write("%d\n" % v)
    os.rename(d + "/." + name, d + "/" + name)
def conn(a):
    s = socket.socket()
    s.bind((a, 0))
    s.connect(("127.0.0.1", port))
    s.setblocking(False)
    return {"s": s, "addr": a, "sent": 0}
def gone(c):  # ended by the server? (b"" or an error; data: an answer)
    try:
        c["s"].recv(1)
        return True
    except BlockingIOError:
        pass
    except OSError:
        return True
    try:
        c["sent"] += c["s"].send(msg[c["sent"]:c["sent"] + 1])
        return False
    except OSError:
        return True
def sweep(reopen):
    global ended
    for c in [c for c in conns if gone(c)]:
        conns.remove(c)
        c["s"].close()
        ended += 1
        if reopen:
            conns.append(conn(c["addr"]))
    put("open", len(conns))
    put("ended", ended)
conns, ended = [conn(a) for a in sys.argv[5:] for _ in range(n)], 0
sweep(False)  # the first byte
time.sleep(1)
sweep(False)
put("held", len(conns))
end = time.time() + 80
while time.time() < end:
    time.sleep(2)
    sweep(again)
PY
mkdir "$TMP/tr"
python3 "$TMP/trickle.py" $port "$TMP/tr" 8 0 $(seq -f 127.0.0.%g 10 17) &
trickle=$!
on_exit "kill $trickle"
for _ in $(seq 1 50); do [ -s "$TMP/tr/held" ] && break; sleep 0.1; done
[ -s "$TMP/tr/held" ] || fail "the trickling connections were not made"
log "8 addresses x 8 trickling connections: $(cat "$TMP/tr/held") held by the server"
code=$(curl -s --interface 127.0.0.2 --max-time 3 -o /dev/null -w '%{http_code}' \
	"http://127.0.0.1:$port/healthz")
assert_eq "$code" 200 "/healthz answered while 8 addresses trickle on every connection they may hold"
out=$(timeout 5 "$AGENT" health) || fail "health while 8 addresses trickle: $out"
ok "health while 8 addresses trickle: $out"
# each connection has METRICS_REQUEST_SEC (20 s) per request
for _ in $(seq 1 30); do [ "$(cat "$TMP/tr/open")" = 0 ] && break; sleep 1; done
assert_eq "$(cat "$TMP/tr/open")" 0 "the server ended every trickling connection within 30 s"
kill $trickle

# Every slot taken: 127.0.0.20-35, 4 connections each, and each one the
# server ends opened again at once.  A client waiting meanwhile is served
# when a slot frees (MHD takes the kernel's backlog in order), within a
# request's 20 s; the health command answers at once.
mkdir "$TMP/tr2"
python3 "$TMP/trickle.py" $port "$TMP/tr2" 4 1 $(seq -f 127.0.0.%g 20 35) &
trickle=$!
on_exit "kill $trickle"
for _ in $(seq 1 50); do [ -s "$TMP/tr2/held" ] && break; sleep 0.1; done
assert_eq "$(cat "$TMP/tr2/held" 2>/dev/null)" 64 "16 addresses x 4 trickling connections hold every slot"
out=$(timeout 5 "$AGENT" health) || fail "health while every slot is held: $out"
ok "health while every slot is held: $out"
out=$(curl -s --interface 127.0.0.2 --max-time 30 -o /dev/null -w '%{http_code} %{time_total}' \
	"http://127.0.0.1:$port/healthz")
log "/healthz while every slot is held: ${out#* } s"
assert_eq "${out%% *}" 200 "/healthz answered within 30 s while 16 addresses hold every slot and take each back"
kill $trickle

kill -STOP "$AGENT_PID"
on_exit "kill -CONT $AGENT_PID"
sleep 3
out=$("$AGENT" health --max-age 2) && fail "health on a stopped agent said: $out"
[[ $out == *"its loop is stuck"* ]] || fail "health on a stopped agent said: $out"
ok "health on a stopped agent: $out"
kill -CONT "$AGENT_PID"
for _ in $(seq 1 30); do out=$("$AGENT" health --max-age 2) && break; sleep 0.2; done
[[ $out == ok:* ]] || fail "health after SIGCONT: $out"
ok "health after SIGCONT: $out"

out=$("$AGENT" health --max-age 0 2>&1) && fail "--max-age 0 accepted"
[[ $out == *"--max-age"* ]] || fail "--max-age 0: $out"
ok "--max-age 0 refused: $out"
agent_stop || fail "agent did not exit 0"
out=$("$AGENT" health) && fail "health with no agent said: $out"
ok "health with no agent exits 1: $out"

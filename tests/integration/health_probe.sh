# timeout: 90
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: the agent's liveness can't be taken away by clients of /metrics,
# and a stuck agent loop is seen.  One client holding 64 idle connections
# to the metrics server (its every slot, before the per-client share)
# gets 8 of them; a scrape and /healthz from another address are still
# answered, and `ngx-sockmap health` (the manifests' exec probe, which
# uses no slot) says ok.  The agent stopped (SIGSTOP) past --max-age:
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
assert_le "$(cat "$TMP/held")" 8 "one address keeps at most 8 of its 64 idle connections"
code=$(curl -s --interface 127.0.0.2 --max-time 3 -o /dev/null -w '%{http_code}' \
	"http://127.0.0.1:$port/healthz")
assert_eq "$code" 200 "/healthz from another address answered while the idle client holds its share"
curl -s --interface 127.0.0.3 --max-time 3 "http://127.0.0.1:$port/metrics" | grep -q '^ngx_sockmap_sockets ' ||
	fail "a scrape from another address got no metrics"
ok "a scrape from another address answered"
out=$("$AGENT" health) || fail "health while /metrics is held: $out"
ok "health while /metrics is held: $out"
kill $hold

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

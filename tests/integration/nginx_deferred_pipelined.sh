# timeout: 240
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: with the proxy listening with `deferred` (TCP_DEFER_ACCEPT: the
# server end is established only when the client's first bytes arrive) and
# clients that write several pipelined HTTP/1.1 requests right after
# connect, one write per request, every one of 500 connections (twice: 50
# and 250 at a time) gets exactly its responses, complete and in order, and
# nothing more.  Each body names its URL, so a reordered, lost or
# duplicated byte range is caught.  The client is first checked against the
# same setup without the agent, and the counters must show redirects.
. "$(dirname "$0")/../lib/common.sh"


PORT_UP=18190 PORT_PX=18191 PORT_BASE=18192
NCONN=500 NREQ=4
DIAG_PORTS="$PORT_UP $PORT_PX"

cat >"$TMP/pipeline.py" <<'EOF'
# gen DIR NCONN NREQ            write the bodies the upstream serves
# run PORT NCONN NREQ PARALLEL  NCONN connections, NREQ pipelined requests
#                               each; print "wrong N of M"; exit 1 if N > 0
import socket, sys, threading, concurrent.futures as cf
from httpresp import read_response

SIZES = [0, 17, 700, 4096, 9000, 33000, 70001]

def body(i, j):
    tag = b"/d/%d-%d" % (i, j)
    n = SIZES[(i * 3 + j) % len(SIZES)]
    line = tag + b" "
    return tag + b"\n" + (line * (n // len(line) + 1))[:n]


def one(port, i, nreq):
    s = socket.create_connection(("127.0.0.1", port), timeout=20)
    try:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for j in range(nreq):
            last = j == nreq - 1
            s.sendall(b"GET /d/%d-%d HTTP/1.1\r\nHost: t\r\n%s\r\n" %
                      (i, j, b"Connection: close\r\n" if last else b""))
        buf = bytearray()
        for j in range(nreq):
            status, b = read_response(s, buf)
            if not status.startswith("HTTP/1.1 200"):
                return "conn %d req %d: status %r" % (i, j, status)
            want = body(i, j)
            if b != want:
                return ("conn %d req %d: body of %d bytes starts %r, "
                        "want %d bytes starting %r" %
                        (i, j, len(b), b[:24], len(want), want[:24]))
        try:
            while True:
                d = s.recv(65536)
                if not d:
                    break
                buf += d
        except OSError:
            pass
        if buf:
            return "conn %d: %d bytes after the last response: %r" % (
                i, len(buf), bytes(buf[:40]))
        return None
    except Exception as e:
        return "conn %d: %s: %s" % (i, type(e).__name__, e)
    finally:
        s.close()

def main():
    if sys.argv[1] == "gen":
        d, nconn, nreq = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
        for i in range(nconn):
            for j in range(nreq):
                with open("%s/%d-%d" % (d, i, j), "wb") as f:
                    f.write(body(i, j))
        return 0
    port, nconn, nreq, par = map(int, sys.argv[2:6])
    with cf.ThreadPoolExecutor(max_workers=par) as ex:
        errs = [e for e in ex.map(lambda i: one(port, i, nreq), range(nconn)) if e]
    for e in errs[:8]:
        print("  " + e)
    print("wrong %d of %d" % (len(errs), nconn))
    return 1 if errs else 0

sys.exit(main())
EOF

U=$(cg_make up) || fail "$U"
P=$(cg_make px) || fail "$P"
C=$(cg_make cl) || fail "$C"

mkdir -p "$TMP/nginx-up/html/d"
PYTHONPATH="$TOP/tests/lib" python3 "$TMP/pipeline.py" gen "$TMP/nginx-up/html/d" $NCONN $NREQ || fail "making bodies"
nginx_start up upstream.conf "$U" LISTEN=127.0.0.1:$PORT_UP SENDFILE=on >/dev/null
wait_port 127.0.0.1 $PORT_UP

# The client checked without the agent, on a proxy of its own so the
# accelerated proxy's upstream connections are all made under the agent.
base=$TMP/nginx-base
nginx_start base proxy.conf "$P" LISTEN="127.0.0.1:$PORT_BASE deferred" \
	UPSTREAM=127.0.0.1:$PORT_UP >/dev/null
wait_port 127.0.0.1 $PORT_BASE
cg_exec "$C" env PYTHONPATH="$TOP/tests/lib" python3 "$TMP/pipeline.py" run $PORT_BASE 100 $NREQ 50 ||
	fail "without the agent the client already sees wrong responses (test bug?)"
ok "client sees right responses without the agent"
nginx_stop "$base"

nginx_start px proxy.conf "$P" LISTEN="127.0.0.1:$PORT_PX deferred" \
	UPSTREAM=127.0.0.1:$PORT_UP >/dev/null
wait_port 127.0.0.1 $PORT_PX
grep -q "listen 127.0.0.1:$PORT_PX deferred;" "$TMP/nginx-px/nginx.conf" ||
	fail "proxy config does not listen with deferred"

agent_start -c "$P" -c "$U" -c "$C"
st msgs0 redirected_msgs
st pairs0 pairs

for par in 50 250; do
	out=$(cg_exec "$C" env PYTHONPATH="$TOP/tests/lib" python3 "$TMP/pipeline.py" run $PORT_PX $NCONN $NREQ $par 2>&1)
	rc=$?
	echo "$out"
	[ $rc = 0 ] || fail_diag "$NCONN connections x $NREQ pipelined requests," \
		"$par at a time: $(echo "$out" | tail -n 1)"
	ok "$NCONN connections x $NREQ pipelined requests, $par at a time: 0 wrong"
done

st msgs1 redirected_msgs
st pairs1 pairs
log "pairs $pairs0 -> $pairs1, redirected_msgs $msgs0 -> $msgs1"
log "fallbacks: $("$AGENT" status --json | python3 -c \
	'import json,sys; print(json.load(sys.stdin)["fallbacks"])')"
# With `deferred` the client's first request leaves before the server end
# is established, so that connection must stay plain TCP for good (both
# ends untracked: docs/DESIGN.md).  Every client connection is a no_peer
# fallback; proxy -> upstream connections still pair and redirect.
nopeer=$(stat_get fallbacks.no_peer)
assert_ge "$nopeer" $NCONN "deferred client connections left to TCP (no_peer)"
assert_ge $((pairs1 - pairs0)) 1 "proxy -> upstream connections paired"
assert_ge $((msgs1 - msgs0)) $NCONN "redirected_msgs moved (upstream side)"

agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent exited cleanly"

# timeout: 150
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: `ngx-sockmap pause` stops accelerating new connections: while
# paused, no new socket is tracked (sockets_total does not move,
# fallbacks.paused grows, `paused` reads true) and a new connection moves
# its body through TCP, while a keep-alive connection paired before the
# pause stays redirected (moving a live pair to TCP would hang nginx on this
# kernel: docs/DESIGN.md); every body arrives byte-exact.  `ngx-sockmap
# resume` makes new connections redirected again (counters move, and the
# client's own tcpi_bytes_received shows the body bypassed TCP) while the
# connections made during the pause keep answering byte-exact on TCP.
. "$(dirname "$0")/../lib/common.sh"

st() { # st VAR FIELD: a numeric field of `ngx-sockmap status --json` into VAR
	local v
	v=$(stat_get "$2" 2>"$TMP/st.err")
	[[ $v =~ ^[0-9]+$ ]] ||
		fail "status --json field $2: got '$v' $(head -c 200 "$TMP/st.err")"
	printf -v "$1" '%s' "$v"
}
# diag: queues of this test's connections and the agent's view, printed
# before a FAIL about traffic (DIAG_PORTS: this test's nginx ports)
diag() {
	local p f=
	for p in $DIAG_PORTS; do f="$f${f:+ or }sport = :$p or dport = :$p"; done
	echo "# ss -tni:"
	ss -tni "( $f )" 2>&1 | head -40 | sed 's/^/#   /'
	echo "# ngx-sockmap status:"
	"$AGENT" status 2>&1 | sed 's/^/#   /'
}
fail_diag() { diag; fail "$@"; }

# A keep-alive HTTP client in cgroup C, driven line by line (bash coproc):
# several named connections that live as long as the test needs them.
cat >"$TMP/ka.py" <<'EOF'
# ka.py PORT DOCROOT; commands on stdin, one answer line each:
#   open NAME       connect to 127.0.0.1:PORT        -> ok LOCALPORT
#   get NAME PATH   GET PATH on connection NAME       -> ok BODYLEN | FAIL why
#                   (body must equal the file DOCROOT/PATH, nothing extra)
#   rcvd NAME       tcpi_bytes_received of NAME       -> ok N
#   close NAME
import socket, struct, sys

port, root = int(sys.argv[1]), sys.argv[2]
conns = {}

def recv_more(s, buf, why):
    d = s.recv(262144)
    if not d:
        raise EOFError("connection closed " + why)
    buf += d

def read_response(s, buf):
    while True:
        k = buf.find(b"\r\n\r\n")
        if k >= 0:
            break
        recv_more(s, buf, "in headers")
    head = bytes(buf[:k]).split(b"\r\n")
    del buf[:k + 4]
    hdr = {}
    for h in head[1:]:
        name, _, v = h.partition(b":")
        hdr[name.strip().lower()] = v.strip()
    n = int(hdr[b"content-length"])
    while len(buf) < n:
        recv_more(s, buf, "in body (%d of %d bytes)" % (len(buf), n))
    body = bytes(buf[:n])
    del buf[:n]
    return head[0].decode(errors="replace"), body

def get(name, path):
    s, buf = conns[name]
    s.sendall(b"GET %s HTTP/1.1\r\nHost: t\r\n\r\n" % path.encode())
    status, body = read_response(s, buf)
    with open(root + path, "rb") as f:
        want = f.read()
    if not status.startswith("HTTP/1.1 200"):
        return "FAIL status %r" % status
    if body != want:
        at = next((i for i in range(min(len(body), len(want)))
                   if body[i] != want[i]), min(len(body), len(want)))
        return "FAIL body of %d bytes, want %d; first difference at byte %d" % (
            len(body), len(want), at)
    s.setblocking(False)
    try:
        extra = s.recv(65536)
    except BlockingIOError:
        extra = b""
    s.setblocking(True)
    s.settimeout(20)
    if buf or extra:
        return "FAIL %d bytes after the response" % (len(buf) + len(extra))
    return "ok %d" % len(body)

for line in sys.stdin:
    a = line.split()
    try:
        if a[0] == "open":
            s = socket.create_connection(("127.0.0.1", port), timeout=20)
            conns[a[1]] = (s, bytearray())
            r = "ok %d" % s.getsockname()[1]
        elif a[0] == "get":
            r = get(a[1], a[2])
        elif a[0] == "rcvd":
            ti = conns[a[1]][0].getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 256)
            r = "ok %d" % struct.unpack_from("<Q", ti, 128)[0]
        elif a[0] == "close":
            conns.pop(a[1])[0].close()
            r = "ok"
        else:
            r = "FAIL unknown command"
    except Exception as e:
        r = "FAIL %s: %s" % (type(e).__name__, e)
    print(r, flush=True)
EOF
# ka_start PORT DOCROOT: start the client in cgroup $C
ka_start() {
	coproc KA { cg_exec "$C" python3 "$TMP/ka.py" "$1" "$2"; }
	on_exit "kill $KA_PID"
}
# ka CMD ARGS...: one command; answer in KA_REPLY; status 0 on "ok"
ka() {
	echo "$*" >&"${KA[1]}" || fail "keep-alive client gone (command: $*)"
	IFS= read -r -t 60 KA_REPLY <&"${KA[0]}" || fail "keep-alive client: no answer to '$*'"
	[[ $KA_REPLY == ok* ]]
}
# ka_get NAME PATH LABEL: byte-exact GET on keep-alive connection NAME
ka_get() {
	ka get "$1" "$2" || fail_diag "$3: GET $2 on keep-alive connection $1: $KA_REPLY"
	ok "$3"
}

PORT_UP=18230 PORT_PX=18231
DIAG_PORTS="$PORT_UP $PORT_PX"
MIB=1048576

# paused_is WANT LABEL: the status `paused` field is true (1) or false (0)
paused_is() {
	local v
	v=$(stat_get paused 2>&1)
	case $v in True | true | 1) v=1 ;; False | false | 0) v=0 ;; esac
	assert_eq "$v" "$1" "$2"
}
# curl_n N LABEL: N fetches of /1m.bin, one new connection each, byte-exact
curl_n() {
	local i sum
	for i in $(seq 1 "$1"); do
		cg_exec "$C" curl --noproxy '*' -sS --max-time 30 -o "$TMP/c.out" \
			"http://127.0.0.1:$PORT_PX/1m.bin" || fail_diag "$2: curl $i failed"
		sum=$(sha256sum <"$TMP/c.out" | cut -d' ' -f1)
		[ "$sum" = "$SUM" ] || fail_diag "$2: curl $i: body differs ($(stat -c %s "$TMP/c.out") bytes)"
	done
	ok "$2: $1 new connections byte-exact"
}
# tcp_rcvd NAME: RCVD = tcpi_bytes_received of keep-alive connection NAME,
# the bytes it got through TCP (redirected bytes bypass that path)
tcp_rcvd() {
	ka rcvd "$1" || fail "tcp_info of $1: $KA_REPLY"
	RCVD=${KA_REPLY#ok }
}

U=$(cg_make up) || fail "$U"
P=$(cg_make px) || fail "$P"
C=$(cg_make cl) || fail "$C"

html=$TMP/nginx-up/html
mkdir -p "$html"
head -c $MIB /dev/urandom >"$html/1m.bin"
SUM=$(sha256sum <"$html/1m.bin" | cut -d' ' -f1)
nginx_start up upstream.conf "$U" LISTEN=127.0.0.1:$PORT_UP SENDFILE=on >/dev/null
nginx_start px proxy.conf "$P" LISTEN=127.0.0.1:$PORT_PX UPSTREAM=127.0.0.1:$PORT_UP >/dev/null
wait_port 127.0.0.1 $PORT_UP
wait_port 127.0.0.1 $PORT_PX
ka_start $PORT_PX "$html"

agent_start -c "$P" -c "$U" -c "$C"
paused_is 0 "not paused after start"
st m0 redirected_msgs
ka open k1 || fail "keep-alive connection: $KA_REPLY"
ka_get k1 /1m.bin "connection paired before the pause answers byte-exact"
curl_n 3 "before pause"
st m1 redirected_msgs
assert_ge $((m1 - m0)) 4 "redirected_msgs moves before the pause"

"$AGENT" pause >"$TMP/pause.out" 2>&1 || fail "pause exited $?: $(cat "$TMP/pause.out")"
ok "pause exits 0"
paused_is 1 "status says paused"
st m_a redirected_msgs
st p_a fallbacks.paused
st s_a sockets_total

curl_n 5 "while paused"
ka_get k1 /1m.bin "connection paired before the pause answers while paused"
ka open k2 || fail "new keep-alive connection while paused: $KA_REPLY"
ka_get k2 /1m.bin "connection made while paused answers byte-exact"
tcp_rcvd k2
assert_ge "$RCVD" $MIB "connection made while paused received the body through TCP"
ka_get k1 /1m.bin "connection paired before the pause answers again"

st m_b redirected_msgs
st p_b fallbacks.paused
st s_b sockets_total
assert_eq "$s_b" "$s_a" "no new socket tracked while paused"
assert_ge $((p_b - p_a)) 6 "fallbacks.paused counts the new connections' sockets"
assert_ge "$m_b" "$m_a" "the pair made before the pause kept redirecting"

"$AGENT" resume >"$TMP/resume.out" 2>&1 || fail "resume exited $?: $(cat "$TMP/resume.out")"
ok "resume exits 0"
paused_is 0 "status says not paused"

st m_c redirected_msgs
curl_n 3 "after resume"
ka open k3 || fail "new keep-alive connection after resume: $KA_REPLY"
ka_get k3 /1m.bin "connection made after resume answers byte-exact"
tcp_rcvd k3
assert_le "$RCVD" $((MIB / 2)) "connection made after resume is redirected (bytes through TCP)"
st m_d redirected_msgs
assert_ge $((m_d - m_c)) 4 "redirected_msgs moves again after resume"

ka_get k1 /1m.bin "connection that fell back during the pause answers after resume"
ka_get k2 /1m.bin "connection made during the pause answers after resume"
ka_get k3 /1m.bin "connection made after resume answers again"

agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent exited cleanly"

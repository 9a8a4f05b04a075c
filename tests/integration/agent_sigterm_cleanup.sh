# timeout: 150
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves the two ways `run` ends.  Without --pin, SIGTERM: exit 0, nothing
# left attached to the cgroups (bpftool), no files in /sys/fs/bpf/ngx-sockmap,
# and a keep-alive connection paired under the agent keeps answering
# byte-exact.  With --pin, SIGTERM: exit 0, the programs stay attached and a
# connection made after the agent is gone is still redirected (its own
# tcpi_bytes_received stays far below the body it read: redirected bytes
# bypass the TCP receive path); then `ngx-sockmap detach` exits 0, leaves
# nothing attached and removes the pin directory, and live connections,
# paired or not, keep answering byte-exact.
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
# attached CGROUP: how many programs bpftool sees attached to CGROUP
attached() {
	bpftool -j cgroup show "$1" | python3 -c '
import json, sys
t = sys.stdin.read().strip()
print(len(json.loads(t)) if t else 0)'
}
# assert_detached LABEL CGROUP...: nothing attached (waits up to 3 s: link
# release after a process dies is not synchronous)
assert_detached() {
	local label=$1 cg n i
	shift
	for cg in "$@"; do
		for i in $(seq 1 30); do
			n=$(attached "$cg")
			[ "$n" = 0 ] && break
			sleep 0.1
		done
		[ "$n" = 0 ] || fail "$label: $n program(s) still attached to $cg: $(bpftool cgroup show "$cg")"
	done
	ok "$label: nothing attached to the $# cgroups"
}
assert_attached() { # assert_attached LABEL CGROUP...
	local label=$1 cg
	shift
	for cg in "$@"; do
		[ "$(attached "$cg")" -ge 1 ] || fail "$label: nothing attached to $cg"
	done
	ok "$label: programs attached to the $# cgroups"
}

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

PORT_UP=18220 PORT_PX=18221
DIAG_PORTS="$PORT_UP $PORT_PX"
PIN=/sys/fs/bpf/ngx-sockmap
MIB=1048576

[ -e "$PIN" ] && fail "$PIN exists before the test: left over by an earlier run ($(ls -A "$PIN" | head -5 | tr '\n' ' '))"
# If the test dies half-way, take down what --pin left behind
on_exit "[ -e '$PIN' ] && { '$AGENT' detach; rm -rf '$PIN'; }"

U=$(cg_make up) || fail "$U"
P=$(cg_make px) || fail "$P"
C=$(cg_make cl) || fail "$C"

html=$TMP/nginx-up/html
mkdir -p "$html"
head -c $MIB /dev/urandom >"$html/1m.bin"
nginx_start up upstream.conf "$U" LISTEN=127.0.0.1:$PORT_UP SENDFILE=on >/dev/null
nginx_start px proxy.conf "$P" LISTEN=127.0.0.1:$PORT_PX UPSTREAM=127.0.0.1:$PORT_UP >/dev/null
wait_port 127.0.0.1 $PORT_UP
wait_port 127.0.0.1 $PORT_PX
ka_start $PORT_PX "$html"

# assert_redirected NAME LABEL: connection NAME (already read /1m.bin) got
# most of it through the redirect, not the TCP receive path
assert_redirected() {
	ka rcvd "$1" || fail "tcp_info of $1: $KA_REPLY"
	local n=${KA_REPLY#ok }
	[ "$n" -lt $((MIB / 2)) ] ||
		fail_diag "$2: connection $1 received $n bytes through TCP for a 1 MiB body: not redirected"
	ok "$2 (TCP received only $n bytes of a 1 MiB body)"
}

log "--- run without --pin, then SIGTERM"
agent_start -c "$P" -c "$U" -c "$C"
assert_attached "agent running" "$P" "$U" "$C"
st m0 redirected_msgs
ka open a1 || fail "keep-alive connection: $KA_REPLY"
ka_get a1 /1m.bin "connection made under the agent answers byte-exact"
assert_redirected a1 "connection made under the agent is redirected"
st m1 redirected_msgs
assert_ge $((m1 - m0)) 1 "redirected_msgs moved"

agent_stop
rc=$?
assert_eq "$rc" 0 "agent exit status after SIGTERM"
assert_detached "after SIGTERM" "$P" "$U" "$C"
if [ -e "$PIN" ] && [ -n "$(ls -A "$PIN")" ]; then
	fail "files left in $PIN after SIGTERM: $(ls -A "$PIN" | tr '\n' ' ')"
fi
ok "no files left in $PIN"
ka_get a1 /1m.bin "connection paired under the agent still answers after SIGTERM"
ka open a2 || fail "new connection after SIGTERM: $KA_REPLY"
ka_get a2 /1m.bin "new connection after SIGTERM answers byte-exact"

log "--- run --pin, then SIGTERM, then detach"
agent_start --pin -c "$P" -c "$U" -c "$C"
assert_attached "agent --pin running" "$P" "$U" "$C"
ka open b1 || fail "keep-alive connection: $KA_REPLY"
ka_get b1 /1m.bin "connection made under the pinning agent answers byte-exact"
assert_redirected b1 "connection made under the pinning agent is redirected"

agent_stop
rc=$?
assert_eq "$rc" 0 "agent --pin exit status after SIGTERM"
assert_attached "after SIGTERM with --pin" "$P" "$U" "$C"
[ -d "$PIN" ] && [ -n "$(ls -A "$PIN")" ] || fail "nothing pinned in $PIN after --pin run"
ok "pins in $PIN: $(ls -A "$PIN" | tr '\n' ' ')"
if m0=$(stat_get redirected_msgs 2>/dev/null); then :; else m0=; fi

ka open b2 || fail "new connection after the pinning agent exited: $KA_REPLY"
ka_get b2 /1m.bin "connection made after the pinning agent exited answers byte-exact"
assert_redirected b2 "connection made after the pinning agent exited is redirected"
ka_get b1 /1m.bin "connection paired under the pinning agent still answers"
if [ -n "$m0" ] && m1=$(stat_get redirected_msgs 2>/dev/null); then
	assert_ge $((m1 - m0)) 1 "status reads the pinned counters: redirected_msgs moved"
else
	log "note: status --json does not answer once the pinning agent is gone"
fi

"$AGENT" detach >"$TMP/detach.out" 2>&1
rc=$?
cat "$TMP/detach.out"
assert_eq "$rc" 0 "detach exit status"
assert_detached "after detach" "$P" "$U" "$C"
[ -e "$PIN" ] && fail "$PIN still there after detach: $(ls -A "$PIN" | tr '\n' ' ')"
ok "$PIN removed by detach"
ka_get b1 /1m.bin "connection paired under the pinning agent answers after detach"
ka_get b2 /1m.bin "connection paired by the pinned programs answers after detach"
ka_get a1 /1m.bin "connection from the first run still answers"
ka open c1 || fail "new connection after detach: $KA_REPLY"
ka_get c1 /1m.bin "new connection after detach answers byte-exact"

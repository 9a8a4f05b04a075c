# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# For tests that drive wrk/curl -> proxy nginx -> upstream nginx with a
# keep-alive client that holds named connections: status and diagnostic
# helpers, attachment checks, the ka.py client, and proxy_setup.
# Source after common.sh.

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
from httpresp import read_response

port, root = int(sys.argv[1]), sys.argv[2]
conns = {}


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
	coproc KA { cg_exec "$C" env PYTHONPATH="$TOP/tests/lib" python3 "$TMP/ka.py" "$1" "$2"; }
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

# proxy_setup PORT_UP PORT_PX: cgroups U (upstream), P (proxy), C (clients);
# $html holds 64k.bin and 1m.bin; both nginx listening.
proxy_setup() {
	PORT_UP=$1 PORT_PX=$2
	DIAG_PORTS="$PORT_UP $PORT_PX"

	U=$(cg_make up) || fail "$U"
	P=$(cg_make px) || fail "$P"
	C=$(cg_make cl) || fail "$C"

	html=$TMP/nginx-up/html
	mkdir -p "$html"
	head -c 65536 /dev/urandom >"$html/64k.bin"
	head -c 1048576 /dev/urandom >"$html/1m.bin"
	nginx_start up upstream.conf "$U" LISTEN=127.0.0.1:$PORT_UP SENDFILE=on >/dev/null
	nginx_start px proxy.conf "$P" LISTEN=127.0.0.1:$PORT_PX UPSTREAM=127.0.0.1:$PORT_UP >/dev/null
	wait_port 127.0.0.1 $PORT_UP
	wait_port 127.0.0.1 $PORT_PX
}

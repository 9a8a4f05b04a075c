# timeout: 120
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: with the nginx modules loaded (nginx-module/, `make module`) and
# an unprivileged worker (user nobody), nginx's own access logs say what
# ngx-sockmap did with each hop ($sockmap, $sockmap_upstream):
#   - a proxied request from a client in an attached cgroup to an upstream
#     in one: "redirected" on both hops, again on the kept-alive upstream
#     connection; a stream {} session the same;
#   - an upstream outside the attached cgroups: "no_peer" (nginx's end
#     registered, nobody claimed it, its first send went through TCP); a
#     client outside them: "not_tracked"; no upstream at all: "-";
#   - without the agent: "no_agent" on both hops, nginx serves, and says
#     so once at notice level, not per request;
# and the getsockopt program that answers (bpf/guard.bpf.c sockopt_query)
# leaves every other getsockopt of the cgroup as it was: SO_ERROR,
# SO_TYPE, SO_RCVBUF, TCP_NODELAY, TCP_CONGESTION, TCP_INFO (also with a
# buffer larger than a page) and an unknown option's ENOPROTOOPT read the
# same with the agent as without.
. "$(dirname "$0")/../lib/common.sh"
. "$TOP/tests/lib/realsrv.sh"

for so in ngx_http_sockmap_module.so ngx_stream_sockmap_module.so; do
	[ -f "$TOP/build/$so" ] && continue
	[ -x /usr/share/nginx/src/configure ] ||
		skip "no nginx-dev (/usr/share/nginx/src): the modules can't be built here (make deps)"
	fail "build/$so not built (make module)"
done
LOAD_STREAM=$(load_stream)
PORT_UP=18640 PORT_OUT=18641 PORT_PX=18642 PORT_ST=18643

U=$(cg_make up) || fail "$U"
P=$(cg_make px) || fail "$P"
C=$(cg_make cl) || fail "$C"
X=$(cg_make out) || fail "$X" # never attached

nginx_start up upstream.conf "$U" LISTEN=127.0.0.1:$PORT_UP SENDFILE=off >/dev/null
nginx_start out upstream.conf "$X" LISTEN=127.0.0.1:$PORT_OUT SENDFILE=off >/dev/null
PX=$(nginx_start px sockmap_log.conf "$P" LOAD_STREAM="$LOAD_STREAM" MODULES="$TOP/build" \
	LISTEN=127.0.0.1:$PORT_PX STREAM_LISTEN=127.0.0.1:$PORT_ST \
	UPSTREAM=127.0.0.1:$PORT_UP UPSTREAM_OUT=127.0.0.1:$PORT_OUT) || fail "$PX"
wait_port 127.0.0.1 $PORT_UP
wait_port 127.0.0.1 $PORT_OUT
wait_port 127.0.0.1 $PORT_PX
wait_port 127.0.0.1 $PORT_ST
# an unprivileged worker asks about its own sockets: no CAP_BPF, no root
sed -i 's/^user root;/user nobody nogroup;/' "$PX/nginx.conf"
nginx -p "$PX" -c "$PX/nginx.conf" -s reload || fail "nginx reload"
for _ in $(seq 1 50); do
	w=$(pgrep -u nobody -f "nginx: worker process" | head -1)
	[ -n "$w" ] && grep -qx "0::${P#"$CG2"}" "/proc/$w/cgroup" 2>/dev/null && break
	w=
	sleep 0.1
done
[ -n "$w" ] || fail "no worker of the proxy runs as nobody in $P"
ok "the proxy's worker runs as nobody"

# get CGROUP PATH: a fresh connection's GET through the proxy; prints the
# status, and the access log line of that request (waited for: nginx logs
# after the last byte went out)
get() {
	local code i
	code=$(cg_exec "$1" curl -s -o /dev/null -w '%{http_code}' -m 10 "http://127.0.0.1:$PORT_PX$2")
	[ "$code" = 200 ] || fail "GET $2 from $(basename "$1"): status $code"
	for i in $(seq 1 50); do
		LINE=$(grep "^$2 " "$PX/logs/access.log" | tail -1)
		[ "$(grep -c "^$2 " "$PX/logs/access.log")" -gt "${3:-0}" ] && return 0
		sleep 0.1
	done
	fail "GET $2: no access log line: $(cat "$PX/logs/access.log")"
}
# stream_get: one HTTP/1.0 request through the stream {} server from C,
# the stream log's last line after the session ended
stream_get() {
	local before i
	before=$(wc -l <"$PX/logs/stream.log" 2>/dev/null || echo 0)
	cg_exec "$C" python3 -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(b"GET /hello HTTP/1.0\r\n\r\n")
got = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    got += b
assert b"hello from upstream" in got, got
' $PORT_ST || fail "stream request failed"
	for i in $(seq 1 50); do
		[ "$(wc -l <"$PX/logs/stream.log")" -gt "$before" ] && break
		sleep 0.1
	done
	LINE=$(tail -1 "$PX/logs/stream.log")
}

# The other getsockopts, from a process in C, one line each: compared
# with and without the program attached.
cat >"$TMP/opts.py" <<'EOF'
import ctypes, errno, socket, struct
libc = ctypes.CDLL(None, use_errno=True)
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen()
c = socket.create_connection(l.getsockname()); a, _ = l.accept()
c.sendall(b"x" * 1000); a.recv(1000)
c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
print("SO_ERROR", c.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR))
print("SO_TYPE", c.getsockopt(socket.SOL_SOCKET, socket.SO_TYPE))
print("SO_RCVBUF", c.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF))
print("TCP_NODELAY", c.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
print("TCP_CONGESTION", c.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\0"))
# Python caps buflen at 1024: the page-plus buffer through libc
def getsockopt_raw(s, level, name, n):
    buf = ctypes.create_string_buffer(n)
    ln = ctypes.c_uint32(n)
    if libc.getsockopt(s.fileno(), level, name, buf, ctypes.byref(ln)):
        raise OSError(ctypes.get_errno(), "getsockopt")
    return buf.raw[:ln.value]
for n in (256, 8192):
    ti = getsockopt_raw(c, socket.IPPROTO_TCP, socket.TCP_INFO, n)
    # (not its byte counts: the pair's sends are redirected, with the agent)
    print("TCP_INFO", n, len(ti), "state", ti[0], "rto", struct.unpack_from("<I", ti, 8)[0] > 0)
try:
    c.getsockopt(socket.IPPROTO_TCP, 0x4e54, 16)
    print("unknown option: answered")
except OSError as e:
    print("unknown option:", errno.errorcode[e.errno])
EOF
cg_exec "$C" python3 "$TMP/opts.py" >"$TMP/opts.before" || fail "getsockopt probe failed"

# (wait_port's probe of the stream port made a session before any agent:
# the first worker said "no_agent" then; what counts is what comes after)
agent_start -c "$P" -c "$U" -c "$C" --nginx-vars
mark=$(wc -l <"$PX/logs/error.log")

get "$C" /hello
assert_eq "$LINE" "/hello 200 client=redirected upstream=redirected" \
	"client and upstream in attached cgroups: both hops redirected"
get "$C" /hello 1
assert_eq "$LINE" "/hello 200 client=redirected upstream=redirected" \
	"again, on the kept-alive upstream connection"
get "$C" /out/hello
assert_eq "$LINE" "/out/hello 200 client=redirected upstream=no_peer" \
	"an upstream outside the attached cgroups: no_peer"
get "$CG2" /local
assert_eq "$LINE" "/local 200 client=not_tracked upstream=-" \
	"a client outside the attached cgroups, no upstream: not_tracked, -"
stream_get
assert_eq "$LINE" "stream client=redirected upstream=redirected" \
	"stream {}: both hops redirected"

cg_exec "$C" python3 "$TMP/opts.py" >"$TMP/opts.agent" || fail "getsockopt probe failed"
diff "$TMP/opts.before" "$TMP/opts.agent" >&2 ||
	fail "getsockopt results changed with the agent's program attached"
ok "SO_ERROR, SO_TYPE, SO_RCVBUF, TCP_NODELAY, TCP_CONGESTION, TCP_INFO, an unknown option: as without it"
sed 's/^/#   /' "$TMP/opts.agent"

agent_stop || fail "agent did not exit 0 on SIGTERM"
tail -n +$((mark + 1)) "$PX/logs/error.log" | grep "sockmap:" &&
	fail "error.log speaks of sockmap while the agent ran"
mark=$(wc -l <"$PX/logs/error.log")
get "$C" /out/hello 1
assert_eq "$LINE" "/out/hello 200 client=no_agent upstream=no_agent" "without the agent: no_agent, nginx serves"
get "$C" /out/hello 2
stream_get
assert_eq "$LINE" "stream client=no_agent upstream=no_agent" "stream {} without the agent: no_agent"
# once per worker: the two modules share ngx_sockmap_query (nginx loads
# modules RTLD_GLOBAL), or once each where they would not
n=$(tail -n +$((mark + 1)) "$PX/logs/error.log" | grep -c '\[notice\].*sockmap: no ngx-sockmap agent answers')
[ "$n" -ge 1 ] && [ "$n" -le 2 ] ||
	fail "no agent: said $n times after 3 requests, want once (or once per module)"
ok "no agent: said $n time(s), at notice level, not per request"

# --nginx-vars is opt-in (its getsockopt program costs every getsockopt
# in the cgroup): an agent run without it accelerates but does not answer
agent_start -c "$P" -c "$U" -c "$C"
st p0 pairs
get "$C" /hello 2
st p1 pairs
assert_eq "$LINE" "/hello 200 client=no_agent upstream=no_agent" \
	"an agent without --nginx-vars: no answer (no_agent)"
assert_ge $((p1 - p0)) 1 "an agent without --nginx-vars still pairs"
agent_stop || fail "agent did not exit 0 on SIGTERM"

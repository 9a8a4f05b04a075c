# timeout: 240
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: nginx's stream proxy with `sockmap_splice on` (nginx-module/
# ngx_stream_sockmap_splice.c) hands its sessions to the kernel, and
# nginx's semantics hold:
#  - 16 echo sessions of 16 MiB through nginx (tcpkit, at most 256 KiB in
#    flight) come back byte-exact, most directions switch past nginx
#    (splice_switched; a sender that never waits for nginx to catch up
#    never switches), most log lines say "spliced", and each line counts
#    every byte: $bytes_received, $bytes_sent, $upstream_bytes_sent and
#    $upstream_bytes_received all 16 MiB, however much nginx relayed;
#  - 24 sessions of pipelined requests keep request and response order;
#  - proxy_timeout (2 s): a spliced session sending a little every 0.3 s
#    for 5 s lives on, then ends 2 s after its last byte, as nginx ends an
#    idle one (between 1.7 and 3 s; under TCG, as its timeouts scale);
#  - proxy_protocol towards the upstream: nginx's own bytes, written
#    before the client's, declared in the fences: the session is spliced,
#    and its log line counts the header upstream;
#  - ssl_preread (bytes nginx 1.22 reads without counting), alone and
#    with proxy_protocol: both directions switch, the preread bytes
#    counted as the client's, the header as nginx's own;
#  - a hazard (MSG_OOB) on a spliced session: the session goes on
#    byte-exact, or all four sockets end (none left established);
#  - a remote client (a network namespace): not spliced (the OFFER is
#    refused), relayed byte-exact, nginx says why per session;
#  - an agent without --nginx-vars (no query): nginx says so once, at
#    notice level, and relays every session itself, byte-exact.
. "$(dirname "$0")/../lib/common.sh"
. "$TOP/tests/lib/realsrv.sh"
. "$TOP/tests/lib/tcpkit.sh"

[ -f "$TOP/build/ngx_stream_sockmap_module.so" ] || {
	[ -x /usr/share/nginx/src/configure ] ||
		skip "no nginx-dev (/usr/share/nginx/src): the modules can't be built here (make deps)"
	fail "build/ngx_stream_sockmap_module.so not built (make module)"
}
LOAD_STREAM=$(load_stream)
cg_new CS srv
cg_new CP px
cg_new CC cli
agent_start -c "$CS" -c "$CP" -c "$CC" --nginx-vars

tk_server up "$CS" - --listen 127.0.0.1:0 --mode echo --parallel 32 --duration 200 --timeout 60
UP=${SPORT[up]}
PORT_ST=18652
PX=$(nginx_start px stream_splice.conf "$CP" LOAD_STREAM="$LOAD_STREAM" MODULES="$TOP/build" \
	STREAM_LISTEN=127.0.0.1:$PORT_ST UPSTREAM=127.0.0.1:$UP TIMEOUT=2s) || fail "$PX"
wait_port 127.0.0.1 $PORT_ST
LOG=$PX/logs/stream.log
# log_lines N: wait until the stream log has N lines (nginx logs a session
# after it ended)
log_lines() {
	local i
	for i in $(seq 1 100); do
		[ "$(wc -l <"$LOG" 2>/dev/null || echo 0)" -ge "$1" ] && return 0
		sleep 0.1
	done
	fail "the stream log has $(wc -l <"$LOG") lines, not $1"
}

# spliced_line: wait until the stream log has a session that says
# spliced (other lines: wait_port's probe)
spliced_line() {
	local i
	for i in $(seq 1 100); do
		grep -q '^spliced ' "$LOG" 2>/dev/null && return 0
		sleep 0.1
	done
	fail "no spliced session in $LOG: $(cat "$LOG")"
}

n=16 bytes=$((16 * MIB))
st w0 splice_switched
st s0 fallbacks.slow_reader
st o0 splice_offers
st r0 splice_refused
tk_client echo "$CC" - --connect 127.0.0.1:$PORT_ST --mode echo --seed 5 --bytes $bytes \
	--conns $n --parallel $n --window 256K --chunk 32K --timeout 60
crc=$?
tk_ok echo "echo through nginx, spliced: every byte back exact and in order (exit $crc)"
st w1 splice_switched
st s1 fallbacks.slow_reader
# A direction switches at its sender's first send after nginx caught up
# with it: most do within 16 MiB, not all (a sender that never waits);
# none after one of its sockets moved to TCP (a reader fell behind, where
# the self-test found that safe: seen under TCG)
w=$((w1 - w0)) tcp=$((s1 - s0))
log "splice_offers +$(($(stat_get splice_offers) - o0)), splice_refused" \
	"+$(($(stat_get splice_refused) - r0)), switched +$w, moved to TCP +$tcp;" \
	"nginx: $(grep -o 'not spliced: [a-z ]*' "$PX/logs/error.log" | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
log_lines $n
spliced=$(awk '$1 == "spliced"' "$LOG" | wc -l)
good=$(awk -v b=$bytes '$2 == b && $3 == b && $4 == b && $5 == b' "$LOG" | wc -l)
[ "$good" = $n ] || sed 's/^/#   /' "$LOG"
if [ $tcp = 0 ]; then
	assert_ge $w $n "directions switched past nginx (+$w of $((2 * n)))"
	assert_ge "$spliced" $((n / 2)) "sessions whose log line says spliced ($spliced of $n)"
else
	assert_ge $((w + tcp)) $n "half the directions switched, or moved to TCP first (+$w, +$tcp)"
fi
assert_eq "$good" $n "each session's log line counts every byte: all four $bytes"

# 25: wait_port's probe through nginx is one
tk_server uprr "$CS" - --listen 127.0.0.1:0 --mode rr --parallel 32 --conns 25 --duration 200
PXRR=$(nginx_start pxrr stream_splice.conf "$CP" LOAD_STREAM="$LOAD_STREAM" MODULES="$TOP/build" \
	STREAM_LISTEN=127.0.0.1:$((PORT_ST + 1)) UPSTREAM=127.0.0.1:${SPORT[uprr]} TIMEOUT=60s) ||
	fail "$PXRR"
wait_port 127.0.0.1 $((PORT_ST + 1))
st w0 splice_switched
tk_client rr "$CC" - --connect 127.0.0.1:$((PORT_ST + 1)) --mode rr --conns 24 --parallel 24 \
	--rounds 1000 --pipeline 4 --req-size 200 --resp-size 200 --seed 11 --timeout 60
crc=$?
[ $crc = 0 ] || grep -v '\[info\]' "$PXRR/logs/error.log" | tail -n 20 | sed 's/^/#   /'
tk_wait uprr
tk_ok uprr "rr: the server got every request in order"
tk_ok rr "pipelined requests through nginx, spliced: request and response order kept (exit $crc)"
st w1 splice_switched
assert_ge $((w1 - w0)) 1 "rr: directions switched (+$((w1 - w0)))"

# proxy_timeout 2s against a spliced session that keeps talking for 5 s,
# then stops: prints the seconds between its last echo and nginx's close
idle=$(cg_exec "$CC" python3 - $PORT_ST <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
line = b"x" * 1023 + b"\n"
end = time.monotonic() + 5
while time.monotonic() < end:
    s.sendall(line)
    got = b""
    while len(got) < len(line):
        chunk = s.recv(len(line) - len(got))
        if not chunk:
            print("closed-while-active")
            sys.exit(0)
        got += chunk
    last = time.monotonic()
    time.sleep(0.3)
s.settimeout(20)
try:
    rest = s.recv(1)
except (ConnectionResetError, socket.timeout) as e:
    rest = type(e).__name__
print("%.2f %r" % (time.monotonic() - last, rest))
PY
)
log "active for 5 s, then idle: $idle"
[ "${idle%% *}" != closed-while-active ] || fail "nginx ended a spliced session that was active (proxy_timeout 2s)"
ok "a spliced session active for 5 s outlived proxy_timeout 2s"
t=${idle%% *}
hi=$((3 * ${NGX_SOCKMAP_TEST_TIMEOUT_SCALE:-1})) # TCG: timers run late
assert_eq "$(python3 -c "print(int(1.7 <= $t <= $hi))")" 1 "the idle session ended at proxy_timeout ($t s after its last byte)"
log_lines $((n + 1))
tail -1 "$LOG" | grep -q '^spliced ' || fail "the timed-out session's log line: $(tail -1 "$LOG")"
ok "the timed-out session was spliced: $(tail -1 "$LOG")"

# proxy_protocol towards the upstream: nginx writes its header before
# any of the client's bytes; the fences declare it as nginx's own, so the
# session is spliced all the same, and the log counts the header upstream
# nginx_with NAME PORT DIRECTIVE: an nginx of stream_splice.conf on PORT
# (to the echo server) whose server also has DIRECTIVE; prints its prefix
nginx_with() {
	local px
	px=$(nginx_start "$1" stream_splice.conf "$CP" LOAD_STREAM="$LOAD_STREAM" MODULES="$TOP/build" \
		STREAM_LISTEN=127.0.0.1:$2 UPSTREAM=127.0.0.1:$UP TIMEOUT=60s) || fail "$px"
	sed -i "s|^\( *\)proxy_pass \(.*\);|&\n\1$3|" "$px/nginx.conf"
	nginx -p "$px" -c "$px/nginx.conf" -s reload || fail "nginx reload ($3)"
	sleep 1
	wait_port 127.0.0.1 "$2"
	echo "$px"
}
# spliced_counts_are PREFIX WANT LABEL: the spliced session in PREFIX's
# stream log counts WANT (its first five fields: see stream_splice.conf)
spliced_counts_are() {
	LOG=$1/logs/stream.log
	spliced_line
	assert_eq "$(grep '^spliced ' "$LOG" | cut -d' ' -f1-5)" "$2" "$3"
	LOG=$PX/logs/stream.log
}
PXPP=$(nginx_with pxpp $((PORT_ST + 2)) "proxy_protocol on;") || fail "$PXPP"
st w0 splice_switched
: >"$PXPP/logs/stream.log" # wait_port's probe session: not this one
# prints: the header's first word, pings echoed, header length, ping bytes
got=$(cg_exec "$CC" python3 - $((PORT_ST + 2)) <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
got, sent = b"", 0
for i in range(200):
    line = b"ping %d\n" % i
    s.sendall(line)
    sent += len(line)
    while not got.endswith(line):
        chunk = s.recv(4096)
        if not chunk:
            break
        got += chunk
hdr = got.split(b"\r\n", 1)[0] + b"\r\n"
print(hdr.decode()[:10], got.count(b"ping"), len(hdr), sent)
PY
)
read -r pp_word pp_pings pp_hdr pp_bytes <<<"${got#PROXY }"
assert_eq "${got%% *} $pp_word $pp_pings" "PROXY TCP4 200" "proxy_protocol: the header, then every ping echoed"
st w1 splice_switched
assert_eq $((w1 - w0)) 2 "proxy_protocol: both directions switched past nginx"
spliced_counts_are "$PXPP" "spliced $pp_bytes $((pp_bytes + pp_hdr)) $((pp_bytes + pp_hdr)) $((pp_bytes + pp_hdr))" \
	"proxy_protocol: the log line counts the header upstream and every spliced byte"

# ssl_preread: the preread phase reads the client's first bytes, which
# nginx 1.22 writes upstream first without counting them in
# $bytes_received: the fences count them as the client's, read; with
# proxy_protocol too, the header (nginx's own) goes ahead of them.  Both
# directions switch (here plain text: ssl_preread finds no TLS and lets
# it pass)
for pre in "ssl_preread on;" "ssl_preread on; proxy_protocol on;"; do
	port=$((PORT_ST + 5))
	[[ $pre == *proxy_protocol* ]] && port=$((PORT_ST + 6))
	PXSP=$(nginx_with "pxsp$port" $port "$pre") || fail "$PXSP"
	st w0 splice_switched
	got=$(cg_exec "$CC" python3 - $port <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
got, want, hdr = b"", b"", 0
for i in range(200):
    line = b"ping %d\n" % i
    s.sendall(line)
    want += line
    while len(got) < hdr + len(want):
        chunk = s.recv(4096)
        if not chunk:
            break
        got += chunk
        if not hdr and got.startswith(b"PROXY ") and b"\r\n" in got:
            hdr = got.index(b"\r\n") + 2
print(int(got[hdr:] == want), len(want), hdr)
PY
)
	read -r sp_exact sp_bytes sp_hdr <<<"$got"
	assert_eq "$sp_exact" 1 "$pre every ping echoed, byte-exact ($sp_bytes bytes, a header of $sp_hdr)"
	st w1 splice_switched
	assert_eq $((w1 - w0)) 2 "$pre both directions switched past nginx"
	# nginx's own count leaves out the preread first ping (7 bytes),
	# spliced or not; the header counts upstream
	t=$((sp_bytes + sp_hdr))
	spliced_counts_are "$PXSP" "spliced $((sp_bytes - 7)) $t $t $t" \
		"$pre the log line counts every spliced byte, as nginx counts"
done

# a hazard on a spliced session: the client sends urgent data (MSG_OOB)
# after its session switched past nginx.  The guard acts on the client's
# socket (resets.oob); what the client sees is what the guard does on this
# tier: its session goes on byte-exact (moved to TCP), or it ends, and then
# all four sockets end: the client's, the upstream's (the client's
# target, reset with it), and nginx's two (nginx sees the reset and ends
# the session: its log line is written), with none left established.
cat >"$TMP/hz_srv.py" <<'PY'
import json, os, socket, sys, threading
ls = socket.socket()
ls.bind(("127.0.0.1", 0))
ls.listen(16)
open(sys.argv[1] + ".port", "w").write(str(ls.getsockname()[1]))
def serve(c, i):
    end, n = "eof", 0
    try:
        while True:
            d = c.recv(65536)
            if not d:
                break
            n += len(d)
            c.sendall(d)
    except OSError as e:
        end = "error"
    json.dump({"end": end, "bytes": n}, open("%s.%d.json" % (sys.argv[1], i), "w"))
i = 0
while True:
    c, _ = ls.accept()
    i += 1
    threading.Thread(target=serve, args=(c, i), daemon=True).start()
PY
cg_exec "$CS" python3 "$TMP/hz_srv.py" "$TMP/hz" >"$TMP/hz_srv.log" 2>&1 &
on_exit "kill $!"
for _ in $(seq 1 50); do [ -s "$TMP/hz.port" ] && break; sleep 0.1; done
[ -s "$TMP/hz.port" ] || fail "hazard: the echo server did not start: $(cat "$TMP/hz_srv.log")"
PXH=$(nginx_start pxh stream_splice.conf "$CP" LOAD_STREAM="$LOAD_STREAM" MODULES="$TOP/build" \
	STREAM_LISTEN=127.0.0.1:$((PORT_ST + 4)) UPSTREAM=127.0.0.1:$(cat "$TMP/hz.port") TIMEOUT=60s) ||
	fail "$PXH"
wait_port 127.0.0.1 $((PORT_ST + 4))
st w0 splice_switched
st o0 resets.oob
end=$(cg_exec "$CC" python3 - $((PORT_ST + 4)) <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
got = b""
for i in range(100):
    line = b"ping %d\n" % i
    s.sendall(line)
    while not got.endswith(line):
        c = s.recv(4096)
        if not c:
            print("ended-early")
            sys.exit()
        got += c
try:
    s.send(b"!", socket.MSG_OOB)
    s.sendall(b"after\n")
    got = b""
    while not got.endswith(b"after\n"):
        c = s.recv(4096)
        if not c:
            print("ended eof")
            sys.exit()
        got += c
    print("continued")
except OSError as e:
    print("ended error")
PY
)
st w1 splice_switched
st o1 resets.oob
log "hazard: the client's session $end; splice_switched +$((w1 - w0)), resets.oob +$((o1 - o0))"
assert_ge $((w1 - w0)) 1 "hazard: the session had switched past nginx before the urgent byte"
# the session's sockets still established: nginx's two, the client's and
# the upstream's (ports of the listener and of the echo server)
hz_established() {
	local a=$((PORT_ST + 4)) b
	b=$(cat "$TMP/hz.port")
	ss -Htan state established "( sport = :$a or dport = :$a or sport = :$b or dport = :$b )" | wc -l
}
case $end in
continued) ok "hazard: the session went on, byte-exact (the guard moved it to TCP)" ;;
"ended "*)
	assert_ge $((o1 - o0)) 1 "hazard: the guard reset the client's socket (resets.oob)"
	for _ in $(seq 1 50); do
		[ -s "$TMP/hz.2.json" ] && grep -q '^spliced ' "$PXH/logs/stream.log" && break
		sleep 0.1
	done
	[ -s "$TMP/hz.2.json" ] || fail "hazard: the upstream's connection did not end"
	ok "hazard: the upstream's connection ended ($(cat "$TMP/hz.2.json"))"
	grep -q '^spliced ' "$PXH/logs/stream.log" ||
		fail "hazard: nginx did not end the session: $(cat "$PXH/logs/stream.log")"
	ok "hazard: nginx ended the session: $(grep '^spliced ' "$PXH/logs/stream.log")"
	assert_eq "$(hz_established)" 0 "hazard: no socket of the session left established (all four ended)" ;;
*) fail "hazard: the client's session: '$end'" ;;
esac

# a remote client (a network namespace behind a veth pair, its cgroup
# not attached): no socket of the client's is here to hand over, so the
# OFFER is refused and nginx relays the session, byte-exact, and says why
# (bench/remote-splice measured the kernel's sk_skb path: a loss)
cg_new CR rcli
NSR=$(ns_make r)
net=$((($$ % 200) + 20))
veth_quiet "nss$$h" "nss$$p" "$NSR" "10.217.$net.1" "10.217.$net.2"
PXR=$(nginx_start pxr stream_splice.conf "$CP" LOAD_STREAM="$LOAD_STREAM" MODULES="$TOP/build" \
	STREAM_LISTEN=10.217.$net.1:$((PORT_ST + 3)) UPSTREAM=127.0.0.1:$UP TIMEOUT=60s) || fail "$PXR"
wait_port 10.217.$net.1 $((PORT_ST + 3))
: >"$PXR/logs/stream.log"
st w0 splice_switched
st r0 splice_refused
tk_client remote "$CR" "$NSR" --connect 10.217.$net.1:$((PORT_ST + 3)) --mode echo --seed 7 \
	--bytes $((4 * MIB)) --conns 4 --parallel 4 --timeout 60
crc=$?
tk_ok remote "a remote client through nginx: every byte back exact and in order (exit $crc)"
st w1 splice_switched
st r1 splice_refused
assert_eq $((w1 - w0)) 0 "remote client: nothing switched"
assert_ge $((r1 - r0)) 4 "remote client: the OFFERs refused (+$((r1 - r0)))"
assert_ge "$(grep -c 'not spliced: client not redirected' "$PXR/logs/error.log")" 4 \
	"remote client: nginx says why each session was relayed"
LOG=$PXR/logs/stream.log
log_lines 4
assert_eq "$(awk '$1 != "spliced" && $2 == 4194304 && $5 == 4194304' "$LOG" | wc -l)" 4 \
	"remote client: the log lines count every relayed byte, none says spliced"
LOG=$PX/logs/stream.log

# no query: an agent without --nginx-vars
agent_stop || fail "agent did not exit 0 on SIGTERM"
agent_start -c "$CS" -c "$CP" -c "$CC"
st w0 splice_switched
tk_client plain "$CC" - --connect 127.0.0.1:$PORT_ST --mode echo --seed 6 --bytes $MIB \
	--conns 4 --parallel 4 --timeout 60
crc=$?
tk_ok plain "without the query nginx relays, byte-exact (exit $crc)"
st w1 splice_switched
assert_eq $((w1 - w0)) 0 "nothing switched without the query"
assert_eq "$(grep -c 'no ngx-sockmap agent answers the query' "$PX/logs/error.log")" 1 \
	"nginx said once that nothing answers the query"
agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent exited cleanly"

# timeout: 180
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: a full SOCKHASH is never an error to the application.  With
# --max-sockets 16, 40 keep-alive connections held open at once through a
# proxy nginx (client cgroup C, proxy P, upstream U, all tracked) each get
# two random 64 KiB bodies byte-exact; the connections that found no room are
# counted (fallbacks.no_room), the others were paired; status, status
# --json and /metrics report the size (sockets_max 16) and the fill level
# (sockets_fill = sockets * 100 / 16) while the connections are open, and
# top's header says it (and that the map is full when it is).
# Then: a --max-sockets whose maps the agent's memory cgroup can't hold
# stops the agent with a message that names --max-sockets, attached to
# nothing; and a pinned data plane of another size is refused when
# --max-sockets names a size, adopted at its own size when it does not.
. "$(dirname "$0")/../lib/common.sh"

U=$(cg_make up) || fail "$U"
P=$(cg_make px) || fail "$P"
C=$(cg_make cl) || fail "$C"
PORT_PX=18290 PORT_UP=18291 PORT_M=18292
DIAG_PORTS="$PORT_PX $PORT_UP"
MAX=16 CONNS=40

up=$(nginx_start up upstream.conf "$U" LISTEN=127.0.0.1:$PORT_UP SENDFILE=off)
head -c 65536 /dev/urandom >"$up/html/body.bin"
nginx_start px proxy.conf "$P" LISTEN=127.0.0.1:$PORT_PX UPSTREAM=127.0.0.1:$PORT_UP >/dev/null
wait_port 127.0.0.1 $PORT_UP
wait_port 127.0.0.1 $PORT_PX

agent_start -c "$P" -c "$U" -c "$C" --max-sockets $MAX --metrics 127.0.0.1:$PORT_M
st max sockets_max
assert_eq "$max" $MAX "status: sockets_max is --max-sockets"

cat >"$TMP/many.py" <<'EOF'
import hashlib, os, socket, sys, time
sys.path.insert(0, sys.argv[1])
from httpresp import read_response
port, n, want, tmp = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(n)]
bufs = [bytearray() for _ in socks]
def round_(r):
    for s in socks:
        s.sendall(b"GET /body.bin HTTP/1.1\r\nHost: t\r\n\r\n")
    for i, s in enumerate(socks):
        line, body = read_response(s, bufs[i])
        if not line.endswith("200 OK") or hashlib.sha256(body).hexdigest() != want:
            print("round %d connection %d: %s, %d bytes, sha256 %s" %
                  (r, i, line, len(body), hashlib.sha256(body).hexdigest()))
            sys.exit(1)
round_(1)
open(tmp + "/phase1.done", "w").close()
while not os.path.exists(tmp + "/phase2.go"):
    time.sleep(0.05)
round_(2)
print("ok %d connections, 2 rounds" % n)
EOF
want=$(sha256sum <"$up/html/body.bin" | cut -d' ' -f1)
cg_exec "$C" python3 "$TMP/many.py" "$TOP/tests/lib" $PORT_PX $CONNS "$want" "$TMP" \
	>"$TMP/many.out" 2>&1 &
CLIENT=$!
on_exit "kill $CLIENT 2>/dev/null"
for _ in $(seq 1 300); do
	[ -e "$TMP/phase1.done" ] && break
	kill -0 $CLIENT 2>/dev/null || break
	sleep 0.1
done
[ -e "$TMP/phase1.done" ] || fail_diag "first round: $(cat "$TMP/many.out")"

# all 40 client connections (and the proxy's upstream ones) are open now
st socks sockets
st fill sockets_fill
st noroom fallbacks.no_room
st added sockets_total
st pairs pairs
assert_le "$socks" $MAX "sockets tracked, with the map full"
assert_eq "$fill" $((socks * 100 / MAX)) "sockets_fill is sockets of sockets_max"
# Every connection, the CONNS client ones and the proxy's upstream ones
# (as many as nginx opened: from 17 to 40 seen, its keep-alive pool
# serves some requests one after the other), either paired or was counted
# once as no room, by whichever end found the map full (its peer then
# counts no_peer).  Not per socket: a slot can be used twice (a proxy end
# whose upstream found no room withdraws at its first send, and a later
# socket takes its slot).  With all CONNS client connections open at once
# and a pair holding two slots, at most MAX / 2 of them are paired now.
ups=$(ss -Htn state established "( dport = :$PORT_UP )" | wc -l)
log "fallbacks: $("$AGENT" status --json | python3 -c 'import json, sys; print({k: v for k, v in json.load(sys.stdin)["fallbacks"].items() if v})')"
assert_ge $((noroom + pairs)) $((CONNS + ups)) \
	"connections paired or counted as no room ($CONNS client, $ups upstream; $added inserted)"
assert_ge "$noroom" $((CONNS - MAX / 2)) "most client connections found no room"
assert_ge "$pairs" 1 "connections that found room were paired"
"$AGENT" status | grep -Eq "^sockets_fill +$fill%" ||
	fail "status text has no sockets_fill line: $("$AGENT" status | grep sockets)"
"$AGENT" top --once -d 0.3 >"$TMP/top.txt" 2>&1 || fail "top failed: $(cat "$TMP/top.txt")"
grep -Eq "^sockets $socks of $MAX \($fill% full(: new connections use TCP, no_room)?\)$" "$TMP/top.txt" ||
	fail "top shows no fill level: $(head -3 "$TMP/top.txt")"
if [ "$socks" -ge $MAX ]; then
	grep -q "^sockets $socks of $MAX ($fill% full: new connections use TCP, no_room)$" \
		"$TMP/top.txt" || fail "top does not say the map is full: $(head -3 "$TMP/top.txt")"
fi
ok "top: $(grep '^sockets ' "$TMP/top.txt")"
curl -s --noproxy '*' http://127.0.0.1:$PORT_M/metrics >"$TMP/metrics"
grep -qx "ngx_sockmap_sockets_max $MAX" "$TMP/metrics" ||
	fail "/metrics: $(grep sockets_max "$TMP/metrics")"
grep -q '^ngx_sockmap_fallbacks_total{reason="no_room"} [1-9]' "$TMP/metrics" ||
	fail "/metrics: no_room not counted: $(grep no_room "$TMP/metrics")"

st rb0 redirected_bytes
touch "$TMP/phase2.go"
wait $CLIENT || fail_diag "second round: $(cat "$TMP/many.out")"
st rb1 redirected_bytes
assert_ge $((rb1 - rb0)) 65536 "the paired connections' second round was redirected"
ok "$CONNS connections over a map of $MAX: every body byte-exact, $noroom no_room, fill $fill%"
agent_stop || fail "agent exit status $?"

# --max-sockets the agent's memory can't hold: four maps of 2^24
# 16-byte buckets (1 GiB, sock_map.c sock_hash_alloc, hashtab.c) in a
# memory cgroup of 256 MiB: refused with a message, nothing left attached
# memory cgroup: v2 where the controller is there, else v1 (this host
# mounts memory on v1); bpf map memory is charged to either
# (kernel/bpf/syscall.c bpf_map_area_alloc, __GFP_ACCOUNT)
# (the controller enabled for the root's children: in its subtree_control,
# not just its controllers, or a child has no memory.max: QEMU guests)
if grep -qw memory "$CG2/cgroup.subtree_control" 2>/dev/null; then
	M=$(cg_make mem) || fail "$M"
	echo $((256 << 20)) >"$M/memory.max" || fail "memory.max"
elif [ -w /sys/fs/cgroup/memory/cgroup.procs ]; then
	M=/sys/fs/cgroup/memory/ngx-sockmap-test.$RUN_TAG.$$.mem
	mkdir "$M" || fail "mkdir $M"
	on_exit "rmdir '$M'"
	echo $((256 << 20)) >"$M/memory.limit_in_bytes" || fail "memory.limit_in_bytes"
else
	M=
fi
if [ -n "$M" ]; then
	cg_exec "$M" "$AGENT" run --no-follow --guard-idle 0 --metrics off -c "$P" \
		--max-sockets 16777216 >"$TMP/big.out" 2>"$TMP/big.err"
	rc=$?
	[ $rc -ne 0 ] || fail "agent ran with maps its memory cgroup can't hold"
	grep -q "could not be allocated.*--max-sockets" "$TMP/big.err" ||
		fail "no message naming --max-sockets: $(tail -3 "$TMP/big.err")"
	bpftool cgroup show "$P" 2>/dev/null | grep -q sock_ops &&
		fail "sock_ops left attached to $P after the refusal"
	ok "maps too big for the agent's memory: refused, naming --max-sockets (exit $rc)"
else
	log "no memory cgroup to limit the agent in: allocation failure not checked"
fi

# a pinned data plane keeps its size
pin_dir_fresh
agent_start -c "$P" --pin --max-sockets 32
agent_stop || fail "pinned agent exit status $?"
"$AGENT" run --no-follow --guard-idle 0 --metrics off -c "$P" --pin --max-sockets 64 \
	>"$TMP/pin.out" 2>"$TMP/pin.err" && fail "a pinned data plane of 32 sockets resized to 64"
grep -q "holds 32 sockets, --max-sockets asks for 64" "$TMP/pin.err" ||
	fail "refusal does not say why: $(tail -3 "$TMP/pin.err")"
agent_start -c "$P" --pin
st max sockets_max
assert_eq "$max" 32 "without --max-sockets the pinned size is adopted"
agent_stop || fail "adopting agent exit status $?"
ok "pinned data plane: another --max-sockets refused, the default adopts its size"

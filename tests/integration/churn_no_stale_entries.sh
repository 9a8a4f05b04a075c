# timeout: 200
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: short connections leave no state behind.  100,000 connections
# (one request/response each, both ends attached, 8 at a time, all within
# 60 s) complete byte-exact and each forms one pair; then 20,000 in which
# the client never sends a byte (it half-closes at once and reads the
# server's answer: its endpoint can't be settled at a send); then 10,000
# that the client resets right after connect (no byte either way, no
# packet in after the handshake: only the close can clean up).  Once all
# are closed, status sockets, maps.sock_hash and maps.endpoints must all
# return to 0, and pairs must have grown by about the connection count.
# Runs in a private network namespace (wide local port range, tcp_tw_reuse
# there only); in the first phase the server closes first, so TIME_WAIT
# stays on the server side and the client's ports are reusable at once.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
NCONN=100000 NSILENT=20000 NRST=10000
ns_new N churn
ip netns exec "$N" sysctl -qw net.ipv4.ip_local_port_range="10000 65000" \
	net.ipv4.tcp_tw_reuse=1 || fail "sysctl in $N"
cg_new CS srv
cg_new CC cli
agent_start -c "$CS" -c "$CC"

st p0 pairs
st s0 sockets_total
st m0 redirected_msgs
tk_server s "$CS" "$N" --listen 127.0.0.1:9000 --mode rr --threads 8 --conns $NCONN \
	--duration 90 --timeout 10 --quiet
tk_client c "$CC" "$N" --connect 127.0.0.1:9000 --mode rr --conns $NCONN --parallel 8 \
	--duration 60 --timeout 10 --req-size 100 --resp-size 300
crc=$?
[ $crc = 0 ] || kill "${PID[s]}" 2>/dev/null
tk_wait s
tk_ok c "client: every connection checked (exit $crc)"
tk_ok s "server: every connection checked"
assert_eq "$(rf c conns)" $NCONN "all $NCONN connections completed within 60 s"
log "elapsed $(rf c elapsed_ms) ms"

# The client never sends: it shuts its write side at once, the server
# answers the EOF with an ack and 1000 bytes and closes.
tk_server s2 "$CS" "$N" --listen 127.0.0.1:9001 --mode verify --threads 8 \
	--conns $NSILENT --expect-bytes 0 --reply-bytes 1000 --duration 60 --timeout 10 --quiet
tk_client c2 "$CC" "$N" --connect 127.0.0.1:9001 --mode verify --bytes 0 \
	--conns $NSILENT --parallel 8 --duration 40 --timeout 10
crc=$?
[ $crc = 0 ] || kill "${PID[s2]}" 2>/dev/null
tk_wait s2
tk_ok c2 "client of silent connections: every answer checked (exit $crc)"
tk_ok s2 "server of silent connections: no byte received on any"
assert_eq "$(rf c2 conns)" $NSILENT "all $NSILENT silent connections completed"

# The client resets right after connect: no byte either way, and no packet
# in for the client after the handshake, so only the close can clean up.
tk_server s3 "$CS" "$N" --listen 127.0.0.1:9002 --mode verify --threads 8 \
	--conns $NRST --expect-bytes 0 --allow-reset --duration 60 --timeout 10 --quiet
tk_client c3 "$CC" "$N" --connect 127.0.0.1:9002 --mode verify --bytes 0 --rst-after 0 \
	--conns $NRST --parallel 8 --duration 40 --timeout 10
crc=$?
[ $crc = 0 ] || kill "${PID[s3]}" 2>/dev/null
tk_wait s3
tk_ok c3 "client of reset connections: every one reset (exit $crc)"
tk_ok s3 "server of reset connections: each saw the reset or EOF, no byte"
assert_eq "$(rf c3 rst_sent)" $NRST "all $NRST connections closed with RST"

# Everything is closed (server side in TIME_WAIT, which is no full socket):
# the gauges must drain to 0 within a few seconds.
gauges() { # "SOCKETS SOCK_HASH ENDPOINTS" from one status call
	"$AGENT" status --json | python3 -c '
import json, sys
v = json.load(sys.stdin)
print(v["sockets"], v["maps"]["sock_hash"], v["maps"]["endpoints"])'
}
for i in $(seq 1 50); do
	read -r socks sh ep < <(gauges)
	[ "$socks $sh $ep" = "0 0 0" ] && break
	sleep 0.2
done
log "after $i polls: sockets $socks, sock_hash $sh, endpoints $ep"
if [ "$socks $sh $ep" != "0 0 0" ]; then
	log "TCP sockets left in $N by state:" \
		"$(ip netns exec "$N" ss -Htan | awk '{ print $1 }' | sort | uniq -c | tr '\n' ' ')"
	ip netns exec "$N" ss -Htanoi state all | grep -v TIME-WAIT | head -n 20 | sed 's/^/#   /'
	log "status: $("$AGENT" status --json)"
fi
assert_eq "$socks" 0 "status sockets back to 0"
assert_eq "$sh" 0 "maps.sock_hash empty"
assert_eq "$ep" 0 "maps.endpoints empty"

st p1 pairs
st s1 sockets_total
st m1 redirected_msgs
log "pairs +$((p1 - p0)) sockets_total +$((s1 - s0)) redirected_msgs +$((m1 - m0))"
log "fallbacks: $(fallbacks)"
TOTAL=$((NCONN + NSILENT + NRST))
assert_ge $((p1 - p0)) $((TOTAL * 95 / 100)) "pairs grew by about the connection count"
assert_le $((p1 - p0)) $TOTAL "no more pairs than connections"
assert_ge $((s1 - s0)) $((2 * TOTAL * 95 / 100)) "both ends of the connections were tracked"

agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent exited cleanly"

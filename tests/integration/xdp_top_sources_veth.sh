#!/usr/bin/env bash
# timeout: 60
# Proves: with a known traffic mix on a veth from a namespace the test made
# (three sources: 300 small, 200 small, 100 large frames), the agent's top
# talkers rank the sources exactly, by packets and by bytes, with exact
# counts (/metrics: the agent's 10 s window), and `ngx-sockmap top`, running
# meanwhile, shows the same ranking.
. "$(dirname "$0")/../lib/common.sh"

cg=$(cg_make topk)
ns=$(ns_make topk)
host=vsm$$h
peer=vsm$$p
veth_quiet "$host" "$peer" "$ns" 10.213.10.1 10.213.10.2 10.213.10.3 10.213.10.4
port=19438
agent_start -c "$cg" --xdp "$host" --metrics 127.0.0.1:$port
sleep 1.2 # a first window snapshot before the traffic
# send FROM COUNT PAYLOAD: UDP datagrams from FROM to the host
send() {
	ip netns exec "$ns" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 0))
for i in range(int(sys.argv[2])):
    s.sendto(b"x" * int(sys.argv[3]), ("10.213.10.1", 9))' "$@"
}
# `top` ranks what it sees while it runs (its window starts with it, like
# top(1)): start it first, send, and its one frame covers the traffic
"$AGENT" top --once -d 4 >"$TMP/top.txt" 2>"$TMP/top.err" &
top_pid=$!
on_exit "kill $top_pid"
sleep 0.5
send 10.213.10.2 300 100
send 10.213.10.3 200 100
send 10.213.10.4 100 1400
sleep 1.5 # the agent's window reads the map once a second
curl -s "127.0.0.1:$port/metrics" >"$TMP/metrics.txt" || fail "scrape failed"
get() { sed -n "s/^$1 //p" "$TMP/metrics.txt"; }
small=$((14 + 20 + 8 + 100)) large=$((14 + 20 + 8 + 1400))
# nth NAME RANK: the RANK-th series of NAME, "SOURCE VALUE" (the agent
# writes them busiest first; no rank label, so a series is one source)
nth() { sed -n "s/^$1{source=\"\([^\"]*\)\"} /\1 /p" "$TMP/metrics.txt" | sed -n "$2p"; }
for r in 1:10.213.10.2:300 2:10.213.10.3:200 3:10.213.10.4:100; do
	IFS=: read -r rank src n <<<"$r"
	assert_eq "$(nth ngx_sockmap_top_source_packets "$rank")" "$src $n" \
		"by packets, rank $rank: $src with $n"
done
assert_eq "$(nth ngx_sockmap_top_source_bytes 1)" "10.213.10.4 $((100 * large))" \
	"by bytes, rank 1: the large-frame source"
assert_eq "$(nth ngx_sockmap_top_source_bytes 2)" "10.213.10.2 $((300 * small))" \
	"by bytes, rank 2: 10.213.10.2"
assert_eq "$(grep -c '^ngx_sockmap_top_source_packets{' "$TMP/metrics.txt")" 3 \
	"exactly the three sources ranked"

wait "$top_pid" || fail "top failed: $(cat "$TMP/top.err")"
sed 's/^/#   /' "$TMP/top.txt"
awk '/^top sources/ { on = 1; next } on && NF == 0 { exit } on { print $1 }' "$TMP/top.txt" \
	>"$TMP/order"
assert_eq "$(paste -sd' ' "$TMP/order")" "10.213.10.2 10.213.10.3 10.213.10.4" \
	"top lists the sources in packet order"
grep -q '^  10.213.10.2 .* 300 ' "$TMP/top.txt" || fail "top: 10.213.10.2 without its 300 packets"
ok "top shows the counts"
agent_stop || fail "agent did not exit 0"

#!/usr/bin/env bash
# timeout: 90
# Proves: on a kernel without BPF arena (before 6.9: Debian 12's 6.1) the
# data plane loads with its events on a BPF ring buffer instead, and the
# agent reads them through the same interface: NGX_SOCKMAP_TEST_NO_ARENA=1 takes
# that path here.  A local pair gives one "paired" and two "closed" events,
# a connection from an unattached cgroup a "fallback", /metrics counts them
# with no gaps and says ringbuf, status says which transport, top says why
# it shows no events, and the pair is redirected as usual.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
cg_new CS srv
cg_new CC cli
cg_new CX other
port=19438
NGX_SOCKMAP_TEST_NO_ARENA=1 agent_start -c "$CS" -c "$CC" --metrics 127.0.0.1:$port
grep -q '"connections":"ringbuf"' <("$AGENT" status --json) ||
	fail "status --json does not say the ringbuf transport: $("$AGENT" status --json | head -c 300)"
ok "status: connection events on a ring buffer"
"$AGENT" status | grep -q "^events *ringbuf" || fail "status text does not name the transport"
ok "status text names the transport"
st r0 redirected_msgs

tk_pair_and_outsider "$CS" "$CC" "$CX"
st r1 redirected_msgs
assert_ge $((r1 - r0)) 2 "the pair was redirected"
sleep 1.5 # the tick consumes what the ring buffer's own wake-ups did not

curl -s "127.0.0.1:$port/metrics" >"$TMP/metrics.txt" || fail "scrape failed"
get() { sed -n "s/^$1 //p" "$TMP/metrics.txt"; }
assert_eq "$(get 'ngx_sockmap_event_transport_info{ring="connections",transport="ringbuf"}')" 1 \
	"/metrics: ringbuf transport"
assert_eq "$(get 'ngx_sockmap_ring_events_total{kind="paired"}')" 1 "one paired event"
assert_eq "$(get 'ngx_sockmap_ring_events_total{kind="closed"}')" 2 "two closed events"
assert_ge "$(get 'ngx_sockmap_ring_events_total{kind="fallback"}')" 1 "a fallback event"
assert_eq "$(get 'ngx_sockmap_ring_gaps_total{ring="connections"}')" 0 "no ring gaps"
"$AGENT" top --once -d 0.3 >"$TMP/top.txt" 2>&1 || fail "top failed: $(cat "$TMP/top.txt")"
grep -q "no BPF arena on this kernel" "$TMP/top.txt" || fail "top does not say why no events: $(cat "$TMP/top.txt")"
ok "top says why it shows no events"
agent_stop || fail "agent did not exit 0"
ok "agent exited cleanly"

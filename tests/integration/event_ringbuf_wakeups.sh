#!/usr/bin/env bash
# timeout: 150
# Proves: on the ring buffer transport (kernels without BPF arena, or a
# policy that refuses arena maps; NGX_SOCKMAP_TEST_NO_ARENA=1 takes it
# here) connection events wake the agent in batches, not once per event.
# 3,000 short paired connections (a "paired" and two "closed" events each)
# in a private namespace may cost the agent at most one context switch per
# 16 events, and every event still arrives: /metrics counts them by kind,
# no gaps.  With the ring buffer's own wake-up rule (flags 0: wake when the
# reader had caught up) an agent that drains at once woke for most events.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
NCONN=3000
ns_new N wake
cg_new CS srv
cg_new CC cli
port=19439
NGX_SOCKMAP_TEST_NO_ARENA=1 agent_start -c "$CS" -c "$CC" --metrics 127.0.0.1:$port
grep -q '"connections":"ringbuf"' <("$AGENT" status --json) ||
	fail "not on the ring buffer transport: $("$AGENT" status --json | head -c 300)"

# voluntary context switches of every thread of the agent: each one is a
# wait that ended (epoll_wait woken, or a lock)
switches() {
	cat /proc/"$AGENT_PID"/task/*/status 2>/dev/null |
		awk '/^voluntary_ctxt_switches/ { n += $2 } END { print n + 0 }'
}
st p0 pairs
v0=$(switches)
t0=$(date +%s%N)
tk_server s "$CS" "$N" --listen 127.0.0.1:9000 --mode rr --threads 4 --conns $NCONN \
	--duration 60 --timeout 10 --quiet
tk_client c "$CC" "$N" --connect 127.0.0.1:9000 --mode rr --conns $NCONN --parallel 4 \
	--duration 40 --timeout 10 --req-size 100 --resp-size 300
crc=$?
[ $crc = 0 ] || kill "${PID[s]}" 2>/dev/null
tk_wait s
v1=$(switches)
t1=$(date +%s%N)
tk_ok c "client: every connection checked (exit $crc)"
tk_ok s "server: every connection checked"
st p1 pairs
pairs=$((p1 - p0))
assert_ge "$pairs" $((NCONN * 9 / 10)) "connections paired"
# the agent's tick (once a second) and its other sources wake it besides
secs=$(((t1 - t0) / 1000000000 + 1))
events=$((pairs * 3))
woke=$((v1 - v0))
log "$pairs pairs, $events events in ${secs}s: the agent woke $woke times"
assert_le "$woke" $((events / 16 + 4 * secs)) "agent wake-ups during the churn"

sleep 1.5 # the tick drains what waits below a batch
curl -s "127.0.0.1:$port/metrics" >"$TMP/metrics.txt" || fail "scrape failed"
get() { sed -n "s/^$1 //p" "$TMP/metrics.txt"; }
assert_ge "$(get 'ngx_sockmap_ring_events_total{kind="paired"}')" "$pairs" "every paired event read"
assert_ge "$(get 'ngx_sockmap_ring_events_total{kind="closed"}')" $((2 * pairs)) \
	"every closed event read"
assert_eq "$(get 'ngx_sockmap_ring_gaps_total{ring="connections"}')" 0 "no ring gaps"
agent_stop || fail "agent did not exit 0"
ok "agent exited cleanly"

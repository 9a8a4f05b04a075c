#!/usr/bin/env bash
# timeout: 90
# Proves: the data plane's connection events reach the agent through the
# arena ring and `ngx-sockmap top` reads them in place: a local pair gives
# one "paired" event and two "closed" events carrying exactly the bytes
# each end redirected; a connection from an unattached cgroup gives a
# "fallback" (no_peer) event; /metrics counts them with no ring gaps.
# `top` without an agent, or with a bad --delay: one line, exit 1 / 2.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
cg_new CS srv
cg_new CC cli
cg_new CX other
port=19437
agent_start -c "$CS" -c "$CC" --metrics 127.0.0.1:$port

# one local pair, and one connection whose client is not in an attached
# cgroup
tk_pair_and_outsider "$CS" "$CC" "$CX"
sleep 1.5 # fewer events than a wake-up batch: the agent's 1 s tick reads them

curl -s "127.0.0.1:$port/metrics" >"$TMP/metrics.txt" || fail "scrape failed"
get() { sed -n "s/^$1 //p" "$TMP/metrics.txt"; }
assert_eq "$(get 'ngx_sockmap_ring_events_total{kind="paired"}')" 1 "one paired event"
assert_eq "$(get 'ngx_sockmap_ring_events_total{kind="closed"}')" 2 "two closed events"
assert_ge "$(get 'ngx_sockmap_ring_events_total{kind="fallback"}')" 1 "a fallback event"
assert_eq "$(get 'ngx_sockmap_ring_gaps_total{ring="connections"}')" 0 "no ring gaps"

# top reads the events in place from the arena; where the host refuses
# arena maps they reach only the agent (a ring buffer): top says so
if arena_refused; then
	"$AGENT" top --once -d 0.3 >"$TMP/top.txt" 2>"$TMP/top.err" || fail "top failed: $(cat "$TMP/top.err")"
	grep -q "no BPF arena" "$TMP/top.txt" || fail "top does not say why it shows no events: $(cat "$TMP/top.txt")"
	ok "no arena here: top says events reach only the agent"
else
	"$AGENT" top --once -d 0.3 >"$TMP/top.txt" 2>"$TMP/top.err" || fail "top failed: $(cat "$TMP/top.err")"
	sed 's/^/#   /' "$TMP/top.txt"
	awk 'length > 80 { bad = 1 } END { exit bad }' "$TMP/top.txt" || fail "top output wider than 80 columns"
	ok "top fits 80 columns"
	grep -q "paired   port ${SPORT[s]} " "$TMP/top.txt" || fail "top shows no paired event"
	ok "top shows the pair"
	grep -q "closed   port ${SPORT[s]} .*: 100000 B redirected" "$TMP/top.txt" ||
		fail "no closed event with the client's 100000 redirected bytes"
	grep -q "closed   port ${SPORT[s]} .*: 200064 B redirected" "$TMP/top.txt" ||
		fail "no closed event with the server's 200064 redirected bytes"
	ok "closed events carry exactly the bytes each end redirected"
	grep -q "fallback port ${SPORT[s2]} .*: no_peer" "$TMP/top.txt" || fail "top shows no no_peer fallback"
	ok "top shows the fallback and why"
fi

agent_stop || fail "agent did not exit 0"
out=$("$AGENT" top --once 2>&1)
assert_eq "$?" 1 "top without an agent exits 1"
[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || fail "top without an agent: more than one line: $out"
ok "top without an agent: '$out'"
"$AGENT" top --delay 0 >/dev/null 2>&1
assert_eq "$?" 2 "top --delay 0 is a usage error"

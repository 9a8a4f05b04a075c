# timeout: 120
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: wrk keep-alive load (client cgroup C -> proxy P -> upstream U, all
# accelerated) for 5 s, on a tiny response and on a 64 KiB file, completes
# with zero socket errors and zero non-2xx responses while pairs and
# redirected_msgs move; and once wrk has ended and both nginx are stopped,
# the `sockets` gauge falls back to 0 (every tracked socket seen closing).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/proxy.sh"

# wrk_check OUTFILE LABEL: wrk ran, made requests, no socket errors, no
# non-2xx/3xx responses (wrk prints those lines only when non-zero)
wrk_check() {
	local out=$1 label=$2 reqs
	cat "$out"
	reqs=$(sed -n 's/^ *\([0-9]*\) requests in .*/\1/p' "$out")
	assert_ge "${reqs:-0}" 1000 "$label: requests completed"
	grep -q 'Socket errors' "$out" && fail_diag "$label: wrk $(grep 'Socket errors' "$out")"
	ok "$label: zero socket errors"
	grep -q 'Non-2xx' "$out" && fail_diag "$label: wrk $(grep 'Non-2xx' "$out")"
	ok "$label: zero non-2xx responses"
}

proxy_setup 18200 18201

agent_start -c "$P" -c "$U" -c "$C"
st pairs0 pairs
st msgs0 redirected_msgs

cg_exec "$C" wrk -t2 -c32 -d5s --timeout 4s "http://127.0.0.1:$PORT_PX/hello" \
	>"$TMP/wrk1.out" 2>&1 || fail_diag "wrk exited $?: $(cat "$TMP/wrk1.out")"
wrk_check "$TMP/wrk1.out" "/hello"
st pairs1 pairs
st msgs1 redirected_msgs
log "pairs $pairs0 -> $pairs1, redirected_msgs $msgs0 -> $msgs1"
assert_ge $((pairs1 - pairs0)) 32 "pairs formed (one per wrk connection at least)"
# every request and every response of a paired, never-fallen-back
# direction is a redirected send
assert_ge $((msgs1 - msgs0)) 1000 "redirected_msgs moved"

cg_exec "$C" wrk -t2 -c16 -d5s --timeout 4s "http://127.0.0.1:$PORT_PX/64k.bin" \
	>"$TMP/wrk2.out" 2>&1 || fail_diag "wrk exited $?: $(cat "$TMP/wrk2.out")"
wrk_check "$TMP/wrk2.out" "/64k.bin"
st msgs2 redirected_msgs
assert_ge $((msgs2 - msgs1)) 1000 "redirected_msgs moved with 64 KiB bodies"

st sockets sockets
log "sockets tracked after wrk, nginx still up: $sockets"
nginx_stop "$TMP/nginx-px"
nginx_stop "$TMP/nginx-up"
st_until sockets sockets 0 5
[ "$sockets" = 0 ] || {
	"$AGENT" status
	ss -tanp 'sport >= 18200 and sport <= 18201 or dport >= 18200 and dport <= 18201' | head -20
	fail "sockets gauge is $sockets 5 s after wrk ended and nginx stopped, want 0"
}
ok "sockets gauge back to 0 after wrk and nginx stopped"

agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent exited cleanly"

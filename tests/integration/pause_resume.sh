# timeout: 150
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: `ngx-sockmap pause` stops accelerating new connections: while
# paused, no new socket is tracked (sockets_total does not move,
# fallbacks.paused grows, `paused` reads true) and a new connection moves
# its body through TCP, while a keep-alive connection paired before the
# pause stays redirected (moving a live pair to TCP would hang nginx on this
# kernel: docs/DESIGN.md); every body arrives byte-exact.  `ngx-sockmap
# resume` makes new connections redirected again (counters move, and the
# client's own tcpi_bytes_received shows the body bypassed TCP) while the
# connections made during the pause keep answering byte-exact on TCP.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/proxy.sh"

proxy_setup 18230 18231

# paused_is WANT LABEL: the status `paused` field is true (1) or false (0)
paused_is() {
	local v
	v=$(stat_get paused 2>&1)
	case $v in True | true | 1) v=1 ;; False | false | 0) v=0 ;; esac
	assert_eq "$v" "$1" "$2"
}
# curl_n N LABEL: N fetches of /1m.bin, one new connection each, byte-exact
curl_n() {
	local i sum
	for i in $(seq 1 "$1"); do
		cg_exec "$C" curl --noproxy '*' -sS --max-time 30 -o "$TMP/c.out" \
			"http://127.0.0.1:$PORT_PX/1m.bin" || fail_diag "$2: curl $i failed"
		sum=$(sha256sum <"$TMP/c.out" | cut -d' ' -f1)
		[ "$sum" = "$SUM" ] || fail_diag "$2: curl $i: body differs ($(stat -c %s "$TMP/c.out") bytes)"
	done
	ok "$2: $1 new connections byte-exact"
}
# tcp_rcvd NAME: RCVD = tcpi_bytes_received of keep-alive connection NAME,
# the bytes it got through TCP (redirected bytes bypass that path)
tcp_rcvd() {
	ka rcvd "$1" || fail "tcp_info of $1: $KA_REPLY"
	RCVD=${KA_REPLY#ok }
}

SUM=$(sha256sum <"$html/1m.bin" | cut -d' ' -f1)
ka_start $PORT_PX "$html"

agent_start -c "$P" -c "$U" -c "$C"
paused_is 0 "not paused after start"
st m0 redirected_msgs
ka open k1 || fail "keep-alive connection: $KA_REPLY"
ka_get k1 /1m.bin "connection paired before the pause answers byte-exact"
curl_n 3 "before pause"
st m1 redirected_msgs
assert_ge $((m1 - m0)) 4 "redirected_msgs moves before the pause"

"$AGENT" pause >"$TMP/pause.out" 2>&1 || fail "pause exited $?: $(cat "$TMP/pause.out")"
ok "pause exits 0"
paused_is 1 "status says paused"
st m_a redirected_msgs
st p_a fallbacks.paused
st s_a sockets_total

curl_n 5 "while paused"
ka_get k1 /1m.bin "connection paired before the pause answers while paused"
ka open k2 || fail "new keep-alive connection while paused: $KA_REPLY"
ka_get k2 /1m.bin "connection made while paused answers byte-exact"
tcp_rcvd k2
assert_ge "$RCVD" $MIB "connection made while paused received the body through TCP"
ka_get k1 /1m.bin "connection paired before the pause answers again"

st m_b redirected_msgs
st p_b fallbacks.paused
st s_b sockets_total
assert_eq "$s_b" "$s_a" "no new socket tracked while paused"
assert_ge $((p_b - p_a)) 6 "fallbacks.paused counts the new connections' sockets"
# k1 fetched 1 MiB twice while paused: its pair kept redirecting (a pause
# that moved live pairs to TCP would leave this at 0)
assert_ge $((m_b - m_a)) 2 "the pair made before the pause kept redirecting"

"$AGENT" resume >"$TMP/resume.out" 2>&1 || fail "resume exited $?: $(cat "$TMP/resume.out")"
ok "resume exits 0"
paused_is 0 "status says not paused"

st m_c redirected_msgs
curl_n 3 "after resume"
ka open k3 || fail "new keep-alive connection after resume: $KA_REPLY"
ka_get k3 /1m.bin "connection made after resume answers byte-exact"
tcp_rcvd k3
assert_le "$RCVD" $((MIB / 2)) "connection made after resume is redirected (bytes through TCP)"
st m_d redirected_msgs
assert_ge $((m_d - m_c)) 4 "redirected_msgs moves again after resume"

ka_get k1 /1m.bin "connection that fell back during the pause answers after resume"
ka_get k2 /1m.bin "connection made during the pause answers after resume"
ka_get k3 /1m.bin "connection made after resume answers again"

agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent exited cleanly"

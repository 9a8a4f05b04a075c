# timeout: 180
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: a tracked active end whose peer never pairs is out of the
# SOCKHASH by the time a TCP byte is queued to it, even when its first
# packet in skips the sock_ops header-option callback it withdraws from.
# Only the slow path of tcp_rcv_established() calls tcp_validate_incoming
# -> bpf_skops_parse_hdr (net/ipv4/tcp_input.c), and a peer that announced
# window scale 0 gets header prediction from its first segment on
# (tcp_finish_connect: __tcp_fast_path_on when !snd_wscale, else
# pred_flags = 0).
# The client (attached cgroup) connects to a server that is not tracked
# (not attached), which speaks first: 1000 bytes, then waits.  Three
# cases, each in a fresh netns: the server's listener with SO_RCVBUF 4096
# before listen (window scale 0 in its SYN-ACK), window scaling off in the
# netns (net.ipv4.tcp_window_scaling=0, per netns), and a default
# listener (scale > 0: the slow path; the control).  With the first bytes
# queued and nothing sent: the client is out of the SOCKHASH and the
# endpoints map (back to the count before), and FIONREAD says 1000 (a
# socket with a psock counts only its redirected bytes on 6.18,
# tcp_bpf_ioctl: it would say 0).  The control was tracked and withdrew
# (fallbacks.no_peer); a window-scale-0 end is never tracked
# (fallbacks.no_wscale; before that, on 6.18, it stayed in the SOCKHASH
# and FIONREAD said 0).  Then the client asks for 24 MiB and reads them
# the way nginx does (edge-triggered, a full read followed by FIONREAD = 0
# waits for the next edge): byte-exact, no stall.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
PY=$TOP/tests/lib/withdraw_probe.py
cg_new CC cli
agent_start -c "$CC"

# one CASE RCVBUF WSCALING HOW: one connection, every check; HOW the
# client end must have kept out of the SOCKHASH: withdrawn (tracked, left
# at its first packet in) or untracked (never inserted: no_wscale)
one() {
	local name=$1 rcvbuf=$2 wscaling=$3 how=$4 ns d
	d=$TMP/$name
	mkdir -p "$d"
	ns_new ns "$name"
	ip netns exec "$ns" sysctl -qw net.ipv4.tcp_window_scaling="$wscaling"
	st h0 maps.sock_hash
	st e0 maps.endpoints
	st n0 fallbacks.no_peer
	st a0 sockets_total
	# (read as 0 where the counter does not exist: the assertions say so)
	w0=$(stat_get fallbacks.no_wscale 2>/dev/null) || w0=0
	# the server: this test's own cgroup, never attached
	ip netns exec "$ns" python3 "$PY" server "$d" "$rcvbuf" >"$d/server.log" 2>&1 &
	local spid=$!
	on_exit "kill $spid"
	wait_file "$d/port" "$name: server listening"
	in_cg_ns "$CC" "$ns" timeout 60 python3 "$PY" client "$d" "$(cat "$d/port")" \
		>"$d/client.log" 2>&1 &
	local cpid=$!
	on_exit "kill $cpid"
	wait_file "$d/first" "$name: client got the first bytes"
	st a1 sockets_total
	st h1 maps.sock_hash
	st e1 maps.endpoints
	st n1 fallbacks.no_peer
	w1=$(stat_get fallbacks.no_wscale 2>/dev/null) || w1=0
	local first
	first=$(cat "$d/first")
	log "$name: first packet in: $first; sock_hash $h0 -> $h1," \
		"endpoints $e0 -> $e1, no_peer +$((n1 - n0)), no_wscale +$((w1 - w0))," \
		"sockets_total +$((a1 - a0))"
	# The fast path is what this test is about: say whether it was taken
	# (TCPHPHits counts in-order data segments it queued; a first segment
	# the prediction matched but sk_forward_alloc could not hold goes to
	# step5, uncounted, and skips the callback all the same).
	log "$name: TCPHPHits in the netns during the first bytes: $(py_field "$first" hp_hits_first)"
	assert_eq "$(py_field "$first" queued_first)" 1000 "$name: the server's 1000 bytes are queued"
	assert_eq "$h1" "$h0" "$name: the client is not in the SOCKHASH with TCP bytes queued"
	assert_eq "$e1" "$e0" "$name: nor in the endpoints map"
	assert_eq "$(py_field "$first" fionread_first)" 1000 "$name: FIONREAD counts the TCP bytes"
	case $how in
	withdrawn)
		assert_eq $((a1 - a0)) 1 "$name: the client end was tracked (inserted at ESTABLISHED)"
		assert_eq $((n1 - n0)) 1 "$name: and withdrew at its first packet in (fallbacks.no_peer)"
		;;
	untracked)
		assert_eq $((a1 - a0)) 0 "$name: the client end was not tracked"
		assert_eq $((w1 - w0)) 1 "$name: fallbacks.no_wscale counted it"
		;;
	esac
	touch "$d/go"
	wait "$cpid"
	wait "$spid" || fail "$name: server failed: $(tail -n 3 "$d/server.log")"
	[ -s "$d/result" ] || fail "$name: client wrote no result: $(tail -n 3 "$d/client.log")"
	log "$name: $(cat "$d/result")"
	assert_eq "$(py_field "$(cat "$d/result")" ok)" 1 \
		"$name: 24 MiB read nginx's way, byte-exact, no stall"
	assert_eq "$(stat_get maps.sock_hash)" "$h0" "$name: nothing left in the SOCKHASH"
}
# py_field JSON KEY
py_field() {
	python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get(sys.argv[2], ""))' "$1" "$2"
}

one rcvbuf 4096 1 untracked
one noscale 0 0 untracked
one control 0 1 withdrawn

agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent exited cleanly"

# timeout: 120
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: IPv6 connections pair and redirect byte-exact: a [::1] server
# with a [::1] client (half-duplex 4 MiB each way, then a paced full-duplex
# echo whose whole payload must go through the redirect),
# and a [::] dual-stack listener (IPV6_V6ONLY=0) accepting a plain IPv4
# client on 127.0.0.1: the server end is an AF_INET6 socket with
# v4-mapped addresses (::ffff:127.0.0.1), the client end plain AF_INET,
# and the two must still be recognised as one connection (pairs >= 1,
# redirected bytes > 0), with every byte checked.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
[ -e /proc/net/if_inet6 ] || skip "no IPv6 in this kernel"
[ "$(cat /proc/sys/net/ipv6/conf/lo/disable_ipv6 2>/dev/null)" = 0 ] || skip "IPv6 disabled on lo"
grep -q '^0\{31\}1 ' /proc/net/if_inet6 || skip "::1 not configured on lo"

cg_new CS srv
cg_new CC cli
agent_start -c "$CS" -c "$CC"

BYTES=$((4 * MIB))
seed=600
# pair_run NAME LISTEN CONNECT_HOST MODE: one connection, checked, paired.
# MODE paced is echo with 64 KiB in flight at most: the reader keeps up, so
# the whole payload goes through the redirect.  In the other modes a
# direction may move to TCP (slow_reader) mid-stream, so only "some".
pair_run() {
	local name=$1 listen=$2 host=$3 mode=$4 reply=() extra=() want=1
	seed=$((seed + 1))
	[ "$mode" = verify ] && reply=(--reply-bytes $BYTES)
	[ "$mode" = paced ] && mode=echo extra=(--window 64K --chunk 16K) want=$BYTES
	st p0 pairs
	st b0 redirected_bytes
	tk_server s_$name "$CS" - --listen "$listen" --mode $mode --seed $seed --conns 1 \
		--expect-bytes $BYTES "${reply[@]}" --duration 60
	tk_client c_$name "$CC" - --connect "$host:${SPORT[s_$name]}" --mode $mode \
		--seed $seed --bytes $BYTES "${extra[@]}"
	tk_wait s_$name
	tk_ok s_$name "$name: server got every byte right"
	tk_ok c_$name "$name: client got every byte right"
	assert_eq "$(rf s_$name bytes_in)" $BYTES "$name: server read exactly the payload"
	st p1 pairs
	st b1 redirected_bytes
	log "$name: pairs +$((p1 - p0)) redirected_bytes +$((b1 - b0))"
	assert_ge $((p1 - p0)) 1 "$name: paired"
	assert_ge $((b1 - b0)) $want "$name: redirected_bytes grew (by the payload if paced)"
}

pair_run v6_verify "[::1]:0" "[::1]" verify
pair_run v6_paced "[::1]:0" "[::1]" paced
pair_run dual_v4_client "[::]:0" 127.0.0.1 verify
pair_run dual_v4_paced "[::]:0" 127.0.0.1 paced
pair_run dual_v6_client "[::]:0" "[::1]" paced
log "fallbacks: $(fallbacks)"

agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent exited cleanly"

# timeout: 180
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: with a tcpkit client and server in two different attached
# cgroups, 1 MiB and 20 MiB streams cross the sockmap redirect byte-exact in
# both directions: every byte the server reads and every byte the client
# reads back is checked against the seeded pattern.  Three shapes:
#  - paced echo (at most 64 KiB in flight): the reader always keeps up, so
#    the whole payload must go through the redirect (redirected_bytes grows
#    by at least the payload each way that redirects; at least once);
#  - verify (client sends N and half-closes; server checks and answers with
#    N bytes of its own pattern) and unpaced echo: the writer outruns the
#    reader, so a direction may move to TCP for good (slow_reader) in the
#    middle of the stream; the bytes must still be exact and in order, some
#    must have been redirected, and every byte is counted as either
#    redirected or TCP.
# Each run must form a pair.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
cg_new CS srv
cg_new CC cli
agent_start -c "$CS" -c "$CC"

seed=100
for size in 1 20; do
	bytes=$((size * MIB))
	for shape in paced verify echo; do
		seed=$((seed + 1))
		name=${shape}_${size}m
		mode=$shape extra=() reply=() ack=0
		case $shape in
		paced) mode=echo extra=(--window 64K --chunk 16K) ;;
		verify) reply=(--reply-bytes $bytes) ack=64 ;; # ack line before the answer
		esac
		st p0 pairs
		st b0 redirected_bytes
		st t0 tcp_bytes
		st r0 fallbacks.slow_reader
		tk_server s_$name "$CS" - --listen 127.0.0.1:0 --mode $mode --seed $seed \
			--conns 1 --expect-bytes $bytes "${reply[@]}" --duration 60
		tk_client c_$name "$CC" - --connect 127.0.0.1:${SPORT[s_$name]} --mode $mode \
			--seed $seed --bytes $bytes "${extra[@]}"
		crc=$?
		tk_wait s_$name
		srv_rc=$?
		tk_ok s_$name "$shape ${size} MiB: server got every byte right (exit $srv_rc)"
		tk_ok c_$name "$shape ${size} MiB: client got every byte right (exit $crc)"
		assert_eq "$(rf s_$name bytes_in)" $bytes "$shape ${size} MiB: server read exactly the payload"
		assert_eq "$(rf c_$name bytes_in)" $((bytes + ack)) \
			"$shape ${size} MiB: client read exactly the answer"
		st p1 pairs
		st b1 redirected_bytes
		st t1 tcp_bytes
		st r1 fallbacks.slow_reader
		log "pairs +$((p1 - p0)), redirected_bytes +$((b1 - b0)), tcp_bytes +$((t1 - t0))," \
			"slow_reader +$((r1 - r0))"
		assert_ge $((p1 - p0)) 1 "$shape ${size} MiB: the connection was paired"
		if [ $shape = paced ]; then
			assert_ge $((b1 - b0)) $bytes "$shape ${size} MiB: redirected_bytes grew by the payload"
		else
			assert_ge $((b1 - b0)) 1 "$shape ${size} MiB: bytes were redirected"
		fi
		assert_ge $((b1 - b0 + t1 - t0)) $((2 * bytes + ack)) \
			"$shape ${size} MiB: every byte counted as redirected or TCP"
	done
done
log "fallbacks: $(fallbacks)"

agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent exited cleanly"

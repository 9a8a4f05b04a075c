# timeout: 160
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: the host-wide budget of unread redirected bytes.  Two stalled
# readers, each far below --max-unread (64 MiB), hold 6 MiB and 3 MiB
# unread: 9 MiB, over --unread-budget 8M.  Within a tick the agent ends the
# largest connection (both ends reset, resets.budget +1) and only that
# one: the other reader, once it reads, gets its 3 MiB exactly.  The
# gauges show the budget and the unread bytes (3 to 9 MiB while stalled).  Once per tier (common.sh
# tiers): the iterators where the host loads them, and the weakest (the
# watch scan, sock_diag resets).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
PY=$TOP/tests/lib/stalled_reader.py
cg_new CS srv
cg_new CC cli
for ((h = 0; h < ${#TIERS_TODO[@]}; h++)); do
# shellcheck disable=SC2046
agent_start -c "$CS" -c "$CC" --unread-budget 8M $(tier_args "${TIERS_TODO[h]}")
tier_check "${TIERS_TODO[h]}"
log "--- tier: $TIER"
st b0 resets.budget
export READER_HOLD_SECS=4
for x in big:$((6 << 20)) small:$((3 << 20)); do
	name=${x%%:*} bytes=${x#*:}
	D=$TMP/$name-$h
	mkdir -p "$D"
	cg_exec "$CS" python3 "$PY" reader "$D" >"$D/reader.log" 2>&1 &
	PID[r$name]=$!
	on_exit "kill ${PID[r$name]}"
	wait_file "$D/reader.port" "$name: reader listening"
	cg_exec "$CC" timeout 60 python3 "$PY" sender "$(cat "$D/reader.port")" "$D" $bytes 10 \
		>"$D/sender.log" 2>&1 &
	PID[s$name]=$!
	on_exit "kill ${PID[s$name]}"
	wait_file "$D/sender.done" "$name: sender done"
	log "$name sender: $(cat "$D/sender.json")"
done
# The gauge, sampled each scan (a tick): at least one stalled reader's
# bytes (3 or 6 MiB, 9 before the reset), whether or not the big one is
# reset yet; never more than both hold
for _ in $(seq 30); do
	st ub unread.bytes
	[ "$ub" -ge $((3 << 20)) ] && break
	sleep 0.1
done
log "unread while both are stalled: $ub"
assert_ge "$ub" $((3 << 20)) "unread.bytes counts what a stalled reader holds (3 MiB at least)"
assert_le "$ub" $((9 << 20)) "unread.bytes: no more than both readers hold (9 MiB)"
for name in big small; do
	wait "${PID[s$name]}"
	wait "${PID[r$name]}"
	log "$name reader: $(cat "$TMP/$name-$h/reader.json")"
done
st b1 resets.budget
assert_eq $((b1 - b0)) 1 "resets.budget: one connection ended"
assert_eq "$(jget "$TMP/big-$h/reader.json" end)" reset "the largest (6 MiB unread) was reset"
assert_eq "$(jget "$TMP/big-$h/reader.json" first_bad)" -1 "what it read before the reset was right"
assert_eq "$(jget "$TMP/small-$h/reader.json" got)" $((3 << 20)) "the other reader got all of its 3 MiB"
assert_eq "$(jget "$TMP/small-$h/reader.json" first_bad)" -1 "every byte of it right"
st budget unread.budget
assert_eq "$budget" $((8 << 20)) "unread.budget is --unread-budget"
grep -q "over the budget" "$TMP/agent.err" || fail "the agent did not log the budget reset"
ok "the agent logged why"
agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent ($TIER) exited cleanly"
done

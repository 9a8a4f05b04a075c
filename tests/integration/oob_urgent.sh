# timeout: 100
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: TCP urgent data (send(MSG_OOB)) on a tracked pair gives the
# reader what plain TCP gives, or ends the connection with an error on both
# ends (counted in resets.oob).  A sender sends "hello", "abc" with
# MSG_OOB, "world", "XY" with MSG_OOB, "tail" and half-closes; the reader
# (SO_OOBINLINE off) records SIOCATMARK, recv(MSG_OOB), every recv() of the
# stream with SIOCATMARK after it, and recv(MSG_OOB) at the end.  The same
# sequence on a pair without the agent, run first in this test, is the
# reference: with the agent the reader must record exactly the same list
# (and every send must return the same), or see a reset with the sender
# seeing an error, having read only a prefix of the reference stream.
# Once per tier (common.sh tiers): what the host gives and the weakest.
# Then a stale mark (a sender's thread marked as inside an urgent send by
# an exit hook that never ran, planted with bpftool) must not make its
# next ordinary sends urgent: they are redirected, the mark cleared.
# Each tier also sends the sequence through io_uring (IORING_OP_SEND),
# which enters no send*(2) syscall: the same outcomes are required.
# Last, oob_senders full (1024 marks planted): the guard fails closed, the
# reader again sees what TCP gives or a reset, oob_untracked counts it.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
PY=$TOP/tests/lib/oob_probe.py
cg_new CS srv
cg_new CC cli

# oob_maps NAME: ids of the maps of that name (the agent's)
oob_maps() {
	bpftool -j map show | python3 -c '
import json, sys
print(" ".join(str(m["id"]) for m in json.load(sys.stdin) if m.get("name") == sys.argv[1]))' "$1"
}
# plant_mark PID TID: mark the thread as inside an urgent send, as an exit
# hook that never ran leaves it (the fentry set's fexit is skipped for a
# sender asleep in tcp_bpf_sendmsg while the trampoline is rebuilt)
plant_mark() {
	local key id n=0
	key=$(python3 -c 'import struct, sys
print(" ".join("%02x" % b for b in struct.pack("<Q", int(sys.argv[1]) << 32 | int(sys.argv[2]))))' "$1" "$2")
	for id in $(oob_maps oob_senders); do
		bpftool map update id "$id" key hex $key value hex 01 00 00 00 || fail "planting the mark"
		n=$((n + 1))
	done
	for id in $(oob_maps oob_count); do
		bpftool map update id "$id" key hex 00 00 00 00 value hex 01 00 00 00 00 00 00 00 ||
			fail "planting the count"
	done
	assert_ge $n 1 "found the agent's oob_senders map"
}
oob_count() {
	local id
	for id in $(oob_maps oob_count); do
		bpftool -j map lookup id "$id" key hex 00 00 00 00 | python3 -c '
import json, sys
v = json.load(sys.stdin)
v = v.get("formatted", v).get("value", v.get("value"))
print(int.from_bytes(bytes(int(b, 16) for b in v), "little") if isinstance(v, list) else v)'
	done
}

# probe NAME [plain|uring|uring-fixed]: one run of the sequence, results
# in $TMP/NAME/*.json; plain: the plain-sender, with a stale mark planted
# on its thread; uring: the same sends through io_uring
# (tests/tools/uringkit); uring-fixed: on the socket as a registered file
probe() {
	local d=$TMP/$1 mode=sender
	local send=(python3 "$PY")
	[ "${2:-}" = plain ] && mode=plain-sender
	[ "${2:-}" = uring ] && mode=oob-sender send=("$TOOLS/uringkit")
	local extra=()
	[ "${2:-}" = uring-fixed ] && mode=oob-sender send=("$TOOLS/uringkit") extra=(--fixed)
	mkdir -p "$d"
	cg_exec "$CS" python3 "$PY" reader "$d" >"$d/reader.log" 2>&1 &
	PID[$1]=$!
	on_exit "kill ${PID[$1]}"
	wait_file "$d/reader.port" "$1: reader listening"
	cg_exec "$CC" timeout 30 "${send[@]}" $mode "$(cat "$d/reader.port")" "$d" "${extra[@]}" \
		>"$d/sender.log" 2>&1 &
	PID[$1.s]=$!
	if [ $mode = plain-sender ]; then
		wait_file "$d/sender.tid" "$1: sender connected"
		plant_mark $(cat "$d/sender.tid")
		touch "$d/go"
	fi
	probe_wait "$1" "$d" "${PID[$1.s]}" "${PID[$1]}"
}

# check_urgent DIR LABEL R0: the reader of the probe in DIR saw what plain
# TCP gives, or the connection ended on both sides and resets.oob (R0
# before the probe) counted it
check_urgent() {
	local T=$1 label=$2 r0=$3 stream r1
	if [ "$(jget $T/reader.json end)" = reset ]; then
		# the other allowed outcome: ended on both sides, counted
		case $(jget $T/sender.json sends) in
		*error:*) ok "$label: the sender saw an error: $(jget $T/sender.json sends)" ;;
		*) fail "$label: the reader was reset but every send succeeded: $(jget $T/sender.json sends)" ;;
		esac
		stream=$(jget $T/reader.json stream)
		[[ "$(jget $R/reader.json stream)" == "$stream"* ]] ||
			fail "$label: the reader got '$stream' before the reset, not a prefix of '$(jget $R/reader.json stream)'"
		ok "$label: what the reader got before the reset is a prefix of the TCP stream"
		[ "$r0" = missing ] && fail "status --json has no resets.oob"
		st r1 resets.oob
		assert_eq $((r1 - r0)) 1 "$label: resets.oob counted the connection"
	else
		assert_eq "$(jget $T/reader.json seen)" "$(jget $R/reader.json seen)" \
			"$label: the reader saw what plain TCP gives (stream, urgent byte, SIOCATMARK)"
		assert_eq "$(jget $T/sender.json sends)" "$(jget $R/sender.json sends)" \
			"$label: every send returned what it returns with plain TCP"
		assert_eq "$(jget $T/reader.json end)" eof "$label: the reader read to EOF"
	fi
}

# fill_senders: oob_senders full (1024 tasks inside urgent sends, as
# anyone can make them with blocked send(MSG_OOB)s), planted with bpftool:
# entries of task ids that don't exist, the count to match
fill_senders() {
	local id
	for id in $(oob_maps oob_senders); do
		python3 -c '
import struct, sys
for i in range(1024):
    key = struct.pack("<Q", (0x7ffe0000 + i) << 32 | (0x7ffe0000 + i))
    print("map update id %s key hex %s value hex 01 00 00 00" % (sys.argv[1], " ".join("%02x" % b for b in key)))' "$id"
	done >"$TMP/fill.batch"
	for id in $(oob_maps oob_count); do
		echo "map update id $id key hex 00 00 00 00 value hex 00 04 00 00 00 00 00 00"
	done >>"$TMP/fill.batch"
	bpftool batch file "$TMP/fill.batch" >/dev/null || fail "planting 1024 urgent senders"
}

probe ref
R=$TMP/ref
assert_eq "$(jget $R/reader.json end)" eof "plain TCP: the reader read to EOF"

# What the host gives, then the weakest tier (common.sh tiers: what hosts
# that refuse tracing programs get).
for ((h = 0; h < ${#TIERS_TODO[@]}; h++)); do
	# shellcheck disable=SC2046
	agent_start -c "$CS" -c "$CC" $(tier_args "${TIERS_TODO[h]}")
	tier_check "${TIERS_TODO[h]}"
	hooks=${TIER//\//-}
	log "--- tier: $TIER"
	st p0 pairs
	r0=$(stat_get resets.oob 2>/dev/null || echo missing)
	probe tracked-$hooks
	T=$TMP/tracked-$hooks
	st p1 pairs
	log "pairs +$((p1 - p0)), resets.oob before: $r0"
	assert_ge $((p1 - p0)) 1 "the tracked sender and reader paired"
	check_urgent "$T" "$TIER" "$r0"

	# the same sends through io_uring: no send*(2) syscall to see
	r0=$(stat_get resets.oob)
	probe uring-$hooks uring
	check_urgent "$TMP/uring-$hooks" "io_uring sends ($TIER)" "$r0"
	# and on a registered file: the request names no fd
	r0=$(stat_get resets.oob)
	probe uringfix-$hooks uring-fixed
	check_urgent "$TMP/uringfix-$hooks" "io_uring sends, registered file ($TIER)" "$r0"

	# a mark whose exit hook never ran: the thread's next send without
	# MSG_OOB clears it, and is redirected as any other
	st m0 redirected_msgs
	st f0 fallbacks.hazard
	st r0 resets.oob
	probe stale-$hooks plain
	S=$TMP/stale-$hooks
	st m1 redirected_msgs
	st f1 fallbacks.hazard
	st r1 resets.oob
	# every byte, however read: the probe's first recv(MSG_OOB) returns
	# in-band bytes from a psock (tcp_bpf_recvmsg ignores the flag), which
	# a reader asks only after SIGURG or POLLPRI, never raised for them
	got=$(python3 -c '
import json, sys
print("".join(x.split(":", 1)[1] for x in json.load(open(sys.argv[1]))["seen"]
              if x.startswith(("data:", "oob:"))))' "$S/reader.json")
	assert_eq "$got/$(jget $S/reader.json end)" helloworldtail/eof \
		"stale mark: the reader got every byte, then EOF"
	assert_eq $((f1 - f0))/$((r1 - r0)) 0/0 "stale mark: no send taken for urgent (fallbacks.hazard/resets.oob)"
	assert_ge $((m1 - m0)) 3 "stale mark: the three sends were redirected"
	assert_eq "$(oob_count)" 0 "stale mark: cleared (oob_count back to 0)"

	# oob_senders full: the sender's mark finds no room, so msg_redirect
	# can't tell it from any other task and must take every sender for
	# an urgent one (before OOB_UNTRACKED its urgent byte was redirected
	# inline into the reader's stream)
	st r0 resets.oob
	st u0 oob_untracked
	fill_senders
	probe full-$hooks
	check_urgent "$TMP/full-$hooks" "oob_senders full ($TIER)" "$r0"
	st u1 oob_untracked
	assert_eq $((u1 - u0)) 1 "oob_senders full: oob_untracked counted the sender it had no room for"
	agent_stop || fail "agent did not exit 0 on SIGTERM"
	ok "agent ($TIER) exited cleanly"
done

# timeout: 90
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: a pair made under an agent is not left redirecting unguarded
# once that agent is gone.  A sender and a reader pair under the agent and
# "hello" is redirected (and read); then the agent goes, and the sender
# sends "abc" with MSG_OOB, "world", "XY" with MSG_OOB, "tail".  Nothing
# watches MSG_OOB any more (the guard's hooks left with the agent), so a
# redirect would land the urgent bytes inline; the pair must move to TCP
# (fallbacks{unguarded}) and the reader see exactly what plain TCP gives
# (the same sequence without the agent, run first).  Two ways to go:
#   stop      SIGTERM, no --pin (the old maps live on in the pair's psock)
#   restart   SIGTERM, and a new agent without --pin (its guard watches
#             its own maps, not the old pair's)
# (--pin and SIGKILL, good for GUARD_ALIVE_NS: agent_sigterm_cleanup.sh.)
# Only where the self-test proves a move to TCP safe (slow_reader_bound):
# elsewhere such pairs keep redirecting, unguarded (DESIGN, "What run
# leaves behind"), and this skips saying so.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
PY=$TOP/tests/lib/oob_probe.py
cg_new CS srv
cg_new CC cli

declare -A RPID SPID
# start NAME: a late-reader and a late-sender, "hello" sent and read
start() {
	local d=$TMP/$1
	mkdir -p "$d"
	cg_exec "$CS" python3 "$PY" late-reader "$d" >"$d/reader.log" 2>&1 &
	RPID[$1]=$!
	on_exit "kill ${RPID[$1]}"
	wait_file "$d/reader.port" "$1: reader listening"
	cg_exec "$CC" timeout 200 python3 "$PY" late-sender "$(cat "$d/reader.port")" "$d" \
		>"$d/sender.log" 2>&1 &
	SPID[$1]=$!
	on_exit "kill ${SPID[$1]}"
	wait_file "$d/reader.first" "$1: the reader read the first bytes"
}

# finish NAME: the rest of the sequence, and its results
finish() {
	touch "$TMP/$1/go"
	probe_wait "$1" "$TMP/$1" "${SPID[$1]}" "${RPID[$1]}"
}

# check NAME: the reader saw what plain TCP gives
check() {
	local d=$TMP/$1
	assert_eq "$(jget "$d/reader.json" seen)" "$(jget "$R/reader.json" seen)" \
		"$1: the reader saw what plain TCP gives (stream, urgent bytes, SIOCATMARK)"
	assert_eq "$(jget "$d/sender.json" sends)" "$(jget "$R/sender.json" sends)" \
		"$1: every send returned what it returns with plain TCP"
	assert_eq "$(jget "$d/reader.json" end)" eof "$1: the reader read to EOF"
}

start ref
finish ref
R=$TMP/ref
assert_eq "$(jget "$R/reader.json" end)" eof "plain TCP: the reader read to EOF"

log "--- two pairs under an agent, then SIGTERM (no --pin)"
agent_start -c "$CS" -c "$CC"
bound=$(stat_get selftest.checks.slow_reader_bound.result)
[ "$bound" = pass ] ||
	skip "moving a live pair to TCP is unsafe on this kernel ($(stat_get selftest.checks.slow_reader_bound.detail)): pairs keep redirecting after the agent, unguarded"
st m0 redirected_msgs
start stop
start restart
st m1 redirected_msgs
assert_ge $((m1 - m0)) 2 "both pairs' first bytes were redirected under the agent"
agent_stop || fail "agent did not exit 0 on SIGTERM"

log "--- stop: the rest of one pair's sequence with no agent"
finish stop
check stop

log "--- restart: the other's under a new agent without --pin"
agent_start -c "$CS" -c "$CC"
finish restart
check restart
agent_stop || fail "the second agent did not exit 0 on SIGTERM"

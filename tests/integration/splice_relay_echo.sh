# timeout: 240
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: a relay that hands its sessions to the data plane
# (bpf/sockmap_splice.h; build/tools/relaykit, one thread, reads of random
# sizes) gets them spliced mid-stream under load, with every byte exact
# and in order both ways:
#  - echo: 24 sessions at once, each a tcpkit client sending 16 MiB
#    through the relay to an echo server, at most 256 KiB in flight, so
#    the relay catches up now and then and each direction switches while
#    bytes keep flowing; the client checks every byte it gets back.  Half
#    the directions at least must switch (splice_switched; here all do),
#    or have one of their sockets moved to TCP (a reader fell behind, where
#    that is safe: no fence passes then); where all switched, at least a
#    quarter of the bytes each way went past the relay;
#  - rr: 48 sessions of 2,000 pipelined requests of random-ish sizes;
#    the server checks request order and payload, the client responses;
#  - what went past the relay, as its query on N1 says at each session's
#    end (sockmap_query.h spliced_up, spliced_down), plus what it relayed
#    itself, is every byte, each way;
#  - the same echo without --splice relays every byte (the control: the
#    counts above are the splice's doing).
# And ownership: a child process holding both of a session's sockets
# can't JOIN or FENCE it (EPERM, foreign_refused), and every refused
# request is counted (splice_refused).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
R=$TOOLS/relaykit
[ -x "$R" ] || fail "$R not built (make tools)"
cg_new CS srv
cg_new CR relay
cg_new CC cli
# --nginx-vars: the query a relay reads its spliced bytes back with
agent_start -c "$CS" -c "$CR" -c "$CC" --nginx-vars

# relay NAME UPSTREAM_PORT ARGS...: relaykit in the background, RPORT[NAME];
# it accepts --sessions, then exits once they ended
declare -A RPORT
relay() {
	local name=$1 up=$2 i
	shift 2
	rm -f "$TMP/$name.port" "$TMP/$name.res"
	cg_exec "$CR" "$R" --listen 127.0.0.1:0 --upstream 127.0.0.1:$up \
		--ready-file "$TMP/$name.port" --out "$TMP/$name.res" "$@" >"$TMP/$name.log" 2>&1 &
	PID[$name]=$!
	on_exit "kill ${PID[$name]}"
	for i in $(seq 1 100); do
		[ -s "$TMP/$name.port" ] && { RPORT[$name]=$(cat "$TMP/$name.port"); return 0; }
		sleep 0.05
	done
	fail "relay $name not listening: $(tail -n 3 "$TMP/$name.log")"
}

echo_run() { # NAME SPLICE_ARGS...
	local name=$1 bytes=$((16 * MIB)) n=24
	shift
	tk_server s_$name "$CS" - --listen 127.0.0.1:0 --mode echo --conns $n \
		--parallel $n --duration 120 --timeout 60
	relay r_$name ${SPORT[s_$name]} --sessions $n --duration 120 --timeout 30 "$@"
	tk_client c_$name "$CC" - --connect 127.0.0.1:${RPORT[r_$name]} --mode echo \
		--seed 7 --bytes $bytes --conns $n --parallel $n --window 256K --chunk 32K \
		--timeout 60
	crc=$?
	tk_wait s_$name
	wait "${PID[r_$name]}" ||
		fail "relay $name failed: $(tail -n 3 "$TMP/r_$name.log"); resets: $(stat_get resets)"
	[ $crc = 0 ] || log "relay $name: $(cat "$TMP/r_$name.res"); resets: $(stat_get resets);" \
		"fallbacks: $(fallbacks)"
	tk_ok c_$name "echo $name: every byte echoed exact and in order (exit $crc)"
	assert_eq "$(rf c_$name bytes_in)" $((n * bytes)) "echo $name: the client read it all back"
	log "relay $name: $(cat "$TMP/r_$name.res")"
}

total=$((24 * 16 * MIB))
echo_run plain
assert_eq "$(rf r_plain relayed_up)" "$total" "without --splice the relay relays every byte up"
assert_eq "$(rf r_plain relayed_down)" "$total" "... and down"

# A direction switches at its sender's first send after the relay caught
# up with it: on this host every one does; under TCG (6.12.95) about half
# (26 of 48), the senders rarely waiting for the slow relay.  One whose
# socket moved to TCP first (where the self-test found that safe, a
# reader that fell behind: fallbacks.slow_reader) never does.
switched_or_tcp() { # DIRECTIONS LABEL: needs w0/w1, s0/s1
	local w=$((w1 - w0)) tcp=$((s1 - s0))
	assert_ge $w 1 "$2: directions switched past the relay (splice_switched +$w)"
	assert_ge $((w + tcp)) $(($1 / 2)) "$2: half the directions switched, or moved to TCP first (+$tcp)"
}
st w0 splice_switched
st f0 splice_refused
st s0 fallbacks.slow_reader
echo_run spliced --splice --foreign --trickle
st w1 splice_switched
st f1 splice_refused
st s1 fallbacks.slow_reader
rr_up=$(rf r_spliced relayed_up) rr_down=$(rf r_spliced relayed_down)
assert_eq "$(rf r_spliced joined)" 24 "every session was offered and joined"
assert_eq "$(rf r_spliced queries_failed)" 0 "the relay read its spliced bytes back, each session"
assert_eq $((rr_up + $(rf r_spliced spliced_up))) $total \
	"relayed and spliced up add up to what the clients sent ($rr_up + $(rf r_spliced spliced_up))"
assert_eq $((rr_down + $(rf r_spliced spliced_down))) $total \
	"relayed and spliced down add up to what came back ($rr_down + $(rf r_spliced spliced_down))"
switched_or_tcp 48 echo
if [ $((w1 - w0)) -ge 48 ]; then
	# How soon the one-thread relay first catches up is the host's load:
	# idle here it relayed 8% of the bytes up, beside CI's two TCG guests
	# 40%.  A quarter spliced each way proves the bytes took the new path.
	assert_ge $((total * 3 / 4)) "$rr_up" "a quarter of the client's bytes or more went past the relay ($rr_up of $total relayed)"
	assert_ge $((total * 3 / 4)) "$rr_down" "... and of the echo ($rr_down of $total relayed)"
else
	log "$((w1 - w0)) directions switched, $((s1 - s0)) sockets moved to TCP: what the relay relayed is not bounded"
fi
assert_eq "$(rf r_spliced foreign_taken)" 0 "no request of another process was taken"
assert_eq "$(rf r_spliced foreign_refused)" 48 "another process's JOIN and FENCE refused, each session"
assert_ge $((f1 - f0)) 48 "refused requests counted (splice_refused +$((f1 - f0)))"

st w0 splice_switched
st s0 fallbacks.slow_reader
tk_server s_rr "$CS" - --listen 127.0.0.1:0 --mode rr --conns 48 --parallel 48 --duration 120
relay r_rr ${SPORT[s_rr]} --splice --trickle --sessions 48 --duration 120 --timeout 30 --seed 3
tk_client c_rr "$CC" - --connect 127.0.0.1:${RPORT[r_rr]} --mode rr --conns 48 --parallel 48 \
	--rounds 2000 --pipeline 8 --req-size 700 --resp-size 3000 --seed 9
crc=$?
tk_wait s_rr
srv=$?
wait "${PID[r_rr]}" || fail "relay rr failed: $(tail -n 3 "$TMP/r_rr.log")"
tk_ok s_rr "rr: the server got every request in order (exit $srv)"
tk_ok c_rr "rr: the client got every response in order (exit $crc)"
st w1 splice_switched
st s1 fallbacks.slow_reader
log "relay rr: $(cat "$TMP/r_rr.res")"
switched_or_tcp 96 rr

agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent exited cleanly"

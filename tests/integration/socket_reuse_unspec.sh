# timeout: 120
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: a tracked socket reused with connect(AF_UNSPEC) behaves like TCP.
# Client C (tracked) connects to server A (tracked) and the pair forms; A
# sends 3000 'A' bytes that C leaves unread; C calls connect(AF_UNSPEC)
# (tcp_disconnect(): TCP purges the unread bytes and resets A), connects
# the same socket to server B, sends 1500 'c' bytes and half-closes; B
# sends 2000 'B' bytes.  C must read exactly B's bytes, never one of A's;
# B must get exactly C's bytes; A must get nothing and see its connection
# end (reset or EOF, no hang).  The same sequence runs first without the
# agent: that live reference is what every tracked run is compared with.
# B is (a) tracked, (b) untracked.  connect(AF_UNSPEC) disconnects without
# closing (net/ipv4/tcp.c tcp_disconnect): the socket
# stays in the SOCKHASH with A's unread redirected bytes, and C reads them
# first after reconnecting.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
PY=$TOP/tests/lib/reuse_unspec.py
NA=3000 NB=2000 NC=1500
cg_new CA srv_a
cg_new CC cli
cg_new CBT srv_b_tracked
cg_new CBU srv_b_untracked

# scenario NAME CGROUP_OF_B: one run of the whole sequence, results in
# $TMP/NAME/{A,B,client}.json
scenario() {
	local name=$1 cgb=$2 d=$TMP/$1 x pa pb pc
	mkdir -p "$d"
	cg_exec "$CA" python3 "$PY" server A $NA "$d" >"$d/A.log" 2>&1 &
	pa=$!
	on_exit "kill $pa"
	cg_exec "$cgb" python3 "$PY" server B $NB "$d" >"$d/B.log" 2>&1 &
	pb=$!
	on_exit "kill $pb"
	for x in A B; do wait_file "$d/$x.port" "$name: server $x listening"; done
	cg_exec "$CC" timeout 30 python3 "$PY" client "$(cat "$d/A.port")" \
		"$(cat "$d/B.port")" $NA $NC "$d" >"$d/client.log" 2>&1
	pc=$?
	# the servers end by themselves (20 s at most)
	wait $pa
	wait $pb
	[ $pc = 0 ] || { cat "$d/client.log"; fail "$name: client exited $pc"; }
	for x in A B client; do
		[ -s "$d/$x.json" ] || { cat "$d/$x.log"; fail "$name: $x wrote no result"; }
		log "$name $x: $(cat "$d/$x.json")"
	done
}

# Reference: plain TCP, no agent
scenario ref "$CBU"
R=$TMP/ref
assert_eq "$(jget $R/client.json letters)" '{"B": '$NB'}' "reference: C reads only B's bytes"
assert_eq "$(jget $R/client.json end)" eof "reference: C's read ends with EOF"
assert_eq "$(jget $R/A.json got)" 0 "reference: A receives nothing"
assert_eq "$(jget $R/B.json letters)" '{"c": '$NC'}' "reference: B receives exactly C's bytes"

agent_start -c "$CA" -c "$CC" -c "$CBT"
for b in tracked untracked; do
	cgb=$CBT
	[ $b = untracked ] && cgb=$CBU
	st p0 pairs
	st r0 redirected_bytes
	scenario $b "$cgb"
	st p1 pairs
	st r1 redirected_bytes
	D=$TMP/$b
	log "B $b: pairs +$((p1 - p0)), redirected_bytes +$((r1 - r0))"
	assert_ge $((p1 - p0)) 1 "B $b: C and A paired"
	assert_eq "$(jget $D/client.json queued_before_disconnect)" $NA \
		"B $b: A's bytes were waiting unread in C before the disconnect"
	assert_eq "$(jget $D/client.json letters)" "$(jget $R/client.json letters)" \
		"B $b: C read what plain TCP gives (B's bytes only, none of A's)"
	assert_eq "$(jget $D/client.json head)" "$(jget $R/client.json head)" \
		"B $b: C's first bytes are B's"
	assert_eq "$(jget $D/client.json end)" "$(jget $R/client.json end)" \
		"B $b: C's read ends as with plain TCP"
	assert_eq "$(jget $D/B.json letters)" "$(jget $R/B.json letters)" \
		"B $b: B received exactly C's bytes"
	assert_eq "$(jget $D/A.json got)" "$(jget $R/A.json got)" \
		"B $b: A received nothing after C disconnected"
	case $(jget $D/A.json end) in
	reset | eof) ok "B $b: A saw its connection end ($(jget $D/A.json end);" \
		"plain TCP: $(jget $R/A.json end))" ;;
	*) fail "B $b: A's connection did not end: $(jget $D/A.json end)" \
		"(plain TCP: $(jget $R/A.json end))" ;;
	esac
done
# The same after shutdown(SHUT_RDWR) (the disconnect then looks like a
# close to the data plane: sk_shutdown is full) and with the agent paused
# before the reconnect, so the new connection is not tracked at all: the
# old life must still be gone (no send of the new life may be redirected
# to A).  Reference: plain TCP with the same sequence.
agent_stop || fail "agent did not exit 0 on SIGTERM"
export REUSE_SHUTDOWN=1
scenario ref_shut "$CBU"
R=$TMP/ref_shut
agent_start -c "$CA" -c "$CC" -c "$CBT"
export REUSE_HOOK="'$AGENT' pause >/dev/null"
scenario shut_paused "$CBT"
unset REUSE_HOOK REUSE_SHUTDOWN
"$AGENT" resume >/dev/null
D=$TMP/shut_paused
assert_eq "$(jget $D/A.json got)" "$(jget $R/A.json got)" \
	"shutdown + disconnect, reconnect while paused: A received nothing of C's new connection"
assert_eq "$(jget $D/client.json letters)" "$(jget $R/client.json letters)" \
	"shutdown + disconnect, reconnect while paused: C read what plain TCP gives"
assert_eq "$(jget $D/B.json letters)" "$(jget $R/B.json letters)" \
	"shutdown + disconnect, reconnect while paused: B received exactly C's bytes"
log "fallbacks: $(fallbacks)"
agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent exited cleanly"

# timeout: 150
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves the two ways `run` ends.  Without --pin, SIGTERM: exit 0, nothing
# left attached to the cgroups (bpftool), no files in /sys/fs/bpf/ngx-sockmap,
# and a keep-alive connection paired under the agent keeps answering
# byte-exact, its next body through TCP (its own tcpi_bytes_received
# grows by it: redirected bytes bypass the TCP receive path): nobody
# guards it any more (fallbacks{unguarded}).  With --pin, SIGTERM: exit 0,
# the programs stay attached, a connection made after the agent is gone
# is not paired, byte-exact through TCP: the guard's tracepoints left with
# the agent, and nothing enters the map unguarded (fallbacks.arming); and
# connections paired under the agent move to TCP as well.  With --pin and
# SIGKILL (no chance to disarm), the same holds, for new connections and
# for pairs made under the agent, once the armed state has gone stale
# (GUARD_ALIVE_NS, 15 s); then `ngx-sockmap detach` exits 0, leaves
# nothing attached and removes the pin directory, and live connections
# keep answering byte-exact.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/proxy.sh"

PIN=/sys/fs/bpf/ngx-sockmap

[ -e "$PIN" ] && fail "$PIN exists before the test: left over by an earlier run ($(ls -A "$PIN" | head -5 | tr '\n' ' '))"
# If the test dies half-way, take down what --pin left behind
on_exit "[ -e '$PIN' ] && { '$AGENT' detach; rm -rf '$PIN'; }"
proxy_setup 18220 18221

ka_start $PORT_PX "$html"

# assert_redirected NAME LABEL: connection NAME (already read /1m.bin) got
# most of it through the redirect, not the TCP receive path
assert_redirected() {
	ka rcvd "$1" || fail "tcp_info of $1: $KA_REPLY"
	local n=${KA_REPLY#ok }
	[ "$n" -lt $((MIB / 2)) ] ||
		fail_diag "$2: connection $1 received $n bytes through TCP for a 1 MiB body: not redirected"
	ok "$2 (TCP received only $n bytes of a 1 MiB body)"
}

# assert_moved_to_tcp NAME LABEL: connection NAME, paired, reads /1m.bin
# again byte-exact, through TCP this time where the self-test proved that
# move safe (BOUND, slow_reader_bound); elsewhere still redirected, as
# DESIGN says ("What run leaves behind")
assert_moved_to_tcp() {
	if [ "$BOUND" != pass ]; then
		ka_get "$1" /1m.bin "$2: answers byte-exact"
		assert_redirected "$1" "$2: still redirected (moving to TCP is unsafe on this kernel)"
		return
	fi
	ka rcvd "$1" || fail "tcp_info of $1: $KA_REPLY"
	local n0=${KA_REPLY#ok } n
	ka_get "$1" /1m.bin "$2: answers byte-exact"
	ka rcvd "$1" || fail "tcp_info of $1: $KA_REPLY"
	n=${KA_REPLY#ok }
	[ $((n - n0)) -ge $((MIB / 2)) ] ||
		fail_diag "$2: connection $1 received only $((n - n0)) bytes of a 1 MiB body through TCP: still redirected with nobody guarding it"
	ok "$2: TCP carried its next body ($((n - n0)) bytes)"
}

# assert_unpaired NAME LABEL: a new connection NAME reads /1m.bin
# byte-exact and TCP carried it: it was not paired (nothing enters the map
# without the guard)
assert_unpaired() {
	ka open "$1" || fail "$2: $KA_REPLY"
	ka_get "$1" /1m.bin "$2 answers byte-exact"
	ka rcvd "$1" || fail "tcp_info of $1: $KA_REPLY"
	[ "${KA_REPLY#ok }" -ge $((MIB / 2)) ] ||
		fail_diag "$2 was redirected without the guard (TCP received ${KA_REPLY#ok } bytes of 1 MiB)"
	ok "$2 is not paired: TCP carried it (${KA_REPLY#ok } bytes)"
}

log "--- run without --pin, then SIGTERM"
agent_start -c "$P" -c "$U" -c "$C"
assert_attached "agent running" "$P" "$U" "$C"
BOUND=$(stat_get selftest.checks.slow_reader_bound.result)
log "slow_reader_bound: $BOUND"
st m0 redirected_msgs
ka open a1 || fail "keep-alive connection: $KA_REPLY"
ka_get a1 /1m.bin "connection made under the agent answers byte-exact"
assert_redirected a1 "connection made under the agent is redirected"
st m1 redirected_msgs
assert_ge $((m1 - m0)) 1 "redirected_msgs moved"

agent_stop
rc=$?
assert_eq "$rc" 0 "agent exit status after SIGTERM"
assert_detached "after SIGTERM" "$P" "$U" "$C"
if [ -e "$PIN" ] && [ -n "$(ls -A "$PIN")" ]; then
	fail "files left in $PIN after SIGTERM: $(ls -A "$PIN" | tr '\n' ' ')"
fi
ok "no files left in $PIN"
assert_moved_to_tcp a1 "connection paired under the agent, after SIGTERM"
ka open a2 || fail "new connection after SIGTERM: $KA_REPLY"
ka_get a2 /1m.bin "new connection after SIGTERM answers byte-exact"

log "--- run --pin, then SIGTERM, then detach"
agent_start --pin -c "$P" -c "$U" -c "$C"
assert_attached "agent --pin running" "$P" "$U" "$C"
ka open b1 || fail "keep-alive connection: $KA_REPLY"
ka_get b1 /1m.bin "connection made under the pinning agent answers byte-exact"
assert_redirected b1 "connection made under the pinning agent is redirected"

agent_stop
rc=$?
assert_eq "$rc" 0 "agent --pin exit status after SIGTERM"
assert_attached "after SIGTERM with --pin" "$P" "$U" "$C"
[ -d "$PIN" ] && [ -n "$(ls -A "$PIN")" ] || fail "nothing pinned in $PIN after --pin run"
ok "pins in $PIN: $(ls -A "$PIN" | tr '\n' ' ')"
assert_unpaired b2 "connection made after the pinning agent exited"
if m0=$(stat_get fallbacks.unguarded 2>/dev/null); then :; else m0=; fi
assert_moved_to_tcp b1 "connection paired under the pinning agent, after SIGTERM"
if [ "$BOUND" = pass ] && [ -n "$m0" ] && m1=$(stat_get fallbacks.unguarded 2>/dev/null); then
	assert_ge $((m1 - m0)) 1 "status reads the pinned counters: fallbacks.unguarded moved"
else
	log "note: status --json does not answer once the pinning agent is gone"
fi

log "--- run --pin again, with other settings: it adopts the pins, with its own programs"
prog_ids() { bpftool -j cgroup show "$1" | python3 -c 'import json,sys; print(sorted(p["id"] for p in json.load(sys.stdin)))'; }
ids0=$(prog_ids "$P")
agent_start --pin --ports 1 -c "$P" -c "$U" -c "$C"
ids1=$(prog_ids "$P")
[ "$ids1" != "$ids0" ] || fail "adopted links still run the earlier run's programs ($ids0)"
ok "adopted links run this run's programs ($ids0 -> $ids1)"
st pol0 fallbacks.policy
ka open b3 || fail "connection under the adopting agent: $KA_REPLY"
ka_get b3 /1m.bin "connection under the adopting agent answers byte-exact"
st pol1 fallbacks.policy
assert_ge $((pol1 - pol0)) 1 "its --ports 1 applies: the new connection's sockets were left to TCP"
agent_stop || fail "adopting agent did not exit 0"

log "--- run --pin, then SIGKILL: it can't disarm, its armed state goes stale"
agent_start --pin -c "$P" -c "$U" -c "$C"
ka open d1 || fail "keep-alive connection: $KA_REPLY"
ka_get d1 /1m.bin "connection made under the agent killed next answers byte-exact"
assert_redirected d1 "connection made under the agent killed next is redirected"
kill -KILL "$AGENT_PID"
wait "$AGENT_PID" 2>/dev/null
AGENT_PID=
sleep 16 # GUARD_ALIVE_NS (bpf/accel.h) and a second
assert_unpaired d2 "connection made 16 s after the pinning agent was SIGKILLed"
assert_moved_to_tcp d1 "connection paired under the agent, 16 s after its SIGKILL"

"$AGENT" detach >"$TMP/detach.out" 2>&1
rc=$?
cat "$TMP/detach.out"
assert_eq "$rc" 0 "detach exit status"
assert_detached "after detach" "$P" "$U" "$C"
[ -e "$PIN" ] && fail "$PIN still there after detach: $(ls -A "$PIN" | tr '\n' ' ')"
ok "$PIN removed by detach"
ka_get b1 /1m.bin "connection paired under the pinning agent answers after detach"
ka_get b2 /1m.bin "connection paired by the pinned programs answers after detach"
ka_get a1 /1m.bin "connection from the first run still answers"
ka open c1 || fail "new connection after detach: $KA_REPLY"
ka_get c1 /1m.bin "new connection after detach answers byte-exact"

log "--- a pinned data plane this build can't adopt (another version's map layout)"
mkdir -p "$PIN"
bpftool map create "$PIN/guard_state" type array key 4 value 4 entries 1 name guard_state ||
	fail "bpftool map create failed"
"$AGENT" run --pin --no-follow --metrics off -c "$P" >"$TMP/mismatch.out" 2>&1 &&
	fail "run --pin adopted a pinned map of another layout: $(cat "$TMP/mismatch.out")"
grep -q "does not match this build's.*ngx-sockmap detach" "$TMP/mismatch.out" ||
	fail "run --pin did not say why it can't adopt the pins: $(cat "$TMP/mismatch.out")"
ok "run --pin refuses another layout and names the way out: $(grep -o 'does not match[^:]*' "$TMP/mismatch.out")"
assert_detached "after the refused --pin run" "$P" "$U" "$C"
"$AGENT" detach >/dev/null 2>&1 || fail "detach of the foreign pin failed"
[ -e "$PIN" ] && fail "$PIN still there after detach: $(ls -A "$PIN" | tr '\n' ' ')"
ok "detach removes it"

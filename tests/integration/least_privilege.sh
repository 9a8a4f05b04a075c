# timeout: 90
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: what the agent does with a least-privilege container's
# capabilities (CAP_BPF, CAP_NET_ADMIN, CAP_PERFMON, and Docker's default
# CAP_DAC_OVERRIDE; no CAP_SYS_ADMIN), by running it as root with only
# those in its bounding set (setpriv).  It can't setns(), so it could
# neither end a connection in another network namespace nor see its
# addresses: it tracks only sockets of its own namespace and says so.
#  1. it starts, accelerates, and status says "namespaces own only";
#  2. a loopback pair in the agent's namespace is paired, bytes exact;
#  3. a loopback pair in a namespace the test made is not tracked
#     (skipped.other_netns), bytes exact;
#  4. it can still end a connection in its own namespace: a splicing
#     reader there is reset on both ends (resets.splice), none hangs;
#  5. without CAP_DAC_OVERRIDE too (the cgroup root is 0555: no private
#     cgroup for the self-test) it stays up, not accelerating, saying why;
#  6. each exits 0 on SIGTERM.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
command -v setpriv >/dev/null || skip "SKIP: no setpriv (util-linux)"
cg_new CS srv
cg_new CC cli
NS=$(ns_make lp)
LEAST=+bpf,+net_admin,+perfmon,+dac_override
# the guard's tracepoints need tracefs, which only CAP_SYS_ADMIN mounts:
# mount it first, as a container runtime's bind mount of the host's would
if ! mountpoint -q /sys/kernel/tracing; then
	mount -t tracefs nodev /sys/kernel/tracing || skip "SKIP: tracefs can't be mounted"
	on_exit "umount /sys/kernel/tracing"
fi

# echo_pair NAME NETNS: one echo connection CC -> CS in NETNS ("-": ours)
echo_pair() {
	tk_server s_$1 "$CS" "$2" --listen 127.0.0.1:0 --mode echo --seed 9 --conns 1 \
		--expect-bytes 256K --duration 20
	tk_client c_$1 "$CC" "$2" --connect 127.0.0.1:${SPORT[s_$1]} --mode echo --seed 9 \
		--bytes 256K
	tk_wait s_$1
	tk_ok s_$1 "$1: the server got every byte"
	tk_ok c_$1 "$1: the client got every byte back"
}

AGENT_WRAP="setpriv --bounding-set=-all,$LEAST --" agent_start -c "$CS" -c "$CC"
log "agent capabilities: $(grep CapEff /proc/$AGENT_PID/status)"
"$AGENT" status | grep -q "^namespaces  own only: setns" ||
	fail "status does not say only its own namespace is tracked: $("$AGENT" status | head -12)"
ok "status: namespaces own only"
assert_eq "$(stat_get accelerating)" True "accelerating with CAP_BPF, CAP_NET_ADMIN, CAP_PERFMON"
st p0 pairs
st o0 skipped.other_netns
echo_pair own -
st p1 pairs
assert_ge $((p1 - p0)) 1 "a pair in the agent's namespace formed"
echo_pair other "$NS"
st p2 pairs
st o1 skipped.other_netns
assert_eq $((p2 - p1)) 0 "nothing paired in another namespace"
assert_ge $((o1 - o0)) 2 "skipped.other_netns counted both ends there"
# a splicing reader in its own namespace: the agent must still end it
# (setns() into its own namespace fails too without CAP_SYS_ADMIN)
st r0 resets.splice
rm -f "$TMP/sp.port"
cg_exec "$CS" "$TOOLS/splicekit" server --listen 127.0.0.1:0 --ready-file "$TMP/sp.port" \
	--out "$TMP/sp.srv" --conns 1 --timeout 3 --seed 3 >"$TMP/sp.srvlog" 2>&1 &
PID[sp]=$!
on_exit "kill ${PID[sp]}"
wait_file "$TMP/sp.port" "splice server listening"
cg_exec "$CC" "$TOOLS/splicekit" client --connect 127.0.0.1:$(cat "$TMP/sp.port") --out "$TMP/sp.cli" \
	--conns 1 --parallel 1 --bytes 64K --seed 3 --timeout 5 >"$TMP/sp.clilog" 2>&1
wait "${PID[sp]}"
log "splice: client $(grep '^conn' "$TMP/sp.cli") / server $(grep '^conn' "$TMP/sp.srv")"
grep -q 'outcome=reset' "$TMP/sp.cli" || fail "the splicing connection was not reset: $(cat "$TMP/sp.cli")"
grep -q 'outcome=reset' "$TMP/sp.srv" || fail "the splicing reader was not reset: $(cat "$TMP/sp.srv")"
st r1 resets.splice
assert_eq $((r1 - r0)) 1 "resets.splice: the agent ended it in its own namespace"
agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent exited cleanly"

AGENT_MAY_REFUSE=1 AGENT_WRAP="setpriv --bounding-set=-all,+bpf,+net_admin,+perfmon --" \
	agent_start -c "$CS" -c "$CC"
grep -q '^ready: .*NOT accelerating: the self-test could not run' "$TMP/agent.out" ||
	fail "without CAP_DAC_OVERRIDE: the ready line does not say why: $(head -n 1 "$TMP/agent.out")"
assert_eq "$(stat_get accelerating)" False "without CAP_DAC_OVERRIDE: not accelerating"
agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "without CAP_DAC_OVERRIDE: up, not accelerating, says why; exited cleanly"

# timeout: 260
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: a 32-bit program can't splice from, or send MSG_OOB on, its own
# tracked connection unseen.  x86-64 fires no syscalls/sys_enter_* event
# for ia32 syscalls (arch/x86/include/asm/ftrace.h
# ARCH_TRACE_IGNORE_COMPAT_SYSCALLS), so the guard's tracepoint hooks
# never saw them: a 32-bit splice or sendfile reader hung (0 of 1000
# bytes for 5 s, no reset), and a 32-bit urgent byte was redirected into
# the stream.  tests/tools/ia32kit (gcc -m32) makes one loopback
# connection in its own cgroup and reads it with splice, sendfile or
# sendfile64, or sends "abc" with MSG_OOB through sendto, sendmsg,
# sendmmsg or socketcall(2)'s SEND, SENDTO, SENDMSG and SENDMMSG.  Plain
# TCP (no agent) first: the reference.  With the agent each connection
# must be paired (the hazard was there) and end as the reference did, or
# with an error on both ends; never hang, never a wrong byte.  status
# --json guard_ia32 says "guarded" on the tracepoint tier.  Once per tier
# (common.sh tiers): fentry sees ia32 syscalls anyway.
# On the tracepoint tier the hook on every syscall (ia32_enter) waits for
# a 32-bit program: with none run since the agent started, status says
# "standby" and it is not attached.  Meanwhile a 64-bit program's
# int $0x80 urgent send (ia32kit built 64-bit, int80-* modes) on a
# paired connection must still end as plain TCP's or with a reset on both
# ends (msg_redirect takes an unseen 32-bit send for an urgent one), and
# its int $0x80 splice is the documented limit (README: a reader that
# hangs its own connection, as one that stops reading): logged.  The
# first 32-bit exec attaches the hook (status "guarded"), its own
# connection ending right either way; then every mode below, and the
# int $0x80 splice, are caught.
# Skips where gcc -m32 can't build (gcc-multilib: make deps) or 32-bit
# programs don't run (ia32 emulation off).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
KIT=$TMP/ia32kit KIT64=$TMP/int80kit
gcc -O2 -Wall -I"$TOP/tests/tools" -o "$KIT64" "$TOP/tests/tools/ia32kit.c" >"$TMP/cc64.log" 2>&1 ||
	fail "building the 64-bit int80 kit: $(tail -n 3 "$TMP/cc64.log")"
gcc -m32 -O2 -Wall -I"$TOP/tests/tools" -o "$KIT" "$TOP/tests/tools/ia32kit.c" >"$TMP/cc.log" 2>&1 ||
	skip "SKIP: gcc -m32 cannot build a 32-bit program here (apt-get install gcc-multilib, or make deps): $(tail -n 1 "$TMP/cc.log")"
"$KIT" splice >"$TMP/probe.out" 2>&1 ||
	skip "SKIP: 32-bit programs do not run here (ia32 emulation off?): $(head -c 200 "$TMP/probe.out")"

MODES="splice sendfile sendfile64 oob-sendto oob-sendmsg oob-sendmmsg oob-socketcall-send
       oob-socketcall-sendto oob-socketcall-sendmsg oob-socketcall-sendmmsg"
MODES64="int80-oob-sendto int80-splice"
# a cgroup per mode: a hazard learned on one (the client's side is its
# cgroup's) must not keep the next mode's connection from pairing
declare -A CG REF
args=()
for m in $MODES $MODES64 first; do
	cg_new c "${m//-/_}"
	CG[$m]=$c
	args+=(-c "$c")
done

# kit MODE: one run of ia32kit in that mode's cgroup, its line printed
kit() {
	local k=$KIT mode=$1
	[[ $1 == int80-* ]] && k=$KIT64
	[ "$1" = first ] && mode=oob-sendto # in a cgroup of its own
	cg_exec "${CG[$1]}" timeout 20 "$k" "$mode" 2>&1 || echo "exit $?"
}

# right MODE GOT LABEL: what plain TCP gives, or a reset on both ends
right() {
	case $2 in
	"${REF[$1]}") ok "$3: what plain TCP gives" ;;
	"server=reset client=reset "*) ok "$3: ended with an error on both ends" ;;
	*) fail "$3: got '$2', want '${REF[$1]}' or a reset on both ends" ;;
	esac
}

# kit_paired MODE: one run, which must be paired and end right
kit_paired() {
	local got p0 p1
	st p0 pairs
	got=$(kit "$1")
	st p1 pairs
	log "$1 ($TIER): $got; pairs +$((p1 - p0))"
	assert_ge $((p1 - p0)) 1 "$1 ($TIER): the connection was paired (the hazard was there)"
	right "$1" "$got" "$1 ($TIER)"
}

for m in $MODES $MODES64; do
	REF[$m]=$(kit "$m")
	log "plain TCP $m: ${REF[$m]}"
	case ${REF[$m]} in
	"server=ok client=ok "*) ;;
	*) fail "plain TCP $m: the tool is wrong: ${REF[$m]}" ;;
	esac
done
REF[first]=${REF[oob-sendto]}

# msg_redirect reads the task typed where the kernel lets sk_msg call
# bpf_get_current_task_btf, and with a probe read where it doesn't (the
# test knob takes that path): both must take an unseen int $0x80 send for
# an urgent one.  On the tracepoint tier, where the hook on every syscall
# waits for a 32-bit program (fentry sees such sends anyway).
# shellcheck disable=SC2046
NGX_SOCKMAP_TEST_NO_TASK_BTF=1 agent_start "${args[@]}" $(tier_args "$WEAK_TIER")
tier_check "$WEAK_TIER"
assert_eq "$(stat_get guard_ia32)" standby "$TIER, probe reads: guard_ia32"
kit_paired int80-oob-sendto
agent_stop || fail "agent did not exit 0 on SIGTERM"

for ((h = 0; h < ${#TIERS_TODO[@]}; h++)); do
	# shellcheck disable=SC2046
	agent_start "${args[@]}" $(tier_args "${TIERS_TODO[h]}")
	tier_check "${TIERS_TODO[h]}"
	if [ "$(stat_get guard_hooks)" = tracepoints ]; then
		assert_eq "$(stat_get guard_ia32)" standby "$TIER: no 32-bit program yet: guard_ia32"
		assert_eq "$(agent_prog_links '^ia32_enter$')" 0 "$TIER: the every-syscall hook waits"
		assert_eq "$(agent_prog_links '^ia32_exec$')" 1 "$TIER: the exec hook is attached"
		kit_paired int80-oob-sendto
		got=$(kit int80-splice)
		log "int80-splice ($TIER, standby: the documented limit): $got"
		got=$(kit first)
		log "first 32-bit exec ($TIER): $got"
		right first "$got" "the first 32-bit exec's own connection ($TIER)"
		for ((i = 0; i < 30; i++)); do
			[ "$(stat_get guard_ia32)" = guarded ] && break
			sleep 0.1
		done
		assert_eq "$(stat_get guard_ia32)" guarded "$TIER: after a 32-bit exec: guard_ia32"
		assert_eq "$(agent_prog_links '^ia32_enter$')" 1 "$TIER: the hook attached at it"
		kit_paired int80-splice
	fi
	for m in $MODES; do
		kit_paired "$m"
	done
	log "fallbacks: $(fallbacks)"
	log "resets: $(stat_get resets)"
	agent_stop || fail "agent did not exit 0 on SIGTERM"
	ok "agent ($TIER) exited cleanly"
done

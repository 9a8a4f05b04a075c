# timeout: 200
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
# Skips where gcc -m32 can't build (gcc-multilib: make deps) or 32-bit
# programs don't run (ia32 emulation off).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
KIT=$TMP/ia32kit
gcc -m32 -O2 -Wall -I"$TOP/tests/tools" -o "$KIT" "$TOP/tests/tools/ia32kit.c" >"$TMP/cc.log" 2>&1 ||
	skip "SKIP: gcc -m32 cannot build a 32-bit program here (apt-get install gcc-multilib, or make deps): $(tail -n 1 "$TMP/cc.log")"
"$KIT" splice >"$TMP/probe.out" 2>&1 ||
	skip "SKIP: 32-bit programs do not run here (ia32 emulation off?): $(head -c 200 "$TMP/probe.out")"

MODES="splice sendfile sendfile64 oob-sendto oob-sendmsg oob-sendmmsg oob-socketcall-send
       oob-socketcall-sendto oob-socketcall-sendmsg oob-socketcall-sendmmsg"
# a cgroup per mode: a hazard learned on one (the client's side is its
# cgroup's) must not keep the next mode's connection from pairing
declare -A CG REF
args=()
for m in $MODES; do
	cg_new c "${m//-/_}"
	CG[$m]=$c
	args+=(-c "$c")
done

# kit MODE: one run of ia32kit in that mode's cgroup, its line printed
kit() {
	cg_exec "${CG[$1]}" timeout 20 "$KIT" "$1" 2>&1 || echo "exit $?"
}

for m in $MODES; do
	REF[$m]=$(kit "$m")
	log "plain TCP $m: ${REF[$m]}"
	case ${REF[$m]} in
	"server=ok client=ok "*) ;;
	*) fail "plain TCP $m: the tool is wrong: ${REF[$m]}" ;;
	esac
done

for ((h = 0; h < ${#TIERS_TODO[@]}; h++)); do
	# shellcheck disable=SC2046
	agent_start "${args[@]}" $(tier_args "${TIERS_TODO[h]}")
	tier_check "${TIERS_TODO[h]}"
	if [ "$(stat_get guard_hooks)" = tracepoints ]; then
		assert_eq "$(stat_get guard_ia32)" guarded "$TIER: status --json guard_ia32"
	fi
	for m in $MODES; do
		st p0 pairs
		got=$(kit "$m")
		st p1 pairs
		log "$m ($TIER): $got; pairs +$((p1 - p0))"
		assert_ge $((p1 - p0)) 1 "$m ($TIER): the connection was paired (the hazard was there)"
		case $got in
		"${REF[$m]}") ok "$m ($TIER): what plain TCP gives" ;;
		"server=reset client=reset "*) ok "$m ($TIER): ended with an error on both ends" ;;
		*) fail "$m ($TIER): got '$got', want '${REF[$m]}' or a reset on both ends" ;;
		esac
	done
	log "fallbacks: $(fallbacks)"
	log "resets: $(stat_get resets)"
	agent_stop || fail "agent did not exit 0 on SIGTERM"
	ok "agent ($TIER) exited cleanly"
done

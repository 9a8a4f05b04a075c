# timeout: 90
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: the guard watches splice and MSG_OOB with fentry hooks where the
# kernel loads them, and then puts no syscall tracepoint on the host (whose
# slow syscall path every task would pay) and never idles; where the kernel
# refuses them, the default falls back to the tracepoints and says so, and
# an explicit --guard-hooks fentry refuses to start, with the reason.
# (splice_reader.sh and oob_urgent.sh check what each set of hooks does.)
#  1. auto: status names the hooks, in text and JSON; where the caller
#     knows the kernel takes fentry (NGX_SOCKMAP_EXPECT_GUARD_HOOKS, set by
#     tests/vm/run for Debian's kernels), auto must have taken it.
#  2. fentry: its programs attached (splice's only where the self-test's
#     splice_read fails), no syscall tracepoint of the agent, still armed
#     after 3 s with nothing tracked and --guard-idle 1.
#     tracepoints: status says why and what they cost, and --guard-hooks
#     fentry exits non-zero naming the refusal.
#  3. --guard-hooks tracepoints is taken on any kernel.  On x86-64, where
#     32-bit (ia32) syscalls run (a child's int $0x80 works; SIGSEGV where
#     ia32 emulation is off), which syscall tracepoints never see, the
#     guard's raw_syscalls:sys_enter hook (ia32_enter) is loaded, but
#     attached only once a 32-bit program runs (none here: the exec hook
#     ia32_exec waits for one), and status says "standby"; where they
#     don't, neither is attached, and status says "off".  fentry sees
#     them: nothing said there.  (guard_ia32.sh checks what the hooks do.)
#  4. Agent stopped: no link of its hooks left.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
cg_new CS srv

# ia32_here: run (an i386 getpid through int $0x80 works), off
# (SIGSEGV), unknown, or "" off x86-64
ia32_here() {
	[ "$(uname -m)" = x86_64 ] || return 0
	python3 - <<'PY'
import ctypes, mmap, os, resource, signal
pid = os.fork()
if pid == 0:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    m = mmap.mmap(-1, mmap.PAGESIZE,
                  prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    m.write(b"\xb8\x14\x00\x00\x00\xcd\x80\xc3")  # mov eax, 20; int $0x80; ret
    f = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(m)))
    os._exit(0 if f() == os.getpid() else 1)
_, st = os.waitpid(pid, 0)
if os.WIFSIGNALED(st) and os.WTERMSIG(st) == signal.SIGSEGV:
    print("off")
elif os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0:
    print("run")
else:
    print("unknown")
PY
}

host_tps() {
	bpftool -j link list | grep -o '"tracepoint":"sys_[a-z_]*"\|"tp_name":"sys_enter"' |
		grep -c 'send\|splice\|tp_name' || true
}
before=$(host_tps)

# 1. the default
agent_start -c "$CS" --guard-idle 1
hooks=$(stat_get guard_hooks)
log "auto took: $hooks"
case $hooks in
fentry | tracepoints) ok "status --json: guard_hooks $hooks" ;;
*) fail "status --json guard_hooks is '$hooks', not fentry or tracepoints" ;;
esac
if [ -n "${NGX_SOCKMAP_EXPECT_GUARD_HOOKS:-}" ]; then
	assert_eq "$hooks" "$NGX_SOCKMAP_EXPECT_GUARD_HOOKS" "auto took the hooks this kernel should take"
fi
"$AGENT" status >"$TMP/status.txt" || fail "status failed"
grep -q "^guard  *$hooks" "$TMP/status.txt" || fail "status text has no 'guard $hooks' line: $(cat "$TMP/status.txt")"
ok "status text names the hooks"
w=$(grep -A1 '^guard ' "$TMP/status.txt" | awk '{ if (length > m) m = length } END { print m + 0 }')
[ "$w" -le 80 ] || fail "status's guard lines are $w columns wide: $(grep -A1 '^guard ' "$TMP/status.txt")"

# 2. what each costs
if [ "$hooks" = fentry ]; then
	# splice's hook only where splice(2) can't read redirected bytes
	want=2
	[ "$(stat_get selftest.checks.splice_read.result)" = fail ] && want=3
	assert_eq "$(agent_prog_links "$GUARD_FENTRY_PROGS")" $want "fentry: send_fentry, send_fexit (and splice_fentry) attached"
	assert_eq "$(agent_prog_links "$GUARD_TP_PROGS")" 0 "fentry: no syscall tracepoint of the agent"
	assert_eq "$(stat_get guard_ia32)" "" "fentry: nothing said of ia32 syscalls (fentry sees them)"
	assert_eq "$(host_tps)" "$before" "fentry: no send/splice syscall tracepoint link on the host"
	sleep 3
	assert_eq "$(stat_get guards_armed)" True "fentry: still armed 3 s idle (--guard-idle 1 is for tracepoints)"
	agent_stop || fail "agent did not exit 0"
else
	# attached at start, but with --guard-idle 1 and nothing tracked they
	# may be idle already (QEMU TCG is that slow): step 3 counts them
	grep -A1 "^guard  *tracepoints: every syscall on the host is slower" "$TMP/status.txt" |
		grep -q "^  *(fentry refused: " ||
		fail "status does not say why tracepoints and what they cost: $(cat "$TMP/status.txt")"
	ok "status says the kernel refused fentry, and the cost"
	agent_stop || fail "agent did not exit 0"
	rc=0
	timeout 60 "$AGENT" run -c "$CS" --no-follow --metrics off --guard-hooks fentry \
		>"$TMP/fentry.out" 2>"$TMP/fentry.err" || rc=$?
	log "--guard-hooks fentry: exit $rc: $(head -c 300 "$TMP/fentry.err")"
	[ "$rc" -ne 0 ] || fail "--guard-hooks fentry started on a kernel that refuses fentry"
	[ "$rc" -ne 124 ] || fail "--guard-hooks fentry still running after 60 s"
	grep -q "refuses the guard's fentry programs" "$TMP/fentry.err" ||
		fail "--guard-hooks fentry failed without naming the refusal"
	ok "--guard-hooks fentry refuses to start and says why"
	grep -q '^ready' "$TMP/fentry.out" && fail "--guard-hooks fentry printed ready"
fi
assert_eq "$(host_tps)" "$before" "no tracepoint link left after the agent"

# 3. forced tracepoints (a bad value: cli_bad_input.sh)
agent_start -c "$CS" --guard-hooks tracepoints
assert_eq "$(stat_get guard_hooks)" tracepoints "--guard-hooks tracepoints is taken"
"$AGENT" status | grep -A1 '^guard  *tracepoints' | grep -q "^  *(--guard-hooks tracepoints)" ||
	fail "status does not say the tracepoints were asked for: $("$AGENT" status | grep -A1 '^guard')"
ok "status says the tracepoints were asked for"
assert_ge "$(agent_prog_links "$GUARD_TP_PROGS")" 6 "its syscall tracepoints attached"
ia32=$(ia32_here)
log "ia32 syscalls here: ${ia32:-not x86-64}"
case $ia32 in
run | off)
	want=standby links=1
	[ "$ia32" = off ] && want=off links=0
	assert_eq "$(stat_get guard_ia32)" "$want" "status --json: guard_ia32 follows what int \$0x80 finds here"
	assert_eq "$(agent_prog_links '^ia32_enter$')" 0 "the ia32 hook not attached while no 32-bit program ran"
	assert_eq "$(agent_prog_links '^ia32_exec$')" $links "the 32-bit exec hook attached where ia32 syscalls run"
	want="32-bit (ia32) syscalls: none yet (hooked at a 32-bit exec)"
	[ "$ia32" = off ] && want="32-bit (ia32) syscalls: none (ia32 emulation is off)"
	"$AGENT" status | grep -A3 '^guard  *tracepoints' | grep -qF "$want" ||
		fail "status text does not say '$want': $("$AGENT" status | grep -A3 '^guard')"
	ok "status text says it too"
	;;
"") assert_eq "$(stat_get guard_ia32)" "" "not x86-64: nothing said of ia32" ;;
*) log "int \$0x80 neither worked nor faulted here: not compared" ;;
esac
agent_stop || fail "agent did not exit 0"

# 4. nothing left
assert_eq "$(host_tps)" "$before" "no tracepoint link of the agent left"

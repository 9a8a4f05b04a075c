#!/usr/bin/env bash
# timeout: 90
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: the guard arms only the hooks for hazards the running kernel
# still has.  Where the self-test finds that splice(2) reads redirected
# bytes (splice_read passes), no splice hook is attached, neither the
# fentry on tcp_splice_read nor the host-wide sys_enter_splice and
# sys_enter_sendfile64 tracepoints, and status says splice "not needed";
# where it fails, the hooks are there (fentry: one; tracepoints: two).
# No Debian kernel passes splice_read yet (6.1 to 7.3: tcp_splice_read
# reads sk_receive_queue only), so NGX_SOCKMAP_TEST_PASS_CHECK=splice_read
# stands in for such a kernel; the MSG_OOB hooks stay in both cases.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
cg_new CS srv
SPLICE_PROGS='^(splice_(fentry|enter)|sendfile_enter)$'
SEND_PROGS='^send'

for hooks in auto tracepoints; do
	# 1. a kernel whose splice(2) reads redirected bytes
	NGX_SOCKMAP_TEST_PASS_CHECK=splice_read agent_start -c "$CS" --guard-hooks $hooks
	assert_eq "$(stat_get selftest.checks.splice_read.result)" pass "$hooks: splice_read passes"
	assert_eq "$(stat_get hazards.splice.mechanism)" "not needed" "$hooks: status --json: splice not needed"
	"$AGENT" status | grep -Eq '^(hazards)? +splice +not needed' ||
		fail "$hooks: status text does not say splice is not needed: $("$AGENT" status | grep splice)"
	assert_eq "$(agent_prog_links "$SPLICE_PROGS")" 0 "$hooks: no splice hook attached"
	assert_ge "$(agent_prog_links "$SEND_PROGS")" 1 "$hooks: the MSG_OOB hooks are attached"
	assert_eq "$(stat_get accelerating)" True "$hooks: accelerating"
	agent_stop || fail "$hooks: agent did not exit 0"

	# 2. this kernel, as it is
	agent_start -c "$CS" --guard-hooks $hooks
	if [ "$(stat_get selftest.checks.splice_read.result)" = pass ]; then
		log "$hooks: this kernel's splice(2) reads redirected bytes"
		assert_eq "$(agent_prog_links "$SPLICE_PROGS")" 0 "$hooks: no splice hook attached here"
	else
		want=2
		[ "$(stat_get guard_hooks)" = fentry ] && want=1
		assert_eq "$(agent_prog_links "$SPLICE_PROGS")" $want \
			"$hooks: splice_read fails here: its hooks are attached"
	fi
	agent_stop || fail "$hooks: agent did not exit 0"
done

#!/usr/bin/env bash
# timeout: 60
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: a self-test check that needs redirected bytes never passes when
# nothing was redirected (Linux 7.2 on a CPU without cx16 pairs nothing:
# tests/vm/run's nocx16 column).  NGX_SOCKMAP_TEST_NO_REDIRECT=1 sends every
# byte of the self-test through TCP, as on such a kernel:
#  - the critical data checks (order, large_message, half_close) fail with
#    "nothing was redirected", and the verdict is a critical failure;
#  - fionread_tcp, blocking_eof and splice_read say "not exercised" (a
#    skip): a pass of splice_read would take the splice guard away, one of
#    fionread_tcp would turn on the slow-reader fallback to TCP;
#  - without the knob, on this kernel, each of those three checks ran on
#    redirected bytes (pass or FAIL, never "not exercised").
. "$(dirname "$0")/../lib/common.sh"

NGX_SOCKMAP_TEST_NO_REDIRECT=1 "$AGENT" selftest >"$TMP/none.txt" 2>&1
rc=$?
log "$(cat "$TMP/none.txt")"
[ $rc -ne 0 ] || fail "the self-test passed with nothing redirected"
grep -q '^result: CRITICAL failure' "$TMP/none.txt" || fail "no critical failure with nothing redirected"
ok "nothing redirected: a critical failure"
for c in order large_message half_close; do
	grep -Eq "^  FAIL $c +passed, but nothing was redirected" "$TMP/none.txt" ||
		fail "$c does not fail for want of redirected bytes: $(grep " $c " "$TMP/none.txt")"
done
ok "order, large_message, half_close: fail, nothing was redirected"
for c in fionread_tcp blocking_eof splice_read; do
	grep -Eq "^  skip $c +not exercised: nothing was redirected" "$TMP/none.txt" ||
		fail "$c is not 'not exercised': $(grep " $c " "$TMP/none.txt")"
done
ok "fionread_tcp, blocking_eof, splice_read: not exercised"

"$AGENT" selftest >"$TMP/real.txt" 2>&1
grep -q ' [0-9]* msgs redirected' "$TMP/real.txt" || fail "no redirect line: $(cat "$TMP/real.txt")"
grep -Eq '^  pass redirect ' "$TMP/real.txt" || skip "nothing pairs on this kernel: $(grep ' redirect ' "$TMP/real.txt")"
for c in fionread_tcp blocking_eof splice_read; do
	grep -Eq "^  (pass|FAIL) $c " "$TMP/real.txt" ||
		fail "$c did not run on redirected bytes: $(grep " $c " "$TMP/real.txt")"
done
ok "with pairs, the three ran on redirected bytes"

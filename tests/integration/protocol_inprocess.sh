# timeout: 120
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: the pairing protocol as docs/DESIGN.md states it, case by case,
# on a private copy of the real data plane driven from C over loopback
# (tests/prog/test_protocol.c, one subtest per case: pair, withdraw,
# claim_race, reuse, ambiguous, wscale0, doom).  Its "not ok" lines say
# which case broke and why; a case this kernel can't exercise is skipped
# with its reason.
. "$(dirname "$0")/../lib/common.sh"
PROG=$TOP/build/prog/test_protocol
[ -x "$PROG" ] || fail "$PROG not built (make tools)"
"$PROG"
rc=$?
[ $rc = 77 ] && skip "the data plane can't load here"
[ $rc = 0 ] || fail "protocol subtests failed (the not ok lines above)"
ok "every protocol subtest passed or was skipped with its reason"

# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: tests/run leaves out what NGX_SOCKMAP_TEST_EXCLUDE names (whole
# names only: a name that merely contains it still runs) and counts it
# nowhere; .ci/run relies on it to run deb_build_purge beside make test
# in a tests/run of its own, and every test must still run once there.
. "$(dirname "$0")/../lib/common.sh"
U=$(ls "$TOP"/build/unit | head -n 1)
[ -n "$U" ] || skip "SKIP: no unit test built (make units)"

runner() { NGX_SOCKMAP_TEST_LOGS=$TMP/logs "$TOP/tests/run" "$@" 2>&1; }
out=$(runner "unit/$U")
echo "$out" | grep -q "^1 passed, 0 failed, 0 skipped" || fail "unit/$U alone: $out"
ok "unit/$U runs alone"
out=$(NGX_SOCKMAP_TEST_EXCLUDE="unit/$U" runner "unit/$U")
echo "$out" | grep -q "^0 passed, 0 failed, 0 skipped" || fail "excluded, unit/$U still ran: $out"
ok "NGX_SOCKMAP_TEST_EXCLUDE=unit/$U: not run, not counted"
out=$(NGX_SOCKMAP_TEST_EXCLUDE="unit/${U%?}" runner "unit/$U")
echo "$out" | grep -q "^1 passed" || fail "a prefix of its name excluded unit/$U: $out"
ok "a prefix of the name excludes nothing"

# .ci/run: the excluded test runs beside, and its summary is counted
grep -q 'NGX_SOCKMAP_TEST_EXCLUDE=$DEB_TEST make test' "$TOP/.ci/run" ||
	fail ".ci/run no longer excludes \$DEB_TEST from make test"
grep -q './tests/run "$DEB_TEST"' "$TOP/.ci/run" || fail ".ci/run does not run \$DEB_TEST itself"
[ -f "$TOP/tests/$(sed -n 's/^DEB_TEST=//p' "$TOP/.ci/run").sh" ] ||
	fail ".ci/run's DEB_TEST names no test"
ok ".ci/run runs $(sed -n 's/^DEB_TEST=//p' "$TOP/.ci/run") beside make test"

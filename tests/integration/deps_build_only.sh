#!/usr/bin/env bash
# timeout: 60
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: `make build-deps` (scripts/deps.sh --build) installs what
# building needs and nothing else: debian/control's Build-Depends (read
# here with python3, not with the script's own parser), plus dpkg-dev,
# make and gcc, and none of the test lab (nginx, Docker, PostgreSQL,
# Redis, php-fpm, Prometheus, debootstrap), which `make deps` keeps
# installing for the tests and the demo; `make`, `make install` and `make
# deb` run neither.  Asked as an unprivileged user with --print: nothing
# is installed.
. "$(dirname "$0")/../lib/common.sh"
cd "$TOP" || fail "cd $TOP"
command -v setpriv >/dev/null || skip "SKIP: no setpriv (util-linux)"
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

python3 - >"$TMP/want" <<'PY' || fail "can't read debian/control's Build-Depends"
import re
text = open("debian/control").read()
m = re.search(r"^Build-Depends:(.*?)^(?=\S)", text, re.S | re.M)
names = {re.sub(r"\(.*?\)|\[.*?\]", "", d).strip() for d in m.group(1).split(",")}
names = {"debhelper" if n == "debhelper-compat" else n for n in names if n}
for n in sorted(names | {"dpkg-dev", "make", "gcc"}):
    print(n)
PY
nobody scripts/deps.sh --build --print >"$TMP/build" 2>"$TMP/err" ||
	fail "scripts/deps.sh --build --print: $(cat "$TMP/err")"
diff -u "$TMP/want" "$TMP/build" >"$TMP/diff" || fail "build-deps is not debian/control's Build-Depends: $(cat "$TMP/diff")"
ok "build-deps: $(echo $(cat "$TMP/build"))"

nobody scripts/deps.sh --print >"$TMP/all" 2>"$TMP/err" || fail "scripts/deps.sh --print: $(cat "$TMP/err")"
for p in nginx prometheus postgresql-15 redis-server php8.2-fpm debootstrap; do
	grep -qx "$p" "$TMP/build" && fail "build-deps installs $p, which only the tests run"
	grep -qx "$p" "$TMP/all" || fail "make deps no longer installs $p, which the tests run"
done
ok "the test lab (nginx, Prometheus, PostgreSQL, Redis, php-fpm, debootstrap) is make deps', not build-deps'"

for t in all install deb; do
	make -n "$t" 2>/dev/null | grep -q 'scripts/deps.sh' && fail "make $t runs scripts/deps.sh"
done
make -n demo 2>/dev/null | grep -q 'scripts/deps.sh' || fail "make demo no longer installs what it runs"
ok "make, make install and make deb install nothing; make demo installs its lab"

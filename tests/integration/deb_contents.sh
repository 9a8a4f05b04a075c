#!/usr/bin/env bash
# timeout: 600
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: `make deb` (scripts/deb.sh) makes a package whose version is the
# one version string (scripts/version.sh), which its agent's --version
# prints too; that ships the Grafana dashboard and the Prometheus rules
# (and their example scrape configuration) under /usr/share/ngx-sockmap/,
# as they are in the tree, and the alerts' runbook under share/doc; and
# whose Depends name no build-only package (the compiler, bpftool, -dev
# packages: debian/control's Build-Depends).  No chroot, no install:
# deb_build_purge.sh installs and purges it.
. "$(dirname "$0")/../lib/common.sh"
for t in dpkg-buildpackage dh dpkg-checkbuilddeps; do
	command -v $t >/dev/null || skip "SKIP: no $t (apt-get install debhelper dpkg-dev)"
done
(cd "$TOP" && dpkg-checkbuilddeps) >/dev/null 2>&1 || skip "SKIP: build dependencies missing (make build-deps)"

want=$("$TOP/scripts/version.sh")
DEB_OUT=$TMP/deb "$TOP/scripts/deb.sh" >"$TMP/deb.log" 2>&1 || fail "make deb: $(tail -20 "$TMP/deb.log")"
DEB=$(ls "$TMP"/deb/ngx-sockmap_*.deb)
[ -f "$DEB" ] || fail "no package in $TMP/deb: $(ls "$TMP/deb")"
ok "make deb: $(basename "$DEB")"
assert_eq "$(dpkg-deb -f "$DEB" Version)" "$want" "the package's version is scripts/version.sh's"

dpkg-deb -x "$DEB" "$TMP/root" || fail "dpkg-deb -x"
assert_eq "$("$TMP/root/usr/sbin/ngx-sockmap" --version)" "ngx-sockmap $want" \
	"the packaged agent's --version is the package's version"
for f in grafana/ngx-sockmap.json prometheus/alerts.yml prometheus/prometheus.yml; do
	cmp -s "$TMP/root/usr/share/ngx-sockmap/$f" "$TOP/deploy/$f" ||
		fail "/usr/share/ngx-sockmap/$f is not deploy/$f: $(dpkg-deb -c "$DEB" | grep -c share/ngx-sockmap) files under share/ngx-sockmap"
done
ok "the dashboard, the rules and the scrape example are shipped under /usr/share/ngx-sockmap/"
# dh_compress gzips documentation
[ -s "$TMP/root/usr/share/doc/ngx-sockmap/runbook.md.gz" ] || fail "no runbook.md.gz under /usr/share/doc/ngx-sockmap"
ok "the alerts' runbook is shipped with the docs"

deps=$(dpkg-deb -f "$DEB" Depends)
bad=$(echo "$deps" | tr ',' '\n' | grep -E 'clang|llvm|bpftool|-dev\b|debhelper|pkg-config|python3' || true)
[ -z "$bad" ] || fail "Depends names build-only packages: $bad"
ok "Depends: $deps"

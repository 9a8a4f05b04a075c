#!/usr/bin/env bash
# timeout: 120
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: one version string, from one file.  VERSION holds the release;
# scripts/version.sh is it (plus +gitN.HASH from a checkout); the agent's
# --version prints that string, rebuilt when it changes (build/version.h);
# debian/changelog is at VERSION (make deb stamps the package with the
# same string: deb_contents.sh); the compose agent image, in
# docker-compose.yml and in README's snippet, is tagged VERSION.  No root.
. "$(dirname "$0")/../lib/common.sh"
cd "$TOP" || fail "cd $TOP"

[ -f VERSION ] || fail "no VERSION file at the top of the tree"
base=$(cat VERSION)
[ "$(wc -l <VERSION)" = 1 ] && [[ $base =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] ||
	fail "VERSION is not one line MAJOR.MINOR.PATCH: '$(cat VERSION)'"
ok "VERSION: $base"
v=$(scripts/version.sh) || fail "scripts/version.sh failed"
case $v in "$base" | "$base+git"*) ;; *) fail "scripts/version.sh says '$v', not VERSION $base" ;; esac
ok "scripts/version.sh: $v"

make -s build/ngx-sockmap >"$TMP/make.log" 2>&1 || fail "make: $(tail -3 "$TMP/make.log")"
assert_eq "$("$AGENT" --version)" "ngx-sockmap $v" "the agent's --version is the version string"

command -v dpkg-parsechangelog >/dev/null || skip "dpkg-parsechangelog missing (dpkg-dev)"
assert_eq "$(dpkg-parsechangelog -l debian/changelog -S Version)" "$base" "debian/changelog is at VERSION"

tag=$(awk '$1 == "image:" && $2 ~ /^ngx-sockmap\/agent:/ { sub(/.*:/, "", $2); print $2 }' docker-compose.yml)
assert_eq "$tag" "$base" "docker-compose.yml tags the agent image VERSION"
tag=$(awk '$1 == "image:" && $2 ~ /^ngx-sockmap\/agent:/ { sub(/.*:/, "", $2); print $2 }' README.md)
assert_eq "$tag" "$base" "README's compose snippet tags the agent image VERSION"

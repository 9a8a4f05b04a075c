#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# `make deb`: the Debian package, built with debhelper in a copy of the
# tree (build/deb/src), so the build's `make clean` never touches this
# tree's build/ and nothing is written beside the checkout (where
# dpkg-buildpackage puts its results).  The .deb lands in build/deb/.
#   scripts/deb.sh [VERSION]
# DEB_OUT: another directory for the results (tests/integration/deb_build_purge.sh).
# The package's version is the agent's, one string (scripts/version.sh:
# VERSION, +gitN.HASH from a checkout, .dirty with local changes); the
# copy's changelog says so, the tree's is left as it is, and must be at
# VERSION.
set -eu
cd "$(dirname "$0")/.."
version=${1:-$(scripts/version.sh)}
for t in dpkg-buildpackage dh dpkg-checkbuilddeps; do
	command -v $t >/dev/null || {
		echo "make deb needs $t: apt-get install --no-install-recommends debhelper dpkg-dev" >&2
		exit 1
	}
done
dpkg-checkbuilddeps || { echo "make deb: build dependencies missing (above; sudo make build-deps installs them)" >&2; exit 1; }

out=${DEB_OUT:-build/deb}
rm -rf "$out"
mkdir -p "$out/src"
# the tree as it is, tracked and new files, without what .gitignore
# ignores (build/); a tree without git: everything but build/
if git rev-parse --git-dir >/dev/null 2>&1; then
	git ls-files -z --cached --others --exclude-standard | xargs -0 -r sh -c \
		'for f; do [ -e "$f" ] && printf "%s\n" "$f"; done' sh | tar -cf - -T - | tar -xf - -C "$out/src"
else
	tar --exclude=./build -cf - . | tar -xf - -C "$out/src"
fi

base=$(dpkg-parsechangelog -l debian/changelog -S Version)
[ "$base" = "$(cat VERSION)" ] || {
	echo "make deb: debian/changelog is at $base, VERSION says $(cat VERSION): add a changelog entry (dch -v $(cat VERSION))" >&2
	exit 1
}
if [ "$version" != "$base" ]; then
	sed -i "1s/($base)/($version)/" "$out/src/debian/changelog"
fi

echo "deb: building ngx-sockmap $version in $out/src"
(cd "$out/src" && NGX_SOCKMAP_VERSION=$version dpkg-buildpackage -us -uc -b) >"$out/build.log" 2>&1 || {
	tail -40 "$out/build.log" >&2
	echo "make deb: dpkg-buildpackage failed; the whole log is $out/build.log" >&2
	exit 1
}
rm -rf "$out/src"
ls "$out"/*.deb

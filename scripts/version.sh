#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The one version string: VERSION (the release), plus +gitN.HASH (N
# commits, so a later commit's build sorts after an earlier one's, for
# dpkg too) and .dirty with local changes when built from a git checkout
# that is not the release's tag (vVERSION).  The agent's --version and
# build_info, the .deb's version and the compose image's binary all print
# this; the image tags carry VERSION itself (a tag can't hold '+').
#   scripts/version.sh            the version string
#   scripts/version.sh --commit   the commit it was built from ("" outside git)
set -eu
cd "$(dirname "$0")/.."
base=$(cat VERSION)
git rev-parse --git-dir >/dev/null 2>&1 && [ "$(git rev-parse --show-toplevel)" = "$(pwd -P)" ] || {
	[ "${1:-}" = --commit ] || echo "$base"
	exit 0
}
commit=$(git rev-parse --short HEAD)
if [ "${1:-}" = --commit ]; then
	echo "$commit"
	exit 0
fi
version=$base
[ "$(git rev-parse -q --verify "refs/tags/v$base^{commit}" 2>/dev/null)" = "$(git rev-parse HEAD)" ] ||
	version=$base+git$(git rev-list --count HEAD).$commit
[ -z "$(git status --porcelain --untracked-files=no)" ] || version=$version.dirty
echo "$version"

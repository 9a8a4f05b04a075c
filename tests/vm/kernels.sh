#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Debian kernel packages for the VM tests: pick them on the mirror, fetch them
# into build/vm/debs (once: cached, offline afterwards) and unpack each into
# build/vm/kernels/<id>/ with dpkg-deb -x (never installed, /boot untouched).
#   tests/vm/kernels.sh list    ROLE ID KVER PACKAGE=VERSION, one per kernel
#   tests/vm/kernels.sh fetch   the same, after downloading and unpacking
# Roles (the kernels a user of bookworm can run):
#   6.1         newest 6.1 in bookworm itself (the stable kernel)
#   bpo-oldest  oldest 6.12 in bookworm-backports (6.12.43: FIONREAD bug)
#   bpo-newest  newest 6.12 in bookworm-backports
#   security    newest 6.12 in bookworm-security
# The cloud-amd64 flavour: small, virtio drivers, what a VM user runs.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
VM=${NGX_SOCKMAP_VM_DIR:-$top/build/vm}
DEBS=$VM/debs
LIST=$VM/kernels.list   # the last resolution, used when the mirror is unreachable

# candidates: "SUITE VERSION PACKAGE" for every linux-image-6.x cloud image
candidates() {
	local names
	names=$(apt-cache pkgnames linux-image-6. 2>/dev/null |
		grep -E '^linux-image-6\.[0-9]+(\.[0-9]+-[0-9]+|\.[0-9]+\+deb[0-9.]+)-cloud-amd64$' || true)
	[ -n "$names" ] || return 0
	# "linux-image-6.1.0-50-cloud-amd64 | 6.1.176-1 | http://.../debian bookworm/main amd64 Packages"
	# shellcheck disable=SC2086
	apt-cache madison $names | awk -F' *[|] *' '{
		split($3, u, " "); split(u[2], s, "/"); print s[1], $2, $1 }'
}

# pick SUITE PKG_REGEX oldest|newest -> "VERSION PACKAGE"
pick() {
	local order=-r
	[ "$3" = oldest ] && order=
	awk -v s="$1" -v re="$2" '$1 == s && $3 ~ re { print $2, $3 }' <<<"$CANDS" |
		sort -V $order | head -n 1
}

resolve() {
	CANDS=$(candidates)
	if [ -z "$CANDS" ] && [ "$(id -u)" = 0 ]; then
		apt-get update -qq >/dev/null 2>&1 || true
		CANDS=$(candidates)
	fi
	local role suite re order v p
	while read -r role suite re order; do
		read -r v p < <(pick "$suite" "$re" "$order") || continue
		[ -n "${v:-}" ] || continue
		# id: the upstream version, "6.12.43" from "6.12.43-1~bpo12+1"
		# kver: uname -r, the name of the modules directory
		echo "$role ${v%%-*} $(sed -E 's/^linux-image-//' <<<"$p") $p=$v"
	done <<'EOS'
6.1 bookworm ^linux-image-6\.1\.0- newest
bpo-oldest bookworm-backports ^linux-image-6\.12\. oldest
bpo-newest bookworm-backports ^linux-image-6\.12\. newest
security bookworm-security ^linux-image-6\.12\. newest
EOS
}

# debfile PKG=VER: where apt-get download puts it (kernels have no epoch)
debfile() { echo "$DEBS/${1%%=*}_${1#*=}_amd64.deb"; }

# unpack ID KVER PKG=VER: extract the .deb once, run depmod (the package's
# postinst would, and busybox-free `modprobe tls` in the guest needs it)
unpack() {
	local id=$1 kver=$2 pv=$3 deb dir=$VM/kernels/$1
	[ "$(cat "$dir/.package" 2>/dev/null)" = "$pv" ] && return 0
	deb=$(debfile "$pv")
	[ -f "$deb" ] || { echo "kernels: no $deb" >&2; return 1; }
	rm -rf "$dir"
	mkdir -p "$dir"
	dpkg-deb -x "$deb" "$dir"
	[ -d "$dir/lib/modules/$kver" ] || { echo "kernels: $deb has no lib/modules/$kver" >&2; return 1; }
	depmod -b "$dir" "$kver"
	echo "$pv" >"$dir/.package"
}

fetch() {
	local out role id kver pv want=()
	mkdir -p "$DEBS"
	out=$(resolve)
	if [ -z "$out" ]; then
		[ -s "$LIST" ] || { echo "kernels: no cloud-amd64 kernel packages in apt's lists (apt-get update?)" >&2; return 1; }
		echo "kernels: apt lists name no kernels; using $LIST" >&2
		out=$(cat "$LIST")
	fi
	while read -r role id kver pv; do
		[ -f "$(debfile "$pv")" ] || want+=("$pv")
	done <<<"$out"
	if [ ${#want[@]} -gt 0 ]; then
		echo "kernels: downloading ${want[*]}" >&2
		# -o APT::Sandbox::User=root: build/ is root's; _apt could not write there
		if ! (cd "$DEBS" && timeout 900 apt-get -q -o APT::Sandbox::User=root download "${want[@]}" >/dev/null); then
			[ -s "$LIST" ] || return 1
			echo "kernels: download failed; using the kernels fetched before ($LIST)" >&2
			out=$(cat "$LIST")
		fi
	fi
	while read -r role id kver pv; do
		unpack "$id" "$kver" "$pv" || return 1
	done <<<"$out"
	echo "$out" >"$LIST"
	echo "$out"
}

case ${1:-} in
list) resolve ;;
fetch) fetch ;;
*) echo "usage: $0 list|fetch" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Debian kernel packages for the VM tests: pick them on the mirror, fetch them
# into build/vm/debs (once: cached, offline afterwards) and unpack each into
# build/vm/kernels/<id>/ with dpkg-deb -x (never installed, /boot untouched).
#   tests/vm/kernels.sh list    ROLE ID KVER PKG=VER[,PKG=VER...] SUITE, one per kernel
#   tests/vm/kernels.sh fetch [ROLE|ID...]
#                               the same, after downloading and unpacking
#                               (only those named, when some are)
# Roles: the kernels a user of Debian 12 can run ...
#   6.1         newest 6.1 in bookworm itself (the stable kernel)
#   bpo-oldest  oldest 6.12 in bookworm-backports (6.12.43: FIONREAD bug)
#   bpo-newest  newest 6.12 in bookworm-backports
#   security    newest 6.12 in bookworm-security
# ... and of Debian 13 and testing, from suites this host's apt does not
# list (read through a private apt configuration, $VM/apt, over the same
# mirror: scripts/apt-mirror.sh; signatures checked by apt as for any suite)
#   trixie      newest 6.12 in trixie (Debian 13 stable)
#   tbpo-6.18   newest 6.18 in trixie-backports (the long-term 6.18)
#   tbpo-newest newest kernel in trixie-backports
#   forky       newest kernel in forky (testing)
# The cloud-amd64 flavour: small, virtio drivers, what a VM user runs.
# From 6.19 the image package is a meta package: the kernel is in
# linux-binary-KVER (usr/lib/modules/KVER/vmlinuz), the modules in
# linux-modules-KVER; both are fetched with it.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
VM=${NGX_SOCKMAP_VM_DIR:-$top/build/vm}
DEBS=$VM/debs
LIST=$VM/kernels.list   # the last resolution, used when the mirror is unreachable
EXTRA_SUITES="trixie trixie-backports forky"

# The private apt configuration for EXTRA_SUITES: its own sources, lists and
# cache under $VM/apt, no dpkg status (nothing is installed from it).
APT_DIR=$VM/apt
APT_OPTS=(-o "Dir::Etc::SourceList=$APT_DIR/sources.list" -o Dir::Etc::SourceParts=/nonexistent
	-o "Dir::State::Lists=$APT_DIR/lists" -o "Dir::Cache=$APT_DIR/cache"
	-o Dir::State::status=/dev/null -o Acquire::Languages=none
	-o APT::Architecture=amd64 -o APT::Architectures::=amd64)
extra_update() { # once a day at most; an unreachable mirror keeps the old lists
	local m s
	mkdir -p "$APT_DIR/lists/partial" "$APT_DIR/cache/archives/partial"
	m=$("$top/scripts/apt-mirror.sh")
	for s in $EXTRA_SUITES; do echo "deb [arch=amd64] $m $s main"; done >"$APT_DIR/sources.list.new"
	if cmp -s "$APT_DIR/sources.list.new" "$APT_DIR/sources.list" &&
		[ -n "$(find "$APT_DIR/lists" -maxdepth 1 -name '*Packages*' -mmin -1440 2>/dev/null)" ]; then
		rm -f "$APT_DIR/sources.list.new"
		return 0
	fi
	mv "$APT_DIR/sources.list.new" "$APT_DIR/sources.list"
	[ "$(id -u)" = 0 ] || return 0
	timeout 300 apt-get -qq -o APT::Sandbox::User=root "${APT_OPTS[@]}" update >/dev/null 2>&1 ||
		echo "kernels: could not update the lists of $EXTRA_SUITES" >&2
}

# candidates: "SUITE VERSION PACKAGE" for every linux-image cloud image,
# from the host's apt (bookworm*) and the private one (EXTRA_SUITES)
madison() { # madison [APT-OPTION...]
	local names
	names=$(apt-cache "$@" pkgnames linux-image- 2>/dev/null |
		grep -E '^linux-image-[0-9]+\.[0-9]+(\.[0-9]+-[0-9]+|\.[0-9]+\+deb[0-9.]+)-cloud-amd64$' || true)
	[ -n "$names" ] || return 0
	# "linux-image-6.1.0-50-cloud-amd64 | 6.1.176-1 | http://.../debian bookworm/main amd64 Packages"
	# shellcheck disable=SC2086
	apt-cache "$@" madison $names | awk -F' *[|] *' '{
		split($3, u, " "); split(u[2], s, "/"); print s[1], $2, $1 }'
}
candidates() {
	madison
	extra_update
	[ -s "$APT_DIR/sources.list" ] && madison "${APT_OPTS[@]}"
	return 0
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
	local role suite re order v p kver id seen=" "
	while read -r role suite re order; do
		read -r v p < <(pick "$suite" "$re" "$order") || continue
		[ -n "${v:-}" ] || continue
		# kver: uname -r, the name of the modules directory
		kver=$(sed -E 's/^linux-image-//' <<<"$p")
		# id: the upstream version, "6.12.43" from "6.12.43-1~bpo12+1";
		# outside bookworm with its Debian release too (6.12.117+deb13 is
		# not bookworm-security's 6.12.117)
		id=${v%%-*}
		case $suite in bookworm*) ;; *) id=${kver%-cloud-amd64} ;; esac
		# two roles on one kernel (tbpo-newest may be the newest 6.18): once
		case $seen in *" $id "*) continue ;; esac
		seen+="$id "
		echo "$role $id $kver $(packages "$p" "$v" "$suite") $suite"
	done <<'EOS'
6.1 bookworm ^linux-image-6\.1\.0- newest
bpo-oldest bookworm-backports ^linux-image-6\.12\. oldest
bpo-newest bookworm-backports ^linux-image-6\.12\. newest
security bookworm-security ^linux-image-6\.12\. newest
trixie trixie ^linux-image-6\.12\. newest
tbpo-6.18 trixie-backports ^linux-image-6\.18\. newest
tbpo-newest trixie-backports ^linux-image- newest
forky forky ^linux-image- newest
EOS
}

# apt_for SUITE: the apt options that know it
apt_for() { case $1 in bookworm*) ;; *) printf '%s\n' "${APT_OPTS[@]}" ;; esac; }

# packages IMAGE VERSION SUITE: "PKG=VER[,PKG=VER...]", the image and, where
# it is a meta package (6.19 on), the linux-binary and linux-modules it
# depends on at the same version
packages() {
	local img=$1 v=$2 suite=$3 out=$1=$2 c opts=()
	mapfile -t opts < <(apt_for "$suite")
	for c in linux-binary linux-modules; do
		c=$c-${img#linux-image-}
		apt-cache "${opts[@]}" madison "$c" 2>/dev/null | awk -F' *[|] *' -v v="$v" '$2 == v { f = 1 } END { exit !f }' &&
			out+=",$c=$v"
	done
	echo "$out"
}

# debfile PKG=VER: where apt-get download puts it (kernels have no epoch)
debfile() { echo "$DEBS/${1%%=*}_${1#*=}_amd64.deb"; }

# unpack ID KVER PKG=VER[,...]: extract the .debs once and lay them out as
# bookworm's are (boot/vmlinuz-KVER, lib/modules/KVER: tests/vm/boot.sh and
# init look there), then run depmod (the package's postinst would, and
# busybox-free `modprobe tls` in the guest needs it)
unpack() {
	local id=$1 kver=$2 pv=$3 deb dir=$VM/kernels/$1 p
	[ "$(cat "$dir/.package" 2>/dev/null)" = "$pv" ] && return 0
	rm -rf "$dir"
	mkdir -p "$dir"
	for p in ${pv//,/ }; do
		deb=$(debfile "$p")
		[ -f "$deb" ] || { echo "kernels: no $deb" >&2; return 1; }
		dpkg-deb -x "$deb" "$dir"
	done
	# merged /usr (trixie on): modules under usr/lib/modules
	[ -d "$dir/lib" ] || [ ! -d "$dir/usr/lib/modules" ] || ln -s usr/lib "$dir/lib"
	# linux-binary (6.19 on): the kernel beside its modules, no /boot
	if [ ! -e "$dir/boot/vmlinuz-$kver" ] && [ -f "$dir/usr/lib/modules/$kver/vmlinuz" ]; then
		mkdir -p "$dir/boot"
		ln -s "../usr/lib/modules/$kver/vmlinuz" "$dir/boot/vmlinuz-$kver"
	fi
	[ -d "$dir/lib/modules/$kver" ] || { echo "kernels: $pv has no lib/modules/$kver" >&2; return 1; }
	[ -e "$dir/boot/vmlinuz-$kver" ] || { echo "kernels: $pv has no vmlinuz" >&2; return 1; }
	# modules.order and modules.builtin are not in linux-modules (6.19 on)
	depmod -b "$dir" "$kver" 2>&1 | grep -v "could not open modules\." >&2 || true
	echo "$pv" >"$dir/.package"
}

# only ROLE|ID...: the lines of those kernels (all without arguments)
only() {
	local role id rest k
	while read -r role id rest; do
		[ -n "$role" ] || continue
		[ $# -eq 0 ] && { echo "$role $id $rest"; continue; }
		for k in "$@"; do
			[ "$k" = "$role" ] || [ "$k" = "$id" ] && { echo "$role $id $rest"; break; }
		done
	done
	# not the last row's test: a kernel list whose last row is not asked
	# for would fail `out=$(only ...)` under set -e
	return 0
}

fetch() {
	local out all role id kver pv want=()
	mkdir -p "$DEBS"
	all=$(resolve)
	if [ -z "$all" ]; then
		[ -s "$LIST" ] || { echo "kernels: no cloud-amd64 kernel packages in apt's lists (apt-get update?)" >&2; return 1; }
		echo "kernels: apt lists name no kernels; using $LIST" >&2
		all=$(cat "$LIST")
	fi
	# download and unpack only the kernels asked for (CI's quick matrix
	# needs 4 of 8: unpacking and depmod take seconds each)
	out=$(only "$@" <<<"$all")
	[ -n "$out" ] || { echo "kernels: none of $* in the list" >&2; return 1; }
	local suite p opts
	for suite in $(awk '{ print $5 }' <<<"$out" | sort -u); do
		want=()
		while read -r role id kver pv s; do
			[ "$s" = "$suite" ] || continue
			for p in ${pv//,/ }; do [ -f "$(debfile "$p")" ] || want+=("$p"); done
		done <<<"$out"
		[ ${#want[@]} -gt 0 ] || continue
		mapfile -t opts < <(apt_for "$suite")
		echo "kernels: downloading ${want[*]}" >&2
		# -o APT::Sandbox::User=root: build/ is root's; _apt could not write there
		if ! (cd "$DEBS" && timeout 900 apt-get -q -o APT::Sandbox::User=root "${opts[@]}" download "${want[@]}" >/dev/null); then
			[ -s "$LIST" ] || return 1
			echo "kernels: download failed; using the kernels fetched before ($LIST)" >&2
			all=$(cat "$LIST")
			out=$(only "$@" <<<"$all")
			break
		fi
	done
	while read -r role id kver pv suite; do
		unpack "$id" "$kver" "$pv" || return 1
	done <<<"$out"
	echo "$all" >"$LIST"
	echo "$out"
}

case ${1:-} in
list) resolve ;;
fetch) shift; fetch "$@" ;;
*) echo "usage: $0 list|fetch [ROLE|ID...]" >&2; exit 2 ;;
esac

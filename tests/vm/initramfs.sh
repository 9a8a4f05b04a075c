#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# initramfs.sh KDIR KVER: pack KDIR/initramfs.cpio.gz for the unpacked kernel
# in KDIR (tests/vm/kernels.sh): a static busybox, tests/vm/init and stage2,
# and the modules the guest needs before it can mount its root (virtio_pci,
# virtiofs, overlay) that this kernel has as modules, decompressed (busybox
# insmod does not read .ko.xz) and in the order kmod resolves on the host.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kdir=$1 kver=$2
out=$kdir/initramfs.cpio.gz
BUSYBOX=${BUSYBOX:-/bin/busybox}
[ -x "$BUSYBOX" ] || { echo "initramfs: no $BUSYBOX (package busybox-static)" >&2; exit 1; }
# Rebuilt only when an input changed.
if [ -s "$out" ] && [ "$out" -nt "$here/init" ] && [ "$out" -nt "$here/stage2" ] &&
   [ "$out" -nt "$0" ] && [ "$out" -nt "$BUSYBOX" ] && [ "$out" -nt "$kdir/.package" ]; then
	exit 0
fi
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/modules"
cp "$BUSYBOX" "$stage/bin/busybox"
cp "$here/init" "$stage/init"
cp "$here/stage2" "$stage/stage2"
chmod 755 "$stage/init"
: >"$stage/modules/order"
# A module modprobe does not know and the package does not ship is taken as
# built in: linux-modules (6.19 on) has no modules.builtin to say so, and a
# missing one still shows in the guest (vm-init: no virtiofs export).
for m in virtio_pci virtiofs overlay; do
	if ! modprobe -d "$kdir" -S "$kver" --show-depends "$m" 2>/dev/null; then
		[ -z "$(find "$kdir/lib/modules/$kver/" -name "$m.ko*" -print -quit)" ] ||
			{ echo "initramfs: modprobe can't resolve $m for $kver" >&2; exit 1; }
	fi | awk '$1 == "insmod" { print $2 }'
done | awk '!seen[$0]++' | while read -r ko; do
	n=$(basename "$ko")
	n=${n%.xz}
	n=${n%.zst}
	case $ko in
	*.xz) xz -dc "$ko" >"$stage/modules/$n" ;;
	*.zst) zstd -qdc "$ko" >"$stage/modules/$n" ;;
	*) cp "$ko" "$stage/modules/$n" ;;
	esac
	echo "$n" >>"$stage/modules/order"
done
(cd "$stage" && find . | cpio -o -H newc --quiet) | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"

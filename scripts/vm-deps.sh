#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# What `make vmtest` needs on top of `make deps`: QEMU (x86 TCG; its
# qemu-system-common dependency ships /usr/lib/qemu/virtiofsd on bookworm),
# a static busybox for the guest's initramfs, cpio to pack it.  Kept out of
# deps.sh so `make demo` and `make test` don't pay for QEMU.  Idempotent.
set -eu
[ "$(id -u)" = 0 ] || { echo "vmtest installs packages: run it as root" >&2; exit 1; }
PKGS="qemu-system-x86 busybox-static cpio"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "vm-deps: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086 # a list of names
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
# The C virtiofsd left QEMU with 8.0; a newer QEMU needs the separate
# `virtiofsd` package (Rust, /usr/libexec/virtiofsd).
if [ ! -x /usr/lib/qemu/virtiofsd ] && [ ! -x /usr/libexec/virtiofsd ]; then
	echo "vm-deps: no virtiofsd (/usr/lib/qemu/virtiofsd or /usr/libexec/virtiofsd)" >&2
	exit 1
fi
exit 0

#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The Debian package under a real systemd: build it (make deb's
# scripts/deb.sh), boot a Debian kernel under QEMU with the host's root
# (read-only, overlay) and the host's systemd as PID 1 (tests/vm/init,
# VM_INIT=systemd), and run tests/vm/systemd-guest.sh there: install,
# start with nginx's own unit, attach and redirect, follow `systemctl
# restart nginx`, stop with it leaving nothing attached, purge.
#   tests/vm/systemd.sh [--kernel ROLE]   (default: security, bookworm's 6.12)
# Opt-in (`make vmtest-systemd`), not in CI's quick matrix: a systemd boot
# and three agent start-ups under TCG take minutes.  Needs root, `make all`,
# debhelper, and what `make vmtest` needs (scripts/vm-deps.sh).  Results in
# build/vmtest/systemd/ (console.log, job.log); exit 0 when every check
# passed, 77 when something it needs is missing, 1 otherwise.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2
role=security
[ "${1:-}" = --kernel ] && { role=$2; shift 2; }
[ "$(id -u)" = 0 ] || { echo "vmtest-systemd: needs root (virtiofsd, QEMU)"; exit 77; }
[ -x /lib/systemd/systemd ] || { echo "SKIP: no /lib/systemd/systemd on this root for the guest to boot"; exit 77; }
command -v qemu-system-x86_64 >/dev/null || { echo "SKIP: no qemu-system-x86_64 (scripts/vm-deps.sh)"; exit 77; }
command -v dh >/dev/null || { echo "SKIP: no debhelper to build the package (apt-get install debhelper)"; exit 77; }
for t in bpftool curl nginx; do
	command -v $t >/dev/null || { echo "SKIP: no $t on this root for the guest"; exit 77; }
done
OUT=$top/build/vmtest/systemd
rm -rf "$OUT"
mkdir -p "$OUT"
DEB_OUT=$OUT/deb scripts/deb.sh "$(git describe --always --dirty 2>/dev/null || echo unknown)" >"$OUT/deb.log" 2>&1 ||
	{ tail -20 "$OUT/deb.log"; echo "vmtest-systemd: make deb failed"; exit 1; }
deb=$(ls "$OUT"/deb/ngx-sockmap_*.deb)
read -r _ id kver _ < <(tests/vm/kernels.sh fetch "$role") ||
	{ echo "vmtest-systemd: could not get the $role kernel"; exit 1; }
echo "vmtest-systemd: $(basename "$deb") on $kver, systemd as PID 1"
t0=$(date +%s)
NGX_SOCKMAP_VM_INIT=systemd tests/vm/boot.sh --follow --timeout 1200 \
	"$top/build/vm/kernels/$id" "$kver" "$OUT/vm" "tests/vm/systemd-guest.sh $deb"
rc=$?
echo "vmtest-systemd: VM exit $rc after $(($(date +%s) - t0))s; console: $OUT/vm/console.log"
grep -E '^(ok|FAIL)' "$OUT/vm/job.log" 2>/dev/null | sed 's/^/  /'
case $rc in
0) echo "vmtest-systemd: passed" ;;
125) echo "vmtest-systemd: FAIL: the VM did not get as far as the job"; rc=1 ;;
*) echo "vmtest-systemd: FAIL"; rc=1 ;;
esac
exit $rc

#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Boot one unpacked Debian kernel under QEMU (TCG) and run a shell command in
# it, with the host's root shared read-only (virtiofs + a tmpfs overlay in
# the guest, tests/vm/init) and OUT the only writable export (/vmout inside).
#   tests/vm/boot.sh [options] KDIR KVER OUT CMD
#     --timeout SECS   whole boot + job (default 600); then qemu is killed
#     --smp N          vCPUs (default 2)     --mem MB   memory (default 2048)
#     --follow         copy the serial console to stdout as it comes
#     --cpu MODEL      QEMU CPU model (default: by kernel, see below)
# NGX_SOCKMAP_VM_INIT=systemd: boot the host's systemd as PID 1 (tests/vm/init)
# Writes OUT/console.log (serial), OUT/job.log, OUT/job.exit, OUT/boot.json.
# Exit: the job's status; 124 on timeout; 125 when the VM did not get as far
# as running the job.  qemu and both virtiofsd are killed on any exit.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
timeout=600 smp=${NGX_SOCKMAP_VM_SMP:-2} mem=${NGX_SOCKMAP_VM_MEM:-2048} follow=0 cpu=
while [ $# -gt 0 ]; do
	case $1 in
	--follow) follow=1; shift ;;
	--timeout) timeout=$2; shift 2 ;;
	--smp) smp=$2; shift 2 ;;
	--cpu) cpu=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	*) break ;;
	esac
done
[ $# -eq 4 ] || { sed -n '4,13p' "$0" >&2; exit 2; }
kdir=$1 kver=$2 out=$3 cmd=$4
QEMU=${QEMU:-qemu-system-x86_64}
VIRTIOFSD=${VIRTIOFSD:-}
for v in /usr/lib/qemu/virtiofsd /usr/libexec/virtiofsd; do
	[ -z "$VIRTIOFSD" ] && [ -x "$v" ] && VIRTIOFSD=$v
done
[ -n "$VIRTIOFSD" ] || { echo "boot: no virtiofsd (make vmtest installs qemu-system-x86)" >&2; exit 125; }
case $top in *[[:space:]]*) echo "boot: $top has a space; virtiofs paths would break" >&2; exit 125 ;; esac

"$top/tests/vm/initramfs.sh" "$kdir" "$kver"
mkdir -p "$out"
rm -f "$out"/{console.log,job.log,job.exit,boot.json,init-error}
{
	printf 'TOP=%q\nKVER=%q\nKDIR=%q\n' "$top" "$kver" "$kdir"
	printf 'VM_CMD=%q\n' "$cmd"
	# systemd as PID 1 instead of busybox (tests/vm/init; tests/vm/systemd.sh)
	printf 'VM_INIT=%q\n' "${NGX_SOCKMAP_VM_INIT:-}"
} >"$out/vm.env"

# Sockets and the read-only view of / live in a private temp dir (socket
# paths are limited to 108 bytes; build/ may be deep).
run=$(mktemp -d /tmp/nsm-vm.XXXXXX)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	sleep 0.5
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$run"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

mkdir -p "$run/ro"
# The host root, read-only below the guest's own ro mount and overlay: a
# non-recursive bind (no /proc, /sys, /dev of the host inside) remounted ro,
# in a mount namespace of virtiofsd's own so the host sees nothing of it.
# The checkout is bound on top too, read-only: a clone on another mount
# than / (a CI workspace) would not be in a non-recursive bind of /.
unshare -m --propagation private sh -c '
	mount --bind / "$1" && mount -o remount,bind,ro "$1" || exit 1
	if [ "$2" != / ]; then
		mount --bind "$2" "$1$2" && mount -o remount,bind,ro "$1$2" || exit 1
	fi
	shift 2; exec "$@"' sh "$run/ro" "$top" \
	"$VIRTIOFSD" --socket-path="$run/root.sock" -o source="$run/ro" -o cache=always \
	-o sandbox=namespace -o log_level=warn >"$out/virtiofsd-root.log" 2>&1 &
pids+=($!)
"$VIRTIOFSD" --socket-path="$run/out.sock" -o source="$out" -o cache=none \
	-o sandbox=namespace -o log_level=warn >"$out/virtiofsd-out.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do
	[ -S "$run/root.sock" ] && [ -S "$run/out.sock" ] && break
	sleep 0.1
done
[ -S "$run/root.sock" ] && [ -S "$run/out.sock" ] ||
	{ echo "boot: virtiofsd did not start:" >&2; cat "$out"/virtiofsd-*.log >&2; exit 125; }

# -cpu qemu64,-cx16 before 6.19: with QEMU 7.2 TCG, 6.12.95 crashed in
# SLUB's cmpxchg16b path in 4 of 6 boots on the default model; without cx16
# SLUB takes its locked path (mm/slub.c system_has_freelist_aba()): 9 of 9
# clean.  From 6.19 the kernel needs cx16: BPF socket storage comes from
# kmalloc_nolock() (f484f4a3e058), which fails on every call without it
# (mm/slub.c kmalloc_nolock_noprof), so nothing could be tracked.
if [ -z "$cpu" ]; then
	cpu=qemu64,-cx16
	IFS=. read -r kmaj kmin _ <<<"$kver"
	[ "$kmaj" -gt 6 ] || { [ "$kmaj" -eq 6 ] && [ "${kmin%%[!0-9]*}" -ge 19 ]; } && cpu=qemu64
fi
# mitigations=off: qemu64 claims no Meltdown immunity, and page-table
# isolation doubles the cost of every syscall under TCG; nothing tested here
# depends on it.
t0=$(date +%s.%N)
"$QEMU" -accel tcg -cpu "$cpu" -smp "$smp" -m "$mem" \
	-object memory-backend-memfd,id=mem,size="${mem}M",share=on \
	-machine pc,memory-backend=mem \
	-nodefaults -display none -no-reboot -monitor none \
	-serial file:"$out/console.log" \
	-kernel "$kdir/boot/vmlinuz-$kver" -initrd "$kdir/initramfs.cpio.gz" \
	-append "console=ttyS0 rdinit=/init panic=-1 oops=panic mitigations=off loglevel=4" \
	-chardev socket,id=root,path="$run/root.sock" \
	-device vhost-user-fs-pci,chardev=root,tag=hostroot \
	-chardev socket,id=out,path="$run/out.sock" \
	-device vhost-user-fs-pci,chardev=out,tag=out \
	>"$out/qemu.log" 2>&1 &
qpid=$!
pids+=("$qpid")
if [ $follow = 1 ]; then
	# tail ends by itself when qemu does (--pid)
	: >>"$out/console.log"
	tail --pid="$qpid" -n +1 -F "$out/console.log" 2>/dev/null |
		sed -u -e 's/\r$//' -e "s/^/$(basename "$out")| /" &
	follower=$!
	pids+=("$follower")
fi
deadline=$(($(date +%s) + timeout))
timed_out=0
while kill -0 "$qpid" 2>/dev/null; do
	if [ "$(date +%s)" -ge "$deadline" ]; then
		timed_out=1
		echo "boot: timeout after ${timeout}s, killing qemu" >&2
		kill -TERM "$qpid" 2>/dev/null || true
		sleep 2
		kill -KILL "$qpid" 2>/dev/null || true
		break
	fi
	sleep 0.5
done
wait "$qpid" 2>/dev/null || true
t1=$(date +%s.%N)
[ -n "${follower:-}" ] && { wait "$follower" 2>/dev/null || true; }
up=$(sed -n 's/^vm: up \([0-9.]*\)s.*/\1/p' "$out/console.log" | head -n 1)
rc=$(cat "$out/job.exit" 2>/dev/null || true)
printf '{"kernel": "%s", "cpu": "%s", "wall_s": %.1f, "boot_s": %s, "timed_out": %s, "job_exit": %s}\n' \
	"$kver" "$cpu" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "${up:-null}" \
	"$([ $timed_out = 1 ] && echo true || echo false)" "${rc:-null}" >"$out/boot.json"
if [ $timed_out = 1 ]; then exit 124; fi
[ -n "$rc" ] || exit 125
exit "$rc"

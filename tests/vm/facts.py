#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""facts.py [--config FILE]: what the running kernel has that ngx-sockmap
cares about, as one JSON object on stdout.  Probed, not inferred from the
version: Debian backports fixes, and the tests/vm matrix is there to show
which kernel has what.  Runs inside the VM guests and on the host; needs
root (BPF_MAP_CREATE) and bpftool (the BTF)."""
import ctypes
import errno
import gzip
import json
import os
import re
import struct
import subprocess
import sys

SYS_BPF = 321                 # x86_64
BPF_MAP_CREATE = 0
BPF_MAP_TYPE_ARENA = 33       # include/uapi/linux/bpf.h, Linux 6.9
BPF_F_MMAPABLE = 1 << 10


def arena_map():
    """Create (and close) a one-page BPF arena: key and value size 0,
    BPF_F_MMAPABLE (kernel/bpf/arena.c arena_map_alloc)."""
    libc = ctypes.CDLL(None, use_errno=True)
    attr = bytearray(72)      # zero tail: older kernels check it is zero
    struct.pack_into("IIIII", attr, 0, BPF_MAP_TYPE_ARENA, 0, 0, 1, BPF_F_MMAPABLE)
    buf = (ctypes.c_char * len(attr)).from_buffer(attr)
    fd = libc.syscall(SYS_BPF, BPF_MAP_CREATE, buf, len(attr))
    if fd < 0:
        e = ctypes.get_errno()
        return False, errno.errorcode.get(e, str(e))
    os.close(fd)
    return True, ""


def btf_facts():
    """bpf_sock_destroy as a BTF FUNC (the kfunc, Linux 6.5) and whether
    struct sk_psock has msg_tot_len (what the slow-reader bound reads)."""
    try:
        out = subprocess.run(["bpftool", "btf", "dump", "file", "/sys/kernel/btf/vmlinux"],
                             capture_output=True, text=True, timeout=120).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, None, str(e)
    if not out:
        return None, None, "no BTF (/sys/kernel/btf/vmlinux)"
    has_kfunc = re.search(r"^\[\d+\] FUNC 'bpf_sock_destroy' ", out, re.M) is not None
    m = re.search(r"^\[\d+\] STRUCT 'sk_psock' size=\d+ vlen=(\d+)\n((?:\t.*\n)*)", out, re.M)
    tot_len = None
    if m:
        tot_len = re.search(r"^\t'msg_tot_len' ", m.group(2), re.M) is not None
    return has_kfunc, tot_len, ""


def kallsyms(name):
    with open("/proc/kallsyms") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[2] == name:
                return True
    return False


def config(path, names):
    vals = {n: "n" for n in names}
    if not path:
        for p in ("/boot/config-" + os.uname().release, "/proc/config.gz"):
            if os.path.exists(p):
                path = p
                break
    if not path or not os.path.exists(path):
        return {n: None for n in names}, None
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        for line in f:
            m = re.match(r"^(CONFIG_\w+)=(.*)$", line.strip())
            if m and m.group(1) in vals:
                vals[m.group(1)] = m.group(2)
    return vals, path


def main():
    cfg = None
    if len(sys.argv) == 3 and sys.argv[1] == "--config":
        cfg = sys.argv[2]
    arena, arena_err = arena_map()
    kfunc, tot_len, btf_err = btf_facts()
    conf, conf_path = config(cfg, ["CONFIG_INET_DIAG_DESTROY", "CONFIG_TLS",
                                   "CONFIG_BPF_STREAM_PARSER", "CONFIG_DEBUG_INFO_BTF"])
    tls = subprocess.run(["modprobe", "-q", "tls"], capture_output=True).returncode == 0 \
        or os.path.exists("/sys/module/tls")
    with open("/proc/version") as f:
        version = f.read().strip()
    json.dump({
        "release": os.uname().release,
        "version": version,
        "arena_map": arena, "arena_map_error": arena_err,
        "bpf_sock_destroy_btf": kfunc,
        "sk_psock_msg_tot_len": tot_len,
        "btf_error": btf_err,
        "tcp_bpf_ioctl_kallsyms": kallsyms("tcp_bpf_ioctl"),
        "tls_module_loads": tls,
        "config": conf, "config_file": conf_path,
    }, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()

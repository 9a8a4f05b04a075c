# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""What the socket probes of the integration tests share (ktls_probe,
oob_probe, stalled_reader, reuse_unspec): results written atomically for
the shell to read, bounded waits for each other's marker files, and how a
connection ended, in the words the tests compare."""
import errno
import json
import os
import time

# A connection the agent (or the peer) ended: ECONNABORTED from
# bpf_sock_destroy here, ECONNRESET/EPIPE from the RST there, EACCES from
# an sk_msg SK_DROP (net/ipv4/tcp_bpf.c tcp_bpf_send_verdict).
RESETS = (errno.ECONNRESET, errno.EPIPE, errno.ECONNABORTED, errno.EACCES)


def err_name(e):
    return errno.errorcode.get(e.errno, str(e.errno))


def end_of(e):
    """'reset', or 'error:NAME' for any other error."""
    return "reset" if e.errno in RESETS else "error:" + err_name(e)


def dump(path, obj):
    """Write obj as JSON to path, whole or not at all (rename)."""
    with open(path + ".tmp", "w") as f:
        json.dump(obj, f)
    os.rename(path + ".tmp", path)


def wait_file(path, secs):
    """Wait up to secs for path to exist; whether it does."""
    t = time.monotonic() + secs
    while not os.path.exists(path) and time.monotonic() < t:
        time.sleep(0.02)
    return os.path.exists(path)

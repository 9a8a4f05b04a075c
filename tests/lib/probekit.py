# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""What the socket probes of the integration tests share (ktls_probe,
oob_probe, stalled_reader, reuse_unspec): results written atomically for
the shell to read, bounded waits for each other's marker files, the
reader's listening socket and read loop, the sender's hand-off, and how a
connection ended, in the words the tests compare."""
import errno
import json
import os
import socket
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


def write_atomic(path, text):
    """Write text to path, whole or not at all (rename)."""
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.rename(path + ".tmp", path)


def listen_local(port_path, secs):
    """A socket listening on 127.0.0.1 (any port), accepting for secs; its
    port written to port_path for the other end."""
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(1)
    write_atomic(port_path, str(ls.getsockname()[1]))
    ls.settimeout(secs)
    return ls


def read_until_quiet(c, size, on_data, quiet=3):
    """recv() from c until EOF, an error or quiet seconds without a byte,
    handing each chunk to on_data; how the stream ended: eof, reset,
    error:NAME or timeout."""
    c.settimeout(0.1)
    last = time.monotonic()
    while time.monotonic() - last < quiet:
        try:
            data = c.recv(size)
        except socket.timeout:
            continue
        except BlockingIOError:
            continue  # tcp_bpf may say EAGAIN to a woken reader
        except OSError as e:
            return end_of(e)
        if not data:
            return "eof"
        last = time.monotonic()
        on_data(data)
    return "timeout"


def sender_done(s, d, res, secs):
    """The sender's last steps: DIR/sender.json and DIR/sender.done, then
    its socket kept open (so the reader's end is not this close) until the
    reader is done (DIR/reader.json, secs at most)."""
    dump(os.path.join(d, "sender.json"), res)
    open(os.path.join(d, "sender.done"), "w").close()
    wait_file(os.path.join(d, "reader.json"), secs)
    s.close()

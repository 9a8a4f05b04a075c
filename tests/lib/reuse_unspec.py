# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Socket reuse after connect(AF_UNSPEC), for socket_reuse_unspec.sh.

  reuse_unspec.py server LETTER NSEND DIR   (one connection, then exit)
  reuse_unspec.py client PORT_A PORT_B NA NC DIR

Server LETTER listens on 127.0.0.1, writes its port to DIR/LETTER.port,
accepts one connection, sends NSEND bytes of LETTER, writes
DIR/LETTER.sent, then reads until EOF, an error, or 1 s after the client
wrote DIR/client.done (20 s at most).  It records what it read and how the
read ended in DIR/LETTER.json.

The client connects to A, waits until A's NA bytes are waiting for it
(FIONREAD, which counts redirected bytes too), reads none of them,
calls connect(AF_UNSPEC) (tcp_disconnect(): TCP purges the unread bytes
and resets A), connects the same socket to B, sends NC bytes of 'c',
half-closes and reads until EOF or an error (5 s at most).  It records
in DIR/client.json what it read, by letter.

Every read has a deadline: a hang is reported as "timeout", never waited
out.
"""
import ctypes
import fcntl
import os
import socket
import struct
import subprocess
import sys
import termios
import time
from probekit import dump, err_name

libc = ctypes.CDLL(None, use_errno=True)


def disconnect(s):
    """connect(fd, {AF_UNSPEC}): the documented way to dissolve a TCP
    association (net/ipv4/af_inet.c inet_dgram/stream_connect ->
    tcp_disconnect).  Python's socket.connect can't pass AF_UNSPEC."""
    sa = ctypes.create_string_buffer(struct.pack("=H14x", socket.AF_UNSPEC), 16)
    if libc.connect(s.fileno(), sa, 16) != 0:
        e = ctypes.get_errno()
        raise OSError(e, "connect(AF_UNSPEC): " + os.strerror(e))


def fionread(s):
    buf = fcntl.ioctl(s.fileno(), termios.FIONREAD, b"\0\0\0\0")
    return struct.unpack("i", buf)[0]


def read_until(s, stop, hard_deadline):
    """Read until EOF/error, stop() is true, or hard_deadline.  Returns
    (data, end) where end is eof, reset (ECONNRESET/EPIPE/ECONNABORTED),
    error:NAME, stopped or timeout."""
    data = bytearray()
    s.settimeout(0.1)
    while True:
        if time.monotonic() > hard_deadline:
            return data, "timeout"
        if stop():
            return data, "stopped"
        try:
            d = s.recv(65536)
        except socket.timeout:
            continue
        except BlockingIOError:
            # tcp_bpf can report EAGAIN to a waiting reader at EOF
            # (docs/DESIGN.md): read again
            continue
        except (ConnectionResetError, BrokenPipeError, ConnectionAbortedError):
            return data, "reset"
        except OSError as e:
            return data, "error:" + err_name(e)
        if not d:
            return data, "eof"
        data += d


def letters(data):
    """{letter: count} of a byte string."""
    out = {}
    for b in set(data):
        out[chr(b)] = data.count(b)
    return out


def server(letter, nsend, d):
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(1)
    with open(os.path.join(d, letter + ".port.tmp"), "w") as f:
        f.write(str(ls.getsockname()[1]))
    os.rename(os.path.join(d, letter + ".port.tmp"), os.path.join(d, letter + ".port"))
    ls.settimeout(20)
    c, _ = ls.accept()
    c.sendall(letter.encode() * nsend)
    open(os.path.join(d, letter + ".sent"), "w").close()
    done = os.path.join(d, "client.done")
    since = [None]

    def stop():
        if os.path.exists(done):
            since[0] = since[0] or time.monotonic()
            return time.monotonic() - since[0] > 1.0
        return False

    data, end = read_until(c, stop, time.monotonic() + 20)
    dump(os.path.join(d, letter + ".json"),
         {"got": len(data), "letters": letters(data), "end": end,
          "head": data[:16].decode("latin-1")})


def client(port_a, port_b, na, nc, d):
    s = socket.socket()
    s.settimeout(5)
    s.connect(("127.0.0.1", port_a))
    sent = os.path.join(d, "A.sent")
    t = time.monotonic() + 5
    while not os.path.exists(sent) and time.monotonic() < t:
        time.sleep(0.01)
    # Wait (bounded) until A's bytes are queued to us, unread.
    q = 0
    while time.monotonic() < t:
        q = fionread(s)
        if q >= na:
            break
        time.sleep(0.01)
    res = {"queued_before_disconnect": q}
    if os.environ.get("REUSE_SHUTDOWN"):
        s.shutdown(socket.SHUT_RDWR)  # a FIN first: sk_shutdown is full at the disconnect
    disconnect(s)
    if os.environ.get("REUSE_HOOK"):
        subprocess.run(os.environ["REUSE_HOOK"], shell=True, check=False)
    res["fionread_after_disconnect"] = fionread(s)
    s.settimeout(5)
    s.connect(("127.0.0.1", port_b))
    res["fionread_after_reconnect"] = fionread(s)
    try:
        s.sendall(b"c" * nc)
        s.shutdown(socket.SHUT_WR)
        res["send"] = "ok"
    except OSError as e:
        res["send"] = "error:" + err_name(e)
    data, end = read_until(s, lambda: False, time.monotonic() + 5)
    res.update({"got": len(data), "letters": letters(data), "end": end,
                "head": data[:16].decode("latin-1")})
    dump(os.path.join(d, "client.json"), res)
    open(os.path.join(d, "client.done"), "w").close()
    s.close()


if __name__ == "__main__":
    if sys.argv[1] == "server":
        server(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    elif sys.argv[1] == "client":
        client(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]),
               int(sys.argv[5]), sys.argv[6])
    else:
        sys.exit("usage: see the docstring")

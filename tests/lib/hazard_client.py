# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""A client that shows a hazard on the active end, and the server it
talks to: it reads its replies with splice(2), as the client leg of an
L4 relay does (Go's io.Copy to a pipe), leaves them unread for a while,
or sends urgent data (MSG_OOB) first.

splice(2) on a TCP socket reads sk_receive_queue only
(net/ipv4/tcp.c tcp_splice_read), so on a redirected connection the
client would wait forever unless the guard has the connection reset.  A
reply left unread piles up in the client's psock until the server's send
crosses --max-unread and the data plane ends the connection.  Either way
the hazard is the client's, not the server's.  An urgent byte can't be
redirected (tcp_bpf has no MSG_OOB path): the data plane ends the
connection, or sends it through TCP where that is safe, and learns it as
the client's.

  hazard_client.py serve --listen ADDR:PORT --ready FILE [--reply N]
      accept one connection, read its 4-byte request, answer N bytes,
      wait for the client's EOF (or error); bounded by --timeout.
  hazard_client.py client --connect ADDR:PORT --bind ADDR [--reply N]
                          [--read splice|stall|urgent]
      send the request, then read the reply with splice(2) into a pipe
      (splice), or sleep --stall seconds first and then recv() it, or
      send one byte with MSG_OOB and then recv() it (urgent).
      Prints one line: "outcome=ok|reset|timeout|eof|error:NAME bytes=N".
Exit 0 when the line was printed (the test judges the outcome), 2 on bad
usage.
"""
import argparse
import os
import select
import socket
import sys
import time

from probekit import end_of, write_atomic

REQUEST = b"PING"


def addr(s):
    host, _, port = s.rpartition(":")
    return host, int(port)


def serve(a):
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(addr(a.listen))
    ls.listen(1)
    write_atomic(a.ready, "ready")
    ls.settimeout(a.timeout)
    try:
        c, _ = ls.accept()
    except socket.timeout:
        print("serve: nobody connected", file=sys.stderr)
        return 0
    c.settimeout(a.timeout)
    try:
        got = b""
        while len(got) < len(REQUEST):
            chunk = c.recv(len(REQUEST) - len(got))
            if not chunk:
                return 0
            got += chunk
        chunk = b"r" * 65536
        for _ in range(a.reply // len(chunk)):
            c.sendall(chunk)
        while c.recv(65536):
            pass
    except (OSError, socket.timeout) as e:
        # the agent ended it, or the client went away
        print(f"serve: {e!r}", file=sys.stderr)
    return 0


def read_spliced(s, a):
    """Read the reply with splice(2); how it ended and the bytes read."""
    n = 0
    r, w = os.pipe()
    deadline = time.monotonic() + a.timeout
    while n < a.reply:
        left = deadline - time.monotonic()
        if left <= 0:
            return "timeout", n
        # poll says readable on bytes in the psock too (sk_msg_is_readable)
        select.select([s], [], [], min(left, 0.2))
        try:
            k = os.splice(s.fileno(), w, 65536, flags=os.SPLICE_F_NONBLOCK)
        except BlockingIOError:
            time.sleep(0.01)
            continue
        if k == 0:
            return "eof", n
        n += len(os.read(r, k))
    return "ok", n


def read_late(s, a):
    """Leave the reply unread for --stall seconds, then recv() it."""
    n = 0
    time.sleep(a.stall)
    while n < a.reply:
        k = len(s.recv(1 << 20))
        if not k:
            return "eof", n
        n += k
    return "ok", n


def client(a):
    s = socket.socket()
    s.bind((a.bind, 0))
    s.settimeout(a.timeout)
    outcome, n = "timeout", 0
    try:
        s.connect(addr(a.connect))
        s.sendall(REQUEST)
        if a.read == "urgent":
            s.send(b"!", socket.MSG_OOB)
            a.stall = 0
        outcome, n = (read_spliced if a.read == "splice" else read_late)(s, a)
    except socket.timeout:
        pass
    except OSError as e:
        outcome = end_of(e)
    print(f"outcome={outcome} bytes={n}")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    sv = sub.add_parser("serve")
    sv.add_argument("--listen", required=True)
    sv.add_argument("--ready", required=True)
    cl = sub.add_parser("client")
    cl.add_argument("--connect", required=True)
    cl.add_argument("--bind", required=True)
    cl.add_argument("--read", choices=("splice", "stall", "urgent"), default="splice")
    cl.add_argument("--stall", type=float, default=2)
    for q in (sv, cl):
        q.add_argument("--reply", type=int, default=65536)
        q.add_argument("--timeout", type=float, default=5)
    a = p.parse_args()
    return serve(a) if a.cmd == "serve" else client(a)


if __name__ == "__main__":
    sys.exit(main())

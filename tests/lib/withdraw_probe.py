# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""A server that speaks first and a client whose first event is a packet
in (withdraw_no_wscale.sh).

  server DIR RCVBUF   listen on 127.0.0.1:0 (SO_RCVBUF=RCVBUF before
                      listen when > 0: a window scale of 0 in its SYN-ACK),
                      port to DIR/port; per connection: send FIRST bytes,
                      wait for "GO\\n", send BULK bytes, wait for "DONE\\n"
  client DIR PORT     connect, wait until FIRST bytes are queued, record
                      FIONREAD and the netns' TCPHPHits, DIR/first; wait
                      for DIR/go; read FIRST, send "GO\\n", read BULK the
                      way nginx does (edge-triggered epoll, and a full
                      read followed by FIONREAD = 0 means "wait for the
                      next edge"), send "DONE\\n"; DIR/result

Every byte is checked against one pattern (offset mod 251).  A wait of
STALL seconds for an edge that does not come is a stall, as nginx would
hang there."""
import fcntl
import os
import select
import socket
import struct
import sys
import termios
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import probekit  # noqa: E402

FIRST = 1000
BULK = 24 << 20
CHUNK = 16384
STALL = 5
PAT = bytes(range(251)) * (CHUNK // 251 + 2)


def pattern(off, n):
    s = off % 251
    return PAT[s:s + n]


def send_pattern(c, off, n):
    while n:
        k = min(n, CHUNK)
        c.sendall(pattern(off, k))
        off += k
        n -= k
    return off


def read_line(c):
    b = b""
    while not b.endswith(b"\n"):
        x = c.recv(64)
        if not x:
            raise EOFError("peer closed")
        b += x
    return b


def fionread(s):
    return struct.unpack("i", fcntl.ioctl(s.fileno(), termios.FIONREAD, b"\0" * 4))[0]


def hp_hits():
    """TcpExt TCPHPHits of this netns: in-order data segments queued by
    the header-prediction fast path (net/ipv4/tcp_input.c)."""
    with open("/proc/net/netstat") as f:
        lines = [l.split() for l in f if l.startswith("TcpExt:")]
    return int(dict(zip(lines[0][1:], lines[1][1:]))["TCPHPHits"])


def server(d, rcvbuf):
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if rcvbuf > 0:
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    ls.bind(("127.0.0.1", 0))
    ls.listen(8)
    with open(d + "/port.tmp", "w") as f:
        f.write(str(ls.getsockname()[1]))
    os.rename(d + "/port.tmp", d + "/port")
    c, _ = ls.accept()
    off = send_pattern(c, 0, FIRST)
    if read_line(c) != b"GO\n":
        raise SystemExit("server: bad request")
    send_pattern(c, off, BULK)
    if read_line(c) != b"DONE\n":
        raise SystemExit("server: bad end")
    c.close()


def client(d, port):
    res = {"ok": 0}
    hp0 = hp_hits()
    s = socket.create_connection(("127.0.0.1", port))
    # the first bytes, all of them, before any send: poll, then give
    # the rest of the segment time to land
    t = time.monotonic() + STALL
    while time.monotonic() < t:
        if select.select([s], [], [], 0.05)[0]:
            peek = s.recv(FIRST, socket.MSG_PEEK | socket.MSG_DONTWAIT)
            if len(peek) >= FIRST:
                break
    res["queued_first"] = len(s.recv(FIRST, socket.MSG_PEEK | socket.MSG_DONTWAIT))
    res["fionread_first"] = fionread(s)
    res["hp_hits_first"] = hp_hits() - hp0
    probekit.dump(d + "/first", res)
    if not probekit.wait_file(d + "/go", 30):
        raise SystemExit("client: no go")
    got = b""
    while len(got) < FIRST:
        got += s.recv(FIRST - len(got))
    if got != pattern(0, FIRST):
        res["error"] = "first bytes differ"
        probekit.dump(d + "/result", res)
        return
    off = FIRST
    s.sendall(b"GO\n")
    # nginx's read loop (ngx_unix_recv with NGX_HAVE_FIONREAD): a read
    # that filled the buffer asks FIONREAD how much is left; 0 clears
    # "ready" and waits for the next epoll edge
    s.setblocking(False)
    ep = select.epoll()
    ep.register(s.fileno(), select.EPOLLIN | select.EPOLLET)
    end = FIRST + BULK
    ready = True
    fion_zero_waits = 0
    buf = bytearray(CHUNK)
    while off < end:
        if not ready:
            if not ep.poll(STALL):
                res["error"] = "stall: no edge for %d s at byte %d of %d (FIONREAD %d)" % (
                    STALL, off - FIRST, BULK, fionread(s))
                probekit.dump(d + "/result", res)
                return
            ready = True
        try:
            n = s.recv_into(buf, min(CHUNK, end - off))
        except BlockingIOError:
            ready = False
            continue
        if n == 0:
            res["error"] = "EOF at byte %d" % (off - FIRST)
            probekit.dump(d + "/result", res)
            return
        if buf[:n] != pattern(off, n):
            res["error"] = "bytes differ at %d" % (off - FIRST)
            probekit.dump(d + "/result", res)
            return
        off += n
        if n == CHUNK and fionread(s) == 0:
            fion_zero_waits += 1
            ready = False
    s.setblocking(True)
    s.sendall(b"DONE\n")
    res["bulk_bytes"] = off - FIRST
    res["fionread_zero_waits"] = fion_zero_waits
    res["ok"] = 1
    probekit.dump(d + "/result", res)
    s.close()


if __name__ == "__main__":
    if sys.argv[1] == "server":
        server(sys.argv[2], int(sys.argv[3]))
    else:
        client(sys.argv[2], int(sys.argv[3]))

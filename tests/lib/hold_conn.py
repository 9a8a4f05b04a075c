#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Connections held open, for tests that look at live ones (why_not.sh).

serve --listen ADDR:PORT --ready FILE [--timeout S]
    echo what each connection sends, keep it open until the peer closes
hold --connect ADDR:PORT --ready FILE [--timeout S]
    connect, send one line and read its echo (the first send decides the
    verdict), write "ok LOCALPORT" to FILE, then hold the connection
"""
import argparse
import socket
import sys
import threading
import time


def addr(s):
    host, port = s.rsplit(":", 1)
    return host.strip("[]"), int(port)


def echo(c):
    with c:
        while True:
            b = c.recv(65536)
            if not b:
                return
            c.sendall(b)


def serve(a):
    host, port = addr(a.listen)
    ls = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((host, port))
    ls.listen(16)
    ls.settimeout(a.timeout)
    open(a.ready, "w").write("listening\n")
    end = time.monotonic() + a.timeout
    while time.monotonic() < end:
        try:
            c, _ = ls.accept()
        except socket.timeout:
            break
        threading.Thread(target=echo, args=(c,), daemon=True).start()
    time.sleep(max(0, end - time.monotonic()))


def hold(a):
    s = socket.create_connection(addr(a.connect), timeout=5)
    s.sendall(b"ping\n")
    got = b""
    while len(got) < 5:
        b = s.recv(5 - len(got))
        if not b:
            sys.exit("closed before the echo")
        got += b
    open(a.ready, "w").write("ok %d\n" % s.getsockname()[1])
    time.sleep(a.timeout)
    s.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["serve", "hold"])
    p.add_argument("--listen")
    p.add_argument("--connect")
    p.add_argument("--ready", required=True)
    p.add_argument("--timeout", type=float, default=60)
    a = p.parse_args()
    serve(a) if a.mode == "serve" else hold(a)


if __name__ == "__main__":
    main()

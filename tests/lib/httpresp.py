# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Reading HTTP/1.1 responses off a raw socket, for the test clients that
check bodies byte by byte (tests/lib/proxy.sh's ka.py, the pipelining test).
Put tests/lib on PYTHONPATH."""


def recv_more(s, buf, why):
    d = s.recv(262144)
    if not d:
        raise EOFError("connection closed " + why)
    buf += d


def read_response(s, buf):
    """One response from s; buf (a bytearray) keeps what was read past it.
    Returns (status line, body).  Needs Content-Length (nginx sends it for
    static files)."""
    while True:
        k = buf.find(b"\r\n\r\n")
        if k >= 0:
            break
        recv_more(s, buf, "in headers")
    head = bytes(buf[:k]).split(b"\r\n")
    del buf[:k + 4]
    hdr = {}
    for h in head[1:]:
        name, _, v = h.partition(b":")
        hdr[name.strip().lower()] = v.strip()
    if b"content-length" not in hdr:
        raise ValueError("no Content-Length in response: %r" % head)
    n = int(hdr[b"content-length"])
    while len(buf) < n:
        recv_more(s, buf, "in body (%d of %d bytes)" % (len(buf), n))
    body = bytes(buf[:n])
    del buf[:n]
    return head[0].decode(errors="replace"), body

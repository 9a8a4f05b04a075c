# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""TCP urgent data (MSG_OOB) seen by a reader, for oob_urgent.sh.

  oob_probe.py reader DIR          one connection on 127.0.0.1:0
  oob_probe.py sender PORT DIR
  oob_probe.py plain-sender PORT DIR
  oob_probe.py late-reader DIR
  oob_probe.py late-sender PORT DIR

The sender sends, 50 ms apart: "hello", "abc" with MSG_OOB, "world",
"XY" with MSG_OOB, "tail", then half-closes; it writes DIR/sender.json
(what each send returned, or its error) and DIR/sender.done, and closes
once the reader is done (DIR/reader.json, 10 s at most).

The reader (SO_OOBINLINE off, the default) waits for DIR/sender.done and
200 ms more, so every byte has arrived whatever the path; then records,
in order: SIOCATMARK, recv(MSG_OOB), then each recv() of the stream to
EOF with SIOCATMARK after it, then recv(MSG_OOB) again.  DIR/reader.json
holds that list and how the stream ended (eof, reset, error:NAME,
timeout: 3 s without a byte).  Two runs of the same sequence (plain TCP
and a tracked pair) compare as strings.

plain-sender connects, writes "PID TID" to DIR/sender.tid, waits for
DIR/go (10 s) and sends "hello", "world", "tail" with no flag, then
carries on as the sender: the test marks its thread as inside an urgent
send in between (a mark whose exit hook never ran).

late-sender sends "hello" at once, writes DIR/sender.tid, waits for
DIR/go (120 s) and sends the rest; late-reader reads that "hello" as it
comes (it records "first:hello") and writes DIR/reader.first before it
carries on as the reader: the test changes what runs in between, on a
connection whose first bytes already went their way.
"""
import fcntl
import os
import socket
import struct
import sys
import threading
import time
from probekit import (err_name, dump, wait_file, write_atomic, listen_local, read_until_quiet,
                      sender_done)

SIOCATMARK = 0x8905
SENDS = [(b"hello", 0), (b"abc", socket.MSG_OOB), (b"world", 0),
         (b"XY", socket.MSG_OOB), (b"tail", 0)]


def atmark(s):
    try:
        return struct.unpack("i", fcntl.ioctl(s.fileno(), SIOCATMARK, b"\0" * 4))[0]
    except OSError as e:
        return "error:" + err_name(e)


def oob(s):
    try:
        d = s.recv(16, socket.MSG_OOB | socket.MSG_DONTWAIT)
        return "oob:" + d.decode("latin-1")
    except OSError as e:
        return "oob-error:" + err_name(e)


def reader(d, first=False):
    ls = listen_local(os.path.join(d, "reader.port"), 10)
    c, _ = ls.accept()
    seen = []
    if first:
        c.settimeout(5)
        head = b""
        while len(head) < len(SENDS[0][0]):
            data = c.recv(len(SENDS[0][0]) - len(head))
            if not data:
                break
            head += data
        seen.append("first:" + head.decode("latin-1"))
        open(os.path.join(d, "reader.first"), "w").close()
        wait_file(os.path.join(d, "sender.done"), 120)
    else:
        wait_file(os.path.join(d, "sender.done"), 10)
    time.sleep(0.2)
    seen += ["atmark:%s" % atmark(c), oob(c)]

    def got(data):
        seen.append("data:" + data.decode("latin-1"))
        seen.append("atmark:%s" % atmark(c))
    end = read_until_quiet(c, 4096, got)
    seen.append(oob(c))
    stream = "".join(x[5:] for x in seen if x.startswith("data:"))
    dump(os.path.join(d, "reader.json"), {"seen": seen, "stream": stream, "end": end})
    c.close()


def sender(port, d, sends=SENDS, late=False):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    res = []
    if late:
        res.append(s.send(sends[0][0], sends[0][1]))
        sends = sends[1:]
    if sends is not SENDS:
        write_atomic(os.path.join(d, "sender.tid"),
                     "%d %d\n" % (os.getpid(), threading.get_native_id()))
        wait_file(os.path.join(d, "go"), 120 if late else 10)
    for data, flags in sends:
        try:
            res.append(s.send(data, flags))
        except OSError as e:
            res.append("error:" + err_name(e))
        time.sleep(0.05)
    try:
        s.shutdown(socket.SHUT_WR)
        res.append("shutdown:ok")
    except OSError as e:
        res.append("shutdown:error:" + err_name(e))
    sender_done(s, d, {"sends": res}, 10)


if __name__ == "__main__":
    if sys.argv[1] == "reader":
        reader(sys.argv[2])
    elif sys.argv[1] == "sender":
        sender(int(sys.argv[2]), sys.argv[3])
    elif sys.argv[1] == "late-reader":
        reader(sys.argv[2], first=True)
    elif sys.argv[1] == "late-sender":
        sender(int(sys.argv[2]), sys.argv[3], late=True)
    elif sys.argv[1] == "plain-sender":
        sender(int(sys.argv[2]), sys.argv[3], [(b"hello", 0), (b"world", 0), (b"tail", 0)])
    else:
        sys.exit("usage: see the docstring")

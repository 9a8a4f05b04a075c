# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""A reader that stops reading and a sender that does not, for
stalled_reader_cap.sh.

  stalled_reader.py reader DIR        one connection on 127.0.0.1:0
  stalled_reader.py sender PORT DIR LIMIT_BYTES SECONDS

The reader writes its port to DIR/reader.port, accepts one connection and
reads nothing until DIR/sender.done exists (and $READER_HOLD_SECS more).  Then it reads until EOF, an
error, or 3 s without a byte, checking every byte against the pattern,
and writes DIR/reader.json: got, first_bad (-1: all right), end (eof,
reset, error:NAME, timeout).

The sender connects, goes non-blocking and sends 64 KiB messages of the
pattern until send() fails with an error other than EAGAIN, SECONDS pass,
or LIMIT_BYTES were accepted (the test's stop for an unbounded queue).
It writes DIR/sender.json (accepted: the sum of what send() returned;
end: reset, error:NAME, time, limit), creates DIR/sender.done, and keeps
its socket open (so the reader's end is not our close) until the reader
is done (DIR/reader.json, 30 s at most).  Every wait is bounded.
"""
import os
import select
import socket
import sys
import time
from probekit import end_of, dump, wait_file, listen_local, sender_done

PERIOD = 251  # prime: a shifted or repeated chunk never matches
PAT = bytes(i % PERIOD for i in range(PERIOD * ((1 << 20) // PERIOD + 2)))
MSG = 65536


def pattern(off, n):
    o = off % PERIOD
    return PAT[o:o + n]


def reader(d):
    ls = listen_local(os.path.join(d, "reader.port"), 30)
    c, _ = ls.accept()
    wait_file(os.path.join(d, "sender.done"), 60)
    # $READER_HOLD_SECS: stay stalled that much longer (the host-wide
    # budget is checked once a second)
    time.sleep(float(os.environ.get("READER_HOLD_SECS", "0")))
    c.setblocking(False)
    got, bad, end = 0, -1, "timeout"
    last = time.monotonic()
    view = bytearray(1 << 20)
    while time.monotonic() - last < 3:
        select.select([c], [], [], 0.2)
        try:
            n = c.recv_into(view)
        except BlockingIOError:
            continue  # tcp_bpf may say EAGAIN to a woken reader
        except OSError as e:
            end = end_of(e)
            break
        if n == 0:
            end = "eof"
            break
        last = time.monotonic()
        if bad < 0 and view[:n] != pattern(got, n):
            exp = pattern(got, n)
            bad = got + next(i for i in range(n) if view[i] != exp[i])
        got += n
    dump(os.path.join(d, "reader.json"), {"got": got, "first_bad": bad, "end": end})
    c.close()


def sender(port, d, limit, secs):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.setblocking(False)
    accepted, end = 0, "time"
    deadline = time.monotonic() + secs
    while True:
        if accepted >= limit:
            end = "limit"
            break
        if time.monotonic() > deadline:
            break
        try:
            accepted += s.send(pattern(accepted, MSG))
        except BlockingIOError:
            select.select([], [s], [], 0.1)
        except OSError as e:
            end = end_of(e)
            break
    sender_done(s, d, {"accepted": accepted, "end": end}, 30)


if __name__ == "__main__":
    if sys.argv[1] == "reader":
        reader(sys.argv[2])
    elif sys.argv[1] == "sender":
        sender(int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), float(sys.argv[5]))
    else:
        sys.exit("usage: see the docstring")

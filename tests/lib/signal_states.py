# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# signal_states.py CS CX CC: connections in every state the agent leaves
# behind when it is signalled, made by one process that moves itself
# between cgroups (a socket belongs to the cgroup its creator was in; an
# accepted one to its listener's):
#   paired_unread  client (CC) -> server (CS), 100 KiB sent, not read yet
#   undecided      client (CC) -> server (CX, not attached), nothing sent:
#                  registered, in the SOCKHASH, waiting to be claimed
#   withdrawn      client (CC) -> server (CX), one byte sent: through TCP
#   paired_idle    client (CC) -> server (CS), a few bytes each way
# Prints "ready", waits for a line on stdin (the agent is signalled then),
# then finishes every connection, byte-exact, and prints "ok" or "FAIL ...".
import socket, sys

cs, cx, cc = sys.argv[1:4]


def enter(cg):
    with open(cg + "/cgroup.procs", "w") as f:
        f.write("0")  # "0": the writer itself


def pattern(seed, n):
    return bytes((seed * 131 + i * 7) & 0xFF for i in range(n))


def read_exact(s, n):
    s.settimeout(10)
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            break
        buf += chunk
    return buf


def check(name, got, want):
    if got != want:
        print("FAIL %s: %d bytes, want %d%s" % (name, len(got), len(want),
              "" if len(got) != len(want) else " (wrong bytes)"), flush=True)
        sys.exit(1)


enter(cs)
ls = socket.create_server(("127.0.0.1", 0))
enter(cx)
lx = socket.create_server(("127.0.0.1", 0))
enter(cc)
c1 = socket.create_connection(ls.getsockname()); s1, _ = ls.accept()
c2 = socket.create_connection(lx.getsockname()); x2, _ = lx.accept()
c3 = socket.create_connection(lx.getsockname()); x3, _ = lx.accept()
c4 = socket.create_connection(ls.getsockname()); s4, _ = ls.accept()
big = pattern(1, 100 * 1024)
c1.sendall(big)
c3.sendall(b"w")
check("withdrawn first byte", read_exact(x3, 1), b"w")
c4.sendall(b"ping")
check("paired_idle ping", read_exact(s4, 4), b"ping")
s4.sendall(b"pong")
check("paired_idle pong", read_exact(c4, 4), b"pong")
print("ready", flush=True)
sys.stdin.readline()
check("paired_unread: the server's 100 KiB", read_exact(s1, len(big)), big)
more = pattern(2, 50 * 1024)
c2.sendall(more)
check("undecided: its first send", read_exact(x2, len(more)), more)
c3.sendall(more)
check("withdrawn: more bytes", read_exact(x3, len(more)), more)
c4.sendall(more)
check("paired_idle: client to server", read_exact(s4, len(more)), more)
s4.sendall(more)
check("paired_idle: server to client", read_exact(c4, len(more)), more)
for s in (c1, c2, c3, c4):
    s.shutdown(socket.SHUT_WR)
for name, s in (("paired_unread", s1), ("undecided", x2), ("withdrawn", x3), ("paired_idle", s4)):
    if read_exact(s, 1) != b"":
        print("FAIL %s: no EOF" % name, flush=True)
        sys.exit(1)
print("ok", flush=True)

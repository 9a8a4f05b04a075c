# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Servers and clients of the real-workload tests (tests/integration/real_*.sh)
and benches (bench/run), run with Debian's python3 (its python3-websockets
and python3-grpcio):

  realapps.py ws-server PORT           WebSocket echo + server push
  realapps.py ws-client PORT CONNS MSGS SEED
  realapps.py grpc-server PORT         gRPC: unary, server stream, bidi stream
  realapps.py grpc-client PORT CALLS SEED
  realapps.py grpc-bench PORT CONNS SECS    unary calls, as fast as they go
  realapps.py http-client PORT CONNS REQS SEED   php-fpm's echo.php/gen.php
  realapps.py resp-client PORT SEED [huge]  Redis: big values (huge: and
                                       one of 50 MiB), pipelines, MULTI
  realapps.py gen SEED N               the deterministic bytes gen() makes

Every client checks each byte it gets back against what it sent or what
the server was asked to make (gen: a SHA-256 chain that php computes the
same way), prints one JSON line {"payload": BYTES, ...} (BYTES: payload it
sent plus payload it received, for the redirect check) and exits 1 on the
first mismatch, naming it.  Every wait is bounded (timeouts below), so a
hang is a failure, not a stuck test."""
import hashlib
import json
import random
import socket
import sys
import threading

TIMEOUT = 30  # seconds, any single wait


def gen(seed, n):
    """n bytes: sha256("SEED:0") || sha256("SEED:1") || ... cut at n."""
    out = bytearray()
    i = 0
    while len(out) < n:
        out += hashlib.sha256(b"%s:%d" % (str(seed).encode(), i)).digest()
        i += 1
    return bytes(out[:n])


def sizes(rng, count):
    """Message sizes that cross every boundary that matters to a relay:
    empty, one byte, around a page and a TLS/HTTP2 frame, past 64 KiB
    (sk_msg scatterlists), and up to 1 MiB."""
    fixed = [0, 1, 4095, 4096, 4097, 16384, 65535, 65536, 65537, 1 << 20]
    return [fixed[i] if i < len(fixed) else rng.choice(
        [rng.randint(1, 512), rng.randint(512, 70000), rng.randint(70000, 1 << 20)])
        for i in range(count)]


def die(msg):
    print("MISMATCH: " + msg, flush=True)
    sys.exit(1)


def run_threads(fn, n):
    """fn(i) in n threads; the first exception fails the whole run."""
    errs = []

    def wrap(i):
        try:
            fn(i)
        except SystemExit as e:
            errs.append("exit %s" % e.code)
        except Exception as e:  # noqa: BLE001 - report whatever broke
            errs.append("%s: %r" % (type(e).__name__, e))
    ts = [threading.Thread(target=wrap, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errs:
        die("; ".join(errs[:3]))


# -- WebSocket ------------------------------------------------------------

def ws_server(port):
    import asyncio
    import websockets

    async def handler(ws, _path=None):
        async for m in ws:
            # "push N SIZE SEED": the server sends N messages of its own
            if isinstance(m, str) and m.startswith("push "):
                _, n, size, seed = m.split()
                for i in range(int(n)):
                    await ws.send(gen("%s.%d" % (seed, i), int(size)))
                await ws.send("push done")
            else:
                await ws.send(m)

    async def main():
        async with websockets.serve(handler, "127.0.0.1", port, max_size=None,
                                    compression=None):
            await asyncio.Future()
    asyncio.run(main())


def ws_client(port, conns, msgs, seed):
    import asyncio
    import websockets
    total = [0]

    async def one(c):
        rng = random.Random("%s.%d" % (seed, c))
        async with websockets.connect("ws://127.0.0.1:%d/echo" % port, max_size=None,
                                      compression=None, open_timeout=TIMEOUT,
                                      close_timeout=TIMEOUT) as ws:
            for i, n in enumerate(sizes(rng, msgs)):
                # text and binary frames both: text is UTF-8-checked
                m = rng.randbytes(n) if i % 3 else gen("%s.%d.%d" % (seed, c, i), n).hex()[:n]
                await ws.send(m)
                back = await asyncio.wait_for(ws.recv(), TIMEOUT)
                if back != m:
                    die("conn %d msg %d: %d bytes sent, %d back, differ" % (c, i, n, len(back)))
                total[0] += 2 * len(m)
            # a burst in flight before any echo is read: order must hold
            burst = [rng.randbytes(rng.randint(1, 40000)) for _ in range(50)]
            for m in burst:
                await ws.send(m)
            for i, m in enumerate(burst):
                if await asyncio.wait_for(ws.recv(), TIMEOUT) != m:
                    die("conn %d burst msg %d out of order or altered" % (c, i))
                total[0] += 2 * len(m)
            n, size = 20, 100000
            await ws.send("push %d %d %s.%d" % (n, size, seed, c))
            for i in range(n):
                got = await asyncio.wait_for(ws.recv(), TIMEOUT)
                if got != gen("%s.%d.%d" % (seed, c, i), size):
                    die("conn %d pushed msg %d differs" % (c, i))
                total[0] += size
            if await asyncio.wait_for(ws.recv(), TIMEOUT) != "push done":
                die("conn %d: no end of push" % c)
        if ws.close_code != 1000:
            die("conn %d closed with %s, want 1000" % (c, ws.close_code))

    async def main():
        await asyncio.wait_for(asyncio.gather(*(one(c) for c in range(conns))), 4 * TIMEOUT)
    asyncio.run(main())
    print(json.dumps({"payload": total[0], "conns": conns}))


# -- gRPC, raw-bytes methods: no generated stubs, no protobuf compiler -----

SVC = "ngxsm.Echo"
GRPC_OPTS = [("grpc.max_send_message_length", 8 << 20),
             ("grpc.max_receive_message_length", 8 << 20),
             ("grpc.enable_http_proxy", 0),
             # a connection per channel: grpcio shares one between channels
             # to the same target unless each has its own subchannel pool
             ("grpc.use_local_subchannel_pool", 1)]


def grpc_server(port):
    from concurrent import futures
    import grpc

    def unary(req, _ctx):
        return hashlib.sha256(req).digest() + req

    def pull(req, _ctx):
        n, size, seed = req.decode().split()
        for i in range(int(n)):
            yield gen("%s.%d" % (seed, i), int(size))

    def bidi(it, _ctx):
        for m in it:
            yield m[::-1]

    h = grpc.method_handlers_generic_handler(SVC, {
        "Unary": grpc.unary_unary_rpc_method_handler(unary),
        "Pull": grpc.unary_stream_rpc_method_handler(pull),
        "Bidi": grpc.stream_stream_rpc_method_handler(bidi)})
    srv = grpc.server(futures.ThreadPoolExecutor(16), options=GRPC_OPTS)
    srv.add_generic_rpc_handlers((h,))
    srv.add_insecure_port("127.0.0.1:%d" % port)
    srv.start()
    srv.wait_for_termination()


def grpc_client(port, calls, seed):
    import queue
    import grpc
    total = [0]
    lock = threading.Lock()

    def add(n):
        with lock:
            total[0] += n

    def one(c):
        rng = random.Random("%s.%d" % (seed, c))
        with grpc.insecure_channel("127.0.0.1:%d" % port, options=GRPC_OPTS) as ch:
            unary = ch.unary_unary("/%s/Unary" % SVC)
            for i, n in enumerate(sizes(rng, calls)):
                m = rng.randbytes(n)
                r = unary(m, timeout=TIMEOUT)
                if r != hashlib.sha256(m).digest() + m:
                    die("conn %d unary %d (%d bytes): reply differs" % (c, i, n))
                add(n + len(r))
            # server streaming
            n, size = 30, 65536 + 7
            for i, got in enumerate(ch.unary_stream("/%s/Pull" % SVC)(
                    b"%d %d %s.%d" % (n, size, seed.encode(), c), timeout=TIMEOUT)):
                if got != gen("%s.%d.%d" % (seed, c, i), size):
                    die("conn %d pulled msg %d differs" % (c, i))
                add(size)
                n -= 1
            if n:
                die("conn %d: %d pulled messages missing" % (c, n))
            # bidirectional, ping-pong: each request waits for the reply to
            # the previous one, so nothing on the way may hold a message back
            reqs = queue.Queue()

            def feed():
                while True:
                    m = reqs.get(timeout=TIMEOUT)
                    if m is None:
                        return
                    yield m
            replies = ch.stream_stream("/%s/Bidi" % SVC)(feed(), timeout=4 * TIMEOUT)
            for i, n in enumerate(sizes(rng, calls)):
                m = rng.randbytes(n)
                reqs.put(m)
                if next(replies) != m[::-1]:
                    die("conn %d bidi %d (%d bytes): reply differs" % (c, i, n))
                add(2 * n)
            # and a burst on the same stream before reading
            burst = [rng.randbytes(rng.randint(1, 30000)) for _ in range(40)]
            for m in burst:
                reqs.put(m)
            for i, m in enumerate(burst):
                if next(replies) != m[::-1]:
                    die("conn %d bidi burst %d out of order or altered" % (c, i))
                add(2 * len(m))
            reqs.put(None)
            if next(replies, None) is not None:
                die("conn %d bidi: a reply too many" % c)
    run_threads(one, 3)
    print(json.dumps({"payload": total[0]}))


def grpc_bench(port, conns, secs):
    """CONNS channels, each making unary 1 KiB calls one after another for
    SECS seconds; calls, seconds and latency percentiles as JSON."""
    import time
    import grpc
    m = gen("bench", 1024)
    want = hashlib.sha256(m).digest() + m
    lat = [[] for _ in range(conns)]
    end = time.monotonic() + secs

    def one(c):
        with grpc.insecure_channel("127.0.0.1:%d" % port, options=GRPC_OPTS) as ch:
            unary = ch.unary_unary("/%s/Unary" % SVC)
            unary(m, timeout=TIMEOUT)  # connected before the clock counts
            while True:
                t = time.monotonic()
                if t >= end:
                    return
                if unary(m, timeout=TIMEOUT) != want:
                    die("reply differs")
                lat[c].append(time.monotonic() - t)
    t0 = time.monotonic()
    run_threads(one, conns)
    all_ = sorted(x for l in lat for x in l)
    pct = {"p%d_ms" % q: 1000 * all_[min(len(all_) - 1, len(all_) * q // 100)]
           for q in (50, 75, 90, 99)} if all_ else {}
    print(json.dumps(dict(calls=len(all_), seconds=time.monotonic() - t0, **pct)))


# -- HTTP to php-fpm through nginx ----------------------------------------

def http_client(port, conns, reqs, seed):
    import http.client
    total = [0]
    lock = threading.Lock()

    def one(c):
        rng = random.Random("%s.%d" % (seed, c))
        h = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
        for i, n in enumerate(sizes(rng, reqs)):
            if i % 2:
                body = rng.randbytes(n)
                h.request("POST", "/echo.php", body=body,
                          headers={"Content-Type": "application/octet-stream"})
                want = body
            else:
                s = "%s.%d.%d" % (seed, c, i)
                h.request("GET", "/gen.php?seed=%s&n=%d" % (s, n))
                want = gen(s, n)
                body = b""
            r = h.getresponse()
            got = r.read()
            if r.status != 200:
                die("conn %d req %d: HTTP %d %r" % (c, i, r.status, got[:200]))
            if got != want:
                die("conn %d req %d (%d bytes): body differs (%d bytes)" % (c, i, n, len(got)))
            if i % 2 and r.getheader("X-Sha256") != hashlib.sha256(body).hexdigest():
                die("conn %d req %d: php saw another request body" % (c, i))
            with lock:
                total[0] += len(body) + len(got)
        h.close()
    run_threads(one, conns)
    print(json.dumps({"payload": total[0], "requests": conns * reqs}))


# -- Redis RESP ------------------------------------------------------------

class Resp:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
        self.buf = b""
        self.sent = self.rcvd = 0

    def send(self, *cmds):
        out = b""
        for cmd in cmds:
            out += b"*%d\r\n" % len(cmd)
            for a in cmd:
                a = a if isinstance(a, bytes) else str(a).encode()
                out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.s.sendall(out)
        self.sent += len(out)

    def _fill(self, n):
        while len(self.buf) < n:
            d = self.s.recv(1 << 20)
            if not d:
                die("redis closed the connection")
            self.rcvd += len(d)
            self.buf += d

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill(len(self.buf) + 1)
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def reply(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t in (b"+", b":"):
            return int(rest) if t == b":" else rest
        if t == b"-":
            die("redis error: %r" % rest)
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            self._fill(n + 2)
            v, self.buf = self.buf[:n], self.buf[n + 2:]
            return v
        if t == b"*":
            return [self.reply() for _ in range(int(rest))]
        die("redis: bad reply %r" % line[:80])


def resp_client(port, seed, huge=False):
    r = Resp(port)
    rng = random.Random(seed)
    vals = {}
    # big values, one at a time
    for i, n in enumerate(sizes(rng, 16)):
        v = rng.randbytes(n)
        vals["big:%d" % i] = v
        r.send(["SET", "big:%d" % i, v])
        if r.reply() != b"OK":
            die("SET big:%d" % i)
    # with huge: one of 50 MiB, a client's upload and a reply each far
    # larger than any socket buffer
    if huge:
        v = rng.randbytes(50 << 20)
        vals["huge"] = v
        r.send(["SET", "huge", v])
        if r.reply() != b"OK":
            die("SET huge")
    for k, v in vals.items():
        r.send(["GET", k])
        if r.reply() != v:
            die("GET %s: value differs" % k)
    # a deep pipeline: 2000 commands written before any reply is read
    cmds = [["INCRBY", "ctr", i] for i in range(1, 2001)]
    r.send(*cmds)
    for i in range(1, 2001):
        if r.reply() != i * (i + 1) // 2:
            die("pipelined INCRBY %d: wrong running sum" % i)
    # a transaction: all or nothing, replies in order
    r.send(["MULTI"], ["RPUSH", "l", "a", "b", "c"], ["LRANGE", "l", 0, -1], ["EXEC"])
    got = [r.reply() for _ in range(4)]
    if got != [b"OK", b"QUEUED", b"QUEUED", [3, [b"a", b"b", b"c"]]]:
        die("MULTI/EXEC: %r" % got[:4])
    r.s.close()
    print(json.dumps({"payload": r.sent + r.rcvd}))


def main():
    cmd, a = sys.argv[1], sys.argv[2:]
    if cmd == "ws-server":
        ws_server(int(a[0]))
    elif cmd == "ws-client":
        ws_client(int(a[0]), int(a[1]), int(a[2]), a[3])
    elif cmd == "grpc-server":
        grpc_server(int(a[0]))
    elif cmd == "grpc-client":
        grpc_client(int(a[0]), int(a[1]), a[2])
    elif cmd == "grpc-bench":
        grpc_bench(int(a[0]), int(a[1]), float(a[2]))
    elif cmd == "http-client":
        http_client(int(a[0]), int(a[1]), int(a[2]), a[3])
    elif cmd == "resp-client":
        resp_client(int(a[0]), a[1], a[2:] == ["huge"])
    elif cmd == "gen":
        sys.stdout.buffer.write(gen(a[0], int(a[1])))
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()

# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The clients and the report of bench/soak (make soak).  Run with Debian's
python3 (/usr/bin/python3: matplotlib for the chart).

  soak.py http PORT DOCROOT STOPFILE OUT.json KA CLOSE SEED
      KA keep-alive connections and CLOSE Connection: close clients, GETs
      of whole files and random Ranges of DOCROOT's files through the
      proxy on 127.0.0.1:PORT until STOPFILE exists; counters in OUT.json
      (rewritten every second)
  soak.py storm PORT DOCROOT N PATH
      N connections opened at once, each GETs PATH twice (keep-alive),
      all closed; one JSON line of counters
  soak.py netns-echo BYTES
      a server and a client on 127.0.0.1 of the network namespace it runs
      in: BYTES echoed back byte-exact; one JSON line
  soak.py report DIR
      DIR/summary.json, DIR/soak.png and the verdict from what bench/soak
      left in DIR; exit 1 when anything was lost or leaked

Every request is judged by what came back:
  ok          status 200/206 and a body equal to the file's bytes (or the
              Range's), nothing more, nothing less
  wrong       another status, or a body of the right length that differs
  truncated   a response that had begun and ended early (EOF or reset)
  hung        no byte for TIMEOUT seconds
  retried     refused, or closed before a single byte of the response came
              back: what nginx does to idle keep-alive connections when it
              reloads or stops, and what every HTTP client retries (a GET is
              idempotent); counted, with the time, so the report can tell
              the retries that no fault explains
"""
import json
import os
import random
import socket
import sys
import threading
import time

# seconds without a byte: hung (SOAK_HUNG_SECS: a shorter bound for a test)
TIMEOUT = float(os.environ.get("SOAK_HUNG_SECS", "20"))


class Truncated(Exception):
    pass


class NoResponse(Exception):
    pass


def load_files(root):
    return {"/" + f: open(os.path.join(root, f), "rb").read()
            for f in sorted(os.listdir(root)) if f.endswith(".bin")}


def read_response(s, method_head=False):
    """(status line, headers dict, body) of one HTTP/1.1 response with a
    Content-Length; NoResponse when not a byte came, Truncated when it
    ended early."""
    buf = bytearray()
    while b"\r\n\r\n" not in buf:
        try:
            d = s.recv(65536)
        except ConnectionResetError:
            d = None
        if not d:
            if buf:
                raise Truncated("headers cut after %d bytes" % len(buf))
            raise NoResponse()
        buf += d
    head, _, rest = bytes(buf).partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    hdrs = {}
    for ln in lines[1:]:
        k, _, v = ln.partition(":")
        hdrs[k.strip().lower()] = v.strip()
    if "content-length" not in hdrs:
        raise Truncated("no Content-Length: %r" % lines[0])
    n = int(hdrs["content-length"])
    body = bytearray(rest)
    while len(body) < n:
        try:
            d = s.recv(min(1 << 20, n - len(body)))
        except ConnectionResetError:
            d = None
        if not d:
            raise Truncated("body cut at %d of %d bytes" % (len(body), n))
        body += d
    if len(body) > n:
        raise Truncated("%d bytes past the body" % (len(body) - n))
    return lines[0], hdrs, bytes(body)


class Counters:
    def __init__(self):
        self.lock = threading.Lock()
        self.c = {}
        self.events = []  # (time, kind, what) of everything not ok

    def add(self, key, n=1):
        with self.lock:
            self.c[key] = self.c.get(key, 0) + n

    def event(self, kind, what):
        with self.lock:
            self.c[kind] = self.c.get(kind, 0) + 1
            if len(self.events) < 5000:
                self.events.append((time.time(), kind, what[:300]))

    def dump(self, path):
        with self.lock:
            d = dict(counters=dict(self.c), events=list(self.events))
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(d, f)
        os.replace(tmp, path)


def pick(rng, files):
    """A path and the byte range wanted: mostly small and medium files,
    now and then the large one, a quarter of the time a random Range."""
    names = [p for p in files if len(files[p]) < (4 << 20)]
    big = [p for p in files if len(files[p]) >= (4 << 20)]
    p = rng.choice(big) if big and rng.random() < 0.04 else rng.choice(names)
    data = files[p]
    if len(data) > 1 and rng.random() < 0.25:
        a = rng.randrange(len(data))
        b = rng.randrange(a, min(len(data), a + rng.choice([1, 4096, 70000, 1 << 20])))
        return p, (a, b)
    return p, None


def one_request(s, path, rng_, files, close, prefix):
    """Send one GET on s and judge the answer; returns bytes of body."""
    hdr = "GET %s%s HTTP/1.1\r\nHost: soak\r\n" % (prefix, path)
    if rng_:
        hdr += "Range: bytes=%d-%d\r\n" % rng_
    if close:
        hdr += "Connection: close\r\n"
    s.sendall((hdr + "\r\n").encode())
    line, hdrs, body = read_response(s)
    want = files[path] if not rng_ else files[path][rng_[0]:rng_[1] + 1]
    code = line.split(" ")[1] if " " in line else line
    if code != ("206" if rng_ else "200"):
        raise ValueError("%s%s%s: %r" % (prefix, path, " range %d-%d" % rng_ if rng_ else "", line))
    if body != want:
        at = next((i for i in range(len(want)) if body[i] != want[i]), -1)
        raise ValueError("%s%s%s: %d bytes differ from byte %d" % (
            prefix, path, " range %d-%d" % rng_ if rng_ else "", len(body), at))
    return len(body)


def http_worker(port, files, stop, cnt, kind, seed):
    rng = random.Random(seed)
    s = None
    fresh = False
    retry = None
    while not os.path.exists(stop):
        if s is None:
            try:
                s = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
                fresh = True
            except OSError as e:
                cnt.event("retried", "%s connect: %s" % (kind, e))
                time.sleep(0.1)
                continue
        path, rg = retry or pick(rng, files)
        retry = None
        close = kind == "http_close"
        # the close client takes the proxy's no-keepalive upstream half
        # the time (nginx-conf/proxy.conf /close/: a new upstream
        # connection per request)
        prefix = "/close" if close and rng.random() < 0.5 else ""
        try:
            n = one_request(s, path, rg, files, close, prefix)
            cnt.add(kind + "_requests")
            cnt.add(kind + "_bytes", n)
            if close:
                s.close()
                s = None
            fresh = False
        except NoResponse:
            cnt.event("retried", "%s %s: closed before any byte (%s connection)" % (
                kind, path, "new" if fresh else "kept"))
            retry = (path, rg)
            s.close()
            s = None
        except (BrokenPipeError, ConnectionResetError) as e:
            # the send failed: nothing of a response was read
            cnt.event("retried", "%s %s: send: %s" % (kind, path, e))
            retry = (path, rg)
            s.close()
            s = None
        except Truncated as e:
            cnt.event("truncated", "%s %s: %s" % (kind, path, e))
            s.close()
            s = None
        except socket.timeout:
            cnt.event("hung", "%s %s: no byte for %d s" % (kind, path, TIMEOUT))
            s.close()
            s = None
        except ValueError as e:
            cnt.event("wrong", "%s %s" % (kind, e))
            s.close()
            s = None
        except OSError as e:
            cnt.event("truncated", "%s %s: %s" % (kind, path, e))
            s.close()
            s = None


def http(port, root, stop, out, ka, close, seed):
    files = load_files(root)
    cnt = Counters()
    ts = [threading.Thread(target=http_worker, daemon=True,
                           args=(port, files, stop, cnt, k, "%s.%s.%d" % (seed, k, i)))
          for k, n in (("http_ka", ka), ("http_close", close)) for i in range(n)]
    for t in ts:
        t.start()
    while any(t.is_alive() for t in ts):
        cnt.dump(out)
        time.sleep(1)
    cnt.dump(out)


def storm(port, root, n, path):
    """n connections at once, two GETs each: the sockhash grows by 2n
    entries (client and proxy ends) and must shrink back when they go."""
    files = load_files(root)
    cnt = Counters()
    socks = []
    for _ in range(n):
        try:
            socks.append(socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT))
        except OSError as e:
            cnt.event("retried", "storm connect: %s" % e)
    for rnd in range(2):
        for s in list(socks):
            try:
                s.sendall(("GET %s HTTP/1.1\r\nHost: soak\r\n\r\n" % path).encode())
            except OSError as e:
                cnt.event("retried", "storm send: %s" % e)
                socks.remove(s)
        for s in list(socks):
            try:
                line, _, body = read_response(s)
                if not line.endswith("200 OK") or body != files[path]:
                    cnt.event("wrong", "storm %s: %r, %d bytes" % (path, line, len(body)))
                else:
                    cnt.add("storm_requests")
                    cnt.add("storm_bytes", len(body))
            except NoResponse:
                cnt.event("retried", "storm round %d: closed before any byte" % rnd)
                socks.remove(s)
            except Truncated as e:
                cnt.event("truncated", "storm: %s" % e)
                socks.remove(s)
            except socket.timeout:
                cnt.event("hung", "storm: no byte for %d s" % TIMEOUT)
                socks.remove(s)
            except OSError as e:
                cnt.event("truncated", "storm: %s" % e)
                socks.remove(s)
    cnt.add("storm_conns", len(socks))
    for s in socks:
        s.close()
    print(json.dumps(dict(counters=cnt.c, events=cnt.events)))


def netns_echo(nbytes):
    """Echo nbytes over 127.0.0.1 inside this namespace: a connection
    the agent sees appear and go with the namespace."""
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(1)
    data = os.urandom(nbytes)
    got = bytearray()

    def serve():
        c, _ = ls.accept()
        c.settimeout(TIMEOUT)
        while True:
            d = c.recv(1 << 16)
            if not d:
                break
            c.sendall(d)
        c.close()
    t = threading.Thread(target=serve, daemon=True)
    t.start()
    s = socket.create_connection(ls.getsockname(), timeout=TIMEOUT)
    w = threading.Thread(target=lambda: (s.sendall(data), s.shutdown(socket.SHUT_WR)))
    w.start()
    res = "ok"
    try:
        while True:
            d = s.recv(1 << 16)
            if not d:
                break
            got += d
    except socket.timeout:
        res = "hung"
    w.join()
    if res == "ok" and bytes(got) != data:
        res = "truncated" if len(got) < len(data) else "wrong"
    print(json.dumps(dict(result=res, bytes=len(got))))


# -- report -----------------------------------------------------------------

def read_csv(path):
    rows = []
    with open(path) as f:
        cols = f.readline().split()
        for ln in f:
            v = ln.split()
            if len(v) == len(cols):
                rows.append({k: (None if x == "-" else float(x)) for k, x in zip(cols, v)})
    return rows


def report(d):
    meta = json.load(open(os.path.join(d, "meta.json")))
    faults = {}
    fault_times = []
    fault_errors = []
    for ln in open(os.path.join(d, "faults.log")):
        t0, t1, kind, res = ln.rstrip("\n").split(" ", 3)
        faults[kind] = faults.get(kind, 0) + 1
        fault_times.append((float(t0), float(t1), kind))
        if res != "ok":
            fault_errors.append("%s: %s" % (kind, res))
    traffic = {}
    lost = dict(wrong=0, hung=0, truncated=0)
    events = []
    # the HTTP load, the storms
    for name in ("http.json", "storms.json"):
        p = os.path.join(d, name)
        if not os.path.exists(p):
            continue
        dd = json.load(open(p))
        for k, v in dd["counters"].items():
            if k in lost:
                lost[k] += v
            elif k != "retried":
                traffic[k] = traffic.get(k, 0) + v
        events += dd["events"]
    # the loops of the other clients: "kind ok|wrong|hung|truncated BYTES [why]"
    for ln in open(os.path.join(d, "loops.log")):
        a = ln.rstrip("\n").split(" ", 4)
        t, kind, res, nbytes = float(a[0]), a[1], a[2], int(a[3])
        if res == "ok":
            traffic[kind + "_sessions"] = traffic.get(kind + "_sessions", 0) + 1
            traffic[kind + "_bytes"] = traffic.get(kind + "_bytes", 0) + nbytes
        else:
            lost[res] += 1
            events.append((t, res, "%s: %s" % (kind, a[4] if len(a) > 4 else "")))
    # a retry that no fault explains: more than 5 s from any fault
    retries = [e for e in events if e[1] == "retried"]
    unexplained = [e for e in retries
                   if not any(a - 5 <= e[0] <= b + 5 for a, b, _ in fault_times)]
    bad = [e for e in events if e[1] != "retried"]

    rows = read_csv(os.path.join(d, "samples.csv"))
    t0 = meta["start"]
    warm = meta["warmup"]
    steady = meta.get("steady")
    leak = {}
    if steady:
        # one agent process from a minute into the steady phase to the end
        # (bench/soak): its first samples against its last
        settled = [r for r in rows if r["rss_kb"] is not None and r["t"] >= steady + 60]
        pids = set(r["agent"] for r in settled)
        if len(pids) != 1:
            leak["steady_agents"] = dict(count=len(pids), ok=False)
        scope = "one agent, %d s" % (settled[-1]["t"] - settled[0]["t"]) if settled else ""
    else:
        # the agent's own figures only once it has run a while (each
        # restart starts a new process), and only after the warm-up
        settled = [r for r in rows if r["rss_kb"] is not None and r["age"] is not None
                   and r["age"] >= 20 and r["t"] - t0 >= warm]
        scope = "agents that ran 20 s or more"
    if len(settled) >= 4:
        n = max(1, min(3, len(settled) // 3))
        first, last = settled[:n], settled[-n:]
        for k, tol in (("rss_kb", 1024), ("fds", 0)):
            a = max(r[k] for r in first)
            b = max(r[k] for r in last)
            leak[k] = dict(first=a, last=b, growth=b - a, tolerance=tol, ok=b - a <= tol,
                           scope=scope, samples=len(settled),
                           min=min(r[k] for r in settled), max=max(r[k] for r in settled))
    for k in ("sockets", "entries", "tcp_mem_pages", "slab_kb"):
        vals = [r[k] for r in rows if r.get(k) is not None and r["t"] - t0 >= warm]
        if vals:
            leak[k] = dict(first=vals[0], last=vals[-1], growth=vals[-1] - vals[0],
                           info="host-wide, shared with whatever else runs")
    storms = []
    p = os.path.join(d, "storm_after.log")
    if os.path.exists(p):
        for ln in open(p):
            # time sockets live
            _, sk, live = ln.split()
            # "-": the map could not be read, which proves nothing
            storms.append(dict(entries=int(sk) if sk.isdigit() else None, live=int(live)))
    storms_ok = all(s["entries"] is not None and s["entries"] <= s["live"] for s in storms)

    verdict_ok = (not any(lost.values()) and not fault_errors and not unexplained
                  and all(v.get("ok", True) for v in leak.values()) and storms_ok)
    s = dict(commit=meta["commit"], kernel=meta["kernel"],
             duration_s=round(meta["end"] - meta["start"]),
             requests=sum(v for k, v in traffic.items()
                          if k.endswith("_requests") or k.endswith("_sessions")),
             bytes=sum(v for k, v in traffic.items() if k.endswith("_bytes")),
             traffic=traffic, faults=faults, fault_errors=fault_errors,
             lost=lost, retried=len(retries), retried_unexplained=len(unexplained),
             leak=leak, storms_sockets_back_to_live=storms_ok, storms=storms,
             first_bad=[list(e) for e in bad[:10]],
             first_unexplained=[list(e) for e in unexplained[:10]],
             verdict="PASS" if verdict_ok else "FAIL")
    with open(os.path.join(d, "summary.json"), "w") as f:
        json.dump(s, f, indent=1, sort_keys=True)
    chart(d, rows, t0, warm, steady, fault_times)
    print("soak %s: %d s, %d requests/sessions, %d bytes, commit %s, kernel %s" % (
        s["verdict"], s["duration_s"], s["requests"], s["bytes"], s["commit"], s["kernel"]))
    print("  traffic: " + ", ".join("%s %d" % kv for kv in sorted(traffic.items())))
    print("  faults: " + ", ".join("%s %d" % kv for kv in sorted(faults.items())))
    print("  wrong %(wrong)d, hung %(hung)d, truncated %(truncated)d" % lost +
          "; retried %d (%d with no fault within 5 s)" % (len(retries), len(unexplained)))
    for k, v in leak.items():
        if k == "steady_agents":
            print("  agent processes in the steady phase: %d, want 1 (no verdict)" % v["count"])
            continue
        print("  %s after warm-up%s: %s -> %s (%+g)%s%s" % (
            k, " (%s)" % v["scope"] if "scope" in v else "", v["first"], v["last"], v["growth"],
            " [range %g..%g]" % (v["min"], v["max"]) if "min" in v else "",
            "" if "ok" not in v else " flat" if v["ok"] else " GROWS: leak?"))
    if storms:
        print("  after each of %d storms, sockhash entries <= live connections: %s (worst %s)" % (
            len(storms), "yes" if storms_ok else "NO",
            max(storms, key=lambda x: (x["entries"] is None, (x["entries"] or 0) - x["live"]))))
    for e in fault_errors:
        print("  fault failed: " + e)
    for e in bad[:10] + unexplained[:10]:
        print("  %s %s %s" % (time.strftime("%H:%M:%S", time.gmtime(e[0])), e[1], e[2]))
    return 0 if verdict_ok else 1


def chart(d, rows, t0, warm, steady, fault_times):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("  (no chart: matplotlib missing; Debian package python3-matplotlib)")
        return
    series = [("rss_kb", "agent RSS (KiB)"), ("fds", "agent open fds"),
              ("entries", "sockhash entries"), ("tcp_mem_pages", "host TCP mem (pages)"),
              ("slab_kb", "host slab (KiB)")]
    fig, axes = plt.subplots(len(series), 1, sharex=True, figsize=(10, 11))
    for ax, (k, label) in zip(axes, series):
        pts = [((r["t"] - t0) / 60, r[k]) for r in rows if r.get(k) is not None]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], ".-", ms=2, lw=0.6)
        ax.set_ylabel(label, fontsize=8)
        ax.axvline(warm / 60, color="grey", ls="--", lw=0.6)
        if steady:
            ax.axvline((steady - t0) / 60, color="green", ls="--", lw=0.8)
        for a, _, kind in fault_times:
            if kind.startswith("agent_") or kind == "max_sockets":
                ax.axvline((a - t0) / 60, color="red", alpha=0.15, lw=0.6)
    axes[-1].set_xlabel("minutes (grey: end of warm-up; green: steady phase, one agent; "
                        "red: agent faults)", fontsize=8)
    fig.suptitle("ngx-sockmap soak", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(d, "soak.png"), dpi=90)


def main():
    cmd, a = sys.argv[1], sys.argv[2:]
    if cmd == "http":
        http(int(a[0]), a[1], a[2], a[3], int(a[4]), int(a[5]), a[6])
    elif cmd == "storm":
        storm(int(a[0]), a[1], int(a[2]), a[3])
    elif cmd == "netns-echo":
        netns_echo(int(a[0]))
    elif cmd == "report":
        sys.exit(report(a[0]))
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()

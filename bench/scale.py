#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# bench/scale's client and report (the bench itself says what it measures).
#   scale.py storm HOST PORT N   open N connections at once, one request on
#                                each; print a JSON line when all are held,
#                                close them at a line on stdin
#   scale.py line BASE N         one line for the terminal about a block
#   scale.py report OUT          OUT/results.md, results.json, cost.svg
import json, os, re, select, socket, statistics, struct, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import fmt_ms, fmt_rps, fmt_us, parse, parse_cpu, read_bpf  # noqa: E402

REQ = b"GET /small.txt HTTP/1.1\r\nHost: scale\r\n\r\n"
BODY = b"a" * 256


def storm(host, port, n):
    """Every connect at once, non-blocking; each sends its request as soon
    as it is connected, as an HTTP client does (the active end's first send
    can then race the passive end's claim, DESIGN "How a pair is proven")."""
    ep = select.epoll()
    socks, bufs = {}, {}
    t0 = time.monotonic()
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect((host, port))
        except BlockingIOError:
            pass
        socks[s.fileno()] = s
        ep.register(s.fileno(), select.EPOLLOUT)
    connecting, pending, deadline = n, n, t0 + 120
    t_conn = None
    while pending and time.monotonic() < deadline:
        for fd, ev in ep.poll(1):
            s = socks[fd]
            if fd not in bufs:  # connected (or failed)
                err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if err:
                    sys.exit("connect: %s" % os.strerror(err))
                s.send(REQ)  # 40 bytes: fits an empty send buffer
                bufs[fd] = b""
                ep.modify(fd, select.EPOLLIN)
                connecting -= 1
                if not connecting:
                    t_conn = time.monotonic() - t0
                continue
            d = s.recv(65536)
            if not d:
                sys.exit("connection closed before its response")
            bufs[fd] += d
            head, sep, body = bufs[fd].partition(b"\r\n\r\n")
            m = re.search(rb"(?i)content-length:\s*(\d+)", head)
            if sep and m and len(body) >= int(m.group(1)):
                if not head.startswith(b"HTTP/1.1 200") or body != BODY:
                    sys.exit("bad response: %r" % bufs[fd][:200])
                ep.unregister(fd)
                pending -= 1
    if pending:
        sys.exit("%d of %d connections without a response after 120 s" % (pending, n))
    print(json.dumps({"n": n, "connect_s": t_conn, "connect_per_s": n / t_conn,
                      "all_s": time.monotonic() - t0, "held": True}), flush=True)
    sys.stdin.readline()
    # reset, not FIN: no TIME_WAIT left on the ports the proxy's upstream
    # connections need next (same destination)
    linger = struct.pack("ii", 1, 0)
    for s in socks.values():
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
        s.close()


def mem(path):
    """kB of Slab and SUnreclaim, TCP pages -> bytes."""
    r = {}
    try:
        for line in open(path):
            f = line.split()
            if f[0] in ("Slab:", "SUnreclaim:"):
                r[f[0][:-1].lower()] = int(f[1]) * 1024
            elif f[0] == "TCP:":
                r["tcp_mem"] = int(f[f.index("mem") + 1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        pass
    return r


def load(path, default=None):
    try:
        return json.load(open(path))
    except (OSError, ValueError):
        return default


def per_call(pre, post, prog):
    a, b = (pre or {}).get(prog), (post or {}).get(prog)
    if not a or not b or b["run_cnt"] <= a["run_cnt"]:
        return None, 0
    cnt = b["run_cnt"] - a["run_cnt"]
    return (b["run_time_ns"] - a["run_time_ns"]) / cnt, cnt


def dig(d, key):
    for k in key.split("."):
        d = (d or {}).get(k)
    return d or 0


def block(base, n):
    """One block's figures (BASE: OUT/raw/rR-MODE-N)."""
    w = parse(base + ".wrk")
    b = {"n": n, "rps": w["rps"], "p99_ms": w["p99_ms"], "requests": w["requests"],
         "errors": w["sock_errors"] + w["non2xx"]}
    c = parse_cpu(base + ".cpu", w["requests"]) if w["requests"] else None
    b["cpu_us_per_req"] = c and c.get("us_per_req")
    st = load(base + ".storm.json", {})
    b["storm_connect_per_s"] = st.get("connect_per_s")
    # the storm's connections go to the upstream nginx itself: N TCP
    # connections, two sockets each, nothing proxied
    idle, held = mem(base + ".idle.mem"), mem(base + ".held.mem")
    for k in ("slab", "sunreclaim", "tcp_mem"):
        if k in idle and k in held:
            b[k + "_per_conn"] = (held[k] - idle[k]) / n
    s0, s1 = load(base + ".idle.status.json"), load(base + ".held.status.json")
    if s0 and s1:
        for k in ("pairs", "fallbacks.no_peer", "fallbacks.no_room", "claims_lost",
                  "fallbacks.unproven"):
            b["storm_" + k.replace("fallbacks.", "")] = dig(s1, k) - dig(s0, k)
        b["storm_paired_share"] = b["storm_pairs"] / n
        b["sockets_held"] = dig(s1, "sockets")
        b["sockets_max"] = dig(s1, "sockets_max")
    b0, b1 = load(base + ".idle.bpf.json"), load(base + ".held.bpf.json")
    b["storm_sockops_ns"], b["storm_sockops_runs"] = per_call(b0, b1, "sockops_track")
    b2, b3 = load(base + ".pre.bpf.json"), load(base + ".post.bpf.json")
    b["msg_ns"], b["msg_runs"] = per_call(b2, b3, "msg_redirect")
    b["sockops_ns"], b["sockops_runs"] = per_call(b2, b3, "sockops_track")
    return b


def fmt_b(v):
    return "n/a" if v is None else "%.0f B" % v if abs(v) < 10240 else "%.1f KiB" % (v / 1024)


def cmd_line(base, n):
    b = block(base, int(n))
    extra = ""
    if "storm_pairs" in b:
        extra = "  storm: %d paired, %d no_peer, %d no_room  msg %s" % (
            b["storm_pairs"], b["storm_no_peer"], b["storm_no_room"],
            "n/a" if b["msg_ns"] is None else "%.0f ns" % b["msg_ns"])
    if "storm_paired_share" in b:
        extra += "  paired %.3f" % b["storm_paired_share"]
    print("%s req/s  p99 %s  CPU %s/req  slab %s/conn  %s conn/s%s%s" % (
        fmt_rps(b["rps"]), fmt_ms(b["p99_ms"]), fmt_us(b["cpu_us_per_req"]),
        fmt_b(b.get("slab_per_conn")),
        "n/a" if not b["storm_connect_per_s"] else "%.0f" % b["storm_connect_per_s"], extra,
        "  [ERRORS %d]" % b["errors"] if b["errors"] else ""))


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def cmd_report(out):
    meta = dict(l.strip().split("=", 1) for l in open(os.path.join(out, "meta.txt")) if "=" in l)
    blocks = {}
    for f in sorted(os.listdir(os.path.join(out, "raw"))):
        m = re.match(r"r(\d+)-(baseline|accel)-(\d+)\.wrk$", f)
        if m:
            r, mode, n = int(m.group(1)), m.group(2), int(m.group(3))
            blocks[(r, mode, n)] = block(os.path.join(out, "raw", f[:-4]), n)
    counts = sorted({k[2] for k in blocks})
    rounds = sorted({k[0] for k in blocks})
    keys = ("rps", "p99_ms", "cpu_us_per_req", "slab_per_conn", "sunreclaim_per_conn",
            "tcp_mem_per_conn", "storm_connect_per_s", "msg_ns", "sockops_ns",
            "storm_sockops_ns", "storm_paired_share", "storm_pairs", "storm_no_peer",
            "storm_no_room", "storm_claims_lost", "upstream_conns")
    summary = {}
    for n in counts:
        s = summary[n] = {}
        for mode in ("baseline", "accel"):
            s[mode] = {k: med([blocks[(r, mode, n)].get(k) for r in rounds
                               if (r, mode, n) in blocks]) for k in keys}
        # paired per round: the same round's baseline
        ratio = [blocks[(r, "accel", n)]["rps"] / blocks[(r, "baseline", n)]["rps"]
                 for r in rounds if (r, "accel", n) in blocks and (r, "baseline", n) in blocks
                 and blocks[(r, "baseline", n)]["rps"] and blocks[(r, "accel", n)]["rps"]]
        s["rps_ratio"] = med(ratio)
        s["rps_ratios"] = ratio
        a, b = s["accel"], s["baseline"]
        s["agent_slab_per_conn"] = (a["slab_per_conn"] - b["slab_per_conn"]
                                    if a["slab_per_conn"] is not None and
                                    b["slab_per_conn"] is not None else None)
        s["agent_kmem_per_conn"] = (
            a["slab_per_conn"] + a["tcp_mem_per_conn"] - b["slab_per_conn"] - b["tcp_mem_per_conn"]
            if None not in (a["slab_per_conn"], a["tcp_mem_per_conn"], b["slab_per_conn"],
                            b["tcp_mem_per_conn"]) else None)
    errors = sum(b["errors"] for b in blocks.values())
    json.dump({"meta": meta, "summary": {str(k): v for k, v in summary.items()},
               "blocks": [dict(b, round=k[0], mode=k[1]) for k, b in sorted(blocks.items())]},
              open(os.path.join(out, "results.json"), "w"), indent=1)
    L = ["# bench/scale: cost against connections", "",
         "Commit %s, %s, kernel %s, %s CPUs; %s rounds, wrk %s s per block (-t2, keep-alive, "
         "256-byte file, --timeout 30s); the proxy's upstream pool keeps N connections; nginx workers: %s; ulimit -n %s; "
         "kernel.bpf_stats_enabled=1 in both modes. Medians over rounds; req/s ratio: accel over the same round's "
         "baseline, median of rounds (each: %s)." % (
             meta.get("commit"), meta.get("date"), meta.get("kernel"), meta.get("cpus"),
             meta.get("rounds"), meta.get("duration"), meta.get("workers"), meta.get("nofile"),
             "; ".join("%d: %s" % (n, ", ".join("%.2f" % x for x in summary[n]["rps_ratios"]))
                       for n in counts)),
         "", "Storm: N connections to the upstream nginx opened at once, each sending its "
         "request as soon as it is connected; paired share = pairs / N. Kernel memory per "
         "TCP connection (two sockets): /proc/meminfo Slab and /proc/net/sockstat TCP pages "
         "with the storm's N connections open and idle, less the same servers before it, "
         "over N. Host shared with other work: memory deltas are noisy.", ""]
    if errors:
        L += ["**%d wrk socket errors or non-2xx responses in these runs.**" % errors, ""]
    L += ["| conns | req/s base | req/s accel | ratio | p99 base | p99 accel | CPU/req base "
          "| CPU/req accel |", "|---|---|---|---|---|---|---|---|"]
    for n in counts:
        s = summary[n]
        L.append("| %d | %s | %s | %s | %s | %s | %s | %s |" % (
            n, fmt_rps(s["baseline"]["rps"]), fmt_rps(s["accel"]["rps"]),
            "n/a" if s["rps_ratio"] is None else "%.2fx" % s["rps_ratio"],
            fmt_ms(s["baseline"]["p99_ms"]), fmt_ms(s["accel"]["p99_ms"]),
            fmt_us(s["baseline"]["cpu_us_per_req"]), fmt_us(s["accel"]["cpu_us_per_req"])))
    L += ["", "| conns | slab/conn base | slab/conn accel | TCP mem/conn base | TCP mem/conn "
          "accel | agent adds (slab) |", "|---|---|---|---|---|---|"]
    for n in counts:
        s = summary[n]
        L.append("| %d | %s | %s | %s | %s | %s |" % (
            n, fmt_b(s["baseline"]["slab_per_conn"]), fmt_b(s["accel"]["slab_per_conn"]),
            fmt_b(s["baseline"]["tcp_mem_per_conn"]), fmt_b(s["accel"]["tcp_mem_per_conn"]),
            fmt_b(s["agent_slab_per_conn"])))
    L += ["", "| conns | msg_redirect ns/call (wrk) | sockops_track ns/call (storm) | storm "
          "conn/s base | storm conn/s accel | storm: paired share | pairs | no_peer "
          "| claims_lost | no_room |", "|---|---|---|---|---|---|---|---|---|---|"]
    for n in counts:
        a, b = summary[n]["accel"], summary[n]["baseline"]

        def f(v, fmt="%.0f"):
            return "n/a" if v is None else fmt % v
        L.append("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            n, f(a["msg_ns"]), f(a["storm_sockops_ns"]), f(b["storm_connect_per_s"]),
            f(a["storm_connect_per_s"]), f(a["storm_paired_share"], "%.3f"), f(a["storm_pairs"]),
            f(a["storm_no_peer"]), f(a["storm_claims_lost"]), f(a["storm_no_room"])))
    open(os.path.join(out, "results.md"), "w").write("\n".join(L) + "\n")
    print("\n".join(L))
    plot(summary, counts, os.path.join(out, "cost.svg"))


def plot(summary, counts, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no matplotlib: no chart")
        return
    fig, ax = plt.subplots(2, 2, figsize=(10, 7))
    series = [(ax[0][0], "cpu_us_per_req", "CPU per request (us)", 1),
              (ax[0][1], "slab_per_conn", "slab per connection (KiB)", 1 / 1024),
              (ax[1][0], "p99_ms", "p99 (ms)", 1)]
    for a, k, title, scale in series:
        for mode in ("baseline", "accel"):
            ys = [summary[n][mode][k] for n in counts]
            a.plot(counts, [None if y is None else y * scale for y in ys], "o-", label=mode)
        a.set_title(title)
        a.set_xlabel("concurrent connections")
        a.legend()
    a = ax[1][1]
    for k, label in (("msg_ns", "msg_redirect (wrk)"), ("storm_sockops_ns", "sockops_track (storm)")):
        a.plot(counts, [summary[n]["accel"][k] for n in counts], "o-", label=label)
    a.set_title("BPF run time per call (ns)")
    a.set_xlabel("concurrent connections")
    a.legend()
    for row in ax:
        for a in row:
            a.set_ylim(bottom=0)
    fig.tight_layout()
    fig.savefig(path)


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "storm":
        storm(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif cmd == "bpf":
        json.dump(read_bpf(sys.argv[2]), sys.stdout)
    elif cmd == "line":
        cmd_line(sys.argv[2], sys.argv[3])
    elif cmd == "report":
        cmd_report(sys.argv[2])
    else:
        sys.exit("unknown command %s" % cmd)

#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The benchmark report, shared by bench/run (local) and bench/compose
# (containers): both write OUT/runs.tsv, raw wrk outputs, agent counter
# snapshots and OUT/meta.json (bench/run also CPU snapshots), and this turns
# them into results.md, results.json and chart.svg.
#   report.py parse WRK_OUTPUT [CPU]   one line for the terminal
#   report.py report OUT META          the report
#   report.py chart OUT                redraw OUT/chart.svg from results.json
#   report.py bpf STATE                run time and runs of the BPF programs of
#                                      the agent whose agent.state is STATE
#   report.py app-out KIND NATIVE NS RC [LOGS...]
#                                      an app profile's client output as wrk's
#   report.py pooled PROFILE MODE REF OUT...
#                                      MODE/REF req/s per round, pooled over
#                                      several reports (results.json)
#   report.py compare OUT              bench/compare's table (from
#                                      results.json): OUT/compare.md and
#                                      OUT/compare.json, the table printed
import json, os, re, statistics, sys

UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3, "h": 3600e3}
ROLES = ("client", "proxy", "upstream", "agent")

def agent_mode(m):
    """Does mode m run an agent?  accel:LABEL is bench/run --agents'."""
    return m in ("accel", "telemetry", "direct_accel", "splice") or m.startswith("accel:")

def ms(s):
    m = re.match(r"([\d.]+)(us|ms|s|m|h)$", s.strip())
    return float(m.group(1)) * UNITS[m.group(2)] if m else None

def parse(path):
    """wrk --latency output -> dict (None values when missing)."""
    r = {"rps": None, "p50_ms": None, "p75_ms": None, "p90_ms": None,
         "p99_ms": None, "requests": None, "transfer_per_s": None,
         "sock_errors": 0, "connect_errors": 0, "read_errors": 0,
         "write_errors": 0, "timeouts": 0, "non2xx": 0}
    own = False
    try:
        text = open(path).read()
    except OSError:
        return r
    for line in text.splitlines():
        line = line.strip()
        m = re.match(r"(50|75|90|99)%\s+(\S+)$", line)
        if m and not own:
            r["p%s_ms" % m.group(1)] = ms(m.group(2)) or None  # 0.00us: wrk found no sample
        m = re.match(r"bench-latency-us (.*)$", line)
        if m:
            r["latency_source"] = "per pipelined batch, rescaled percentiles (pipeline.lua done())"
            for kv in m.group(1).split():
                k, v = kv.split("=")
                if k == "reach":
                    r["latency_reach_pct"] = float(v)
                else:
                    r[k + "_ms"] = (int(float(v)) / 1000.0) or None
            own = True
        m = re.match(r"Requests/sec:\s+([\d.]+)", line)
        if m:
            r["rps"] = float(m.group(1))
        m = re.match(r"Transfer/sec:\s+(\S+)", line)
        if m:
            r["transfer_per_s"] = m.group(1)
        m = re.match(r"(\d+) requests in", line)
        if m:
            r["requests"] = int(m.group(1))
        m = re.match(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", line)
        if m:
            c, rd, w, t = map(int, m.groups())
            r.update(connect_errors=c, read_errors=rd, write_errors=w, timeouts=t,
                     sock_errors=c + rd + w + t)
        m = re.match(r"Non-2xx or 3xx responses: (\d+)", line)
        if m:
            r["non2xx"] = int(m.group(1))
    return r

def parse_cpu(path, requests):
    """bench/run's CPU snapshots (two lines of role=usec, before and after
    the measured run) -> per-run CPU microseconds by role, their sum, the
    host's busy time, and both per completed request; None if incomplete."""
    try:
        lines = [dict(kv.split("=") for kv in l.split()) for l in open(path).read().splitlines() if l]
    except (OSError, ValueError):
        return None
    if len(lines) != 2:
        return None
    pre, post = lines
    d = {k: int(post[k]) - int(pre[k]) for k in post if k in pre}
    c = {"usec": {k: d.get(k) for k in ROLES}}
    if any(v is None for v in c["usec"].values()):
        return None
    c["usec"]["total"] = sum(c["usec"][k] for k in ROLES)
    c["host_usec"] = d.get("host")
    if requests:
        c["us_per_req"] = c["usec"]["total"] / requests
        c["agent_us_per_req"] = c["usec"]["agent"] / requests
        c["host_us_per_req"] = c["host_usec"] / requests if c["host_usec"] is not None else None
        c["ctxt_per_req"] = d["ctxt"] / requests if d.get("ctxt") else None
    return c

def read_bpf(state):
    """run_time_ns and run_cnt (kernel.bpf_stats_enabled) of the programs
    that use the agent's maps (their ids are in its agent.state), summed by
    program name."""
    import subprocess
    try:
        st = json.load(open(state))
    except (OSError, ValueError):
        st = {}
    ours = set(v for v in st.get("maps", {}).values() if isinstance(v, int))
    try:
        progs = json.loads(subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True,
                                          check=True).stdout)
    except (OSError, ValueError, subprocess.CalledProcessError):
        return {}
    out = {}
    for p in progs:
        if ours & set(p.get("map_ids", [])):
            o = out.setdefault(p.get("name") or str(p["id"]), {"run_time_ns": 0, "run_cnt": 0})
            o["run_time_ns"] += p.get("run_time_ns", 0)
            o["run_cnt"] += p.get("run_cnt", 0)
    return out

def fmt_ms(v):
    if v is None:
        return "n/a"
    if v >= 1000:
        return "%.2f s" % (v / 1000)
    if v >= 10:
        return "%.1f ms" % v
    if v >= 1:
        return "%.2f ms" % v
    return "%.0f us" % (v * 1000)

def fmt_rps(v):
    return "n/a" if v is None else "{:,.0f}".format(v)

def fmt_ratio(v):
    return "n/a" if v is None else "%.2fx" % v

def fmt_us(v):
    return "n/a" if v is None else ("%.0f us" % v if v >= 100 else "%.1f us" % v)

def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None

def cmd_parse(path, cpu_path=None):
    r = parse(path)
    flag = ""
    if r["rps"] is None:
        flag = "  [NO RESULT]"
    elif not r["requests"]:
        flag = "  [NO REQUEST COMPLETED]"
    elif r["sock_errors"] or r["non2xx"]:
        flag = "  [ERRORS: socket %d (c%d r%d w%d t%d), non-2xx %d]" % (
            r["sock_errors"], r["connect_errors"], r["read_errors"],
            r["write_errors"], r["timeouts"], r["non2xx"])
    cpu = ""
    c = parse_cpu(cpu_path, r["requests"]) if cpu_path else None
    if c and c.get("us_per_req") is not None:
        cpu = "  CPU %s/req" % fmt_us(c["us_per_req"])
    print("%s req/s  p50 %s  p99 %s%s%s" % (fmt_rps(r["rps"]), fmt_ms(r["p50_ms"]),
                                            fmt_ms(r["p99_ms"]), cpu, flag))

# `ngx-sockmap status --json`: gauges are kept as sampled, everything else
# numeric is a counter since the agent started and becomes a per-run delta.
# bench/run's app family: its clients' output made wrk's (app_out)
APP_PROFILES = ("php", "pgbench", "redis", "redis_p16", "grpc")

GAUGES = ("sockets", "pairs_active", "maps.", "agent.", "paused")

def flatten(d, prefix=""):
    out = {}
    for k, v in (d or {}).items():
        if isinstance(v, dict):
            out.update(flatten(v, prefix + k + "."))
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            out[prefix + k] = v
    return out

def is_gauge(k):
    return any(k == g or (g.endswith(".") and k.startswith(g)) for g in GAUGES)

def counters_delta(prev, cur):
    """Per-run agent counters from two cumulative status snapshots."""
    if cur is None:
        return None
    p, c = flatten(prev), flatten(cur)
    return {k: (v if is_gauge(k) else v - p.get(k, 0)) for k, v in c.items()}

def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None

# Telemetry mode: the counters of /metrics that status --json lacks (XDP
# frames and bytes by interface and kind, ring events, gaps, wake-ups), as
# "metrics": {"xdp_packets": {"lo.ipv4": N, ...}, ...} in the sample, so
# that they become per-run deltas like the rest.
METRIC_RE = re.compile(r'ngx_sockmap_(xdp_packets|xdp_bytes|ring_events|ring_gaps|ring_wakeups)_total'
                       r'(?:\{([^}]*)\})?\s+(\S+)$')

def cmd_merge_metrics(sample, metrics):
    st = load_json(sample)
    if st is None:
        return
    m = {}
    try:
        text = open(metrics).read()
    except OSError:
        text = ""
    for line in text.splitlines():
        mm = METRIC_RE.match(line.strip())
        if not mm:
            continue
        labels = ".".join(v for _, v in re.findall(r'(\w+)="([^"]*)"', mm.group(2) or "")) or "all"
        v = float(mm.group(3))
        m.setdefault(mm.group(1), {})[labels] = int(v) if v.is_integer() else v
    st["metrics"] = m
    with open(sample, "w") as f:
        json.dump(st, f)

def metric_sum(delta, name):
    """Sum of a /metrics counter's per-run deltas over its labels; None if absent."""
    if delta is None:
        return None
    vs = [v for k, v in delta.items() if k.startswith("metrics.%s." % name)]
    return sum(vs) if vs else None

# ------------------------------------------------------------------ chart --
# Small multiples: one column per profile, one row per measure, each panel
# with its own scale (profiles differ by orders of magnitude).  Bars are
# medians over rounds, whiskers span min..max.  To change the chart, change
# ROWS or the few lines of chart().
ROWS = [("rps", "req/s (higher is better)"),
        ("p99_ms", "p99 latency, ms (lower is better)"),
        ("cpu_us_per_req", "CPU per request, us (lower is better)")]
COLORS = {"baseline": "#4e79a7", "accel": "#f28e2b", "telemetry": "#59a14f", "unix": "#e15759",
          "direct": "#bab0ac", "direct_accel": "#9c755f", "splice": "#b07aa1"}

def chart(summary, profiles, modes_of, path):
    """chart.svg with matplotlib; False (and one line why) when it is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        matplotlib.rcParams["svg.fonttype"] = "none"  # text as text: a small, greppable file
        import matplotlib.pyplot as plt
    except ImportError:
        print("bench: no chart: matplotlib is missing (apt-get install python3-matplotlib); "
              "the report is tables only", file=sys.stderr)
        return False
    rows = [(k, t) for k, t in ROWS
            if any(summary[p][m].get("median_" + k) is not None for p in profiles for m in modes_of[p])]
    fig, axes = plt.subplots(len(rows), len(profiles), squeeze=False,
                             figsize=(2.3 * len(profiles) + 0.8, 2.4 * len(rows) + 0.6))
    for ri, (key, title) in enumerate(rows):
        for pi, prof in enumerate(profiles):
            ax, ms_ = axes[ri][pi], modes_of[prof]
            meds = [summary[prof][m].get("median_" + key) or 0 for m in ms_]
            raw = [[v for v in summary[prof][m].get("raw_" + key, []) if v is not None] for m in ms_]
            err = [[md - min(r) if r else 0 for md, r in zip(meds, raw)],
                   [max(r) - md if r else 0 for md, r in zip(meds, raw)]]
            ax.bar(range(len(ms_)), meds, yerr=err, capsize=3,
                   color=[COLORS.get(m, "#999") for m in ms_])
            ax.set_xticks(range(len(ms_)), ms_, rotation=30, fontsize=8)
            ax.tick_params(axis="y", labelsize=8)
            ax.set_title(prof if ri == 0 else "", fontsize=10)
            if pi == 0:
                ax.set_ylabel(title, fontsize=8)
    fig.suptitle("ngx-sockmap bench: medians over rounds (whiskers: min..max)", fontsize=11)
    fig.tight_layout()
    fig.savefig(path)  # format from the name: chart.svg
    plt.close(fig)
    return True

# ----------------------------------------------------------------- report --
def paired(runs, prof, mode, ref, key="rps"):
    """Median over rounds of mode/ref within the same round.  The two runs of
    a round are minutes closer than the medians' runs can be, so a slow spell
    of a shared host slows both: on a noisy 2-CPU VM this is the steadier
    figure.  Flagged runs are left out."""
    by = {}
    for r in runs:
        if r["profile"] == prof and r["mode"] in (mode, ref) and r.get(key) and not r["flags"]:
            by.setdefault(r["round"], {})[r["mode"]] = r[key]
    return med(v[mode] / v[ref] for v in by.values() if mode in v and ref in v)

def ratio(a, b):
    return a / b if a and b else None

def ratios(summary, runs, prof, mode, ref):
    a, b = summary[prof][mode], summary[prof][ref]
    return {"rps": ratio(a["median_rps"], b["median_rps"]),
            "rps_paired": paired(runs, prof, mode, ref),
            "p50": ratio(a["median_p50_ms"], b["median_p50_ms"]),
            "p99": ratio(a["median_p99_ms"], b["median_p99_ms"]),
            "p99_paired": paired(runs, prof, mode, ref, "p99_ms"),
            "cpu_per_req": ratio(a.get("median_cpu_us_per_req"), b.get("median_cpu_us_per_req")),
            "cpu_per_req_paired": paired(runs, prof, mode, ref, "cpu_us_per_req")}

def load_profile(base):
    """bench/run --perf files of one run: BPF run time by program (delta),
    perf's top symbols, map sizes and TCP memory halfway through."""
    post = load_json(base + ".bpf.json")
    if post is None:
        return None
    pre = load_json(base + ".bpf.pre.json") or {}
    d = {"bpf": {k: {"run_time_ns": v["run_time_ns"] - pre.get(k, {}).get("run_time_ns", 0),
                     "run_cnt": v["run_cnt"] - pre.get(k, {}).get("run_cnt", 0)}
                 for k, v in post.items()}}
    try:
        d["perf_top"] = [l.rstrip() for l in open(base + ".perf.txt") if l.strip()]
    except OSError:
        pass
    mid = load_json(base + ".mid.json")
    if mid:
        d["mid"] = {"sockets": mid.get("sockets"), "pairs_active": mid.get("pairs_active"),
                    "maps": mid.get("maps")}
    try:
        d["sockstat_tcp"] = open(base + ".sockstat").read().strip()
    except OSError:
        pass
    return d

def profile_md(runs, profiles, modes_of):
    """The --perf section: per profile and mode, BPF time per request by
    program, map sizes and TCP memory halfway, wrk timeouts, top symbols."""
    md = []
    for prof in profiles:
        for m in modes_of[prof]:
            rs = sorted([r for r in runs if r["profile"] == prof and r["mode"] == m
                         and "profile_data" in r], key=lambda r: r["round"])
            if not rs:
                continue
            md.append("### %s, %s" % (prof, m))
            md.append("")
            md.append("- wrk timeouts: %s (per round: %s)" % (
                sum(r["timeouts"] for r in rs), ", ".join(str(r["timeouts"]) for r in rs)))
            names = sorted({k for r in rs for k in r["profile_data"]["bpf"]})
            for n in names:
                per = [(r["profile_data"]["bpf"].get(n), r["requests"]) for r in rs]
                per = [(b, q) for b, q in per if b and q and b.get("run_cnt")]
                if not per:
                    continue
                md.append("- BPF `%s`: %s ns per run, %s runs and %s ns per request (medians over rounds)" % (
                    n, "%.0f" % med(b["run_time_ns"] / b["run_cnt"] for b, q in per if b["run_cnt"]),
                    "%.2f" % med(b["run_cnt"] / q for b, q in per),
                    "%.0f" % med(b["run_time_ns"] / q for b, q in per)))
            for r in rs:
                pd = r["profile_data"]
                mid = pd.get("mid") or {}
                md.append("- round %d halfway: %s%s" % (
                    r["round"], pd.get("sockstat_tcp", "no sockstat"),
                    "; agent: %s sockets, %s pairs, maps %s" % (mid.get("sockets"), mid.get("pairs_active"),
                                                                json.dumps(mid.get("maps"))) if mid else ""))
            top = rs[0]["profile_data"].get("perf_top")
            if top:
                md.append("- perf record -a, round %d, samples in the bench's cgroups (percent of "
                          "those):" % rs[0]["round"])
                md.append("")
                md.append("```")
                md.extend(top[:21])
                md.append("```")
            md.append("")
    return md

def load_runs(out):
    runs = []
    with open(os.path.join(out, "runs.tsv")) as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            rnd, mode, prof, raw, wrk_rc, check, secs, counters = cols[:8]
            cpu_file = cols[8] if len(cols) > 8 and cols[8] != "-" else None
            r = parse(os.path.join(out, raw))
            c = load_json(os.path.join(out, counters)) if counters != "-" else None
            pre = load_json(os.path.join(out, counters[:-5] + ".pre.json")) if c is not None else None
            delta = counters_delta(pre, c) if c is not None else None
            cpu = parse_cpu(os.path.join(out, cpu_file), r["requests"]) if cpu_file else None
            flags = []
            if r["rps"] is None or wrk_rc != "0":
                flags.append("no result (wrk exit %s)" % wrk_rc)
            elif not r["requests"]:
                flags.append("no request completed")
            if r["sock_errors"]:
                flags.append("socket errors %d (connect %d, read %d, write %d, timeout %d)" % (
                    r["sock_errors"], r["connect_errors"], r["read_errors"],
                    r["write_errors"], r["timeouts"]))
            if r["non2xx"]:
                flags.append("non-2xx %d" % r["non2xx"])
            if check != "ok":
                flags.append("check before the block failed: %s" % check)
            # local profiles: both ends tracked, so an agent that redirected
            # nothing did not work (the remote ones can't be accelerated)
            if (agent_mode(mode) and delta is not None and not prof.startswith("remote_")
                    and r["requests"] and not delta.get("redirected_msgs")):
                flags.append("the agent redirected nothing (tracked sockets: %s)" % delta.get("sockets_total"))
            if mode == "telemetry" and delta is not None:
                xdp = metric_sum(delta, "xdp_packets")
                if xdp is None:
                    flags.append("no XDP counters from /metrics")
                elif xdp == 0:
                    flags.append("the XDP observer saw no frames")
            run = dict(round=int(rnd), mode=mode, profile=prof, wrk_output=raw,
                       wrk_exit=int(wrk_rc), body_check=check, seconds=float(secs),
                       flags=flags, agent_counters=delta, cpu=cpu,
                       cpu_us_per_req=(cpu or {}).get("us_per_req"),
                       agent_us_per_req=(cpu or {}).get("agent_us_per_req"), **r)
            prof_data = load_profile(os.path.join(out, raw[:-len(".txt")]))
            if prof_data:
                run["profile_data"] = prof_data
            runs.append(run)
    return runs

def summarize(runs, prof, m):
    rs = sorted([r for r in runs if r["profile"] == prof and r["mode"] == m], key=lambda r: r["round"])
    cpus = [r["cpu"] for r in rs if r["cpu"] and r["cpu"].get("us_per_req") is not None]
    s = {"rounds": len(rs),
         "raw_rps": [r["rps"] for r in rs],
         "raw_p50_ms": [r["p50_ms"] for r in rs],
         "raw_p99_ms": [r["p99_ms"] for r in rs],
         "median_rps": med(r["rps"] for r in rs),
         "median_p50_ms": med(r["p50_ms"] for r in rs),
         "median_p99_ms": med(r["p99_ms"] for r in rs),
         "sock_errors": sum(r["sock_errors"] for r in rs),
         "timeouts": sum(r["timeouts"] for r in rs),
         "non2xx": sum(r["non2xx"] for r in rs),
         "flagged_rounds": [r["round"] for r in rs if r["flags"]]}
    if cpus:
        s["raw_cpu_us_per_req"] = [r["cpu_us_per_req"] for r in rs]
        s["median_cpu_us_per_req"] = med(c["us_per_req"] for c in cpus)
        s["median_agent_us_per_req"] = med(c["agent_us_per_req"] for c in cpus)
        s["median_host_us_per_req"] = med(c["host_us_per_req"] for c in cpus)
        s["median_ctxt_per_req"] = med(c.get("ctxt_per_req") for c in cpus)
        s["median_cpu_us_per_req_by_role"] = {
            k: med(c["usec"][k] / r["requests"] for r in rs for c in [r["cpu"]]
                   if c and r["requests"]) for k in ROLES}
    tot = {}
    for r in rs:
        for k, v in (r["agent_counters"] or {}).items():
            if not is_gauge(k):
                tot[k] = tot.get(k, 0) + v
    if tot:
        s["agent_counters_total"] = tot
        red, tcp = tot.get("redirected_msgs", 0), tot.get("tcp_msgs", 0)
        s["redirected_share"] = red / (red + tcp) if red + tcp else None
        reqs = sum(r["requests"] or 0 for r in rs if r["agent_counters"])
        s["redirected_per_request"] = red / reqs if reqs else None
        xdp = metric_sum(tot, "xdp_packets")
        if xdp is not None:
            s["xdp_frames_per_request"] = xdp / reqs if reqs else None
            s["ring_events"] = metric_sum(tot, "ring_events")
            s["ring_gaps"] = metric_sum(tot, "ring_gaps")
    return s

def direct_md(summary, profiles):
    """The app profiles beside their physical limit: paired req/s and CPU
    per request of accel, direct and direct_accel against baseline, and the
    share of direct_accel's req/s the accelerated proxy reaches."""
    ps = [p for p in profiles if "direct" in summary[p]["ratios"] or "direct_accel" in summary[p]["ratios"]]
    if not ps:
        return []
    md = ["## Beside the physical limit (direct: no nginx)", "",
          "| profile | accel | splice | direct | direct_accel | accel / direct_accel "
          "| splice / direct_accel |",
          "|---|---:|---:|---:|---:|---:|---:|"]

    def cell(rt):
        if not rt or rt.get("rps_paired") is None:
            return "n/a"
        c = rt.get("cpu_per_req_paired")
        return "%s%s" % (fmt_ratio(rt["rps_paired"]), "" if c is None else " (CPU %s)" % fmt_ratio(c))
    def share(num, den):
        a, b = (rt.get(num) or {}).get("rps_paired"), (rt.get(den) or {}).get("rps_paired")
        return "n/a" if not a or not b else "%.0f%%" % (100 * a / b)
    for p in ps:
        rt, va = summary[p]["ratios"], summary[p]["ratios_vs_accel"]
        inv = (va.get("direct_accel") or {}).get("rps_paired")
        md.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            p, cell(rt.get("accel")), cell(rt.get("splice")), cell(rt.get("direct")),
            cell(rt.get("direct_accel")), "n/a" if not inv else "%.0f%%" % (100 / inv),
            share("splice", "direct_accel")))
    md.append("")
    md.append("req/s against baseline (nginx in the path, no agent), paired; CPU per request likewise. "
              "accel / direct_accel: the accelerated proxy's req/s as a share of the client's with "
              "the agent and no proxy (1 / the paired direct_accel/accel); splice / direct_accel: "
              "the same for nginx with sockmap_splice on (the ratio of the two paired ratios).")
    md.append("")
    return md

def cmd_report(out, meta_path):
    meta = load_json(meta_path)
    profiles, modes = meta["profiles"], meta["modes"]
    # the modes measured for each profile (bench/run: unix only for local
    # profiles); bench/compose runs every mode everywhere
    modes_of = {p: [m for m in modes if m in meta.get("profile_modes", {}).get(p, modes)]
                for p in profiles}
    runs = load_runs(out)
    summary = {}
    for prof in profiles:
        summary[prof] = {m: summarize(runs, prof, m) for m in modes_of[prof]}
        ms_ = modes_of[prof]
        summary[prof]["ratios"] = {m: ratios(summary, runs, prof, m, "baseline")
                                   for m in ms_ if m != "baseline" and "baseline" in ms_}
        # against accel: the cost of what telemetry adds to the acceleration,
        # and unix, the alternative to the acceleration
        summary[prof]["ratios_vs_accel"] = {m: ratios(summary, runs, prof, m, "accel")
                                            for m in ms_ if m not in ("baseline", "accel") and "accel" in ms_}
    has_cpu = any("median_cpu_us_per_req" in summary[p][m] for p in profiles for m in modes_of[p])
    has_agent = any("agent_counters_total" in summary[p][m] for p in profiles for m in modes_of[p])
    has_ratio = any(summary[p]["ratios"] for p in profiles)
    has_vs_accel = any(summary[p]["ratios_vs_accel"] for p in profiles)

    md = []
    md.append("# %s, %s" % (meta.get("title", "ngx-sockmap benchmark"), meta["date"]))
    md.append("")
    md.append("- kernel %s, %s CPUs (%s), %s" % (meta["kernel"], meta["cpus"], meta["cpu_model"], meta["os"]))
    md.append("- %s, %s, agent %s" % (meta["nginx_version"], meta["wrk_version"], meta["agent_version"]))
    if meta.get("agent_args"):
        md.append("- extra agent options (NGX_SOCKMAP_ARGS): `%s`" % meta["agent_args"])
    md.append("- rounds: %d x %d s per profile and mode (+%d s warm-up each), modes interleaved "
              "and alternating order per round; values are medians over rounds"
              % (meta["rounds"], meta["duration"], meta["warmup"]))
    # bench/compose describes its own topology (containers, not loopback)
    if meta.get("setup"):
        md.append(meta["setup"])
    else:
        if any(p in APP_PROFILES for p in profiles):
            md.append("- app profiles: real servers behind nginx on 127.0.0.1, their own clients "
                      "(php: wrk -> nginx -> php-fpm over FastCGI with kept connections; pgbench -> "
                      "nginx stream {} -> PostgreSQL; redis-benchmark -> nginx stream {} -> "
                      "redis-server; a Python grpcio client -> nginx grpc_pass -> a grpcio server); "
                      "client, nginx and server each in its own cgroup, accel: the agent attached to "
                      "the three. direct: the same client straight to the server, no nginx (the "
                      "physical limit; not for php, whose client speaks HTTP), direct_accel: the "
                      "same with the agent. A request is what the client counts: an HTTP request, "
                      "a TPC-B transaction, a Redis command, a gRPC call; CPU/req is per that")
        if any(not p.startswith("remote_") and p not in APP_PROFILES for p in profiles):
            md.append("- local profiles: wrk -> proxy nginx (127.0.0.1:%d) -> upstream nginx (127.0.0.1:%d, "
                      "sendfile on), each in its own cgroup; accel and telemetry: the agent attached to "
                      "the three cgroups; unix: the proxy reaches the upstream over a unix socket, no agent"
                      % (meta["proxy_port"], meta["upstream_port"]))
        if any(p.startswith("remote_") for p in profiles):
            md.append("- remote profiles: wrk and the upstream nginx in another network namespace behind "
                      "a veth pair (%s), both in the root cgroup, which the agent never follows: they play "
                      "remote hosts and nothing can be accelerated; the proxy in its own cgroup, the agent "
                      "attached to it with following on. These runs measure what the agent costs in its "
                      "steady state there: started with --guard-idle 1, each block begins once its guard "
                      "is idle (syscall tracepoints detached, as after 30 s without a local connection "
                      "by default)"
                      % (meta.get("remote_net") or "veth"))
        if meta.get("other_agents"):
            md.append("- %d other ngx-sockmap agent(s) ran on this host (other run dirs and cgroups)"
                      % meta["other_agents"])
    md.append("")
    hdr = "| profile | mode | req/s | p50 | p99 |"
    sep = "|---|---|---:|---:|---:|"
    if has_cpu:
        hdr += " CPU/req | agent CPU/req | host CPU/req | switches/req |"
        sep += "---:|---:|---:|---:|"
    hdr += " socket errors | non-2xx |"
    sep += "---:|---:|"
    if has_agent:
        hdr += " redirected/req |"
        sep += "---:|"
    md.append(hdr)
    md.append(sep)
    for prof in profiles:
        for m in modes_of[prof]:
            s = summary[prof][m]
            flag = " (!)" if s["flagged_rounds"] else ""
            row = "| %s | %s%s | %s | %s | %s |" % (
                prof, m, flag, fmt_rps(s["median_rps"]), fmt_ms(s["median_p50_ms"]),
                fmt_ms(s["median_p99_ms"]))
            if has_cpu:
                sw = s.get("median_ctxt_per_req")
                row += " %s | %s | %s | %s |" % (fmt_us(s.get("median_cpu_us_per_req")),
                                                 fmt_us(s.get("median_agent_us_per_req")) if agent_mode(m) else "",
                                                 fmt_us(s.get("median_host_us_per_req")),
                                                 "" if sw is None else "%.1f" % sw)
            row += " %d | %d |" % (s["sock_errors"], s["non2xx"])
            if has_agent:
                pr = s.get("redirected_per_request")
                row += " %s |" % ("" if "agent_counters_total" not in s else
                                  "n/a" if pr is None else "%.2f" % pr)
            md.append(row)
    md.append("")
    if has_cpu:
        md.append("CPU/req: CPU time of client (wrk), proxy, upstream and agent over the measured run "
                  "(cgroup cpu.stat usage_usec; the remote profiles' wrk and upstream run in the root "
                  "cgroup and are read from their processes), per completed request; agent CPU/req is "
                  "the agent process's share of it (the BPF programs run in the tasks they hook and are "
                  "in the others). host CPU/req: all busy CPU time of the machine (/proc/stat), which "
                  "adds kernel threads (ksoftirqd, kworkers) and anything else running on the host. "
                  "switches/req: the host's context switches (/proc/stat ctxt) per completed request: "
                  "each wake-up of a process that waited for a message costs one or two, whatever "
                  "carried the message.")
    if has_agent:
        md.append("redirected/req: sends that sk_msg redirected to the peer socket per completed "
                  "request, over the measured runs (`ngx-sockmap status --json`: redirected_msgs / "
                  "wrk requests); a fully accelerated proxied request takes at least 4 sends (2 "
                  "in direct_accel, no proxy), 0 means nothing was accelerated. Fallbacks per run are in the per-round table.")
    md.append("")
    if has_ratio or has_vs_accel:
        md.append("## Ratios")
        md.append("")
        md.append("| profile | mode | vs | req/s | paired | p99 | paired |" + (" CPU/req | paired |" if has_cpu else ""))
        md.append("|---|---|---|---:|---:|---:|---:|" + ("---:|---:|" if has_cpu else ""))
        for prof in profiles:
            for key, ref in (("ratios", "baseline"), ("ratios_vs_accel", "accel")):
                for m, rt in summary[prof][key].items():
                    if ref == "accel" and m.startswith("direct"):
                        continue  # in the physical-limit table below
                    md.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                        prof, m, ref, fmt_ratio(rt["rps"]), fmt_ratio(rt["rps_paired"]),
                        fmt_ratio(rt["p99"]), fmt_ratio(rt["p99_paired"])) + (
                        " %s | %s |" % (fmt_ratio(rt["cpu_per_req"]), fmt_ratio(rt["cpu_per_req_paired"]))
                        if has_cpu else ""))
        md.append("")
        md.append("Ratios are mode/reference: req/s > 1, p99 < 1 and CPU/req < 1 mean the mode is "
                  "better. The first of each pair is the ratio of the medians; paired is the median "
                  "over rounds of the ratio within a round (the runs of one round are close in time, "
                  "so a slow spell of the shared host slows both; flagged runs left out). Against "
                  "accel: telemetry/accel is the cost of the telemetry (XDP observer, arena event "
                  "ring, /metrics); unix/accel compares a unix-socket upstream with the acceleration.")
        md.append("")
    md.extend(direct_md(summary, profiles))
    uv = [(p, summary[p]["ratios_vs_accel"]["unix"]) for p in profiles
          if "unix" in summary[p]["ratios_vs_accel"]]
    if uv:
        md.append("## A unix-socket upstream beside the acceleration")
        md.append("")
        for p, rt in uv:
            r, c = rt["rps_paired"], rt["cpu_per_req_paired"]
            if r is None:
                md.append("- %s: no paired rounds." % p)
                continue
            who = ("unix is faster: %.0f%% more req/s than accel" % ((r - 1) * 100) if r > 1.0
                   else "accel is faster: %.0f%% more req/s than unix" % ((1 / r - 1) * 100) if r < 1.0
                   else "unix and accel are level")
            cpu = ("" if c is None else "; unix uses %s of accel's CPU per request" % fmt_ratio(c))
            md.append("- %s: %s (paired)%s; p99 unix/accel %s." % (p, who, cpu, fmt_ratio(rt["p99_paired"])))
        md.append("")
    tel = [(p, summary[p]["telemetry"]) for p in profiles if "telemetry" in modes_of[p]]
    if any("xdp_frames_per_request" in t for _, t in tel):
        md.append("telemetry: frames the XDP observer counted per request, and the agent's event "
                  "ring over the measured runs: " + "; ".join(
                      "%s %s frames/req, %s ring events, %s gaps" % (
                          p, "n/a" if t.get("xdp_frames_per_request") is None
                          else "%.1f" % t["xdp_frames_per_request"],
                          "n/a" if t.get("ring_events") is None else "{:,}".format(int(t["ring_events"])),
                          "n/a" if t.get("ring_gaps") is None else "{:,}".format(int(t["ring_gaps"])))
                      for p, t in tel if "xdp_frames_per_request" in t) + ".")
        md.append("")
    md.append("Profiles (wrk, through the proxy; + -d, --latency):")
    md.append("")
    for prof in profiles:
        note = ""
        if prof == "pipelined":
            note = (" -- latency is per batch of %d pipelined requests (write to last response); "
                    "wrk prints 0 for its percentiles with pipelining (wg/wrk#236), so pipeline.lua "
                    "rescales them in done()" % meta["pipeline_depth"])
        if prof == "remote_close":
            note = " -- /close/ proxies without a keep-alive pool: a new upstream connection per request"
        if {"direct", "direct_accel"} & set(modes_of[prof]):
            note = " -- direct, direct_accel: to the server's port (nginx's + 1)"
        md.append("- %s: `%s`%s" % (prof, meta["profile_args"].get(prof, "?"), note))
    md.append("")
    flagged = [r for r in runs if r["flags"]]
    if flagged:
        md.append("## Flagged runs (!)")
        md.append("")
        for r in flagged:
            md.append("- round %d, %s, %s: %s (`%s`)" % (r["round"], r["profile"], r["mode"],
                                                       "; ".join(r["flags"]), r["wrk_output"]))
        md.append("")
    cmp = compare_agents(meta, summary, runs, profiles)
    if cmp:
        md.append("## Agents compared")
        md.append("")
        md.extend(compare_md(cmp))
    pmd = profile_md(runs, profiles, modes_of)
    phead = "## Profile (--perf)" if meta.get("perf") else "## BPF run time (--bpf-stats)"
    if pmd:
        md.append(phead)
        md.append("")
        md.append("Profiled runs are slower than unprofiled ones (sampling, BPF run-time "
                  "statistics): compare them with each other.")
        md.append("")
        md.extend(pmd)
    md.append("## Per round")
    md.append("")
    md.append("| profile | mode | round | req/s | p50 | p99 | CPU/req | errors | redirected msgs | tcp msgs | new pairs | fallbacks |")
    md.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for prof in profiles:
        for m in modes_of[prof]:
            for r in sorted([r for r in runs if r["profile"] == prof and r["mode"] == m],
                            key=lambda r: r["round"]):
                ac = r["agent_counters"]
                def cnt(k):
                    return "" if ac is None or k not in ac else "{:,}".format(ac[k])
                fb = "" if ac is None else ", ".join(
                    "%s %s" % (k.split(".", 1)[1], "{:,}".format(v))
                    for k, v in sorted(ac.items()) if k.startswith("fallbacks.") and v) or "0"
                errs = r["sock_errors"] + r["non2xx"]
                md.append("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                    prof, m, r["round"], fmt_rps(r["rps"]), fmt_ms(r["p50_ms"]), fmt_ms(r["p99_ms"]),
                    fmt_us(r["cpu_us_per_req"]) if r["cpu"] else "",
                    "%d (!)" % errs if r["flags"] else errs, cnt("redirected_msgs"), cnt("tcp_msgs"),
                    cnt("pairs"), fb))
    md.append("")

    made = chart(summary, profiles, modes_of, os.path.join(out, "chart.svg"))
    if not made and os.path.exists(os.path.join(out, "chart.svg")):
        os.remove(os.path.join(out, "chart.svg"))  # an older run's
    md.append("Raw wrk output: `raw/`; nginx and agent logs: `logs/`; %s" %
              ("chart: `chart.svg`." if made else "no chart (matplotlib was missing)."))
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(dict(meta=meta, summary=summary, runs=runs, compare=cmp), f, indent=2)
        f.write("\n")

    # terminal: everything above the profile section and the per-round table
    end = md.index(phead) if pmd else md.index("## Per round")
    print("\n".join(md[:end]).rstrip())

# ---------------------------------------------------------------- compare --
# bench/run --agents (bench/compare): builds side by side.  Every ratio
# between builds is paired within a round, as the ratios to baseline are:
# the median over rounds of accel:B/accel:A of the same round.
def bpf_per_request(rs):
    """BPF run time of a mode's runs by program: medians over rounds of
    ns per run, runs per request and ns per request; "all": the sum."""
    rs = [r for r in rs if r.get("profile_data") and r["requests"] and not r["flags"]]
    names = sorted({n for r in rs for n in r["profile_data"]["bpf"]})
    out = {}
    for n in names:
        per = [(r["profile_data"]["bpf"].get(n), r["requests"]) for r in rs]
        per = [(b, q) for b, q in per if b and b.get("run_cnt")]
        if per:
            out[n] = {"ns_per_run": med(b["run_time_ns"] / b["run_cnt"] for b, q in per),
                      "runs_per_request": med(b["run_cnt"] / q for b, q in per),
                      "ns_per_request": med(b["run_time_ns"] / q for b, q in per)}
    tot = [sum(b["run_time_ns"] for b in r["profile_data"]["bpf"].values()) / r["requests"] for r in rs
           if r["profile_data"]["bpf"]]
    if tot:
        out["all"] = {"ns_per_request": med(tot)}
    return out

def compare_agents(meta, summary, runs, profiles):
    """Per profile and agent: paired ratios to baseline, the agent's CPU,
    BPF run time; and each agent against the first (the reference)."""
    agents = meta.get("agents") or []
    if not agents:
        return None
    ref = agents[0]["label"]
    cmp = {"agents": agents, "reference": ref, "rounds": meta["rounds"],
           "duration": meta["duration"], "bpf_stats": meta.get("bpf_stats", False), "profiles": {}}
    for prof in profiles:
        pc = {"agents": {}, "vs_reference": {}}
        for a in agents:
            m = "accel:" + a["label"]
            if m not in summary[prof]:
                continue
            s, rt = summary[prof][m], summary[prof]["ratios"].get(m, {})
            pc["agents"][a["label"]] = {
                "median_rps": s["median_rps"], "median_cpu_us_per_req": s.get("median_cpu_us_per_req"),
                "agent_us_per_req": s.get("median_agent_us_per_req"),
                "ctxt_per_req": s.get("median_ctxt_per_req"),
                "rps_vs_baseline_paired": rt.get("rps_paired"),
                "cpu_per_req_vs_baseline_paired": rt.get("cpu_per_req_paired"),
                "p99_vs_baseline_paired": rt.get("p99_paired"),
                "flagged_rounds": s["flagged_rounds"],
                "bpf": bpf_per_request([r for r in runs if r["profile"] == prof and r["mode"] == m])}
            if a["label"] != ref and ("accel:" + ref) in summary[prof]:
                pc["vs_reference"][a["label"]] = {
                    k: paired(runs, prof, m, "accel:" + ref, k) for k in
                    ("rps", "cpu_us_per_req", "agent_us_per_req", "p99_ms")}
        cmp["profiles"][prof] = pc
    return cmp

def compare_md(cmp):
    """The table of bench/compare: one per profile, a column per agent and
    one per agent against the reference."""
    ref = cmp["reference"]
    labels = [a["label"] for a in cmp["agents"]]
    md = ["- %s%s: %s" % (a["label"], " = %s" % a["revision"] if a.get("revision") else "", a["version"])
          for a in cmp["agents"]]
    md.append("")
    for prof, pc in cmp["profiles"].items():
        have = [l for l in labels if l in pc["agents"]]
        others = [l for l in have if l != ref and l in pc["vs_reference"]]
        if not have:
            continue
        ag = pc["agents"]
        md.append("| %s | %s |%s" % (prof, " | ".join(have), "".join(" %s/%s |" % (o, ref) for o in others)))
        md.append("|---|" + "---:|" * (len(have) + len(others)))

        def row(name, cell, between):
            md.append("| %s | %s |%s" % (name, " | ".join(cell(ag[l]) for l in have),
                                         "".join(" %s |" % between(o) for o in others)))

        def paired_of(key):
            return lambda o: fmt_ratio(pc["vs_reference"][o].get(key))

        def bpf_of(n, key):
            return lambda a: ("-" if a["bpf"].get(n, {}).get(key) is None else "%.0f" % a["bpf"][n][key])

        def bpf_ratio(n):  # of the medians: per-program figures are steady
            return lambda o: fmt_ratio(ratio(ag[o]["bpf"].get(n, {}).get("ns_per_request"),
                                             ag[ref]["bpf"].get(n, {}).get("ns_per_request")))
        row("req/s / baseline (paired)", lambda a: fmt_ratio(a["rps_vs_baseline_paired"]), paired_of("rps"))
        row("CPU/req / baseline (paired)", lambda a: fmt_ratio(a["cpu_per_req_vs_baseline_paired"]),
            paired_of("cpu_us_per_req"))
        row("p99 / baseline (paired)", lambda a: fmt_ratio(a["p99_vs_baseline_paired"]), paired_of("p99_ms"))
        row("req/s", lambda a: fmt_rps(a["median_rps"]), lambda o: "")
        row("CPU/req", lambda a: fmt_us(a["median_cpu_us_per_req"]), lambda o: "")
        row("agent CPU/req", lambda a: fmt_us(a["agent_us_per_req"]), paired_of("agent_us_per_req"))
        row("switches/req", lambda a: "-" if a.get("ctxt_per_req") is None else "%.2f" % a["ctxt_per_req"],
            lambda o: "")
        progs = sorted({n for l in have for n in ag[l]["bpf"] if n != "all"})
        if progs:
            row("BPF ns/req, all programs", bpf_of("all", "ns_per_request"), bpf_ratio("all"))
            for n in progs:
                row("`%s` ns/req" % n, bpf_of(n, "ns_per_request"), bpf_ratio(n))
                row("`%s` ns/run, runs/req" % n, lambda a, n=n: "-" if n not in a["bpf"] else "%.0f, %.2f" % (
                    a["bpf"][n]["ns_per_run"], a["bpf"][n]["runs_per_request"]), lambda o: "")
        md.append("")
    others = [l for l in labels if l != ref]
    md.append("Medians over rounds. Paired: the median over rounds of the ratio within a round (the runs "
              "of a round are close in time, so a slow spell of a shared machine slows all of them); "
              "%s/%s: against %s, paired likewise (BPF rows: the ratio of the medians), so req/s over 1, "
              "CPU/req and p99 under 1 mean %s is faster. agent CPU/req: the agent process alone. BPF: "
              "run time of the agent's programs (sock_ops, sk_msg, the guard's hooks; "
              "kernel.bpf_stats_enabled), all runs' time over the requests, whichever task they ran in."
              % ("/".join(others) or "B", ref, ref, "/".join(others) or "B"))
    if not cmp.get("bpf_stats"):
        md.append("No BPF run time: bench/run ran without --bpf-stats.")
    return md

def cmd_compare(out):
    res = load_json(os.path.join(out, "results.json"))
    cmp = res.get("compare") if res else None
    if not cmp:
        sys.exit("bench: %s/results.json has no comparison (bench/run --agents)" % out)
    # bench/compare names the revisions it built (REV_A, REV_B)
    for a in cmp["agents"]:
        rev = os.environ.get("REV_" + a["label"])
        if rev:
            a["revision"] = rev
    md = ["# bench/compare, %s" % res["meta"]["date"], "",
          "%d rounds x %d s, profiles %s, modes %s; kernel %s, %d CPUs" % (
              res["meta"]["rounds"], res["meta"]["duration"], ", ".join(res["meta"]["profiles"]),
              ", ".join(res["meta"]["modes"]), res["meta"]["kernel"], res["meta"]["cpus"]), ""]
    md += compare_md(cmp)
    with open(os.path.join(out, "compare.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    with open(os.path.join(out, "compare.json"), "w") as f:
        json.dump(dict(meta=res["meta"], compare=cmp), f, indent=2)
        f.write("\n")
    print("\n".join(md).rstrip())

def cmd_chart(out):
    res = load_json(os.path.join(out, "results.json"))
    meta = res["meta"]
    modes_of = {p: [m for m in meta["modes"] if m in res["summary"][p]] for p in meta["profiles"]}
    if not chart(res["summary"], meta["profiles"], modes_of, os.path.join(out, "chart.svg")):
        sys.exit(1)

def cmd_pooled(profile, mode, ref, outs):
    """Per-round MODE/REF ratios of several runs, each run's paired median,
    and the median and mean over all rounds: a small effect (the cost of
    telemetry) next to a host that drifts by 1.5x needs many rounds."""
    allr = []
    for out in outs:
        runs = load_json(os.path.join(out, "results.json"))["runs"]
        by = {}
        for r in runs:
            if r["profile"] == profile and r["mode"] in (mode, ref) and r.get("rps") and not r["flags"]:
                by.setdefault(r["round"], {})[r["mode"]] = r["rps"]
        rs = [v[mode] / v[ref] for v in by.values() if len(v) == 2]
        allr += rs
        print("%s: %d rounds, paired median %s" % (out, len(rs), fmt_ratio(med(rs))))
    if allr:
        print("pooled: %d rounds, median %s, mean %s" % (
            len(allr), fmt_ratio(med(allr)), fmt_ratio(statistics.mean(allr))))

# bench/run's app profiles: their clients' own output, written as wrk
# prints it (requests, Requests/sec, latency percentiles, errors as
# non-2xx), so that parse() and the report read them as any run.
def app_out(kind, native, elapsed_ns, rc, logs):
    text = open(native, errors="replace").read() if os.path.exists(native) else ""
    secs = elapsed_ns / 1e9
    reqs = rps = None
    pct = {}
    errors = 0
    if kind == "pgbench":
        m = re.search(r"^number of transactions actually processed: (\d+)", text, re.M)
        reqs = int(m.group(1)) if m else None
        m = re.search(r"^tps = ([\d.]+)", text, re.M)
        rps = float(m.group(1)) if m else None
        m = re.search(r"^number of failed transactions: (\d+)", text, re.M)
        errors = int(m.group(1)) if m else 0
        # -l: one line per transaction, its latency (us) third
        lat = []
        for path in logs:
            with open(path) as f:
                lat += [int(l.split()[2]) / 1000.0 for l in f if len(l.split()) > 2]
        lat.sort()
        if lat:
            pct = {q: lat[min(len(lat) - 1, len(lat) * q // 100)] for q in (50, 75, 90, 99)}
        if reqs and rps is None:
            rps = reqs / secs
    elif kind in ("redis", "redis_p16"):
        # --csv: "TEST","rps","avg","min","p50","p95","p99","max" per test;
        # requests over the tests' own times; percentiles of GET
        tot_n = tot_t = 0
        for l in text.splitlines():
            f = [x.strip('"') for x in l.split(",")]
            # LRANGE's tests fill a list first, a row of its own ("LPUSH
            # (needed to benchmark LRANGE)"): not one of the tests measured
            if len(f) < 8 or f[0] == "test" or "needed to" in f[0]:
                continue
            try:
                r = float(f[1])
            except ValueError:
                continue
            n = int(os.environ.get("APP_REQS_PER_TEST", "0")) or None
            if n is None:
                continue
            tot_n += n
            tot_t += n / r if r else 0
            if f[0] == "GET":
                pct = {50: float(f[4]), 75: None, 90: float(f[5]), 99: float(f[6])}
        if tot_n and tot_t:
            reqs, rps, secs = tot_n, tot_n / tot_t, tot_t
    elif kind == "grpc":
        try:
            j = json.loads(text.strip().splitlines()[-1])
            reqs, secs = j["calls"], j["seconds"]
            rps = reqs / secs if secs else None
            pct = {q: j.get("p%d_ms" % q) for q in (50, 75, 90, 99)}
        except (IndexError, ValueError, KeyError):
            pass
    if rc != 0 or reqs is None:
        print("app client %s exited %d:" % (kind, rc))
        print(text[-2000:])
        return
    print("  %d requests in %.2fs, 0B read" % (reqs, secs))
    print("  Latency Distribution")
    for q in (50, 75, 90, 99):
        if pct.get(q) is not None:
            print("     %d%%    %.3fms" % (q, pct[q]))
    if errors:
        print("  Non-2xx or 3xx responses: %d" % errors)
    print("Requests/sec: %.2f" % rps)


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "parse":
        cmd_parse(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
    elif cmd == "report":
        cmd_report(sys.argv[2], sys.argv[3])
    elif cmd == "merge-metrics":
        cmd_merge_metrics(sys.argv[2], sys.argv[3])
    elif cmd == "chart":
        cmd_chart(sys.argv[2])
    elif cmd == "app-out":
        app_out(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6:])
    elif cmd == "pooled":
        cmd_pooled(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
    elif cmd == "compare":
        cmd_compare(sys.argv[2])
    elif cmd == "bpf":
        json.dump(read_bpf(sys.argv[2]), sys.stdout)

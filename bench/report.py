#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The benchmark report, shared by bench/run (local) and bench/compose
# (containers): both write OUT/runs.tsv, raw wrk outputs, agent counter
# snapshots and OUT/meta.json, and this turns them into results.md,
# results.json and chart.svg.
#   report.py parse WRK_OUTPUT     one line for the terminal
#   report.py report OUT META      the report
#   report.py pooled PROFILE MODE REF OUT...
#                                  MODE/REF req/s per round, pooled over
#                                  several reports (results.json)
import json, math, os, re, statistics, sys, html

UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3, "h": 3600e3}

def num(s):
    m = re.match(r"([\d.]+)([a-zA-Z]*)", s)
    v = float(m.group(1))
    suf = m.group(2).lower()
    return v * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}.get(suf, 1)

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

def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None

def cmd_parse(path):
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
    print("%s req/s  p50 %s  p99 %s%s" % (fmt_rps(r["rps"]), fmt_ms(r["p50_ms"]),
                                          fmt_ms(r["p99_ms"]), flag))

# `ngx-sockmap status --json`: gauges are kept as sampled, everything else
# numeric is a counter since the agent started and becomes a per-run delta.
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

COLORS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2"]

def nice_scale(vmax):
    """Axis top and tick step: 4-6 ticks of 1, 2, 2.5 or 5 x 10^k above vmax*1.1."""
    if not vmax or vmax <= 0:
        return 1.0, 0.25
    raw = vmax * 1.12 / 5
    mag = 10 ** math.floor(math.log10(raw))
    for f in (1, 2, 2.5, 5, 10):
        if f * mag >= raw:
            step = f * mag
            break
    return step * math.ceil(vmax * 1.12 / step), step

def svg_chart(summary, profiles, modes, path):
    """Small multiples: one panel per profile, row 1 req/s, row 2 p99,
    each panel with its own scale (profiles differ by orders of magnitude).
    Bars are medians, whiskers span min..max over rounds."""
    colors = COLORS
    pw, ph = 170, 190           # panel size
    left, top, gap = 60, 60, 30
    W = max(left + len(profiles) * (pw + gap) + 20, 640)
    H = top + 2 * (ph + 70) + 10
    o = []
    o.append('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
             'viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">' % (W, H, W, H))
    o.append('<rect width="100%" height="100%" fill="white"/>')
    o.append('<text x="%d" y="22" font-size="15" font-weight="bold">ngx-sockmap bench: '
             'medians over rounds</text>' % left)
    # legend
    x = left
    for i, m in enumerate(modes):
        o.append('<rect x="%d" y="32" width="12" height="12" fill="%s"/>' % (x, colors[i % len(colors)]))
        o.append('<text x="%d" y="42">%s</text>' % (x + 16, html.escape(m)))
        x += 30 + 7 * len(m)
    o.append('<text x="%d" y="42" fill="#444">whiskers: min..max of the rounds; '
             'arrow: max off the scale</text>' % (x + 10))
    rows = [("rps", "requests/s (higher is better)"), ("p99_ms", "p99 latency, ms (lower is better)")]
    for ri, (key, title) in enumerate(rows):
        y0 = top + ri * (ph + 70) + 20
        o.append('<text x="%d" y="%d" font-size="13" font-weight="bold">%s</text>' % (left, y0 - 6, title))
        for pi, prof in enumerate(profiles):
            x0 = left + pi * (pw + gap)
            vals = {m: summary[prof][m]["raw_" + key] for m in modes}
            allv = [v for m in modes for v in vals[m] if v is not None]
            meds = [summary[prof][m]["median_" + key] for m in modes]
            meds = [v for v in meds if v is not None]
            hi = max(allv) if allv else 0.0
            if meds and hi > 2 * max(meds):      # an outlier round: clip its whisker
                hi = 2 * max(meds)
            vmax, step = nice_scale(hi)
            by = y0 + ph          # baseline y
            o.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#ccc"/>' % (x0, y0, pw, ph))
            for t in range(0, int(round(vmax / step)) + 1):
                v = step * t
                yy = by - ph * v / vmax
                o.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eee"/>' % (x0, yy, x0 + pw, yy))
                lab = ("%g" % v) if v < 1e4 else "%gk" % (v / 1000)
                o.append('<text x="%d" y="%.1f" text-anchor="end" font-size="9" fill="#666">%s</text>' % (x0 - 3, yy + 3, lab))
            n = len(modes)
            bw = pw / (n + 1)
            for mi, m in enumerate(modes):
                md = summary[prof][m]["median_" + key]
                bx = x0 + bw * (mi + 0.5)
                cx = bx + bw * 0.45
                col = colors[mi % len(colors)]
                vs = [v for v in vals[m] if v is not None]
                top_y = by
                if md is not None:
                    h = ph * md / vmax
                    top_y = by - h
                    o.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s: %s</title></rect>'
                             % (bx, by - h, bw * 0.9, h, col, html.escape(prof), html.escape(m), md))
                if len(vs) > 1:
                    y1, y2 = by - ph * min(vs) / vmax, by - ph * max(vs) / vmax
                    clipped = y2 < y0
                    y2 = max(y2, y0)
                    top_y = min(top_y, y2)
                    o.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>' % (cx, y1, cx, y2))
                    o.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>' % (cx - 4, y1, cx + 4, y1))
                    if clipped:   # arrow head: the max is off the scale
                        o.append('<path d="M%.1f %.1f l-4 7 h8 z" fill="black"><title>max %s</title></path>'
                                 % (cx, y2, ("%.3g" % max(vs))))
                        top_y = by - ph * md / vmax if md is not None else y2 + 20
                    else:
                        o.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>' % (cx - 4, y2, cx + 4, y2))
                if md is not None:
                    lab = ("%.3g" % md) if key == "p99_ms" else "{:,.0f}".format(md)
                    o.append('<text x="%.1f" y="%.1f" text-anchor="middle" font-size="9" '
                             'stroke="white" stroke-width="3" paint-order="stroke">%s</text>'
                             % (cx, top_y - 4, lab))
            o.append('<text x="%.1f" y="%d" text-anchor="middle" font-size="12">%s</text>' % (x0 + pw / 2, by + 16, html.escape(prof)))
            ref = summary[prof].get("ratios", {})
            line = "  ".join("%s %s" % (m, fmt_ratio(ref.get(m, {}).get("rps" if key == "rps" else "p99")))
                             for m in modes if m != "baseline" and "baseline" in modes)
            if line:
                o.append('<text x="%.1f" y="%d" text-anchor="middle" font-size="10" fill="#444">%s</text>'
                         % (x0 + pw / 2, by + 30, html.escape(line)))
    o.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(o) + "\n")

def gnuplot_chart(summary, profiles, modes, path, workdir):
    """Same layout with gnuplot (used when it is installed)."""
    import subprocess
    n = len(profiles)
    lines = ['set terminal svg size %d,560 dynamic font "sans,10" background "white"' % (200 * n + 80),
             'set output "%s"' % path,
             'set multiplot layout 2,%d title "ngx-sockmap bench: median over rounds (whiskers: min..max)"' % n,
             'set style fill solid 0.9', 'set boxwidth 0.6', 'set yrange [0:*]',
             'set xrange [-0.6:%f]' % (len(modes) - 0.4), 'unset key', 'set grid ytics']
    for key, title in (("rps", "req/s"), ("p99_ms", "p99 ms")):
        for prof in profiles:
            dat = os.path.join(workdir, "chart-%s-%s.dat" % (prof, key))
            with open(dat, "w") as f:
                for i, m in enumerate(modes):
                    vs = [v for v in summary[prof][m]["raw_" + key] if v is not None]
                    md = summary[prof][m]["median_" + key]
                    if md is None:
                        continue
                    f.write("%d %s %g %g %g %d\n" % (i, m, md, min(vs), max(vs),
                                                   int(COLORS[i % len(COLORS)][1:], 16)))
            lines.append('set title "%s: %s"' % (prof, title))
            lines.append('plot "%s" using 1:3:(0.6):6:xtic(2) with boxes lc rgb variable, '
                         '"" using 1:3:4:5 with yerrorbars lc rgb "black" pt 0 ps 0' % dat)
    lines.append("unset multiplot")
    script = os.path.join(workdir, "chart.gp")
    with open(script, "w") as f:
        f.write("\n".join(lines) + "\n")
    subprocess.run(["gnuplot", script], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE)

def paired_ratio(runs, prof, mode, ref):
    """Median over rounds of mode/ref req/s within the same round.  The two
    runs of a round are minutes closer than the medians' runs can be, so a
    slow spell of a shared host slows both: on a noisy 2-CPU VM this is the
    steadier figure."""
    by = {}
    for r in runs:
        if r["profile"] == prof and r["mode"] in (mode, ref) and r["rps"] and not r["flags"]:
            by.setdefault(r["round"], {})[r["mode"]] = r["rps"]
    return med(v[mode] / v[ref] for v in by.values() if mode in v and ref in v)


def cmd_report(out, meta_path):
    meta = load_json(meta_path)
    profiles, modes = meta["profiles"], meta["modes"]
    runs = []
    with open(os.path.join(out, "runs.tsv")) as f:
        for line in f:
            rnd, mode, prof, raw, wrk_rc, check, secs, counters = line.rstrip("\n").split("\t")
            r = parse(os.path.join(out, raw))
            c = load_json(os.path.join(out, counters)) if counters != "-" else None
            pre = load_json(os.path.join(out, counters[:-5] + ".pre.json")) if c is not None else None
            delta = counters_delta(pre, c) if c is not None else None
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
            if mode == "telemetry" and delta is not None:
                xdp = metric_sum(delta, "xdp_packets")
                if xdp is None:
                    flags.append("no XDP counters from /metrics")
                elif xdp == 0:
                    flags.append("the XDP observer saw no frames")
            runs.append(dict(round=int(rnd), mode=mode, profile=prof, wrk_output=raw,
                             wrk_exit=int(wrk_rc), body_check=check, seconds=float(secs),
                             flags=flags, agent_counters=delta, **r))
    summary = {}
    for prof in profiles:
        summary[prof] = {}
        for m in modes:
            rs = sorted([r for r in runs if r["profile"] == prof and r["mode"] == m],
                        key=lambda r: r["round"])
            s = {"rounds": len(rs),
                 "raw_rps": [r["rps"] for r in rs],
                 "raw_p50_ms": [r["p50_ms"] for r in rs],
                 "raw_p99_ms": [r["p99_ms"] for r in rs],
                 "median_rps": med(r["rps"] for r in rs),
                 "median_p50_ms": med(r["p50_ms"] for r in rs),
                 "median_p99_ms": med(r["p99_ms"] for r in rs),
                 "sock_errors": sum(r["sock_errors"] for r in rs),
                 "non2xx": sum(r["non2xx"] for r in rs),
                 "flagged_rounds": [r["round"] for r in rs if r["flags"]]}
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
            summary[prof][m] = s
        ratios = {}
        if "baseline" in modes:
            b = summary[prof]["baseline"]
            for m in modes:
                if m == "baseline":
                    continue
                a = summary[prof][m]
                ratios[m] = {
                    "rps": a["median_rps"] / b["median_rps"] if a["median_rps"] and b["median_rps"] else None,
                    "rps_paired": paired_ratio(runs, prof, m, "baseline"),
                    "p50": a["median_p50_ms"] / b["median_p50_ms"] if a["median_p50_ms"] and b["median_p50_ms"] else None,
                    "p99": a["median_p99_ms"] / b["median_p99_ms"] if a["median_p99_ms"] and b["median_p99_ms"] else None}
        summary[prof]["ratios"] = ratios
        # the cost of telemetry: the same acceleration with and without it
        vs_accel = {}
        if "accel" in modes:
            a = summary[prof]["accel"]
            for m in modes:
                if m in ("baseline", "accel"):
                    continue
                t = summary[prof][m]
                vs_accel[m] = {
                    "rps": t["median_rps"] / a["median_rps"] if t["median_rps"] and a["median_rps"] else None,
                    "rps_paired": paired_ratio(runs, prof, m, "accel"),
                    "p99": t["median_p99_ms"] / a["median_p99_ms"] if t["median_p99_ms"] and a["median_p99_ms"] else None}
        summary[prof]["ratios_vs_accel"] = vs_accel

    # ---- Markdown
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
    md.append(meta.get("setup") or
              "- wrk -> proxy nginx (127.0.0.1:%d) -> upstream nginx (127.0.0.1:%d, sendfile on), "
              "each in its own cgroup" % (meta["proxy_port"], meta["upstream_port"]))
    md.append("")
    has_ratio = "baseline" in modes and len(modes) > 1
    has_agent = any("agent_counters_total" in summary[p][m] for p in profiles for m in modes)
    hdr = "| profile | mode | req/s | p50 | p99 | socket errors | non-2xx |"
    sep = "|---|---|---:|---:|---:|---:|---:|"
    if has_agent:
        hdr += " redirected/req |"
        sep += "---:|"
    if has_ratio:
        hdr += " req/s ratio | paired | p99 ratio |"
        sep += "---:|---:|---:|"
    has_vs_accel = "accel" in modes and any(m not in ("baseline", "accel") for m in modes)
    if has_vs_accel:
        hdr += " req/s vs accel | paired |"
        sep += "---:|---:|"
    md.append(hdr)
    md.append(sep)
    for prof in profiles:
        for m in modes:
            s = summary[prof][m]
            flag = " (!)" if s["flagged_rounds"] else ""
            row = "| %s | %s%s | %s | %s | %s | %d | %d |" % (
                prof, m, flag, fmt_rps(s["median_rps"]), fmt_ms(s["median_p50_ms"]),
                fmt_ms(s["median_p99_ms"]), s["sock_errors"], s["non2xx"])
            if has_agent:
                pr = s.get("redirected_per_request")
                row += " %s |" % ("" if "agent_counters_total" not in s else
                                  "n/a" if pr is None else "%.2f" % pr)
            if has_ratio:
                if m == "baseline":
                    row += " | | |"
                else:
                    rt = summary[prof]["ratios"][m]
                    row += " %s | %s | %s |" % (fmt_ratio(rt["rps"]), fmt_ratio(rt["rps_paired"]),
                                                fmt_ratio(rt["p99"]))
            if has_vs_accel:
                va = summary[prof]["ratios_vs_accel"].get(m)
                row += " %s | %s |" % (fmt_ratio(va["rps"]) if va else "",
                                       fmt_ratio(va["rps_paired"]) if va else "")
            md.append(row)
    md.append("")
    if has_ratio:
        md.append("Ratios are mode/baseline: req/s ratio > 1 and p99 ratio < 1 mean the mode is faster. "
                  "req/s ratio: of the medians; paired: the median over rounds of the ratio within "
                  "a round (the runs of one round are close in time, so a slow spell of the shared "
                  "host slows both; flagged runs left out).")
    if has_agent:
        md.append("redirected/req: sends that sk_msg redirected to the peer socket per completed "
                  "request, over the measured runs (`ngx-sockmap status --json`: redirected_msgs / "
                  "wrk requests); a fully accelerated proxied request takes at least 4 sends, 0 "
                  "means nothing was accelerated. Fallbacks per run are in the per-round table.")
    if has_vs_accel:
        md.append("req/s vs accel: the mode's median req/s over accel's, the cost of what it adds to "
                  "the acceleration (telemetry: XDP observer on %s, arena event ring, /metrics); "
                  "issue 4 wants keep-alive telemetry/accel >= 0.97x." % meta.get("xdp_iface", "lo"))
    tel = [(p, summary[p]["telemetry"]) for p in profiles if "telemetry" in modes]
    if any("xdp_frames_per_request" in t for _, t in tel):
        md.append("telemetry: frames the XDP observer counted per request, and the agent's event "
                  "ring over the measured runs: " + "; ".join(
                      "%s %s frames/req, %s ring events, %s gaps" % (
                          p, "n/a" if t.get("xdp_frames_per_request") is None
                          else "%.1f" % t["xdp_frames_per_request"],
                          "n/a" if t.get("ring_events") is None else "{:,}".format(int(t["ring_events"])),
                          "n/a" if t.get("ring_gaps") is None else "{:,}".format(int(t["ring_gaps"])))
                      for p, t in tel if "xdp_frames_per_request" in t) + ".")
    if has_ratio or has_agent or has_vs_accel:
        md.append("")
    md.append("Profiles (wrk, through the proxy; + -d, --latency):")
    md.append("")
    for prof in profiles:
        note = ""
        if prof == "pipelined":
            note = (" -- latency is per batch of %d pipelined requests (write to last response); "
                    "wrk prints 0 for its percentiles with pipelining (wg/wrk#236), so pipeline.lua "
                    "rescales them in done()" % meta["pipeline_depth"])
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
    md.append("## Per round")
    md.append("")
    md.append("| profile | mode | round | req/s | p50 | p99 | errors | redirected msgs | tcp msgs | new pairs | fallbacks |")
    md.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for prof in profiles:
        for m in modes:
            for r in sorted([r for r in runs if r["profile"] == prof and r["mode"] == m],
                            key=lambda r: r["round"]):
                ac = r["agent_counters"]
                def cnt(k):
                    return "" if ac is None or k not in ac else "{:,}".format(ac[k])
                fb = "" if ac is None else ", ".join(
                    "%s %s" % (k.split(".", 1)[1], "{:,}".format(v))
                    for k, v in sorted(ac.items()) if k.startswith("fallbacks.") and v) or "0"
                errs = r["sock_errors"] + r["non2xx"]
                md.append("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                    prof, m, r["round"], fmt_rps(r["rps"]), fmt_ms(r["p50_ms"]), fmt_ms(r["p99_ms"]),
                    "%d (!)" % errs if r["flags"] else errs, cnt("redirected_msgs"), cnt("tcp_msgs"),
                    cnt("pairs"), fb))
    md.append("")
    md.append("Raw wrk output: `raw/`; nginx and agent logs: `logs/`; chart: `chart.svg`.")
    text = "\n".join(md) + "\n"
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write(text)

    res = dict(meta=meta, summary=summary, runs=runs)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(res, f, indent=2)
        f.write("\n")

    chart = os.path.join(out, "chart.svg")
    chart_tool = "python"
    if meta.get("gnuplot"):
        try:
            gnuplot_chart(summary, profiles, modes, chart, os.path.join(out, "raw"))
            chart_tool = "gnuplot"
        except Exception as e:
            print("bench: gnuplot failed (%s), drawing the chart myself" % e, file=sys.stderr)
    if chart_tool == "python":
        svg_chart(summary, profiles, modes, chart)

    # terminal: the summary table only
    print("\n".join(md[:md.index("## Per round")]).rstrip())

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


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "parse":
        cmd_parse(sys.argv[2])
    elif cmd == "report":
        cmd_report(sys.argv[2], sys.argv[3])
    elif cmd == "merge-metrics":
        cmd_merge_metrics(sys.argv[2], sys.argv[3])
    elif cmd == "pooled":
        cmd_pooled(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])

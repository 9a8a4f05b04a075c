#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# `sudo make demo`: a quick before/after run of the local benchmark
# (bench/run --quick: keep-alive and Connection: close, 2 interleaved rounds
# of 5 s per mode) and a short comparison at the end.  Extra arguments go to
# bench/run (e.g. --out DIR).
set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

if [ "$(id -u)" != 0 ]; then
	echo "the demo needs root (cgroups, BPF): sudo make demo" >&2
	exit 2
fi
[ -x "$TOP/build/ngx-sockmap" ] || { echo "build/ngx-sockmap missing: run make first" >&2; exit 1; }

OUT=$TOP/bench/results/demo-$(date +%Y%m%d-%H%M%S)
cat <<EOF
ngx-sockmap demo
================
wrk -> nginx proxy -> nginx upstream, all on 127.0.0.1, each in its own
cgroup.  Every round measures every mode:
  baseline   plain kernel TCP over loopback
  accel      ngx-sockmap attached to the three cgroups: sk_msg redirects
             each send straight into the peer socket's receive queue
  telemetry  accel plus the XDP observer, event rings and /metrics
  unix       no agent; the proxy reaches the upstream over a unix socket
             (what you would configure instead of this tool)
Profiles: keep-alive (wrk -c50) and 'Connection: close' (a new connection
per request, so the connection setup is part of every request).  Besides
req/s and p99: the CPU time of wrk, both nginx and the agent per request.

EOF

"$TOP/bench/run" --quick --out "$OUT" "$@"
rc=$?
if [ $rc != 0 ] || [ ! -s "$OUT/results.json" ]; then
	echo "demo: the benchmark did not finish (exit $rc)" >&2
	exit $((rc ? rc : 1))
fi

echo
echo "Summary"
echo "======="
if [ -s "$OUT/not-accelerating.txt" ]; then
	echo "The agent ran but did not accelerate on this host: $(cat "$OUT/not-accelerating.txt")."
	echo "The accel figures below are plain TCP with the agent attached; 'ngx-sockmap status'"
	echo "says, hazard by hazard, what this host allows (README: what each host gets)."
	echo
fi
python3 - "$OUT/results.json" <<'EOF'
import json, sys
res = json.load(open(sys.argv[1]))
names = {"keepalive": "keep-alive", "close": "Connection: close"}
def ms(v):
    return "n/a" if v is None else ("%.2f ms" % v if v < 10 else "%.1f ms" % v)
def rps(v):
    return "n/a" if v is None else "{:,.0f} req/s".format(v)
def us(v):
    return "n/a" if v is None else "%.0f us" % v
for prof in res["meta"]["profiles"]:
    s = res["summary"][prof]
    b, a = s.get("baseline"), s.get("accel")
    if not b or not a:
        continue
    r = s["ratios"].get("accel", {})
    name = names.get(prof, prof) + ":"
    print("%-19s baseline %-14s accel %-14s %s" % (
        name, rps(b["median_rps"]), rps(a["median_rps"]),
        "x%.2f req/s" % r["rps_paired"] if r.get("rps_paired") else ""))
    print("%-19s p99      %-14s p99   %-14s %s" % (
        "", ms(b["median_p99_ms"]), ms(a["median_p99_ms"]),
        "x%.2f p99" % r["p99_paired"] if r.get("p99_paired") else ""))
    if b.get("median_cpu_us_per_req") is not None:
        print("%-19s CPU/req  %-14s CPU   %-14s %s" % (
            "", us(b["median_cpu_us_per_req"]), us(a.get("median_cpu_us_per_req")),
            "x%.2f CPU per request" % r["cpu_per_req_paired"] if r.get("cpu_per_req_paired") else ""))
    u = s.get("unix")
    if u:
        print("%-19s unix socket upstream: %s, CPU %s/req" % (
            "", rps(u["median_rps"]), us(u.get("median_cpu_us_per_req"))))
    pr = a.get("redirected_per_request")
    if pr is not None:
        print("%-19s sk_msg redirected %.1f sends per request" % ("", pr))
print()
flagged = [x for x in res["runs"] if x["flags"]]
if flagged:
    print("Flagged runs (their numbers are in the medians, read them with care):")
    for x in flagged:
        print("  round %d %s %s: %s" % (x["round"], x["mode"], x["profile"], "; ".join(x["flags"])))
    print()
print("Indicative only: medians over %d interleaved rounds of %d s; ratios"
      % (res["meta"]["rounds"], res["meta"]["duration"]))
print("are accel/baseline, the median of the per-round ratios (req/s: higher")
print("is better, p99 and CPU per request: lower is better).  A small VM is")
print("noisy, CPU per request much less than req/s; for firmer numbers run")
print("`sudo make bench` (7 profiles, remote upstream included, 3 rounds of")
print("8 s).")
EOF
echo
echo "Full report: $OUT/results.md"
echo "             $OUT/results.json$([ -s "$OUT/chart.svg" ] && echo ", $OUT/chart.svg")"

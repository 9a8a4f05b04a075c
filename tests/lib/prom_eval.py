# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Evaluate the deploy files' expressions on a running Prometheus.

    prom_eval.py URL JOB INSTANCE < expressions (deploy/metrics-used.py --exprs)

Grafana's variables are replaced as Grafana would for one job and one
instance ($job, $instance; $__rate_interval by 1m: Prometheus scrapes
every second here).  Each expression goes through /api/v1/query.  Prints
one line per expression (parses, series returned), then the metrics that
Prometheus has never seen, with their users, and the rules' health.
Exit status 1 when an expression does not parse, a metric is missing, a
panel returns no data although its metrics exist, or a rule is unhealthy.
"""
import json
import sys
import urllib.parse
import urllib.request


def get(url, **params):
    q = urllib.parse.urlencode(params)
    try:
        with urllib.request.urlopen(url + ("?" + q if q else ""), timeout=10) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:  # 400 for a bad expression
        return json.load(e)


def main():
    base, job, instance = sys.argv[1:4]
    exprs = [json.loads(line) for line in sys.stdin if line.strip()]
    names = set(get(base + "/api/v1/label/__name__/values")["data"])
    bad = 0
    missing = {}
    print("%-7s %-40s %-7s %s" % ("kind", "name", "parses", "series"))
    for e in exprs:
        q = (e["expr"].replace("$__rate_interval", "1m")
             .replace("$job", job).replace("$instance", instance))
        r = get(base + "/api/v1/query", query=q)
        absent = [m for m in e["metrics"] if m not in names]
        for m in absent:
            missing.setdefault(m, []).append("%s %s" % (e["kind"], e["name"]))
        if r.get("status") != "success":
            print("%-7s %-40s %-7s %s" % (e["kind"], e["name"][:40], "NO", r.get("error")))
            bad += 1
            continue
        n = len(r["data"]["result"]) if isinstance(r["data"]["result"], list) else 1
        note = ""
        if absent:
            note = "  (missing metric %s)" % ", ".join(absent)
        elif n == 0 and e["kind"] in ("panel", "variable"):
            note = "  NO DATA although its metrics exist"
            bad += 1
        elif e["kind"] == "alert":
            note = "  (firing now)" if n else "  (not firing)"
        print("%-7s %-40s %-7s %d%s" % (e["kind"], e["name"][:40], "yes", n, note))
    for m in sorted(missing):
        print("missing metric %s (used by %s)" % (m, "; ".join(missing[m])))
        bad += 1
    rules = get(base + "/api/v1/rules")["data"]["groups"]
    for g in rules:
        for r in g["rules"]:
            if r.get("health") != "ok":
                print("rule %s: health %s %s" % (r["name"], r.get("health"), r.get("lastError", "")))
                bad += 1
    print("%d expressions, %d rules loaded, %d missing metrics, %d problems" %
          (len(exprs), sum(len(g["rules"]) for g in rules), len(missing), bad))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/env bash
# timeout: 60
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: deploy/prometheus/alerts.yml passes `promtool check rules` and
# its unit tests (`promtool test rules alerts_test.yml`: each alert fires
# where it must and stays quiet where it must not); the example Prometheus
# configuration passes `promtool check config`; the PrometheusRule of the
# prometheus-operator overlay is alerts.yml as generated; the Grafana
# dashboard is well formed (unique panel ids and refIds, every panel on
# the ${datasource} variable, $job and $instance in every query, no
# overlapping panels); deploy/metrics-used.txt is current; every alert has
# a runbook_url whose entry docs/runbook.md has, and README's table of
# alerts is alerts.yml's (deploy/prometheus/alerts-doc.py --check).  No root, no
# cluster; the expressions' evaluation on real data is deploy_prometheus.sh.
. "$(dirname "$0")/../lib/common.sh"
command -v promtool >/dev/null || skip "promtool missing (Debian package prometheus; make deps)"
python3 -c 'import yaml' 2>/dev/null || skip "python3 yaml module missing (Debian package python3-yaml)"
P=$TOP/deploy/prometheus

promtool check rules "$P/alerts.yml" >"$TMP/o" 2>&1 || fail "promtool check rules: $(cat "$TMP/o")"
ok "promtool check rules: $(grep -o '[0-9]* rules found' "$TMP/o")"
(cd "$P" && promtool test rules alerts_test.yml) >"$TMP/o" 2>&1 || fail "promtool test rules: $(cat "$TMP/o")"
ok "promtool test rules alerts_test.yml: $(python3 -c 'import sys, yaml; print(len(yaml.safe_load(open(sys.argv[1]))["tests"]))' "$P/alerts_test.yml") test groups pass"

# Debian's Prometheus is built without Kubernetes service discovery
# ("field kubernetes_sd_configs not found"); there the rest of the file is
# checked with static targets in its place.
cp "$P/prometheus.yml" "$P/alerts.yml" "$TMP/"
if ! promtool check config "$TMP/prometheus.yml" >"$TMP/o" 2>&1; then
	grep -q 'kubernetes_sd_configs not found' "$TMP/o" || fail "promtool check config: $(cat "$TMP/o")"
	python3 - "$TMP/prometheus.yml" <<'PY'
import sys, yaml
c = yaml.safe_load(open(sys.argv[1]))
for s in c["scrape_configs"]:
    s.pop("kubernetes_sd_configs")
    s["static_configs"] = [{"targets": ["127.0.0.1:10435"]}]
yaml.safe_dump(c, open(sys.argv[1], "w"))
PY
	promtool check config "$TMP/prometheus.yml" >"$TMP/o" 2>&1 || fail "promtool check config: $(cat "$TMP/o")"
	ok "promtool check config prometheus.yml (kubernetes_sd_configs replaced: this promtool has no Kubernetes SD)"
else
	ok "promtool check config prometheus.yml"
fi

"$P/to-prometheusrule.py" >"$TMP/rule.yaml" || fail "to-prometheusrule.py failed"
cmp -s "$TMP/rule.yaml" "$TOP/deploy/kubernetes/overlays/prometheus-operator/prometheusrule.yaml" ||
	fail "prometheusrule.yaml is stale: run deploy/prometheus/to-prometheusrule.py > deploy/kubernetes/overlays/prometheus-operator/prometheusrule.yaml"
ok "the PrometheusRule is alerts.yml"
"$P/alerts-doc.py" --check >"$TMP/o" 2>&1 || fail "alerts.yml, README and docs/runbook.md disagree: $(cat "$TMP/o")"
ok "every alert has a runbook_url and an entry in docs/runbook.md; README's alert table is alerts.yml's"
"$TOP/deploy/metrics-used.py" --check || fail "deploy/metrics-used.txt is stale"
ok "deploy/metrics-used.txt is current ($(grep -vc '^#' "$TOP/deploy/metrics-used.txt") metrics)"

python3 - "$TOP/deploy/grafana/ngx-sockmap.json" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
def fail(m):
    print("FAIL: dashboard: " + m)
    sys.exit(1)
names = [v["name"] for v in d["templating"]["list"]]
if names != ["datasource", "job", "instance"]:
    fail("variables %s, want datasource, job, instance" % names)
ids, cells = set(), []
for p in d["panels"]:
    if p["id"] in ids:
        fail("duplicate panel id %d" % p["id"])
    ids.add(p["id"])
    g = p["gridPos"]
    if g["x"] + g["w"] > 24:
        fail("panel %r wider than the grid" % p["title"])
    for (x, y, w, h, t) in cells:
        if g["x"] < x + w and x < g["x"] + g["w"] and g["y"] < y + h and y < g["y"] + g["h"]:
            fail("panels %r and %r overlap" % (t, p["title"]))
    cells.append((g["x"], g["y"], g["w"], g["h"], p["title"]))
    if p["type"] == "row":
        continue
    if p.get("datasource", {}).get("uid") != "${datasource}":
        fail("panel %r not on ${datasource}" % p["title"])
    if not p.get("description"):
        fail("panel %r has no description" % p["title"])
    refs = [t["refId"] for t in p["targets"]]
    if len(set(refs)) != len(refs) or not refs:
        fail("panel %r: refIds %s" % (p["title"], refs))
    for t in p["targets"]:
        e = t["expr"]
        if 'job=~"$job"' not in e or 'instance=~"$instance"' not in e:
            fail("panel %r: query without the $job/$instance selector: %s" % (p["title"], e))
        if ("rate(" in e or "increase(" in e) and "$__rate_interval" not in e:
            fail("panel %r: rate without $__rate_interval: %s" % (p["title"], e))
print("ok - dashboard: %d panels, variables %s, no overlap, every query on $job/$instance" %
      (len([p for p in d["panels"] if p["type"] != "row"]), ", ".join(names)))
PY

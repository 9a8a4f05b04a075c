#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""README.md's list of alerts, from deploy/prometheus/alerts.yml itself, so
the two can't disagree (a threshold, a severity, an alert left out).

    deploy/prometheus/alerts-doc.py            print the Markdown table
    deploy/prometheus/alerts-doc.py --check    exit 1 when alerts.yml or
                                               README.md and docs/runbook.md
                                               disagree (deploy_rules.sh)

`make alerts-doc` writes the table between README.md's "<!-- alerts -->"
and "<!-- /alerts -->".  --check also wants every alert to carry a
runbook_url, docs/runbook.md#<alert name, lower case>, with that entry in
docs/runbook.md, and no entry there for an alert that is gone.
"""
import os
import re
import subprocess
import sys

import yaml

here = os.path.dirname(os.path.abspath(__file__))
top = os.path.dirname(os.path.dirname(here))


def rules():
    with open(os.path.join(here, "alerts.yml")) as f:
        doc = yaml.safe_load(f)
    return [r for g in doc["groups"] for r in g["rules"] if "alert" in r]


def cell(s):
    # one line; a | inside code still splits a GitHub table cell
    return " ".join(str(s).split()).replace("|", "\\|")


def table():
    out = ["| alert | severity | fires when | runbook |", "|---|---|---|---|"]
    for r in rules():
        when = "`%s`" % cell(r["expr"])
        if "for" in r:
            when += " for %s" % r["for"]
        name = r["alert"]
        out.append("| `%s` | %s | %s | [%s](docs/runbook.md#%s) |"
                   % (name, r["labels"]["severity"], when, name, name.lower()))
    return "\n".join(out) + "\n"


def check():
    errs = []
    with open(os.path.join(top, "docs", "runbook.md")) as f:
        anchors = {h.strip().lower() for h in re.findall(r"^### (\S+)$", f.read(), re.M)}
    names = set()
    for r in rules():
        name = r["alert"]
        names.add(name.lower())
        want = "docs/runbook.md#" + name.lower()
        got = r.get("annotations", {}).get("runbook_url")
        if got != want:
            errs.append("%s: runbook_url %r, want %r" % (name, got, want))
        if name.lower() not in anchors:
            errs.append("%s: no '### %s' entry in docs/runbook.md" % (name, name))
    for a in sorted(anchors - names):
        errs.append("docs/runbook.md has an entry for %s, which alerts.yml lacks" % a)
    have = subprocess.run([os.path.join(top, "scripts", "doc-block.py"), "get",
                           os.path.join(top, "README.md"), "alerts"],
                          capture_output=True, text=True)
    if have.returncode != 0:
        errs.append("README.md: " + have.stderr.strip())
    elif have.stdout != table():
        errs.append("README.md's alerts block is not alerts.yml's: run make alerts-doc")
    for e in errs:
        print("alerts-doc: " + e)
    return 1 if errs else 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--check"]:
        sys.exit(check())
    sys.stdout.write(table())

#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""matrix.py [--known FILE] OUTDIR MD JSON: the kernel x check/test matrix
from what tests/vm/guest.sh left in OUTDIR/<kernel>/, as Markdown and JSON,
the Markdown also on stdout.  Cells: pass, FAIL or skip with a short reason;
a FAIL listed in the known file (KERNEL ROW WHY, shell globs over the
kernel's id or role and the row) is shown as known and does not fail the
run.  Exit 1 if any other cell failed."""
import datetime
import fnmatch
import json
import os
import re
import subprocess
import sys

ROLE_ORDER = ["6.1", "bpo-oldest", "bpo-newest", "security", "notracing", "host"]
ROLE_NAME = {
    "6.1": "bookworm, newest 6.1",
    "bpo-oldest": "bookworm-backports, oldest 6.12",
    "bpo-newest": "bookworm-backports, newest 6.12",
    "security": "bookworm-security, newest 6.12",
    "notracing": "newest 6.12, BPF tracing programs refused (a BPF LSM policy)",
    "trixie": "trixie (Debian 13), newest 6.12",
    "tbpo-6.18": "trixie-backports, newest 6.18",
    "tbpo-newest": "trixie-backports, newest",
    "forky": "forky (testing), newest",
    "nocx16": "forky's, on a CPU without cx16 (cmpxchg16b)",
    "host": "running kernel (no VM)",
}


def read(path, default=None):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return default


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def short(s, n=None):
    """One line; cut to n characters (the Markdown notes) if given."""
    s = " ".join(s.split())
    return s if n is None or len(s) <= n else s[: n - 3] + "..."


def selftest_cells(d, vm_note):
    """The overall selftest cell and one per check, from selftest.txt."""
    txt = read(os.path.join(d, "selftest.txt"))
    rc = read(os.path.join(d, "selftest.rc"))
    secs = read(os.path.join(d, "selftest.secs"))
    secs = float(secs) if secs else None
    if txt is None or rc is None:
        return {"status": "FAIL", "reason": "did not run" + vm_note}, {}, "did not run" + vm_note
    rc = int(rc)
    checks = {}
    for m in re.finditer(r"^\s+(pass|FAIL|skip)\s+(\S+)\s+(.*)$", txt, re.M):
        st = m.group(1)
        checks[m.group(2)] = {"status": st, "reason": "" if st == "pass" else short(m.group(3))}
    result = re.search(r"^result: (.*)$", txt, re.M)
    couldnt = re.search(r"could not run: (.*)$", txt, re.M)
    lines = [l for l in txt.splitlines() if l.strip()]
    if rc == 0:
        why = result.group(1).replace(" reported above", "") if result else ""
        overall = {"status": "pass", "reason": short(why)}
    elif rc == 124:
        overall = {"status": "FAIL", "reason": "timed out"}
    else:
        why = (couldnt and couldnt.group(1)) or (result and result.group(1)) or \
            (lines[-1] if lines else "exit %d" % rc)
        warn = re.search(r"^ngx-sockmap: selftest: (.*)$", txt, re.M)
        if warn and couldnt:
            why = "%s (%s)" % (warn.group(1), couldnt.group(1))
        overall = {"status": "FAIL", "reason": short(why)}
    overall["secs"] = secs
    return overall, checks, "selftest did not run: " + overall["reason"] if not checks else ""


def agent_cell(d, vm_note):
    """Did `run` start, attach and stop (guest.sh agent_up)?  None where
    the column predates the step."""
    rc = read(os.path.join(d, "agent.rc"))
    if rc is None:
        return None if read(os.path.join(d, "selftest.rc")) is not None else \
            {"status": "FAIL", "reason": "did not run" + vm_note}
    secs = read(os.path.join(d, "agent.secs"))
    if int(rc) == 0:
        return {"status": "pass", "reason": "", "secs": float(secs) if secs else None}
    lines = [l for l in read(os.path.join(d, "agent.txt"), "").splitlines() if l.strip()]
    # the agent's own reason, else what agent_up saw
    why = [l for l in lines if l.startswith("ngx-sockmap:") and "selftest" not in l]
    return {"status": "FAIL", "reason": short((why or lines or ["exit " + rc])[-1]) + vm_note}


def test_cell(d, t, vm_note):
    rc = read(os.path.join(d, "tests", t + ".rc"))
    secs = read(os.path.join(d, "tests", t + ".secs"))
    secs = float(secs) if secs else None
    if rc is None:
        return {"status": "FAIL", "reason": "not run" + vm_note}
    rc = int(rc)
    log = read(os.path.join(d, "logs", "integration", t + ".log"), "")
    out = read(os.path.join(d, "tests", t + ".out"), "")
    lines = [l for l in log.splitlines() if l.strip()]
    if rc == 0:
        return {"status": "pass", "reason": "", "secs": secs}
    if rc == 77:
        return {"status": "skip", "reason": short(lines[-1] if lines else "skipped"), "secs": secs}
    fails = [i for i, l in enumerate(lines) if l.startswith("FAIL:")]
    runner = re.search(r"FAIL \((.*)\)", out)
    if fails:
        why = lines[fails[-1]][len("FAIL:"):].strip()
        # the agent's last word, where it died: "agent exited before ready"
        prev = lines[fails[-1] - 1] if fails[-1] > 0 else ""
        if prev.startswith("ngx-sockmap: "):
            why += " (%s)" % prev[len("ngx-sockmap: "):]
    elif runner:
        why = runner.group(1)
    elif rc == 124:
        why = "timeout"
    else:
        why = "exit %d" % rc
    if "left things behind" in out and not fails:
        why = "left things behind"
    return {"status": "FAIL", "reason": short(why), "secs": secs}


def load_known(path):
    """KERNEL ROW [/REGEX/] WHY: KERNEL and ROW shell globs (KERNEL over
    the column's id or role), REGEX searched in the cell's reason."""
    known = []
    for line in (read(path, "") or "").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split(None, 2)
        if len(parts) < 3:
            continue
        rx = None
        m = re.match(r"^/((?:[^/\\]|\\.)*)/\s*(.*)$", parts[2])
        if m:
            rx, parts[2] = m.group(1), m.group(2)
        known.append((parts[0], parts[1], rx, parts[2]))
    return known


def main():
    args = sys.argv[1:]
    known = []
    if len(args) >= 2 and args[0] == "--known":
        known = load_known(args[1])
        args = args[2:]
    outdir, md_path, json_path = args
    cols = []
    for name in os.listdir(outdir):
        d = os.path.join(outdir, name)
        meta = load_json(os.path.join(d, "meta.json"))
        if meta:
            cols.append((d, meta))
    cols.sort(key=lambda c: (ROLE_ORDER.index(c[1]["role"]) if c[1]["role"] in ROLE_ORDER
                             else len(ROLE_ORDER), c[1]["id"]))

    kernels, cells, rows = [], {}, ["selftest", "agent"]
    check_rows, test_rows = [], []
    for d, meta in cols:
        kid = meta["id"]
        boot = load_json(os.path.join(d, "boot.json"))
        facts = load_json(os.path.join(d, "facts.json"))
        vm_note = ""
        if boot.get("timed_out"):
            vm_note = " (VM timed out)"
        elif meta["role"] != "host" and boot.get("job_exit") is None:
            err = read(os.path.join(d, "init-error"), "").strip()
            vm_note = " (VM did not run the job%s)" % (": " + err if err else "")
        if meta["role"] != "host":
            # a guest kernel that crashed says so on the console
            con = read(os.path.join(d, "console.log"), "")
            crash = re.findall(r"(Kernel panic - not syncing: .*|BUG: .*|Oops: .*)", con)
            if crash:
                vm_note += " (guest kernel: %s)" % crash[0].strip()
        overall, checks, no_checks = selftest_cells(d, vm_note)
        cells.setdefault("selftest", {})[kid] = overall
        for c, v in checks.items():
            if "selftest/" + c not in check_rows:
                check_rows.append("selftest/" + c)
            cells.setdefault("selftest/" + c, {})[kid] = v
        meta["_no_checks"] = no_checks
        ac = agent_cell(d, vm_note)
        if ac is not None:
            cells.setdefault("agent", {})[kid] = ac
        tests = sorted(os.path.basename(p)[:-3] for p in
                       os.listdir(os.path.join(d, "tests")) if p.endswith(".rc")) \
            if os.path.isdir(os.path.join(d, "tests")) else []
        for t in tests + meta.get("missing_tests", []):
            if t not in test_rows:
                test_rows.append(t)
            cells.setdefault(t, {})[kid] = test_cell(d, t, vm_note) if t in tests else \
                {"status": "skip", "reason": "not in this tree"}
        # "... #1 SMP PREEMPT_DYNAMIC Debian 6.12.43-1~bpo12+1 (2025-09-06)":
        # the last "Debian" (the first is gcc's)
        ver = re.findall(r"Debian (\S+) \(", facts.get("version") or "")
        kernels.append({
            "id": kid, "role": meta["role"], "kver": meta["kver"], "package": meta["package"],
            "debian_version": ver[-1] if ver else None,
            "version": facts.get("version"),
            "boot_s": boot.get("boot_s"), "wall_s": boot.get("wall_s"), "cpu": boot.get("cpu"),
            "selftest_s": overall.get("secs"),
            "facts_s": float(read(os.path.join(d, "facts.secs")) or 0) or None,
            "facts": facts,
        })
    rows += check_rows + test_rows
    ids = [k["id"] for k in kernels]
    for r in rows:
        for k, (d, meta) in zip(ids, cols):
            if k not in cells.setdefault(r, {}):
                why = meta["_no_checks"] if r.startswith("selftest/") else "not run"
                cells[r][k] = {"status": "skip", "reason": why or "not reported"}
    # known failures
    summary = {"passed": 0, "failed": 0, "skipped": 0, "known": 0}
    for r in rows:
        for k, meta in zip(ids, [m for _, m in cols]):
            c = cells[r][k]
            if c["status"] == "FAIL":
                for kg, rg, rx, why in known:
                    if (fnmatch.fnmatch(k, kg) or fnmatch.fnmatch(meta["role"], kg)) and \
                            fnmatch.fnmatch(r, rg) and (rx is None or re.search(rx, c["reason"])):
                        c["known"] = why
                        break
            if c["status"] == "pass":
                summary["passed"] += 1
            elif c["status"] == "skip":
                summary["skipped"] += 1
            elif "known" in c:
                summary["known"] += 1
            else:
                summary["failed"] += 1

    try:
        build = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True,
                               text=True).stdout.strip()
    except OSError:
        build = ""
    doc = {"generated": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "build": build, "kernels": kernels, "rows": rows, "cells": cells, "summary": summary}
    with open(json_path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")

    # Markdown: facts, then the results with reasons as numbered notes.
    yn = lambda v: "?" if v is None else ("yes" if v else "**no**")
    L = ["# ngx-sockmap kernel matrix", "",
         "`tests/vm/run` (build %s, %s). VMs: QEMU TCG, Debian cloud-amd64 kernels; "
         "host: the running kernel." % (build, doc["generated"]), ""]
    L.append("| | " + " | ".join(ids) + " |")
    L.append("|---|" + "---|" * len(ids))

    def frow(label, f):
        L.append("| %s | %s |" % (label, " | ".join(f(k) for k in kernels)))
    fx = lambda k, key: k["facts"].get(key)
    frow("source", lambda k: ROLE_NAME.get(k["role"], k["role"]))
    frow("uname -r", lambda k: k["kver"])
    frow("Debian version", lambda k: k["debian_version"] or "")
    frow("QEMU CPU model", lambda k: k.get("cpu") or "")
    frow("boot to userspace (s)", lambda k: "%.1f" % k["boot_s"] if k["boot_s"] else "")
    frow("selftest (s)", lambda k: "%.1f" % k["selftest_s"] if k["selftest_s"] else "")
    frow("BPF arena map", lambda k: yn(fx(k, "arena_map")) +
         (" (%s)" % fx(k, "arena_map_error") if fx(k, "arena_map_error") else ""))
    frow("`bpf_sock_destroy` kfunc (BTF)", lambda k: yn(fx(k, "bpf_sock_destroy_btf")))
    frow("`sk_psock.msg_tot_len`", lambda k: yn(fx(k, "sk_psock_msg_tot_len")))
    frow("`tcp_bpf_ioctl` (kallsyms)", lambda k: yn(fx(k, "tcp_bpf_ioctl_kallsyms")))
    for c in ("CONFIG_INET_DIAG_DESTROY", "CONFIG_TLS", "CONFIG_BPF_STREAM_PARSER"):
        # forky's linux-binary ships no config file: unknown, not "None"
        frow(c, lambda k, c=c: str((k["facts"].get("config") or {}).get(c) or "?"))
    frow("`modprobe tls`", lambda k: yn(fx(k, "tls_module_loads")))
    L += ["", "| check / test | " + " | ".join(ids) + " |", "|---|" + "---|" * len(ids)]
    notes = []

    def cell(r, c):
        s = c["status"] + ("*" if "known" in c else "")
        if c.get("secs") is not None and c["status"] == "pass":
            s += " %.0fs" % c["secs"]
        if c["reason"] and c["status"] != "pass" or "known" in c:
            n = short(c["reason"], 150) + (" — known: " + c["known"] if "known" in c else "")
            if n not in notes:
                notes.append(n)
            s += " [%d]" % (notes.index(n) + 1)
        elif c["reason"] and r == "selftest":
            s += " (%s)" % c["reason"]
        return s
    for r in rows:
        L.append("| %s | %s |" % (r, " | ".join(cell(r, cells[r][k]) for k in ids)))
    L.append("")
    L += ["%d. %s" % (i + 1, n) for i, n in enumerate(notes)]
    L += ["", "`*`: a known failure (tests/vm/known). %(passed)d passed, %(failed)d failed, "
          "%(skipped)d skipped, %(known)d known failures." % summary]
    md = "\n".join(L) + "\n"
    with open(md_path, "w") as f:
        f.write(md)
    with open(os.path.join(os.path.dirname(md_path) or ".", "summary.md"), "w") as f:
        f.write(summary_md(kernels, cells, test_rows, build, doc["generated"]))
    sys.stdout.write(md)
    print()
    if summary["known"]:
        print("known failures (tests/vm/known): %d" % summary["known"])
    print("vmtest: %(passed)d passed, %(failed)d failed, %(skipped)d skipped" % summary)
    return 1 if summary["failed"] else 0


def summary_md(kernels, cells, test_rows, build, generated):
    """One row per kernel, for the README (make kernels-doc): does the
    agent load, does it accelerate (and if not, the critical checks that
    failed), the event transport, the TCP fallback, and the tests."""
    L = ["| kernel | loads | accelerates | events | slow reader | tests |",
         "|---|---|---|---|---|---|"]
    for k in kernels:
        kid = k["id"]
        st = cells["selftest"][kid]
        checks = {r[len("selftest/"):]: c[kid] for r, c in cells.items()
                  if r.startswith("selftest/") and kid in c}
        loaded = checks.get("redirect", {}).get("status") in ("pass", "FAIL")
        if cells.get("agent", {}).get(kid, {}).get("status") in ("pass", "FAIL"):
            # the whole agent, not the self-test's data plane alone
            loaded = loaded and cells["agent"][kid]["status"] == "pass"
        crit = [n for n, c in checks.items() if c["status"] == "FAIL" and "[critical]" in c["reason"]]
        if not loaded:
            acc = "no"
        elif st["status"] == "pass":
            acc = "**yes**"
        else:
            acc = "no: " + ", ".join(crit) if crit else "no"
        arena = (k["facts"] or {}).get("arena_map")
        events = "" if not loaded else ("arena ring" if arena else "ring buffer")
        bound = checks.get("slow_reader_bound", {}).get("status")
        slow = "" if not loaded or st["status"] != "pass" else \
            ("TCP fallback" if bound == "pass" else "--max-unread reset")
        t = [cells[r][kid]["status"] for r in test_rows if kid in cells[r]]
        tests = "%d pass, %d skip, %d fail" % (t.count("pass"), t.count("skip"), t.count("FAIL"))
        name = "%s (%s)" % (k["debian_version"] or k["kver"], ROLE_NAME.get(k["role"], k["role"]))
        L.append("| %s | %s | %s | %s | %s | %s |" % (name, "yes" if loaded else "**no**", acc,
                                                   events, slow, tests))
    L += ["", "From `make vmtest` (build %s, %s); details: [docs/kernels.md](docs/kernels.md)."
          % (build, generated[:10])]
    return "\n".join(L) + "\n"


if __name__ == "__main__":
    sys.exit(main())

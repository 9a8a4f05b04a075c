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

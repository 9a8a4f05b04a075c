#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""alerts.yml as a prometheus-operator PrometheusRule, so the rules have one
definition: deploy/prometheus/alerts.yml.

    deploy/prometheus/to-prometheusrule.py > \\
        deploy/kubernetes/overlays/prometheus-operator/prometheusrule.yaml

tests/integration/deploy_rules.sh fails when the committed file differs.
"""
import os
import sys

import yaml

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "alerts.yml")) as f:
    rules = yaml.safe_load(f)
rule = {
    "apiVersion": "monitoring.coreos.com/v1",
    "kind": "PrometheusRule",
    "metadata": {"name": "ngx-sockmap"},
    "spec": {"groups": rules["groups"]},
}
sys.stdout.write("# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)\n"
                 "# Generated from deploy/prometheus/alerts.yml by "
                 "deploy/prometheus/to-prometheusrule.py: edit those.\n")
yaml.safe_dump(rule, sys.stdout, sort_keys=False, width=100)

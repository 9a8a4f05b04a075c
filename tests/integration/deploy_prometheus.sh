#!/usr/bin/env bash
# timeout: 180
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves, against a real Prometheus (Debian's, on a loopback port, its own
# temporary storage) scraping a real agent that accelerates wrk -> proxy
# nginx -> upstream nginx and watches a veth with XDP: the alert rules of
# deploy/prometheus/alerts.yml load and evaluate healthy, and every
# expression of the Grafana dashboard and of the rules parses; each
# dashboard panel returns data, and every metric any of them uses is one
# the agent exports.  A metric the agent does not export yet is printed
# as "missing metric NAME (used by ...)" and fails the test
# (deploy/metrics-used.txt lists them all).
#
# The BPF run-time metrics exist only with kernel.bpf_stats_enabled=1: the
# test turns it on while it runs and restores it (a global switch: every
# BPF program on the host is timed meanwhile, at a few ns per run).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/proxy.sh"
for t in prometheus promtool wrk; do
	command -v $t >/dev/null || skip "$t missing (Debian packages prometheus, wrk; make deps)"
done
python3 -c 'import yaml' 2>/dev/null || skip "python3 yaml module missing (Debian package python3-yaml)"

MPORT=19535 PPORT=19536
proxy_setup 18520 18521
ns=$(ns_make prom)
host=vsm$$h
veth_quiet "$host" vsm$$p "$ns" 10.213.10.1 10.213.10.2

stats0=$(cat /proc/sys/kernel/bpf_stats_enabled)
if [ "$stats0" != 1 ]; then
	sysctl -qw kernel.bpf_stats_enabled=1
	on_exit "sysctl -qw kernel.bpf_stats_enabled=$stats0"
fi
agent_start -c "$P" -c "$U" -c "$C" --xdp "$host" --metrics 127.0.0.1:$MPORT
INSTANCE=127.0.0.1:$MPORT

cat >"$TMP/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $TOP/deploy/prometheus/alerts.yml
scrape_configs:
  - job_name: ngx-sockmap
    static_configs:
      - targets: ['$INSTANCE']
EOF
promtool check config "$TMP/prometheus.yml" >"$TMP/check.out" 2>&1 || fail "promtool check config: $(cat "$TMP/check.out")"
prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/prom" \
	--web.listen-address=127.0.0.1:$PPORT --log.level=warn >"$TMP/prometheus.log" 2>&1 &
PROM=$!
on_exit "kill $PROM; wait $PROM"
for _ in $(seq 1 100); do
	curl -sf "127.0.0.1:$PPORT/-/ready" >/dev/null && break
	kill -0 $PROM 2>/dev/null || fail "prometheus exited: $(tail -n 3 "$TMP/prometheus.log")"
	sleep 0.2
done
curl -sf "127.0.0.1:$PPORT/-/ready" >/dev/null || fail "prometheus not ready after 20 s"
ok "prometheus $(prometheus --version 2>&1 | awk 'NR == 1 { print $3 }') up on 127.0.0.1:$PPORT"

# Traffic through a tracked pair, and frames for XDP's top sources (a 10 s
# window: sent again while Prometheus scrapes).
cg_exec "$C" wrk -t1 -c4 -d3s "http://127.0.0.1:$PORT_PX/64k.bin" >"$TMP/wrk.out" 2>&1 ||
	fail "wrk: $(cat "$TMP/wrk.out")"
udp() {
	ip netns exec "$ns" python3 -c '
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(40):
    s.sendto(b"x" * 100, ("10.213.10.1", 9))
    time.sleep(0.1)'
}
udp
q() { curl -s "127.0.0.1:$PPORT/api/v1/query" --data-urlencode "query=$1" |
	python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)'; }
# 2+ scrapes after the traffic (rate() needs two samples)
for _ in $(seq 1 50); do
	n=$(q "count_over_time(ngx_sockmap_build_info{job=\"ngx-sockmap\"}[1m])")
	[ "${n:-0}" -ge 6 ] && break
	sleep 0.2
done
assert_ge "${n:-0}" 6 "scrapes of the agent stored"
udp &
on_exit "wait $!" # before the namespace goes (4 s at most)
sleep 2
assert_ge "$(q "ngx_sockmap_redirected_bytes_total{job=\"ngx-sockmap\"}")" 65536 "redirected bytes reached Prometheus"

"$TOP/deploy/metrics-used.py" --check || fail "deploy/metrics-used.txt is stale"
"$TOP/deploy/metrics-used.py" --exprs >"$TMP/exprs.jsonl"
python3 "$TOP/tests/lib/prom_eval.py" "http://127.0.0.1:$PPORT" ngx-sockmap "$INSTANCE" \
	<"$TMP/exprs.jsonl" | tee "$TMP/eval.out"
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] || fail "$(tail -n 1 "$TMP/eval.out"); $(grep -c '^missing metric' "$TMP/eval.out") missing metrics: $(sed -n 's/^missing metric \([a-z_]*\).*/\1/p' "$TMP/eval.out" | tr '\n' ' ')"
ok "every dashboard and alert expression parses, every metric exists, every panel has data"

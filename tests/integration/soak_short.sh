# timeout: 300
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: 60 s of `make soak` (bench/soak): HTTP keep-alive and close with
# bodies from 0 B to 8 MiB and random Ranges, Redis and PostgreSQL through
# nginx stream {}, WebSocket and gRPC, all through nginx with the agent
# attached, every byte checked, while faults follow one another (nginx
# reload and restart, upstreams restarted, the agent SIGKILLed, SIGSTOPped,
# SIGTERMed and restarted with and without --pin, a connection storm,
# memory pressure on nginx, a namespace made and removed, a splice reader,
# a full map with --max-sockets); nothing is wrong, truncated or hung,
# every kind of traffic got through, no HTTP retry happened away from a
# fault, and after each storm the sockhash holds no more entries than
# there are live connections.  The long run and its figures: README,
# "Reliability".  It draws its chart (matplotlib, from make deps).
. "$(dirname "$0")/../lib/common.sh"

out=$TMP/soak
"$TOP/bench/soak" --duration 60 --out "$out" >"$TMP/soak.log" 2>&1
rc=$?
sed 's/^/#   /' "$TMP/soak.log"
[ -s "$out/summary.json" ] || fail "bench/soak (exit $rc) wrote no summary"
s() { jget "$out/summary.json" "$1"; }
assert_eq "$(s lost)" '{"hung": 0, "truncated": 0, "wrong": 0}' "nothing wrong, truncated or hung"
assert_eq "$(s fault_errors)" '[]' "every fault did what it should (SIGTERM exit 0, no_room with a full map, hazards ended)"
assert_eq "$(s retried_unexplained)" 0 "no HTTP retry more than 5 s away from a fault"
assert_eq "$(s storms_sockets_back_to_live)" true "after each storm: sockhash entries <= live connections"
python3 - "$out/summary.json" <<'PY' || fail "some traffic did not get through"
import json, sys
t = json.load(open(sys.argv[1]))["traffic"]
for k in ("http_ka_requests", "http_close_requests", "storm_requests", "redis_sessions",
          "postgres_sessions", "websocket_sessions", "grpc_sessions", "netns_sessions"):
    if t.get(k, 0) < 1:
        sys.exit("%s: %s" % (k, t.get(k, 0)))
PY
ok "every kind of traffic completed byte-exact at least once"
n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["faults"]))' "$out/summary.json")
assert_ge "$n" 8 "kinds of fault injected"
assert_eq "$rc" 0 "bench/soak exit status (its verdict: $(s verdict))"
# the chart: make deps installs matplotlib for it (python3-matplotlib)
[ -s "$out/soak.png" ] || fail "no chart (soak.png): $(grep -i chart "$TMP/soak.log")"
ok "the chart: soak.png, $(stat -c %s "$out/soak.png") bytes"

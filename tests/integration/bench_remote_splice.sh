#!/usr/bin/env bash
# timeout: 240
# Proves: bench/remote-splice measures what it says (issue 33, remote
# clients): its four modes run interleaved on fresh servers, each block's
# 1 MiB value comes back byte-exact through the path, and in the skb mode
# every session is spliced in the kernel from its first byte: routed by
# sock_ops from the relay's pool, nothing relayed by the relay, the
# client's bytes (the 1 MiB value among them) redirected into Redis's
# socket by sk_skb and Redis's out through the client's connection by
# sk_msg.  The structure only: a 1 s run's figures mean nothing.
. "$(dirname "$0")/../lib/common.sh"
. "$TOP/tests/lib/realsrv.sh"

real_need redis-server redis-server
real_need redis-benchmark redis-tools
load_stream >/dev/null

out=$TMP/out
"$TOP/bench/remote-splice" --rounds 1 --duration 1 --out "$out" >"$TMP/bench.log" 2>&1
rc=$?
[ $rc = 0 ] || fail "bench/remote-splice exited $rc: $(tail -n 20 "$TMP/bench.log")"
ok "bench/remote-splice ran"

order=$(awk -F'\t' '{ print $2 "/" $6 "/" $7 }' "$out/runs.tsv" | tr '\n' ' ')
assert_eq "$order" "nginx/0/ok nginx_accel/0/ok relay/0/ok skb/0/ok " \
	"four modes in order, each client run clean and its 1 MiB value byte-exact"

python3 - "$out" <<'PY' || fail "see above"
import json, os, sys
out = sys.argv[1]
skb = json.load(open(os.path.join(out, "logs", "r1-skb.counts.json")))
relay = json.load(open(os.path.join(out, "logs", "r1-relay.counts.json")))
bad = []
if skb["sessions"] < 50 or skb["routed"] != skb["sessions"]:
    bad.append("skb: %d of %d sessions routed" % (skb["routed"], skb["sessions"]))
if skb["relayed_bytes"] or skb["skb_passed"] or skb["msg_passed"]:
    bad.append("skb: the relay still carried bytes (%d relayed, %d skbs and %d sends passed)"
               % (skb["relayed_bytes"], skb["skb_passed"], skb["msg_passed"]))
if skb["skb_bytes"] < 1 << 20 or skb["msg_bytes"] < 1 << 20:
    bad.append("skb: %d bytes redirected by sk_skb, %d by sk_msg (the 1 MiB value went both ways)"
               % (skb["skb_bytes"], skb["msg_bytes"]))
if relay["routed"] or relay["relayed_bytes"] < 2 << 20:
    bad.append("relay: %d routed, %d relayed bytes (a plain relay)" % (relay["routed"], relay["relayed_bytes"]))
r = json.load(open(os.path.join(out, "results.json")))
for k in ("nginx_accel/nginx", "skb/nginx_accel", "skb/relay"):
    if k not in r["ratios"]:
        bad.append("results.json: no %s ratio" % k)
for b in bad:
    print("FAIL: " + b)
sys.exit(1 if bad else 0)
PY
ok "skb: every session spliced from its first byte, nothing relayed; relay: everything relayed"
grep -q '| skb / nginx_accel |' "$out/results.md" || fail "results.md has no skb / nginx_accel row"
ok "results.md sets the splice against nginx's relay"

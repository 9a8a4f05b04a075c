#!/usr/bin/env bash
# timeout: 300
# Proves: bench/run's app profiles have the modes direct and direct_accel
# (issue 33 item 6, issue 34 item 4): the client straight to the server, no
# nginx, without and with the agent, interleaved with baseline and accel;
# direct_accel's client-to-server connection is paired and redirected, with
# half the sends per request that the proxied path takes (no nginx hop);
# the splice mode (nginx with sockmap_splice on; pgbench and redis only)
# runs beside them, its sessions switched past nginx (splice_switched);
# php has no direct mode (wrk speaks HTTP, php-fpm FastCGI) and the report
# says which modes each profile had; results.md sets the app profiles
# beside their physical limit; each profile runs in blocks of its own (a
# fresh agent and servers: nothing learned under one profile's traffic
# carries into the next); redis_p16, named, runs redis-benchmark's four
# pipelined tests and counts their commands, not the list fill LRANGE's
# test adds.  The structure only: figures of a 1 s run
# on a shared machine mean nothing.
. "$(dirname "$0")/../lib/common.sh"
. "$TOP/tests/lib/realsrv.sh"

command -v wrk >/dev/null || skip "wrk not installed"
real_need "$PHP_FPM" php8.2-fpm
real_need redis-server redis-server
real_need redis-benchmark redis-tools
load_stream >/dev/null

out=$TMP/out
[ -f "$TOP/build/ngx_stream_sockmap_module.so" ] || fail "build/ngx_stream_sockmap_module.so not built (make module)"
log "bench/run --profiles php,redis, five modes, 1 round of 1 s"
"$TOP/bench/run" --profiles php,redis --modes baseline,accel,direct,direct_accel,splice \
	--rounds 1 --duration 1 --out "$out" >"$TMP/bench.log" 2>&1
rc=$?
[ $rc = 0 ] || fail "bench/run exited $rc: $(tail -n 20 "$TMP/bench.log")"
ok "bench/run with direct and direct_accel ran"

# the runs, in the order they ran: no direct run for php
order=$(awk -F'\t' '{ print $2 "/" $3 }' "$out/runs.tsv" | tr '\n' ' ')
assert_eq "$order" "baseline/php accel/php baseline/redis accel/redis direct/redis direct_accel/redis splice/redis " \
	"modes interleaved within each profile, php without direct and splice"
sw=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["splice_switched"])' \
	"$out/raw/r1-splice-redis.counters.json") || fail "no splice_switched in redis's splice counters"
assert_ge "$sw" 1 "splice: redis's sessions switched past nginx ($sw directions)"
# a block per profile: each profile's accel run had an agent (and servers)
# of its own, not the one that saw the profile before it
pid_of() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["agent"]["pid"])' "$1"; }
p1=$(pid_of "$out/raw/r1-accel-php.counters.json") || fail "no agent pid in php's counters"
p2=$(pid_of "$out/raw/r1-accel-redis.counters.json") || fail "no agent pid in redis's counters"
[ "$p1" != "$p2" ] || fail "php and redis were measured by one agent ($p1): not a block each"
ok "a fresh agent for each profile ($p1, $p2)"

python3 - "$out/results.json" <<'PY' || fail "results.json: see above"
import json, sys
r = json.load(open(sys.argv[1]))
bad = []
pm = r["meta"]["profile_modes"]
if pm.get("php") != ["baseline", "accel"]:
    bad.append("php's modes %r, want baseline, accel" % pm.get("php"))
if pm.get("redis") != ["baseline", "accel", "direct", "direct_accel", "splice"]:
    bad.append("redis' modes %r" % pm.get("redis"))
runs = {(x["mode"], x["profile"]): x for x in r["runs"]}
for k, x in sorted(runs.items()):
    if x["flags"]:
        bad.append("%s/%s flagged: %s" % (k + ("; ".join(x["flags"]),)))
    if not x["requests"]:
        bad.append("%s/%s: no request" % k)
d, da, a = runs.get(("direct", "redis")), runs.get(("direct_accel", "redis")), runs.get(("accel", "redis"))
if d and d["agent_counters"] is not None:
    bad.append("direct ran an agent")
s = r["summary"]["redis"]
# redirected sends per Redis command: 4 through nginx (client->nginx,
# nginx->redis and back), 2 straight (client->redis and back)
rpr = {m: s[m].get("redirected_per_request") for m in ("accel", "direct_accel", "splice")}
print("# redirected sends per command: accel %s, direct_accel %s, splice %s"
      % (rpr["accel"], rpr["direct_accel"], rpr["splice"]))
if not (rpr["accel"] or 0) >= 3.5:
    bad.append("accel: %r redirected sends per command, want >= 3.5" % rpr["accel"])
if not 1.5 <= (rpr["direct_accel"] or 0) <= 2.5:
    bad.append("direct_accel: %r redirected sends per command, want ~2 (no proxy)" % rpr["direct_accel"])
# spliced: client->redis and back past nginx, as direct_accel (a
# direction's first commands, before it switched, take both hops)
if not 1.5 <= (rpr["splice"] or 0) <= 3:
    bad.append("splice: %r redirected sends per command, want ~2 (past nginx)" % rpr["splice"])
if not (da or {}).get("agent_counters", {}).get("pairs"):
    bad.append("direct_accel: no new pair")
for m in ("direct", "direct_accel"):
    if (s["ratios"].get(m) or {}).get("rps_paired") is None:
        bad.append("no paired %s/baseline ratio for redis" % m)
if (s["ratios_vs_accel"].get("direct_accel") or {}).get("rps_paired") is None:
    bad.append("no paired direct_accel/accel ratio for redis")
for x in bad:
    print("results.json:", x)
sys.exit(1 if bad else 0)
PY
ok "direct: no agent; direct_accel: paired, ~2 redirected sends per command against accel's 4"

grep -q '^## Beside the physical limit' "$out/results.md" || fail "results.md: no physical-limit section"
grep -qE '^\| redis \| [0-9.]+x .*\| [0-9.]+x .*\| [0-9.]+x .*\| [0-9.]+x .*\| [0-9]+% \| [0-9]+% \|$' "$out/results.md" ||
	fail "results.md: no redis row in the physical-limit table: $(grep -A6 '^## Beside' "$out/results.md")"
grep -q '^| php |' <(sed -n '/^## Beside/,/^req\/s against/p' "$out/results.md") &&
	fail "results.md: php in the physical-limit table"
ok "results.md: redis beside its physical limit, php not"

# redis_p16 (by name, not in "apps"): the splice's target profile,
# pipelined, four tests whose commands are summed over their own times
log "bench/run --profiles redis_p16 --modes baseline,splice, 1 round of 1 s"
"$TOP/bench/run" --profiles redis_p16 --modes baseline,splice --rounds 1 --duration 1 --out "$out.p16" \
	>"$TMP/bench-p16.log" 2>&1 || fail "bench/run redis_p16: $(tail -n 20 "$TMP/bench-p16.log")"
tests=$(cut -d, -f1 "$out.p16/raw/r1-splice-redis_p16.txt.native" | tr -d '"' | grep -v '^test$\|needed to' |
	cut -d' ' -f1 | tr '\n' ' ')
assert_eq "$tests" "SET GET LPUSH LRANGE_100 " "redis_p16: redis-benchmark ran its four pipelined tests"
python3 - "$out.p16/results.json" <<'PY' || fail "redis_p16: see above"
import json, sys
r = json.load(open(sys.argv[1]))
runs = {x["mode"]: x for x in r["runs"] if x["profile"] == "redis_p16"}
bad = ["%s: %s" % (m, "; ".join(x["flags"])) for m, x in runs.items() if x["flags"]]
if sorted(runs) != ["baseline", "splice"]:
    bad.append("modes %r" % sorted(runs))
if not all(x["requests"] == 4 * 100000 for x in runs.values()):
    bad.append("requests %r, want 4 tests x 100000" % [x["requests"] for x in runs.values()])
for b in bad:
    print("results.json: redis_p16 " + b)
sys.exit(1 if bad else 0)
PY
ok "redis_p16: both modes ran clean, every command of the four tests counted"

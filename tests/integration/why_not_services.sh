# timeout: 120
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: `status --json`, `status` and `top` name each service endpoint
# nginx's connections go to, and why the ones on TCP are not redirected,
# per service and per connection (issue 32, item 3).  The client cgroup
# CC and the server cgroup CS are attached, CX is not.  Three services on
# 127.0.0.1, each with one connection held open from CC:
#   P  a server in CS: redirected;
#   H  a server in CS whose endpoint learned a hazard (a splicing reader's
#      connection was reset there first): on TCP, reason hazard (splice);
#   X  a server in CX, outside the attached cgroups: on TCP, reason cgroup.
# And /metrics has them, one series per service and reason.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
SK=$TOOLS/splicekit
[ -x "$SK" ] || fail "$SK not built (make tools)"
HOLD=$TOP/tests/lib/hold_conn.py
cg_new CS srv
cg_new CC cli
cg_new CX other
PP=18561 PH=18562 PX=18563 MP=19461
agent_start -c "$CS" -c "$CC" --metrics 127.0.0.1:$MP

# H first: a splicing reader's connection is reset, its endpoint learned
r0=$(stat_get resets.splice)
in_cg_ns "$CS" - "$SK" server --listen 127.0.0.1:$PH --ready-file "$TMP/sk.port" \
	--out "$TMP/sk.srv" --conns 1 --timeout 3 --seed 7 >"$TMP/sk.srvlog" 2>&1 &
spid=$!
on_exit "kill $spid"
wait_file "$TMP/sk.port" "splice server listening"
in_cg_ns "$CC" - "$SK" client --connect 127.0.0.1:$PH --out "$TMP/sk.cli" --conns 1 \
	--parallel 1 --bytes 64K --seed 7 --timeout 5 >"$TMP/sk.clilog" 2>&1
wait $spid
r1=$(stat_get resets.splice)
assert_ge $((r1 - r0)) 1 "the splicing reader's connection was reset (hazard learned)"

# serve NAME CGROUP PORT, then hold NAME PORT: one connection from CC
serve() {
	in_cg_ns "$2" - python3 "$HOLD" serve --listen 127.0.0.1:$3 --ready "$TMP/$1.srv" \
		--timeout 60 >"$TMP/$1.srvlog" 2>&1 &
	on_exit "kill $!"
	wait_file "$TMP/$1.srv" "$1: server listening"
	in_cg_ns "$CC" - python3 "$HOLD" hold --connect 127.0.0.1:$3 --ready "$TMP/$1.cli" \
		--timeout 60 >"$TMP/$1.clilog" 2>&1 &
	on_exit "kill $!"
	wait_file "$TMP/$1.cli" "$1: client connected"
}
serve P "$CS" $PP
serve H "$CS" $PH
serve X "$CX" $PX

"$AGENT" status --json >"$TMP/status.json"
rc=$?
[ $rc -eq 0 ] || log "status exited $rc"
python3 - "$TMP/status.json" $PP $PH $PX <<'PY' || fail "status --json: why_not wrong (above)"
import json, sys
st = json.load(open(sys.argv[1]))
pp, ph, px = sys.argv[2:5]
w = st.get("why_not")
if w is None:
    sys.exit("no why_not in status --json")
svc = {s["service"]: s for s in w["services"]}
print("# services:", json.dumps(w["services"]))
bad = []
def want(cond, what):
    print(("ok - " if cond else "FAIL: ") + what)
    if not cond:
        bad.append(what)
P, H, X = (svc.get("127.0.0.1:" + p) for p in (pp, ph, px))
want(P is not None and P["connections"] == 1 and P["redirected"] == 1,
     "service P: 1 connection, redirected")
want(H is not None and H["connections"] == 1 and H["redirected"] == 0 and
     H["tcp"].get("hazard") == 1 and "splice" in H["hazards"],
     "service H: 1 connection on TCP, reason hazard (splice)")
want(X is not None and X["connections"] == 1 and X["redirected"] == 0 and
     X["tcp"].get("cgroup") == 1,
     "service X: 1 connection on TCP, reason cgroup (its server's not attached)")
conns = {}
for c in w["connections"]:
    conns.setdefault(c.get("service"), []).append(c)
def ends(p):
    return conns.get("127.0.0.1:" + p, [])
want(len(ends(pp)) == 2 and all(c["verdict"] == "redirected" for c in ends(pp)),
     "P: both ends (client and server) listed, redirected")
want(len(ends(ph)) == 2 and all(c["verdict"] == "tcp" and c["reason"] == "hazard" and
                                "splice" in c["hazards"] for c in ends(ph)),
     "H: both ends listed, tcp, reason hazard (splice)")
want(len(ends(px)) == 1 and ends(px)[0]["end"] == "client" and
     ends(px)[0]["verdict"] == "tcp" and ends(px)[0]["reason"] == "cgroup",
     "X: nginx's (the client's) end listed, tcp, reason cgroup")
want(all(all(ch in "0123456789abcdef" for ch in c["cookie"]) for c in w["connections"]),
     "cookies in hex, as ss -e prints them")
sys.exit(1 if bad else 0)
PY

# the text status and top name the endpoints with their reasons
"$AGENT" status >"$TMP/status.txt"
"$AGENT" top --once -d 0.2 >"$TMP/top.txt" || fail "top --once failed"
for f in status.txt top.txt; do
	grep -E "^ +127\.0\.0\.1:$PP +1 +1 " "$TMP/$f" >/dev/null ||
		{ cat "$TMP/$f"; fail "$f: P not shown as 1 connection, 1 redirected"; }
	grep -E "^ +127\.0\.0\.1:$PH +1 +0 +hazard 1 \(splice\)" "$TMP/$f" >/dev/null ||
		{ cat "$TMP/$f"; fail "$f: H not shown on TCP with hazard (splice)"; }
	grep -E "^ +127\.0\.0\.1:$PX +1 +0 +cgroup 1" "$TMP/$f" >/dev/null ||
		{ cat "$TMP/$f"; fail "$f: X not shown on TCP with reason cgroup"; }
	ok "$f names the three services with their verdicts"
done

# status --connections: each connection, its cookie in hex, its verdict
"$AGENT" status --connections >"$TMP/conns.txt"
for want in "127\.0\.0\.1:$PP +[0-9a-f]+ +redirected$" \
	"127\.0\.0\.1:$PH +[0-9a-f]+ +tcp: hazard splice$" \
	"127\.0\.0\.1:$PX +[0-9a-f]+ +tcp: cgroup$"; do
	grep -Eq "$want" "$TMP/conns.txt" ||
		{ cat "$TMP/conns.txt"; fail "status --connections lacks a line like: $want"; }
done
ok "status --connections lists each connection with its cookie and verdict"

# /metrics: one series per service and reason, top-K bounded
curl -sf "http://127.0.0.1:$MP/metrics" >"$TMP/metrics" || fail "scrape failed"
for want in \
	"ngx_sockmap_service_connections{service=\"127.0.0.1:$PP\",verdict=\"redirected\",reason=\"none\"} 1" \
	"ngx_sockmap_service_connections{service=\"127.0.0.1:$PH\",verdict=\"tcp\",reason=\"hazard\"} 1" \
	"ngx_sockmap_service_hazard_info{service=\"127.0.0.1:$PH\",hazard=\"splice\"} 1" \
	"ngx_sockmap_service_connections{service=\"127.0.0.1:$PX\",verdict=\"tcp\",reason=\"cgroup\"} 1"; do
	grep -qF "$want" "$TMP/metrics" ||
		{ grep ngx_sockmap_service "$TMP/metrics"; fail "/metrics lacks: $want"; }
done
ok "/metrics has each service's connections by verdict and reason"
agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent exited cleanly"

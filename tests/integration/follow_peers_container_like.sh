#!/usr/bin/env bash
# timeout: 120
# Proves: with only Nginx named, the agent finds the cgroups of nginx's local
# peers (upstream, client) through sock_diag, attaches there, says why in
# status, and connections made afterwards are accelerated.  --no-follow
# keeps it to the named cgroup.
. "$(dirname "$0")/../lib/common.sh"

cgp=$(cg_make proxy)
cgu=$(cg_make upstream)
cgc=$(cg_make client)
up=$(nginx_start up upstream.conf "$cgu" LISTEN=127.0.0.1:18281 SENDFILE=on)
px=$(nginx_start px proxy.conf "$cgp" LISTEN=127.0.0.1:18280 UPSTREAM=127.0.0.1:18281)
wait_port 127.0.0.1 18280
wait_port 127.0.0.1 18281

cg_count() { "$AGENT" status --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["cgroups"]))'; }
wrk_round() { cg_exec "$cgc" wrk -t1 -c4 -d"$1" http://127.0.0.1:18280/hello >"$TMP/wrk.out" 2>&1; }

# --no-follow: the named cgroup only, whatever the traffic
AGENT_FOLLOW=0 agent_start -c "$cgp"
wrk_round 3s
sleep 3
assert_eq "$(cg_count)" 1 "--no-follow attaches only the named cgroup"
agent_stop

# follow (default): only the proxy's cgroup named.  Something in the root
# cgroup talks to nginx the whole time: it must never be followed.
python3 -c '
import os, socket, sys, time
open(sys.argv[1] + "/cgroup.procs", "w").write(str(os.getpid()))
s = socket.create_connection(("127.0.0.1", int(sys.argv[2])))
s.sendall(b"GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
time.sleep(20)' "$CG2" 18280 &
root_talker=$!
on_exit "kill $root_talker"
AGENT_FOLLOW=1 agent_start -c "$cgp"
wrk_round 3s &
wrk_pid=$!
for _ in $(seq 1 40); do
	[ "$(cg_count)" -ge 3 ] && break
	sleep 0.25
done
wait $wrk_pid
"$AGENT" status
json=$("$AGENT" status --json)
for cg in "$cgu" "$cgc"; do
	echo "$json" | python3 -c '
import json, sys
cgs = {c["path"]: c["reason"] for c in json.load(sys.stdin)["cgroups"]}
sys.exit(0 if sys.argv[1] in cgs and cgs[sys.argv[1]].startswith("followed") else 1)' "$cg" ||
		fail "$cg not followed (status: $json)"
	ok "followed $(basename "$cg")"
done
grep -q "^following" "$TMP/agent.out" || fail "agent did not say what it followed"
ok "agent printed what it followed"
# The root cgroup is never followed, whatever talks to nginx from there:
# the talker's connection was up while following ran.
grep -qx "0::/" "/proc/$root_talker/cgroup" || fail "the talker is not in the root cgroup"
ss -Htnp state established "( dport = :18280 )" | grep -q "pid=$root_talker," ||
	fail "the root cgroup's talker has no connection to nginx"
ok "a process in the root cgroup is connected to nginx"
echo "$json" | python3 -c '
import json, sys
sys.exit(any(c["path"] == sys.argv[1] for c in json.load(sys.stdin)["cgroups"]))' "$CG2" ||
	fail "followed the root cgroup"
ok "root cgroup not followed"

before=$(stat_get redirected_msgs)
pairs0=$(stat_get pairs)
wrk_round 3s
grep -q "Socket errors" "$TMP/wrk.out" && fail "wrk socket errors: $(cat "$TMP/wrk.out")"
assert_ge "$(stat_get pairs)" $((pairs0 + 4)) "new client connections paired after following"
assert_ge "$(stat_get redirected_msgs)" $((before + 1000)) "their requests were redirected"

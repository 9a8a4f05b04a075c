#!/usr/bin/env bash
# timeout: 90
# Proves: the follow scan's memory is bounded across network namespaces,
# not only in each (issue 37, item 7): any user can make namespaces
# (unshare -Urn), each with up to DIAG_MAX_SOCKS_PER_NETNS sockets, and
# the scan read them all every 2 s.  With the cap made 4 sockets (test
# knob), three namespaces of 3 connections (6 sockets) each: the agent
# says once that a scan stopped at its cap and keeps running.
. "$(dirname "$0")/../lib/common.sh"
export NGX_SOCKMAP_TEST_FOLLOW_SOCKS=4 AGENT_FOLLOW=1

cat >"$TMP/conns.py" <<'PY'
import socket, sys, time
ls = socket.socket(); ls.bind(("127.0.0.1", 0)); ls.listen(8)
cs = [socket.create_connection(ls.getsockname()) for _ in range(3)]
ss = [ls.accept()[0] for _ in range(3)]
open(sys.argv[1], "w").close()
time.sleep(float(sys.argv[2]))
PY
for n in a b c; do
	ns=$(ns_make "$n")
	ip netns exec "$ns" python3 "$TMP/conns.py" "$TMP/ready.$n" 60 &
	on_exit "kill $!"
	for _ in $(seq 50); do [ -e "$TMP/ready.$n" ] && break; sleep 0.1; done
	[ -e "$TMP/ready.$n" ] || fail "connections in $ns not made"
done

cg=$(cg_make capped)
agent_start -c "$cg" -v
# the scan runs every 2 s; 3 scans at least
for _ in $(seq 1 80); do
	grep -q 'follow: a scan read its cap of 4 sockets' "$TMP/agent.err" && break
	sleep 0.1
done
grep 'follow: a scan read its cap' "$TMP/agent.err" ||
	{ tail -20 "$TMP/agent.err"; fail "no scan stopped at its cap of 4 sockets"; }
ok "a scan stops at its cap across namespaces, and says so"
sleep 6
n=$(grep -c 'follow: a scan read its cap' "$TMP/agent.err")
assert_eq "$n" 1 "said once, not per scan"
kill -0 "$AGENT_PID" || fail "agent died"
agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent exited cleanly"

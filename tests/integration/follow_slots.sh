#!/usr/bin/env bash
# timeout: 150
# Proves: followed cgroups can't cost nginx its own.  Anyone can make
# cgroups and connect to nginx, and the attach slots are 64: at most
# --max-followed followed cgroups are attached (the rest counted in
# follow.refused and said once); a named cgroup made anew takes a followed
# one's slot when every slot is taken (it used to get "too many cgroups
# (max 64)" on every tick, and nginx was never tracked again); a followed
# cgroup no connection uses any more is released after 30 s.
. "$(dirname "$0")/../lib/common.sh"

PORT=18391 PORT_B=18392
named=$(cg_make named)
named_b=$(cg_make named_b)
park=$(cg_make park)
clients=()
for i in $(seq 1 64); do clients+=("$(cg_make "c$i")"); done

# server CGROUP PORT: a listener made in CGROUP (accepted sockets are in
# the listener's cgroup, wherever the process goes later), holding every
# connection; its pid in SERVER
server() {
	cg_exec "$1" python3 -c '
import socket, sys
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", int(sys.argv[1]))); l.listen(512)
held = []
while True:
    held.append(l.accept()[0])' "$2" &
	SERVER=$!
	on_exit "kill $SERVER 2>/dev/null"
	wait_port 127.0.0.1 "$2"
}
server "$named" $PORT
server "$named_b" $PORT_B

# clients N PORT...: one process that makes a connection to each PORT from
# each of the first N client cgroups (a socket stays in the cgroup it was
# made in), then parks itself and holds them until killed.
clients_start() {
	local n=$1
	shift
	python3 -c '
import os, socket, sys, time
park, ports, cgs = sys.argv[1], [int(p) for p in sys.argv[2].split()], sys.argv[3:]
held = []
for cg in cgs + [park]:
    open(cg + "/cgroup.procs", "w").write(str(os.getpid()))
    if cg != park:
        held += [socket.create_connection(("127.0.0.1", p)) for p in ports]
time.sleep(120)' "$park" "$*" "${clients[@]:0:$n}" &
	CLIENTS=$!
	on_exit "kill $CLIENTS 2>/dev/null"
}
n_cgroups() { "$AGENT" status --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["cgroups"]))'; }

# 1. the limit: 12 peers, --max-followed 8
clients_start 12 $PORT
AGENT_FOLLOW=1 agent_start -c "$named" --max-followed 8
st_until n follow.attached 8 10
assert_eq "$n" 8 "--max-followed 8: 8 of 12 peer cgroups followed"
assert_eq "$(stat_get follow.max)" 8 "follow.max says the limit"
for _ in $(seq 1 40); do
	st refused follow.refused
	[ "$refused" -ge 4 ] && break
	sleep 0.25
done
assert_ge "$refused" 4 "the peers left out are counted (follow.refused)"
grep -q "not followed: the limit of followed cgroups is reached (--max-followed 8)" \
	"$TMP/agent.err" "$TMP/agent.out" || fail "the agent did not say peers were left out"
ok "the agent said peers were left out"
[ "$(grep -c "not followed" "$TMP/agent.err" "$TMP/agent.out" | awk -F: '{s += $2} END {print s}')" = 1 ] ||
	fail "said more than once: $(grep "not followed" "$TMP/agent.err")"
ok "said once"

# 2. released when nothing uses them: the clients go, and within the idle
# time (30 s) and a scan, every followed cgroup is given back
kill "$CLIENTS"
wait "$CLIENTS" 2>/dev/null
st_until n follow.attached 0 40
assert_eq "$n" 0 "unused followed cgroups released"
assert_ge "$(stat_get follow.released)" 8 "follow.released counts them"
grep -q "^releasing followed .*: no tracked connection for 30 s" "$TMP/agent.out" ||
	fail "the agent did not say what it released"
agent_stop

# 3. every slot taken: 64 peers, each connected to two named cgroups (A,
# nginx, and B), --max-followed 64 -> A, B and 62 followed, 2 waiting.
# A is removed and made anew (nginx restarted): while it is gone, a
# waiting peer takes its slot (it has a connection to B); A must still get
# back in.
clients_start 64 $PORT $PORT_B
AGENT_FOLLOW=1 agent_start -c "$named" -c "$named_b" --max-followed 64
st_until n follow.attached 62 30
assert_eq "$n" 62 "62 peers followed beside the two named cgroups"
followed_before=$(grep -c "^following " "$TMP/agent.out")
# (every process of it: python3 may be a wrapper's child)
for p in $(cat "$named/cgroup.procs"); do echo "$p" >"$park/cgroup.procs"; done
rmdir "$named" || fail "rmdir $named"
for _ in $(seq 1 40); do
	[ "$(grep -c "^following " "$TMP/agent.out")" -gt "$followed_before" ] && break
	sleep 0.25
done
[ "$(grep -c "^following " "$TMP/agent.out")" -gt "$followed_before" ] ||
	fail "no waiting peer took the slot A left"
assert_eq "$(n_cgroups)" 64 "every slot is taken while A is gone"
mkdir "$named" || fail "mkdir $named"
for _ in $(seq 1 40); do
	grep -q "^re-attached $named " "$TMP/agent.out" && break
	sleep 0.25
done
grep -q "^re-attached $named " "$TMP/agent.out" ||
	fail "A was not attached again: $(grep -m3 "too many" "$TMP/agent.err")"
ok "the named cgroup got a slot back"
grep -q "^releasing followed .* for $named: every attach slot is taken" "$TMP/agent.out" ||
	fail "the agent did not say which followed cgroup gave its slot"
ok "a followed cgroup gave its slot, and the agent said which"
"$AGENT" status --json | python3 -c '
import json, sys
cgs = {c["path"]: c["reason"] for c in json.load(sys.stdin)["cgroups"]}
sys.exit(0 if sys.argv[1] in cgs and not cgs[sys.argv[1]].startswith("followed") else 1)' "$named" ||
	fail "status does not show $named attached as named"
ok "status shows the named cgroup attached"

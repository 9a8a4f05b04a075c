# timeout: 90
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: an endpoint (an active end's offer to pair) whose cgroup is
# detached while the socket sits idle does not stay in the map for good.
# Clients in an attached cgroup open 5 connections to a server in another
# and send nothing, so each endpoint stays; the clients move out, their
# cgroup is removed, the agent detaches it (no sock_ops program runs at
# those sockets' close any more); then they close.  Within the sweep's
# period (10 s) the map must be empty again, by its own entries (bpftool),
# by status (maps.endpoints) and endpoints_swept counting all 5.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
N=5
cg_new CS srv
cg_new CC cli
cg_new CO out

# entries in the agent's endpoints map (its id from agent.state)
entries() {
	local id
	id=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["maps"]["endpoints"])' \
		"$NGX_SOCKMAP_RUN_DIR/agent.state") || fail "no endpoints map id in agent.state"
	bpftool -j map dump id "$id" | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))'
}

agent_start -c "$CS" -c "$CC"
assert_eq "$(entries)" 0 "no endpoint before the connections"

cg_exec "$CS" python3 -c '
import socket, sys, time
ls = socket.socket()
ls.bind(("127.0.0.1", 0))
ls.listen(16)
open(sys.argv[1] + ".tmp", "w").write(str(ls.getsockname()[1]))
__import__("os").rename(sys.argv[1] + ".tmp", sys.argv[1])
conns = [ls.accept()[0] for _ in range(int(sys.argv[2]))]
time.sleep(60)' "$TMP/port" $N &
on_exit "kill $!"
wait_file "$TMP/port" "server listening"

# the client: connects, says so, waits for "move" (to CO, out of the
# attached cgroup), then "close"
cg_exec "$CC" python3 -c '
import os, socket, sys, time
def wait(p):
    t = time.monotonic() + 30
    while not os.path.exists(p) and time.monotonic() < t:
        time.sleep(0.05)
port, d, n, out = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
conns = [socket.create_connection(("127.0.0.1", port)) for _ in range(n)]
open(d + "/connected", "w").close()
wait(d + "/move")
open(out + "/cgroup.procs", "w").write(str(os.getpid()))
open(d + "/moved", "w").close()
wait(d + "/close")
for c in conns:
    c.close()
open(d + "/closed", "w").close()
time.sleep(30)' "$(cat "$TMP/port")" "$TMP" $N "$CO" &
on_exit "kill $!"
wait_file "$TMP/connected" "client connected"
sleep 0.5
assert_eq "$(entries)" $N "each idle active end has its endpoint"

touch "$TMP/move"
wait_file "$TMP/moved" "client moved out of its cgroup"
rmdir "$CC" || fail "removing the clients' cgroup"
for i in $(seq 1 50); do
	cat "$TMP/agent.out" "$TMP/agent.err" | grep -q "is gone.*detaching" && break
	sleep 0.2
done
cat "$TMP/agent.out" "$TMP/agent.err" | grep -q "is gone.*detaching" ||
	fail "the agent did not detach the removed cgroup: $(tail -3 "$TMP/agent.err")"
ok "the agent detached the removed cgroup"
touch "$TMP/close"
wait_file "$TMP/closed" "client closed its connections"

for i in $(seq 1 60); do
	[ "$(entries)" = 0 ] && break
	sleep 0.5
done
assert_eq "$(entries)" 0 "the orphaned endpoints are gone from the map"
assert_eq "$(stat_get maps.endpoints)" 0 "status maps.endpoints back to 0"
assert_ge "$(stat_get endpoints_swept)" $N "endpoints_swept counted them"
agent_stop || fail "agent did not exit 0"

#!/usr/bin/env bash
# timeout: 120
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: an unprivileged local user cannot steer peer following with forged
# sock_diag replies.  The agent follows peers in every network namespace
# that has a process, so it also dumps sockets in a namespace that user
# made (`unshare -Urn` as nobody).  Port ids are per namespace and the
# agent's socket there gets its pid as port id (netlink_autobind,
# net/netlink/af_netlink.c); any user sees that pid in /proc,
# and root of a user namespace passes netlink_allowed(NL_CFG_F_NONROOT_SEND)
# for the network namespace it owns.  So "nobody" floods that port id from
# inside its namespace with forged SOCK_DIAG_BY_FAMILY replies: a socket in
# the attached (proxy) cgroup and its mirror-image peer in a victim cgroup
# (another tenant's, which the agent must never attach to).  To widen the
# window it holds many real loopback connections, so the agent's dump
# there takes several reads.  Meanwhile a real client -> proxy -> upstream
# chain runs: the upstream must still be followed, the victim never.
# (Before the agent connected its socket to the kernel and checked every
# reply's sender, seq and lengths, the victim was attached at the first
# scan.)
. "$(dirname "$0")/../lib/common.sh"

ATTACK_SECS=14
PY=/usr/bin/python3 # the system one: nobody can run it
[ -x "$PY" ] || skip "no $PY"
id nobody >/dev/null 2>&1 || skip "no user nobody"
setpriv --reuid=nobody --regid=nogroup --clear-groups unshare -Urn true 2>/dev/null ||
	skip "unprivileged user namespaces are disabled here"

cgp=$(cg_make proxy)
cgu=$(cg_make upstream)
cgc=$(cg_make client)
cgv=$(cg_make victim)
cga=$(cg_make attacker)
# the victim tenant: a process the attacker has no rights on (stderr:
# the job's shell reports the SIGKILL of the clean-up)
cg_exec "$cgv" sleep 600 2>/dev/null &
up=$(nginx_start up upstream.conf "$cgu" LISTEN=127.0.0.1:18291 SENDFILE=on)
px=$(nginx_start px proxy.conf "$cgp" LISTEN=127.0.0.1:18290 UPSTREAM=127.0.0.1:18291)
wait_port 127.0.0.1 18290
wait_port 127.0.0.1 18291

AGENT_FOLLOW=1 agent_start -c "$cgp"
victim_id=$(stat -c %i "$cgv")
# What an attacker needs: the agent's pid (any user sees it in /proc; its
# netlink port id is its pid) and the id of a cgroup it attached (an
# inode number, found by listing the cgroup tree).  agent.state itself is
# root's alone (0600).
attacked_id=$(stat -c %i "$cgp")

attached() { # attached PATH: is PATH in status --json cgroups?
	"$AGENT" status --json | "$PY" -c '
import json, sys
sys.exit(0 if any(c["path"] == sys.argv[1] for c in json.load(sys.stdin)["cgroups"]) else 1)' "$1"
}

# The sender, as nobody in its own user + network namespace, given the
# agent's pid and the attached cgroup's id.  struct inet_diag_msg and
# INET_DIAG_CGROUP_ID (21) are from include/uapi/linux/inet_diag.h;
# SOCK_DIAG_BY_FAMILY is 20.
sender='
import os, socket, struct, sys, time
pid, attached = int(sys.argv[1]), [int(sys.argv[2])]
victim, secs, nconn = int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
ls = socket.socket()
ls.bind(("127.0.0.1", 0))
ls.listen(4096)
conns = []
for _ in range(nconn):
    conns.append(socket.create_connection(ls.getsockname()))
    conns.append(ls.accept()[0])

def msg(cg, src, sport, dst, dport):
    d = struct.pack("=BBBB", socket.AF_INET, 1, 0, 0)            # family, ESTABLISHED
    d += struct.pack("!HH", sport, dport)
    d += socket.inet_aton(src) + bytes(12) + socket.inet_aton(dst) + bytes(12)
    d += struct.pack("=III", 0, 0, 0)                              # if, cookie[2]
    d += struct.pack("=IIIII", 0, 0, 0, 0, 0)                      # expires .. inode
    d += struct.pack("=HHQ", 12, 21, cg)                           # INET_DIAG_CGROUP_ID
    return struct.pack("=IHHII", 16 + len(d), 20, 2, 0, pid) + d   # NLM_F_MULTI

dgram = msg(attached[0], "10.255.0.1", 18290, "10.255.0.2", 45000) + \
        msg(victim, "10.255.0.2", 45000, "10.255.0.1", 18290)
nl = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, 4)  # NETLINK_SOCK_DIAG
counts = {"delivered": 0, "refused": 0, "full": 0, "seen": 0}

def agent_here():
    # the agent'"'"'s sock_diag socket in this namespace (per-netns file)
    with open("/proc/self/net/netlink") as f:
        return any(l.split()[1:3] == ["4", str(pid)] for l in f)

print("sender: netns %s, agent pid %d, attached id %d, victim id %d, %d conns" %
      (os.readlink("/proc/self/ns/net"), pid, attached[0], victim, nconn), flush=True)
end = time.time() + secs
while time.time() < end:
    counts["seen"] += agent_here()
    for _ in range(200):
        try:
            nl.sendto(dgram, socket.MSG_DONTWAIT, (pid, 0))
            counts["delivered"] += 1
        except ConnectionRefusedError:
            counts["refused"] += 1
        except BlockingIOError:
            counts["full"] += 1
print("sender: " + ", ".join("%s %d" % kv for kv in counts.items()) +
      " (seen: times the agent'"'"'s socket was here)", flush=True)
'
cg_exec "$cga" setpriv --reuid=nobody --regid=nogroup --clear-groups \
	unshare -Urn sh -c 'ip link set lo up && exec "$@"' sh \
	"$PY" -c "$sender" "$AGENT_PID" "$attacked_id" "$victim_id" "$ATTACK_SECS" 3000 \
	>"$TMP/sender.out" 2>&1 &
sender_pid=$! # in $cga: killed at exit if still there

# Legitimate traffic through the proxy for the whole attack.
cg_exec "$cgc" wrk -t1 -c4 -d"${ATTACK_SECS}s" http://127.0.0.1:18290/hello >"$TMP/wrk.out" 2>&1 &
wrk_pid=$!
victim_seen=0
for _ in $(seq 1 $((ATTACK_SECS * 2))); do
	attached "$cgv" && { victim_seen=1; break; }
	sleep 0.5
done
wait $sender_pid
wait $wrk_pid
sed 's/^/# /' "$TMP/sender.out"
grep -q '^sender: delivered' "$TMP/sender.out" || fail "the sender did not run: $(cat "$TMP/sender.out")"
seen=$(sed -n 's/^sender: .*seen \([0-9]*\).*/\1/p' "$TMP/sender.out")
assert_ge "$seen" 1 "the agent looked into the sender's namespace while it sent"
"$AGENT" status
grep '^following' "$TMP/agent.out" | sed 's/^/# agent: /'
[ "$victim_seen" = 0 ] && ! attached "$cgv" ||
	fail "forged sock_diag replies made the agent attach to the victim cgroup $cgv"
ok "victim cgroup never attached"
kill -0 "$AGENT_PID" 2>/dev/null || fail "agent died"
attached "$cgu" || fail "the real upstream $cgu was not followed"
ok "the real upstream was followed"

# timeout: 60
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: readiness as a Type=notify unit sees it (debian/ngx-sockmap.service).
# Started with NOTIFY_SOCKET (as systemd starts a service), `run` sends
# READY=1 with STATUS= set to its "ready" line once the cgroup is
# attached (the words of the line it prints), and,
# on SIGTERM, STOPPING=1 before it exits 0; nothing else is sent.
. "$(dirname "$0")/../lib/common.sh"
command -v python3 >/dev/null || skip "SKIP: no python3 for the notify socket"
CG=$(cg_make notify)
SOCK=$TMP/notify.sock
# the service manager's end: every datagram, one per line, \n as "|"
python3 -u - "$SOCK" >"$TMP/notify.log" 2>&1 <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print("listening", flush=True)
while True:
    print(s.recv(4096).decode().replace("\n", "|"), flush=True)
PY
LPID=$!
on_exit "kill $LPID"
for _ in $(seq 1 50); do [ -S "$SOCK" ] && break; sleep 0.1; done
[ -S "$SOCK" ] || fail "the notify listener did not start: $(cat "$TMP/notify.log")"

AGENT_MAY_REFUSE=1 NOTIFY_SOCKET=$SOCK agent_start -c "$CG"
ready=$(grep -m1 '^ready' "$TMP/agent.out")
for _ in $(seq 1 20); do grep -q READY "$TMP/notify.log" && break; sleep 0.1; done
assert_eq "$(sed -n 2p "$TMP/notify.log")" "READY=1|STATUS=$ready" \
	"the first message is READY=1 with the ready line as STATUS"
agent_stop || fail "the agent did not exit 0 on SIGTERM: $(tail -5 "$TMP/agent.err")"
for _ in $(seq 1 20); do grep -q STOPPING "$TMP/notify.log" && break; sleep 0.1; done
assert_eq "$(sed -n 3p "$TMP/notify.log")" "STOPPING=1|STATUS=detaching" \
	"SIGTERM: STOPPING=1 before the exit"
assert_eq "$(wc -l <"$TMP/notify.log")" 3 "nothing else was sent"

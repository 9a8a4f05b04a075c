# timeout: 150
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: ending a connection over sock_diag (--resets sock_diag, what
# hosts that refuse tracing programs get) does not depend on how many
# sockets share its network namespace.  An unprivileged user (uid 65534)
# holds LISTENERS listening sockets on 127.0.1.x in the host namespace,
# past the 65,536 sockets a dump of one namespace may take
# (DIAG_MAX_SOCKS_PER_NETNS): listeners come first in a dump, so the
# enforcer that found its sockets by dumping them found none, reset
# nothing and said nothing, and a splice reader of a paired connection
# waited for good.  With the listeners up, splice readers on paired
# connections must end with an error on both ends (or complete: once one
# is reset the port is learned and the next stay on TCP), none may hang,
# and resets.splice counts the ones reset.  The listeners are closed at
# exit, pass or fail.  Then the same for the host-wide budget's resets
# (--unread-budget), which name a socket the unread scan found.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
SK=$TOOLS/splicekit
[ -x "$SK" ] || fail "$SK not built (make tools)"
LISTENERS=66000
CONNS=6
cg_new CS srv
cg_new CC cli

# listeners.py ADDR N: N listening sockets on ADDR (ports from 20000 up;
# a port taken is skipped), prints "ready COUNT", then sleeps until
# killed (120 s at most, or its parent gone).  Read from stdin and
# printing to stdout: uid 65534 may not open $TMP.
cat >"$TMP/listeners.py" <<'PY'
import os, resource, socket, sys, time
addr, n = sys.argv[1], int(sys.argv[2])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
socks, port = [], 20000
while len(socks) < n and port < 65536:
    s = socket.socket()
    try:
        s.bind((addr, port))
        s.listen(1)
        socks.append(s)
    except OSError:
        s.close()
    port += 1
print("ready %d" % len(socks), flush=True)
parent, end = os.getppid(), time.monotonic() + 120
while time.monotonic() < end and os.getppid() == parent:
    time.sleep(0.5)
PY

agent_start -c "$CS" -c "$CC" --unread-budget 4M $(tier_args "$WEAK_TIER")
tier_check "$WEAK_TIER"

# an unprivileged user, in processes of PER sockets each (under the
# open-file limit a login gets): what anyone on the host may do
PER=$(((LISTENERS + 3) / 4))
[ -x /usr/bin/python3 ] || skip "no /usr/bin/python3 (one uid 65534 may run)"
[ "$(ulimit -Hn)" -gt $((PER + 64)) ] || skip "an open-file limit of $(ulimit -Hn) is too low for $PER listeners a process"
LPIDS=()
for i in 1 2 3 4; do
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		/usr/bin/python3 - 127.0.1.$i $PER <"$TMP/listeners.py" >"$TMP/listeners.$i" 2>&1 &
	LPIDS+=($!)
	on_exit "kill $!"
done
got=0
for i in 1 2 3 4; do
	for _ in $(seq 1 300); do
		grep -q '^ready' "$TMP/listeners.$i" && break
		kill -0 "${LPIDS[i - 1]}" 2>/dev/null || break
		sleep 0.1
	done
	n=$(sed -n 's/^ready //p' "$TMP/listeners.$i")
	[ -n "$n" ] || fail "listeners on 127.0.1.$i did not come up: $(tail -n 3 "$TMP/listeners.$i")"
	got=$((got + n))
done
assert_ge "$got" 65536 "uid 65534 holds more listening sockets than a dump of a namespace takes"
log "listening sockets in the host namespace: $(ss -Htln | wc -l)"

# splice readers on paired connections, as splice_reader.sh
rm -f "$TMP/port"
cg_exec "$CS" "$SK" server --listen 127.0.0.1:0 --ready-file "$TMP/port" \
	--out "$TMP/srv" --conns $CONNS --timeout 5 --seed 7 >"$TMP/srvlog" 2>&1 &
SPID=$!
on_exit "kill $SPID"
wait_file "$TMP/port" "splice server listening"
st p0 pairs
st r0 resets.splice
cg_exec "$CC" "$SK" client --connect 127.0.0.1:"$(cat "$TMP/port")" --out "$TMP/cli" \
	--conns $CONNS --parallel 1 --bytes 1000 --seed 7 --timeout 6 >"$TMP/clilog" 2>&1
for _ in $(seq 1 100); do
	kill -0 $SPID 2>/dev/null || break
	sleep 0.1
done
st p1 pairs
st r1 resets.splice
outcomes() { sed -n 's/^conn .*outcome=\([a-z]*\).*/\1/p' "$1" | sort | uniq -c | tr -s ' \n' ' '; }
log "client: $(outcomes "$TMP/cli"); server: $(outcomes "$TMP/srv"); pairs +$((p1 - p0)); resets.splice +$((r1 - r0))"
grep -h 'sock_diag\|reset' "$TMP/agent.err" | tail -n 5 | sed 's/^/#   /'
assert_ge $((p1 - p0)) 1 "connections were paired (the hazard was there)"
hung=$(grep -c 'outcome=timeout' "$TMP/cli" "$TMP/srv" | awk -F: '{ s += $2 } END { print s }')
reset=$(grep -c 'outcome=reset' "$TMP/cli")
okc=$(grep -c 'outcome=ok' "$TMP/cli")
assert_eq "$hung" 0 "no splice reader or its client hung"
assert_ge "$reset" 1 "a splice reader's connection was reset"
assert_eq $((reset + okc)) $CONNS "every connection completed or was reset"
assert_eq $((r1 - r0)) "$reset" "resets.splice counts the connections reset"

# the host-wide budget's resets, which name a socket found by the unread
# scan: a stalled reader holding 6 MiB, over --unread-budget 4M, is ended
st b0 resets.budget
D=$TMP/budget
mkdir -p "$D"
READER_HOLD_SECS=4 cg_exec "$CS" python3 "$TOP/tests/lib/stalled_reader.py" reader "$D" \
	>"$D/reader.log" 2>&1 &
RPID=$!
on_exit "kill $RPID"
wait_file "$D/reader.port" "budget: reader listening"
cg_exec "$CC" timeout 60 python3 "$TOP/tests/lib/stalled_reader.py" sender "$(cat "$D/reader.port")" \
	"$D" $((6 << 20)) 10 >"$D/sender.log" 2>&1 &
SPID=$!
on_exit "kill $SPID"
wait $SPID
wait $RPID
st b1 resets.budget
log "budget: reader $(cat "$D/reader.json" 2>/dev/null), resets.budget +$((b1 - b0))"
assert_eq "$(jget "$D/reader.json" end)" reset "budget: the stalled reader holding 6 MiB was reset"
assert_eq $((b1 - b0)) 1 "budget: resets.budget counts it"

kill "${LPIDS[@]}" 2>/dev/null
wait "${LPIDS[@]}" 2>/dev/null
agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent ($TIER) exited cleanly"

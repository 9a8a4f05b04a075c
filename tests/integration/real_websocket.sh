# timeout: 120
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: WebSocket behind nginx (Upgrade, then nginx relays both ways),
# every hop local and accelerated (client cgroup C -> nginx P -> a Python
# websockets server S): 4 connections at once, each with text and binary
# messages from 0 B to 1 MiB echoed one at a time, a burst of 50 sent
# before any echo is read (order kept), and 20 messages the server pushes
# on its own; every message byte-exact, every connection closed cleanly
# (1000); and the payload took the redirect on both hops, both
# directions, with next to nothing through TCP.
. "$(dirname "$0")/../lib/common.sh"
. "$TOP/tests/lib/realsrv.sh"

real_need py:websockets python3-websockets
PORT_PX=18630 PORT_WS=18631
DIAG_PORTS="$PORT_PX $PORT_WS"
CONNS=4

S=$(cg_make srv) || fail "$S"
P=$(cg_make px) || fail "$P"
C=$(cg_make cl) || fail "$C"

bg_in "$S" ws-server "$PY3" "$REALAPPS" ws-server $PORT_WS >/dev/null
wait_port 127.0.0.1 $PORT_WS
nginx_start px websocket.conf "$P" LISTEN=127.0.0.1:$PORT_PX UPSTREAM=127.0.0.1:$PORT_WS >/dev/null
wait_port 127.0.0.1 $PORT_PX

agent_start -c "$C" -c "$P" -c "$S"
hops_mark
cg_exec "$C" "$PY3" "$REALAPPS" ws-client $PORT_PX $CONNS 30 ws \
	>"$TMP/client.out" 2>&1 || fail_diag "client: $(tail -5 "$TMP/client.out")"
cat "$TMP/client.out"
ok "$CONNS WebSocket connections through nginx: every message byte-exact, clean close"
payload=$("$PY3" -c 'import json,sys; print(json.load(sys.stdin)["payload"])' <"$TMP/client.out")
hops_check "websocket" $((2 * CONNS)) "$payload" 2

agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent exited cleanly"

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
CONNS=4

real_cgroups

bg_in "$S" ws-server "$PY3" "$REALAPPS" ws-server $PORT_WS >/dev/null
wait_port 127.0.0.1 $PORT_WS
real_proxy websocket.conf $PORT_PX $PORT_WS
real_client "$CONNS WebSocket connections through nginx: every message byte-exact, clean close" \
	ws-client $PORT_PX $CONNS 30 ws
hops_check "websocket" $((2 * CONNS)) "$PAYLOAD" 2

agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent exited cleanly"

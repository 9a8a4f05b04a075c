# timeout: 120
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: gRPC behind nginx (HTTP/2 both hops, grpc_pass, kept upstream
# connections), every hop local and accelerated (client cgroup C -> nginx P
# -> a Python grpcio server S): 3 channels at once, each with 30 unary calls
# of 0 B to 1 MiB (reply: SHA-256 + the request), a server stream of 30
# messages, and one bidirectional stream carrying 30 ping-pong messages
# (each sent only after the reply to the one before: nothing on the way
# may hold a message back) then a burst of 40; every reply byte-exact and
# in order, no call past its deadline; and the payload took the redirect
# on both hops, both directions, with next to nothing through TCP.
. "$(dirname "$0")/../lib/common.sh"
. "$TOP/tests/lib/realsrv.sh"

real_need py:grpc python3-grpcio
PORT_PX=18640 PORT_GRPC=18641
DIAG_PORTS="$PORT_PX $PORT_GRPC"

S=$(cg_make srv) || fail "$S"
P=$(cg_make px) || fail "$P"
C=$(cg_make cl) || fail "$C"

bg_in "$S" grpc-server "$PY3" "$REALAPPS" grpc-server $PORT_GRPC >/dev/null
wait_port 127.0.0.1 $PORT_GRPC
nginx_start px grpc.conf "$P" LISTEN=127.0.0.1:$PORT_PX UPSTREAM=127.0.0.1:$PORT_GRPC >/dev/null
wait_port 127.0.0.1 $PORT_PX

agent_start -c "$C" -c "$P" -c "$S"
hops_mark
cg_exec "$C" "$PY3" "$REALAPPS" grpc-client $PORT_PX 30 grpc \
	>"$TMP/client.out" 2>&1 || fail_diag "client: $(tail -5 "$TMP/client.out")"
cat "$TMP/client.out"
ok "gRPC unary, server-streaming and bidirectional calls through nginx byte-exact"
payload=$("$PY3" -c 'import json,sys; print(json.load(sys.stdin)["payload"])' <"$TMP/client.out")
# pairs: the 3 client channels and at least one upstream connection
hops_check "grpc" 4 "$payload" 2

agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent exited cleanly"

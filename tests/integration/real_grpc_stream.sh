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

real_cgroups

bg_in "$S" grpc-server "$PY3" "$REALAPPS" grpc-server $PORT_GRPC >/dev/null
wait_port 127.0.0.1 $PORT_GRPC
real_proxy grpc.conf $PORT_PX $PORT_GRPC
real_client "gRPC unary, server-streaming and bidirectional calls through nginx byte-exact" \
	grpc-client $PORT_PX 30 grpc
# pairs: the 3 client channels and at least one upstream connection
hops_check "grpc" 4 "$PAYLOAD" 2

agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent exited cleanly"

# timeout: 120
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: Redis through nginx's stream {} module, every hop local TCP and
# accelerated (clients in cgroup C -> nginx stream P -> redis-server S):
# values from 0 B to 1 MiB and one of 50 MiB read back byte-exact, a pipeline of 2000 INCRBY
# written before any reply is read returns every running sum in order, a
# MULTI/EXEC transaction answers as one; redis-benchmark's INCR, 8
# connections, plain and 16-deep pipelines, leaves the counter at exactly
# the number of INCRs sent; and the bytes took the redirect on both hops
# with next to nothing through TCP.
. "$(dirname "$0")/../lib/common.sh"
. "$TOP/tests/lib/realsrv.sh"

real_need redis-server redis-server
real_need redis-benchmark redis-tools
LOAD_STREAM=$(load_stream)
PORT_PX=18620 PORT_RD=18621
N=20000

real_cgroups

redis_start "$S" $PORT_RD
real_proxy stream.conf $PORT_PX $PORT_RD LOAD_STREAM="$LOAD_STREAM"
real_client "big values, a 2000-deep pipeline and MULTI/EXEC through nginx stream byte-exact" \
	resp-client $PORT_PX redis huge

# Without -r redis-benchmark INCRs the one key counter:__rand_int__
for pipe in 1 16; do
	cg_exec "$C" timeout 60 redis-benchmark -h 127.0.0.1 -p $PORT_PX -c 8 -n $N -P $pipe \
		-t incr -q >"$TMP/rb.out" 2>&1 || fail_diag "redis-benchmark -P $pipe: $(tail -3 "$TMP/rb.out")"
done
got=$(cg_exec "$C" redis-cli -h 127.0.0.1 -p $PORT_PX GET 'counter:__rand_int__')
assert_eq "$got" $((2 * N)) "redis-benchmark: the counter equals the INCRs sent"

# pairs: the test client, 8 x 2 benchmark connections, redis-cli, and
# nginx's upstream connection for each
hops_check "redis" $((2 * (1 + 16 + 1))) "$PAYLOAD" "$(real_hops)"
# spliced: the test client's and the benchmark's sessions, each way
splice_check "redis" 16

agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent exited cleanly"

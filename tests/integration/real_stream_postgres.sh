# timeout: 150
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: PostgreSQL through nginx's stream {} module (L4), every hop local
# TCP and accelerated (pgbench/psql in cgroup C -> nginx stream P ->
# postgres S): pgbench initialises and runs TPC-B-like transactions (4
# clients over kept connections, then a new connection per transaction)
# with none failed and every one counted; afterwards TPC-B's invariant holds
# (sum of account balances = sum of branch balances = sum of teller
# balances = sum of history deltas, and one history row per transaction);
# a multi-MB query result read through nginx is byte-identical to the same
# query over postgres' unix socket (no nginx, no redirect); and the bytes
# took the redirect on both hops with next to nothing through TCP.
. "$(dirname "$0")/../lib/common.sh"
. "$TOP/tests/lib/realsrv.sh"

real_need "$PG_BIN/pgbench" postgresql-15
LOAD_STREAM=$(load_stream)
PORT_PX=18610 PORT_PG=18611
CLIENTS=4 TXNS=150 TXNS_C=25

real_cgroups

pg_start "$S" $PORT_PG
real_proxy stream.conf $PORT_PX $PORT_PG LOAD_STREAM="$LOAD_STREAM"
# through nginx: TCP to the stream proxy; direct: postgres' unix socket
VIA=(-h 127.0.0.1 -p $PORT_PX -U postgres)
DIRECT=(-h "$PG_DIR" -p $PORT_PG -U postgres)
psql_c() { cg_exec "$C" "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -At "$@"; }
# pgbench_run LABEL ARGS...: through nginx, in C; none failed, all counted
pgbench_run() {
	local label=$1 want=$2
	shift 2
	cg_exec "$C" timeout 60 "$PG_BIN/pgbench" "${VIA[@]}" "$@" postgres \
		>"$TMP/pgbench.out" 2>&1 || fail_diag "$label: pgbench exit $?: $(tail -5 "$TMP/pgbench.out")"
	sed 's/^/#   /' "$TMP/pgbench.out" | grep -v '^#   \(pgbench (\|starting\)' | head -20
	grep -q "^number of transactions actually processed: $want/$want\$" "$TMP/pgbench.out" ||
		fail_diag "$label: not $want/$want transactions processed"
	ok "$label: $want/$want transactions processed"
	if grep -q '^number of failed transactions' "$TMP/pgbench.out"; then
		grep -q '^number of failed transactions: 0 ' "$TMP/pgbench.out" ||
			fail_diag "$label: $(grep '^number of failed' "$TMP/pgbench.out")"
		ok "$label: no failed transaction"
	fi
}

hops_mark
cg_exec "$C" timeout 60 "$PG_BIN/pgbench" "${VIA[@]}" -i -s 1 -q postgres \
	>"$TMP/init.out" 2>&1 || fail_diag "pgbench -i: $(tail -5 "$TMP/init.out")"
ok "pgbench -i through nginx stream"
# -n: no vacuum between runs (it is the invariant, not the speed, that counts)
pgbench_run "kept connections" $((CLIENTS * TXNS)) -n -c $CLIENTS -j 2 -t $TXNS
pgbench_run "connection per transaction" $((CLIENTS * TXNS_C)) -n -C -c $CLIENTS -j 2 -t $TXNS_C

q() { psql_c "${VIA[@]}" -c "$1" postgres; }
sums=$(q "SELECT (SELECT sum(abalance) FROM pgbench_accounts) || ' ' ||
		(SELECT sum(bbalance) FROM pgbench_branches) || ' ' ||
		(SELECT sum(tbalance) FROM pgbench_tellers) || ' ' ||
		(SELECT sum(delta) FROM pgbench_history) || ' ' ||
		(SELECT count(*) FROM pgbench_history)") || fail_diag "psql: $sums"
read -r a b t h n <<<"$sums"
log "sums: accounts $a, branches $b, tellers $t, history $h; history rows $n"
[ -n "$a" ] && [ "$a" = "$b" ] && [ "$b" = "$t" ] && [ "$t" = "$h" ] ||
	fail "TPC-B invariant broken: accounts $a, branches $b, tellers $t, history $h"
ok "TPC-B invariant: account = branch = teller balances = history deltas ($a)"
assert_eq "$n" $((CLIENTS * (TXNS + TXNS_C))) "one history row per transaction"

# Bytes: ~5 MB of rows the server makes, through nginx and directly
BIG="COPY (SELECT i, md5(i::text), repeat(chr(65 + i % 26), i % 300)
	FROM generate_series(1, 40000) i) TO STDOUT"
psql_c "${VIA[@]}" -c "$BIG" postgres >"$TMP/via.out" || fail_diag "COPY through nginx"
psql_c "${DIRECT[@]}" -c "$BIG" postgres >"$TMP/direct.out" || fail "COPY over the unix socket"
assert_eq "$(sha256sum <"$TMP/via.out")" "$(sha256sum <"$TMP/direct.out")" \
	"a $(stat -c %s "$TMP/via.out")-byte result through nginx is byte-identical"

# pairs: every pgbench connection and its nginx upstream connection (the
# -C run alone opens CLIENTS x TXNS_C of each); payload: the COPY result,
# the least we know went from postgres to psql
hops_check "postgres" $((2 * CLIENTS * TXNS_C)) "$(stat -c %s "$TMP/via.out")" "$(real_hops)"
splice_check "postgres" $CLIENTS

agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent exited cleanly"

# timeout: 120
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: nginx-conf/fastcgi.conf, given as many kept connections as
# php-fpm has children (as bench/run's php profile renders it), connects to
# php-fpm at most once per child: 16 clients, each 1500 requests on one
# kept-alive connection, all at once against 16 children, make new pairs
# (and fallbacks{no_peer}) only for their own 16 connections and at most 16
# FastCGI ones.  Before: with a smaller pool (`keepalive 8`) nginx closed
# the connections past the pool as they went idle and connected again for
# the next burst (1951 new pairs in 3 s of wrk -c16), and with the
# upstream's keepalive_requests left at nginx's 1000 it closed every kept
# connection after 1000 requests.  Each reconnect is a TCP handshake and a
# new pair, and now and then a pair lost when nginx sends before php-fpm's
# end is established.  (curl, not wrk: wrk ends with requests in flight,
# and nginx closes the FastCGI connections of requests whose client left.)
. "$(dirname "$0")/../lib/common.sh"
. "$TOP/tests/lib/realsrv.sh"

real_need "$PHP_FPM" php8.2-fpm
command -v curl >/dev/null || skip "curl not installed"
PORT_PX=18610 PORT_FPM=18611
CHILDREN=16

real_cgroups
ROOT=$TMP/php
mkdir -p "$ROOT"
cat >"$ROOT/page.php" <<'PHP'
<?php
echo str_pad("<p>kept</p>", 1024, " ");
PHP
fpm_start "$S" $PORT_FPM "$ROOT" $CHILDREN
real_proxy fastcgi.conf $PORT_PX $PORT_FPM ROOT="$ROOT" KEEPALIVE=$CHILDREN

CLIENTS=$CHILDREN REQS=1500
hops_mark
st np0 fallbacks.no_peer
# one connection per curl, its requests one after another (a URL range);
# the bodies to /dev/null, a status line per request to stderr
pids=()
for i in $(seq 1 $CLIENTS); do
	cg_exec "$C" curl -sS -w '%{stderr}%{http_code}\n' \
		"http://127.0.0.1:$PORT_PX/page.php?c=$i&r=[1-$REQS]" >/dev/null 2>"$TMP/curl.$i" &
	pids+=($!)
done
wait "${pids[@]}"
got=$(cat "$TMP"/curl.* | grep -c '^200$')
assert_eq "$got" $((CLIENTS * REQS)) "$CLIENTS clients x $REQS requests through nginx and php-fpm: HTTP 200"
st pairs pairs
st np fallbacks.no_peer
log "new pairs $((pairs - H_PAIRS)), fallbacks.no_peer +$((np - np0))"
assert_le $((pairs - H_PAIRS + np - np0)) $((CLIENTS + CHILDREN)) \
	"new connections: the clients' $CLIENTS and at most one FastCGI connection per child"

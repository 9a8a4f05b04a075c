# timeout: 120
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: PHP behind nginx, a real php-fpm (FastCGI over TCP with
# fastcgi_keep_conn and an upstream pool), every hop local and accelerated
# (client cgroup C -> nginx P -> php-fpm S): 4 keep-alive clients, 40
# requests each, POST bodies echoed by php and bodies php generates, 0 B to
# 1 MiB, come back byte-exact and php saw each request's own body (its
# SHA-256); the FastCGI connections were kept (far fewer pairs than
# requests: one per kept connection, not one per request); and the payload
# took the redirect on both hops, both directions, with next to nothing
# through TCP.
. "$(dirname "$0")/../lib/common.sh"
. "$TOP/tests/lib/realsrv.sh"

real_need "$PHP_FPM" php8.2-fpm
PORT_PX=18600 PORT_FPM=18601
CONNS=4 REQS=40 CHILDREN=4

real_cgroups

ROOT=$TMP/php
mkdir -p "$ROOT"
# gen.php makes the bytes realapps.py's gen() makes: a SHA-256 chain
cat >"$ROOT/gen.php" <<'PHP'
<?php
header('Content-Type: application/octet-stream');
$seed = $_GET['seed']; $n = (int)$_GET['n']; $out = '';
for ($i = 0; strlen($out) < $n; $i++) $out .= hash('sha256', "$seed:$i", true);
echo substr($out, 0, $n);
PHP
cat >"$ROOT/echo.php" <<'PHP'
<?php
$in = file_get_contents('php://input');
header('Content-Type: application/octet-stream');
header('X-Sha256: ' . hash('sha256', $in));
echo $in;
PHP

fpm_start "$S" $PORT_FPM "$ROOT" $CHILDREN
real_proxy fastcgi.conf $PORT_PX $PORT_FPM ROOT="$ROOT" KEEPALIVE=$CHILDREN
real_client "$((CONNS * REQS)) requests through nginx and php-fpm byte-exact" \
	http-client $PORT_PX $CONNS $REQS php
# pairs: the client connections and at least one FastCGI connection; at
# most one per client connection and one per php-fpm child, where a
# connection per request (keep_conn off) would be 160
hops_check "php" $((CONNS + 1)) "$PAYLOAD" 2
st pairs pairs
assert_le $((pairs - H_PAIRS)) $((CONNS + 2 * CHILDREN)) "FastCGI connections kept (pairs)"

agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent exited cleanly"

# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
# Real servers behind nginx (tests/integration/real_*.sh; bench/run's php,
# pgbench, redis and grpc profiles source it too): what each needs from
# Debian, how each is started inside a cgroup and stopped, and the check
# that every hop was redirected.  The script that sources this defines
# fail, skip, on_exit and log (tests/lib/common.sh does); the servers' own
# files go under $TMP.

# Debian's python: python3-websockets and python3-grpcio install for it,
# not for whatever python3 comes first on PATH (pyenv here).
PY3=/usr/bin/python3
REALAPPS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/realapps.py
# the newest installed, else Debian 12's paths (for real_need's message)
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
PHP_FPM=$(command -v php-fpm8.2 || ls /usr/sbin/php-fpm* 2>/dev/null | head -n 1)
PHP_FPM=${PHP_FPM:-/usr/sbin/php-fpm8.2}

# real_need WHAT PACKAGE: skip the test, naming the package, unless WHAT
# is there: an executable path or command, or "py:MODULE" for Debian's
# python
real_need() {
	case $1 in
	py:*) "$PY3" -c "import ${1#py:}" 2>/dev/null && return 0 ;;
	/*) [ -x "$1" ] && return 0 ;;
	*) command -v "$1" >/dev/null && return 0 ;;
	esac
	skip "needs $1 (Debian package $2; sudo make deps installs it)"
}

# load_stream: the load_module line for nginx's stream {} module, empty
# where nginx has it built in; skips where it has neither
load_stream() {
	local so=/usr/lib/nginx/modules/ngx_stream_module.so
	if nginx -V 2>&1 | grep -q -- '--with-stream\( \|$\)'; then
		echo ""
	elif [ -f "$so" ]; then
		echo "load_module $so;"
	else
		skip "nginx has no stream {} module (Debian package libnginx-mod-stream; sudo make deps installs it)"
	fi
}

# bg_in CGROUP NAME CMD...: start CMD in CGROUP in the background, output
# to $TMP/NAME.log; prints its pid.  Stopped with its cgroup (the test's
# cg_remove at exit, the bench's cg_kill after each block): no on_exit
# for the pid, which a long bench could see reused.
bg_in() {
	local cg=$1 name=$2
	shift 2
	cg_exec "$cg" "$@" >"$TMP/$name.log" 2>&1 </dev/null &
	echo $!
}

# fpm_start CGROUP PORT DOCROOT CHILDREN: php-fpm in the foreground as root
# (-R: a test's root, nothing to drop to), a static pool on 127.0.0.1:PORT
fpm_start() {
	local cg=$1 port=$2 root=$3 n=$4 conf=$TMP/fpm.conf
	cat >"$conf" <<EOF
[global]
error_log = $TMP/fpm-error.log
daemonize = no
[t]
user = root
group = root
listen = 127.0.0.1:$port
listen.backlog = 511
pm = static
pm.max_children = $n
pm.max_requests = 0
catch_workers_output = yes
php_admin_value[post_max_size] = 16M
php_admin_value[memory_limit] = 256M
php_admin_value[output_buffering] = 0
chdir = $root
EOF
	bg_in "$cg" fpm "$PHP_FPM" -F -R -n -y "$conf" >/dev/null
	port_wait 127.0.0.1 "$port" || fail "php-fpm not listening: $(tail -5 "$TMP/fpm.log" "$TMP/fpm-error.log" 2>/dev/null)"
}

# pg_init: a throwaway PostgreSQL cluster in $TMP/pg (PG_DIR), owned by
# the postgres user (the server refuses root); stopped at exit if running
PG_DIR=
pg_init() {
	id postgres >/dev/null 2>&1 || skip "needs the postgres user (Debian package postgresql-15)"
	PG_DIR=$TMP/pg
	chmod 711 "$TMP"
	mkdir -p "$PG_DIR" && chown postgres: "$PG_DIR"
	runuser -u postgres -- "$PG_BIN/initdb" -D "$PG_DIR/data" -U postgres -A trust \
		--no-sync >"$TMP/initdb.log" 2>&1 || fail "initdb: $(tail -5 "$TMP/initdb.log")"
	on_exit "pg_stop"
}
# pg_run CGROUP PORT: its server in CGROUP, TCP on 127.0.0.1:PORT and a
# unix socket in PG_DIR (for checks that must not go through nginx);
# durability off: tests count transactions, not disk flushes
pg_run() {
	cg_exec "$1" runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -w -t 30 \
		-l "$PG_DIR/server.log" -o "-c listen_addresses=127.0.0.1 -p $2 \
		-c unix_socket_directories=$PG_DIR -c fsync=off -c synchronous_commit=off \
		-c full_page_writes=off -c max_connections=64 -c shared_buffers=64MB" \
		start >"$TMP/pg_ctl.log" 2>&1 || fail "pg_ctl start: $(tail -5 "$PG_DIR/server.log")"
}
pg_stop() {
	[ -f "$PG_DIR/data/postmaster.pid" ] || return 0
	runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m fast -w -t 10 stop >/dev/null 2>&1
}
# pg_start CGROUP PORT: both
pg_start() { pg_init && pg_run "$@"; }

# redis_start CGROUP PORT: redis-server on 127.0.0.1:PORT, no persistence
redis_start() {
	bg_in "$1" redis redis-server --bind 127.0.0.1 --port "$2" --save "" --appendonly no \
		--protected-mode no --dir "$TMP" >/dev/null
	port_wait 127.0.0.1 "$2" || fail "redis-server not listening: $(tail -5 "$TMP/redis.log")"
}

# hops_mark: counters before a client's run; hops_check LABEL PAIRS
# APP_BYTES HOPS after it: at least PAIRS new paired connections, at least
# HOPS x APP_BYTES redirected (the client's payload, both directions,
# crosses each of the HOPS local hops once), and through TCP at most 1% of
# what was redirected: no hop, no direction, fell back.
hops_mark() {
	st H_SW splice_switched
	st H_PAIRS pairs
	st H_RB redirected_bytes
	st H_TB tcp_bytes
}
hops_check() {
	local label=$1 pairs=$2 app=$3 hops=$4 p rb tb bad=
	st p pairs
	st rb redirected_bytes
	st tb tcp_bytes
	p=$((p - H_PAIRS)) rb=$((rb - H_RB)) tb=$((tb - H_TB))
	log "$label: pairs +$p, redirected_bytes +$rb, tcp_bytes +$tb, payload $app"
	# all three judged before failing: the log says which ones broke
	if [ "$p" -ge "$pairs" ]; then ok "$label: $p connections paired (>= $pairs)"
	else bad="$bad; $p new pairs, want >= $pairs"; fi
	if [ "$rb" -ge $((hops * app)) ]; then
		ok "$label: redirected_bytes +$rb >= $hops hops x $app payload bytes"
	else bad="$bad; redirected_bytes +$rb, want >= $hops hops x $app payload bytes"; fi
	if [ $((tb * 100)) -le "$rb" ]; then
		ok "$label: tcp_bytes +$tb, at most 1% of what was redirected"
	else bad="$bad; tcp_bytes +$tb, more than 1% of +$rb redirected"; fi
	[ -z "$bad" ] || fail_diag "$label: ${bad#; }"
}

# The topology of every real-server test: the server in cgroup S, nginx in
# P, the client in C, the agent attached to the three.
# real_cgroups: make S, P and C
real_cgroups() {
	S=$(cg_make srv) || fail "$S"
	P=$(cg_make px) || fail "$P"
	C=$(cg_make cl) || fail "$C"
}
# real_proxy TEMPLATE PORT_PX PORT_SRV [VAR=VALUE...]: nginx in P on
# 127.0.0.1:PORT_PX in front of the server on 127.0.0.1:PORT_SRV (already
# listening), then the agent on S, P and C
# With REAL_SPLICE=1 (the *_splice.sh tests), a stream {} proxy is
# nginx-conf/stream_splice.conf instead (sockmap_splice on) and the agent
# answers its query (--nginx-vars).
real_proxy() {
	local tpl=$1 px=$2 srv=$3 agent=()
	shift 3
	DIAG_PORTS="$px $srv"
	if [ "${REAL_SPLICE:-0}" = 1 ]; then
		[ -f "$TOP/build/ngx_stream_sockmap_module.so" ] ||
			skip "build/ngx_stream_sockmap_module.so not built (make module; needs nginx-dev)"
		tpl=stream_splice.conf
		set -- "$@" STREAM_LISTEN=127.0.0.1:$px MODULES="$TOP/build" TIMEOUT=60s
		agent=(--nginx-vars)
	fi
	nginx_start px "$tpl" "$P" LISTEN=127.0.0.1:$px UPSTREAM=127.0.0.1:$srv "$@" >/dev/null
	wait_port 127.0.0.1 "$px"
	agent_start -c "$C" -c "$P" -c "$S" "${agent[@]}"
}
# real_hops: the local hops a byte of a stream {} session is redirected
# over: 2 (client -> nginx, nginx -> server), 1 when spliced (client ->
# server, past nginx; a direction's first bytes, before it switched, take
# both: at least 1 of each byte's hops is counted)
real_hops() { if [ "${REAL_SPLICE:-0}" = 1 ]; then echo 1; else echo 2; fi; }
# splice_check LABEL MIN: with REAL_SPLICE=1, at least MIN directions
# switched past nginx since hops_mark
splice_check() {
	local w
	[ "${REAL_SPLICE:-0}" = 1 ] || return 0
	st w splice_switched
	assert_ge $((w - H_SW)) "$2" "$1: directions switched past nginx (+$((w - H_SW)))"
}
# real_client WHAT ARGS...: hops_mark, then `realapps.py ARGS...` in C; a
# mismatch or a timeout fails the test; PAYLOAD: the bytes it moved
real_client() {
	local what=$1
	shift
	hops_mark
	cg_exec "$C" "$PY3" "$REALAPPS" "$@" >"$TMP/client.out" 2>&1 ||
		fail_diag "client: $(tail -5 "$TMP/client.out")"
	cat "$TMP/client.out"
	ok "$what"
	PAYLOAD=$("$PY3" -c 'import json,sys; print(json.loads(sys.stdin.read().splitlines()[-1])["payload"])' \
		<"$TMP/client.out")
}

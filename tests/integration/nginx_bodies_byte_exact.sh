# timeout: 300
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: 1 MB and 20 MB random bodies served by an upstream nginx with
# sendfile on and with sendfile off, fetched by curl through a proxy nginx
# with every hop accelerated (client cgroup C, proxy P, upstream U), arrive
# byte-exact (sha256) every time: one connection per fetch, several fetches
# on one keep-alive connection, and several fetches in parallel.  In each
# sendfile mode pairs and redirected_bytes must move by more than a body's
# worth, so the bytes really went through the sockmap redirect.
. "$(dirname "$0")/../lib/common.sh"

U=$(cg_make up) || fail "$U"
P=$(cg_make px) || fail "$P"
C=$(cg_make cl) || fail "$C"

PORT_PX_ON=18180 PORT_UP_ON=18181 PORT_UP_OFF=18182 PORT_PX_OFF=18183
DIAG_PORTS="$PORT_PX_ON $PORT_UP_ON $PORT_UP_OFF $PORT_PX_OFF"
declare -A SHA SIZE

# Random bodies, different for each upstream so a mix-up can't match.
for mode in on off; do
	html=$TMP/nginx-up_$mode/html
	mkdir -p "$html"
	head -c $MIB /dev/urandom >"$html/1m.bin"
	head -c $((20 * MIB)) /dev/urandom >"$html/20m.bin"
	for f in 1m 20m; do
		SHA[$mode/$f]=$(sha256sum <"$html/$f.bin" | cut -d' ' -f1)
		SIZE[$mode/$f]=$(stat -c %s "$html/$f.bin")
	done
done

nginx_start up_on upstream.conf "$U" LISTEN=127.0.0.1:$PORT_UP_ON SENDFILE=on >/dev/null
nginx_start up_off upstream.conf "$U" LISTEN=127.0.0.1:$PORT_UP_OFF SENDFILE=off >/dev/null
nginx_start px_on proxy.conf "$P" LISTEN=127.0.0.1:$PORT_PX_ON \
	UPSTREAM=127.0.0.1:$PORT_UP_ON >/dev/null
nginx_start px_off proxy.conf "$P" LISTEN=127.0.0.1:$PORT_PX_OFF \
	UPSTREAM=127.0.0.1:$PORT_UP_OFF >/dev/null
for p in $PORT_UP_ON $PORT_UP_OFF $PORT_PX_ON $PORT_PX_OFF; do wait_port 127.0.0.1 $p; done

agent_start -c "$P" -c "$U" -c "$C"

# get NAME PORT FILE...: one curl in cgroup C, all FILEs on one keep-alive
# connection; bodies land in $TMP/NAME.1.. and status codes in NAME.codes.
get() {
	local name=$1 port=$2 f n=0 args=()
	shift 2
	for f in "$@"; do
		n=$((n + 1))
		args+=("http://127.0.0.1:$port/$f.bin" -o "$TMP/$name.$n")
	done
	cg_exec "$C" curl --noproxy '*' -sS --max-time 60 -w '%{http_code}\n' \
		"${args[@]}" >"$TMP/$name.codes" 2>"$TMP/$name.err"
	echo $? >"$TMP/$name.rc"
}
# check NAME MODE FILE...: what get NAME fetched is byte-exact
check() {
	local name=$1 mode=$2 f n=0 code sum size
	shift 2
	[ "$(cat "$TMP/$name.rc")" = 0 ] ||
		fail_diag "$name: curl exit $(cat "$TMP/$name.rc"): $(head -c 300 "$TMP/$name.err")"
	for f in "$@"; do
		n=$((n + 1))
		code=$(sed -n "${n}p" "$TMP/$name.codes")
		[ "$code" = 200 ] || fail_diag "$name: request $n (/$f.bin): HTTP status '$code'"
		size=$(stat -c %s "$TMP/$name.$n")
		sum=$(sha256sum <"$TMP/$name.$n" | cut -d' ' -f1)
		[ "$sum" = "${SHA[$mode/$f]}" ] ||
			fail_diag "$name: request $n (/$f.bin, sendfile $mode): sha256 mismatch, got $size bytes, want ${SIZE[$mode/$f]}"
		rm -f "$TMP/$name.$n"
		BYTES=$((BYTES + size))
	done
}

for mode in on off; do
	[ $mode = on ] && port=$PORT_PX_ON || port=$PORT_PX_OFF
	st pairs0 pairs
	st rb0 redirected_bytes
	BYTES=0
	log "sendfile $mode: sequential, one connection per fetch"
	for i in 1 2 3 4 5; do
		for f in 1m 20m; do
			get seq "$port" $f
			check seq "$mode" $f
		done
	done
	ok "sendfile $mode: 10 sequential fetches byte-exact"

	log "sendfile $mode: keep-alive, several bodies on one connection"
	files=(1m 20m 1m 1m 20m 1m)
	get ka "$port" "${files[@]}"
	check ka "$mode" "${files[@]}"
	ok "sendfile $mode: ${#files[@]} fetches on one keep-alive connection byte-exact"

	log "sendfile $mode: 8 clients in parallel, 3 bodies each"
	pids=()
	for i in 1 2 3 4 5 6 7 8; do
		[ $((i % 2)) = 0 ] && files=(20m 1m 1m) || files=(1m 1m 20m)
		get par$i "$port" "${files[@]}" &
		pids+=($!)
	done
	# wait for these only: a bare `wait` would wait for the agent too
	wait "${pids[@]}"
	for i in 1 2 3 4 5 6 7 8; do
		[ $((i % 2)) = 0 ] && files=(20m 1m 1m) || files=(1m 1m 20m)
		check par$i "$mode" "${files[@]}"
	done
	ok "sendfile $mode: 24 parallel fetches byte-exact"

	st pairs1 pairs
	st rb1 redirected_bytes
	log "sendfile $mode: $BYTES body bytes fetched, pairs $pairs0 -> $pairs1," \
		"redirected_bytes $rb0 -> $rb1"
	assert_ge $((pairs1 - pairs0)) 1 "sendfile $mode: new pairs formed"
	# Request and response headers are a few hundred bytes per fetch: more
	# than 1 MiB redirected means body bytes took the redirect path.
	assert_ge $((rb1 - rb0)) $MIB "sendfile $mode: redirected_bytes moved by body bytes"
done

agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent exited cleanly"

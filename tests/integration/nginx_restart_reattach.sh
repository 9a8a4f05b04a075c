#!/usr/bin/env bash
# timeout: 120
# Proves: acceleration survives an nginx restart that recreates its cgroup
# (systemctl restart, docker restart).  nginx runs in cgroup N; the agent
# is told its pid file.  nginx is stopped, N removed and made again at the
# same path (a new inode: the kernel dropped the attachment with the old
# one), nginx started again in it with a new pid.  Within a few follow
# intervals the agent has freed the dead slot and attached to the new N,
# status lists N once with its new id, and a client's connection to the
# new nginx is accelerated again.  The same with N named by --cgroup.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
PORT=18310
cg_new CC cli
N=$CG2/ngx-sockmap-test.$RUN_TAG.$$.nginx

start_nginx() { # in a fresh cgroup N
	mkdir "$N" || fail "mkdir $N"
	PREFIX=$(nginx_start up upstream.conf "$N" LISTEN=127.0.0.1:$PORT SENDFILE=off)
	wait_port 127.0.0.1 $PORT
	printf 'x%.0s' $(seq 1 20000) >"$PREFIX/html/20k.bin"
}
stop_nginx() {
	nginx_stop "$PREFIX"
	cg_remove "$N"
}
on_exit 'cg_remove "$N"'

# accelerated TEXT: a client connection to nginx gets its body and at
# least one send was redirected
accelerated() {
	local r0 r1
	st r0 redirected_msgs
	cg_exec "$CC" curl --noproxy '*' -sS --max-time 10 -o "$TMP/body" \
		"http://127.0.0.1:$PORT/20k.bin" || fail "$1: curl failed"
	[ "$(stat -c %s "$TMP/body")" = 20000 ] || fail "$1: short body"
	st r1 redirected_msgs
	assert_ge $((r1 - r0)) 1 "$1: the connection was redirected"
}
# ids_of PATH: the ids status --json lists for PATH
ids_of() {
	"$AGENT" status --json | python3 -c '
import json, sys
print(" ".join(str(c["id"]) for c in json.load(sys.stdin)["cgroups"] if c["path"] == sys.argv[1]))' "$1"
}

for how in pidfile cgroup; do
	start_nginx
	if [ $how = pidfile ]; then
		agent_start --nginx-pid-file "$PREFIX/nginx.pid" -c "$CC"
	else
		agent_start -c "$N" -c "$CC"
	fi
	old_id=$(stat -c %i "$N")
	assert_eq "$(ids_of "$N")" "$old_id" "$how: attached to nginx's cgroup"
	accelerated "$how: before the restart"
	stop_nginx
	start_nginx
	new_id=$(stat -c %i "$N")
	[ "$new_id" != "$old_id" ] || fail "$how: the new cgroup has the old inode"
	for _ in $(seq 1 50); do
		[ "$(ids_of "$N")" = "$new_id" ] && break
		sleep 0.2
	done
	assert_eq "$(ids_of "$N")" "$new_id" "$how: status lists the new cgroup, once"
	grep -q "^re-attached $N" "$TMP/agent.out" || fail "$how: agent did not say it re-attached"
	ok "$how: the agent said it re-attached"
	accelerated "$how: after the restart"
	agent_stop || fail "$how: agent did not exit 0"
	stop_nginx
done

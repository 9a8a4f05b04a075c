#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Inside a VM booted with systemd as PID 1 (tests/vm/systemd.sh): the
# Debian package as an operator uses it.
#   tests/vm/systemd-guest.sh DEB
#  1. dpkg -i while nginx is stopped: the unit is enabled, postinst starts
#     neither it nor nginx;
#  2. systemctl start nginx: the agent starts with it (wanted by it), is
#     active (Type=notify: READY=1 came) with the ready line as its status,
#     attached to nginx's cgroup (status; bpftool: its sock_ops there), and
#     a request through nginx's proxy to nginx's upstream (both in that
#     cgroup) is paired and redirected; its log is in the journal;
#  3. systemctl restart nginx: the agent restarts too (a new pid), attached
#     to nginx's new cgroup, redirecting again;
#  4. systemctl stop nginx: the agent stops with it, and none of its
#     programs is loaded or attached anywhere, no pins, no run directory;
#  5. started again, then dpkg --purge: stopped, nothing attached, no file
#     of the package left, enablement gone; nginx still runs;
#  6. dpkg -i while nginx runs: postinst starts the agent, attached and
#     redirecting (what `apt install` gives on a host with nginx).
# Prints "ok - ..." per check, "FAIL: ..." and exits 1 at the first failure.
set -u
DEB=$1
ok() { echo "ok - $*"; }
fail() {
	echo "FAIL: $*"
	echo "--- systemctl status ngx-sockmap nginx"
	systemctl --no-pager status ngx-sockmap nginx 2>&1 | head -40
	echo "--- journal of ngx-sockmap"
	journalctl --no-pager -b -u ngx-sockmap 2>&1 | tail -40
	exit 1
}
progs() { # the agent's programs loaded anywhere (by name)
	bpftool prog show 2>/dev/null | grep -cE ' name (sockops_track|msg_redirect|sockopt_set) '
}
cg_progs() { # CGROUP: the agent's programs attached to it
	bpftool cgroup show "$1" 2>/dev/null | grep -cE 'sockops_track|sockopt_set'
}
wait_for() { # wait_for SECS CMD...: until CMD succeeds
	local n=$(($1 * 5))
	shift
	while [ $n -gt 0 ]; do "$@" && return 0; sleep 0.2; n=$((n - 1)); done
	return 1
}
CG=/sys/fs/cgroup/system.slice/nginx.service

echo "systemd $(systemctl --version | head -1 | cut -d' ' -f2), state: $(systemctl is-system-running)"
systemctl is-active --quiet nginx && systemctl stop nginx
# The shared root is a Docker image's, whose policy-rc.d (exit 101) keeps
# maintainer scripts from starting or stopping services; a host has none.
# Gone from the guest's overlay only.
rm -f /usr/sbin/policy-rc.d
# a proxy and its upstream, both nginx's: a connection between them has
# both ends in nginx's cgroup, paired from the first request
cat >/etc/nginx/conf.d/ngxsm-vmtest.conf <<'NGX'
upstream ngxsm_up { server 127.0.0.1:18081; keepalive 8; }
server {
    listen 127.0.0.1:18080;
    location / { proxy_pass http://ngxsm_up; proxy_http_version 1.1; proxy_set_header Connection ""; }
}
server { listen 127.0.0.1:18081; location / { return 200 "hello from upstream\n"; } }
NGX

# 1.
dpkg -i "$DEB" >/tmp/dpkg.log 2>&1 || fail "dpkg -i: $(tail -10 /tmp/dpkg.log)"
[ "$(systemctl is-enabled ngx-sockmap)" = enabled ] || fail "not enabled: $(systemctl is-enabled ngx-sockmap)"
[ -L /etc/systemd/system/nginx.service.wants/ngx-sockmap.service ] || fail "not wanted by nginx.service"
# what systemd has loaded, not only what is on disk (postinst's reload)
systemctl show -p Wants --value nginx.service | grep -qw ngx-sockmap.service ||
	fail "systemd does not know nginx.service wants ngx-sockmap (no daemon-reload?): $(systemctl show -p Wants --value nginx.service)"
systemctl is-active --quiet ngx-sockmap && fail "postinst started the agent with nginx stopped"
systemctl is-active --quiet nginx && fail "postinst started nginx"
ok "installed and enabled (systemd knows nginx.service wants it); neither it nor nginx started"

# redirected: one request through the proxy; the pair counts
check_redirect() { # LABEL
	local p0 p1 b1 body
	p0=$(ngx-sockmap status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["pairs"])')
	body=$(curl -s --max-time 10 http://127.0.0.1:18080/) || fail "$1: curl through the proxy failed"
	[ "$body" = "hello from upstream" ] || fail "$1: wrong body: $body"
	curl -s --max-time 10 http://127.0.0.1:18080/ >/dev/null
	read -r p1 b1 < <(ngx-sockmap status --json | python3 -c 'import json,sys; v=json.load(sys.stdin); print(v["pairs"], v["redirected_bytes"])')
	[ "$p1" -gt "$p0" ] || fail "$1: no pair formed (pairs $p0 -> $p1): $(ngx-sockmap status | head -30)"
	[ "$b1" -gt 0 ] || fail "$1: nothing redirected: $(ngx-sockmap status | head -30)"
	ok "$1: proxy -> upstream paired (pairs $p0 -> $p1), $b1 bytes redirected, the body exact"
}
attached() { # LABEL: active, attached to nginx's cgroup, says so
	local st
	wait_for 120 systemctl is-active --quiet ngx-sockmap ||
		fail "$1: the agent is not active: $(systemctl is-active ngx-sockmap)"
	st=$(systemctl show -p StatusText --value ngx-sockmap)
	case $st in "ready: attached to "*) ;; *) fail "$1: status text '$st'" ;; esac
	case $st in *"NOT accelerating"*) fail "$1: the agent refused this kernel: $st" ;; esac
	ngx-sockmap status | grep -q "^cgroup *$CG " ||
		fail "$1: status names no $CG: $(ngx-sockmap status | grep '^cgroup')"
	[ "$(cg_progs "$CG")" -ge 1 ] || fail "$1: no program of the agent on $CG: $(bpftool cgroup show "$CG")"
	ok "$1: active (READY=1: '$st'), attached to $CG"
}

# 2.
systemctl start nginx || fail "systemctl start nginx"
attached "nginx started"
pid1=$(systemctl show -p MainPID --value ngx-sockmap)
check_redirect "nginx started"
journalctl --no-pager -b -u ngx-sockmap | grep -q 'ready: attached to' ||
	fail "no ready line in the journal: $(journalctl --no-pager -b -u ngx-sockmap | tail -5)"
ok "its log is in the journal"

# 3.
systemctl restart nginx || fail "systemctl restart nginx"
attached "nginx restarted"
pid2=$(systemctl show -p MainPID --value ngx-sockmap)
[ "$pid2" != "$pid1" ] || fail "the agent was not restarted with nginx (pid $pid1)"
ok "restarted with nginx (pid $pid1 -> $pid2)"
check_redirect "nginx restarted"

# 4.
nothing_left() { # LABEL
	[ "$(progs)" = 0 ] || fail "$1: programs of the agent still loaded: $(bpftool prog show | grep -E 'sockops_track|msg_redirect|sockopt_set')"
	[ ! -e /sys/fs/bpf/ngx-sockmap ] || fail "$1: pins left in /sys/fs/bpf/ngx-sockmap"
	[ ! -e /run/ngx-sockmap ] || fail "$1: /run/ngx-sockmap left: $(ls -la /run/ngx-sockmap)"
	ok "$1: no program of the agent loaded or attached, no pins, no run directory"
}
systemctl stop nginx || fail "systemctl stop nginx"
systemctl is-active --quiet ngx-sockmap && fail "the agent still runs with nginx stopped"
ok "nginx stopped: the agent stopped with it ($(systemctl is-active ngx-sockmap))"
wait_for 10 sh -c '[ "$(bpftool prog show 2>/dev/null | grep -cE " name (sockops_track|msg_redirect|sockopt_set) ")" = 0 ]'
nothing_left "stopped with nginx"

# 5.
systemctl start nginx || fail "systemctl start nginx (again)"
attached "started again"
dpkg --purge ngx-sockmap >/tmp/purge.log 2>&1 || fail "dpkg --purge: $(tail -10 /tmp/purge.log)"
systemctl is-active --quiet ngx-sockmap && fail "the agent runs after purge"
wait_for 10 sh -c '[ "$(bpftool prog show 2>/dev/null | grep -cE " name (sockops_track|msg_redirect|sockopt_set) ")" = 0 ]'
nothing_left "purged"
for f in /usr/sbin/ngx-sockmap /lib/systemd/system/ngx-sockmap.service /etc/default/ngx-sockmap \
	 /etc/systemd/system/nginx.service.wants/ngx-sockmap.service /usr/share/doc/ngx-sockmap; do
	[ ! -e "$f" ] && [ ! -L "$f" ] || fail "purge left $f"
done
systemctl is-active --quiet nginx || fail "purging the agent stopped nginx"
ok "purged: no file left, not enabled, nginx still running"

# 6.
dpkg -i "$DEB" >/tmp/dpkg2.log 2>&1 || fail "dpkg -i (nginx running): $(tail -10 /tmp/dpkg2.log)"
attached "installed while nginx runs: postinst started it"
check_redirect "installed while nginx runs"
echo "all passed"

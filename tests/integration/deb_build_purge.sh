# timeout: 1500
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: `make deb` (scripts/deb.sh) builds a package from this tree with
# debhelper that is lintian-clean (no error or warning not overridden in
# debian/ngx-sockmap.lintian-overrides, pedantic), and that, in a fresh
# Debian 12 minbase chroot (debootstrap, cached in build/chroot/):
#  1. `apt-get install -t bookworm-backports ./ngx-sockmap_*.deb` pulls in
#     every library it links (the installed agent runs:
#     `ngx-sockmap --version`), and without backports it is refused
#     (libbpf1 >= 1.4: bookworm's 1.1 can't load arena maps);
#  2. it installs the agent, the unit (naming /usr/sbin/ngx-sockmap),
#     ngx-sockmap(8), the options file as a conffile, and enables the
#     unit: wanted by nginx.service, nginx not being installed;
#  3. postinst starts nothing there (no systemd, no nginx), and exits 0;
#  4. `apt-get purge` and `autoremove --purge` leave the chroot as it was
#     before the install: not one file more, less or changed outside
#     dpkg's and apt's own state (files, conffile, enablement symlinks,
#     deb-systemd-helper's state).
#  5. the nginx modules' packages (libnginx-mod-http-sockmap,
#     libnginx-mod-stream-sockmap), installed beside Debian's nginx, are
#     enabled the Debian way (/etc/nginx/modules-enabled links to their
#     mod-*.conf in /usr/share/nginx/modules-available, stream after
#     mod-stream.conf), need nginx's ABI (nginx-abi-*) and pull in
#     libnginx-mod-stream; `nginx -t` loads them with Debian's nginx.conf;
#     a request and a stream {} session through the chroot's nginx log
#     $sockmap ("no_agent", or what an agent on the host says); purging
#     them leaves the chroot as it was with nginx alone.
# No systemd runs in a chroot: the unit running, following nginx and
# leaving nothing attached is tests/vm/systemd.sh's.
. "$(dirname "$0")/../lib/common.sh"
for t in dpkg-buildpackage dh dpkg-checkbuilddeps debootstrap; do
	command -v $t >/dev/null || skip "SKIP: no $t (apt-get install debhelper dpkg-dev debootstrap)"
done
dpkg-checkbuilddeps -d 'debhelper-compat (= 13)' /dev/null 2>/dev/null ||
	skip "SKIP: debhelper is too old for compat 13"
[ "$(id -u)" = 0 ] || skip "SKIP: debootstrap and chroot need root"

# the package
DEB_OUT=$TMP/deb "$TOP/scripts/deb.sh" >"$TMP/deb.log" 2>&1 ||
	fail "make deb: $(tail -20 "$TMP/deb.log")"
DEB=$(ls "$TMP"/deb/ngx-sockmap_*.deb)
[ -f "$DEB" ] || fail "no package in $TMP/deb: $(ls "$TMP/deb")"
ok "make deb: $(basename "$DEB")"
MODS=
for m in http stream; do
	f=$(ls "$TMP"/deb/libnginx-mod-$m-sockmap_*.deb 2>/dev/null)
	[ -f "$f" ] || fail "make deb made no libnginx-mod-$m-sockmap: $(ls "$TMP/deb")"
	MODS="$MODS $f"
done
ok "make deb: beside it$(for f in $MODS; do printf ' %s' "$(basename "$f")"; done)"
if command -v lintian >/dev/null; then
	lintian --pedantic -I "$TMP"/deb/*.changes >"$TMP/lintian.out" 2>&1
	grep -E '^[EW]: ' "$TMP/lintian.out" >"$TMP/lintian.ew"
	[ ! -s "$TMP/lintian.ew" ] || fail "lintian: $(cat "$TMP/lintian.ew")"
	ok "lintian --pedantic: no error or warning ($(grep -c '^[IP]: ' "$TMP/lintian.out") info/pedantic)"
else
	log "no lintian (apt-get install lintian): the package is not checked by it"
fi

# a fresh bookworm, once (debootstrap takes a minute or two), then copied
CACHE=$TOP/build/chroot/bookworm-minbase.tar
MIRROR=$("$TOP/scripts/apt-mirror.sh")
if [ ! -s "$CACHE" ]; then
	log "debootstrap --variant=minbase bookworm from $MIRROR into $CACHE (once)"
	mkdir -p "$(dirname "$CACHE")"
	B=$TMP/bootstrap
	debootstrap --variant=minbase bookworm "$B" "$MIRROR" >"$TMP/debootstrap.log" 2>&1 ||
		skip "SKIP: debootstrap failed (mirror $MIRROR unreachable?): $(tail -3 "$TMP/debootstrap.log")"
	# libbpf >= 1.4 is in bookworm-backports, as on the hosts (make deps)
	printf 'deb %s bookworm main\ndeb %s bookworm-backports main\n' "$MIRROR" "$MIRROR" \
		>"$B/etc/apt/sources.list"
	echo 'APT::Install-Recommends "false";' >"$B/etc/apt/apt.conf.d/90ngx-sockmap"
	cp /etc/resolv.conf "$B/etc/resolv.conf"
	chroot "$B" apt-get update -qq >"$TMP/update.log" 2>&1 ||
		skip "SKIP: apt-get update in the chroot failed: $(tail -3 "$TMP/update.log")"
	tar --numeric-owner -C "$B" -cf "$CACHE.tmp" . && mv "$CACHE.tmp" "$CACHE"
	rm -rf "$B"
fi
R=$TMP/root
mkdir "$R"
tar --numeric-owner -C "$R" -xf "$CACHE" || fail "unpacking $CACHE"
cp /etc/resolv.conf "$R/etc/resolv.conf"
cp "$DEB" $MODS "$R/tmp/"
# every file outside dpkg's and apt's own state, with its checksum
snapshot() {
	(cd "$R" && find . -xdev \( -path ./var/lib/dpkg -o -path ./var/lib/apt -o -path ./var/cache \
		-o -path ./var/log -o -path ./tmp -o -path ./proc -o -path ./dev \) -prune -o -print0 |
		sort -z | xargs -0 -r sh -c 'for f; do
			if [ -L "$f" ]; then echo "$f -> $(readlink "$f")";
			elif [ -f "$f" ]; then echo "$f $(md5sum <"$f" | cut -c1-32)";
			else echo "$f/"; fi; done' sh)
}
snapshot >"$TMP/before"

export DEBIAN_FRONTEND=noninteractive
chroot "$R" apt-get install -y -q "/tmp/$(basename "$DEB")" >"$TMP/install0.log" 2>&1 &&
	fail "installed with bookworm's libbpf1 1.1: Depends lacks libbpf1 (>= 1:1.4)"
grep -q 'Depends: libbpf1 (>= 1:1.4)' "$TMP/install0.log" ||
	fail "refused without backports, but not for libbpf1: $(tail -5 "$TMP/install0.log")"
ok "without backports apt refuses it: libbpf1 (>= 1:1.4)"

# -t bookworm-backports: libbpf1 >= 1.4 is only there, and apt does not
# take a backport unasked (as the README's command says)
chroot "$R" apt-get install -y -q -t bookworm-backports "/tmp/$(basename "$DEB")" >"$TMP/install.log" 2>&1 ||
	fail "apt-get install: $(tail -15 "$TMP/install.log")"
ok "apt-get install ./$(basename "$DEB") in a fresh bookworm (with backports)"
log "pulled in: $(sed -n 's/^Setting up \([^ ]*\) .*/\1/p' "$TMP/install.log" | tr '\n' ' ')"
chroot "$R" ngx-sockmap --version >"$TMP/version" 2>&1 ||
	fail "the installed agent does not run (a library missing from Depends?): $(cat "$TMP/version")"
ok "the installed agent runs: $(cat "$TMP/version") (every library it links came with the package)"
for f in /usr/sbin/ngx-sockmap /lib/systemd/system/ngx-sockmap.service /etc/default/ngx-sockmap \
	 /usr/share/man/man8/ngx-sockmap.8.gz /usr/share/doc/ngx-sockmap/copyright \
	 /usr/share/doc/ngx-sockmap/examples/proxy.conf; do
	[ -e "$R$f" ] || fail "$f not installed"
done
grep -q '^ExecStart=/usr/sbin/ngx-sockmap run ' "$R/lib/systemd/system/ngx-sockmap.service" ||
	fail "the unit's ExecStart: $(grep ExecStart "$R/lib/systemd/system/ngx-sockmap.service")"
chroot "$R" dpkg-query -W -f='${Conffiles}\n' ngx-sockmap | grep -q '/etc/default/ngx-sockmap' ||
	fail "/etc/default/ngx-sockmap is not a conffile"
ok "agent, unit, man page, docs installed; /etc/default/ngx-sockmap is a conffile"
W=$R/etc/systemd/system/nginx.service.wants/ngx-sockmap.service
[ -L "$W" ] || fail "the unit is not enabled (no $W): $(ls -R "$R/etc/systemd/system" 2>&1 | head)"
ok "enabled: wanted by nginx.service, nginx not installed ($(readlink "$W"))"
grep -qi 'ngx-sockmap.*\(fail\|error\)' "$TMP/install.log" && fail "install said: $(grep -i 'fail\|error' "$TMP/install.log")"
ok "postinst: no error, nothing started (no systemd here)"

chroot "$R" apt-get purge -y -q ngx-sockmap >"$TMP/purge.log" 2>&1 || fail "apt-get purge: $(tail -10 "$TMP/purge.log")"
chroot "$R" apt-get autoremove --purge -y -q >>"$TMP/purge.log" 2>&1 || fail "apt-get autoremove: $(tail -10 "$TMP/purge.log")"
chroot "$R" dpkg -l ngx-sockmap 2>/dev/null | grep -q '^.[^n]' && fail "dpkg still knows ngx-sockmap: $(chroot "$R" dpkg -l ngx-sockmap | tail -1)"
snapshot >"$TMP/after"
d=$(diff "$TMP/before" "$TMP/after")
[ -z "$d" ] || fail "purge left the chroot changed: $(echo "$d" | head -20)"
ok "purge + autoremove: the chroot is as before the install (every file, link and checksum)"

# 5. the modules, beside Debian's nginx.  nginx's maintainer scripts must
# not start it in the chroot (it would listen on the host's port 80: the
# chroot shares the host's network): policy-rc.d forbids every start.
printf '#!/bin/sh\nexit 101\n' >"$R/usr/sbin/policy-rc.d"
chmod 0755 "$R/usr/sbin/policy-rc.d"
chroot "$R" apt-get install -y -q nginx >"$TMP/nginx.log" 2>&1 ||
	fail "apt-get install nginx: $(tail -10 "$TMP/nginx.log")"
abi=$(chroot "$R" dpkg-query -W -f='${Provides}\n' nginx | tr ',' '\n' | grep -o 'nginx-abi-[^ ]*')
log "the chroot's nginx: $(chroot "$R" dpkg-query -W -f='${Version}' nginx), $abi"
# nginx makes its pid file and temp paths (/var/lib/nginx/*) the first time
# it reads its config: once here, so that the comparison after the purge
# sees what the modules' packages left, not what nginx made
chroot "$R" nginx -t >"$TMP/nginx-t0.log" 2>&1 || fail "nginx -t, nginx alone: $(cat "$TMP/nginx-t0.log")"
snapshot >"$TMP/nginx.before"
for f in $MODS; do
	dep=$(dpkg-deb -f "$f" Depends)
	echo "$dep" | grep -q "$abi" || fail "$(basename "$f"): Depends lacks nginx's ABI $abi: $dep"
done
dpkg-deb -f "$(echo $MODS | tr ' ' '\n' | grep stream)" Depends | grep -q 'libnginx-mod-stream\b' ||
	fail "libnginx-mod-stream-sockmap does not depend on libnginx-mod-stream"
ok "Depends: nginx's ABI ($abi) for both, libnginx-mod-stream for the stream one"
chroot "$R" apt-get install -y -q $(for f in $MODS; do printf ' /tmp/%s' "$(basename "$f")"; done) \
	>"$TMP/mods.log" 2>&1 || fail "apt-get install the modules: $(tail -10 "$TMP/mods.log")"
E=$R/etc/nginx/modules-enabled
for l in 50-mod-http-sockmap.conf:mod-http-sockmap.conf 70-mod-stream-sockmap.conf:mod-stream-sockmap.conf; do
	[ "$(readlink "$E/${l%%:*}")" = "/usr/share/nginx/modules-available/${l#*:}" ] ||
		fail "no link $E/${l%%:*} -> ${l#*:}: $(ls -l "$E")"
done
# nginx.conf includes modules-enabled/*.conf in order: stream's core first
first=$(ls "$E" | grep -n 'mod-stream.conf$' | cut -d: -f1)
mine=$(ls "$E" | grep -n 'mod-stream-sockmap.conf$' | cut -d: -f1)
[ -n "$first" ] && [ "$mine" -gt "$first" ] || fail "mod-stream-sockmap.conf is not loaded after mod-stream.conf: $(ls "$E")"
for m in http stream; do
	grep -qx "load_module modules/ngx_${m}_sockmap_module.so;" \
		"$R/usr/share/nginx/modules-available/mod-$m-sockmap.conf" ||
		fail "mod-$m-sockmap.conf: $(cat "$R/usr/share/nginx/modules-available/mod-$m-sockmap.conf")"
done
ok "enabled: $(ls "$E" | tr '\n' ' ')"
chroot "$R" nginx -t >"$TMP/nginx-t.log" 2>&1 || fail "nginx -t with the modules: $(cat "$TMP/nginx-t.log")"
ok "nginx -t loads them with Debian's nginx.conf"

# A server of the chroot's nginx that logs $sockmap, on loopback ports
# (the host's network), started from a config that includes the enabled
# modules as Debian's nginx.conf does
PORT_H=18660 PORT_S=18661
cat >"$R/tmp/sockmap-test.conf" <<EOC
include /etc/nginx/modules-enabled/*.conf;
user root;
worker_processes 1;
pid /tmp/sockmap-test.pid;
error_log /tmp/sockmap-error.log notice;
events { worker_connections 64; }
http {
    log_format sm '\$request_uri client=\$sockmap upstream=\$sockmap_upstream';
    access_log /tmp/sockmap-access.log sm;
    server { listen 127.0.0.1:$PORT_H; location / { return 200 "hello\\n"; } }
}
stream {
    log_format sm 'stream client=\$sockmap upstream=\$sockmap_upstream';
    access_log /tmp/sockmap-stream.log sm;
    server { listen 127.0.0.1:$PORT_S; proxy_pass 127.0.0.1:$PORT_H; }
}
EOC
chroot "$R" nginx -c /tmp/sockmap-test.conf >"$TMP/nginx-run.log" 2>&1 ||
	fail "nginx with \$sockmap in log_format: $(cat "$TMP/nginx-run.log")"
stop_chroot_nginx() {
	local p
	p=$(cat "$R/tmp/sockmap-test.pid" 2>/dev/null) || return 0
	kill "$p" 2>/dev/null
	for _ in $(seq 1 50); do
		kill -0 "$p" 2>/dev/null || { rm -f "$R/tmp/sockmap-test.pid"; return 0; }
		sleep 0.1
	done
	fail "the chroot's nginx (pid $p) did not stop"
}
on_exit "[ -s '$R/tmp/sockmap-test.pid' ] && kill \$(cat '$R/tmp/sockmap-test.pid')"
wait_port 127.0.0.1 $PORT_H
wait_port 127.0.0.1 $PORT_S
curl -s -m 10 "http://127.0.0.1:$PORT_H/direct" >/dev/null || fail "GET /direct from the chroot's nginx"
curl -s -m 10 "http://127.0.0.1:$PORT_S/viastream" >/dev/null || fail "GET /viastream through its stream {}"
# nginx logs a session when it ends: stop it, then read the logs
stop_chroot_nginx
# what an agent on this host says about a process outside nginx's cgroup,
# or no_agent: either is the module answering; "" or a literal would not
want='(no_agent|not_tracked|pending|paired|redirected|no_peer|[a-z_]+)'
grep -Eqx "/direct client=$want upstream=-" "$R/tmp/sockmap-access.log" ||
	fail "access log: $(cat "$R/tmp/sockmap-access.log")"
grep -Eqx "stream client=$want upstream=$want" "$R/tmp/sockmap-stream.log" ||
	fail "stream log: $(cat "$R/tmp/sockmap-stream.log")"
ok "a request and a stream session log \$sockmap: $(grep /direct "$R/tmp/sockmap-access.log"); $(cat "$R/tmp/sockmap-stream.log")"
rm -f "$R"/tmp/sockmap-*

chroot "$R" apt-get purge -y -q libnginx-mod-http-sockmap libnginx-mod-stream-sockmap >"$TMP/mpurge.log" 2>&1 ||
	fail "apt-get purge the modules: $(tail -10 "$TMP/mpurge.log")"
chroot "$R" apt-get autoremove --purge -y -q >>"$TMP/mpurge.log" 2>&1 || fail "apt-get autoremove: $(tail -10 "$TMP/mpurge.log")"
snapshot >"$TMP/nginx.after"
d=$(diff "$TMP/nginx.before" "$TMP/nginx.after")
[ -z "$d" ] || fail "purging the modules left the chroot changed: $(echo "$d" | head -20)"
chroot "$R" nginx -t >"$TMP/nginx-t2.log" 2>&1 || fail "nginx -t after the purge: $(cat "$TMP/nginx-t2.log")"
ok "purge + autoremove: as with nginx alone (links, .so, snippets, libnginx-mod-stream gone); nginx -t passes"

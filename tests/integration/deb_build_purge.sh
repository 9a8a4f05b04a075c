# timeout: 600
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
cp "$DEB" "$R/tmp/"
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

# timeout: 120
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: `make install DESTDIR=... PREFIX=...` puts the agent in sbin, the
# unit where systemd reads units (ExecStart naming that sbin, the options
# file under the same etc), ngx-sockmap(8) (a page man renders without
# warnings, with a subsection for every command `ngx-sockmap --help`
# lists), the options file, and README, DESIGN and the nginx-conf examples
# under share/doc, the Grafana dashboard and the Prometheus rules under
# share/ngx-sockmap; a second install keeps a changed options file; `make
# uninstall` with the same variables leaves no file and no directory of
# ours behind (a changed options file is kept, and said so); for PREFIX=/usr
# and for the default /usr/local.
. "$(dirname "$0")/../lib/common.sh"
command -v install >/dev/null || skip "SKIP: no install(1) (coreutils)"
command -v python3 >/dev/null || skip "SKIP: no python3 (the man page generator)"

# check PREFIX SBIN UNITDIR ETC MAN DOC: one install and uninstall
check() {
	local prefix=$1 sbin=$2 unitdir=$3 etc=$4 man=$5 doc=$6 D=$TMP/dest-${1//\//_} f
	make -s -C "$TOP" install DESTDIR="$D" PREFIX="$prefix" >"$TMP/install.log" 2>&1 ||
		fail "make install PREFIX=$prefix: $(tail -5 "$TMP/install.log")"
	for f in "$sbin/ngx-sockmap" "$unitdir/ngx-sockmap.service" "$man/man8/ngx-sockmap.8" \
		 "$etc/default/ngx-sockmap" "$doc/README.md" "$doc/DESIGN.md" \
		 "$doc/examples/proxy.conf" "$doc/examples/upstream.conf" "$doc/runbook.md" \
		 "$prefix/share/ngx-sockmap/grafana/ngx-sockmap.json" \
		 "$prefix/share/ngx-sockmap/prometheus/alerts.yml" \
		 "$prefix/share/ngx-sockmap/prometheus/prometheus.yml"; do
		[ -s "$D$f" ] || fail "PREFIX=$prefix: $f not installed"
	done
	[ -x "$D$sbin/ngx-sockmap" ] || fail "PREFIX=$prefix: $sbin/ngx-sockmap is not executable"
	"$D$sbin/ngx-sockmap" --version | grep -q '^ngx-sockmap ' || fail "the installed agent does not run"
	ok "PREFIX=$prefix: agent, unit, man page, options file, docs, examples, dashboard and rules installed"
	grep -qx "ExecStart=$sbin/ngx-sockmap run \$NGX_SOCKMAP_OPTS" "$D$unitdir/ngx-sockmap.service" ||
		fail "PREFIX=$prefix: ExecStart does not name $sbin: $(grep ExecStart "$D$unitdir/ngx-sockmap.service")"
	grep -qx "EnvironmentFile=-$etc/default/ngx-sockmap" "$D$unitdir/ngx-sockmap.service" ||
		fail "PREFIX=$prefix: EnvironmentFile is not $etc/default/ngx-sockmap"
	ok "PREFIX=$prefix: the unit runs $sbin/ngx-sockmap with the options of $etc/default/ngx-sockmap"
	if command -v man >/dev/null; then
		MANWIDTH=100 LC_ALL=C.UTF-8 man --warnings -l "$D$man/man8/ngx-sockmap.8" \
			>"$TMP/man.txt" 2>"$TMP/man.err" || fail "man can't render the page: $(head -3 "$TMP/man.err")"
		[ ! -s "$TMP/man.err" ] || fail "man warns about the page: $(head -5 "$TMP/man.err")"
		for c in $("$TOP/build/ngx-sockmap" --help | sed -n '/^COMMANDS:/,/^$/s/^  \([a-z]*\) .*/\1/p'); do
			grep -q "^   ngx-sockmap $c \[OPTION" "$TMP/man.txt" ||
				fail "the man page has no subsection for '$c'"
		done
		grep -q -- "--nginx-pid-file=FILE" "$TMP/man.txt" ||
			fail "the man page lacks run's --nginx-pid-file"
		ok "the man page renders without warnings, every command and run's options in it"
	else
		log "no man(1): the page is not rendered"
	fi
	# a changed options file survives a reinstall and an uninstall
	echo 'NGX_SOCKMAP_OPTS="--cgroup=system.slice/nginx.service --ports=80"' >>"$D$etc/default/ngx-sockmap"
	make -s -C "$TOP" install DESTDIR="$D" PREFIX="$prefix" >/dev/null 2>&1 || fail "second install"
	grep -q -- '--ports=80"$' "$D$etc/default/ngx-sockmap" || fail "a reinstall overwrote the changed options file"
	make -s -C "$TOP" uninstall DESTDIR="$D" PREFIX="$prefix" >"$TMP/uninstall.log" 2>&1 ||
		fail "make uninstall: $(tail -5 "$TMP/uninstall.log")"
	grep -q "kept $D$etc/default/ngx-sockmap: it was changed" "$TMP/uninstall.log" ||
		fail "uninstall did not say it kept the changed options file: $(cat "$TMP/uninstall.log")"
	ok "PREFIX=$prefix: a changed options file is kept by install and uninstall, and said so"
	rm "$D$etc/default/ngx-sockmap"
	# as shipped: everything goes
	make -s -C "$TOP" install DESTDIR="$D" PREFIX="$prefix" >/dev/null 2>&1 || fail "third install"
	make -s -C "$TOP" uninstall DESTDIR="$D" PREFIX="$prefix" >/dev/null 2>&1 || fail "second uninstall"
	left=$(find "$D" -not -type d; find "$D" -name '*ngx-sockmap*')
	[ -z "$left" ] || fail "PREFIX=$prefix: uninstall left: $(echo $left)"
	ok "PREFIX=$prefix: uninstall leaves no file and no directory of ours"
}
check /usr /usr/sbin /lib/systemd/system /etc /usr/share/man /usr/share/doc/ngx-sockmap
check /usr/local /usr/local/sbin /usr/local/lib/systemd/system /usr/local/etc \
	/usr/local/share/man /usr/local/share/doc/ngx-sockmap

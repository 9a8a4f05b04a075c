# timeout: 90
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: the installed unit (make install DESTDIR) is one systemd accepts
# and one that follows nginx, with the sandbox it claims:
#  1. `systemd-analyze verify` prints nothing and exits 0 (its man page
#     resolves from the same install; nginx.service from the host, or a
#     stand-in where nginx is not installed);
#  2. it is Type=notify, ordered after, bound to and part of
#     nginx.service, wanted by it, with its options from the
#     EnvironmentFile and nothing pinned, reloads with SIGHUP, and may
#     write its own cgroup on either layout (each path optional);
#  3. its capability bounding set is exactly the five the agent uses, and
#     systemd-analyze rates only those four of its capability groups open
#     (it does not rate CAP_PERFMON);
#  4. `systemd-analyze security --offline` rates it at most
#     SECURITY_THRESHOLD (3.5; it is 3.0: root with CAP_SYS_ADMIN, host
#     network): a protection dropped from the unit fails here.
. "$(dirname "$0")/../lib/common.sh"
command -v systemd-analyze >/dev/null || skip "SKIP: no systemd-analyze (package systemd)"
command -v python3 >/dev/null || skip "SKIP: no python3 (the man page generator)"
SECURITY_THRESHOLD=${SECURITY_THRESHOLD:-3.5}
D=$TMP/dest
make -s -C "$TOP" install DESTDIR="$D" PREFIX=/usr >"$TMP/install.log" 2>&1 ||
	fail "make install: $(tail -5 "$TMP/install.log")"
U=$D/lib/systemd/system/ngx-sockmap.service
# verify checks that ExecStart's binary exists: the installed one
V=$TMP/units
mkdir -p "$V"
sed "s|^ExecStart=/usr/sbin/|ExecStart=$D/usr/sbin/|" "$U" >"$V/ngx-sockmap.service"
upath=
if [ ! -e /lib/systemd/system/nginx.service ] && [ ! -e /etc/systemd/system/nginx.service ]; then
	log "nginx is not installed here: a stand-in nginx.service"
	printf '[Unit]\nDescription=stand-in\n[Service]\nType=forking\nExecStart=/bin/true\n' >"$V/nginx.service"
	upath=$V:
fi
# sa ARGS: systemd-analyze with the stand-in's unit path, if any
sa() { env ${upath:+SYSTEMD_UNIT_PATH=$upath} MANPATH="$D/usr/share/man" systemd-analyze "$@"; }
sa verify "$V/ngx-sockmap.service" >"$TMP/verify.out" 2>&1
rc=$?
[ $rc = 0 ] && [ ! -s "$TMP/verify.out" ] ||
	fail "systemd-analyze verify (exit $rc): $(cat "$TMP/verify.out")"
ok "systemd-analyze verify: no complaint"

prop() { # prop KEY: the unit's values of KEY, space-separated
	sed -n "s/^$1=//p" "$U" | tr '\n' ' ' | sed 's/ $//'
}
assert_eq "$(prop Type)" notify "Type=notify"
assert_eq "$(prop After | tr ' ' '\n' | grep -c '^nginx.service$')" 1 "ordered after nginx.service"
assert_eq "$(prop BindsTo)" nginx.service "bound to nginx.service (stops with it)"
assert_eq "$(prop PartOf)" nginx.service "part of nginx.service (restarts with it)"
assert_eq "$(prop WantedBy)" nginx.service "enabled, it starts with nginx.service"
assert_eq "$(prop EnvironmentFile)" "-/etc/default/ngx-sockmap" "options from /etc/default/ngx-sockmap, optional"
grep -q -- '--pin' <(grep -v '^#' "$U") && fail "the unit pins: $(grep -- --pin "$U")"
grep -q '^ExecStart=.*\$NGX_SOCKMAP_OPTS$' "$U" || fail "ExecStart does not take \$NGX_SOCKMAP_OPTS"
ok "ExecStart takes \$NGX_SOCKMAP_OPTS, no --pin"
assert_eq "$(prop ExecReload)" '/bin/kill -HUP $MAINPID' "systemctl reload sends SIGHUP (the agent reloads)"
# its cgroup subtree, on a v2-only host and on a hybrid one; a path the
# host lacks must not keep the unit from starting
for p in /sys/fs/cgroup/system.slice/ngx-sockmap.service \
	/sys/fs/cgroup/unified/system.slice/ngx-sockmap.service; do
	prop ReadWritePaths | tr ' ' '\n' | grep -qx -- "-$p" ||
		fail "ReadWritePaths lacks -$p (optional): $(prop ReadWritePaths)"
done
ok "ReadWritePaths: the agent's cgroup on both layouts, each optional"

# the capability set as systemd computes it
sa security --offline=yes --no-pager "$V/ngx-sockmap.service" \
	>"$TMP/security.out" 2>&1
have=$(grep '^CapabilityBoundingSet=' "$U" | cut -d= -f2 | tr ' ' '\n' | sort | tr '\n' ' ')
assert_eq "$have" "CAP_BPF CAP_NET_ADMIN CAP_PERFMON CAP_SYS_ADMIN CAP_SYS_PTRACE " \
	"CapabilityBoundingSet: CAP_BPF CAP_NET_ADMIN CAP_PERFMON CAP_SYS_ADMIN CAP_SYS_PTRACE"
# of the capability groups systemd rates, only those four are open
open=$(sed -n 's/.*✗ CapabilityBoundingSet=~\(CAP_[A-Z_]*\) .*/\1/p' "$TMP/security.out" | sort | tr '\n' ' ')
assert_eq "$open" "CAP_BPF CAP_NET_ADMIN CAP_SYS_ADMIN CAP_SYS_PTRACE " \
	"systemd-analyze: of the capabilities it rates, only CAP_BPF, CAP_NET_ADMIN, CAP_SYS_ADMIN, CAP_SYS_PTRACE"

level=$(sed -n 's/.*Overall exposure level for ngx-sockmap.service: \([0-9.]*\).*/\1/p' "$TMP/security.out")
[ -n "$level" ] || fail "no exposure level in: $(tail -3 "$TMP/security.out")"
# --threshold counts in tenths (0-100) of the level it prints (0.0-10.0)
sa security --offline=yes --threshold="$(awk -v t="$SECURITY_THRESHOLD" 'BEGIN { print int(t * 10) }')" \
	"$V/ngx-sockmap.service" >/dev/null 2>&1 ||
	fail "exposure $level is above $SECURITY_THRESHOLD: $(grep '✗' "$TMP/security.out" | head -30)"
ok "systemd-analyze security: exposure $level <= $SECURITY_THRESHOLD"

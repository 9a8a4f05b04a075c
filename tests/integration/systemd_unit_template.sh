# timeout: 120
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: nginx-like units other than nginx.service (openresty, angie,
# nginx@NAME) get an agent of their own through the installed template
# ngx-sockmap@.service, and `run --unit NAME` finds such a unit's cgroup
# wherever systemd's slices put it:
#  1. `systemd-analyze verify` accepts ngx-sockmap@openresty,
#     @angie, @nginx@blue (an instance of nginx@.service) and @nginx-debug
#     (a '-' in the name), each against a stand-in of that unit; and refuses
#     an instance whose unit does not exist (the dependencies name it);
#  2. `systemctl --root enable` makes it wanted by that unit (WantedBy=%i);
#  3. ExecStart is `run --unit=%i $NGX_SOCKMAP_OPTS`, options from the
#     instance's own file; its sandbox is ngx-sockmap.service's, line for
#     line (its own cgroup aside), and rates at most SECURITY_THRESHOLD;
#  4. with nginx in a cgroup laid out as systemd lays out an instance
#     (SLICE/system-nginx.slice/nginx@blue-TAG.service; this host's PID 1
#     is not systemd), `run --unit nginx@blue-TAG` attaches to it and a
#     request through it is redirected; when the unit comes back in another
#     slice the agent attaches there; `check --unit` with '@' spelled \x40
#     (systemd-escape's) names the same cgroup.
. "$(dirname "$0")/../lib/common.sh"
command -v systemd-analyze >/dev/null || skip "SKIP: no systemd-analyze (package systemd)"
command -v python3 >/dev/null || skip "SKIP: no python3 (the man page generator)"
SECURITY_THRESHOLD=${SECURITY_THRESHOLD:-3.5}
D=$TMP/dest
make -s -C "$TOP" install DESTDIR="$D" PREFIX=/usr >"$TMP/install.log" 2>&1 ||
	fail "make install: $(tail -5 "$TMP/install.log")"
U=$D/lib/systemd/system/ngx-sockmap@.service
M=$D/lib/systemd/system/ngx-sockmap.service
[ -f "$U" ] || fail "make install wrote no ngx-sockmap@.service"
V=$TMP/units
mkdir -p "$V"
for f in "$U" "$M"; do
	sed "s|^ExecStart=/usr/sbin/|ExecStart=$D/usr/sbin/|" "$f" >"$V/$(basename "$f")"
done
# stand-ins for the units the instances follow (nginx@.service: a template)
for u in openresty.service angie.service nginx@.service nginx-debug.service; do
	printf '[Unit]\nDescription=stand-in\n[Service]\nType=forking\nExecStart=/bin/true\n' >"$V/$u"
done
sa() { env SYSTEMD_UNIT_PATH="$V:" MANPATH="$D/usr/share/man" systemd-analyze "$@"; }
for i in openresty angie nginx@blue nginx-debug; do
	sa verify "ngx-sockmap@$i.service" >"$TMP/verify.out" 2>&1
	rc=$?
	[ $rc = 0 ] && [ ! -s "$TMP/verify.out" ] ||
		fail "systemd-analyze verify ngx-sockmap@$i (exit $rc): $(cat "$TMP/verify.out")"
	ok "systemd-analyze verify ngx-sockmap@$i: no complaint"
done
sa verify "ngx-sockmap@nginx-gone.service" >"$TMP/verify.out" 2>&1 &&
	fail "verify accepted an instance whose unit does not exist"
grep -q 'nginx-gone.service' "$TMP/verify.out" || fail "verify: $(cat "$TMP/verify.out")"
ok "an instance's dependencies name its unit (a missing one refused)"

R=$TMP/root
mkdir -p "$R/etc/systemd/system" "$R/lib/systemd/system"
cp "$U" "$R/lib/systemd/system/"
for i in openresty nginx@blue; do
	systemctl --root="$R" enable "ngx-sockmap@$i.service" >"$TMP/enable.out" 2>&1 ||
		fail "systemctl enable ngx-sockmap@$i: $(cat "$TMP/enable.out")"
	[ -L "$R/etc/systemd/system/$i.service.wants/ngx-sockmap@$i.service" ] ||
		fail "enabled, ngx-sockmap@$i is not wanted by $i.service: $(find "$R/etc" | tr '\n' ' ')"
	ok "enabled, ngx-sockmap@$i starts with $i.service"
done

prop() { sed -n "s/^$1=//p" "$U" | tr '\n' ' ' | sed 's/ $//'; }
assert_eq "$(prop BindsTo) $(prop PartOf)" "%i.service %i.service" "bound to and part of %i.service"
assert_eq "$(prop ExecStart)" '/usr/sbin/ngx-sockmap run --unit=%i $NGX_SOCKMAP_OPTS' \
	"ExecStart: run --unit=%i \$NGX_SOCKMAP_OPTS"
assert_eq "$(prop EnvironmentFile)" "-/etc/default/ngx-sockmap@%i" "options from the instance's own file"
assert_eq "$(prop Conflicts)" ngx-sockmap.service "conflicts with ngx-sockmap.service (one agent)"
# the sandbox: ngx-sockmap.service's settings from CapabilityBoundingSet on
sandbox() { sed -n '/^CapabilityBoundingSet=/,/^\[Install\]/p' "$1" | grep -v '^#' | grep -v '^ReadWritePaths='; }
diff <(sandbox "$M") <(sandbox "$U") >"$TMP/sandbox.diff" ||
	fail "the template's sandbox is not ngx-sockmap.service's: $(cat "$TMP/sandbox.diff")"
ok "the sandbox is ngx-sockmap.service's, line for line"
for p in /sys/fs/cgroup/system.slice/%n /sys/fs/cgroup/unified/system.slice/%n; do
	prop ReadWritePaths | tr ' ' '\n' | grep -qx -- "-$p" || fail "ReadWritePaths lacks -$p"
done
assert_eq "$(prop Slice)" system.slice "its own cgroup is system.slice/%n, as ReadWritePaths says"
sa security --offline=yes --threshold="$(awk -v t="$SECURITY_THRESHOLD" 'BEGIN { print int(t * 10) }')" \
	"ngx-sockmap@openresty.service" >"$TMP/security.out" 2>&1 ||
	fail "exposure above $SECURITY_THRESHOLD: $(grep 'Overall' "$TMP/security.out")"
ok "systemd-analyze security: $(sed -n 's/.*Overall exposure level for \(.*\)/\1/p' "$TMP/security.out")"

# 4. the agent, on a unit's cgroup as systemd lays it out
PORT=18330
I=blue-$RUN_TAG-$$
S=$CG2/ngx-sockmap-test.$RUN_TAG.$$.slice
P=$S/system-nginx.slice/nginx@$I.service
P2=$S/web.slice/nginx@$I.service
mkdir -p "$P" "$S/web.slice" || fail "mkdir $P"
on_exit "rmdir '$P' '$P2' '$S/system-nginx.slice' '$S/web.slice' '$S'"
on_exit 'cg_remove "$P"; cg_remove "$P2"'
up=$(nginx_start up upstream.conf "$P" LISTEN=127.0.0.1:$PORT SENDFILE=off)
wait_port 127.0.0.1 $PORT
head -c 20000 /dev/zero >"$up/html/20k.bin"
agent_start --unit "nginx@$I"
paths() { "$AGENT" status --json | python3 -c 'import json,sys; print(" ".join(sorted(c["path"] for c in json.load(sys.stdin)["cgroups"])))'; }
assert_eq "$(paths)" "$P" "--unit nginx@$I: attached to its cgroup in system-nginx.slice"
"$AGENT" status --json | grep -qF "\"reason\":\"named: --unit nginx@$I.service\"" ||
	fail "status does not name the unit: $("$AGENT" status --json | head -c 600)"
ok "status names the unit"
st r0 redirected_msgs
cg_exec "$P" curl --noproxy '*' -sS --max-time 10 -o "$TMP/body" "http://127.0.0.1:$PORT/20k.bin" ||
	fail "curl failed"
[ "$(stat -c %s "$TMP/body")" = 20000 ] || fail "short body"
st r1 redirected_msgs
assert_ge $((r1 - r0)) 1 "a request through the unit's nginx was redirected"

# the unit stops and starts again in another slice (Slice=web.slice)
nginx_stop "$up"
cg_remove "$P" || fail "could not remove $P"
mkdir "$P2" || fail "mkdir $P2"
cg_exec "$P2" nginx -p "$up" -c "$up/nginx.conf" || fail "nginx did not start again"
wait_port 127.0.0.1 $PORT
for _ in $(seq 1 50); do [ "$(paths)" = "$P2" ] && break; sleep 0.2; done
assert_eq "$(paths)" "$P2" "the unit back in web.slice: attached there"
agent_stop || fail "agent did not exit 0"

"$AGENT" check --unit "nginx\\x40$I" --metrics off --json >"$TMP/check.json" 2>"$TMP/check.err"
assert_eq "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["targets"][0]["path"])' "$TMP/check.json" 2>&1)" \
	"$P2" "check --unit 'nginx\\x40$I' (systemd-escape's '@'): the same cgroup"

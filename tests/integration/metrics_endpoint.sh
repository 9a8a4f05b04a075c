#!/usr/bin/env bash
# timeout: 120
# Proves: with --xdp on a veth whose peer sits in a namespace the test made,
# XDP counts exactly the packets sent (per interface and kind, and per
# source in the top-K); /metrics passes `promtool check metrics`, carries
# the data-plane counters and says the XDP mode; /healthz answers.  Bad
# --metrics/--xdp input: one clear line, non-zero exit, nothing attached.
. "$(dirname "$0")/../lib/common.sh"
command -v promtool >/dev/null || skip "promtool missing (Debian package prometheus; make deps)"

cg=$(cg_make metrics)
ns=$(ns_make xdp)
host=vsm$$h
peer=vsm$$p
veth_quiet "$host" "$peer" "$ns" 10.213.9.1 10.213.9.2

port=19435
agent_start -c "$cg" --xdp "$host" --metrics 127.0.0.1:$port
sleep 0.5 # frames from link-up are counted before we send
base=$(curl -s "127.0.0.1:$port/metrics" |
	sed -n "s/^ngx_sockmap_xdp_packets_total{interface=\"$host\",kind=\"ipv4\"} //p")
N=250
ip netns exec "$ns" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(int(sys.argv[1])):
    s.sendto(b"x" * 100, ("10.213.9.1", 9))' $N
sleep 1.5 # the top-K window reads the map once a second
curl -s "127.0.0.1:$port/metrics" >"$TMP/metrics.txt" || fail "scrape failed"
promtool check metrics <"$TMP/metrics.txt" >"$TMP/promtool.out" 2>&1 ||
	fail "promtool: $(cat "$TMP/promtool.out")"
ok "promtool check metrics passes"
get() { sed -n "s/^$1 //p" "$TMP/metrics.txt"; }
v4=$(get "ngx_sockmap_xdp_packets_total{interface=\"$host\",kind=\"ipv4\"}")
assert_eq "$((v4 - ${base:-0}))" "$N" "XDP counted exactly the $N IPv4 packets sent"
assert_eq "$(get "ngx_sockmap_top_source_packets{source=\"10.213.9.2\"}")" "$N" \
	"top source is the sender, with every packet"
b=$(get "ngx_sockmap_top_source_bytes{source=\"10.213.9.2\"}")
assert_eq "$b" "$((N * (14 + 20 + 8 + 100)))" "its bytes count whole frames"
mode=$(sed -n "s/^ngx_sockmap_xdp_info{interface=\"$host\",mode=\"\([a-z]*\)\"} 1$/\1/p" "$TMP/metrics.txt")
[ -n "$mode" ] || fail "no XDP mode in metrics"
ok "XDP attached in $mode mode"
"$AGENT" status | grep -q "xdp .*$host ($mode mode)" || fail "status does not show the XDP mode"
ok "status shows the XDP mode"
for m in ngx_sockmap_build_info ngx_sockmap_redirected_bytes_total ngx_sockmap_pairs_total \
	'ngx_sockmap_fallbacks_total{reason="no_peer"}' 'ngx_sockmap_selftest_passed{check="order",critical="true"}'; do
	grep -q "^$m" "$TMP/metrics.txt" || fail "missing $m"
done
ok "data-plane counters, self-test and build info exported"
assert_eq "$(get "ngx_sockmap_guard_info{hooks=\"$(stat_get guard_hooks)\"}")" 1 \
	"guard_info exported with the hooks status names"
v=$("$AGENT" --version)
v=${v#ngx-sockmap }
# the commit the binary was built from: its version's +gitN.HASH
commit=$(echo "$v" | sed -n 's/.*+git[0-9]*\.\([0-9a-f]*\).*/\1/p')
assert_eq "$(get "ngx_sockmap_build_info{version=\"$v\",commit=\"${commit:-$("$TOP/scripts/version.sh" --commit)}\",guard_hooks=\"$(stat_get guard_hooks)\"}")" 1 \
	"build_info: --version's version, the commit, the guard's hooks"
# units last (_bytes, _seconds, _total), always-1 gauges named _info
bad=$(grep -v '^#' "$TMP/metrics.txt" | sed 's/[{ ].*//' | sort -u |
	grep -E '_(bytes|seconds|total)_|_(attached|hooks|transport)$' | grep -vE '_(bytes|seconds)_total$')
[ -z "$bad" ] || fail "names with the unit not last, or always-1 gauges not _info: $bad"
ok "units last in every name, always-1 gauges end in _info"
# README's metric tables (rows opening with a metric's name; not the
# renamed block) name what the agent serves, and nothing it does not
# (the BPF run-time pair appears only with kernel.bpf_stats_enabled=1)
sed '/<!-- renamed -->/,/<!-- \/renamed -->/d' "$TOP/README.md" | grep '^| `ngx_sockmap_' | cut -d'|' -f2 |
	grep -o 'ngx_sockmap_[a-z0-9_]*' | sort -u >"$TMP/readme.names"
sed -n 's/^# HELP \([a-z0-9_]*\) .*/\1/p' "$TMP/metrics.txt" | sort -u >"$TMP/served.names"
undoc=$(comm -23 "$TMP/served.names" "$TMP/readme.names")
[ -z "$undoc" ] || fail "served, not in README's metric tables: $(echo $undoc)"
gone=$(comm -13 "$TMP/served.names" "$TMP/readme.names" | grep -v '^ngx_sockmap_bpf_prog_')
[ -z "$gone" ] || fail "in README's metric tables, not served: $(echo $gone)"
ok "README's metric tables name the $(wc -l <"$TMP/served.names") metrics served, no other"
assert_eq "$(curl -s "127.0.0.1:$port/healthz")" "ok" "/healthz"
assert_eq "$(curl -s -o /dev/null -w '%{http_code}' "127.0.0.1:$port/nope")" 404 "unknown path is 404"
agent_stop
ip link show "$host" | grep -q 'prog/xdp' && fail "XDP still attached to $host after exit"
ok "XDP detached on exit"

# Bad input: one line, non-zero, nothing attached.
one_line() { # one_line WANT_RC LABEL CMD...
	local want=$1 label=$2 rc n
	shift 2
	timeout 20 "$@" >"$TMP/o" 2>"$TMP/e"
	rc=$?
	n=$(wc -l <"$TMP/e")
	[ "$rc" = "$want" ] && [ "$n" = 1 ] || fail "$label: exit $rc lines $n: $(cat "$TMP/e")"
	[ -z "$(bpftool cgroup show "$cg")" ] || fail "$label: left something attached"
	ip link show "$host" | grep -q 'prog/xdp' && fail "$label: left XDP attached"
	ok "$label: exit $rc: $(cat "$TMP/e")"
}
python3 -c '
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 19436)); s.listen(1); time.sleep(30)' &
busy=$!
on_exit "kill $busy"
wait_port 127.0.0.1 19436
one_line 1 "metrics port in use" "$AGENT" run --no-follow -c "$cg" --xdp "$host" --metrics 127.0.0.1:19436
one_line 1 "missing interface" "$AGENT" run --no-follow -c "$cg" --xdp nosuchif0
one_line 2 "interface name too long" "$AGENT" run --no-follow -c "$cg" --xdp averyveryverylongname0
one_line 2 "bad listen address" "$AGENT" run --no-follow -c "$cg" --metrics example.test:80

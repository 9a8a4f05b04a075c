# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Shared helpers for integration tests.  Source it first thing:
#   . "$(dirname "$0")/../lib/common.sh"
# Everything a test creates is registered with on_exit and removed when the
# test exits, pass or fail (cgroups, namespaces, nginx, agent, temp dirs).
set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
AGENT=$TOP/build/ngx-sockmap
TOOLS=$TOP/build/tools
MIB=1048576
# cgroups, veths, nginx_stop, alive, port_wait: shared with bench/run
. "$TOP/tests/lib/host.sh"
# Names of what tests create carry the runner's tag (tests/run), so its
# leftover checks see this run's objects only; "t" when run by hand.
RUN_TAG=${NGX_SOCKMAP_TEST_RUN:-t}
export NGX_SOCKMAP_TEST_RUN=$RUN_TAG
TMP=$(mktemp -d "/tmp/ngx-sockmap-test.$RUN_TAG.XXXXXX")
TEST_NAME=$(basename "$0" .sh)
# Cleanups go to a file, not a bash array: helpers are usually called as
# x=$(cg_make ...), in a subshell whose variables die with it.  Run last
# registered first; a subshell does not inherit the EXIT trap.
_CLEANUPS=$TMP/.cleanups
: >"$_CLEANUPS"
on_exit() { printf '%s\n' "$*" >>"$_CLEANUPS"; }
_run_cleanups() {
	local c
	if [ -f "$_CLEANUPS" ]; then
		while IFS= read -r c; do eval "$c" >/dev/null 2>&1; done < <(tac "$_CLEANUPS")
	fi
	# A sanitized build's UBSan reports (GCC's libubsan beside libasan)
	# go to stderr whatever UBSAN_OPTIONS' log_path says: those of the
	# programs whose stderr is under $TMP (the agent's agent.err) into
	# this test's log, where tests/run looks for them
	grep -rIsh -A 12 -E '^[^ ]+:[0-9]+:[0-9]+: runtime error: ' "$TMP"
	rm -rf "$TMP"
}
trap _run_cleanups EXIT
trap 'exit 130' INT TERM

log() { echo "# $*"; }
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "$*"; exit 77; }
# arena_refused: does this host refuse BPF arena maps?  Some hosts of this
# project's kind do (a policy, like the one refusing tracing programs):
# the agent then carries its events on a ring buffer (README, Telemetry)
arena_refused() {
	bpftool feature probe kernel 2>/dev/null | grep -q 'map_type arena is NOT available'
}
ok() { echo "ok - $*"; }

assert_eq() { # assert_eq ACTUAL EXPECTED LABEL
	[ "$1" = "$2" ] || fail "$3: got '$1', want '$2'"
	ok "$3"
}
assert_ge() { # assert_ge ACTUAL MIN LABEL
	[ "$1" -ge "$2" ] 2>/dev/null || fail "$3: got '$1', want >= $2"
	ok "$3 ($1 >= $2)"
}
assert_le() { # assert_le ACTUAL MAX LABEL
	[ "$1" -le "$2" ] 2>/dev/null || fail "$3: got '$1', want <= $2"
	ok "$3 ($1 <= $2)"
}

[ -n "$CG2" ] || skip "no cgroup v2 mount"
[ -x "$AGENT" ] || fail "$AGENT not built (make)"

# cg_make NAME -> prints path of a new cgroup, removed at exit
cg_make() {
	local p=$CG2/ngx-sockmap-test.$RUN_TAG.$$.$1
	mkdir "$p" || fail "mkdir $p"
	on_exit "cg_remove '$p'"
	echo "$p"
}

# ns_make NAME -> creates netns "nsm<run tag>_<pid>NAME" with lo up, removed at exit
ns_make() {
	local n=nsm${RUN_TAG}_$$$1
	ip netns add "$n" || fail "ip netns add $n"
	on_exit "ip netns del '$n'"
	ip -n "$n" link set lo up
	echo "$n"
}

# agent_start ARGS... : start `ngx-sockmap run ARGS`, wait for "ready";
# skip the test when the agent refuses to accelerate on this kernel
# (unless AGENT_MAY_REFUSE=1).
# Tests attach exactly what they name (--no-follow) unless AGENT_FOLLOW=1:
# following peers' cgroups is tested on its own (follow_peers_*.sh).  They
# also track every connection (--short-conn 0) unless AGENT_SHORT_CONN is
# set (to "default": no --short-conn at all): the short-connection policy
# has its own test (short_conn_policy.sh).  The guard's tracepoints never
# idle (--guard-idle 0) unless a test names its own --guard-idle (the
# last one counts): a test whose connections come more than 30 s apart
# (QEMU TCG) would see one stay on TCP while the guard re-arms
# (fallbacks{arming}), by design; guard_idle_remote.sh tests that.
AGENT_PID=
AGENT_FOLLOW=${AGENT_FOLLOW:-0}
AGENT_SHORT_CONN=${AGENT_SHORT_CONN:-0}
agent_start() {
	local follow=()
	[ "$AGENT_SHORT_CONN" = default ] || follow+=(--short-conn "$AGENT_SHORT_CONN")
	[ "$AGENT_FOLLOW" = 1 ] || follow+=(--no-follow)
	follow+=(--guard-idle 0)
	# metrics only where a test asks for them (metrics_endpoint.sh)
	[[ " $* " == *" --metrics "* ]] || follow+=(--metrics off)
	# Emptied here, not by the redirection below: that happens in the
	# child, and the loop below could read the last agent's "ready" first
	# (oob_urgent's second agent, in CI: status found no agent).
	: >"$TMP/agent.out"
	# AGENT_WRAP: a command to run it under (least_privilege.sh: setpriv)
	# shellcheck disable=SC2086
	${AGENT_WRAP:-} "$AGENT" run "${follow[@]}" "$@" >"$TMP/agent.out" 2>"$TMP/agent.err" &
	AGENT_PID=$!
	on_exit "agent_stop"
	local i
	for i in $(seq 1 100); do
		if grep -q '^ready' "$TMP/agent.out" 2>/dev/null; then
			# A kernel whose self-test fails a critical check is not
			# accelerated (the agent says why): a test about
			# acceleration has nothing to test there.  Tests about
			# the agent itself set AGENT_MAY_REFUSE=1.
			if [ "${AGENT_MAY_REFUSE:-0}" != 1 ] &&
			   grep -q '^ready:.*NOT accelerating' "$TMP/agent.out"; then
				skip "the agent refused to accelerate on this kernel ($(uname -r)): $(sed -n 's/^ready:.*NOT accelerating: //p' "$TMP/agent.out")"
			fi
			return 0
		fi
		kill -0 "$AGENT_PID" 2>/dev/null || {
			cat "$TMP/agent.err"
			fail "agent exited before ready"
		}
		sleep 0.1
	done
	fail "agent not ready after 10s"
}
agent_stop() {
	[ -n "$AGENT_PID" ] || return 0
	kill -TERM "$AGENT_PID" 2>/dev/null
	wait "$AGENT_PID" 2>/dev/null
	local rc=$?
	AGENT_PID=
	return $rc
}
# pin_dir_fresh: PIN, the agent's pin directory, which must not exist
# before a test that pins; whatever the test leaves there is detached and
# removed at exit, pass or fail
pin_dir_fresh() {
	PIN=/sys/fs/bpf/ngx-sockmap
	[ -e "$PIN" ] && fail "$PIN exists before the test: left over by an earlier run"
	on_exit "[ -e '$PIN' ] && { '$AGENT' detach >/dev/null 2>&1; rm -rf '$PIN'; }"
}

# probe_wait LABEL DIR SENDER_PID READER_PID: a sender and a reader
# (oob_probe.py) done, each having written DIR/sender.json, DIR/reader.json
probe_wait() {
	local x
	wait "$3" || { cat "$2/sender.log"; fail "$1: sender failed"; }
	wait "$4"
	for x in reader sender; do
		[ -s "$2/$x.json" ] || { cat "$2/$x.log"; fail "$1: $x wrote no result"; }
		log "$1 $x: $(cat "$2/$x.json")"
	done
}

# jget FILE KEY: one key of a JSON object in FILE (a probe's result), a
# string as it is, anything else as JSON (dicts with sorted keys, so two
# compare); "(no KEY in FILE)" without it
jget() {
	python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))[sys.argv[2]]
print(v if isinstance(v, str) else json.dumps(v, sort_keys=True))' "$1" "$2" 2>/dev/null ||
		echo "(no $2 in $1)"
}

# stat_get FIELD : one field of `ngx-sockmap status --json` (e.g. pairs,
# fallbacks.no_peer)
stat_get() {
	"$AGENT" status --json | python3 -c '
import json, sys
v = json.load(sys.stdin)
for k in sys.argv[1].split("."):
    v = v[k]
print(v)' "$1"
}

# The tiers of the hazard tests: every hazard test runs once with what
# the host gives (--guard-hooks auto, --resets auto, --unread-scan auto)
# and, unless that is already it, once with the weakest mechanism of
# each forced: what a host that refuses BPF tracing programs gets.  So a
# host that allows tracing proves the other kind too.
#   for tier in $(tiers); do agent_start ... $(tier_args "$tier"); ...
#       tier_done "$tier"; done
WEAK_TIER="tracepoints/sock_diag/watch"
# the mechanisms the running agent took: HOOKS/RESETS/UNREAD
agent_tier() {
	echo "$(stat_get guard_hooks)/$(stat_get hazards.resets.mechanism)/$(stat_get hazards.unread.mechanism)"
}
# tier_args TIER: the options that ask for it (auto: none)
tier_args() {
	[ "$1" = auto ] && return 0
	local h r u
	IFS=/ read -r h r u <<<"$1"
	echo "--guard-hooks $h --resets $r --unread-scan $u"
}
# TIERS_TODO: what is still to run; tier_check: after agent_start of the
# auto tier, add the weak tier if auto did not take it, and check a
# forced tier was taken
TIERS_TODO=(auto)
tier_check() {
	local got
	got=$(agent_tier)
	if [ "$1" = auto ]; then
		log "tier auto: $got"
		[[ $got == "$WEAK_TIER" ]] || TIERS_TODO+=("$WEAK_TIER")
	else
		assert_eq "$got" "$1" "the forced tier was taken"
	fi
	TIER=$got
}

# agent_prog_links REGEX: how many bpf_links the agent holds whose program's
# name matches REGEX (python re.search): its link fds (fdinfo: link_type,
# prog_id); fdinfo names the hook itself only on newer kernels.  The
# guard's syscall tracepoints: '_(enter|exit)$'; its fentry hooks:
# '^(splice|send)_f(entry|exit)$'.
agent_prog_links() {
	local ids
	ids=$(grep -h '^prog_id:' $(grep -l '^link_type:' /proc/"$AGENT_PID"/fdinfo/* 2>/dev/null) \
		2>/dev/null | awk '{print $2}')
	bpftool -j prog show 2>/dev/null | python3 -c '
import json, re, sys
ids = set(int(x) for x in sys.argv[2:])
print(sum(1 for p in json.load(sys.stdin)
          if p["id"] in ids and re.search(sys.argv[1], p.get("name", ""))))' "$1" $ids
}
GUARD_TP_PROGS='_(enter|exit)$'
GUARD_FENTRY_PROGS='^(splice|send)_f(entry|exit)$'

# st VAR FIELD: a numeric field of `ngx-sockmap status --json` into VAR
st() {
	local v
	v=$(stat_get "$2" 2>"$TMP/st.err")
	[[ $v =~ ^[0-9]+$ ]] ||
		fail "status --json field $2: got '$v' $(head -c 200 "$TMP/st.err")"
	printf -v "$1" '%s' "$v"
}
# st_until VAR FIELD WANT SECS: st VAR FIELD until it is WANT, for SECS at
# most (gauges drain after the kernel closes sockets); VAR: the last value
st_until() {
	local t=$((SECONDS + $4))
	st "$1" "$2"
	while [ "${!1}" != "$3" ] && [ $SECONDS -lt $t ]; do
		sleep 0.1
		st "$1" "$2"
	done
}
# diag: queues of this test's connections and the agent's view, printed
# before a FAIL about traffic (DIAG_PORTS: this test's nginx ports)
diag() {
	local p f=
	for p in $DIAG_PORTS; do f="$f${f:+ or }sport = :$p or dport = :$p"; done
	echo "# ss -tni:"
	ss -tni "( $f )" 2>&1 | head -40 | sed 's/^/#   /'
	echo "# ngx-sockmap status:"
	"$AGENT" status 2>&1 | sed 's/^/#   /'
}
fail_diag() { diag; fail "$@"; }

# nginx_start NAME CONF_TEMPLATE [CGROUP] [VAR=VALUE...]
# Renders nginx-conf/CONF_TEMPLATE (@VAR@ placeholders, @PREFIX@ always set),
# starts nginx with its own prefix under $TMP, inside CGROUP if given.
nginx_start() {
	local name=$1 tpl=$2 cg=${3:-} prefix=$TMP/nginx-$1 kv sedargs=()
	shift 3 2>/dev/null || shift $#
	mkdir -p "$prefix/logs" "$prefix/html"
	sedargs+=(-e "s|@PREFIX@|$prefix|g")
	for kv in "$@"; do sedargs+=(-e "s|@${kv%%=*}@|${kv#*=}|g"); done
	# nginx's idle keep-alive limit scales like every test limit: under
	# TCG (NGX_SOCKMAP_TEST_TIMEOUT_SCALE 4) an agent start between two
	# requests on one connection can outlast 60 s, and nginx then closes
	# the connection the test still means to use (EOF in headers)
	sedargs+=(-e "s|keepalive_timeout 60s;|keepalive_timeout $((60 * ${NGX_SOCKMAP_TEST_TIMEOUT_SCALE:-1}))s;|")
	sed "${sedargs[@]}" "$TOP/nginx-conf/$tpl" >"$prefix/nginx.conf"
	if [ -n "$cg" ]; then
		cg_exec "$cg" nginx -p "$prefix" -c "$prefix/nginx.conf" || fail "nginx $name failed to start"
	else
		nginx -p "$prefix" -c "$prefix/nginx.conf" || fail "nginx $name failed to start"
	fi
	on_exit "nginx_stop '$prefix'"
	echo "$prefix"
}
# wait_port HOST PORT : wait until something listens
wait_port() { port_wait "$1" "$2" || fail "nothing listening on $1:$2"; }

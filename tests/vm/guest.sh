#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The job of one column of the tests/vm matrix, run inside a VM guest (by
# tests/vm/boot.sh) or, with --host, on the running kernel:
#   tests/vm/guest.sh [--host] [--config FILE] OUT TEST...
# writes to OUT: facts.json (tests/vm/facts.py), selftest.{txt,rc,secs},
# agent.{txt,rc,secs} (the agent starts, attaches and stops: every object
# it loads loads, on kernels it refuses to accelerate too),
# and per integration test tests/NAME.{out,rc,secs} with its log in
# logs/integration/NAME.log.  tests/vm/matrix.py reads them.
# In a guest the tests go through tests/run (its leftovers check and sweep
# act on the guest's own kernel).  With --host they run one by one without
# that sweep, which would kill other users' agents and nginx on a shared
# host; `make test` is the full run there.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2
host=0 config=
while [ $# -gt 0 ]; do
	case $1 in
	--host) host=1; shift ;;
	--config) config=$2; shift 2 ;;
	*) break ;;
	esac
done
out=$1
shift
mkdir -p "$out/tests" "$out/logs/integration"
scale=${NGX_SOCKMAP_TEST_TIMEOUT_SCALE:-1}
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f\n", b - a }'; }

# The "notracing" column (tests/vm/run): this kernel allows tracing
# programs; a BPF LSM policy makes it refuse them as some of this
# project's hosts do, before anything else runs.
policy_pid=
if [ "${NGX_SOCKMAP_VM_POLICY:-}" = notracing ]; then
	echo "== policy: refuse BPF tracing programs"
	build/prog/refuse_tracing >"$out/policy.log" 2>&1 &
	policy_pid=$!
	for _ in $(seq 50); do grep -q '^refusing' "$out/policy.log" && break; sleep 0.2; done
	cat "$out/policy.log"
	grep -q '^refusing' "$out/policy.log" || { echo "policy: not in force"; echo 1 >"$out/policy.rc"; }
fi

echo "== facts"
t0=$(now)
python3 tests/vm/facts.py ${config:+--config "$config"} >"$out/facts.json" 2>"$out/facts.err"
python3 -c 'import json,sys; f=json.load(open(sys.argv[1])); print(" ".join(
	"%s=%s" % (k, f[k]) for k in ("arena_map", "bpf_sock_destroy_btf",
	"sk_psock_msg_tot_len", "tcp_bpf_ioctl_kallsyms", "tls_module_loads")))' "$out/facts.json"
secs "$t0" "$(now)" >"$out/facts.secs"

echo "== selftest"
export NGX_SOCKMAP_RUN_DIR=${NGX_SOCKMAP_RUN_DIR:-/run/ngx-sockmap-vmtest}
t0=$(now)
timeout --kill-after=10 $((120 * scale)) build/ngx-sockmap selftest >"$out/selftest.txt" 2>&1 </dev/null
echo $? >"$out/selftest.rc"
secs "$t0" "$(now)" >"$out/selftest.secs"
cat "$out/selftest.txt"

# agent_up LOG [OPTION...]: `run` on a cgroup of its own prints "ready"
# and exits 0 on SIGTERM; its output is added to LOG.  The self-test loads
# only the data plane; this loads the guard and the rest too, which the
# tests don't where they skip for a kernel the agent refuses to
# accelerate (a guard that failed to load on 6.1 was seen only by a test
# that doesn't skip).
agent_up() {
	local log=$1 run=$out/agent-run.txt mnt cg pid rc i ready
	shift
	mnt=$(findmnt -n -t cgroup2 -o TARGET | head -n 1)
	[ -n "$mnt" ] || { echo "agent: no cgroup2 mount" >>"$log"; return 1; }
	cg=$mnt/ngx-sockmap-vmtest-agent
	mkdir -p "$cg" || return 1
	echo "+ ngx-sockmap run $*" >>"$log"
	build/ngx-sockmap run --no-follow --cgroup "$cg" "$@" >"$run" 2>&1 </dev/null &
	pid=$!
	for ((i = 0; i < 120 * scale; i++)); do
		grep -q '^ready' "$run" && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 1
	done
	ready=0
	grep -q '^ready' "$run" && ready=1
	if [ $ready = 1 ]; then kill -TERM "$pid"; else kill -KILL "$pid" 2>/dev/null; fi
	wait "$pid"
	rc=$?
	rmdir "$cg" 2>/dev/null
	cat "$run" >>"$log"
	rm -f "$run"
	[ $ready = 1 ] || { echo "agent: not ready (exit $rc)" >>"$log"; return 1; }
	[ $rc = 0 ] || { echo "agent: exit $rc on SIGTERM" >>"$log"; return 1; }
}
# with what the kernel gives, and on the syscall tracepoints, the tier
# that loads the most of the guard's programs
echo "== agent"
t0=$(now)
: >"$out/agent.txt"
agent_up "$out/agent.txt" && agent_up "$out/agent.txt" --guard-hooks tracepoints
echo $? >"$out/agent.rc"
secs "$t0" "$(now)" >"$out/agent.secs"
cat "$out/agent.txt"

for t in "$@"; do
	echo "== $t"
	t0=$(now)
	if [ $host = 0 ]; then
		NGX_SOCKMAP_TEST_LOGS=$out/logs tests/run "integration/$t" >"$out/tests/$t.out" 2>&1 </dev/null
		rc=$?
		# tests/run exits 0 on a skip as well: read its verdict
		grep -q "^integration/$t .*SKIP" "$out/tests/$t.out" && rc=77
	else
		limit=$(sed -n 's/^# timeout: *\([0-9]*\).*/\1/p' "tests/integration/$t.sh" | head -n 1)
		timeout --kill-after=10 $((${limit:-120} * scale)) bash "tests/integration/$t.sh" \
			>"$out/logs/integration/$t.log" 2>&1 </dev/null
		rc=$?
		tail -n 15 "$out/logs/integration/$t.log" >"$out/tests/$t.out"
	fi
	echo $rc >"$out/tests/$t.rc"
	secs "$t0" "$(now)" >"$out/tests/$t.secs"
	echo "rc=$rc $(cat "$out/tests/$t.secs")s"
done
[ -n "$policy_pid" ] && kill "$policy_pid" 2>/dev/null
echo "== done"

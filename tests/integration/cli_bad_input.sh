# timeout: 120
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: every bad input gets exit 2 (usage) or 1 (runtime) and exactly
# one line on stderr that names the problem: unknown option, unknown
# subcommand, missing option argument, bad pid, bad --ports (0, 70000,
# abc), bad --max-sockets (1, 64k, past 2^24); a path that does not exist, is not a directory, is a
# directory but not a cgroup (/tmp), is a cgroup v1 directory; a dead pid;
# a missing pid file; not root; a second agent on a cgroup already served
# (the first keeps running and attached).  No failed `run` leaves anything
# attached or pinned.  `--help` exits 0, names every subcommand, fits 80
# columns.
. "$(dirname "$0")/../lib/common.sh"
export AGENT_MAY_REFUSE=1 # about the CLI, not acceleration

# attached CGROUP: how many programs bpftool sees attached to CGROUP
attached() {
	bpftool -j cgroup show "$1" | python3 -c '
import json, sys
t = sys.stdin.read().strip()
print(len(json.loads(t)) if t else 0)'
}
# Every case runs and every failure is listed; the test fails at the end.
NBAD=0
bad() { echo "FAIL: $*"; NBAD=$((NBAD + 1)); }

# expect RC PATTERNS LABEL CMD...: CMD exits RC with one stderr line that
# matches every regex (case-insensitive) of PATTERNS, separated by " && "
expect() {
	local want=$1 pats=$2 label=$3 rc n line p w
	shift 3
	timeout 10 "$@" >"$TMP/out" 2>"$TMP/err" </dev/null
	rc=$?
	line=$(head -c 500 "$TMP/err")
	[ $rc = 124 ] && { bad "$label: still running after 10 s (\`$*\` accepted?)"; return; }
	[ $rc = "$want" ] || { bad "$label: exit $rc, want $want; stderr: $line"; return; }
	n=$(awk 'END { print NR }' "$TMP/err")
	[ "$n" = 1 ] || { bad "$label: $n lines on stderr, want 1:"$'\n'"$(sed 's/^/    | /' "$TMP/err")"; return; }
	[ -n "${line// /}" ] || { bad "$label: empty error line"; return; }
	while [ -n "$pats" ]; do
		p=${pats%% && *}
		[ "$p" = "$pats" ] && pats= || pats=${pats#* && }
		grep -qiE -e "$p" "$TMP/err" || { bad "$label: error line does not say /$p/: $line"; return; }
	done
	# Error lines quote the user's path, so they may be wider than the
	# 80 columns the help text keeps to: noted, not failed.
	w=$(expand "$TMP/err" | awk '{ print length }')
	[ "$w" -le 80 ] || log "note: $label: error line is $w columns"
	grep -q '^ready' "$TMP/out" && { bad "$label: printed ready: $(cat "$TMP/out")"; return; }
	ok "$label: exit $want: $line"
}

CG=$(cg_make cli) || fail "$CG"
pins_before=$([ -e /sys/fs/bpf/ngx-sockmap ] && echo yes)
CG_REL=${CG#"$CG2"/}

log "--- usage errors: exit 2"
expect 2 'bogus-opt' "unknown option" "$AGENT" --bogus-opt
expect 2 'bogus-opt' "unknown run option" "$AGENT" run --bogus-opt -c "$CG"
expect 2 'bogus-opt' "unknown status option" "$AGENT" status --bogus-opt
expect 2 'frobnicate' "unknown subcommand" "$AGENT" frobnicate
expect 2 'cgroup|-c|argument' "-c without its argument" "$AGENT" run -c
expect 2 'pid && abc' "non-numeric pid" "$AGENT" run -p abc
expect 2 'port && (^|[^0-9])0([^0-9]|$)' "--ports 0" "$AGENT" run --ports 0 -c "$CG"
expect 2 'port && 70000' "--ports 70000" "$AGENT" run --ports 70000 -c "$CG"
expect 2 'port && abc' "--ports abc" "$AGENT" run --ports abc -c "$CG"
expect 2 'guard-hooks && kprobe && fentry && tracepoints' "--guard-hooks kprobe" \
	"$AGENT" run --guard-hooks kprobe -c "$CG"
expect 2 'max-sockets && 1 && 2-16777216' "--max-sockets 1" "$AGENT" run --max-sockets 1 -c "$CG"
expect 2 'max-sockets && 64k' "--max-sockets 64k" "$AGENT" run --max-sockets 64k -c "$CG"
expect 2 'max-sockets && 16777217' "--max-sockets past the limit" \
	"$AGENT" run --max-sockets 16777217 -c "$CG"
expect 2 'resets && bpf && iter && sock_diag' "--resets bpf" "$AGENT" run --resets bpf -c "$CG"
expect 2 'unread-scan && poll && iter && watch' "--unread-scan poll" \
	"$AGENT" run --unread-scan poll -c "$CG"
expect 2 "max-age && ' 5'" "health --max-age ' 5'" "$AGENT" health --max-age ' 5'
expect 2 "max-age && \\+5" "health --max-age +5" "$AGENT" health --max-age +5
expect 2 "k8s-namespace && We/b" "--k8s-namespace We/b" "$AGENT" run --k8s-selector a=b \
	--k8s-node n --k8s-api http://127.0.0.1:1 --k8s-namespace We/b

log "--- runtime errors: exit 1"
expect 1 '/nonexistent-ngx-sockmap' "path that does not exist" \
	"$AGENT" run -c /nonexistent-ngx-sockmap
expect 1 'no-such-cgroup-ngx' "relative path that does not exist" \
	"$AGENT" run -c no-such-cgroup-ngx
echo x >"$TMP/plain"
expect 1 "${TMP//./\\.}/plain" "path that is not a directory" "$AGENT" run -c "$TMP/plain"
expect 1 '/tmp && cgroup' "directory that is not a cgroup" "$AGENT" run -c /tmp
v1=$(awk '$3 == "cgroup" { print $2; exit }' /proc/mounts)
if [ -n "$v1" ]; then
	expect 1 "${v1//./\\.} && v1|version 1|cgroup ?v2|cgroup2" "cgroup v1 directory ($v1)" \
		"$AGENT" run -c "$v1"
else
	log "no cgroup v1 hierarchy mounted: v1 case not run"
fi
sleep 0 &
dead=$!
wait $dead
[ -e /proc/$dead ] && fail "pid $dead reused already"
expect 1 "$dead" "dead pid" "$AGENT" run -p $dead
expect 1 'root cgroup && --allow-root-cgroup' "the root cgroup" "$AGENT" run -c "$CG2"
# not cg_exec: $! must be the sleeper itself, not a subshell around it
sh -c 'echo $$ >"$0/cgroup.procs" && exec sleep 60' "$CG" &
sleeper=$!
on_exit "kill $sleeper"
for _ in $(seq 1 100); do grep -q "$CG_REL" "/proc/$sleeper/cgroup" && break; sleep 0.05; done
expect 1 "pid $sleeper && not nginx && --any-process" "a pid that is not nginx (a stale pid file)" \
	"$AGENT" run -p $sleeper
echo $sleeper >"$TMP/stale.pid"
expect 1 "not nginx && --any-process" "a pid file naming a process that is not nginx" \
	"$AGENT" run --nginx-pid-file "$TMP/stale.pid"
# whoever may write the pid file chooses what is accelerated (issue 21)
cp "$TMP/stale.pid" "$TMP/world.pid" && chmod 0666 "$TMP/world.pid"
expect 1 "writable by others" "a pid file others may write" \
	"$AGENT" run --nginx-pid-file "$TMP/world.pid"
cp "$TMP/stale.pid" "$TMP/other.pid" && chown 65534 "$TMP/other.pid"
expect 1 "another user's" "a pid file of another user" \
	"$AGENT" run --nginx-pid-file "$TMP/other.pid"
# a process that calls itself nginx (comm: prctl PR_SET_NAME) is not nginx
sh -c 'echo $$ >"$0/cgroup.procs" && exec python3 -c "
import ctypes, time
ctypes.CDLL(None).prctl(15, b\"nginx\")
time.sleep(60)"' "$CG" &
impostor=$!
on_exit "kill $impostor"
for _ in $(seq 1 100); do [ "$(cat /proc/$impostor/comm 2>/dev/null)" = nginx ] && break; sleep 0.05; done
assert_eq "$(cat /proc/$impostor/comm)" nginx "the impostor's comm is nginx"
expect 1 "not nginx && --any-process" "a process whose comm says nginx, not its executable" \
	"$AGENT" run -p $impostor
expect 1 '/nonexistent-ngx-sockmap/nginx\.pid' "missing pid file" \
	"$AGENT" run --nginx-pid-file /nonexistent-ngx-sockmap/nginx.pid
expect 1 'root|permission|privilege|cap_' "not root" \
	setpriv --reuid=65534 --regid=65534 --clear-groups "$AGENT" run -c "$CG"

assert_eq "$(attached "$CG")" 0 "no failed run left a program attached"
[ -z "$pins_before" ] && [ -e /sys/fs/bpf/ngx-sockmap ] && fail "a failed run left /sys/fs/bpf/ngx-sockmap"
ok "no failed run left pins"

log "--- a second agent on a cgroup already served"
agent_start -c "$CG"
n0=$(attached "$CG")
assert_ge "$n0" 1 "first agent attached"
# in its own run dir, so that the single-agent lock does not stop it first:
# the cgroup check is what must refuse it
expect 1 "$CG_REL && already has ngx-sockmap attached" "second agent on the same cgroup" \
	env NGX_SOCKMAP_RUN_DIR="$TMP/run2" "$AGENT" run -c "$CG_REL"
expect 1 'another ngx-sockmap agent is running' "second agent in the same run dir" \
	"$AGENT" run -c "$CG_REL"
kill -0 "$AGENT_PID" 2>/dev/null || fail "first agent died when the second one started"
ok "first agent still running"
assert_eq "$(attached "$CG")" "$n0" "first agent's programs still attached"
"$AGENT" status --json >/dev/null || fail "status fails after the second agent was refused"
ok "status still answers"
agent_stop || fail "first agent did not exit 0 on SIGTERM"
ok "first agent exited cleanly"

log "--- help"
"$AGENT" --help >"$TMP/help" 2>&1 || fail "--help exited $?"
ok "--help exits 0"
for sub in run status pause resume detach; do
	grep -qw "$sub" "$TMP/help" || fail "--help does not mention '$sub'"
done
ok "--help mentions run, status, pause, resume, detach"
for args in "--help" "run --help" "check --help" "status --help"; do
	# shellcheck disable=SC2086
	"$AGENT" $args >"$TMP/help" 2>&1 || fail "$args exited $?"
	w=$(expand "$TMP/help" | awk '{ if (length > m) m = length } END { print m + 0 }')
	[ "$w" -le 80 ] || fail "$args: a line is $w columns: $(expand "$TMP/help" | awk 'length > 80' | head -3)"
	ok "$args fits 80 columns ($(wc -l <"$TMP/help") lines, widest $w)"
done
[ $NBAD = 0 ] || fail "$NBAD case(s) above failed"

# Under systemd (stderr is the journal's stream: JOURNAL_STREAM names it),
# each line carries its priority (sd-daemon(3) "<4>"): warnings are filed
# as warnings, not at info.  Elsewhere, no prefix.
: >"$TMP/journal.err"
JOURNAL_STREAM=$(stat -c '%d:%i' "$TMP/journal.err") NGX_SOCKMAP_RUN_DIR=$TMP/nowhere \
	"$AGENT" status >/dev/null 2>>"$TMP/journal.err"
grep -q '^<4>ngx-sockmap: no ngx-sockmap agent is running' "$TMP/journal.err" ||
	fail "a warning to the journal lacks <4>: $(cat "$TMP/journal.err")"
ok "to the journal, a warning carries <4>"
JOURNAL_STREAM=1:1 NGX_SOCKMAP_RUN_DIR=$TMP/nowhere "$AGENT" status 2>&1 >/dev/null |
	grep -q '^ngx-sockmap: no ngx-sockmap agent' || fail "a prefix where stderr is not the journal"
ok "elsewhere, no prefix"

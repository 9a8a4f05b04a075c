# timeout: 180
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: every connection the data plane dooms is ended, however many
# are doomed at once.  The reset ring (reset_requests, 128 KiB) holds about
# 1150 requests; a splicing relay with 2500 connections that all splice
# while the agent is busy asks for more.  The agent is stopped (SIGSTOP)
# while the 2500 server ends call splice(2) once each (non-blocking: the
# guard's splice hook asks for the reset at the call), then continued:
# every client end must see its connection end within 30 s, the requests
# the ring had no room for are counted as deferred (reset_backlog), none
# as lost, and resets.splice counts all 2500.  Before reset_backlog, the
# requests past the ring's room were dropped and those connections stayed
# up (their readers would wait for good).  Once per tier (common.sh).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
CONNS=2500
cg_new CG storm
# two sockets a connection, in one process: past a QEMU guest's 1024
ulimit -n $((3 * CONNS + 64)) || fail "raising the open-file limit to $((3 * CONNS + 64))"

# storm.py READY GO OUT: CONNS tracked loopback connections; writes READY
# when all are up, waits for GO, splices each server end once, then waits
# (30 s at most) for every client end to see an error.  OUT: "ended=N
# open=N splice_errs=N"
cat >"$TMP/storm.py" <<'PY'
import errno, os, resource, select, socket, sys, time
ready, go, out, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 3 * n + 64), hard))
ls = socket.socket()
ls.bind(("127.0.0.1", 0))
ls.listen(4096)
port = ls.getsockname()[1]
cli, srv = [], []
for i in range(n):
    c = socket.create_connection(("127.0.0.1", port))
    s, _ = ls.accept()
    cli.append(c)
    srv.append(s)
open(ready, "w").write("%d\n" % port)
t0 = time.monotonic()
while not os.path.exists(go):
    if time.monotonic() - t0 > 60:
        sys.exit("no go after 60 s")
    time.sleep(0.05)
r, w = os.pipe()
errs, last = 0, None
t1 = time.monotonic()
for s in srv:
    # the socket's own O_NONBLOCK: SPLICE_F_NONBLOCK is the pipe's only
    # (net/ipv4/tcp.c tcp_splice_read: sock_rcvtimeo of the file flags)
    s.setblocking(False)
    try:
        os.splice(s.fileno(), w, 4096, flags=os.SPLICE_F_NONBLOCK)
    except BlockingIOError:
        pass
    except OSError as e:
        errs += 1
        last = e
# every client end: readable with an error (RST) or EOF, 30 s for all
p = select.poll()
fds = {}
for c in cli:
    p.register(c.fileno(), select.POLLIN | select.POLLERR | select.POLLHUP)
    fds[c.fileno()] = c
ended = 0
t2 = time.monotonic()
deadline = time.monotonic() + 30
while fds and time.monotonic() < deadline:
    for fd, ev in p.poll(500):
        c = fds.pop(fd)
        p.unregister(fd)
        ended += 1
print("spliced in %.2f s, ended in %.2f s, last error %s" % (t2 - t1, time.monotonic() - t2, last))
open(out, "w").write("ended=%d open=%d splice_errs=%d\n" % (ended, len(fds), errs))
PY

for ((h = 0; h < ${#TIERS_TODO[@]}; h++)); do
	# shellcheck disable=SC2046
	agent_start -c "$CG" $(tier_args "${TIERS_TODO[h]}")
	tier_check "${TIERS_TODO[h]}"
	assert_eq "$(stat_get guards_armed)" True "$TIER: the guard's hooks are armed"
	st r0 resets.splice
	st d0 reset_requests_deferred
	rm -f "$TMP/ready" "$TMP/go" "$TMP/out"
	cg_exec "$CG" python3 "$TMP/storm.py" "$TMP/ready" "$TMP/go" "$TMP/out" $CONNS \
		>"$TMP/storm.log" 2>&1 &
	spid=$!
	on_exit "kill $spid"
	for _ in $(seq 1 300); do
		[ -s "$TMP/ready" ] && break
		kill -0 $spid 2>/dev/null || { cat "$TMP/storm.log"; fail "$TIER: storm.py exited"; }
		sleep 0.1
	done
	[ -s "$TMP/ready" ] || fail "$TIER: $CONNS connections not up after 30 s"
	st p pairs
	log "$TIER: $CONNS connections up, pairs $p"
	kill -STOP "$AGENT_PID"
	on_exit "kill -CONT $AGENT_PID"
	touch "$TMP/go"
	# nothing to observe while the agent is stopped: 2500 splice calls
	# take milliseconds, 3 s is plenty even under load
	sleep 3
	kill -CONT "$AGENT_PID"
	wait $spid || { cat "$TMP/storm.log"; fail "$TIER: storm.py failed"; }
	cat "$TMP/storm.log" "$TMP/out"
	eval "$(cat "$TMP/out")"
	assert_eq "$splice_errs" 0 "$TIER: splice(2) itself failed on no server end"
	assert_eq "$open" 0 "$TIER: every doomed connection ended ($ended of $CONNS)"
	st r1 resets.splice
	st d1 reset_requests_deferred
	st lost reset_requests_lost
	assert_eq $((r1 - r0)) $CONNS "$TIER: resets.splice counts all $CONNS"
	assert_ge $((d1 - d0)) 1 "$TIER: the ring was full and requests were deferred, not dropped"
	assert_eq "$lost" 0 "$TIER: no reset request lost"
	agent_stop
done

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The data plane's pairing protocol, in process (as the kernel's
 * tools/testing/selftests/bpf/prog_tests do it): each subtest loads a
 * private copy of the real data plane through the agent's dataplane.c
 * (as the self-test does, agent/selftest.c), attaches its sock_ops to a
 * private cgroup, makes real loopback sockets there (and untracked ones
 * outside it: a socket belongs to the cgroup of the task that created
 * it, an accepted one to its listener's) and checks what
 * docs/DESIGN.md's "How a pair is proven" and "A socket's lives" promise:
 * the maps, the counters, and every byte.
 *
 *   pair          both ends tracked, sends redirected (no data segment on
 *                 the wire), the endpoint gone after the first send
 *   withdraw      an active end whose peer is untracked leaves the
 *                 SOCKHASH at its first packet in, before a TCP byte is
 *                 queued (FIONREAD counts them), or at its first send
 *   claim_race    the passive end's claim lost to the active end's
 *                 withdrawal (test_claim_delay, loopback steered by RPS
 *                 to the other CPU, in a private netns): bytes intact
 *   reuse         connect(AF_UNSPEC), then connect again: the old peer's
 *                 unread redirected bytes are never read
 *   ambiguous     the same 4-tuple in two netns (non-loopback addresses:
 *                 no netns in the key): nobody pairs on it, no byte
 *                 crosses
 *   wscale0       a peer that announced window scale 0: the active end
 *                 is never tracked (fallbacks{no_wscale})
 *   doom          a reader past --max-unread: the send is refused, the
 *                 connection asked to be reset, the reader's side learned
 *
 * Prints "ok N name", "ok N name # SKIP why" or "not ok N name: why";
 * exits 1 if any failed.  Needs root.  Removes its cgroup on every exit
 * (signals too); its BPF links die with it (nothing is pinned).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <linux/tcp.h> /* tcpi_data_segs_out: glibc's struct tcp_info lacks it */
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "accel.h"
#include "counters.h"
#include "dataplane.h"
#include "log.h"
#include "maps.h"
#include "target.h"

#define IO_TIMEOUT_MS 3000
/* the passive end's spin before its claim (claim_race_stress.sh's) */
#define CLAIM_DELAY 80000

/* ---- the harness: one subtest at a time, its first failure kept ---- */

static int n_run, n_failed;
static bool sub_failed, sub_skipped;
static char sub_why[512];

static bool expect_(bool ok, int line, const char *fmt, ...)
{
	va_list ap;
	char msg[400];

	if (ok)
		return true;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	printf("#   line %d: %s\n", line, msg);
	if (!sub_failed)
		snprintf(sub_why, sizeof(sub_why), "%s (line %d)", msg, line);
	sub_failed = true;
	return false;
}
/* EXPECT(cond, fmt, ...): false (and the subtest fails) unless cond */
#define EXPECT(cond, ...) expect_(!!(cond), __LINE__, __VA_ARGS__)

static void skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sub_why, sizeof(sub_why), fmt, ap);
	va_end(ap);
	sub_skipped = true;
}

/* ---- the private cgroup, and leaving it whatever happens ---- */

static char cg_mnt[PATH_MAX], cg_dir[PATH_MAX + 128];
static int cg_procs = -1, home_procs = -1;
static volatile pid_t child_pid;

static void move_to(int procs_fd)
{
	char pid[16];
	int n = snprintf(pid, sizeof(pid), "%d", getpid());

	if (procs_fd >= 0 && write(procs_fd, pid, n) < 0)
		printf("# moving to a cgroup failed: %s\n", strerror(errno));
}

/* Async-signal-safe: also the signal handler's. */
static void cleanup(void)
{
	char pid[16];
	int n;

	if (child_pid > 0)
		kill(child_pid, SIGKILL);
	if (home_procs >= 0) {
		n = snprintf(pid, sizeof(pid), "%d", getpid());
		if (write(home_procs, pid, n) < 0) {
			/* then rmdir fails, and tests/run reports the cgroup */
		}
	}
	if (cg_dir[0])
		rmdir(cg_dir);
}

static void on_signal(int sig)
{
	if (child_pid > 0) {
		kill(child_pid, SIGKILL);
		waitpid(child_pid, NULL, 0);
		child_pid = 0;
	}
	cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

static int cgroup_setup(void)
{
	const char *run = getenv("NGX_SOCKMAP_TEST_RUN");
	struct cg_target home = {};
	char err[PATH_MAX + 64] = "", path[PATH_MAX + 160];

	if (cg2_mount(cg_mnt, sizeof(cg_mnt)))
		return printf("# no cgroup v2 mount\n"), -1;
	if (cg2_of_pid(cg_mnt, getpid(), &home, err, sizeof(err)))
		return printf("# own cgroup: %s\n", err), -1;
	snprintf(path, sizeof(path), "%s/cgroup.procs", home.path);
	home_procs = open(path, O_WRONLY | O_CLOEXEC);
	/* named as tests/lib/common.sh names a test's cgroups: tests/run
	 * finds (and reports) any that is left behind */
	snprintf(cg_dir, sizeof(cg_dir), "%s/ngx-sockmap-test.%.32s.%d.protocol", cg_mnt,
		 run ? run : "t", getpid());
	if (home_procs < 0 || mkdir(cg_dir, 0755)) {
		printf("# %s: %s\n", home_procs < 0 ? path : cg_dir, strerror(errno));
		cg_dir[0] = 0;
		return -1;
	}
	snprintf(path, sizeof(path), "%s/cgroup.procs", cg_dir);
	cg_procs = open(path, O_WRONLY | O_CLOEXEC);
	if (cg_procs < 0)
		return printf("# %s: %s\n", path, strerror(errno)), -1;
	return 0;
}

/* ---- the private data plane of one subtest ---- */

static struct dataplane dp;
static struct agent_maps maps;
static bool dp_up;

static int dp_setup(const struct dataplane_params *p)
{
	struct cg_target t = {};
	char err[PATH_MAX + 64] = "";
	int ret;

	memset(&dp, 0, sizeof(dp));
	ret = dataplane_load(&dp, p);
	if (!ret)
		ret = dataplane_attach_msg(&dp);
	if (!ret && !(ret = cg2_resolve(cg_mnt, cg_dir, &t, err, sizeof(err))))
		ret = dataplane_attach_cgroup(&dp, &t, err, sizeof(err));
	if (ret) {
		EXPECT(0, "setting up the private data plane: %s%s%s", strerror(-ret),
		       err[0] ? ": " : "", err);
		dataplane_destroy(&dp);
		return -1;
	}
	agent_maps_init(&maps);
	dataplane_maps(&dp, &maps);
	dp_up = true;
	return 0;
}

static int sock_hash_count(void)
{
	struct sock_id k, next;
	void *prev = NULL;
	int n = 0;

	while (!bpf_map_get_next_key(maps.fd[MAP_SOCK_HASH], prev, &next)) {
		n++;
		k = next;
		prev = &k;
	}
	return n;
}

static int endpoints_count(__u32 *flags_or);

/* Every subtest has closed its sockets by now: nothing of theirs may stay
 * in sock_hash or endpoints (the kernel unhashes a closing socket,
 * sock_map_close; an endpoint goes at its owner's decision or close). */
static void dp_teardown(void)
{
	int i, socks = 0, eps = 0;

	if (!dp_up)
		return;
	for (i = 0; i < 100; i++) {
		socks = sock_hash_count();
		eps = endpoints_count(NULL);
		if (!socks && !eps)
			break;
		usleep(10000);
	}
	EXPECT(!socks && !eps, "left behind: %d sockets in sock_hash, %d endpoints", socks, eps);
	dataplane_destroy(&dp);
	dp_up = false;
}

static const struct dataplane_params default_params = {
	.ports_all = true,
	.selftest_knobs = true,
};

static struct accel_stats stats(void)
{
	struct counters c = {};

	counters_read(&maps, &c);
	return c.sum;
}

/* ---- sockets ---- */

/* A socket in the private cgroup (tracked) or in ours (not). */
static int sock_in(bool tracked)
{
	int fd;

	if (tracked)
		move_to(cg_procs);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (tracked)
		move_to(home_procs);
	return fd;
}

/* A listener on 127.0.0.1 (rcvbuf before listen when > 0): its port in
 * *addr. */
static int listener(bool tracked, int rcvbuf, struct sockaddr_in *addr)
{
	socklen_t len = sizeof(*addr);
	int l = sock_in(tracked);

	*addr = (struct sockaddr_in){ .sin_family = AF_INET,
				      .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (l < 0 || (rcvbuf > 0 && setsockopt(l, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf))) ||
	    bind(l, (void *)addr, sizeof(*addr)) || listen(l, 16) ||
	    getsockname(l, (void *)addr, &len)) {
		EXPECT(0, "listener: %s", strerror(errno));
		if (l >= 0)
			close(l);
		return -1;
	}
	return l;
}

/* Connect a new client (tracked or not) to l; the accepted end in *srv. */
static int connect_to(bool tracked, int l, const struct sockaddr_in *addr, int *srv)
{
	int c = sock_in(tracked);

	*srv = -1;
	if (c < 0 || connect(c, (const void *)addr, sizeof(*addr)) ||
	    (*srv = accept4(l, NULL, NULL, SOCK_CLOEXEC)) < 0) {
		EXPECT(0, "connect/accept: %s", strerror(errno));
		if (c >= 0)
			close(c);
		return -1;
	}
	return c;
}

static void close_all(int *fds, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

static __u64 cookie_of(int fd)
{
	__u64 c = 0;
	socklen_t len = sizeof(c);

	getsockopt(fd, SOL_SOCKET, SO_COOKIE, &c, &len);
	return c;
}

/* Is a life of this socket in sock_hash (keys are {cookie, ISN + 1})? */
static bool in_sock_hash(int fd)
{
	struct sock_id k, next;
	__u64 cookie = cookie_of(fd);
	void *prev = NULL;

	while (!bpf_map_get_next_key(maps.fd[MAP_SOCK_HASH], prev, &next)) {
		if (next.cookie == cookie)
			return true;
		k = next;
		prev = &k;
	}
	return false;
}

static int endpoints_count(__u32 *flags_or)
{
	struct sock_key k, next;
	struct endpoint e;
	void *prev = NULL;
	int n = 0;

	if (flags_or)
		*flags_or = 0;
	while (!bpf_map_get_next_key(maps.fd[MAP_ENDPOINTS], prev, &next)) {
		if (flags_or && !bpf_map_lookup_elem(maps.fd[MAP_ENDPOINTS], &next, &e))
			*flags_or |= e.flags;
		n++;
		k = next;
		prev = &k;
	}
	return n;
}

static unsigned char pattern(size_t i, unsigned char seed)
{
	return (unsigned char)((i * 131 + (i >> 8) + seed * 17) & 0xff);
}

static int send_pattern(int fd, size_t n, unsigned char seed)
{
	unsigned char buf[4096];
	size_t i, off = 0, chunk;

	while (off < n) {
		chunk = n - off < sizeof(buf) ? n - off : sizeof(buf);
		for (i = 0; i < chunk; i++)
			buf[i] = pattern(off + i, seed);
		if (send(fd, buf, chunk, MSG_NOSIGNAL) != (ssize_t)chunk)
			return -1;
		off += chunk;
	}
	return 0;
}

/* Read exactly n bytes of the pattern (bounded waits): 0, or -1 with
 * why. */
static int expect_pattern(int fd, size_t n, unsigned char seed, const char *who)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	unsigned char buf[4096];
	size_t got = 0, i;
	ssize_t r;

	while (got < n) {
		r = recv(fd, buf, n - got < sizeof(buf) ? n - got : sizeof(buf), MSG_DONTWAIT);
		if (r > 0) {
			for (i = 0; i < (size_t)r; i++)
				if (buf[i] != pattern(got + i, seed))
					return EXPECT(0, "%s: byte %zu is 0x%02x, want 0x%02x", who,
						      got + i, buf[i], pattern(got + i, seed)) - 1;
			got += r;
			continue;
		}
		if (r == 0)
			return EXPECT(0, "%s: EOF after %zu of %zu bytes", who, got, n) - 1;
		if (errno != EAGAIN && errno != EINTR)
			return EXPECT(0, "%s: recv: %s", who, strerror(errno)) - 1;
		if (poll(&p, 1, IO_TIMEOUT_MS) == 0)
			return EXPECT(0, "%s: %zu of %zu bytes, then nothing for %d ms", who, got, n,
				      IO_TIMEOUT_MS) - 1;
	}
	return 0;
}

/* Nothing more to read now (a short wait: bytes that should not exist). */
static bool nothing_more(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 100) == 0;
}

static int fionread(int fd)
{
	int n = -1;

	ioctl(fd, FIONREAD, &n);
	return n;
}

static bool wait_readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, IO_TIMEOUT_MS) == 1;
}

static __u32 data_segs_out(int fd)
{
	struct tcp_info ti = {};
	socklen_t len = sizeof(ti);

	getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len);
	return ti.tcpi_data_segs_out;
}

/* The counters once the one at off reached want, or after 1 s. */
static struct accel_stats wait_stats(size_t off, __u64 want)
{
	struct accel_stats s;
	int i;

	for (i = 0; i < 100; i++) {
		s = stats();
		if (*(__u64 *)((char *)&s + off) >= want)
			break;
		usleep(10000);
	}
	return s;
}

#define D(field) (unsigned long long)(s1.field - s0.field)

/* ---- the subtests ---- */

static void test_pair(void)
{
	struct accel_stats s0, s1;
	struct sockaddr_in a;
	int fds[3] = { -1, -1, -1 }, i;

	if (dp_setup(&default_params))
		return;
	s0 = stats();
	if ((fds[0] = listener(true, 0, &a)) < 0 ||
	    (fds[1] = connect_to(true, fds[0], &a, &fds[2])) < 0)
		goto out;
	EXPECT(in_sock_hash(fds[1]), "the active end is not in sock_hash");
	EXPECT(in_sock_hash(fds[2]), "the passive end is not in sock_hash");
	EXPECT(endpoints_count(NULL) == 1, "%d endpoints, want the active end's", endpoints_count(NULL));
	s1 = stats();
	EXPECT(D(pairs) == 1, "pairs +%llu, want +1 (the passive end's claim)", D(pairs));
	EXPECT(D(claims_lost) == 0, "claims_lost +%llu", D(claims_lost));
	for (i = 0; i < 4; i++)
		EXPECT(!send_pattern(fds[1], 1000, i), "client send %d: %s", i, strerror(errno));
	EXPECT(endpoints_count(NULL) == 0, "the endpoint outlived the first send");
	/* redirected bytes wait in the psock: FIONREAD counts them */
	EXPECT(fionread(fds[2]) == 4000, "server FIONREAD %d, want 4000", fionread(fds[2]));
	for (i = 0; i < 4; i++)
		expect_pattern(fds[2], 1000, i, "server");
	EXPECT(!send_pattern(fds[2], 3000, 9), "server send: %s", strerror(errno));
	expect_pattern(fds[1], 3000, 9, "client");
	s1 = stats();
	EXPECT(D(redirected_msgs) == 5, "redirected_msgs +%llu, want +5", D(redirected_msgs));
	EXPECT(D(redirected_bytes) == 7000, "redirected_bytes +%llu, want +7000",
	       D(redirected_bytes));
	EXPECT(D(tcp_msgs) == 0, "tcp_msgs +%llu, want 0", D(tcp_msgs));
	EXPECT(data_segs_out(fds[1]) == 0 && data_segs_out(fds[2]) == 0,
	       "data segments on the wire: client %u, server %u, want 0",
	       data_segs_out(fds[1]), data_segs_out(fds[2]));
	close_all(fds, 3);
	fds[0] = fds[1] = fds[2] = -1;
	/* both ends reach TCP_CLOSE once the FINs are through */
	s1 = wait_stats(offsetof(struct accel_stats, paired_closed), s0.paired_closed + 2);
	EXPECT(D(paired_closed) == 2, "paired_closed +%llu, want +2", D(paired_closed));
	EXPECT(D(sockets_added) == D(sockets_closed), "added +%llu, closed +%llu",
	       D(sockets_added), D(sockets_closed));
out:
	close_all(fds, 3);
	dp_teardown();
}

/* An active end whose peer is not tracked: first packet in (the server
 * speaks first), then first send (the client does). */
static void test_withdraw(void)
{
	struct accel_stats s0, s1;
	struct sockaddr_in a;
	int fds[3] = { -1, -1, -1 };
	int n;

	if (dp_setup(&default_params))
		return;
	/* 1. at its first packet in, before the packet's bytes are queued */
	s0 = stats();
	if ((fds[0] = listener(false, 0, &a)) < 0 ||
	    (fds[1] = connect_to(true, fds[0], &a, &fds[2])) < 0)
		goto out;
	s1 = stats();
	EXPECT(D(sockets_added) == 1, "sockets_added +%llu, want +1 (the client)", D(sockets_added));
	EXPECT(in_sock_hash(fds[1]), "the client is not in sock_hash at ESTABLISHED");
	EXPECT(endpoints_count(NULL) == 1, "the client registered no endpoint");
	EXPECT(!send_pattern(fds[2], 1000, 1), "server send: %s", strerror(errno));
	EXPECT(wait_readable(fds[1]), "the client never saw the server's bytes");
	s1 = stats();
	EXPECT(!in_sock_hash(fds[1]), "the client is still in sock_hash with TCP bytes queued");
	EXPECT(endpoints_count(NULL) == 0, "the client's endpoint is still registered");
	n = fionread(fds[1]);
	EXPECT(n == 1000, "client FIONREAD %d with 1000 bytes queued (0: its psock hides them)", n);
	EXPECT(D(fallbacks[FB_NO_PEER]) == 1, "fallbacks{no_peer} +%llu, want +1",
	       D(fallbacks[FB_NO_PEER]));
	expect_pattern(fds[1], 1000, 1, "client");
	EXPECT(!send_pattern(fds[1], 500, 2), "client send: %s", strerror(errno));
	expect_pattern(fds[2], 500, 2, "server");
	close(fds[1]);
	close(fds[2]);
	fds[1] = fds[2] = -1;

	/* 2. at its first send: through TCP; it leaves the map at its first
	 * packet in (sk_msg may not delete) */
	s0 = stats();
	if ((fds[1] = connect_to(true, fds[0], &a, &fds[2])) < 0)
		goto out;
	EXPECT(!send_pattern(fds[1], 700, 3), "client send: %s", strerror(errno));
	s1 = stats();
	EXPECT(endpoints_count(NULL) == 0, "the endpoint outlived the withdrawing send");
	EXPECT(D(tcp_bytes) == 700 && D(redirected_bytes) == 0,
	       "tcp_bytes +%llu, redirected_bytes +%llu: want 700 through TCP", D(tcp_bytes),
	       D(redirected_bytes));
	expect_pattern(fds[2], 700, 3, "server");
	EXPECT(!send_pattern(fds[2], 300, 4), "server send: %s", strerror(errno));
	expect_pattern(fds[1], 300, 4, "client");
	EXPECT(!in_sock_hash(fds[1]), "the client is still in sock_hash after its first packet in");
	s1 = stats();
	EXPECT(D(pairs) == 0, "pairs +%llu with an untracked server", D(pairs));
out:
	close_all(fds, 3);
	dp_teardown();
}

/* In the child: bring lo up and give it an extra address (label lo:1). */
static int lo_up(const char *extra)
{
	struct ifreq ifr = {};
	struct sockaddr_in *sa = (void *)&ifr.ifr_addr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), ret = -1;

	if (s < 0)
		return -1;
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr))
		goto out;
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr))
		goto out;
	if (extra) {
		memset(&ifr, 0, sizeof(ifr));
		strcpy(ifr.ifr_name, "lo:1");
		sa->sin_family = AF_INET;
		inet_pton(AF_INET, extra, &sa->sin_addr);
		if (ioctl(s, SIOCSIFADDR, &ifr))
			goto out;
	}
	ret = 0;
out:
	close(s);
	return ret;
}

/* A child's first failure (shared with it). */
static char *child_why;

/* Run fn in a child (in its own network and mount namespaces when asked,
 * joined to the private cgroup): its exit status, 77 for a skip with the
 * reason on its stdout. */
static int in_child(int (*fn)(void), bool new_ns)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return EXPECT(0, "fork: %s", strerror(errno)), 1;
	if (child_why)
		child_why[0] = 0;
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		if (new_ns && unshare(CLONE_NEWNET | CLONE_NEWNS)) {
			printf("# unshare: %s\n", strerror(errno));
			_exit(77);
		}
		status = fn();
		/* its first failure, for the parent's "not ok" line */
		if (child_why && sub_failed)
			snprintf(child_why, sizeof(sub_why), "%s", sub_why);
		_exit(status);
	}
	child_pid = pid;
	waitpid(pid, &status, 0);
	child_pid = 0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* A tracked client whose first 200 bytes (pattern seed) leave the moment
 * its connection is established: non-blocking connect(), then send()
 * retried (EAGAIN until ESTABLISHED) on this CPU.  Its fd, or -1. */
static int race_connect(const struct sockaddr_in *a, unsigned char seed)
{
	unsigned char buf[200];
	struct timespec t0, t;
	size_t i;
	int c;
	ssize_t r;

	move_to(cg_procs);
	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	move_to(home_procs);
	if (c < 0 || (connect(c, (const void *)a, sizeof(*a)) && errno != EINPROGRESS))
		return -1;
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = pattern(i, seed);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		r = send(c, buf, sizeof(buf), MSG_NOSIGNAL);
		if (r == (ssize_t)sizeof(buf))
			return c;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (r < 0 && errno == EAGAIN && t.tv_sec - t0.tv_sec < 3);
	close(c);
	return -1;
}

/*
 * The child of claim_race: loopback in its own netns (and sysfs of its
 * own mount namespace, to reach that lo's rps_cpus), its receive side
 * steered by RPS to CPU 0 while the client sends from CPU 1 the moment
 * it is established (race_connect).  Without RPS loopback handles the
 * final ACK inside the client's connect() (claim_race_stress.sh, round 1):
 * no race.  With it, the server's end spins test_claim_delay rounds on
 * CPU 0 between its checks and its claim while the client's first send
 * withdraws: the claim is lost (claims_lost), and both ends stay on TCP.
 * Until 3 are lost, or 10 s; every byte of every connection is checked.
 */
static int race_child(void)
{
	struct accel_stats s0 = stats(), s1;
	struct sockaddr_in a;
	cpu_set_t cpus;
	int fds[3] = { -1, -1, -1 }, f, i;
	time_t end = time(NULL) + 10;

	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("sysfs", "/sys", "sysfs", 0, NULL) || lo_up(NULL)) {
		printf("# private sysfs or lo: %s\n", strerror(errno));
		return 77;
	}
	f = open("/sys/class/net/lo/queues/rx-0/rps_cpus", O_WRONLY | O_CLOEXEC);
	if (f < 0 || write(f, "1", 1) != 1) {
		printf("# RPS on lo: %s\n", strerror(errno));
		return 77;
	}
	close(f);
	CPU_ZERO(&cpus);
	CPU_SET(1, &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus)) {
		printf("# CPU 1: %s\n", strerror(errno));
		return 77;
	}
	if ((fds[0] = listener(true, 0, &a)) < 0)
		return 2;
	for (i = 0; i < 100000 && time(NULL) < end; i++) {
		if ((fds[1] = race_connect(&a, i)) < 0 ||
		    (fds[2] = accept4(fds[0], NULL, NULL, SOCK_CLOEXEC)) < 0) {
			printf("# connection %d: %s\n", i, strerror(errno));
			return 2;
		}
		if (expect_pattern(fds[2], 200, i, "server") ||
		    send_pattern(fds[2], 300, i + 1) ||
		    expect_pattern(fds[1], 300, i + 1, "client")) {
			snprintf(sub_why + strlen(sub_why), sizeof(sub_why) - strlen(sub_why),
				 " (connection %d)", i);
			return 1;
		}
		/* the server first: its TIME_WAITs hold no client port */
		close(fds[2]);
		close(fds[1]);
		s1 = stats();
		if (D(claims_lost) >= 3) {
			i++;
			break;
		}
	}
	s1 = stats();
	printf("# %d connections, %llu claims lost, %llu pairs\n", i, D(claims_lost), D(pairs));
	return D(claims_lost) ? 0 : 3;
}

static void test_claim_race(void)
{
	struct dataplane_params p = default_params;
	struct accel_stats s0, s1;
	int rc;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		skip("one CPU: the claim can't race the withdrawal");
		return;
	}
	p.test_claim_delay = CLAIM_DELAY;
	if (dp_setup(&p))
		return;
	s0 = stats();
	move_to(cg_procs);
	rc = in_child(race_child, true);
	move_to(home_procs);
	s1 = stats();
	if (rc == 77)
		skip("no private netns with RPS on lo here");
	else if (rc == 3)
		EXPECT(0, "no claim was lost to a withdrawal in 10 s (pairs +%llu)", D(pairs));
	else if (EXPECT(rc == 0, "%s", child_why && child_why[0] ? child_why : "the child failed"))
		EXPECT(D(fallbacks[FB_NO_PEER]) >= D(claims_lost),
		       "fallbacks{no_peer} +%llu < claims_lost +%llu", D(fallbacks[FB_NO_PEER]),
		       D(claims_lost));
	dp_teardown();
}

/* connect(AF_UNSPEC) with the old peer's bytes unread, then connect
 * again (socket_reuse_unspec.sh, in process). */
static void test_reuse(void)
{
	struct sockaddr_in a1, a2, unspec = { .sin_family = AF_UNSPEC };
	struct accel_stats s0, s1;
	int fds[5] = { -1, -1, -1, -1, -1 };
	char b;

	if (dp_setup(&default_params))
		return;
	s0 = stats();
	if ((fds[0] = listener(true, 0, &a1)) < 0 || (fds[1] = listener(true, 0, &a2)) < 0 ||
	    (fds[2] = connect_to(true, fds[0], &a1, &fds[3])) < 0)
		goto out;
	/* the client's first send pairs it (adopts the claim) */
	EXPECT(!send_pattern(fds[2], 100, 0), "client send: %s", strerror(errno));
	expect_pattern(fds[3], 100, 0, "server A");
	EXPECT(!send_pattern(fds[3], 3000, 1), "server A send: %s", strerror(errno));
	EXPECT(fionread(fds[2]) == 3000, "A's bytes did not reach the client's psock (FIONREAD %d)",
	       fionread(fds[2]));
	EXPECT(!connect(fds[2], (void *)&unspec, sizeof(unspec)), "connect(AF_UNSPEC): %s",
	       strerror(errno));
	s1 = stats();
	EXPECT(D(reused) >= 1, "reused +%llu: the disconnect went unseen", D(reused));
	EXPECT(!connect(fds[2], (void *)&a2, sizeof(a2)), "reconnect: %s", strerror(errno));
	fds[4] = accept4(fds[1], NULL, NULL, SOCK_CLOEXEC);
	if (!EXPECT(fds[4] >= 0, "accept B: %s", strerror(errno)))
		goto out;
	EXPECT(in_sock_hash(fds[2]), "the reconnected client is not tracked");
	EXPECT(!send_pattern(fds[4], 2000, 2), "server B send: %s", strerror(errno));
	/* exactly B's bytes: none of A's first, none after */
	expect_pattern(fds[2], 2000, 2, "client (B's bytes)");
	EXPECT(nothing_more(fds[2]), "the client has more to read than B sent (A's bytes?)");
	EXPECT(!send_pattern(fds[2], 1500, 3), "client send to B: %s", strerror(errno));
	expect_pattern(fds[4], 1500, 3, "server B");
	s1 = stats();
	EXPECT(D(pairs) == 2, "pairs +%llu, want +2 (A, then B)", D(pairs));
	/* A got nothing after the disconnect, and its connection ended */
	EXPECT(wait_readable(fds[3]), "server A never saw its connection end");
	EXPECT(recv(fds[3], &b, 1, MSG_DONTWAIT) <= 0, "server A read a byte after the disconnect");
out:
	close_all(fds, 5);
	dp_teardown();
}

/* The same 4-tuple in two network namespaces: 10.211.0.1:40002 ->
 * 10.211.0.1:40001 on lo in each (not loopback addresses, so the key has
 * no netns cookie, as for two pods' identical private addresses). */
static int amb_child(void)
{
	struct sockaddr_in srv = { .sin_family = AF_INET, .sin_port = htons(40001) };
	struct sockaddr_in cli = { .sin_family = AF_INET, .sin_port = htons(40002) };
	struct accel_stats s0 = stats(), s1;
	int fd[2][3], i, one = 1;
	__u32 flags;

	inet_pton(AF_INET, "10.211.0.1", &srv.sin_addr);
	cli.sin_addr = srv.sin_addr;
	/* one fresh netns after the other: the sockets of the first keep
	 * theirs alive */
	for (i = 0; i < 2; i++) {
		if (unshare(CLONE_NEWNET) || lo_up("10.211.0.1")) {
			printf("# netns %d: %s\n", i, strerror(errno));
			return 77;
		}
		fd[i][0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		fd[i][1] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		setsockopt(fd[i][0], SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd[i][0], (void *)&srv, sizeof(srv)) || listen(fd[i][0], 4) ||
		    bind(fd[i][1], (void *)&cli, sizeof(cli)) ||
		    connect(fd[i][1], (void *)&srv, sizeof(srv)) ||
		    (fd[i][2] = accept4(fd[i][0], NULL, NULL, SOCK_CLOEXEC)) < 0) {
			printf("# netns %d: sockets: %s\n", i, strerror(errno));
			return 2;
		}
		if (i == 0) {
			s1 = stats();
			EXPECT(D(pairs) == 1 && endpoints_count(NULL) == 1,
			       "the first connection did not pair (pairs +%llu)", D(pairs));
		}
	}
	s1 = stats();
	EXPECT(D(fallbacks[FB_AMBIGUOUS]) == 1, "fallbacks{ambiguous} +%llu, want +1",
	       D(fallbacks[FB_AMBIGUOUS]));
	EXPECT(endpoints_count(&flags) == 1 && (flags & EP_AMBIGUOUS),
	       "the registration was not marked ambiguous");
	EXPECT(!in_sock_hash(fd[1][1]) && !in_sock_hash(fd[1][2]),
	       "an end of the second connection is tracked");
	EXPECT(D(pairs) == 1, "pairs +%llu, want +1 (the first connection only)", D(pairs));
	/* each end gets exactly its own connection's bytes */
	for (i = 0; i < 2; i++) {
		EXPECT(!send_pattern(fd[i][1], 1000, 10 + i), "client %d send", i);
		EXPECT(!send_pattern(fd[i][2], 800, 20 + i), "server %d send", i);
	}
	for (i = 0; i < 2; i++) {
		expect_pattern(fd[i][2], 1000, 10 + i, i ? "server 1" : "server 0");
		expect_pattern(fd[i][1], 800, 20 + i, i ? "client 1" : "client 0");
		EXPECT(nothing_more(fd[i][1]) && nothing_more(fd[i][2]),
		       "connection %d has bytes it was not sent", i);
	}
	EXPECT(data_segs_out(fd[1][1]) > 0, "the second connection's bytes never went through TCP");
	return sub_failed ? 1 : 0;
}

static void test_ambiguous(void)
{
	int rc;

	if (dp_setup(&default_params))
		return;
	move_to(cg_procs);
	rc = in_child(amb_child, false);
	move_to(home_procs);
	if (rc == 77)
		skip("no private network namespace here");
	else
		EXPECT(rc == 0, "%s", child_why && child_why[0] ? child_why : "the child failed");
	dp_teardown();
}

/* A listener with 4096 bytes of receive buffer at the SYN announces
 * window scale 0 (withdraw_no_wscale.sh, in process). */
static void test_wscale0(void)
{
	struct accel_stats s0, s1;
	struct sockaddr_in a;
	int fds[3] = { -1, -1, -1 }, n;

	if (dp_setup(&default_params))
		return;
	s0 = stats();
	if ((fds[0] = listener(false, 4096, &a)) < 0 ||
	    (fds[1] = connect_to(true, fds[0], &a, &fds[2])) < 0)
		goto out;
	s1 = stats();
	EXPECT(D(fallbacks[FB_NO_WSCALE]) == 1, "fallbacks{no_wscale} +%llu, want +1",
	       D(fallbacks[FB_NO_WSCALE]));
	EXPECT(D(sockets_added) == 0, "sockets_added +%llu: the client was tracked",
	       D(sockets_added));
	EXPECT(!in_sock_hash(fds[1]), "the client is in sock_hash");
	EXPECT(!send_pattern(fds[2], 1000, 5), "server send: %s", strerror(errno));
	EXPECT(wait_readable(fds[1]), "the client never saw the server's bytes");
	n = fionread(fds[1]);
	EXPECT(n == 1000, "client FIONREAD %d with 1000 bytes queued", n);
	expect_pattern(fds[1], 1000, 5, "client");
out:
	close_all(fds, 3);
	dp_teardown();
}

static struct reset_request reset_got;
static int resets_seen;

static int on_reset(void *ctx, void *data, size_t size)
{
	(void)ctx;
	if (size >= sizeof(reset_got)) {
		memcpy(&reset_got, data, sizeof(reset_got));
		resets_seen++;
	}
	return 0;
}

/* A reader that never reads, past --max-unread (64 KiB here). */
static void test_doom(void)
{
	struct dataplane_params p = default_params;
	struct ring_buffer *rb = NULL;
	struct accel_stats s0, s1;
	struct sockaddr_in a;
	int fds[5] = { -1, -1, -1, -1, -1 };
	size_t sent = 0, i;
	unsigned char buf[4096];
	ssize_t r = 0;
	int err = 0;

	if (!kernel_has_psock_msg_tot_len()) {
		skip("no psock->msg_tot_len: no --max-unread on this kernel");
		return;
	}
	p.max_unread = 64 << 10;
	if (dp_setup(&p))
		return;
	rb = ring_buffer__new(maps.fd[MAP_RESETS], on_reset, NULL, NULL);
	if (!EXPECT(rb, "reset_requests ring: %s", strerror(errno)))
		goto out;
	resets_seen = 0;
	s0 = stats();
	if ((fds[0] = listener(true, 0, &a)) < 0 ||
	    (fds[1] = connect_to(true, fds[0], &a, &fds[2])) < 0)
		goto out;
	while (sent < (1u << 20)) {
		for (i = 0; i < sizeof(buf); i++)
			buf[i] = pattern(sent + i, 7);
		r = send(fds[1], buf, sizeof(buf), MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r <= 0) {
			err = errno;
			break;
		}
		sent += r;
		if (r < (ssize_t)sizeof(buf))
			break;
	}
	printf("#   %zu bytes sent before the refusal (%s)\n", sent, r < 0 ? strerror(err) : "short");
	EXPECT(sent < (1u << 20) && sent <= (64u << 10) + sizeof(buf),
	       "%zu bytes went out to a reader that reads nothing (cap 64 KiB)", sent);
	EXPECT(r >= 0 || err == EACCES, "the refused send failed with %s, want EACCES",
	       strerror(err));
	/* doomed: every later send is refused too */
	EXPECT(send(fds[1], buf, 1, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 && errno == EACCES,
	       "a doomed socket's next send was not refused");
	ring_buffer__consume(rb);
	EXPECT(resets_seen == 1, "%d reset requests, want 1", resets_seen);
	EXPECT(reset_got.cookie == cookie_of(fds[1]) && reset_got.peer == cookie_of(fds[2]) &&
		       reset_got.reason == RS_SLOW_READER,
	       "the request names %llx/%llx (%u), want the sender %llx and its reader %llx (slow_reader)",
	       (unsigned long long)reset_got.cookie, (unsigned long long)reset_got.peer,
	       reset_got.reason, (unsigned long long)cookie_of(fds[1]),
	       (unsigned long long)cookie_of(fds[2]));
	/* what went out arrived, in order, nothing else */
	expect_pattern(fds[2], sent, 7, "reader");
	EXPECT(nothing_more(fds[2]), "the reader has bytes the sender was refused");
	/* the reader's side (the server) learned: its next connection stays
	 * on TCP */
	s1 = stats();
	if ((fds[3] = connect_to(true, fds[0], &a, &fds[4])) < 0)
		goto out;
	s0 = s1;
	s1 = stats();
	EXPECT(D(fallbacks[FB_HAZARD]) == 2 && D(sockets_added) == 0,
	       "the next connection: fallbacks{hazard} +%llu (want 2, one per end), sockets_added +%llu",
	       D(fallbacks[FB_HAZARD]), D(sockets_added));
out:
	ring_buffer__free(rb);
	close_all(fds, 5);
	dp_teardown();
}

static const struct {
	const char *name;
	void (*fn)(void);
} subtests[] = {
	{ "pair", test_pair },
	{ "withdraw", test_withdraw },
	{ "claim_race", test_claim_race },
	{ "reuse", test_reuse },
	{ "ambiguous", test_ambiguous },
	{ "wscale0", test_wscale0 },
	{ "doom", test_doom },
};

int main(int argc, char **argv)
{
	char err[256] = "";
	size_t i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (dataplane_probe_kernel(err, sizeof(err))) {
		printf("%s\n", err);
		return 77;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGHUP, on_signal);
	atexit(cleanup);
	child_why = mmap(NULL, sizeof(sub_why), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			 -1, 0);
	if (child_why == MAP_FAILED)
		child_why = NULL;
	if (cgroup_setup())
		return 1;
	printf("1..%zu\n", sizeof(subtests) / sizeof(subtests[0]));
	for (i = 0; i < sizeof(subtests) / sizeof(subtests[0]); i++) {
		/* a name on the command line: that subtest only */
		if (argc > 1 && strcmp(argv[1], subtests[i].name))
			continue;
		sub_failed = sub_skipped = false;
		sub_why[0] = 0;
		subtests[i].fn();
		n_run++;
		if (sub_failed) {
			n_failed++;
			printf("not ok %zu %s: %s\n", i + 1, subtests[i].name, sub_why);
		} else if (sub_skipped) {
			printf("ok %zu %s # SKIP %s\n", i + 1, subtests[i].name, sub_why);
		} else {
			printf("ok %zu %s\n", i + 1, subtests[i].name);
		}
	}
	printf("# %d run, %d failed\n", n_run, n_failed);
	return n_failed ? 1 : 0;
}

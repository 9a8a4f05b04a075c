// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "accel.h"
#include "accel.skel.h"
#include "log.h"
#include "selftest.h"

enum { C_REDIRECT, C_ORDER, C_LARGE, C_HALF_CLOSE, C_FIONREAD, C_FIONREAD_TCP, C_BLOCKING_EOF,
       C_BOUND };

static const struct selftest_check check_table[SELFTEST_CHECKS] = {
	[C_REDIRECT] = { "redirect", false, "a tracked pair forms and sends are redirected" },
	[C_ORDER] = { "order", true, "2000 small sends arrive in order" },
	[C_LARGE] = { "large_message", true, "8 MiB arrive intact through a redirected pair" },
	[C_HALF_CLOSE] = { "half_close", true, "all bytes, then EOF, after shutdown(SHUT_WR); reply after" },
	[C_FIONREAD] = { "fionread", false, "FIONREAD counts redirected bytes (nginx relies on it)" },
	[C_FIONREAD_TCP] = { "fionread_tcp", false,
			     "FIONREAD of a sockmap socket counts bytes that came through TCP" },
	[C_BLOCKING_EOF] = { "blocking_eof", false, "a blocked recv() sees EOF, not EAGAIN, after the peer's shutdown" },
	[C_BOUND] = { "slow_reader_bound", false,
		      "a reader that falls behind gets TCP back-pressure (needs msg_tot_len, fionread_tcp)" },
};

const char *selftest_result_name(enum st_result res)
{
	return res == ST_PASS ? "pass" : res == ST_FAIL ? "FAIL" : "skip";
}

/* ---- the child: real sockets, inside the private cgroup ---- */

#define IO_TIMEOUT_MS 5000

static int tcp_pair(int *cli, int *srv)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int l;

	*cli = *srv = -1;
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0 || bind(l, (void *)&a, sizeof(a)) || listen(l, 4) ||
	    getsockname(l, (void *)&a, &len))
		goto fail;
	*cli = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*cli < 0 || connect(*cli, (void *)&a, sizeof(a)))
		goto fail;
	*srv = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	if (*srv < 0)
		goto fail;
	close(l);
	return 0;
fail:
	if (l >= 0)
		close(l);
	return -1;
}

static void close_pair(int cli, int srv)
{
	if (cli >= 0)
		close(cli);
	if (srv >= 0)
		close(srv);
}

static unsigned char pattern_at(size_t i)
{
	return (unsigned char)((i * 131 + (i >> 16)) & 0xff);
}

/* Read exactly n bytes (or to EOF) with poll timeouts; EAGAIN from
 * tcp_bpf_recvmsg is retried (see check_blocking_eof for that bug). */
static ssize_t read_full(int fd, void *buf, size_t n)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	size_t got = 0;
	ssize_t r;

	while (got < n) {
		r = recv(fd, (char *)buf + got, n - got, MSG_DONTWAIT);
		if (r > 0) {
			got += r;
			continue;
		}
		if (r == 0)
			break;
		if (errno != EAGAIN && errno != EINTR)
			return -1;
		if (poll(&p, 1, IO_TIMEOUT_MS) == 0)
			break;
	}
	return got;
}

static void check_order(struct selftest_check *c)
{
	unsigned int seq, i, n = 2000, bad = 0;
	int cli, srv;
	char buf[8];

	if (tcp_pair(&cli, &srv)) {
		snprintf(c->detail, sizeof(c->detail), "socket setup: %s", strerror(errno));
		c->result = ST_SKIP;
		return;
	}
	for (i = 0; i < n; i++) {
		memcpy(buf, &i, 4);
		memcpy(buf + 4, "ord!", 4);
		if (send(cli, buf, 8, 0) != 8)
			break;
	}
	for (i = 0; i < n; i++) {
		if (read_full(srv, buf, 8) != 8) {
			snprintf(c->detail, sizeof(c->detail), "stream ended after %u of %u messages", i, n);
			c->result = ST_FAIL;
			goto out;
		}
		memcpy(&seq, buf, 4);
		if (seq != i || memcmp(buf + 4, "ord!", 4)) {
			if (!bad++)
				snprintf(c->detail, sizeof(c->detail), "message %u arrived as %u", i, seq);
		}
	}
	c->result = bad ? ST_FAIL : ST_PASS;
out:
	close_pair(cli, srv);
}

static void check_large(struct selftest_check *c)
{
	const size_t total = 8u << 20;
	size_t sent = 0, got = 0, i;
	unsigned char *out, *in;
	struct pollfd p[2];
	int cli, srv;
	ssize_t r;

	out = malloc(total);
	in = malloc(total);
	if (!out || !in || tcp_pair(&cli, &srv)) {
		c->result = ST_SKIP;
		snprintf(c->detail, sizeof(c->detail), "setup failed");
		free(out);
		free(in);
		return;
	}
	for (i = 0; i < total; i++)
		out[i] = pattern_at(i);
	p[0] = (struct pollfd){ .fd = cli, .events = POLLOUT };
	p[1] = (struct pollfd){ .fd = srv, .events = POLLIN };
	while (got < total) {
		p[0].events = sent < total ? POLLOUT : 0;
		if (poll(p, 2, IO_TIMEOUT_MS) <= 0)
			break;
		if (sent < total) {
			r = send(cli, out + sent, total - sent > 262144 ? 262144 : total - sent,
				 MSG_DONTWAIT);
			if (r > 0)
				sent += r;
		}
		r = recv(srv, in + got, total - got, MSG_DONTWAIT);
		if (r > 0)
			got += r;
		else if (r == 0)
			break;
	}
	if (got != total) {
		c->result = ST_FAIL;
		snprintf(c->detail, sizeof(c->detail), "got %zu of %zu bytes", got, total);
	} else if (memcmp(in, out, total)) {
		for (i = 0; in[i] == out[i]; i++)
			;
		c->result = ST_FAIL;
		snprintf(c->detail, sizeof(c->detail), "first wrong byte at offset %zu", i);
	} else {
		c->result = ST_PASS;
	}
	close_pair(cli, srv);
	free(out);
	free(in);
}

static void check_half_close(struct selftest_check *c)
{
	static unsigned char buf[100000], reply[1000], back[2000];
	ssize_t got;
	int cli, srv;
	size_t i;

	if (tcp_pair(&cli, &srv)) {
		c->result = ST_SKIP;
		return;
	}
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = pattern_at(i);
	if (send(cli, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf) || shutdown(cli, SHUT_WR)) {
		c->result = ST_SKIP;
		goto out;
	}
	memset(buf, 0, sizeof(buf));
	got = read_full(srv, buf, sizeof(buf));
	if (got != (ssize_t)sizeof(buf)) {
		c->result = ST_FAIL;
		snprintf(c->detail, sizeof(c->detail), "server got %zd of %zu bytes before EOF", got,
			 sizeof(buf));
		goto out;
	}
	for (i = 0; i < sizeof(buf); i++)
		if (buf[i] != pattern_at(i))
			break;
	if (i != sizeof(buf) || read_full(srv, back, 1) != 0) {
		c->result = ST_FAIL;
		snprintf(c->detail, sizeof(c->detail), i != sizeof(buf) ? "corrupt byte at %zu"
									 : "no EOF after the data", i);
		goto out;
	}
	memset(reply, 'r', sizeof(reply));
	if (send(srv, reply, sizeof(reply), 0) != (ssize_t)sizeof(reply) || close(srv)) {
		c->result = ST_SKIP;
		srv = -1;
		goto out;
	}
	srv = -1;
	got = read_full(cli, back, sizeof(back));
	if (got != (ssize_t)sizeof(reply) || memcmp(back, reply, sizeof(reply))) {
		c->result = ST_FAIL;
		snprintf(c->detail, sizeof(c->detail), "reply after half-close: %zd of %zu bytes",
			 got, sizeof(reply));
		goto out;
	}
	c->result = ST_PASS;
out:
	close_pair(cli, srv);
}

static int config_fd = -1; /* the private data plane's config, for the child */

static void set_force_tcp(__u32 on)
{
	struct accel_config cfg = { .test_force_tcp = on };
	__u32 zero = 0;

	bpf_map_update_elem(config_fd, &zero, &cfg, BPF_ANY);
}

/*
 * A paired, tracked reader that receives bytes through TCP (forced here;
 * in real life a fallback).  nginx trusts FIONREAD to know more is queued:
 * if it counts only redirected bytes (tcp_bpf_ioctl on 6.18), a fallback
 * would leave nginx waiting for bytes it was told aren't there.
 */
static void check_fionread_tcp(struct selftest_check *c)
{
	static char buf[100000];
	int cli, srv, avail = -1, i;

	if (tcp_pair(&cli, &srv)) {
		c->result = ST_SKIP;
		return;
	}
	/* pair first: the active end adopts its peer at its first send */
	if (send(cli, "p", 1, 0) != 1 || read_full(srv, buf, 1) != 1) {
		c->result = ST_SKIP;
		goto out;
	}
	set_force_tcp(1);
	if (send(cli, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf)) {
		c->result = ST_SKIP;
		goto out_reset;
	}
	for (i = 0; i < 100; i++) {
		if (ioctl(srv, FIONREAD, &avail) == 0 && avail == (int)sizeof(buf))
			break;
		usleep(2000);
	}
	c->result = avail == (int)sizeof(buf) ? ST_PASS : ST_FAIL;
	snprintf(c->detail, sizeof(c->detail), "FIONREAD says %d with %zu TCP bytes queued%s", avail,
		 sizeof(buf), c->result == ST_FAIL ? ": no fallback of live pairs" : "");
	if (read_full(srv, buf, sizeof(buf)) != (ssize_t)sizeof(buf) && c->result == ST_PASS) {
		c->result = ST_FAIL;
		snprintf(c->detail, sizeof(c->detail), "TCP bytes behind a redirect not readable");
	}
out_reset:
	set_force_tcp(0);
out:
	close_pair(cli, srv);
}

static void check_fionread(struct selftest_check *c)
{
	char buf[1000] = { 0 };
	int cli, srv, avail = -1, i;

	if (tcp_pair(&cli, &srv)) {
		c->result = ST_SKIP;
		return;
	}
	if (send(cli, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf)) {
		c->result = ST_SKIP;
		goto out;
	}
	for (i = 0; i < 50; i++) { /* redirect is synchronous; TCP may lag */
		if (ioctl(srv, FIONREAD, &avail) == 0 && avail == (int)sizeof(buf))
			break;
		usleep(2000);
	}
	c->result = avail == (int)sizeof(buf) ? ST_PASS : ST_FAIL;
	if (c->result == ST_FAIL)
		snprintf(c->detail, sizeof(c->detail), "FIONREAD says %d, %zu bytes are queued", avail,
			 sizeof(buf));
out:
	close_pair(cli, srv);
}

struct blocked_read {
	int fd;
	int eagain;     /* recv() calls that failed with EAGAIN */
	int err;        /* other errno, 0 if none */
	size_t bytes;
	bool eof;
};

/* Blocking reads to EOF, as a blocking client does; a bounded SO_RCVTIMEO
 * keeps a real hang from hanging the test. */
static void *blocked_reader(void *arg)
{
	struct blocked_read *b = arg;
	char buf[256];
	ssize_t r;
	int i;

	for (i = 0; i < 1000; i++) {
		r = recv(b->fd, buf, sizeof(buf), 0);
		if (r > 0) {
			b->bytes += r;
		} else if (r == 0) {
			b->eof = true;
			break;
		} else if (errno == EAGAIN) {
			b->eagain++;
		} else if (errno != EINTR) {
			b->err = errno;
			break;
		}
	}
	return NULL;
}

/* Request/response with half-close, as a blocking client does it: the
 * client sends a request and shuts down its write side, blocks reading the
 * answer; the server reads to EOF, answers @data bytes and closes. */
static void spin_us(unsigned int us)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000 + (t.tv_nsec - t0.tv_nsec) / 1000 < us);
}

static int blocked_client_round(size_t data, unsigned int gap_us, struct blocked_read *b)
{
	struct timeval tv = { .tv_sec = 2 };
	char buf[1000] = { 0 };
	pthread_t th;
	int cli, srv, ret = -1;

	memset(b, 0, sizeof(*b));
	if (tcp_pair(&cli, &srv))
		return -1;
	if (send(cli, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf) || shutdown(cli, SHUT_WR))
		goto out;
	setsockopt(cli, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	b->fd = cli;
	if (pthread_create(&th, NULL, blocked_reader, b))
		goto out;
	if (read_full(srv, buf, sizeof(buf) + 1) == (ssize_t)sizeof(buf)) {
		usleep(50); /* the reader is asleep in recv() by now */
		send(srv, buf, data, 0);
		/* The reader wakes for the reply and calls recv() again; the
		 * FIN lands a sweep of delays later, across that window. */
		spin_us(gap_us);
	}
	close(srv);
	srv = -1;
	pthread_join(th, NULL);
	ret = 0;
out:
	close_pair(cli, srv);
	return ret;
}

/* Reader blocked in recv(); the peer then sends @data redirected bytes (0:
 * none) and shuts down.  A correct kernel gives the bytes, then 0. */
static int blocked_round(size_t data, struct blocked_read *b)
{
	struct timeval tv = { .tv_sec = 2 };
	char buf[64] = { 0 }, one = 'x';
	pthread_t th;
	int cli, srv, ret = -1;

	memset(b, 0, sizeof(*b));
	if (tcp_pair(&cli, &srv))
		return -1;
	/* pair the client's direction first (its first send adopts the peer) */
	if (send(cli, &one, 1, 0) != 1 || read_full(srv, &one, 1) != 1)
		goto out;
	setsockopt(srv, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	b->fd = srv;
	if (pthread_create(&th, NULL, blocked_reader, b))
		goto out;
	usleep(20 * 1000); /* let the reader block */
	if (data)
		send(cli, buf, data, 0);
	shutdown(cli, SHUT_WR);
	pthread_join(th, NULL);
	ret = 0;
out:
	close_pair(cli, srv);
	return ret;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * The EAGAIN is a race in tcp_bpf_recvmsg() (net/ipv4/tcp_bpf.c): the FIN
 * lands between the reader's RCV_SHUTDOWN check and tcp_msg_wait_data(),
 * which then returns "data" while ingress_msg is empty, and the caller
 * turns that into -EAGAIN.  Seen here in about 0.7% of request/response
 * rounds with half-close, so the check runs many quick rounds.
 */
static void check_blocking_eof(struct selftest_check *c)
{
	int rounds = 0, spurious = 0, lost = 0, i;
	double deadline = now() + 2.0;
	struct blocked_read b;
	size_t want;

	for (i = 0; i < 1000 && now() < deadline; i++) {
		/* mostly the client pattern that hits the race; now and then
		 * a reader that blocked long before the peer's shutdown */
		want = i % 100 == 1 ? 0 : 10;
		if (i % 50 == 1 ? blocked_round(want, &b) : blocked_client_round(want, i % 31, &b))
			continue;
		rounds++;
		if (b.eagain)
			spurious++;
		if (!b.eof || b.bytes != want)
			lost++;
	}
	if (!rounds) {
		c->result = ST_SKIP;
		return;
	}
	c->result = spurious || lost ? ST_FAIL : ST_PASS;
	snprintf(c->detail, sizeof(c->detail), "spurious EAGAIN in %d of %d blocking reads to EOF%s",
		 spurious, rounds, lost ? "; some never saw EOF" : "");
}

static void child_main(const char *cg_procs, int out_fd)
{
	struct selftest_check res[SELFTEST_CHECKS];
	char pid[32];
	int fd;

	memcpy(res, check_table, sizeof(res));
	fd = open(cg_procs, O_WRONLY | O_CLOEXEC);
	snprintf(pid, sizeof(pid), "%d", getpid());
	if (fd < 0 || write(fd, pid, strlen(pid)) < 0)
		_exit(3);
	close(fd);
	check_order(&res[C_ORDER]);
	check_large(&res[C_LARGE]);
	check_half_close(&res[C_HALF_CLOSE]);
	check_fionread(&res[C_FIONREAD]);
	check_fionread_tcp(&res[C_FIONREAD_TCP]);
	check_blocking_eof(&res[C_BLOCKING_EOF]);
	if (write(out_fd, res, sizeof(res)) != (ssize_t)sizeof(res))
		_exit(4);
	_exit(0);
}

/* ---- the parent: private data plane, private cgroup ---- */

static bool kernel_has_msg_tot_len(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const struct btf_member *m;
	const struct btf_type *t;
	bool found = false;
	int id, i;

	if (!btf)
		return false;
	id = btf__find_by_name_kind(btf, "sk_psock", BTF_KIND_STRUCT);
	if (id > 0) {
		t = btf__type_by_id(btf, id);
		m = btf_members(t);
		for (i = 0; i < btf_vlen(t); i++, m++)
			if (!strcmp(btf__name_by_offset(btf, m->name_off), "msg_tot_len"))
				found = true;
	}
	btf__free(btf);
	return found;
}

static void sum_stats(struct accel_bpf *skel, struct accel_stats *sum)
{
	int ncpu = libbpf_num_possible_cpus(), i, j;
	struct accel_stats *per = calloc(ncpu > 0 ? ncpu : 1, sizeof(*per));
	__u32 zero = 0;

	memset(sum, 0, sizeof(*sum));
	if (!per || bpf_map_lookup_elem(bpf_map__fd(skel->maps.accel_stats), &zero, per)) {
		free(per);
		return;
	}
	for (i = 0; i < ncpu; i++)
		for (j = 0; j < (int)(sizeof(*sum) / sizeof(__u64)); j++)
			((__u64 *)sum)[j] += ((__u64 *)&per[i])[j];
	free(per);
}

int selftest_run(const char *cg2_mnt, struct selftest_report *r)
{
	struct selftest_check got[SELFTEST_CHECKS];
	struct bpf_link *link = NULL;
	struct accel_bpf *skel = NULL;
	char cg[4096], procs[4200];
	struct accel_stats sum;
	int cg_fd = -1, pfd[2] = { -1, -1 }, i, status, ret = 0;
	struct pollfd p;
	pid_t child = -1;

	memset(r, 0, sizeof(*r));
	memcpy(r->checks, check_table, sizeof(check_table));
	for (i = 0; i < SELFTEST_CHECKS; i++)
		r->checks[i].result = ST_SKIP;
	bool has_tot_len = kernel_has_msg_tot_len();

	snprintf(cg, sizeof(cg), "%s/ngx-sockmap-selftest.%d", cg2_mnt, getpid());
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
	if (mkdir(cg, 0755) && errno != EEXIST) {
		ret = -errno;
		pr_warn("selftest: mkdir %s: %s\n", cg, strerror(errno));
		return ret;
	}
	skel = accel_bpf__open();
	if (skel) {
		skel->rodata->short_conn_msgs = 0; /* every test connection counts */
		skel->rodata->selftest_knobs = 1;  /* check_fionread_tcp forces TCP */
	}
	if (!skel || accel_bpf__load(skel)) {
		ret = -EINVAL;
		pr_warn("selftest: loading the data plane failed\n");
		goto out;
	}
	cg_fd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg_fd < 0 ||
	    bpf_prog_attach(bpf_program__fd(skel->progs.msg_redirect),
			    bpf_map__fd(skel->maps.sock_hash), BPF_SK_MSG_VERDICT, 0) ||
	    !(link = bpf_program__attach_cgroup(skel->progs.sockops_track, cg_fd))) {
		ret = -errno ?: -EINVAL;
		pr_warn("selftest: attaching to %s failed: %s\n", cg, strerror(-ret));
		goto out;
	}
	config_fd = bpf_map__fd(skel->maps.accel_config);
	if (pipe2(pfd, O_CLOEXEC)) {
		ret = -errno;
		goto out;
	}
	fflush(NULL);
	child = fork();
	if (child < 0) {
		ret = -errno;
		goto out;
	}
	if (child == 0) {
		close(pfd[0]);
		child_main(procs, pfd[1]);
	}
	close(pfd[1]);
	pfd[1] = -1;
	p = (struct pollfd){ .fd = pfd[0], .events = POLLIN };
	if (poll(&p, 1, 30000) == 1 && read(pfd[0], got, sizeof(got)) == (ssize_t)sizeof(got)) {
		for (i = 0; i < SELFTEST_CHECKS; i++)
			if (i != C_REDIRECT && i != C_BOUND)
				r->checks[i] = got[i];
	} else {
		pr_warn("selftest: the test process did not report (timeout or crash)\n");
		r->checks[C_ORDER].result = ST_FAIL;
		snprintf(r->checks[C_ORDER].detail, sizeof(r->checks[C_ORDER].detail),
			 "test process hung or crashed");
	}
	kill(child, SIGKILL);
	waitpid(child, &status, 0);

	sum_stats(skel, &sum);
	if (sum.pairs >= 1 && sum.redirected_msgs > 0) {
		r->checks[C_REDIRECT].result = ST_PASS;
		snprintf(r->checks[C_REDIRECT].detail, sizeof(r->checks[C_REDIRECT].detail),
			 "%llu pairs, %llu msgs redirected", (unsigned long long)sum.pairs,
			 (unsigned long long)sum.redirected_msgs);
	} else {
		/* Nothing was redirected: the data checks only tested TCP. */
		r->checks[C_REDIRECT].result = ST_FAIL;
		snprintf(r->checks[C_REDIRECT].detail, sizeof(r->checks[C_REDIRECT].detail),
			 "%llu pairs, %llu msgs redirected", (unsigned long long)sum.pairs,
			 (unsigned long long)sum.redirected_msgs);
	}
	/* The bound works by sending a lagging direction to TCP: only safe
	 * where the kernel reads that back right. */
	r->slow_reader_fallback_safe = has_tot_len && r->checks[C_FIONREAD_TCP].result == ST_PASS;
	r->checks[C_BOUND].result = r->slow_reader_fallback_safe ? ST_PASS : ST_FAIL;
	if (!r->slow_reader_fallback_safe)
		snprintf(r->checks[C_BOUND].detail, sizeof(r->checks[C_BOUND].detail), "%s",
			 !has_tot_len ? "disabled: no psock->msg_tot_len to measure the backlog"
				      : "disabled: fallback unsafe here (fionread_tcp): backlog unbounded");
	r->ran = true;
	for (i = 0; i < SELFTEST_CHECKS; i++) {
		if (r->checks[i].result != ST_FAIL)
			continue;
		r->failures++;
		if (r->checks[i].critical)
			r->critical_failure = true;
	}
out:
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	bpf_link__destroy(link);
	if (cg_fd >= 0)
		close(cg_fd);
	accel_bpf__destroy(skel);
	rmdir(cg);
	return ret;
}

void selftest_print(FILE *out, const struct selftest_report *r)
{
	const struct selftest_check *c;
	int i;

	for (i = 0; i < SELFTEST_CHECKS; i++) {
		c = &r->checks[i];
		fprintf(out, "  %-4s %-18s %s\n", selftest_result_name(c->result), c->name,
			c->detail[0] ? c->detail : c->what);
	}
}

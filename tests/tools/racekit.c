// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * racekit: many short connections that race the pairing protocol.
 *
 * The server listens on two ports.  On the first ("client-first") the
 * client sends its request the moment connect() returns, racing the
 * server's PASSIVE_ESTABLISHED_CB: if its first send runs before the
 * server claimed it, the active end withdraws (docs/DESIGN.md, "claim").
 * On the second ("server-first") the server speaks first (a greeting) and
 * the client sends its request only after reading it.
 *
 *   racekit server --ports-file F [--addr IP] [--workers N] [--timeout S]
 *                  [--seed S]  (writes "PORT1 PORT2 PID" to F; runs until
 *                  SIGTERM)
 *   racekit client --port1 P --port2 P [--addr IP] [--threads N]
 *                  [--duration S] [--timeout S] [--seed S]
 *
 * --addr: the server's IPv4 address (default 127.0.0.1).
 *
 * Every direction of every connection carries its own pattern: a header
 *   magic u32, length u32, client port u32, 0 u32, nonce u64
 * then `length` bytes of a pattern keyed by (seed, kind, client port,
 * nonce).  The client draws a nonce per connection for its request; the
 * server answers with the same key (kind reply), and draws its own nonce
 * for a greeting.  Each end checks every byte it gets, that the header
 * names its connection (client port), and that the stream then ends (the
 * server closes after its reply; the client checks for EOF).  Every wait
 * is bounded by --timeout.
 *
 * Each end prints one line, and up to 10 error lines on stderr:
 *   result role=R ok=0|1 conns=N good=N failed=N client_first=N
 *          server_first=N timeouts=N resets=N eofs=N bad=N
 * Exit 0 when every connection was good.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "toolkit.h"

#define HDR_LEN 24
#define M_REQ   0x31514352u /* "RCQ1" */
#define M_REPLY 0x31534352u /* "RCS1" */
#define M_GREET 0x31474352u /* "RCG1" */
#define MAX_LEN 16384

enum fail { F_NONE, F_TIMEOUT, F_RESET, F_EOF, F_BAD, F_OTHER };

static struct {
	bool server;
	const char *ports_file;
	unsigned workers, threads;
	uint16_t port1, port2;
	struct in_addr addr;
	double timeout, duration;
	uint64_t seed;
} o = { .workers = 16, .threads = 16, .timeout = 3, .duration = 8, .seed = 1 };

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t n_good, n_failed, n_cfirst, n_sfirst, n_fail[F_OTHER + 1];
static int g_msgs;

static void die(const char *msg)
{
	fprintf(stderr, "racekit: %s\n", msg);
	exit(2);
}

static uint64_t key_of(uint32_t magic, uint32_t cport, uint64_t nonce)
{
	return mix64(o.seed ^ mix64(nonce) ^ ((uint64_t)magic << 32) ^ cport);
}

static void fill(uint8_t *buf, uint32_t len, uint64_t key)
{
	for (uint32_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(mix64(key + (i >> 3)) >> (8 * (i & 7)));
}

/* One connection, from one end's view */
struct conn {
	int fd;
	uint32_t cport;
	double deadline;
	enum fail why;
	char msg[200];
};

static void conn_fail(struct conn *c, enum fail why, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void conn_fail(struct conn *c, enum fail why, const char *fmt, ...)
{
	va_list ap;

	if (c->why)
		return;
	c->why = why;
	va_start(ap, fmt);
	vsnprintf(c->msg, sizeof(c->msg), fmt, ap);
	va_end(ap);
}

static enum fail errno_fail(int err)
{
	return err == ECONNRESET || err == EPIPE || err == ECONNABORTED ? F_RESET : F_OTHER;
}

static int write_all(struct conn *c, const uint8_t *p, size_t len, const char *what)
{
	ssize_t n;

	while (len) {
		n = send(c->fd, p, len, MSG_NOSIGNAL);
		if (n > 0) {
			p += n;
			len -= n;
			continue;
		}
		if (errno != EAGAIN && errno != EINTR) {
			conn_fail(c, errno_fail(errno), "send %s: %s", what, strerror(errno));
			return -1;
		}
		if (!wait_fd(c->fd, POLLOUT, c->deadline)) {
			conn_fail(c, F_TIMEOUT, "send %s: blocked for %.1f s", what, o.timeout);
			return -1;
		}
	}
	return 0;
}

static int read_full(struct conn *c, uint8_t *p, size_t len, const char *what)
{
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = recv(c->fd, p + got, len - got, 0);
		if (n > 0) {
			got += n;
			continue;
		}
		if (n == 0) {
			conn_fail(c, F_EOF, "%s: EOF after %zu of %zu bytes", what, got, len);
			return -1;
		}
		if (errno != EAGAIN && errno != EINTR) {
			conn_fail(c, errno_fail(errno), "%s: %s after %zu of %zu bytes", what,
				  strerror(errno), got, len);
			return -1;
		}
		if (!wait_fd(c->fd, POLLIN, c->deadline)) {
			conn_fail(c, F_TIMEOUT, "%s: nothing for %.1f s after %zu of %zu bytes",
				  what, o.timeout, got, len);
			return -1;
		}
	}
	return 0;
}

/* Send header + pattern of (magic, cport, nonce) */
static int send_msg(struct conn *c, uint32_t magic, uint32_t len, uint64_t nonce,
		    const char *what)
{
	uint8_t buf[HDR_LEN + MAX_LEN];
	uint32_t zero = 0;

	memcpy(buf, &magic, 4);
	memcpy(buf + 4, &len, 4);
	memcpy(buf + 8, &c->cport, 4);
	memcpy(buf + 12, &zero, 4);
	memcpy(buf + 16, &nonce, 8);
	fill(buf + HDR_LEN, len, key_of(magic, c->cport, nonce));
	return write_all(c, buf, HDR_LEN + len, what);
}

/* Read and check one message; *nonce gets its nonce, *len its length.
 * want_len 0: any length up to MAX_LEN; want_nonce used when check_nonce. */
static int recv_msg(struct conn *c, uint32_t magic, uint32_t want_len, bool check_nonce,
		    uint64_t *nonce, const char *what)
{
	uint8_t hdr[HDR_LEN], buf[MAX_LEN], exp[MAX_LEN];
	uint32_t m, len, port;
	uint64_t n;

	if (read_full(c, hdr, HDR_LEN, what))
		return -1;
	memcpy(&m, hdr, 4);
	memcpy(&len, hdr + 4, 4);
	memcpy(&port, hdr + 8, 4);
	memcpy(&n, hdr + 16, 8);
	if (m != magic || port != c->cport || len == 0 || len > MAX_LEN ||
	    (want_len && len != want_len) || (check_nonce && n != *nonce)) {
		conn_fail(c, F_BAD, "%s: header is not ours: magic %08x port %u len %u "
			  "(want %08x port %u len %u)", what, m, port, len, magic, c->cport,
			  want_len);
		return -1;
	}
	if (read_full(c, buf, len, what))
		return -1;
	fill(exp, len, key_of(magic, c->cport, n));
	if (memcmp(buf, exp, len)) {
		uint32_t i = 0;

		while (buf[i] == exp[i])
			i++;
		conn_fail(c, F_BAD, "%s: wrong byte at payload offset %u of %u", what, i, len);
		return -1;
	}
	*nonce = n;
	return 0;
}

/* After the last message: the stream must end (EOF), nothing more. */
static void expect_eof(struct conn *c, const char *what)
{
	uint8_t b;
	ssize_t n;

	for (;;) {
		n = recv(c->fd, &b, 1, 0);
		if (n == 0)
			return;
		if (n > 0) {
			conn_fail(c, F_BAD, "%s: extra byte after the last message", what);
			return;
		}
		if (errno != EAGAIN && errno != EINTR) {
			conn_fail(c, errno_fail(errno), "%s: %s instead of EOF", what,
				  strerror(errno));
			return;
		}
		if (!wait_fd(c->fd, POLLIN, c->deadline)) {
			conn_fail(c, F_TIMEOUT, "%s: no EOF for %.1f s", what, o.timeout);
			return;
		}
	}
}

static void conn_done(struct conn *c, bool client_first)
{
	pthread_mutex_lock(&g_lock);
	if (client_first)
		n_cfirst++;
	else
		n_sfirst++;
	if (c->why) {
		n_failed++;
		n_fail[c->why]++;
		if (g_msgs++ < 10)
			fprintf(stderr, "racekit %s: %s conn from port %u: %s\n",
				o.server ? "server" : "client",
				client_first ? "client-first" : "server-first", c->cport, c->msg);
	} else {
		n_good++;
	}
	pthread_mutex_unlock(&g_lock);
	if (c->fd >= 0)
		close(c->fd);
}

static uint64_t rnd64(void)
{
	uint64_t v;

	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		die("getrandom");
	return v;
}

/* ------------------------------------------------------------------ */

static int lfd[2];

static void serve(int fd, bool client_first, uint32_t cport)
{
	struct conn c = { .fd = fd, .cport = cport, .deadline = now_s() + o.timeout };
	uint64_t nonce = rnd64();

	if (!client_first &&
	    send_msg(&c, M_GREET, 1 + (uint32_t)(mix64(nonce) % 4096), nonce, "greeting"))
		goto out;
	if (recv_msg(&c, M_REQ, 0, false, &nonce, "request"))
		goto out;
	c.deadline = now_s() + o.timeout;
	if (send_msg(&c, M_REPLY, 1 + (uint32_t)(mix64(nonce ^ 1) % MAX_LEN), nonce, "reply"))
		goto out;
	/* we close first: TIME_WAIT on this side, client ports stay free */
out:
	conn_done(&c, client_first);
}

static void *srv_worker(void *arg)
{
	struct pollfd p[2] = { { .fd = lfd[0], .events = POLLIN },
			       { .fd = lfd[1], .events = POLLIN } };
	struct sockaddr_in peer;
	socklen_t plen;
	int i, fd;

	(void)arg;
	while (!g_stop) {
		if (poll(p, 2, 100) <= 0)
			continue;
		for (i = 0; i < 2; i++) {
			if (!(p[i].revents & POLLIN))
				continue;
			plen = sizeof(peer);
			fd = accept4(lfd[i], (void *)&peer, &plen, SOCK_NONBLOCK | SOCK_CLOEXEC);
			if (fd < 0)
				continue; /* another worker took it */
			serve(fd, i == 0, ntohs(peer.sin_port));
		}
	}
	return NULL;
}

static int run_server(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr = o.addr };
	socklen_t alen = sizeof(a);
	uint16_t port[2];
	pthread_t th[256];
	unsigned i;
	int one = 1;
	FILE *f;

	for (i = 0; i < 2; i++) {
		a.sin_port = 0;
		lfd[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		setsockopt(lfd[i], SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (lfd[i] < 0 || bind(lfd[i], (void *)&a, sizeof(a)) || listen(lfd[i], 1024) ||
		    getsockname(lfd[i], (void *)&a, &alen))
			die("listen failed");
		port[i] = ntohs(a.sin_port);
	}
	for (i = 0; i < o.workers; i++)
		if (pthread_create(&th[i], NULL, srv_worker, NULL))
			die("pthread_create");
	f = fopen(o.ports_file, "w");
	/* our pid too: a shell that started us through a function knows
	 * only its subshell's pid */
	if (!f || fprintf(f, "%u %u %d\n", port[0], port[1], (int)getpid()) < 0 || fclose(f))
		die("cannot write --ports-file");
	for (i = 0; i < o.workers; i++)
		pthread_join(th[i], NULL);
	return 0;
}

/* ------------------------------------------------------------------ */

static void client_one(bool client_first)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr = o.addr,
				 .sin_port = htons(client_first ? o.port1 : o.port2) };
	struct conn c = { .deadline = now_s() + o.timeout };
	struct sockaddr_in me;
	socklen_t len = sizeof(me);
	uint64_t nonce = rnd64(), greet;
	int err = 0;

	c.fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c.fd < 0)
		die("socket");
	if (connect(c.fd, (void *)&a, sizeof(a)) && errno != EINPROGRESS) {
		conn_fail(&c, errno_fail(errno), "connect: %s", strerror(errno));
		goto out;
	}
	if (!wait_fd(c.fd, POLLOUT, c.deadline)) {
		conn_fail(&c, F_TIMEOUT, "connect: no answer for %.1f s", o.timeout);
		goto out;
	}
	len = sizeof(err);
	getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len);
	if (err) {
		conn_fail(&c, errno_fail(err), "connect: %s", strerror(err));
		goto out;
	}
	len = sizeof(me);
	getsockname(c.fd, (void *)&me, &len);
	c.cport = ntohs(me.sin_port);
	if (!client_first && recv_msg(&c, M_GREET, 0, false, &greet, "greeting"))
		goto out;
	if (send_msg(&c, M_REQ, 1 + (uint32_t)(mix64(nonce) % MAX_LEN), nonce, "request"))
		goto out;
	c.deadline = now_s() + o.timeout;
	if (recv_msg(&c, M_REPLY, 1 + (uint32_t)(mix64(nonce ^ 1) % MAX_LEN), true, &nonce,
		     "reply"))
		goto out;
	expect_eof(&c, "after the reply");
out:
	conn_done(&c, client_first);
}

static void *cli_thread(void *arg)
{
	double end = now_s() + o.duration;
	bool client_first = (uintptr_t)arg & 1;

	while (!g_stop && now_s() < end) {
		client_one(client_first);
		client_first = !client_first;
	}
	return NULL;
}

static int run_client(void)
{
	pthread_t th[256];
	uintptr_t i;

	for (i = 0; i < o.threads; i++)
		if (pthread_create(&th[i], NULL, cli_thread, (void *)i))
			die("pthread_create");
	for (i = 0; i < o.threads; i++)
		pthread_join(th[i], NULL);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "ports-file", 1, 0, 'f' }, { "workers", 1, 0, 'w' }, { "threads", 1, 0, 'n' },
		{ "port1", 1, 0, '1' }, { "port2", 1, 0, '2' }, { "timeout", 1, 0, 't' },
		{ "duration", 1, 0, 'd' }, { "seed", 1, 0, 's' }, { "addr", 1, 0, 'a' }, { 0 },
	};
	struct sigaction sa = { .sa_handler = on_signal };
	bool ok;
	int c;

	if (argc < 2 || (strcmp(argv[1], "server") && strcmp(argv[1], "client")))
		die("usage: racekit server|client OPTIONS (see the comment at the top)");
	o.server = !strcmp(argv[1], "server");
	o.addr.s_addr = htonl(INADDR_LOOPBACK);
	argv++, argc--;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'f': o.ports_file = optarg; break;
		case 'w': o.workers = atoi(optarg); break;
		case 'n': o.threads = atoi(optarg); break;
		case '1': o.port1 = atoi(optarg); break;
		case '2': o.port2 = atoi(optarg); break;
		case 't': o.timeout = strtod(optarg, NULL); break;
		case 'd': o.duration = strtod(optarg, NULL); break;
		case 's': o.seed = strtoull(optarg, NULL, 0); break;
		case 'a':
			if (inet_pton(AF_INET, optarg, &o.addr) != 1)
				die("--addr takes an IPv4 address");
			break;
		default: die("unknown option");
		}
	}
	if (o.server ? !o.ports_file : (!o.port1 || !o.port2))
		die("server needs --ports-file, client --port1 and --port2");
	if (o.workers < 1 || o.workers > 256 || o.threads < 1 || o.threads > 256 || o.timeout <= 0)
		die("--workers/--threads 1..256, --timeout > 0");
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (o.server)
		run_server(); /* until SIGTERM */
	else
		run_client();
	ok = n_failed == 0 && n_good > 0;
	printf("result role=%s ok=%d conns=%" PRIu64 " good=%" PRIu64 " failed=%" PRIu64
	       " client_first=%" PRIu64 " server_first=%" PRIu64 " timeouts=%" PRIu64
	       " resets=%" PRIu64 " eofs=%" PRIu64 " bad=%" PRIu64 "\n",
	       o.server ? "server" : "client", ok, n_good + n_failed, n_good, n_failed,
	       n_cfirst, n_sfirst, n_fail[F_TIMEOUT], n_fail[F_RESET], n_fail[F_EOF],
	       n_fail[F_BAD] + n_fail[F_OTHER]);
	fflush(stdout);
	return ok ? 0 : 1;
}

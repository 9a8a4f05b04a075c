// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * splicekit: a TCP server that reads with splice(2), the way HAProxy's
 * splice mode, Go's io.Copy between TCP connections and other L4 relays
 * do, and a client that checks what becomes of its connections.
 *
 * tcp_splice_read() (net/ipv4/tcp.c) reads sk_receive_queue only; bytes a
 * sockmap redirect queued on psock->ingress_msg are invisible to it, while
 * poll() says readable (sk_msg_is_readable).  So a splice reader on a
 * redirected connection waits forever: that is what this tool measures.
 *
 *   splicekit server --listen ADDR:PORT --ready-file F --out F
 *                    [--conns N] [--recv-first K] [--timeout S]
 *                    [--io-uring | --sendfile]
 *   splicekit client --connect ADDR:PORT --out F [--conns N] [--parallel P]
 *                    [--bytes N] [--seed S] [--timeout S]
 *
 * The client sends, per connection, a 16-byte header ("SPLK", its local
 * port, the payload length) and the payload (a pattern of the seed and
 * port), then waits for the server's 16-byte ack ("SPOK", port, bytes
 * read).  The server reads the first --recv-first bytes with recv(), the
 * rest with splice(socket -> pipe) and read(pipe), checks every byte,
 * acks, waits for the client's EOF and closes.  --io-uring splices
 * through io_uring (IORING_OP_SPLICE, one ring per connection) instead of
 * the syscall: what a reader built on io_uring does, which the splice(2)
 * tracepoint never sees.  --sendfile reads with sendfile(pipe, socket)
 * instead: do_sendfile() (fs/read_write.c) hands a pipe output to
 * splice_file_to_pipe(), which ends in the same tcp_splice_read(),
 * without a splice(2) syscall either.
 *
 * Both ends write one line per connection to --out, keyed by the client's
 * port (so the test joins the two views):
 *
 *   conn port=P outcome=O start=T0 end=T1 bytes=N detail=...
 *
 * O is ok, reset (ECONNRESET, ECONNABORTED, EPIPE, EACCES: an error the
 * peer or an agent caused on purpose), eof (the stream ended early),
 * timeout (nothing happened for --timeout seconds: a hang), bad (a wrong
 * byte) or error.  T0/T1 are CLOCK_MONOTONIC seconds, comparable between
 * the two processes.  Every wait is a poll() bounded by --timeout.
 * Exit 0 when every connection is ok, 1 otherwise, 2 on usage errors.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <liburing.h>
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
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "toolkit.h"

#define HDR_LEN 16
#define MAX_CONNS 4096
/* srv_read: nothing came before the deadline; EOF in srv_read_full */
#define R_TIMEOUT (-100000)
#define R_EOF     (-100001)

struct opts {
	bool server;
	struct sockaddr_in addr;
	const char *out, *ready_file;
	unsigned conns, parallel;
	uint64_t bytes, seed, recv_first;
	double timeout;
	bool io_uring, sendfile;
};

static struct opts o = {
	.conns = 40, .parallel = 4, .bytes = 65536, .seed = 1, .timeout = 3,
};
static FILE *g_out;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned g_next, g_bad_total;

static void die(const char *msg)
{
	fprintf(stderr, "splicekit: %s\n", msg);
	exit(2);
}

/* byte off of the payload of the connection from port */
static uint8_t pat(uint16_t port, uint64_t off)
{
	return (uint8_t)(mix64(o.seed ^ ((uint64_t)port << 48) ^ (off >> 3)) >> (8 * (off & 7)));
}

static bool is_reset(int err)
{
	return err == ECONNRESET || err == ECONNABORTED || err == EPIPE || err == EACCES;
}

struct conn {
	int fd;
	uint16_t port;  /* the client's port */
	double t0;
	double deadline;
	uint64_t bytes; /* payload bytes read (server) or sent (client) */
	const char *outcome;
	char detail[160];
};

static void conn_end(struct conn *c, const char *outcome, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void conn_end(struct conn *c, const char *outcome, const char *fmt, ...)
{
	va_list ap;

	if (c->outcome)
		return;
	c->outcome = outcome;
	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
	va_end(ap);
	for (char *p = c->detail; *p; p++)
		if (*p == ' ')
			*p = '_';
}

static void conn_report(struct conn *c)
{
	pthread_mutex_lock(&g_lock);
	fprintf(g_out, "conn port=%u outcome=%s start=%.6f end=%.6f bytes=%" PRIu64
		" detail=%s\n", c->port, c->outcome ? c->outcome : "ok", c->t0, now_s(),
		c->bytes, c->detail[0] ? c->detail : "-");
	fflush(g_out);
	if (c->outcome && strcmp(c->outcome, "ok"))
		g_bad_total++;
	pthread_mutex_unlock(&g_lock);
}

/* End a connection on an errno from a syscall */
static void conn_errno(struct conn *c, int err, const char *what)
{
	conn_end(c, is_reset(err) ? "reset" : "error", "%s:%s", what, strerrorname_np(err));
}

/* ------------------------------------------------------------------ */
/* server                                                               */

struct srv_conn {
	struct conn c;
	int pipe[2];
	struct io_uring ring; /* --io-uring */
	bool has_ring;
	uint64_t off; /* stream offset: header + payload */
	pthread_t th;
};

/* splice(2)'s result, through io_uring: one SQE, its CQE (the op runs in
 * an io-wq worker: splice has no inline non-blocking path).  >= 0 or -1
 * with errno set, as the syscall. */
static ssize_t uring_splice(struct srv_conn *s, size_t len, unsigned int flags)
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	int ret;

	sqe = io_uring_get_sqe(&s->ring);
	if (!sqe) {
		errno = EBUSY;
		return -1;
	}
	io_uring_prep_splice(sqe, s->c.fd, -1, s->pipe[1], -1, len, flags);
	ret = io_uring_submit_and_wait(&s->ring, 1);
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	ret = io_uring_peek_cqe(&s->ring, &cqe);
	if (ret) {
		errno = -ret;
		return -1;
	}
	ret = cqe->res;
	io_uring_cqe_seen(&s->ring, cqe);
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return ret;
}

/*
 * Read up to len stream bytes into buf: recv() while the offset is below
 * --recv-first, splice() through the pipe after.  >0 bytes, 0 EOF, -errno,
 * or R_TIMEOUT when nothing came before the deadline.
 */
static ssize_t srv_read(struct srv_conn *s, uint8_t *buf, size_t len)
{
	bool use_recv = s->off < o.recv_first;
	ssize_t n, got;

	if (use_recv && len > o.recv_first - s->off)
		len = o.recv_first - s->off;
	for (;;) {
		if (use_recv) {
			n = recv(s->c.fd, buf, len, MSG_DONTWAIT);
		} else {
			/* sendfile: non-blocking as the socket is
			 * (accept4): tcp_splice_read() takes its
			 * timeout from the socket's O_NONBLOCK, not
			 * from splice flags, which sendfile has none of */
			if (o.io_uring)
				n = uring_splice(s, len, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
			else if (o.sendfile)
				n = sendfile(s->pipe[1], s->c.fd, NULL, len);
			else
				n = splice(s->c.fd, NULL, s->pipe[1], NULL, len,
					   SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
			if (n > 0) {
				/* empty the pipe into buf: it held nothing before */
				for (got = 0; got < n;) {
					ssize_t r = read(s->pipe[0], buf + got, n - got);

					if (r <= 0)
						return r < 0 ? -errno : -EIO;
					got += r;
				}
			}
		}
		if (n >= 0) {
			s->off += n;
			s->c.deadline = now_s() + o.timeout; /* progress */
			return n;
		}
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
		if (!wait_fd(s->c.fd, POLLIN, s->c.deadline))
			return R_TIMEOUT;
		/* poll says readable while splice finds nothing (bytes sit in
		 * the psock): don't spin on the CPU we share */
		usleep(5000);
	}
}

/* Read exactly len bytes: 0, R_EOF, or the srv_read error */
static int srv_read_full(struct srv_conn *s, uint8_t *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = srv_read(s, buf, len);
		if (n == 0)
			return R_EOF;
		if (n < 0)
			return (int)n;
		buf += n;
		len -= n;
	}
	return 0;
}

static void srv_fail(struct srv_conn *s, int err, const char *what)
{
	if (err == R_TIMEOUT)
		conn_end(&s->c, "timeout", "%s:nothing_for_%.1fs_at_offset_%" PRIu64, what,
			 o.timeout, s->off);
	else if (err == R_EOF)
		conn_end(&s->c, "eof", "%s:EOF_at_offset_%" PRIu64, what, s->off);
	else
		conn_errno(&s->c, -err, what);
}

static void *srv_conn_thread(void *arg)
{
	struct srv_conn *s = arg;
	uint8_t hdr[HDR_LEN], buf[65536], ack[HDR_LEN];
	uint64_t len, i;
	int err;

	if (pipe2(s->pipe, O_CLOEXEC)) {
		conn_errno(&s->c, errno, "pipe2");
		goto out;
	}
	if (o.io_uring) {
		err = io_uring_queue_init(4, &s->ring, 0);
		if (err) {
			conn_errno(&s->c, -err, "io_uring_queue_init");
			goto out;
		}
		s->has_ring = true;
	}
	err = srv_read_full(s, hdr, HDR_LEN);
	if (err) {
		srv_fail(s, err, "header");
		goto out;
	}
	if (memcmp(hdr, "SPLK", 4)) {
		conn_end(&s->c, "bad", "header_magic_%02x%02x%02x%02x", hdr[0], hdr[1], hdr[2], hdr[3]);
		goto out;
	}
	memcpy(&len, hdr + 8, 8);
	while (s->c.bytes < len) {
		size_t want = len - s->c.bytes < sizeof(buf) ? len - s->c.bytes : sizeof(buf);
		ssize_t n = srv_read(s, buf, want);

		if (n <= 0) {
			srv_fail(s, n == 0 ? R_EOF : (int)n, "payload");
			goto out;
		}
		for (i = 0; i < (uint64_t)n; i++)
			if (buf[i] != pat(s->c.port, s->c.bytes + i)) {
				conn_end(&s->c, "bad", "wrong_byte_at_payload_offset_%" PRIu64,
					 s->c.bytes + i);
				goto out;
			}
		s->c.bytes += n;
	}
	memcpy(ack, "SPOK", 4);
	memcpy(ack + 4, &s->c.port, 2);
	memset(ack + 6, 0, 2);
	memcpy(ack + 8, &s->c.bytes, 8);
	if (send(s->c.fd, ack, HDR_LEN, MSG_NOSIGNAL | MSG_DONTWAIT) != HDR_LEN) {
		conn_errno(&s->c, errno, "send_ack");
		goto out;
	}
	/* the client closes once it has the ack; EOF (or a reset) ends us */
	s->c.deadline = now_s() + o.timeout;
	err = srv_read_full(s, buf, 1);
	if (err == R_TIMEOUT)
		conn_end(&s->c, "timeout", "no_EOF_after_ack");
	else if (err != R_EOF && err != 0 && !is_reset(-err))
		conn_errno(&s->c, -err, "wait_EOF");
out:
	conn_report(&s->c);
	close(s->c.fd);
	if (s->pipe[0] >= 0) {
		close(s->pipe[0]);
		close(s->pipe[1]);
	}
	if (s->has_ring)
		io_uring_queue_exit(&s->ring);
	return NULL;
}

static int run_server(void)
{
	struct srv_conn *conns = calloc(o.conns, sizeof(*conns));
	struct sockaddr_in peer;
	socklen_t plen = sizeof(o.addr);
	int lfd, one = 1;
	unsigned n = 0, i;
	FILE *f;

	if (!conns)
		die("out of memory");
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (lfd < 0 || bind(lfd, (void *)&o.addr, sizeof(o.addr)) || listen(lfd, 128) ||
	    getsockname(lfd, (void *)&o.addr, &plen)) {
		perror("splicekit server: listen");
		return 2;
	}
	f = fopen(o.ready_file, "w");
	if (!f || fprintf(f, "%u\n", ntohs(o.addr.sin_port)) < 0 || fclose(f))
		die("cannot write --ready-file");
	while (n < o.conns && !g_stop) {
		struct pollfd p = { .fd = lfd, .events = POLLIN };
		struct srv_conn *s = &conns[n];

		if (poll(&p, 1, 100) <= 0)
			continue;
		plen = sizeof(peer);
		s->c.fd = accept4(lfd, (void *)&peer, &plen, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (s->c.fd < 0)
			continue;
		s->c.port = ntohs(peer.sin_port);
		s->c.t0 = now_s();
		s->c.deadline = s->c.t0 + o.timeout;
		s->pipe[0] = s->pipe[1] = -1;
		if (pthread_create(&s->th, NULL, srv_conn_thread, s))
			die("pthread_create");
		n++;
	}
	for (i = 0; i < n; i++)
		pthread_join(conns[i].th, NULL);
	/* freed: LeakSanitizer checks a sanitized splicekit's exit */
	free(conns);
	close(lfd);
	fprintf(g_out, "summary role=server conns=%u not_ok=%u\n", n, g_bad_total);
	return g_bad_total || n < o.conns ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* client                                                               */

static void cli_one(void)
{
	struct conn c = { .fd = -1 };
	struct sockaddr_in me;
	socklen_t len = sizeof(me);
	uint8_t buf[65536], hdr[HDR_LEN], ack[HDR_LEN];
	uint64_t total, sent = 0, acked;
	size_t got = 0;
	ssize_t n;
	int err = 0;

	c.t0 = now_s();
	c.deadline = c.t0 + o.timeout;
	c.fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c.fd < 0 || (connect(c.fd, (void *)&o.addr, sizeof(o.addr)) && errno != EINPROGRESS)) {
		conn_errno(&c, errno, "connect");
		goto out;
	}
	/* bound now (the SYN is out): a connection reset before the
	 * handshake is seen here still names its port, so the test can join
	 * it with the server's view */
	getsockname(c.fd, (void *)&me, &len);
	c.port = ntohs(me.sin_port);
	if (!wait_fd(c.fd, POLLOUT, c.deadline)) {
		conn_end(&c, "timeout", "connect");
		goto out;
	}
	len = sizeof(err);
	getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len);
	if (err) {
		conn_errno(&c, err, "connect");
		goto out;
	}
	memcpy(hdr, "SPLK", 4);
	memcpy(hdr + 4, &c.port, 2);
	memset(hdr + 6, 0, 2);
	memcpy(hdr + 8, &o.bytes, 8);
	total = HDR_LEN + o.bytes;
	while (sent < total) {
		size_t chunk = 0;

		if (sent < HDR_LEN) {
			memcpy(buf, hdr + sent, HDR_LEN - sent);
			chunk = HDR_LEN - sent;
		}
		for (; chunk < sizeof(buf) && sent + chunk < total; chunk++)
			buf[chunk] = pat(c.port, sent + chunk - HDR_LEN);
		n = send(c.fd, buf, chunk, MSG_NOSIGNAL);
		if (n > 0) {
			sent += n;
			c.deadline = now_s() + o.timeout; /* progress */
			continue;
		}
		if (errno != EAGAIN && errno != EINTR) {
			conn_errno(&c, errno, "send");
			goto out;
		}
		if (!wait_fd(c.fd, POLLOUT, c.deadline)) {
			conn_end(&c, "timeout", "send_blocked_at_%" PRIu64, sent);
			goto out;
		}
	}
	c.bytes = sent - HDR_LEN;
	while (got < HDR_LEN) {
		n = recv(c.fd, ack + got, HDR_LEN - got, 0);
		if (n > 0) {
			got += n;
			continue;
		}
		if (n == 0) {
			conn_end(&c, "eof", "EOF_before_ack_(%zu_of_16_bytes)", got);
			goto out;
		}
		if (errno != EAGAIN && errno != EINTR) {
			conn_errno(&c, errno, "recv_ack");
			goto out;
		}
		if (!wait_fd(c.fd, POLLIN, c.deadline)) {
			conn_end(&c, "timeout", "no_ack_for_%.1fs", o.timeout);
			goto out;
		}
	}
	memcpy(&acked, ack + 8, 8);
	if (memcmp(ack, "SPOK", 4) || memcmp(ack + 4, &c.port, 2) || acked != o.bytes) {
		conn_end(&c, "bad", "ack_says_%" PRIu64 "_bytes", acked);
		goto out;
	}
out:
	conn_report(&c);
	if (c.fd >= 0)
		close(c.fd);
}

static void *cli_thread(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&g_lock);
		if (g_stop || g_next >= o.conns) {
			pthread_mutex_unlock(&g_lock);
			return NULL;
		}
		g_next++;
		pthread_mutex_unlock(&g_lock);
		cli_one();
	}
}

static int run_client(void)
{
	pthread_t th[64];
	unsigned i;

	for (i = 0; i < o.parallel; i++)
		if (pthread_create(&th[i], NULL, cli_thread, NULL))
			die("pthread_create");
	for (i = 0; i < o.parallel; i++)
		pthread_join(th[i], NULL);
	fprintf(g_out, "summary role=client conns=%u not_ok=%u\n", g_next, g_bad_total);
	return g_bad_total ? 1 : 0;
}

/* ------------------------------------------------------------------ */

static uint64_t parse_num(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 0);

	if (end == s)
		die("bad number");
	if (*end == 'K' || *end == 'k')
		v <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		v <<= 20, end++;
	if (*end)
		die("bad number");
	return v;
}

static void parse_addr(const char *s)
{
	char host[64];
	const char *colon = strrchr(s, ':');

	if (!colon || (size_t)(colon - s) >= sizeof(host))
		die("address must be IPv4:PORT");
	memcpy(host, s, colon - s);
	host[colon - s] = 0;
	o.addr.sin_family = AF_INET;
	o.addr.sin_port = htons((uint16_t)parse_num(colon + 1));
	if (inet_pton(AF_INET, host, &o.addr.sin_addr) != 1)
		die("address must be IPv4:PORT");
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "listen", 1, 0, 'l' }, { "connect", 1, 0, 'c' }, { "out", 1, 0, 'o' },
		{ "ready-file", 1, 0, 'r' }, { "conns", 1, 0, 'n' }, { "parallel", 1, 0, 'p' },
		{ "bytes", 1, 0, 'b' }, { "seed", 1, 0, 's' }, { "timeout", 1, 0, 't' },
		{ "recv-first", 1, 0, 'f' }, { "io-uring", 0, 0, 'u' }, { "sendfile", 0, 0, 'S' },
		{ 0 },
	};
	struct sigaction sa = { .sa_handler = on_signal };
	int c;

	if (argc < 2 || (strcmp(argv[1], "server") && strcmp(argv[1], "client")))
		die("usage: splicekit server|client OPTIONS (see the comment at the top)");
	o.server = !strcmp(argv[1], "server");
	argv++, argc--;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'l': case 'c': parse_addr(optarg); break;
		case 'o': o.out = optarg; break;
		case 'r': o.ready_file = optarg; break;
		case 'n': o.conns = parse_num(optarg); break;
		case 'p': o.parallel = parse_num(optarg); break;
		case 'b': o.bytes = parse_num(optarg); break;
		case 's': o.seed = parse_num(optarg); break;
		case 't': o.timeout = strtod(optarg, NULL); break;
		case 'f': o.recv_first = parse_num(optarg); break;
		case 'u': o.io_uring = true; break;
		case 'S': o.sendfile = true; break;
		default: die("unknown option");
		}
	}
	if (!o.addr.sin_family || !o.out || (o.server && !o.ready_file))
		die("--listen/--connect, --out (and for the server --ready-file) are required");
	if (o.io_uring && o.sendfile)
		die("--io-uring or --sendfile, not both");
	if (o.conns < 1 || o.conns > MAX_CONNS || o.parallel < 1 || o.parallel > 64 ||
	    o.timeout <= 0)
		die("--conns 1..4096, --parallel 1..64, --timeout > 0");
	g_out = fopen(o.out, "w");
	if (!g_out)
		die("cannot open --out");
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return o.server ? run_server() : run_client();
}

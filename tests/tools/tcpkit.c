// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * tcpkit: deterministic TCP traffic for the integration tests.
 *
 * Every byte a tcpkit end sends is a function of a seed and its offset in
 * the stream, so the receiving end checks every byte it gets and reports
 * the offset of the first wrong one.  Both ends print exactly one result
 * line on stdout (and to --out FILE) when done:
 *
 *   result role=client mode=verify ok=1 conns=1 errors=0 bytes_out=... \
 *          bytes_in=... first_bad=-1 bad_conns=0 seq_errors=0 resets=0 ...
 *
 * and exit 0 when ok=1, 1 otherwise (2 for a usage error).  Every wait is
 * a poll() bounded by --timeout, so nothing ever hangs.
 *
 * Modes (the client and server must use the same one):
 *   verify  client sends --bytes of pattern(seed), shuts down its write
 *           side (half-close) and reads to EOF.  The server reads to EOF,
 *           checking every byte, then writes a 64-byte ack line
 *           "TKACK bytes=N bad=OFF reply=R" and R (--reply-bytes) bytes of
 *           the reply pattern (derived from the same seed) and closes.
 *           The client checks the ack and every reply byte.
 *   echo    full duplex: the server echoes everything back; the client
 *           sends and reads at the same time and checks the echo.
 *   sink    like verify without ack or reply: the server just checks.
 *   rr      request/response: framed requests with sequence numbers,
 *           --pipeline of them in flight, --rounds per connection.  The
 *           client sends its first request the moment connect() completes.
 *           The server checks request order and payload, the client
 *           checks response order and payload.  The last request carries
 *           a LAST flag; the server closes after answering it, so TIME_WAIT
 *           lands on the server side (or --client-close: client closes).
 *
 * RST: --rst-after N makes the sending side close with SO_LINGER {1, 0}
 * after N bytes of its stream.  The other side, given --allow-reset,
 * accepts ECONNRESET / EPIPE / early EOF as the end of the stream, as long
 * as every byte it did get is a correct prefix.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "toolkit.h"

#ifndef IP_BIND_ADDRESS_NO_PORT
#define IP_BIND_ADDRESS_NO_PORT 24
#endif

#define ACK_LEN        64
#define RQ_MAGIC       0x51524b54u /* "TKRQ" little endian */
#define RS_MAGIC       0x53524b54u /* "TKRS" */
#define RQ_HDR         24
#define RS_HDR         16
#define RQ_LAST        1u
#define MAX_RR_PAYLOAD (16u << 20)
#define MAX_ERR_MSGS   20

/* ------------------------------------------------------------------ */
/* options                                                              */

enum mode { M_VERIFY, M_ECHO, M_SINK, M_RR };
static const char *mode_names[] = { "verify", "echo", "sink", "rr" };

struct addr {
	struct sockaddr_storage ss;
	socklen_t len;
	int family;
	bool has_port;
};

struct opts {
	bool server;
	enum mode mode;
	struct addr addr; /* --listen / --connect */
	struct addr bind;
	bool has_bind;
	uint64_t seed;
	uint64_t bytes;        /* client: bytes to send */
	int64_t expect_bytes;  /* server: -1 = don't check the count */
	uint64_t reply_bytes;  /* server, verify mode */
	size_t chunk;
	uint64_t rst_after;
	bool has_rst;
	bool allow_reset;
	uint64_t conns;        /* 0: unlimited */
	unsigned parallel;     /* client threads / server workers */
	double duration;       /* seconds, 0: none */
	int timeout_ms;
	int start_delay_ms;
	unsigned rounds, pipeline;
	uint32_t req_size, resp_size;
	bool client_close;
	bool split_writes;
	uint64_t window;       /* echo client: max bytes sent and not yet echoed */
	int defer_accept;
	bool v6only;
	const char *out, *ready_file, *connected_file;
	bool quiet;
};

/* ------------------------------------------------------------------ */
/* globals                                                              */

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_err_msgs;
static const char *g_role = "tcpkit";

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "tcpkit %s: ", g_role);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* ------------------------------------------------------------------ */
/* the byte pattern                                                     */

/* The key of one stream: a seed plus what the stream is (salt). */
static uint64_t stream_key(uint64_t seed, uint64_t salt)
{
	return mix64(seed ^ mix64(salt));
}

#define SALT_DATA  0x44415441ULL /* client -> server bulk data */
#define SALT_REPLY 0x5245504cULL /* server -> client reply (verify mode) */
#define SALT_REQ   0x52455100ULL /* rr request payload, ^ seq */
#define SALT_RESP  0x52455300ULL /* rr response payload, ^ seq */

/* byte i of stream key = byte (i % 8) of mix64(key + i / 8), little endian */
static void pat_fill(uint8_t *buf, size_t len, uint64_t key, uint64_t off)
{
	while (len) {
		uint64_t v = mix64(key + (off >> 3));
		unsigned b = off & 7, i;
		size_t n = 8 - b;

		if (n > len)
			n = len;
		for (i = 0; i < n; i++)
			buf[i] = (uint8_t)(v >> (8 * (b + i)));
		buf += n;
		off += n;
		len -= n;
	}
}

/* Index of the first byte of buf that is not the pattern, or -1. */
static int64_t pat_check(const uint8_t *buf, size_t len, uint64_t key, uint64_t off)
{
	uint8_t tmp[4096];
	size_t done = 0, n, i;

	while (done < len) {
		n = len - done < sizeof(tmp) ? len - done : sizeof(tmp);
		pat_fill(tmp, n, key, off + done);
		if (memcmp(tmp, buf + done, n)) {
			for (i = 0; i < n; i++)
				if (tmp[i] != buf[done + i])
					return (int64_t)(done + i);
		}
		done += n;
	}
	return -1;
}

/* ------------------------------------------------------------------ */
/* results                                                              */

struct stats {
	uint64_t conns;      /* connections that completed correctly */
	uint64_t errors;     /* connections that failed */
	uint64_t bytes_in, bytes_out;
	uint64_t resets;     /* resets / early ends seen (with --allow-reset) */
	uint64_t rst_sent;   /* connections we closed with RST */
	uint64_t seq_errors; /* rr: out-of-order or malformed frames */
	uint64_t bad_conns;  /* connections that got a wrong byte */
	uint64_t timeouts;
	uint64_t rounds;     /* rr: responses (client) / requests (server) */
	int64_t first_bad;   /* offset of the first wrong byte seen, or -1 */
};

static struct stats g_stats = { .first_bad = -1 };

struct conn {
	const struct opts *o;
	uint64_t id;
	int fd;
	bool failed;
	uint64_t bytes_in, bytes_out, resets, rst_sent, seq_errors, rounds, timeouts;
	int64_t first_bad;
};

static void conn_fail(struct conn *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void conn_fail(struct conn *c, const char *fmt, ...)
{
	va_list ap;
	bool print;

	c->failed = true;
	pthread_mutex_lock(&g_lock);
	print = g_err_msgs++ < MAX_ERR_MSGS;
	if (print) {
		fprintf(stderr, "tcpkit %s: conn %" PRIu64 ": ", g_role, c->id);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	} else if (g_err_msgs == MAX_ERR_MSGS + 1) {
		fprintf(stderr, "tcpkit %s: (further errors not printed)\n", g_role);
	}
	pthread_mutex_unlock(&g_lock);
}

static void conn_merge(struct conn *c)
{
	pthread_mutex_lock(&g_lock);
	if (c->failed)
		g_stats.errors++;
	else
		g_stats.conns++;
	g_stats.bytes_in += c->bytes_in;
	g_stats.bytes_out += c->bytes_out;
	g_stats.resets += c->resets;
	g_stats.rst_sent += c->rst_sent;
	g_stats.seq_errors += c->seq_errors;
	g_stats.rounds += c->rounds;
	g_stats.timeouts += c->timeouts;
	if (c->first_bad >= 0) {
		g_stats.bad_conns++;
		if (g_stats.first_bad < 0)
			g_stats.first_bad = c->first_bad;
	}
	pthread_mutex_unlock(&g_lock);
}

/* ------------------------------------------------------------------ */
/* I/O on non-blocking sockets, every wait bounded                      */

#define IO_TIMEOUT (-10000)
#define IO_STOP    (-10001)

/* Wait for events on fd.  0 when ready, IO_TIMEOUT, IO_STOP or -errno. */
static int wait_io(int fd, short events, int timeout_ms, short *revents)
{
	double deadline = now_s() + timeout_ms / 1000.0;
	struct pollfd p = { .fd = fd, .events = events };
	int r, slice;

	for (;;) {
		if (g_stop)
			return IO_STOP;
		slice = (int)((deadline - now_s()) * 1000) + 1;
		if (slice > 100)
			slice = 100;
		if (slice < 0)
			slice = 0;
		r = poll(&p, 1, slice);
		if (r > 0) {
			if (revents)
				*revents = p.revents;
			return 0;
		}
		if (r < 0 && errno != EINTR)
			return -errno;
		if (now_s() >= deadline)
			return IO_TIMEOUT;
	}
}

static const char *io_str(int err)
{
	if (err == IO_TIMEOUT)
		return "timeout";
	if (err == IO_STOP)
		return "stopped by signal";
	return strerror(-err);
}

static bool is_reset(int err)
{
	return err == -ECONNRESET || err == -EPIPE || err == -ECONNABORTED;
}

/* Read what is there (waiting up to the timeout): >0 bytes, 0 EOF, <0 error */
static ssize_t read_some(struct conn *c, void *buf, size_t cap)
{
	ssize_t n;
	int r;

	for (;;) {
		n = recv(c->fd, buf, cap, 0);
		if (n >= 0) {
			c->bytes_in += n;
			return n;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return -errno;
		r = wait_io(c->fd, POLLIN, c->o->timeout_ms, NULL);
		if (r == IO_TIMEOUT)
			c->timeouts++;
		if (r)
			return r;
	}
}

/* Write all of buf.  0 or <0 error. */
static int write_all(struct conn *c, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	ssize_t n;
	int r;

	while (len) {
		n = send(c->fd, p, len, MSG_NOSIGNAL);
		if (n > 0) {
			p += n;
			len -= n;
			c->bytes_out += n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN)
			return -errno;
		r = wait_io(c->fd, POLLOUT, c->o->timeout_ms, NULL);
		if (r == IO_TIMEOUT)
			c->timeouts++;
		if (r)
			return r;
	}
	return 0;
}

/* Close with SO_LINGER {1, 0}: the kernel sends RST instead of FIN. */
static void rst_close(struct conn *c)
{
	struct linger l = { .l_onoff = 1, .l_linger = 0 };

	if (setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l)))
		conn_fail(c, "SO_LINGER: %s", strerror(errno));
	close(c->fd);
	c->fd = -1;
	c->rst_sent++;
}

/* A read or write ended the stream early: fine only with --allow-reset. */
static void early_end(struct conn *c, int err, const char *what, uint64_t at)
{
	if (c->o->allow_reset && (err == 0 || is_reset(err))) {
		c->resets++;
		return;
	}
	if (err == 0)
		conn_fail(c, "%s: unexpected EOF at offset %" PRIu64, what, at);
	else
		conn_fail(c, "%s: %s at offset %" PRIu64, what, io_str(err), at);
}

/* Read to EOF checking stream key; *got = bytes read.  Returns 0 at EOF,
 * else the error (already reported unless it is a reset we accept). */
static int read_verify_to_eof(struct conn *c, uint64_t key, uint64_t *got,
			      int64_t limit, const char *what)
{
	size_t cap = c->o->chunk;
	uint8_t *buf = malloc(cap);
	uint64_t off = 0;
	int64_t bad;
	ssize_t n;
	int ret = 0;

	if (!buf)
		die("out of memory");
	for (;;) {
		n = read_some(c, buf, cap);
		if (n == 0)
			break;
		if (n < 0) {
			ret = (int)n;
			break;
		}
		if (c->first_bad < 0) {
			bad = pat_check(buf, n, key, off);
			if (bad >= 0) {
				c->first_bad = off + bad;
				conn_fail(c, "%s: wrong byte at offset %" PRId64, what,
					  c->first_bad);
			}
		}
		off += n;
		if (limit >= 0 && off > (uint64_t)limit && c->first_bad < 0) {
			c->first_bad = limit;
			conn_fail(c, "%s: more than the %" PRId64 " expected bytes", what, limit);
		}
	}
	free(buf);
	*got = off;
	return ret;
}

/* Send total bytes of stream key in --chunk pieces.  Stops early after
 * --rst-after bytes (then closes with RST and sets *rst).  Returns 0 or the
 * error. */
static int send_stream(struct conn *c, uint64_t key, uint64_t total, bool *rst)
{
	size_t cap = c->o->chunk;
	uint8_t *buf = malloc(cap);
	uint64_t off = 0, end = total;
	size_t n;
	int r = 0;

	if (!buf)
		die("out of memory");
	*rst = false;
	if (c->o->has_rst && c->o->rst_after < end)
		end = c->o->rst_after;
	while (off < end) {
		n = end - off < cap ? end - off : cap;
		pat_fill(buf, n, key, off);
		r = write_all(c, buf, n);
		if (r)
			break;
		off += n;
	}
	free(buf);
	if (!r && c->o->has_rst && c->o->rst_after <= total) {
		rst_close(c);
		*rst = true;
	}
	return r;
}

/* ------------------------------------------------------------------ */
/* rr framing                                                           */

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

static uint32_t get32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Growable byte queue: data in [off, len). */
struct bq {
	uint8_t *p;
	size_t off, len, cap;
};

static uint8_t *bq_reserve(struct bq *q, size_t n)
{
	if (q->off && q->off == q->len)
		q->off = q->len = 0;
	if (q->len + n > q->cap) {
		if (q->off) {
			memmove(q->p, q->p + q->off, q->len - q->off);
			q->len -= q->off;
			q->off = 0;
		}
		if (q->len + n > q->cap) {
			q->cap = (q->len + n) * 2;
			q->p = realloc(q->p, q->cap);
			if (!q->p)
				die("out of memory");
		}
	}
	return q->p + q->len;
}

static size_t bq_avail(const struct bq *q)
{
	return q->len - q->off;
}

/* rr's two queues, one pair per thread, kept from one connection to the
 * next and freed when the thread ends (bq_drop_kept).  bq_recv_some's
 * 64 KiB reserve grows a queue past 128 KiB: more than ASan's size-class
 * allocator serves, so each connection's queue was an mmap and a munmap
 * (a TLB shootdown across the threads): the sanitized tcpkit made 768
 * rr connections/s where the plain one made 5,730 (10 s, loopback). */
static __thread struct bq bq_kept[2];

static struct bq bq_take(int i)
{
	struct bq q = bq_kept[i];

	q.off = q.len = 0;
	return q;
}

static void bq_keep(int i, const struct bq *q)
{
	bq_kept[i] = *q;
}

static void bq_drop_kept(void)
{
	free(bq_kept[0].p);
	free(bq_kept[1].p);
	memset(bq_kept, 0, sizeof(bq_kept));
}

/* Send what the socket takes now.  0, or <0 error. */
static int bq_flush_some(struct conn *c, struct bq *q)
{
	ssize_t n;

	while (bq_avail(q)) {
		n = send(c->fd, q->p + q->off, bq_avail(q), MSG_NOSIGNAL);
		if (n > 0) {
			q->off += n;
			c->bytes_out += n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		return -errno;
	}
	return 0;
}

/* Receive what is there now into q (up to chunk).  >0, 0 EOF, -EAGAIN, <0 */
static ssize_t bq_recv_some(struct conn *c, struct bq *q)
{
	uint8_t *p = bq_reserve(q, c->o->chunk);
	ssize_t n;

	do {
		n = recv(c->fd, p, c->o->chunk, 0);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	q->len += n;
	c->bytes_in += n;
	return n;
}

/* ------------------------------------------------------------------ */
/* client                                                               */

static void write_marker(const char *path, const char *text)
{
	char tmp[PATH_MAX];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	f = fopen(tmp, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) || rename(tmp, path))
		die("cannot write %s: %s", path, strerror(errno));
}

static int client_connect(struct conn *c)
{
	const struct opts *o = c->o;
	int fd, one = 1, err = 0, r;
	socklen_t el = sizeof(err);

	fd = socket(o->addr.family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		conn_fail(c, "socket: %s", strerror(errno));
		return -1;
	}
	if (o->has_bind) {
		if (o->bind.has_port)
			setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		else
			setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&o->bind.ss, o->bind.len)) {
			conn_fail(c, "bind: %s", strerror(errno));
			close(fd);
			return -1;
		}
	}
	if (connect(fd, (struct sockaddr *)&o->addr.ss, o->addr.len)) {
		if (errno != EINPROGRESS) {
			conn_fail(c, "connect: %s", strerror(errno));
			close(fd);
			return -1;
		}
		r = wait_io(fd, POLLOUT, o->timeout_ms, NULL);
		if (r) {
			if (r == IO_TIMEOUT)
				c->timeouts++;
			conn_fail(c, "connect: %s", io_str(r));
			close(fd);
			return -1;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) || err) {
			conn_fail(c, "connect: %s", strerror(err ? err : errno));
			close(fd);
			return -1;
		}
	}
	c->fd = fd;
	return 0;
}

/* verify / sink: send, half-close, then ack + reply (verify) or EOF (sink) */
static void client_bulk(struct conn *c)
{
	const struct opts *o = c->o;
	uint64_t got = 0, abytes, areply;
	int64_t abad;
	char ack[ACK_LEN + 1];
	bool rst;
	size_t have = 0;
	ssize_t n;
	int r;

	r = send_stream(c, stream_key(o->seed, SALT_DATA), o->bytes, &rst);
	if (r) {
		early_end(c, r, "send", c->bytes_out);
		return;
	}
	if (rst)
		return;
	if (shutdown(c->fd, SHUT_WR)) {
		conn_fail(c, "shutdown(SHUT_WR): %s", strerror(errno));
		return;
	}
	if (o->mode == M_SINK) {
		r = read_verify_to_eof(c, 0, &got, 0, "after sink");
		if (r)
			early_end(c, r, "waiting for EOF", got);
		return;
	}
	while (have < ACK_LEN) {
		n = read_some(c, ack + have, ACK_LEN - have);
		if (n <= 0) {
			early_end(c, (int)n, "reading ack", have);
			return;
		}
		have += n;
	}
	ack[ACK_LEN] = 0;
	if (sscanf(ack, "TKACK bytes=%" SCNu64 " bad=%" SCNd64 " reply=%" SCNu64,
		   &abytes, &abad, &areply) != 3) {
		c->first_bad = 0;
		conn_fail(c, "malformed ack '%.*s'", ACK_LEN - 1, ack);
		return;
	}
	if (abad >= 0) {
		c->first_bad = abad;
		conn_fail(c, "server saw a wrong byte at offset %" PRId64, abad);
	}
	if (abytes != o->bytes)
		conn_fail(c, "server got %" PRIu64 " bytes, we sent %" PRIu64, abytes, o->bytes);
	r = read_verify_to_eof(c, stream_key(o->seed, SALT_REPLY), &got, areply, "reply");
	if (r) {
		early_end(c, r, "reading reply", got);
		return;
	}
	if (got != areply)
		early_end(c, 0, "reading reply", got);
}

/* echo: send and read at the same time, check the echo */
static void client_echo(struct conn *c)
{
	const struct opts *o = c->o;
	uint64_t key = stream_key(o->seed, SALT_DATA);
	uint64_t total = o->bytes, end = total, sent = 0, rcvd = 0;
	size_t cap = o->chunk, wlen = 0, woff = 0;
	uint8_t *wbuf = malloc(cap), *rbuf = malloc(cap);
	bool shut = false;
	int64_t bad;
	short rev;
	ssize_t n;
	int r;

	if (!wbuf || !rbuf)
		die("out of memory");
	if (o->has_rst && o->rst_after < end)
		end = o->rst_after;
	for (;;) {
		if (sent == end && o->has_rst && o->rst_after <= total) {
			rst_close(c);
			goto out;
		}
		/* write first: the client talks first, right after connect */
		if (sent < end && woff == wlen) {
			wlen = end - sent < cap ? end - sent : cap;
			if (o->window && wlen > o->window - (sent - rcvd))
				wlen = o->window - (sent - rcvd);
			woff = 0;
			pat_fill(wbuf, wlen, key, sent);
		}
		while (woff < wlen) {
			n = send(c->fd, wbuf + woff, wlen - woff, MSG_NOSIGNAL);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && errno == EAGAIN)
				break;
			if (n < 0 && o->allow_reset && is_reset(-errno)) {
				/* the peer reset: still read (and check) what it
				 * echoed before, up to the reset or EOF */
				c->resets++;
				end = total = sent;
				wlen = woff = 0;
				shut = true;
				break;
			}
			if (n < 0) {
				early_end(c, -errno, "send", sent);
				goto out;
			}
			woff += n;
			sent += n;
			c->bytes_out += n;
		}
		if (woff == wlen && sent < end && (!o->window || sent - rcvd < o->window))
			continue;
		if (sent == total && !shut) {
			/* half-close: the server echoes the rest, then closes */
			if (shutdown(c->fd, SHUT_WR)) {
				conn_fail(c, "shutdown(SHUT_WR): %s", strerror(errno));
				goto out;
			}
			shut = true;
		}
		n = recv(c->fd, rbuf, cap, 0);
		if (n > 0) {
			c->bytes_in += n;
			if (c->first_bad < 0) {
				bad = pat_check(rbuf, n, key, rcvd);
				if (bad >= 0) {
					c->first_bad = rcvd + bad;
					conn_fail(c, "echo: wrong byte at offset %" PRId64, c->first_bad);
				}
			}
			rcvd += n;
			if (rcvd > sent) {
				conn_fail(c, "echo: got %" PRIu64 " bytes, only sent %" PRIu64,
					  rcvd, sent);
				goto out;
			}
			continue;
		}
		if (n == 0) {
			if (rcvd != total && !c->resets)
				early_end(c, 0, "echo", rcvd);
			goto out;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN) {
			if (!(c->resets && is_reset(-errno)))
				early_end(c, -errno, "echo recv", rcvd);
			goto out;
		}
		r = wait_io(c->fd, POLLIN | (woff < wlen ? POLLOUT : 0), o->timeout_ms, &rev);
		if (r) {
			if (r == IO_TIMEOUT)
				c->timeouts++;
			conn_fail(c, "echo: %s (sent %" PRIu64 ", echoed %" PRIu64 ")",
				  io_str(r), sent, rcvd);
			goto out;
		}
	}
out:
	free(wbuf);
	free(rbuf);
}

static void rr_put_request(const struct opts *o, struct bq *q, uint32_t seq, bool last)
{
	uint8_t *p = bq_reserve(q, RQ_HDR + o->req_size);

	put32(p, RQ_MAGIC);
	put32(p + 4, seq);
	put32(p + 8, last ? RQ_LAST : 0);
	put32(p + 12, o->req_size);
	put32(p + 16, o->resp_size);
	put32(p + 20, (uint32_t)o->seed);
	pat_fill(p + RQ_HDR, o->req_size, stream_key(o->seed, SALT_REQ ^ ((uint64_t)seq << 32)), 0);
	q->len += RQ_HDR + o->req_size;
}

/* rr: pipelined request/response with sequence numbers */
static void client_rr(struct conn *c)
{
	const struct opts *o = c->o;
	struct bq out = bq_take(0), in = bq_take(1);
	uint32_t next = 0, done = 0, seq, len, flags;
	bool last;
	int64_t bad;
	uint8_t *p;
	short rev;
	ssize_t n;
	int r = 0, one = 1;

	/* request/response: no Nagle delay on the small requests */
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	while (done < o->rounds) {
		r = 0;
		while (next < o->rounds && next - done < o->pipeline) {
			rr_put_request(o, &out, next,
				       next + 1 == o->rounds && !o->client_close);
			next++;
			/* --split-writes: one send() per request, so a burst
			 * is several messages (several sk_msg verdicts) */
			if (o->split_writes && (r = bq_flush_some(c, &out)))
				break;
		}
		if (!r)
			r = bq_flush_some(c, &out);
		if (r) {
			early_end(c, r, "rr send", c->bytes_out);
			goto out;
		}
		/* parse complete responses */
		for (;;) {
			if (bq_avail(&in) < RS_HDR)
				break;
			p = in.p + in.off;
			len = get32(p + 12);
			if (get32(p) != RS_MAGIC || len != o->resp_size) {
				c->seq_errors++;
				conn_fail(c, "rr: malformed response header (round %u)", done);
				goto out;
			}
			if (bq_avail(&in) < RS_HDR + len)
				break;
			seq = get32(p + 4);
			flags = get32(p + 8);
			if (seq != done) {
				c->seq_errors++;
				conn_fail(c, "rr: response seq %u, expected %u", seq, done);
				goto out;
			}
			bad = pat_check(p + RS_HDR, len,
					stream_key(o->seed, SALT_RESP ^ ((uint64_t)seq << 32)), 0);
			if (bad >= 0) {
				c->first_bad = bad;
				conn_fail(c, "rr: response %u: wrong byte at payload offset %" PRId64,
					  seq, bad);
				goto out;
			}
			last = done + 1 == o->rounds && !o->client_close;
			if (!!(flags & RQ_LAST) != last) {
				c->seq_errors++;
				conn_fail(c, "rr: response %u has LAST=%u", seq, flags & RQ_LAST);
				goto out;
			}
			in.off += RS_HDR + len;
			done++;
			c->rounds++;
		}
		if (done == o->rounds)
			break;
		if (next < o->rounds && next - done < o->pipeline)
			continue; /* responses made room for more requests */
		n = bq_recv_some(c, &in);
		if (n > 0)
			continue;
		if (n == 0) {
			early_end(c, 0, "rr: EOF before response", done);
			goto out;
		}
		if (n != -EAGAIN) {
			early_end(c, (int)n, "rr recv", done);
			goto out;
		}
		r = wait_io(c->fd, POLLIN | (bq_avail(&out) ? POLLOUT : 0), o->timeout_ms, &rev);
		if (r) {
			if (r == IO_TIMEOUT)
				c->timeouts++;
			conn_fail(c, "rr: %s waiting for response %u (sent %u)", io_str(r),
				  done, next);
			goto out;
		}
	}
	if (bq_avail(&in)) {
		c->seq_errors++;
		conn_fail(c, "rr: %zu unexpected bytes after the last response", bq_avail(&in));
		goto out;
	}
	if (!o->client_close) {
		/* the server closes after the LAST response */
		uint64_t extra = 0;

		r = read_verify_to_eof(c, 0, &extra, 0, "rr after last response");
		if (r)
			early_end(c, r, "rr: waiting for the server's close", done);
	}
out:
	bq_keep(0, &out);
	bq_keep(1, &in);
}

static uint64_t g_next_conn;
static bool g_duration_hit;
static double g_t0, g_t_end;

static void client_one(const struct opts *o, uint64_t id)
{
	struct conn c = { .o = o, .id = id, .fd = -1, .first_bad = -1 };
	struct timespec ts;

	if (client_connect(&c) == 0) {
		if (id == 0 && o->connected_file)
			write_marker(o->connected_file, "connected\n");
		if (o->start_delay_ms > 0) {
			ts.tv_sec = o->start_delay_ms / 1000;
			ts.tv_nsec = (o->start_delay_ms % 1000) * 1000000L;
			nanosleep(&ts, NULL);
		}
		switch (o->mode) {
		case M_VERIFY:
		case M_SINK:
			client_bulk(&c);
			break;
		case M_ECHO:
			client_echo(&c);
			break;
		case M_RR:
			client_rr(&c);
			break;
		}
		if (c.fd >= 0)
			close(c.fd);
	}
	conn_merge(&c);
}

static void *client_thread(void *arg)
{
	const struct opts *o = arg;
	uint64_t id;

	for (;;) {
		if (g_stop)
			break;
		if (o->duration > 0 && now_s() >= g_t_end) {
			g_duration_hit = true;
			break;
		}
		id = __atomic_fetch_add(&g_next_conn, 1, __ATOMIC_RELAXED);
		if (o->conns && id >= o->conns)
			break;
		client_one(o, id);
	}
	bq_drop_kept();
	return NULL;
}

/* ------------------------------------------------------------------ */
/* server                                                               */

static int g_listen_fd = -1;
static uint64_t g_accepted;

static void server_bulk(struct conn *c)
{
	const struct opts *o = c->o;
	uint64_t got = 0, end, off = 0;
	char ack[ACK_LEN + 1];
	uint8_t *buf;
	size_t n;
	int r;

	r = read_verify_to_eof(c, stream_key(o->seed, SALT_DATA), &got, o->expect_bytes,
			       "data");
	if (r) {
		early_end(c, r, "reading data", got);
		return;
	}
	if (o->expect_bytes >= 0 && got != (uint64_t)o->expect_bytes) {
		if (o->allow_reset && got < (uint64_t)o->expect_bytes)
			c->resets++; /* peer went away early (RST seen as EOF) */
		else
			conn_fail(c, "got %" PRIu64 " bytes, expected %" PRId64, got,
				  o->expect_bytes);
	}
	if (o->mode == M_SINK)
		return;
	snprintf(ack, sizeof(ack), "TKACK bytes=%" PRIu64 " bad=%" PRId64 " reply=%" PRIu64,
		 got, c->first_bad, o->reply_bytes);
	n = strlen(ack);
	memset(ack + n, ' ', ACK_LEN - n);
	ack[ACK_LEN - 1] = '\n';
	r = write_all(c, ack, ACK_LEN);
	if (r) {
		early_end(c, r, "writing ack", 0);
		return;
	}
	end = o->reply_bytes;
	if (o->has_rst && o->rst_after < end)
		end = o->rst_after;
	buf = malloc(o->chunk);
	if (!buf)
		die("out of memory");
	while (off < end) {
		n = end - off < o->chunk ? end - off : o->chunk;
		pat_fill(buf, n, stream_key(o->seed, SALT_REPLY), off);
		r = write_all(c, buf, n);
		if (r) {
			early_end(c, r, "writing reply", off);
			break;
		}
		off += n;
	}
	free(buf);
	if (!r && o->has_rst && o->rst_after <= o->reply_bytes)
		rst_close(c);
}

static void server_echo(struct conn *c)
{
	const struct opts *o = c->o;
	uint64_t key = stream_key(o->seed, SALT_DATA), rcvd = 0, echoed = 0;
	uint64_t limit = o->has_rst ? o->rst_after : UINT64_MAX;
	size_t cap = o->chunk, len = 0, off = 0;
	uint8_t *buf = malloc(cap);
	bool eof = false;
	int64_t bad;
	ssize_t n;
	int r;

	if (!buf)
		die("out of memory");
	for (;;) {
		if (echoed >= limit) {
			rst_close(c);
			break;
		}
		if (off == len) {
			off = len = 0;
			if (eof) {
				if (o->expect_bytes >= 0 && rcvd != (uint64_t)o->expect_bytes) {
					if (o->allow_reset && rcvd < (uint64_t)o->expect_bytes)
						c->resets++;
					else
						conn_fail(c, "echo: got %" PRIu64 " bytes, expected %"
							  PRId64, rcvd, o->expect_bytes);
				}
				break;
			}
			n = recv(c->fd, buf, cap, 0);
			if (n > 0) {
				c->bytes_in += n;
				if (c->first_bad < 0) {
					bad = pat_check(buf, n, key, rcvd);
					if (bad >= 0) {
						c->first_bad = rcvd + bad;
						conn_fail(c, "echo: wrong byte at offset %" PRId64,
							  c->first_bad);
					}
				}
				rcvd += n;
				len = n;
				continue;
			}
			if (n == 0) {
				eof = true;
				continue;
			}
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN) {
				early_end(c, -errno, "echo recv", rcvd);
				break;
			}
			r = wait_io(c->fd, POLLIN, o->timeout_ms, NULL);
		} else {
			size_t want = len - off;

			if (limit - echoed < want)
				want = limit - echoed;
			n = send(c->fd, buf + off, want, MSG_NOSIGNAL);
			if (n > 0) {
				off += n;
				echoed += n;
				c->bytes_out += n;
				continue;
			}
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && errno != EAGAIN) {
				early_end(c, -errno, "echo send", echoed);
				break;
			}
			r = wait_io(c->fd, POLLOUT, o->timeout_ms, NULL);
		}
		if (r) {
			if (r == IO_TIMEOUT)
				c->timeouts++;
			conn_fail(c, "echo: %s (received %" PRIu64 ", echoed %" PRIu64 ")",
				  io_str(r), rcvd, echoed);
			break;
		}
	}
	free(buf);
}

static void server_rr(struct conn *c)
{
	const struct opts *o = c->o;
	struct bq in = bq_take(1), out = bq_take(0);
	uint32_t expect = 0, seq, flags, qlen, rlen, seed;
	bool closing = false, eof = false;
	int64_t bad;
	uint8_t *p, *w;
	ssize_t n;
	int r, one = 1;

	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	for (;;) {
		while (!closing && bq_avail(&in) >= RQ_HDR) {
			p = in.p + in.off;
			seq = get32(p + 4);
			flags = get32(p + 8);
			qlen = get32(p + 12);
			rlen = get32(p + 16);
			seed = get32(p + 20);
			if (get32(p) != RQ_MAGIC || qlen > MAX_RR_PAYLOAD || rlen > MAX_RR_PAYLOAD) {
				c->seq_errors++;
				conn_fail(c, "rr: malformed request header (request %u)", expect);
				goto out;
			}
			if (bq_avail(&in) < RQ_HDR + qlen)
				break;
			if (seq != expect) {
				c->seq_errors++;
				conn_fail(c, "rr: request seq %u, expected %u", seq, expect);
				goto out;
			}
			bad = pat_check(p + RQ_HDR, qlen,
					stream_key(seed, SALT_REQ ^ ((uint64_t)seq << 32)), 0);
			if (bad >= 0) {
				c->first_bad = bad;
				conn_fail(c, "rr: request %u: wrong byte at payload offset %" PRId64,
					  seq, bad);
				goto out;
			}
			in.off += RQ_HDR + qlen;
			w = bq_reserve(&out, RS_HDR + rlen);
			put32(w, RS_MAGIC);
			put32(w + 4, seq);
			put32(w + 8, flags & RQ_LAST);
			put32(w + 12, rlen);
			pat_fill(w + RS_HDR, rlen,
				 stream_key(seed, SALT_RESP ^ ((uint64_t)seq << 32)), 0);
			out.len += RS_HDR + rlen;
			expect++;
			c->rounds++;
			if (flags & RQ_LAST)
				closing = true;
		}
		r = bq_flush_some(c, &out);
		if (r) {
			early_end(c, r, "rr send", c->bytes_out);
			goto out;
		}
		if (closing && !bq_avail(&out))
			goto out; /* we close first: TIME_WAIT stays here */
		if (eof) {
			if (bq_avail(&in)) {
				c->seq_errors++;
				conn_fail(c, "rr: EOF inside request %u", expect);
			}
			if (!bq_avail(&out))
				goto out;
		}
		if (!eof && !closing) {
			n = bq_recv_some(c, &in);
			if (n > 0)
				continue;
			if (n == 0) {
				eof = true;
				continue;
			}
			if (n != -EAGAIN) {
				early_end(c, (int)n, "rr recv", expect);
				goto out;
			}
		}
		r = wait_io(c->fd, (eof || closing ? 0 : POLLIN) | (bq_avail(&out) ? POLLOUT : 0),
			    o->timeout_ms, NULL);
		if (r) {
			if (r == IO_TIMEOUT)
				c->timeouts++;
			conn_fail(c, "rr: %s after request %u", io_str(r), expect);
			goto out;
		}
	}
out:
	bq_keep(1, &in);
	bq_keep(0, &out);
}

static void *server_thread(void *arg)
{
	const struct opts *o = arg;
	struct pollfd p = { .fd = g_listen_fd, .events = POLLIN };
	struct conn c;
	uint64_t id;
	int fd;

	for (;;) {
		if (g_stop)
			break;
		if (o->conns && __atomic_load_n(&g_accepted, __ATOMIC_RELAXED) >= o->conns)
			break;
		if (o->duration > 0 && now_s() >= g_t_end) {
			g_duration_hit = true;
			break;
		}
		if (poll(&p, 1, 100) <= 0)
			continue;
		fd = accept4(g_listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
				fprintf(stderr, "tcpkit server: accept: %s\n", strerror(errno));
			continue;
		}
		id = __atomic_fetch_add(&g_accepted, 1, __ATOMIC_RELAXED);
		if (o->conns && id >= o->conns) {
			fprintf(stderr, "tcpkit server: connection beyond --conns %" PRIu64 "\n",
				o->conns);
			close(fd);
			break;
		}
		c = (struct conn){ .o = o, .id = id, .fd = fd, .first_bad = -1 };
		switch (o->mode) {
		case M_VERIFY:
		case M_SINK:
			server_bulk(&c);
			break;
		case M_ECHO:
			server_echo(&c);
			break;
		case M_RR:
			server_rr(&c);
			break;
		}
		if (c.fd >= 0)
			close(c.fd);
		conn_merge(&c);
	}
	bq_drop_kept();
	return NULL;
}

static void server_listen(const struct opts *o)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int one = 1, v6only = o->v6only;
	char port[32];
	uint16_t pn;

	g_listen_fd = socket(o->addr.family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (g_listen_fd < 0)
		die("socket: %s", strerror(errno));
	if (setsockopt(g_listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)))
		die("SO_REUSEADDR: %s", strerror(errno));
	/* [::] accepts IPv4 too (v4-mapped) unless --v6only */
	if (o->addr.family == AF_INET6 &&
	    setsockopt(g_listen_fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof(v6only)))
		die("IPV6_V6ONLY: %s", strerror(errno));
	if (bind(g_listen_fd, (struct sockaddr *)&o->addr.ss, o->addr.len))
		die("bind: %s", strerror(errno));
	if (o->defer_accept > 0 &&
	    setsockopt(g_listen_fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &o->defer_accept,
		       sizeof(o->defer_accept)))
		die("TCP_DEFER_ACCEPT: %s", strerror(errno));
	if (listen(g_listen_fd, 4096))
		die("listen: %s", strerror(errno));
	if (getsockname(g_listen_fd, (struct sockaddr *)&ss, &sl))
		die("getsockname: %s", strerror(errno));
	pn = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
					    : ((struct sockaddr_in *)&ss)->sin_port);
	snprintf(port, sizeof(port), "%u\n", pn);
	if (!o->quiet)
		fprintf(stderr, "tcpkit server: listening on port %u, mode %s\n", pn,
			mode_names[o->mode]);
	if (o->ready_file)
		write_marker(o->ready_file, port);
}

/* ------------------------------------------------------------------ */
/* CLI                                                                  */

static void usage(FILE *f)
{
	fputs(
"usage: tcpkit server --listen ADDR:PORT [options]\n"
"       tcpkit client --connect ADDR:PORT [options]\n"
"       tcpkit pattern [--seed S] --bytes N [--offset N]   (pattern to stdout)\n"
"\n"
"ADDR:PORT is 127.0.0.1:9000, [::1]:9000 or [::]:9000 (dual-stack: IPV6_V6ONLY=0).\n"
"Sizes take K, M, G suffixes (powers of 1024).\n"
"\n"
"common:\n"
"  --mode verify|echo|sink|rr  protocol, same on both ends (default verify)\n"
"  --seed S          pattern seed (default 1); the server checks the client's\n"
"  --chunk N         read/write size (default 64K)\n"
"  --conns N         connections to make / accept (client default 1,\n"
"                    server default 0 = until --duration or SIGTERM)\n"
"  --parallel N      client threads / server workers (default 1 / 4)\n"
"  --duration SECS   client: start no new connection after SECS;\n"
"                    server: accept none after SECS (ok=0 if --conns not met)\n"
"  --timeout SECS    limit of every single wait (default 10)\n"
"  --rst-after N     close with SO_LINGER {1,0} (RST) after sending N bytes\n"
"                    (server: of the reply / echo; 0: before sending any)\n"
"  --allow-reset     a reset or early EOF from the peer is fine, as long as\n"
"                    every byte received is a correct prefix\n"
"  --out FILE        also write the result line to FILE\n"
"  -q, --quiet       no progress messages on stderr\n"
"server:\n"
"  --listen ADDR:PORT  (port 0: any; see --ready-file)\n"
"  --ready-file FILE   written with the port once listening\n"
"  --defer-accept SECS TCP_DEFER_ACCEPT on the listener\n"
"  --threads N         same as --parallel\n"
"  --v6only            IPV6_V6ONLY=1 on an IPv6 listener\n"
"  --expect-bytes N    verify/sink/echo: each connection must bring N bytes\n"
"  --reply-bytes N     verify: bytes sent back after the ack (default 0)\n"
"client:\n"
"  --connect ADDR:PORT\n"
"  --bind ADDR[:PORT]  source address / fixed source port\n"
"  --bytes N           verify/sink/echo: bytes to send (default 1M)\n"
"  --rounds N          rr: requests per connection (default 1)\n"
"  --pipeline N        rr: requests in flight (default 1)\n"
"  --req-size N        rr: request payload (default 64)\n"
"  --resp-size N       rr: response payload (default 64)\n"
"  --split-writes      rr: one send() per request (default: a burst of\n"
"                      pipelined requests goes out in one send())\n"
"  --client-close      rr: client closes first (default: server closes after\n"
"                      the last response, TIME_WAIT on the server side)\n"
"  --half-close        accepted for clarity: verify/sink/echo clients always\n"
"                      shutdown(SHUT_WR) after the payload and read to EOF\n"
"  --window N          echo: at most N bytes sent and not yet echoed back\n"
"                      (paces the sender to the reader; default unlimited)\n"
"  --start-delay MS    wait MS after connect before sending\n"
"  --connected-file F  written once the first connection is established\n"
"\n"
"Prints one line: result role=R mode=M ok=0|1 conns=N errors=N bytes_out=N\n"
"bytes_in=N first_bad=OFF|-1 bad_conns=N seq_errors=N rounds=N resets=N\n"
"rst_sent=N timeouts=N elapsed_ms=N.  Exit 0 iff ok=1.\n", f);
}

static uint64_t parse_size(const char *s, const char *opt)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *s == '-')
		die("bad number for %s: '%s'", opt, s);
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if (*end)
		die("bad number for %s: '%s'", opt, s);
	return v;
}

static double parse_double(const char *s, const char *opt)
{
	char *end;
	double v;

	v = strtod(s, &end);
	if (end == s || *end || v < 0)
		die("bad number for %s: '%s'", opt, s);
	return v;
}

static void parse_addr(const char *s, struct addr *a, bool need_port, const char *opt)
{
	char host[256], *colon;
	const char *port = NULL;
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *res;
	int r;

	if (strlen(s) >= sizeof(host))
		die("%s: address too long", opt);
	if (s[0] == '[') {
		const char *rb = strchr(s, ']');

		if (!rb)
			die("%s: missing ']' in '%s'", opt, s);
		memcpy(host, s + 1, rb - s - 1);
		host[rb - s - 1] = 0;
		if (rb[1] == ':')
			port = rb + 2;
		else if (rb[1])
			die("%s: bad address '%s'", opt, s);
	} else {
		strcpy(host, s);
		colon = strrchr(host, ':');
		if (colon && strchr(host, ':') == colon) {
			*colon = 0;
			port = colon + 1;
		} else if (colon) {
			die("%s: write IPv6 addresses as [ADDR]:PORT ('%s')", opt, s);
		}
	}
	if (need_port && !port)
		die("%s: '%s' has no port", opt, s);
	r = getaddrinfo(host, port ? port : "0", &hints, &res);
	if (r)
		die("%s: '%s': %s", opt, s, gai_strerror(r));
	memcpy(&a->ss, res->ai_addr, res->ai_addrlen);
	a->len = res->ai_addrlen;
	a->family = res->ai_family;
	a->has_port = port && atoi(port) != 0;
	freeaddrinfo(res);
}

enum {
	O_LISTEN = 256, O_CONNECT, O_BIND, O_MODE, O_SEED, O_BYTES, O_EXPECT, O_REPLY,
	O_CHUNK, O_RST, O_ALLOW_RST, O_CONNS, O_PARALLEL, O_THREADS, O_DURATION,
	O_TIMEOUT, O_DELAY, O_ROUNDS, O_PIPELINE, O_REQ, O_RESP, O_CCLOSE, O_DEFER,
	O_V6ONLY, O_OUT, O_READY, O_CONNECTED, O_OFFSET, O_HALF_CLOSE, O_SPLIT,
	O_WINDOW,
};

static const struct option long_opts[] = {
	{ "listen", required_argument, NULL, O_LISTEN },
	{ "connect", required_argument, NULL, O_CONNECT },
	{ "bind", required_argument, NULL, O_BIND },
	{ "mode", required_argument, NULL, O_MODE },
	{ "seed", required_argument, NULL, O_SEED },
	{ "bytes", required_argument, NULL, O_BYTES },
	{ "expect-bytes", required_argument, NULL, O_EXPECT },
	{ "reply-bytes", required_argument, NULL, O_REPLY },
	{ "chunk", required_argument, NULL, O_CHUNK },
	{ "rst-after", required_argument, NULL, O_RST },
	{ "allow-reset", no_argument, NULL, O_ALLOW_RST },
	{ "conns", required_argument, NULL, O_CONNS },
	{ "parallel", required_argument, NULL, O_PARALLEL },
	{ "threads", required_argument, NULL, O_THREADS },
	{ "duration", required_argument, NULL, O_DURATION },
	{ "timeout", required_argument, NULL, O_TIMEOUT },
	{ "start-delay", required_argument, NULL, O_DELAY },
	{ "rounds", required_argument, NULL, O_ROUNDS },
	{ "pipeline", required_argument, NULL, O_PIPELINE },
	{ "req-size", required_argument, NULL, O_REQ },
	{ "resp-size", required_argument, NULL, O_RESP },
	{ "client-close", no_argument, NULL, O_CCLOSE },
	{ "half-close", no_argument, NULL, O_HALF_CLOSE },
	{ "split-writes", no_argument, NULL, O_SPLIT },
	{ "window", required_argument, NULL, O_WINDOW },
	{ "defer-accept", required_argument, NULL, O_DEFER },
	{ "v6only", no_argument, NULL, O_V6ONLY },
	{ "out", required_argument, NULL, O_OUT },
	{ "ready-file", required_argument, NULL, O_READY },
	{ "connected-file", required_argument, NULL, O_CONNECTED },
	{ "offset", required_argument, NULL, O_OFFSET },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int cmd_pattern(const struct opts *o, uint64_t offset)
{
	uint64_t key = stream_key(o->seed, SALT_DATA), done = 0;
	uint8_t buf[65536];
	size_t n;

	while (done < o->bytes) {
		n = o->bytes - done < sizeof(buf) ? o->bytes - done : sizeof(buf);
		pat_fill(buf, n, key, offset + done);
		if (fwrite(buf, 1, n, stdout) != n)
			return 1;
		done += n;
	}
	return fflush(stdout) ? 1 : 0;
}

static void print_result(const struct opts *o, bool ok, double elapsed)
{
	char line[1024];
	FILE *f;

	snprintf(line, sizeof(line),
		 "result role=%s mode=%s ok=%d conns=%" PRIu64 " errors=%" PRIu64
		 " bytes_out=%" PRIu64 " bytes_in=%" PRIu64 " first_bad=%" PRId64
		 " bad_conns=%" PRIu64 " seq_errors=%" PRIu64 " rounds=%" PRIu64
		 " resets=%" PRIu64 " rst_sent=%" PRIu64 " timeouts=%" PRIu64
		 " elapsed_ms=%.0f\n",
		 g_role, mode_names[o->mode], ok, g_stats.conns, g_stats.errors,
		 g_stats.bytes_out, g_stats.bytes_in, g_stats.first_bad, g_stats.bad_conns,
		 g_stats.seq_errors, g_stats.rounds, g_stats.resets, g_stats.rst_sent,
		 g_stats.timeouts, elapsed * 1000);
	fputs(line, stdout);
	fflush(stdout);
	if (o->out) {
		f = fopen(o->out, "w");
		if (!f || fputs(line, f) < 0 || fclose(f))
			fprintf(stderr, "tcpkit %s: cannot write %s: %s\n", g_role, o->out,
				strerror(errno));
	}
}

int main(int argc, char **argv)
{
	struct opts o = {
		.mode = M_VERIFY, .seed = 1, .bytes = 1 << 20, .expect_bytes = -1,
		.chunk = 65536, .timeout_ms = 10000, .rounds = 1, .pipeline = 1,
		.req_size = 64, .resp_size = 64,
	};
	bool have_addr = false, pattern = false, conns_set = false;
	uint64_t offset = 0, v;
	unsigned parallel = 0, i;
	pthread_t *th;
	struct sigaction sa = { .sa_handler = on_signal };
	double elapsed;
	bool ok;
	int c;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "server")) {
		o.server = true;
		g_role = "server";
	} else if (!strcmp(argv[1], "client")) {
		g_role = "client";
	} else if (!strcmp(argv[1], "pattern")) {
		pattern = true;
		g_role = "pattern";
	} else {
		fprintf(stderr, "tcpkit: unknown command '%s' (try --help)\n", argv[1]);
		return 2;
	}
	argv++;
	argc--;
	while ((c = getopt_long(argc, argv, "qh", long_opts, NULL)) != -1) {
		switch (c) {
		case O_LISTEN:
			if (!o.server)
				die("--listen is a server option");
			parse_addr(optarg, &o.addr, true, "--listen");
			have_addr = true;
			break;
		case O_CONNECT:
			if (o.server)
				die("--connect is a client option");
			parse_addr(optarg, &o.addr, true, "--connect");
			have_addr = true;
			break;
		case O_BIND:
			parse_addr(optarg, &o.bind, false, "--bind");
			o.has_bind = true;
			break;
		case O_MODE:
			for (i = 0; i < 4; i++)
				if (!strcmp(optarg, mode_names[i]))
					break;
			if (i == 4)
				die("unknown --mode '%s' (verify, echo, sink, rr)", optarg);
			o.mode = i;
			break;
		case O_SEED: o.seed = parse_size(optarg, "--seed"); break;
		case O_BYTES: o.bytes = parse_size(optarg, "--bytes"); break;
		case O_EXPECT: o.expect_bytes = (int64_t)parse_size(optarg, "--expect-bytes"); break;
		case O_REPLY: o.reply_bytes = parse_size(optarg, "--reply-bytes"); break;
		case O_CHUNK:
			v = parse_size(optarg, "--chunk");
			if (v < 1 || v > (64u << 20))
				die("--chunk must be 1..64M");
			o.chunk = v;
			break;
		case O_RST:
			o.rst_after = parse_size(optarg, "--rst-after");
			o.has_rst = true;
			break;
		case O_ALLOW_RST: o.allow_reset = true; break;
		case O_CONNS:
			o.conns = parse_size(optarg, "--conns");
			conns_set = true;
			break;
		case O_PARALLEL:
		case O_THREADS:
			v = parse_size(optarg, "--parallel");
			if (v < 1 || v > 1024)
				die("--parallel must be 1..1024");
			parallel = v;
			break;
		case O_DURATION: o.duration = parse_double(optarg, "--duration"); break;
		case O_TIMEOUT:
			o.timeout_ms = (int)(parse_double(optarg, "--timeout") * 1000);
			if (o.timeout_ms < 1)
				die("--timeout must be > 0");
			break;
		case O_DELAY: o.start_delay_ms = (int)parse_size(optarg, "--start-delay"); break;
		case O_ROUNDS:
			v = parse_size(optarg, "--rounds");
			if (v < 1 || v > UINT32_MAX / 2)
				die("bad --rounds");
			o.rounds = v;
			break;
		case O_PIPELINE:
			v = parse_size(optarg, "--pipeline");
			if (v < 1 || v > 65536)
				die("--pipeline must be 1..65536");
			o.pipeline = v;
			break;
		case O_REQ:
			v = parse_size(optarg, "--req-size");
			if (v > MAX_RR_PAYLOAD)
				die("--req-size too large");
			o.req_size = v;
			break;
		case O_RESP:
			v = parse_size(optarg, "--resp-size");
			if (v > MAX_RR_PAYLOAD)
				die("--resp-size too large");
			o.resp_size = v;
			break;
		case O_CCLOSE: o.client_close = true; break;
		case O_SPLIT: o.split_writes = true; break;
		case O_WINDOW: o.window = parse_size(optarg, "--window"); break;
		case O_HALF_CLOSE: break; /* verify/sink/echo always half-close */
		case O_DEFER: o.defer_accept = (int)parse_size(optarg, "--defer-accept"); break;
		case O_V6ONLY: o.v6only = true; break;
		case O_OUT: o.out = optarg; break;
		case O_READY: o.ready_file = optarg; break;
		case O_CONNECTED: o.connected_file = optarg; break;
		case O_OFFSET: offset = parse_size(optarg, "--offset"); break;
		case 'q': o.quiet = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc)
		die("unexpected argument '%s'", argv[optind]);
	if (pattern)
		return cmd_pattern(&o, offset);
	if (!have_addr)
		die("%s is required (try --help)", o.server ? "--listen" : "--connect");
	if (o.has_bind && o.bind.family != o.addr.family)
		die("--bind and --connect address families differ");
	if (o.window && o.mode != M_ECHO)
		die("--window is for --mode echo");
	if (!o.server && !conns_set)
		o.conns = 1;
	if (!o.server && !o.conns && o.duration <= 0)
		die("--conns 0 needs --duration");
	o.parallel = parallel ? parallel : (o.server ? 4 : 1);

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (o.server)
		server_listen(&o);
	g_t0 = now_s();
	g_t_end = g_t0 + o.duration;
	th = calloc(o.parallel, sizeof(*th));
	if (!th)
		die("out of memory");
	for (i = 0; i < o.parallel; i++)
		if (pthread_create(&th[i], NULL, o.server ? server_thread : client_thread, &o))
			die("pthread_create failed");
	for (i = 0; i < o.parallel; i++)
		pthread_join(th[i], NULL);
	free(th);
	elapsed = now_s() - g_t0;
	if (g_listen_fd >= 0)
		close(g_listen_fd);

	ok = g_stats.errors == 0 && g_stats.first_bad < 0 && g_stats.seq_errors == 0;
	if (o.conns && g_stats.conns + g_stats.errors < o.conns) {
		ok = false;
		fprintf(stderr, "tcpkit %s: only %" PRIu64 " of %" PRIu64 " connections (%s)\n",
			g_role, g_stats.conns + g_stats.errors, o.conns,
			g_stop ? "stopped by signal" :
			g_duration_hit ? "--duration reached" : "ended early");
	}
	if (!o.conns && g_stats.conns == 0 && !o.server) {
		ok = false;
		fprintf(stderr, "tcpkit %s: no connection completed\n", g_role);
	}
	print_result(&o, ok, elapsed);
	return ok ? 0 : 1;
}

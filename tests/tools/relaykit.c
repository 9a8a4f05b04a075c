// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * relaykit: a stream relay for the splice tests, what nginx's stream{}
 * proxy does, in one thread: accept a client (N1), connect the upstream
 * (N2), relay both ways with reads of random sizes (so the relayed sends
 * come in every size), and, with --splice, hand the session to the data
 * plane (bpf/sockmap_splice.h): OFFER on N1 once the upstream is
 * connected, JOIN on N2 once that is paired, and a FENCE on a socket after each pass that
 * left nothing buffered for it.  The bytes are checked by the ends
 * (tcpkit echo/rr); relaykit reports what it relayed itself:
 *
 *   result ok=1 sessions=N offered=N joined=N fences=N fences_refused=N \
 *          relayed_up=BYTES relayed_down=BYTES spliced_up=BYTES spliced_down=BYTES \
 *          queries_failed=N foreign_refused=N foreign_taken=N
 *
 * spliced_*: what went past it, as the data plane's query on N1 says at
 * each spliced session's end (queries_failed: no answer, e.g. an agent
 * without --nginx-vars).
 *
 * --foreign: each session forks a child, which holds both sockets but is
 * not the offering thread, right before the JOIN (it tries the JOIN) and
 * right after it (it tries a FENCE on N1): both must be refused
 * (foreign_refused counts them, foreign_taken any that was not).
 *
 * Exit 0 when every session ended cleanly, 1 otherwise, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "toolkit.h"
#include "../../bpf/sockmap_query.h"
#include "../../bpf/sockmap_splice.h"

/* 1 + 2 * MAX_SESSIONS pollfds: under the usual RLIMIT_NOFILE of 1024,
 * past which poll(2) fails with EINVAL */
#define MAX_SESSIONS 256
#define BUF_SIZE     (256 * 1024)

struct half {            /* one direction: read from src, written to dst */
	uint8_t *buf;
	size_t len, off;     /* bytes held, of which written */
	uint64_t read, sent; /* totals, for the fence */
	uint64_t fenced;     /* read at the last fence taken */
	bool eof, shut, fence_off;
};

struct session {
	int n1, n2;          /* client side, upstream side; -1: closed */
	bool connected, offered, spliced, foreign_tried;
	__u64 cookie;        /* N1's SO_COOKIE, what JOIN names */
	struct half up, down; /* up: n1 -> n2, down: n2 -> n1 */
};

static struct {
	struct sockaddr_in listen, upstream;
	bool splice, foreign, trickle;
	double duration, timeout;
	unsigned sessions;
	const char *ready_file, *out;
	uint64_t seed;
} o = { .duration = 10, .timeout = 10, .seed = 1 };

static struct {
	unsigned sessions, offered, joined, fences, fences_refused, failed;
	unsigned foreign_refused, foreign_taken;
	uint64_t up, down;
	uint64_t spliced_up, spliced_down;
	unsigned queries_failed;
} stats;

static uint64_t rng;

static size_t random_size(void)
{
	rng = mix64(rng);
	/* mostly small, sometimes a full buffer: 1 B to 64 KiB */
	return 1 + (rng % ((rng >> 40) & 1 ? 65536 : 1500));
}

static void die(const char *msg)
{
	fprintf(stderr, "relaykit: %s\n", msg);
	exit(2);
}

static int nonblock(int fd)
{
	return fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static int splice_req(int fd, __u32 op, __u64 relay, const struct half *h)
{
	struct sockmap_splice r = { .version = SOCKMAP_SPLICE_VERSION, .op = op, .relay = relay };

	if (h) {
		r.read = h->read;
		r.sent = h->sent;
	}
	return setsockopt(fd, SOCKMAP_SPLICE_LEVEL, SOCKMAP_SPLICE_OPTNAME, &r, sizeof(r));
}

/* --foreign: another process, holding both sockets, can't make the
 * request op the offering thread could make now */
static void try_foreign(struct session *s, __u32 op, __u64 relay)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		die("fork failed");
	if (pid == 0) {
		if (op == SPLICE_JOIN)
			_exit(!splice_req(s->n2, SPLICE_JOIN, relay, NULL));
		_exit(!splice_req(s->n1, SPLICE_FENCE, 0, &s->down));
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		die("foreign child failed");
	stats.foreign_taken += WEXITSTATUS(status);
	stats.foreign_refused += !WEXITSTATUS(status);
}

/* OFFER on N1 once the upstream is connected */
static void splice_offer(struct session *s)
{
	socklen_t len = sizeof(s->cookie);

	if (getsockopt(s->n1, SOL_SOCKET, SO_COOKIE, &s->cookie, &len))
		return;
	if (splice_req(s->n1, SPLICE_OFFER, 0, NULL))
		return;
	stats.offered++;
	s->offered = true;
}

/* JOIN on N2 once it is paired: the data plane pairs a connecting end at
 * its first send or its first packet in (bpf/accel_pairing.h), so after
 * the relay sent on it or read from it; until then JOIN is refused. */
static void splice_join(struct session *s)
{
	if (!s->offered || s->spliced || (!s->up.sent && !s->down.read))
		return;
	if (o.foreign && !s->foreign_tried)
		try_foreign(s, SPLICE_JOIN, s->cookie);
	if (splice_req(s->n2, SPLICE_JOIN, s->cookie, NULL))
		return;
	stats.joined++;
	s->spliced = true;
	if (o.foreign && !s->foreign_tried)
		try_foreign(s, SPLICE_FENCE, 0);
	s->foreign_tried = true;
}

/* What went past us, as the data plane counted it (sockmap_query.h):
 * asked on N1 before it closes, once the session ended both ways */
static void splice_tally(struct session *s)
{
	struct sockmap_query q = {};
	socklen_t len = sizeof(q);

	if (getsockopt(s->n1, SOCKMAP_QUERY_LEVEL, SOCKMAP_QUERY_OPTNAME, &q, &len) ||
	    len < sizeof(q) || q.version < 2) {
		stats.queries_failed++;
		return;
	}
	stats.spliced_up += q.spliced_up;
	stats.spliced_down += q.spliced_down;
}

static void session_close(struct session *s, bool failed)
{
	if (s->spliced && s->n1 >= 0)
		splice_tally(s);
	if (s->n1 >= 0)
		close(s->n1);
	if (s->n2 >= 0)
		close(s->n2);
	free(s->up.buf);
	free(s->down.buf);
	memset(s, 0, sizeof(*s));
	s->n1 = s->n2 = -1;
	stats.failed += failed;
}

/* Move what src has into h, and h into dst.  0 ok, -1 the session ends
 * in error. */
static int relay(struct session *s, struct half *h, int src, int dst, uint64_t *total)
{
	size_t limit;
	ssize_t n;

	while (!h->eof && h->len < BUF_SIZE) {
		size_t want = random_size();

		if (want > BUF_SIZE - h->len)
			want = BUF_SIZE - h->len;
		n = recv(src, h->buf + h->len, want, 0);
		if (n == 0)
			h->eof = true;
		else if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		else if (n < 0)
			return -1;
		else {
			h->len += n;
			h->read += n;
		}
	}
	/* --trickle: write a random part of what is held per pass, so a
	 * session often holds bytes while its client sends more */
	limit = o.trickle ? h->off + random_size() : h->len;
	if (limit > h->len)
		limit = h->len;
	while (h->off < limit) {
		n = send(dst, h->buf + h->off, limit - h->off, MSG_NOSIGNAL);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (n < 0)
			return -1;
		h->off += n;
		h->sent += n;
		*total += n;
	}
	if (h->off == h->len)
		h->off = h->len = 0;
	else if (h->off > BUF_SIZE / 2) {
		memmove(h->buf, h->buf + h->off, h->len - h->off);
		h->len -= h->off;
		h->off = 0;
	}
	if (h->eof && !h->len && !h->shut) {
		shutdown(dst, SHUT_WR);
		h->shut = true;
	}
	/* nothing of this direction held, and new bytes since the last
	 * fence: say so on dst (from this thread, its sends returned) */
	if (s->spliced && !h->len && !h->fence_off && h->read != h->fenced) {
		stats.fences++;
		if (splice_req(dst, SPLICE_FENCE, 0, h)) {
			/* no agent, or a refusal: every later fence would be
			 * refused too (bpf/splice_control.h) */
			stats.fences_refused++;
			h->fence_off = true;
		} else {
			h->fenced = h->read;
		}
	}
	return 0;
}

static int upstream_connect(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	nonblock(fd);
	if (connect(fd, (struct sockaddr *)&o.upstream, sizeof(o.upstream)) && errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	return fd;
}

static void parse_addr(const char *arg, struct sockaddr_in *a)
{
	char host[64];
	const char *colon = strrchr(arg, ':');

	if (!colon || colon - arg >= (long)sizeof(host))
		die("addresses are IPV4:PORT");
	memcpy(host, arg, colon - arg);
	host[colon - arg] = 0;
	a->sin_family = AF_INET;
	a->sin_port = htons(atoi(colon + 1));
	if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
		die("addresses are IPV4:PORT");
}

static void usage(FILE *f)
{
	fputs("usage: relaykit --listen IP:PORT --upstream IP:PORT [options]\n"
	      "  --splice          offer each session to the data plane, fence after passes\n"
	      "  --foreign         also check another process can't join or fence (with --splice)\n"
	      "  --trickle         write a random part of what is held per pass\n"
	      "  --duration SECS   accept no new session after SECS (default 10)\n"
	      "  --sessions N      ... nor after N sessions\n"
	      "  --timeout SECS    end when no session has moved a byte for SECS (default 10)\n"
	      "  --seed N          seed of the random read sizes (default 1)\n"
	      "  --ready-file F    written with the port once listening\n"
	      "  --out F           also write the result line to F\n",
	      f);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "upstream", required_argument, NULL, 'u' },
		{ "splice", no_argument, NULL, 's' },
		{ "foreign", no_argument, NULL, 'f' },
		{ "trickle", no_argument, NULL, 'T' },
		{ "duration", required_argument, NULL, 'd' },
		{ "sessions", required_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, 't' },
		{ "seed", required_argument, NULL, 'S' },
		{ "ready-file", required_argument, NULL, 'r' },
		{ "out", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	static struct session ss[MAX_SESSIONS];
	struct pollfd pfd[1 + 2 * MAX_SESSIONS];
	double start, last_move;
	bool have_listen = false, have_up = false;
	int c, lfd, one = 1, i;
	char line[512];
	FILE *f;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'l': parse_addr(optarg, &o.listen); have_listen = true; break;
		case 'u': parse_addr(optarg, &o.upstream); have_up = true; break;
		case 's': o.splice = true; break;
		case 'f': o.foreign = true; break;
		case 'T': o.trickle = true; break;
		case 'd': o.duration = atof(optarg); break;
		case 'n': o.sessions = atoi(optarg); break;
		case 't': o.timeout = atof(optarg); break;
		case 'S': o.seed = strtoull(optarg, NULL, 0); break;
		case 'r': o.ready_file = optarg; break;
		case 'o': o.out = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!have_listen || !have_up)
		die("--listen and --upstream are required (--help)");
	rng = o.seed;
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	for (i = 0; i < MAX_SESSIONS; i++)
		ss[i].n1 = ss[i].n2 = -1;
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&o.listen, sizeof(o.listen)) || listen(lfd, 512))
		die("can't listen");
	nonblock(lfd);
	if (o.ready_file) {
		struct sockaddr_in a;
		socklen_t len = sizeof(a);

		getsockname(lfd, (struct sockaddr *)&a, &len);
		f = fopen(o.ready_file, "w");
		if (!f)
			die("can't write --ready-file");
		fprintf(f, "%d\n", ntohs(a.sin_port));
		fclose(f);
	}
	start = last_move = now_s();
	while (!g_stop) {
		bool accepting = now_s() - start < o.duration &&
				 (!o.sessions || stats.sessions + stats.failed < o.sessions);
		int n = 0, live = 0;

		pfd[n++] = (struct pollfd){ .fd = accepting ? lfd : -1, .events = POLLIN };
		for (i = 0; i < MAX_SESSIONS; i++) {
			struct session *s = &ss[i];

			pfd[n++] = (struct pollfd){ .fd = s->n1,
				.events = (s->up.len < BUF_SIZE ? POLLIN : 0) |
					  (s->down.len ? POLLOUT : 0) };
			pfd[n++] = (struct pollfd){ .fd = s->n2,
				.events = (s->connected && s->down.len < BUF_SIZE ? POLLIN : 0) |
					  (!s->connected || s->up.len ? POLLOUT : 0) };
			live += s->n1 >= 0;
		}
		if (!accepting && !live)
			break;
		if (now_s() - last_move > o.timeout) {
			fprintf(stderr, "relaykit: nothing moved for %.0f s\n", o.timeout);
			for (i = 0; i < MAX_SESSIONS; i++)
				if (ss[i].n1 >= 0)
					session_close(&ss[i], true);
			break;
		}
		c = poll(pfd, n, 100);
		if (c < 0 && errno != EINTR) {
			perror("relaykit: poll");
			exit(2);
		}
		if (c <= 0)
			continue;
		last_move = now_s();
		if (pfd[0].revents & POLLIN) {
			int fd = accept(lfd, NULL, NULL);

			for (i = 0; fd >= 0 && i < MAX_SESSIONS && ss[i].n1 >= 0; i++)
				;
			if (fd >= 0 && i == MAX_SESSIONS) {
				close(fd);
			} else if (fd >= 0) {
				struct session *s = &ss[i];

				nonblock(fd);
				s->n1 = fd;
				s->n2 = upstream_connect();
				s->up.buf = malloc(BUF_SIZE);
				s->down.buf = malloc(BUF_SIZE);
				if (s->n2 < 0 || !s->up.buf || !s->down.buf)
					session_close(s, true);
				else
					stats.sessions++;
			}
		}
		for (i = 0; i < MAX_SESSIONS; i++) {
			struct session *s = &ss[i];
			short r1 = pfd[1 + 2 * i].revents, r2 = pfd[2 + 2 * i].revents;

			if (s->n1 < 0 || !(r1 | r2))
				continue;
			if (!s->connected) {
				int err = 0;
				socklen_t len = sizeof(err);

				if (!(r2 & (POLLOUT | POLLERR | POLLHUP)))
					continue;
				getsockopt(s->n2, SOL_SOCKET, SO_ERROR, &err, &len);
				if (err) {
					session_close(s, true);
					continue;
				}
				s->connected = true;
				if (o.splice)
					splice_offer(s);
			}
			if (o.splice)
				splice_join(s);
			if (relay(s, &s->up, s->n1, s->n2, &stats.up) ||
			    relay(s, &s->down, s->n2, s->n1, &stats.down)) {
				session_close(s, true);
				continue;
			}
			if (s->up.shut && s->down.shut)
				session_close(s, false);
		}
	}
	snprintf(line, sizeof(line),
		 "result ok=%d sessions=%u offered=%u joined=%u fences=%u fences_refused=%u "
		 "relayed_up=%" PRIu64 " relayed_down=%" PRIu64 " spliced_up=%" PRIu64
		 " spliced_down=%" PRIu64 " queries_failed=%u foreign_refused=%u foreign_taken=%u\n",
		 !stats.failed, stats.sessions, stats.offered, stats.joined, stats.fences,
		 stats.fences_refused, stats.up, stats.down, stats.spliced_up, stats.spliced_down,
		 stats.queries_failed, stats.foreign_refused, stats.foreign_taken);
	fputs(line, stdout);
	if (o.out && (f = fopen(o.out, "w"))) {
		fputs(line, f);
		fclose(f);
	}
	return stats.failed ? 1 : 0;
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * bench/msgcost: one process holds N loopback TCP pairs (both ends its
 * own) and plays ping-pong on H of them (the "hot set", a random subset,
 * visited in a random order that stays the same every pass), SIZE bytes
 * each way, for SECS seconds.  With the agent tracking the process's
 * cgroup every send is one run of msg_redirect; N sets how many sockets
 * are in the maps, H how many of them each pass touches (the working set).
 * No nginx, no wrk, one thread: per-call figures that sizes can share.
 *
 *   msgscale N H SIZE SECS
 *
 * Prints "ready" once the pairs are open (and each has sent once, so the
 * active ends have decided), then waits for a line on stdin, runs, prints
 * "sends=... ns_per_send=..." and waits for another line before closing.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *m)
{
	perror(m);
	exit(1);
}

static void xfer(int from, int to, char *buf, size_t n)
{
	size_t got = 0;
	ssize_t r;

	if (write(from, buf, n) != (ssize_t)n)
		die("write");
	while (got < n) {
		r = read(to, buf + got, n - got);
		if (r <= 0)
			die("read");
		got += r;
	}
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	int n, h, size, secs, lfd, i, one = 1, *cl, *sv, *order;
	unsigned long long sends = 0;
	char line[16], *buf;
	double t0, t1;

	if (argc != 5)
		return fprintf(stderr, "usage: msgscale N H SIZE SECS\n"), 2;
	n = atoi(argv[1]);
	h = atoi(argv[2]);
	size = atoi(argv[3]);
	secs = atoi(argv[4]);
	if (n < 1 || h < 1 || h > n || size < 1 || secs < 1)
		return fprintf(stderr, "msgscale: bad arguments\n"), 2;
	cl = calloc(n, sizeof(int));
	sv = calloc(n, sizeof(int));
	order = calloc(n, sizeof(int));
	buf = calloc(1, size);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (void *)&a, sizeof(a)) || listen(lfd, 4096) ||
	    getsockname(lfd, (void *)&a, &al))
		die("listen");
	for (i = 0; i < n; i++) {
		cl[i] = socket(AF_INET, SOCK_STREAM, 0);
		if (cl[i] < 0 || connect(cl[i], (void *)&a, sizeof(a)))
			die("connect");
		sv[i] = accept(lfd, NULL, NULL);
		if (sv[i] < 0)
			die("accept");
		setsockopt(cl[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		setsockopt(sv[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		xfer(cl[i], sv[i], buf, size); /* the active end decides here */
		xfer(sv[i], cl[i], buf, size);
		order[i] = i;
	}
	srandom(1);
	for (i = n - 1; i > 0; i--) { /* a random hot set, in a random order */
		int j = random() % (i + 1), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	t0 = now();
	do {
		for (i = 0; i < h; i++) {
			xfer(cl[order[i]], sv[order[i]], buf, size);
			xfer(sv[order[i]], cl[order[i]], buf, size);
		}
		sends += 2 * h;
	} while ((t1 = now()) - t0 < secs);
	printf("sends=%llu ns_per_send=%.1f\n", sends, (t1 - t0) * 1e9 / sends);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	return 0;
}

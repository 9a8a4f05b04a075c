// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * bench/skbsplice: a one-thread TCP relay for bench/remote-splice.  It
 * accepts clients on --listen, connects each to 127.0.0.1:--upstream and
 * relays both ways.  With --splice it first loads skbsplice.bpf.c, and routes
 * each session in the kernel as soon as both of the session's far sockets
 * are in the SOCKHASH (the client's bytes into the server's socket, the
 * server's out through the client's connection); the relay then only
 * forwards what arrived before the route and watches for the end.
 *
 * A measuring tool, not the product: see skbsplice.bpf.c for what it
 * leaves out.  On SIGINT/SIGTERM it detaches everything, prints its counts
 * as one line of JSON on stdout and exits 0.
 */
#define _GNU_SOURCE
#include <argp.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "skbsplice.h"
#include "skbsplice.skel.h"

#define MAX_FDS 16384

static struct {
	struct sockaddr_in listen;
	int upstream_port;
	const char *cgroup;
	bool splice;
	int pool;
} opt = { .pool = 128 };

static struct {
	unsigned long long sessions, routed, unrouted, relayed_bytes;
} counts_relay;

static int peer_of[MAX_FDS];     /* the other socket of a session, or -1 */
static __u64 route_of[MAX_FDS];  /* the route key of this fd's session */
static int pooled_by_port[65536]; /* a pooled upstream fd by its local port */
static volatile sig_atomic_t stop;

static const struct argp_option options[] = {
	{ "listen", 'l', "ADDR:PORT", 0, "Accept clients here (IPv4)", 0 },
	{ "upstream", 'u', "PORT", 0, "Connect each client to 127.0.0.1:PORT", 0 },
	{ "cgroup", 'c', "PATH", 0, "With --splice: the cgroup v2 of this relay and the server (sock_ops attaches there)", 0 },
	{ "splice", 's', NULL, 0, "Route sessions in the kernel (sk_skb on the client's connection, sk_msg on the server's)", 0 },
	{ "pool", 'p', "N", 0, "With --splice: upstream connections kept ready (default 128)", 0 },
	{},
};

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	char *colon;

	switch (key) {
	case 'l':
		colon = strrchr(arg, ':');
		if (!colon)
			argp_error(state, "--listen wants ADDR:PORT, not '%s'", arg);
		*colon = '\0';
		opt.listen.sin_family = AF_INET;
		opt.listen.sin_port = htons(atoi(colon + 1));
		if (inet_pton(AF_INET, arg, &opt.listen.sin_addr) != 1 || !opt.listen.sin_port)
			argp_error(state, "--listen: not an IPv4 address and port: '%s:%s'", arg, colon + 1);
		break;
	case 'u':
		opt.upstream_port = atoi(arg);
		if (opt.upstream_port <= 0 || opt.upstream_port > 65535)
			argp_error(state, "--upstream: not a port: '%s'", arg);
		break;
	case 'c':
		opt.cgroup = arg;
		break;
	case 's':
		opt.splice = true;
		break;
	case 'p':
		opt.pool = atoi(arg);
		if (opt.pool < 1 || opt.pool > SKBSPLICE_MAX_SOCKS / 4)
			argp_error(state, "--pool: 1 to %d, not '%s'", SKBSPLICE_MAX_SOCKS / 4, arg);
		break;
	case ARGP_KEY_END:
		if (!opt.listen.sin_port || !opt.upstream_port)
			argp_error(state, "--listen and --upstream are required");
		if (opt.splice && !opt.cgroup)
			argp_error(state, "--splice needs --cgroup");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp argp = {
	.options = options,
	.parser = parse_opt,
	.doc = "A one-thread TCP relay; with --splice, a remote client's session is "
	       "spliced in the kernel past it (bench/remote-splice's prototype).",
};

static void on_signal(int sig) { (void)sig; stop = 1; }

static int local_port(int fd, bool peer)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);

	if ((peer ? getpeername(fd, (struct sockaddr *)&a, &len) : getsockname(fd, (struct sockaddr *)&a, &len)) < 0)
		return -1;
	return ntohs(a.sin_port);
}

static int upstream_connect(void)
{
	struct sockaddr_in up = { .sin_family = AF_INET, .sin_port = htons(opt.upstream_port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd, one = 1;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (fd >= MAX_FDS || connect(fd, (struct sockaddr *)&up, sizeof(up)) < 0) {
		close(fd);
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* One more upstream connection for the pool: connected, its far socket U
 * in the SOCKHASH (sock_ops inserts it as the server's side of the
 * handshake completes), its key pushed for sock_ops to take. */
static bool pool_add(struct skbsplice_bpf *skel)
{
	int fd = upstream_connect(), port, i;
	__u64 key, cookie;

	if (fd < 0)
		return false;
	port = local_port(fd, false);
	key = SKBSPLICE_UPSTREAM_KEY(port);
	for (i = 0; i < 1000; i++) {
		if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.socks), &key, &cookie) == 0)
			break;
		usleep(100);
	}
	if (i == 1000 || bpf_map_update_elem(bpf_map__fd(skel->maps.pool), NULL, &key, BPF_ANY)) {
		close(fd);
		return false;
	}
	pooled_by_port[port] = fd;
	return true;
}

/* The pooled upstream connection sock_ops routed this client connection
 * to as it was established, or -1: never routed (the pool was empty). */
static int pool_take(struct skbsplice_bpf *skel, int n1)
{
	__u64 front = SKBSPLICE_FRONT_KEY(local_port(n1, true)), up;
	int i, n2;

	/* accept() can return the child before its handshake's callback ran */
	for (i = 0; i < 100; i++) {
		if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.routes), &front, &up) == 0)
			break;
		usleep(10);
	}
	if (i == 100)
		return -1;
	n2 = pooled_by_port[up & 0xffff];
	pooled_by_port[up & 0xffff] = -1;
	if (n2 < 0)
		return -1;
	route_of[n1] = front;
	route_of[n2] = up;
	pool_add(skel);
	return n2;
}

static void session_end(struct skbsplice_bpf *skel, int fd)
{
	int peer = peer_of[fd], fds[2] = { fd, peer }, i;

	for (i = 0; i < 2; i++) {
		if (fds[i] < 0)
			continue;
		if (skel && route_of[fds[i]])
			bpf_map_delete_elem(bpf_map__fd(skel->maps.routes), &route_of[fds[i]]);
		route_of[fds[i]] = 0;
		peer_of[fds[i]] = -1;
		close(fds[i]);
	}
}

static void session_start(struct skbsplice_bpf *skel, int ep, int n1)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP };
	int n2 = -1, one = 1;

	if (n1 >= MAX_FDS) {
		close(n1);
		return;
	}
	if (skel) {
		n2 = pool_take(skel, n1);
		if (n2 >= 0)
			counts_relay.routed++;
		else
			counts_relay.unrouted++;
	}
	if (n2 < 0)
		n2 = upstream_connect();
	if (n2 < 0) {
		fprintf(stderr, "skbsplice: upstream 127.0.0.1:%d: %s\n", opt.upstream_port, strerror(errno));
		close(n1);
		return;
	}
	setsockopt(n1, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	peer_of[n1] = n2;
	peer_of[n2] = n1;
	counts_relay.sessions++;
	ev.data.fd = n1;
	epoll_ctl(ep, EPOLL_CTL_ADD, n1, &ev);
	ev.data.fd = n2;
	epoll_ctl(ep, EPOLL_CTL_ADD, n2, &ev);
}

/* What is readable on fd goes to its peer (blocking writes: the far ends
 * read).  false when the session ended. */
static bool relay(int fd)
{
	static char buf[65536];
	ssize_t n, w, off;

	for (;;) {
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR;
		if (n == 0)
			return false;
		for (off = 0; off < n; off += w) {
			w = send(peer_of[fd], buf + off, n - off, MSG_NOSIGNAL);
			if (w < 0 && errno == EINTR)
				w = 0;
			else if (w < 0)
				return false;
		}
		counts_relay.relayed_bytes += n;
	}
}

int main(int argc, char **argv)
{
	struct skbsplice_bpf *skel = NULL;
	struct bpf_link *link = NULL;
	struct epoll_event ev, evs[256];
	int lfd, ep, cg = -1, one = 1, i, n, err = 1;

	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return 2;
	memset(peer_of, -1, sizeof(peer_of));
	memset(pooled_by_port, -1, sizeof(pooled_by_port));
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	if (opt.splice) {
		skel = skbsplice_bpf__open();
		if (!skel) {
			fprintf(stderr, "skbsplice: cannot open the BPF object: %s\n", strerror(errno));
			return 1;
		}
		skel->rodata->front_port = ntohs(opt.listen.sin_port);
		skel->rodata->upstream_port = opt.upstream_port;
		if (skbsplice_bpf__load(skel)) {
			fprintf(stderr, "skbsplice: cannot load the BPF programs (root? sockmap support?)\n");
			goto out;
		}
		cg = open(opt.cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (cg < 0) {
			fprintf(stderr, "skbsplice: --cgroup %s: %s\n", opt.cgroup, strerror(errno));
			goto out;
		}
		link = bpf_program__attach_cgroup(skel->progs.skbsplice_track, cg);
		if (!link ||
		    bpf_prog_attach(bpf_program__fd(skel->progs.skbsplice_ingress), bpf_map__fd(skel->maps.socks),
				    BPF_SK_SKB_STREAM_VERDICT, 0) ||
		    bpf_prog_attach(bpf_program__fd(skel->progs.skbsplice_egress), bpf_map__fd(skel->maps.socks),
				    BPF_SK_MSG_VERDICT, 0)) {
			fprintf(stderr, "skbsplice: cannot attach: %s\n", strerror(errno));
			goto out;
		}
		for (i = 0; i < opt.pool; i++) {
			if (!pool_add(skel)) {
				fprintf(stderr, "skbsplice: cannot pool upstream connections to 127.0.0.1:%d\n",
					opt.upstream_port);
				goto out;
			}
		}
	}

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&opt.listen, sizeof(opt.listen)) < 0 || listen(lfd, 4096) < 0) {
		fprintf(stderr, "skbsplice: listen: %s\n", strerror(errno));
		goto out;
	}
	ep = epoll_create1(EPOLL_CLOEXEC);
	ev.events = EPOLLIN;
	ev.data.fd = lfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
	printf("ready\n");
	fflush(stdout);

	while (!stop) {
		n = epoll_wait(ep, evs, 256, 200);
		for (i = 0; i < n; i++) {
			int fd = evs[i].data.fd;

			if (fd == lfd) {
				int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

				if (c >= 0)
					session_start(skel, ep, c);
				continue;
			}
			if (peer_of[fd] < 0)
				continue; /* ended earlier in this batch */
			if (!relay(fd) || (evs[i].events & (EPOLLHUP | EPOLLERR)))
				session_end(skel, fd);
		}
	}
	err = 0;
	{
		struct skbsplice_counts c = {};

		if (skel)
			c = skel->bss->counts;
		printf("{\"sessions\": %llu, \"routed\": %llu, \"unrouted\": %llu, \"relayed_bytes\": %llu, "
		       "\"tracked\": %llu, \"pool_empty\": %llu, \"skb_passed\": %llu, \"skb_redirected\": %llu, \"skb_bytes\": %llu, "
		       "\"msg_passed\": %llu, \"msg_redirected\": %llu, \"msg_bytes\": %llu}\n",
		       counts_relay.sessions, counts_relay.routed, counts_relay.unrouted, counts_relay.relayed_bytes,
		       (unsigned long long)c.tracked, (unsigned long long)c.pool_empty, (unsigned long long)c.skb_passed,
		       (unsigned long long)c.skb_redirected, (unsigned long long)c.skb_bytes,
		       (unsigned long long)c.msg_passed, (unsigned long long)c.msg_redirected,
		       (unsigned long long)c.msg_bytes);
	}
out:
	bpf_link__destroy(link);
	if (cg >= 0)
		close(cg);
	skbsplice_bpf__destroy(skel);
	return err;
}

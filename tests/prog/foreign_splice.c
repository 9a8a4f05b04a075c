// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A splice(2) reader on a socket of another product's sockmap (its
 * sk_msg program also named msg_redirect: tests/bpf/foreign_sockmap.bpf.c),
 * for guard_foreign_sockmap.sh.  A loopback connection whose reader is put
 * in that SOCKHASH; the writer sends 64 KiB, the reader takes them with
 * splice(socket -> pipe) and read(pipe).  Exit 0 when every byte arrived
 * and the connection was not reset, 1 otherwise; prints what happened.
 * Needs root.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "foreign_sockmap.skel.h"

#define BYTES (64 * 1024)

static int pair(int *w, int *r)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int ls = socket(AF_INET, SOCK_STREAM, 0);

	if (ls < 0 || bind(ls, (void *)&a, sizeof(a)) || listen(ls, 1) ||
	    getsockname(ls, (void *)&a, &len))
		return -1;
	*w = socket(AF_INET, SOCK_STREAM, 0);
	if (*w < 0 || connect(*w, (void *)&a, sizeof(a)))
		return -1;
	*r = accept(ls, NULL, NULL);
	close(ls);
	return *r < 0 ? -1 : 0;
}

int main(void)
{
	static char buf[BYTES], got[BYTES];
	struct foreign_sockmap_bpf *skel;
	int w, r, p[2], n, total = 0;
	socklen_t len;
	__u32 key = 1;
	__u64 fd, cookie;

	skel = foreign_sockmap_bpf__open_and_load();
	if (!skel) {
		printf("loading the foreign sockmap: %s\n", strerror(errno));
		return 1;
	}
	if (bpf_prog_attach(bpf_program__fd(skel->progs.msg_redirect),
			    bpf_map__fd(skel->maps.foreign_hash), BPF_SK_MSG_VERDICT, 0)) {
		printf("attaching its sk_msg program: %s\n", strerror(errno));
		return 1;
	}
	if (pair(&w, &r) || pipe(p)) {
		printf("loopback connection: %s\n", strerror(errno));
		return 1;
	}
	/* a cookie, as any sockmap user's sockets have (sock_ops and sk_msg
	 * programs ask for one): the kernel makes it on first use */
	len = sizeof(cookie);
	if (getsockopt(r, SOL_SOCKET, SO_COOKIE, &cookie, &len)) {
		printf("SO_COOKIE: %s\n", strerror(errno));
		return 1;
	}
	fd = r;
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.foreign_hash), &key, &fd, BPF_ANY)) {
		printf("putting the reader in the foreign SOCKHASH: %s\n", strerror(errno));
		return 1;
	}
	for (n = 0; n < BYTES; n++)
		buf[n] = (char)(n * 7 + 3);
	if (write(w, buf, BYTES) != BYTES) {
		printf("write: %s\n", strerror(errno));
		return 1;
	}
	while (total < BYTES) {
		struct pollfd pf = { .fd = r, .events = POLLIN };

		if (poll(&pf, 1, 5000) != 1) {
			printf("timeout: %d of %d bytes spliced\n", total, BYTES);
			return 1;
		}
		n = splice(r, NULL, p[1], NULL, BYTES - total, SPLICE_F_NONBLOCK);
		if (n < 0 && errno == EAGAIN)
			continue;
		if (n <= 0) {
			printf("splice: %s after %d bytes\n", n ? strerror(errno) : "EOF", total);
			return 1;
		}
		if (read(p[0], got + total, n) != n) {
			printf("read(pipe): %s\n", strerror(errno));
			return 1;
		}
		total += n;
	}
	if (memcmp(buf, got, BYTES)) {
		printf("wrong bytes\n");
		return 1;
	}
	/* a reset the guard asked for lands within a tick or two */
	usleep(1500 * 1000);
	n = send(w, "x", 1, MSG_NOSIGNAL);
	if (n == 1) {
		struct pollfd pf = { .fd = r, .events = POLLIN };

		poll(&pf, 1, 1000);
	}
	if (n != 1 || recv(r, got, 1, MSG_DONTWAIT) != 1) {
		n = errno;
		printf("the connection was ended after the splice: %s\n", strerror(n));
		return 1;
	}
	printf("ok: %d bytes spliced, the connection lives\n", total);
	foreign_sockmap_bpf__destroy(skel);
	return 0;
}

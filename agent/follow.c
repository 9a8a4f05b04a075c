// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include "follow.h"
#include "log.h"

#define TCP_ESTABLISHED_STATE 1

struct diag_sock {
	uint8_t local[16], remote[16]; /* v4 as ::ffff:a.b.c.d */
	uint16_t lport, rport;         /* host order */
	uint64_t cgroup;
	uint64_t netns;                /* inode of the netns we dumped it in */
};

struct sock_list {
	struct diag_sock *v;
	size_t n, cap;
};

static void to_v6(uint8_t out[16], int family, const __be32 *addr)
{
	if (family == AF_INET) {
		memset(out, 0, 10);
		out[10] = out[11] = 0xff;
		memcpy(out + 12, addr, 4);
	} else {
		memcpy(out, addr, 16);
	}
}

static bool is_loopback(const uint8_t a[16])
{
	static const uint8_t one[16] = { [15] = 1 };

	return !memcmp(a, one, 16) ||
	       (!memcmp(a, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) && a[12] == 127);
}

/* Dump established TCP sockets of the current netns, with cgroup ids. */
static int dump_family(int family, uint64_t netns, struct sock_list *l)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 req;
	} msg = {
		.nlh = { .nlmsg_len = sizeof(msg), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			 .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.req = { .sdiag_family = family, .sdiag_protocol = IPPROTO_TCP,
			 .idiag_states = 1 << TCP_ESTABLISHED_STATE },
	};
	static char buf[65536];
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK };
	int fd, done = 0, ret = 0;
	ssize_t n;

	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return -errno;
	if (sendto(fd, &msg, sizeof(msg), 0, (void *)&nl, sizeof(nl)) < 0) {
		ret = -errno;
		goto out;
	}
	while (!done && (n = recv(fd, buf, sizeof(buf), 0)) > 0) {
		struct nlmsghdr *h = (void *)buf;

		for (; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
			struct inet_diag_msg *m = NLMSG_DATA(h);
			struct rtattr *a;
			int alen;
			struct diag_sock d = { .netns = netns };

			if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
				done = 1;
				break;
			}
			to_v6(d.local, m->idiag_family, m->id.idiag_src);
			to_v6(d.remote, m->idiag_family, m->id.idiag_dst);
			d.lport = ntohs(m->id.idiag_sport);
			d.rport = ntohs(m->id.idiag_dport);
			alen = h->nlmsg_len - NLMSG_LENGTH(sizeof(*m));
			for (a = (struct rtattr *)(m + 1); RTA_OK(a, alen); a = RTA_NEXT(a, alen))
				if (a->rta_type == INET_DIAG_CGROUP_ID &&
				    RTA_PAYLOAD(a) >= sizeof(uint64_t))
					memcpy(&d.cgroup, RTA_DATA(a), sizeof(uint64_t));
			if (!d.cgroup)
				continue;
			if (l->n == l->cap) {
				size_t cap = l->cap ? 2 * l->cap : 256;
				void *v = realloc(l->v, cap * sizeof(*l->v));

				if (!v) {
					ret = -ENOMEM;
					goto out;
				}
				l->v = v;
				l->cap = cap;
			}
			l->v[l->n++] = d;
		}
	}
out:
	close(fd);
	return ret;
}

/* Every network namespace that has a process: peers of a container's nginx
 * sit in other containers' namespaces.  Deduplicated by inode. */
static int collect_netns(uint64_t **inos, int **fds, int *n)
{
	char path[300];
	struct dirent *de;
	struct stat st;
	DIR *d;
	int i, fd, cap = 0;

	*n = 0;
	*inos = NULL;
	*fds = NULL;
	d = opendir("/proc");
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/ns/net", de->d_name);
		if (stat(path, &st))
			continue;
		for (i = 0; i < *n; i++)
			if ((*inos)[i] == st.st_ino)
				break;
		if (i < *n)
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			*inos = realloc(*inos, cap * sizeof(**inos));
			*fds = realloc(*fds, cap * sizeof(**fds));
			if (!*inos || !*fds) {
				close(fd);
				closedir(d);
				return -ENOMEM;
			}
		}
		(*inos)[*n] = st.st_ino;
		(*fds)[(*n)++] = fd;
	}
	closedir(d);
	return 0;
}

static int dump_all(struct sock_list *l)
{
	uint64_t *inos;
	int *fds, n, i, self, ret;

	self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self < 0)
		return -errno;
	ret = collect_netns(&inos, &fds, &n);
	for (i = 0; ret == 0 && i < n; i++) {
		if (setns(fds[i], CLONE_NEWNET))
			continue; /* namespace gone meanwhile */
		dump_family(AF_INET, inos[i], l);
		dump_family(AF_INET6, inos[i], l);
	}
	if (setns(self, CLONE_NEWNET))
		ret = -errno; /* can't happen for our own namespace */
	for (i = 0; i < n; i++)
		close(fds[i]);
	free(inos);
	free(fds);
	close(self);
	return ret;
}

/* cgroup id -> path: walk the v2 hierarchy (ids are directory inodes). */
static uint64_t want_id;
static char found_path[PATH_MAX];

static int find_id(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)ftw;
	if (flag == FTW_D && st->st_ino == want_id) {
		snprintf(found_path, sizeof(found_path), "%s", path);
		return 1;
	}
	return 0;
}

static int path_of_cgroup(const char *mnt, uint64_t id, char *out, size_t len)
{
	want_id = id;
	found_path[0] = 0;
	if (nftw(mnt, find_id, 16, FTW_PHYS | FTW_MOUNT) != 1)
		return -ENOENT;
	snprintf(out, len, "%s", found_path);
	return 0;
}

/* Sorted by local endpoint, so a socket's peer is found by binary search
 * on (remote address, remote port): scans stay O(n log n). */
static int cmp_local(const void *a, const void *b)
{
	const struct diag_sock *x = a, *y = b;
	int c = memcmp(x->local, y->local, 16);

	return c ? c : (int)x->lport - (int)y->lport;
}

/* Is the port in the local (ephemeral) range: the client side of a
 * connection?  Only used to word the reason a cgroup was followed. */
static bool ephemeral(uint16_t port)
{
	static unsigned int lo, hi;
	FILE *f;

	if (!hi) {
		f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
		if (!f || fscanf(f, "%u %u", &lo, &hi) != 2) {
			lo = 32768;
			hi = 60999;
		}
		if (f)
			fclose(f);
	}
	return port >= lo && port <= hi;
}

static bool nested(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	if (la <= lb)
		return !strncmp(a, b, la) && (b[la] == '/' || b[la] == 0);
	return !strncmp(a, b, lb) && a[lb] == '/';
}

int follow_scan(const char *cg2_mnt, const struct cg_target *attached, int n_attached,
		const struct port_set *ports, struct follow_candidate *out, int max)
{
	struct sock_list l = { 0 };
	struct stat root;
	size_t i, j;
	int k, n = 0, ret;

	if (stat(cg2_mnt, &root))
		return -errno;
	ret = dump_all(&l);
	if (ret)
		goto out;
	qsort(l.v, l.n, sizeof(*l.v), cmp_local);
	for (i = 0; i < l.n && n < max; i++) {
		const struct diag_sock *s = &l.v[i];
		bool ours = false;


		for (k = 0; k < n_attached; k++)
			ours |= attached[k].id == s->cgroup;
		if (!ours || (!port_set_has(ports, s->lport) && !port_set_has(ports, s->rport)))
			continue;
		struct diag_sock probe = { .lport = s->rport };
		const struct diag_sock *first;

		memcpy(probe.local, s->remote, 16);
		first = bsearch(&probe, l.v, l.n, sizeof(*l.v), cmp_local);
		if (!first)
			continue;
		while (first > l.v && !cmp_local(first - 1, &probe))
			first--;
		for (j = first - l.v; j < l.n && n < max && !cmp_local(&l.v[j], &probe); j++) {
			const struct diag_sock *p = &l.v[j];
			struct follow_candidate *c = &out[n];
			bool skip = p->cgroup == root.st_ino;

			if (p->rport != s->lport || memcmp(p->remote, s->local, 16))
				continue;
			/* loopback ends are in one namespace */
			if (is_loopback(s->local) && p->netns != s->netns)
				continue;
			for (k = 0; k < n_attached; k++)
				skip |= attached[k].id == p->cgroup;
			for (k = 0; k < n; k++)
				skip |= out[k].target.id == p->cgroup;
			if (skip)
				continue;
			memset(c, 0, sizeof(*c));
			if (path_of_cgroup(cg2_mnt, p->cgroup, c->target.path, sizeof(c->target.path)))
				continue;
			for (k = 0; k < n_attached; k++)
				skip |= nested(attached[k].path, c->target.path);
			if (skip) {
				pr_debug("follow: %s is nested with an attached cgroup, not followed\n",
					 c->target.path);
				continue;
			}
			c->target.id = p->cgroup;
			for (k = 0; k < n_attached; k++)
				if (attached[k].id == s->cgroup)
					snprintf(c->target.reason, sizeof(c->target.reason),
						 "followed: %s port %u of %.24s",
						 ephemeral(s->lport) && !ephemeral(s->rport)
							 ? "server on" : "client of",
						 ephemeral(s->lport) && !ephemeral(s->rport)
							 ? s->rport : s->lport,
						 strrchr(attached[k].path, '/') + 1);
			n++;
		}
	}
out:
	free(l.v);
	return ret ? ret : n;
}

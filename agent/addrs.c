// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <bpf/bpf.h>
#include "accel.h"
#include "addrs.h"
#include "log.h"
#include "nl_dump.h"

struct addr16 {
	__u32 a[4]; /* v4-mapped, network order: as struct sock_key */
};

struct addr_set {
	struct addr16 v[LOCAL_ADDRS_MAX];
	size_t n;
};

static void add(struct addr_set *s, int family, const void *data)
{
	struct addr16 x = {};
	size_t i;

	if (family == AF_INET) {
		x.a[2] = htonl(0xffff);
		memcpy(&x.a[3], data, 4);
	} else {
		memcpy(x.a, data, 16);
	}
	for (i = 0; i < s->n; i++)
		if (!memcmp(&s->v[i], &x, sizeof(x)))
			return;
	if (s->n < LOCAL_ADDRS_MAX)
		s->v[s->n++] = x;
}

/*
 * One RTM_GETADDR dump of the current namespace into s.  The namespace may
 * be an unprivileged user's, who can send netlink unicasts to our socket
 * there: the socket is connected to the kernel, and every datagram must
 * come from port id 0 and answer our sequence number, with every length
 * checked (as diag_parse.c does for sock_diag).  A forged address would
 * only make a remote peer look local, which costs it an insert; pairing
 * still needs its proof.
 */
static int dump_addrs(struct addr_set *s)
{
	static uint32_t seq;
	struct {
		struct nlmsghdr nlh;
		struct ifaddrmsg ifa;
	} req = {
		.nlh = { .nlmsg_len = sizeof(req), .nlmsg_type = RTM_GETADDR,
			 .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.ifa = { .ifa_family = AF_UNSPEC },
	};
	struct sockaddr_nl from;
	static char buf[32768];
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	uint32_t portid;
	int fd, ret = 0, done = 0;
	ssize_t n;

	fd = nl_dump_start(NETLINK_ROUTE, &req.nlh, &seq, &portid);
	if (fd < 0)
		return fd;
	while (!done) {
		struct nlmsghdr *h;
		size_t left;

		mh.msg_name = &from;
		mh.msg_namelen = sizeof(from);
		n = recvmsg(fd, &mh, 0);
		if (n < 0) {
			ret = -errno;
			break;
		}
		if ((mh.msg_flags & MSG_TRUNC) || mh.msg_namelen < sizeof(from) || from.nl_pid ||
		    from.nl_groups)
			continue; /* not the kernel's, or cut: ignore it */
		left = n;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
			struct ifaddrmsg *ifa = NLMSG_DATA(h);
			struct rtattr *a;
			int alen;

			if (h->nlmsg_seq != req.nlh.nlmsg_seq || h->nlmsg_pid != portid)
				continue;
			if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
				done = 1;
				break;
			}
			if (h->nlmsg_type != RTM_NEWADDR || h->nlmsg_len < NLMSG_LENGTH(sizeof(*ifa)))
				continue;
			alen = h->nlmsg_len - NLMSG_LENGTH(sizeof(*ifa));
			for (a = IFA_RTA(ifa); RTA_OK(a, alen); a = RTA_NEXT(a, alen)) {
				size_t want = ifa->ifa_family == AF_INET ? 4 : 16;

				if ((a->rta_type == IFA_LOCAL || a->rta_type == IFA_ADDRESS) &&
				    (ifa->ifa_family == AF_INET || ifa->ifa_family == AF_INET6) &&
				    RTA_PAYLOAD(a) == want)
					add(s, ifa->ifa_family, RTA_DATA(a));
			}
		}
	}
	close(fd);
	return ret;
}

static int cmp(const void *x, const void *y)
{
	return memcmp(x, y, sizeof(struct addr16));
}

int addrs_sync(int map_fd, const struct netns_ref *ns, size_t n)
{
	/* last: what map_fd holds since the last sync that wrote it whole */
	static struct addr_set now, last;
	static int last_fd = -1;
	struct addr16 key, next;
	__u32 one = 1;
	int self, removed = 0, failed = 0;
	void *prev = NULL;
	size_t i;

	now.n = 0;
	self = netns_save();
	if (self < 0)
		return self;
	for (i = 0; i < n; i++)
		if (!netns_enter(&ns[i]) && dump_addrs(&now))
			pr_debug("addrs: netns %llu: dump failed\n", (unsigned long long)ns[i].ino);
	netns_restore(self);
	qsort(now.v, now.n, sizeof(now.v[0]), cmp);
	/* Once a tick, and the addresses hardly ever change: the map has
	 * them (the agent is its only writer), so no write and no walk, which
	 * visits every one of its buckets (kernel/bpf/hashtab.c). */
	if (map_fd == last_fd && now.n == last.n &&
	    !memcmp(now.v, last.v, now.n * sizeof(now.v[0])))
		return now.n;
	last_fd = -1;
	for (i = 0; i < now.n; i++)
		if (bpf_map_update_elem(map_fd, &now.v[i], &one, BPF_ANY))
			failed++;
	/* drop what is gone (restart the walk after each delete) */
	while (bpf_map_get_next_key(map_fd, prev, &next) == 0) {
		if (!bsearch(&next, now.v, now.n, sizeof(now.v[0]), cmp)) {
			bpf_map_delete_elem(map_fd, &next);
			removed++;
			prev = NULL;
			continue;
		}
		key = next;
		prev = &key;
	}
	if (removed)
		pr_debug("addrs: %d addresses gone\n", removed);
	if (!failed) {
		memcpy(last.v, now.v, now.n * sizeof(now.v[0]));
		last.n = now.n;
		last_fd = map_fd;
	}
	return now.n;
}

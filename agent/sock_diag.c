// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include "nl_dump.h"
#include "sock_diag.h"

/* unique per request, so a reply to an earlier one never counts */
static uint32_t seq;

/* Send req and read the replies through diag_parse until it is done. */
static int request(struct nlmsghdr *req, struct diag_ctx *ctx, struct diag_list *l)
{
	static char buf[65536];
	struct sockaddr_nl from;
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	int fd, ret;
	ssize_t n;

	/* diag_parse refuses what slips in before the socket is connected
	 * (sender not port id 0, nl_dump.h) */
	fd = nl_dump_start(NETLINK_SOCK_DIAG, req, &seq, &ctx->portid);
	if (fd < 0)
		return fd;
	ctx->seq = req->nlmsg_seq;
	do {
		mh.msg_name = &from;
		mh.msg_namelen = sizeof(from);
		n = recvmsg(fd, &mh, 0);
		if (n < 0) {
			ret = errno == EINTR ? DIAG_MORE : -errno;
			continue;
		}
		ret = diag_parse(ctx, buf, n, mh.msg_flags, &from, mh.msg_namelen, l);
	} while (ret == DIAG_MORE);
	close(fd);
	return ret < 0 ? ret : 0;
}

int diag_dump_tcp(int family, uint32_t states, struct diag_ctx *ctx, struct diag_list *l)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 req;
	} msg = {
		.nlh = { .nlmsg_len = sizeof(msg), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			 .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.req = { .sdiag_family = family, .sdiag_protocol = IPPROTO_TCP,
			 .idiag_states = states },
	};

	ctx->family = family;
	return request(&msg.nlh, ctx, l);
}

int diag_dump_tcp_storage(int family, uint32_t states, int map_fd, struct diag_ctx *ctx,
			  struct diag_list *l)
{
	/* net/core/bpf_sk_storage.c bpf_sk_storage_diag_alloc: the maps
	 * named by fd in a nested INET_DIAG_REQ_SK_BPF_STORAGES (it takes
	 * bpf_capable()); each socket's reply then carries its value */
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 req;
		struct rtattr stgs;
		struct rtattr fd_attr;
		uint32_t fd;
	} msg = {
		.nlh = { .nlmsg_len = sizeof(msg), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			 .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.req = { .sdiag_family = family, .sdiag_protocol = IPPROTO_TCP,
			 .idiag_states = states },
		.stgs = { .rta_len = RTA_LENGTH(RTA_LENGTH(sizeof(uint32_t))),
			  .rta_type = INET_DIAG_REQ_SK_BPF_STORAGES | NLA_F_NESTED },
		.fd_attr = { .rta_len = RTA_LENGTH(sizeof(uint32_t)),
			     .rta_type = SK_DIAG_BPF_STORAGE_REQ_MAP_FD },
		.fd = (uint32_t)map_fd,
	};

	ctx->family = family;
	return request(&msg.nlh, ctx, l);
}

/* An exact request's id (net/ipv4/inet_diag.c inet_diag_find_one_icsk):
 * the 4-tuple as the kernel's lookup takes it (v4 in the first word), the
 * bound device, then the cookie (sock_diag_check_cookie: low word first;
 * INET_DIAG_NOCOOKIE takes whatever the tuple finds). */
static void exact_id(struct inet_diag_req_v2 *req, const struct diag_sock *s, bool any_cookie)
{
	if (s->family == AF_INET) {
		memcpy(req->id.idiag_src, s->local + 12, 4);
		memcpy(req->id.idiag_dst, s->remote + 12, 4);
	} else {
		memcpy(req->id.idiag_src, s->local, 16);
		memcpy(req->id.idiag_dst, s->remote, 16);
	}
	req->id.idiag_sport = htons(s->lport);
	req->id.idiag_dport = htons(s->rport);
	req->id.idiag_if = s->ifindex;
	if (any_cookie) {
		req->id.idiag_cookie[0] = req->id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	} else {
		req->id.idiag_cookie[0] = (uint32_t)s->cookie;
		req->id.idiag_cookie[1] = (uint32_t)(s->cookie >> 32);
	}
}

int diag_destroy(const struct diag_sock *s)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 req;
	} msg = {
		.nlh = { .nlmsg_len = sizeof(msg), .nlmsg_type = SOCK_DESTROY,
			 .nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK },
		.req = { .sdiag_family = s->family, .sdiag_protocol = IPPROTO_TCP,
			 .idiag_states = DIAG_TCP_ALL },
	};
	struct diag_ctx ctx = { .family = s->family, .budget = 1 };
	struct diag_list none = {};
	int ret;

	exact_id(&msg.req, s, false);
	ret = request(&msg.nlh, &ctx, &none);
	free(none.v);
	return ret;
}

/* One socket by its id, not a dump (no NLM_F_DUMP: inet_diag_cmd_exact,
 * a hash lookup however many sockets the namespace holds); NLM_F_ACK, so
 * the reply ends with an ACK or the lookup's error. */
static int get_exact(const struct diag_sock *want, bool any_cookie, struct diag_sock *got)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 req;
	} msg = {
		.nlh = { .nlmsg_len = sizeof(msg), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			 .nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK },
		.req = { .sdiag_family = want->family, .sdiag_protocol = IPPROTO_TCP,
			 .idiag_states = DIAG_TCP_ALL },
	};
	/* the reply carries the family of the socket found, which for a
	 * v4-mapped tuple may be either (a dual-stack socket is AF_INET6) */
	struct diag_ctx ctx = { .family = AF_UNSPEC, .any_cgroup = true, .budget = 1 };
	struct diag_list l = {};
	int ret;

	exact_id(&msg.req, want, any_cookie);
	ret = request(&msg.nlh, &ctx, &l);
	if (!ret && l.n != 1)
		ret = -ENOENT;
	if (!ret)
		*got = l.v[0];
	free(l.v);
	return ret;
}

int diag_get(const struct diag_sock *want, struct diag_sock *got)
{
	return get_exact(want, false, got);
}

int diag_listening(const struct diag_sock *s)
{
	struct diag_sock want = *s, got;
	int ret;

	/* the remote end any (0, port 0): no established socket has it, so
	 * the lookup goes on to the listeners (inet_lookup:
	 * __inet_lookup_listener) and finds the one this local end was
	 * accepted from, if it is still there */
	memset(want.remote, 0, sizeof(want.remote));
	want.rport = 0;
	ret = get_exact(&want, true, &got);
	if (ret == -ENOENT)
		return 0;
	return ret ? ret : got.state == DIAG_TCP_LISTEN;
}

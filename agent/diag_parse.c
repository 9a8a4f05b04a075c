// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include "diag_parse.h"

/* Every header is copied out with memcpy, never read through a cast
 * pointer: the buffer may hold anything at any alignment. */

static void to_v6(uint8_t out[16], int family, const uint32_t addr[4])
{
	if (family == AF_INET) {
		memset(out, 0, 10);
		out[10] = out[11] = 0xff;
		memcpy(out + 12, addr, 4);
	} else {
		memcpy(out, addr, 16);
	}
}

/* A kernel errno as netlink carries it (negative), or -EPROTO when the
 * value is none (include/linux/err.h: MAX_ERRNO 4095). */
static int kernel_errno(int32_t e)
{
	return e < 0 && e >= -4095 ? e : -EPROTO;
}

/* Walk the attributes of p[len], all well formed: fn sees each one's
 * type and payload.  A nonzero return of fn stops the walk with it. */
static int walk_attrs(const uint8_t *p, size_t len,
		      int (*fn)(void *arg, uint16_t type, const uint8_t *data, size_t dlen),
		      void *arg)
{
	struct rtattr a;
	int ret;

	while (len >= sizeof(a)) {
		memcpy(&a, p, sizeof(a));
		if (a.rta_len < sizeof(a) || a.rta_len > len)
			return -EBADMSG;
		ret = fn(arg, a.rta_type & NLA_TYPE_MASK, p + RTA_LENGTH(0), RTA_PAYLOAD(&a));
		if (ret)
			return ret;
		/* the last attribute need not be padded */
		if (RTA_ALIGN(a.rta_len) >= len)
			return 0;
		p += RTA_ALIGN(a.rta_len);
		len -= RTA_ALIGN(a.rta_len);
	}
	return len ? -EBADMSG : 0;
}

struct attr_walk {
	const struct diag_ctx *ctx;
	struct diag_sock *s;
	uint32_t map_id;          /* in one SK_DIAG_BPF_STORAGE */
	const uint8_t *value;
	size_t value_len;
};

/* The attributes of one SK_DIAG_BPF_STORAGE: the map's id, its value
 * (net/core/bpf_sk_storage.c diag_get). */
static int storage_attr(void *arg, uint16_t type, const uint8_t *data, size_t dlen)
{
	struct attr_walk *w = arg;

	if (type == SK_DIAG_BPF_STORAGE_MAP_ID) {
		if (dlen != sizeof(w->map_id))
			return -EBADMSG;
		memcpy(&w->map_id, data, sizeof(w->map_id));
	} else if (type == SK_DIAG_BPF_STORAGE_MAP_VALUE) {
		w->value = data;
		w->value_len = dlen;
	}
	return 0;
}

/* One entry of INET_DIAG_SK_BPF_STORAGES: kept if it is the asked map's
 * value, of its size. */
static int storages_attr(void *arg, uint16_t type, const uint8_t *data, size_t dlen)
{
	struct attr_walk *w = arg;
	const struct diag_ctx *c = w->ctx;
	int ret;

	if (type != SK_DIAG_BPF_STORAGE)
		return 0;
	w->map_id = 0;
	w->value = NULL;
	w->value_len = 0;
	ret = walk_attrs(data, dlen, storage_attr, w);
	if (ret)
		return ret;
	if (w->map_id != c->storage_id || !w->value || w->value_len != c->storage_size ||
	    c->storage_len > DIAG_STORAGE_WINDOW || c->storage_off > c->storage_size ||
	    c->storage_len > c->storage_size - c->storage_off)
		return 0;
	memcpy(w->s->storage, w->value + c->storage_off, c->storage_len);
	w->s->has_storage = true;
	return 0;
}

/* The attributes after struct inet_diag_msg: the cgroup id
 * (nla_put_u64_64bit: exactly 8 bytes, net/ipv4/inet_diag.c) if there is
 * one, 0 if there is none; the socket storage asked for, if any. */
static int sock_attr(void *arg, uint16_t type, const uint8_t *data, size_t dlen)
{
	struct attr_walk *w = arg;

	if (type == INET_DIAG_CGROUP_ID) {
		if (dlen != sizeof(w->s->cgroup))
			return -EBADMSG;
		memcpy(&w->s->cgroup, data, sizeof(w->s->cgroup));
	} else if (type == INET_DIAG_SK_BPF_STORAGES && w->ctx->storage_id) {
		return walk_attrs(data, dlen, storages_attr, w);
	}
	return 0;
}

static int parse_attrs(const struct diag_ctx *ctx, const uint8_t *p, size_t len,
		       struct diag_sock *s)
{
	struct attr_walk w = { .ctx = ctx, .s = s };

	s->cgroup = 0;
	s->has_storage = false;
	return walk_attrs(p, len, sock_attr, &w);
}

static int append(struct diag_list *l, const struct diag_sock *s)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 256;
		struct diag_sock *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = *s;
	return 0;
}

/* One SOCK_DIAG_BY_FAMILY message: payload[len] after its nlmsghdr. */
static int parse_sock(struct diag_ctx *ctx, const uint8_t *payload, size_t len,
		      struct diag_list *out)
{
	struct inet_diag_msg m;
	struct diag_sock s = { .netns = ctx->netns };
	int ret;

	if (len < sizeof(m))
		return -EBADMSG;
	memcpy(&m, payload, sizeof(m));
	/* inet_diag_dump_icsk skips sockets of other families; an exact
	 * request of a v4 tuple may find either (inet_diag_find_one_icsk) */
	if (ctx->family == AF_UNSPEC ? m.idiag_family != AF_INET && m.idiag_family != AF_INET6
				     : m.idiag_family != ctx->family)
		return -EPROTO;
	ret = parse_attrs(ctx, payload + NLMSG_ALIGN(sizeof(m)), len - NLMSG_ALIGN(sizeof(m)),
			  &s);
	if (ret || (!s.cgroup && !ctx->any_cgroup))
		return ret;
	if (!ctx->budget) {
		ctx->capped = true;
		return 0; /* keep checking the datagram, take nothing more */
	}
	to_v6(s.local, m.idiag_family, m.id.idiag_src);
	to_v6(s.remote, m.idiag_family, m.id.idiag_dst);
	s.lport = ntohs(m.id.idiag_sport);
	s.rport = ntohs(m.id.idiag_dport);
	s.cookie = (uint64_t)m.id.idiag_cookie[1] << 32 | m.id.idiag_cookie[0];
	s.ifindex = m.id.idiag_if;
	s.family = m.idiag_family;
	s.state = m.idiag_state;
	ret = append(out, &s);
	if (!ret)
		ctx->budget--;
	return ret;
}

/* Walk the messages; 1 at NLMSG_DONE or an ACK. */
static int parse_msgs(struct diag_ctx *ctx, const uint8_t *buf, size_t len,
		      struct diag_list *out)
{
	struct nlmsghdr h;
	struct nlmsgerr e;
	int32_t done_errno;
	size_t plen;
	int ret;

	if (!len)
		return -EBADMSG;
	while (len) {
		/* NLMSG_OK, with an error where it would just say "stop" */
		if (len < sizeof(h))
			return -EBADMSG;
		memcpy(&h, buf, sizeof(h));
		if (h.nlmsg_len < sizeof(h) || h.nlmsg_len > len)
			return -EBADMSG;
		/* inet_diag_dump and netlink_dump (NLMSG_DONE) and netlink_ack
		 * (NLMSG_ERROR) all answer with the request's seq and our
		 * port id (net/ipv4/inet_diag.c, net/netlink/af_netlink.c). */
		if (h.nlmsg_seq != ctx->seq || h.nlmsg_pid != ctx->portid)
			return -EPROTO;
		plen = h.nlmsg_len - NLMSG_HDRLEN;
		switch (h.nlmsg_type) {
		case NLMSG_DONE:
			/* netlink_dump puts an int there, the dump's own
			 * error; take a DONE without one as a plain end */
			if (plen < sizeof(done_errno))
				return plen ? -EBADMSG : 1;
			memcpy(&done_errno, buf + NLMSG_HDRLEN, sizeof(done_errno));
			return done_errno ? kernel_errno(done_errno) : 1;
		case NLMSG_ERROR:
			/* netlink_ack: struct nlmsgerr whole, even with
			 * NETLINK_CAP_ACK (only what follows it is cut) */
			if (plen < sizeof(e))
				return -EBADMSG;
			memcpy(&e, buf + NLMSG_HDRLEN, sizeof(e));
			return e.error ? kernel_errno(e.error) : 1;
		case SOCK_DIAG_BY_FAMILY:
			ret = parse_sock(ctx, buf + NLMSG_HDRLEN, plen, out);
			if (ret)
				return ret;
			break;
		default:
			return -EPROTO;
		}
		/* the last message need not be padded */
		if (NLMSG_ALIGN(h.nlmsg_len) >= len)
			break;
		buf += NLMSG_ALIGN(h.nlmsg_len);
		len -= NLMSG_ALIGN(h.nlmsg_len);
	}
	return 0;
}

int diag_parse(struct diag_ctx *ctx, const void *buf, size_t len, int msg_flags,
	       const struct sockaddr_nl *from, size_t fromlen, struct diag_list *out)
{
	size_t n0 = out->n, budget0 = ctx->budget;
	bool capped0 = ctx->capped;
	int ret;

	/* The kernel sends from port id 0 (netlink_kernel_create); a user
	 * socket never has port id 0 (bind with nl_pid 0 autobinds), so
	 * this is the one check a forger cannot pass.  A multicast is not
	 * a reply either. */
	if (!from || fromlen < sizeof(*from) || from->nl_family != AF_NETLINK ||
	    from->nl_pid != 0 || from->nl_groups != 0)
		return -EPERM;
	if (msg_flags & MSG_TRUNC)
		return -EMSGSIZE;
	ret = parse_msgs(ctx, buf, len, out);
	if (ret < 0) {
		out->n = n0;
		ctx->budget = budget0;
		ctx->capped = capped0;
		return ret;
	}
	return ret || ctx->capped ? DIAG_DONE : DIAG_MORE;
}

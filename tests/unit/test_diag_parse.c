// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * diag_parse (agent/diag_parse.c) against well-formed, truncated, oversized
 * and foreign sock_diag replies, then a deterministic fuzz loop of mutated
 * replies.  Built with -fsanitize=address,undefined (Makefile): every
 * datagram is parsed from a heap copy of exactly its length, so a read past
 * a length the parser failed to check is an ASan report, not luck.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include "check.h"
#include "diag_parse.h"

#define SEQ  0x1234
#define PID  4242u /* our port id */
#define NETNS 4026531840ull

/* A datagram being built: big enough for 70000 socket messages. */
static uint8_t dg[8 << 20];
static size_t dlen;

static void put(const void *p, size_t n)
{
	if (n)
		memcpy(dg + dlen, p, n);
	dlen += n;
}

static void align4(void)
{
	while (dlen % 4)
		dg[dlen++] = 0;
}

static void put_attr(uint16_t type, const void *p, uint16_t n)
{
	struct rtattr a = { .rta_len = RTA_LENGTH(n), .rta_type = type };

	put(&a, sizeof(a));
	put(p, n);
	align4();
}

/* Patch the nlmsg_len of the message that starts at start. */
static void end_msg(size_t start)
{
	uint32_t len = dlen - start;

	memcpy(dg + start, &len, sizeof(len));
	align4();
}

static size_t begin_msg(uint16_t type, uint32_t seq, uint32_t pid)
{
	struct nlmsghdr h = { .nlmsg_type = type, .nlmsg_flags = NLM_F_MULTI,
			      .nlmsg_seq = seq, .nlmsg_pid = pid };
	size_t start = dlen;

	put(&h, sizeof(h));
	return start;
}

struct sk {
	int family;
	const char *src, *dst;
	uint16_t sport, dport;
	uint64_t cgroup; /* 0: no INET_DIAG_CGROUP_ID attribute */
	int pad;         /* an INET_DIAG_PAD before the cgroup id */
	uint32_t seq, pid;
};

#define SK(f, s, d, sp, dp, cg, ...)                                                 \
	(&(struct sk){ .family = f, .src = s, .dst = d, .sport = sp, .dport = dp, .cgroup = cg, \
		       __VA_ARGS__ })

/* One SOCK_DIAG_BY_FAMILY message laid out as inet_sk_diag_fill does. */
static void put_sock(const struct sk *s)
{
	struct inet_diag_msg m = { .idiag_family = s->family, .idiag_state = 1 };
	size_t start = begin_msg(SOCK_DIAG_BY_FAMILY, s->seq ? s->seq : SEQ, s->pid ? s->pid : PID);
	uint8_t shut = 0;

	inet_pton(s->family, s->src, m.id.idiag_src);
	inet_pton(s->family, s->dst, m.id.idiag_dst);
	m.id.idiag_sport = htons(s->sport);
	m.id.idiag_dport = htons(s->dport);
	put(&m, sizeof(m));
	put_attr(INET_DIAG_SHUTDOWN, &shut, 1);
	if (s->pad)
		put_attr(INET_DIAG_PAD, NULL, 0);
	if (s->cgroup)
		put_attr(INET_DIAG_CGROUP_ID, &s->cgroup, 8);
	end_msg(start);
}

static void put_done(int32_t err)
{
	size_t start = begin_msg(NLMSG_DONE, SEQ, PID);

	put(&err, sizeof(err));
	end_msg(start);
}

static void put_error(int32_t err, size_t payload)
{
	struct nlmsgerr e = { .error = err };
	size_t start = begin_msg(NLMSG_ERROR, SEQ, PID);

	put(&e, payload < sizeof(e) ? payload : sizeof(e));
	end_msg(start);
}

static struct diag_list list;

static struct diag_ctx ctx_for(int family)
{
	struct diag_ctx c = { .seq = SEQ, .portid = PID, .family = family, .netns = NETNS,
			      .budget = DIAG_MAX_SOCKS_PER_NETNS };

	return c;
}

/* Parse buf[len] from a heap block of exactly len bytes. */
static int parse_from(struct diag_ctx *c, const void *buf, size_t len, int flags,
		      uint32_t from_pid)
{
	struct sockaddr_nl from = { .nl_family = AF_NETLINK, .nl_pid = from_pid };
	uint8_t *copy = malloc(len ? len : 1);
	int ret;

	memcpy(copy, buf, len);
	ret = diag_parse(c, copy, len, flags, &from, sizeof(from), &list);
	free(copy);
	return ret;
}

static int parse_dg(struct diag_ctx *c)
{
	return parse_from(c, dg, dlen, 0, 0);
}

static void reset(void)
{
	dlen = 0;
	list.n = 0;
}

static void test_well_formed(void)
{
	struct diag_ctx c = ctx_for(AF_INET);
	uint8_t v4[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 1 };
	int ret;

	reset();
	put_sock(SK(AF_INET, "10.0.0.1", "10.0.0.2", 80, 40000, 111));
	put_sock(SK(AF_INET, "10.0.0.2", "10.0.0.1", 40000, 80, 222));
	put_sock(SK(AF_INET, "10.0.0.3", "10.0.0.4", 1, 2, 0)); /* no cgroup */
	ret = parse_dg(&c);
	CHECK(ret == DIAG_MORE, "first part of a multi-part reply: more (got %d)", ret);
	CHECK(list.n == 2, "two sockets with a cgroup id (got %zu)", list.n);
	CHECK(list.n == 2 && !memcmp(list.v[0].local, v4, 16) && list.v[0].lport == 80 &&
		      list.v[0].rport == 40000 && list.v[0].cgroup == 111 &&
		      list.v[0].netns == NETNS,
	      "v4 socket: ::ffff:10.0.0.1:80, cgroup 111, netns");
	CHECK(c.budget == DIAG_MAX_SOCKS_PER_NETNS - 2, "budget counts what was taken");
	dlen = 0;
	put_sock(SK(AF_INET, "10.0.0.5", "10.0.0.6", 443, 50000, 333));
	put_done(0);
	ret = parse_dg(&c);
	CHECK(ret == DIAG_DONE && list.n == 3 && list.v[2].cgroup == 333,
	      "second part ends with NLMSG_DONE (got %d, %zu)", ret, list.n);

	/* the same two parts in one datagram */
	reset();
	put_sock(SK(AF_INET, "10.0.0.1", "10.0.0.2", 80, 40000, 111));
	put_done(0);
	put_sock(SK(AF_INET, "10.0.0.9", "10.0.0.9", 9, 9, 999));
	ret = parse_dg(&c);
	CHECK(ret == DIAG_DONE && list.n == 1, "nothing after NLMSG_DONE is taken");

	/* v6, and v4-mapped v6, with an INET_DIAG_PAD before the cgroup id */
	c = ctx_for(AF_INET6);
	reset();
	put_sock(SK(AF_INET6, "2001:db8::1", "2001:db8::2", 8080, 41000, 7, .pad = 1));
	put_sock(SK(AF_INET6, "::ffff:10.0.0.1", "::1", 80, 42000, 8, .pad = 0));
	put_done(0);
	ret = parse_dg(&c);
	CHECK(ret == DIAG_DONE && list.n == 2, "v6 reply (got %d, %zu)", ret, list.n);
	CHECK(list.n == 2 && list.v[0].local[0] == 0x20 && list.v[0].local[15] == 1 &&
		      list.v[0].remote[15] == 2 && list.v[0].lport == 8080 && list.v[0].cgroup == 7,
	      "v6 addresses and ports");
	CHECK(list.n == 2 && !memcmp(list.v[1].local, v4, 16) && list.v[1].cgroup == 8,
	      "v4-mapped v6 reads as v4");

	/* an ACK (NLMSG_ERROR 0) ends a reply too */
	reset();
	put_error(0, sizeof(struct nlmsgerr));
	CHECK(parse_dg(&c) == DIAG_DONE, "ACK ends the reply");
	/* a DONE without its int: end, nothing to read */
	reset();
	{
		size_t s = begin_msg(NLMSG_DONE, SEQ, PID);

		end_msg(s);
	}
	CHECK(parse_dg(&c) == DIAG_DONE, "bare NLMSG_DONE ends the reply");
}

static void test_truncated(void)
{
	struct diag_ctx c = ctx_for(AF_INET);
	size_t cut, good;
	uint32_t len;
	int ret, bad = 0;

	reset();
	CHECK(parse_dg(&c) == -EBADMSG, "empty datagram");
	put_sock(SK(AF_INET, "10.0.0.1", "10.0.0.2", 80, 40000, 111));
	good = dlen;
	/* Every cut of a good message: short header, short payload, short
	 * attribute.  Once as cut (nlmsg_len past the end), once with
	 * nlmsg_len patched to the cut, so only the inner lengths are wrong;
	 * then the cuts that end right after an attribute (or inside the
	 * last one's pad) are whole messages, just without a cgroup id. */
	for (cut = 0; cut < good; cut++) {
		size_t attrs = NLMSG_LENGTH(sizeof(struct inet_diag_msg));
		bool whole = cut == attrs || (cut >= attrs + 5 && cut <= attrs + 8);
		uint8_t tmp[256];

		ret = parse_from(&c, dg, cut, 0, 0);
		bad += ret != -EBADMSG || list.n;
		if (cut < sizeof(struct nlmsghdr))
			continue;
		memcpy(tmp, dg, cut);
		len = cut;
		memcpy(tmp, &len, 4);
		ret = parse_from(&c, tmp, cut, 0, 0);
		bad += whole ? ret != DIAG_MORE || list.n : ret != -EBADMSG;
	}
	CHECK(!bad, "every truncation of a message is refused (%d were not)", bad);

	/* nlmsg_len shorter than struct inet_diag_msg, buffer long enough */
	reset();
	put_sock(SK(AF_INET, "10.0.0.1", "10.0.0.2", 80, 40000, 111));
	len = NLMSG_LENGTH(10);
	memcpy(dg, &len, 4);
	CHECK(parse_dg(&c) == -EBADMSG && !list.n, "nlmsg_len < NLMSG_LENGTH(inet_diag_msg)");
	len = 8;
	memcpy(dg, &len, 4);
	CHECK(parse_dg(&c) == -EBADMSG, "nlmsg_len < header");
	/* nlmsg_len past the end of the datagram */
	len = dlen + 4;
	memcpy(dg, &len, 4);
	CHECK(parse_dg(&c) == -EBADMSG, "nlmsg_len past the datagram");
	len = 0xffffffff;
	memcpy(dg, &len, 4);
	CHECK(parse_dg(&c) == -EBADMSG, "nlmsg_len 0xffffffff");
	/* trailing bytes that are no header */
	reset();
	put_sock(SK(AF_INET, "10.0.0.1", "10.0.0.2", 80, 40000, 111));
	put("\1\2\3\4\5\6\7\10", 8);
	ret = parse_dg(&c);
	CHECK(ret == -EBADMSG && list.n == 0 && c.budget == DIAG_MAX_SOCKS_PER_NETNS,
	      "junk after a good message: refused whole, nothing taken (got %d, %zu)", ret,
	      list.n);
}

/* Overwrite the first attribute's rta_len (the INET_DIAG_SHUTDOWN one). */
static int with_rta_len(uint16_t rta_len)
{
	struct diag_ctx c = ctx_for(AF_INET);

	reset();
	put_sock(SK(AF_INET, "10.0.0.1", "10.0.0.2", 80, 40000, 111));
	memcpy(dg + NLMSG_LENGTH(sizeof(struct inet_diag_msg)), &rta_len, 2);
	return parse_dg(&c);
}

static void test_attrs(void)
{
	struct diag_ctx c = ctx_for(AF_INET);
	uint32_t four = 4;
	uint8_t sixteen[16] = { 1 };
	size_t s;

	CHECK(with_rta_len(0) == -EBADMSG, "rta_len 0");
	CHECK(with_rta_len(2) == -EBADMSG, "rta_len < rtattr");
	CHECK(with_rta_len(200) == -EBADMSG, "rta_len past the message");
	CHECK(with_rta_len(0xffff) == -EBADMSG, "rta_len 0xffff");
	CHECK(with_rta_len(5) == DIAG_MORE, "the real rta_len (5, padded to 8) is fine");

	reset();
	s = begin_msg(SOCK_DIAG_BY_FAMILY, SEQ, PID);
	{
		struct inet_diag_msg m = { .idiag_family = AF_INET };

		put(&m, sizeof(m));
	}
	put_attr(INET_DIAG_CGROUP_ID, &four, 4);
	end_msg(s);
	CHECK(parse_dg(&c) == -EBADMSG && !list.n, "a 4-byte cgroup id");
	reset();
	s = begin_msg(SOCK_DIAG_BY_FAMILY, SEQ, PID);
	{
		struct inet_diag_msg m = { .idiag_family = AF_INET };

		put(&m, sizeof(m));
	}
	put_attr(INET_DIAG_CGROUP_ID, sixteen, 16);
	end_msg(s);
	CHECK(parse_dg(&c) == -EBADMSG && !list.n, "a 16-byte cgroup id");
	/* 2 bytes after the last attribute: no room for a header */
	reset();
	put_sock(SK(AF_INET, "10.0.0.1", "10.0.0.2", 80, 40000, 111));
	{
		uint32_t len = dlen + 2;

		dlen += 2;
		memcpy(dg, &len, 4);
	}
	CHECK(parse_dg(&c) == -EBADMSG, "a partial attribute header");
}

/* A socket's INET_DIAG_SK_BPF_STORAGES, laid out as
 * bpf_sk_storage_diag_put_all does: one SK_DIAG_BPF_STORAGE per map, its
 * id then its value (net/core/bpf_sk_storage.c diag_get). */
static void put_storage_sock(uint32_t map_id, const void *value, uint16_t vlen, int nest_len_off)
{
	struct inet_diag_msg m = { .idiag_family = AF_INET, .idiag_state = 1 };
	size_t start = begin_msg(SOCK_DIAG_BY_FAMILY, SEQ, PID), outer, inner;
	uint64_t cg = 5;
	struct rtattr a = {};

	inet_pton(AF_INET, "10.0.0.1", m.id.idiag_src);
	inet_pton(AF_INET, "10.0.0.2", m.id.idiag_dst);
	put(&m, sizeof(m));
	put_attr(INET_DIAG_CGROUP_ID, &cg, 8);
	outer = dlen;
	put(&a, sizeof(a));
	inner = dlen;
	put(&a, sizeof(a));
	put_attr(SK_DIAG_BPF_STORAGE_MAP_ID, &map_id, 4);
	put_attr(SK_DIAG_BPF_STORAGE_MAP_VALUE, value, vlen);
	a.rta_type = SK_DIAG_BPF_STORAGE | NLA_F_NESTED;
	a.rta_len = dlen - inner + nest_len_off;
	memcpy(dg + inner, &a, sizeof(a));
	a.rta_type = INET_DIAG_SK_BPF_STORAGES | NLA_F_NESTED;
	a.rta_len = dlen - outer;
	memcpy(dg + outer, &a, sizeof(a));
	end_msg(start);
}

static void test_storage(void)
{
	struct diag_ctx c = ctx_for(AF_INET);
	uint8_t value[24];
	int i;

	for (i = 0; i < 24; i++)
		value[i] = i;
	c.storage_id = 42;
	c.storage_size = 24;
	c.storage_off = 16;
	c.storage_len = 5;
	reset();
	put_storage_sock(42, value, 24, 0);
	CHECK(parse_dg(&c) == DIAG_MORE && list.n == 1 && list.v[0].has_storage &&
		      list.v[0].storage[0] == 16 && list.v[0].storage[4] == 20 && list.v[0].cgroup == 5,
	      "the asked map's value: bytes 16..20 kept, cgroup id too");
	reset();
	put_storage_sock(43, value, 24, 0);
	CHECK(parse_dg(&c) == DIAG_MORE && list.n == 1 && !list.v[0].has_storage,
	      "another map's value is not taken");
	reset();
	put_storage_sock(42, value, 20, 0);
	CHECK(parse_dg(&c) == DIAG_MORE && list.n == 1 && !list.v[0].has_storage,
	      "a value of another size is not taken");
	c.storage_off = 20;
	reset();
	put_storage_sock(42, value, 24, 0);
	CHECK(parse_dg(&c) == DIAG_MORE && list.n == 1 && !list.v[0].has_storage,
	      "a window past the value's end is not taken");
	c.storage_off = 16;
	reset();
	put_storage_sock(42, value, 24, 40);
	CHECK(parse_dg(&c) == -EBADMSG && !list.n, "a nested length past its parent");
	c.storage_id = 0;
	reset();
	put_storage_sock(42, value, 24, 0);
	CHECK(parse_dg(&c) == DIAG_MORE && list.n == 1 && !list.v[0].has_storage,
	      "no storage asked: none taken");
}

static void test_errors(void)
{
	struct diag_ctx c = ctx_for(AF_INET);
	int ret;

	reset();
	put_error(-EACCES, sizeof(struct nlmsgerr));
	CHECK(parse_dg(&c) == -EACCES, "NLMSG_ERROR carries the kernel's errno");
	reset();
	put_error(-EACCES, 2);
	CHECK(parse_dg(&c) == -EBADMSG, "NLMSG_ERROR with a 2-byte payload");
	reset();
	put_error(-EACCES, 4);
	CHECK(parse_dg(&c) == -EBADMSG, "NLMSG_ERROR without the request header");
	reset();
	put_error(5, sizeof(struct nlmsgerr));
	CHECK(parse_dg(&c) == -EPROTO, "NLMSG_ERROR with a positive error");
	reset();
	put_error(-100000, sizeof(struct nlmsgerr));
	CHECK(parse_dg(&c) == -EPROTO, "NLMSG_ERROR beyond MAX_ERRNO");
	reset();
	put_sock(SK(AF_INET, "10.0.0.1", "10.0.0.2", 80, 40000, 111));
	put_done(-ENOBUFS);
	ret = parse_dg(&c);
	CHECK(ret == -ENOBUFS && !list.n, "NLMSG_DONE with the dump's error (got %d)", ret);
}

static void test_foreign(void)
{
	struct diag_ctx c = ctx_for(AF_INET);
	struct sockaddr_nl from = { .nl_family = AF_NETLINK };
	int ret;

	/* a perfect reply but for its sender */
	reset();
	put_sock(SK(AF_INET, "10.0.0.1", "10.0.0.2", 80, 40000, 111));
	put_done(0);
	CHECK(parse_from(&c, dg, dlen, 0, 4243) == -EPERM && !list.n, "sender port id != 0");
	CHECK(parse_from(&c, dg, dlen, 0, PID) == -EPERM, "sender with our own port id");
	CHECK(diag_parse(&c, dg, dlen, 0, NULL, 0, &list) == -EPERM, "no sender address");
	CHECK(diag_parse(&c, dg, dlen, 0, &from, 4, &list) == -EPERM, "short sender address");
	from.nl_groups = 1;
	CHECK(diag_parse(&c, dg, dlen, 0, &from, sizeof(from), &list) == -EPERM,
	      "a multicast from the kernel");
	from.nl_groups = 0;
	from.nl_family = AF_INET;
	CHECK(diag_parse(&c, dg, dlen, 0, &from, sizeof(from), &list) == -EPERM,
	      "sender address not AF_NETLINK");
	CHECK(parse_from(&c, dg, dlen, MSG_TRUNC, 0) == -EMSGSIZE, "MSG_TRUNC");
	CHECK(!list.n, "nothing taken from any of them");

	/* from the kernel, but not to us */
	reset();
	put_sock(SK(AF_INET, "10.0.0.1", "10.0.0.2", 80, 40000, 111, .seq = SEQ + 1));
	CHECK(parse_dg(&c) == -EPROTO, "wrong sequence number");
	reset();
	put_sock(SK(AF_INET, "10.0.0.1", "10.0.0.2", 80, 40000, 111, .pid = PID + 1));
	CHECK(parse_dg(&c) == -EPROTO, "wrong port id");
	reset();
	put_sock(SK(AF_INET, "10.0.0.1", "10.0.0.2", 80, 40000, 111));
	put_sock(SK(AF_INET, "10.0.0.2", "10.0.0.1", 40000, 80, 222, .seq = 7));
	ret = parse_dg(&c);
	CHECK(ret == -EPROTO && list.n == 0, "one foreign message spoils the datagram");
	reset();
	put_sock(SK(AF_INET6, "2001:db8::1", "2001:db8::2", 80, 40000, 111));
	CHECK(parse_dg(&c) == -EPROTO, "a v6 socket in a v4 dump");
	/* an exact request's reply (AF_UNSPEC): the socket's own family,
	 * either, but nothing else */
	c.family = AF_UNSPEC;
	c.any_cgroup = true;
	reset();
	put_sock(SK(AF_INET6, "::ffff:10.0.0.1", "::ffff:10.0.0.2", 80, 40000, 0));
	put_error(0, sizeof(struct nlmsgerr));
	ret = parse_dg(&c);
	CHECK(ret == DIAG_DONE && list.n == 1 && list.v[0].family == AF_INET6,
	      "an exact reply: a dual-stack socket for a v4 tuple (got %d)", ret);
	reset();
	put_sock(SK(AF_INET, "10.0.0.1", "10.0.0.2", 80, 40000, 0));
	put_error(0, sizeof(struct nlmsgerr));
	ret = parse_dg(&c);
	CHECK(ret == DIAG_DONE && list.n == 1 && list.v[0].family == AF_INET,
	      "an exact reply: an AF_INET socket (got %d)", ret);
	reset();
	put_sock(SK(AF_UNIX, "", "", 80, 40000, 0));
	CHECK(parse_dg(&c) == -EPROTO && !list.n, "an exact reply of another family");
	c.family = AF_INET;
	c.any_cgroup = false;
	reset();
	{
		size_t s = begin_msg(NLMSG_NOOP, SEQ, PID);

		end_msg(s);
	}
	CHECK(parse_dg(&c) == -EPROTO, "an unexpected message type");
}

static void test_caps(void)
{
	struct diag_ctx c = ctx_for(AF_INET);
	size_t i;
	int ret;

	/* budget across datagrams and families */
	c.budget = 3;
	reset();
	put_sock(SK(AF_INET, "10.0.0.1", "10.0.0.2", 80, 40000, 1));
	put_sock(SK(AF_INET, "10.0.0.1", "10.0.0.2", 80, 40001, 2));
	CHECK(parse_dg(&c) == DIAG_MORE && list.n == 2 && !c.capped, "2 of 3");
	dlen = 0;
	put_sock(SK(AF_INET, "10.0.0.1", "10.0.0.2", 80, 40002, 3));
	put_sock(SK(AF_INET, "10.0.0.1", "10.0.0.2", 80, 40003, 4));
	put_sock(SK(AF_INET, "10.0.0.1", "10.0.0.2", 80, 40004, 5));
	ret = parse_dg(&c);
	CHECK(ret == DIAG_DONE && c.capped && list.n == 3 && c.budget == 0,
	      "capped at 3: done, no more read (got %d, %zu)", ret, list.n);
	c.family = AF_INET6;
	dlen = 0;
	put_sock(SK(AF_INET6, "2001:db8::1", "2001:db8::2", 80, 40000, 6));
	CHECK(parse_dg(&c) == DIAG_DONE && list.n == 3, "the namespace's v6 dump gets nothing");
	/* a capped datagram is still checked whole */
	c = ctx_for(AF_INET);
	c.budget = 1;
	reset();
	put_sock(SK(AF_INET, "10.0.0.1", "10.0.0.2", 80, 40000, 1));
	put_sock(SK(AF_INET, "10.0.0.1", "10.0.0.2", 80, 40001, 2));
	put_sock(SK(AF_INET, "10.0.0.1", "10.0.0.2", 80, 40002, 3, .pid = 9));
	ret = parse_dg(&c);
	CHECK(ret == -EPROTO && list.n == 0 && c.budget == 1 && !c.capped,
	      "over budget and foreign: refused, budget restored (got %d)", ret);

	/* 70000 sockets in one datagram against the real per-namespace cap */
	c = ctx_for(AF_INET);
	reset();
	for (i = 0; i < 70000; i++)
		put_sock(SK(AF_INET, "10.0.0.1", "10.0.0.2", 80, i & 0xffff, 1 + i));
	ret = parse_dg(&c);
	CHECK(ret == DIAG_DONE && c.capped && list.n == DIAG_MAX_SOCKS_PER_NETNS,
	      "70000 sockets: %d taken (got %d, %zu)", DIAG_MAX_SOCKS_PER_NETNS, ret, list.n);
	CHECK(list.n && list.v[list.n - 1].cgroup == DIAG_MAX_SOCKS_PER_NETNS,
	      "the first ones, in order");
}

/* ---- fuzz ---------------------------------------------------------- */

static uint64_t rng = 0x9e3779b97f4a7c15ull; /* fixed: a failure reproduces */

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng >> 32;
}

#define N_SEEDS 5
static uint8_t seeds[N_SEEDS][2048];
static size_t seed_len[N_SEEDS];
static const int seed_family[N_SEEDS] = { AF_INET, AF_INET6, AF_INET, AF_INET, AF_INET };

static void make_seeds(void)
{
	int i;

	for (i = 0; i < N_SEEDS; i++) {
		dlen = 0;
		switch (i) {
		case 0:
			put_sock(SK(AF_INET, "10.0.0.1", "10.0.0.2", 80, 40000, 11));
			put_sock(SK(AF_INET, "10.0.0.2", "10.0.0.1", 40000, 80, 12));
			put_sock(SK(AF_INET, "127.0.0.1", "127.0.0.1", 1, 2, 0));
			break;
		case 1:
			put_sock(SK(AF_INET6, "2001:db8::1", "2001:db8::2", 80, 1, 21, .pad = 1));
			put_sock(SK(AF_INET6, "::ffff:1.2.3.4", "::1", 2, 80, 22));
			put_done(0);
			break;
		case 2:
			put_error(-ENOENT, sizeof(struct nlmsgerr));
			break;
		case 3:
			put_sock(SK(AF_INET, "10.0.0.1", "10.0.0.2", 80, 40000, 31));
			put_done(0);
			break;
		case 4:
			put_sock(SK(AF_INET, "10.0.0.1", "10.0.0.2", 80, 40000, 41));
			put_error(0, sizeof(struct nlmsgerr) + 16);
			break;
		}
		memcpy(seeds[i], dg, dlen);
		seed_len[i] = dlen;
	}
}

static void mutate(uint8_t *b, size_t *len, size_t cap)
{
	static const uint32_t u32s[] = { 0, 1, 3, 4, 15, 16, 17, 20, 36, 87, 88, 89, 92,
					 100, 0xffff, 0x10000, 0x7fffffff, 0x80000000,
					 0xffffffff, SEQ, PID, NLMSG_DONE, NLMSG_ERROR };
	static const uint16_t u16s[] = { 0, 1, 2, 3, 4, 5, 8, 12, 13, 0xffff, 0x8000,
					 INET_DIAG_CGROUP_ID, SOCK_DIAG_BY_FAMILY, NLMSG_DONE,
					 NLMSG_ERROR, NLMSG_NOOP };
	size_t off, n;
	uint32_t v32;
	uint16_t v16;

	if (!*len)
		return;
	off = rnd() % *len;
	switch (rnd() % 8) {
	case 0:
		b[off] ^= 1 << (rnd() % 8);
		break;
	case 1:
		b[off] = rnd();
		break;
	case 2:
		off &= ~(size_t)3;
		if (off + 4 <= *len) {
			v32 = u32s[rnd() % (sizeof(u32s) / 4)];
			if (rnd() % 4 == 0)
				v32 = *len - off + (int)(rnd() % 9) - 4; /* near the end */
			memcpy(b + off, &v32, 4);
		}
		break;
	case 3:
		off &= ~(size_t)1;
		if (off + 2 <= *len) {
			v16 = u16s[rnd() % (sizeof(u16s) / 2)];
			memcpy(b + off, &v16, 2);
		}
		break;
	case 4:
		*len = rnd() % (*len + 1);
		break;
	case 5:
		n = rnd() % 64;
		if (*len + n <= cap) {
			while (n--)
				b[(*len)++] = rnd();
		}
		break;
	case 6: /* copy a chunk elsewhere (a header where a payload was) */
		n = rnd() % 32;
		if (n <= *len) {
			size_t from = rnd() % (*len - n + 1), to = rnd() % (*len - n + 1);

			memmove(b + to, b + from, n);
		}
		break;
	case 7: /* a whole seed appended: more messages in one datagram */
		n = seed_len[rnd() % N_SEEDS];
		if (*len + n <= cap)
			memcpy(b + *len, seeds[rnd() % N_SEEDS], n), *len += n;
		break;
	}
}

static void test_fuzz(void)
{
	enum { ITER = 200000 };
	static uint8_t work[4096];
	int hist[8] = { 0 }; /* more, done, eperm, emsgsize, ebadmsg, eproto, kernel, other */
	int i, k, broken = 0, first_bad = -1;
	size_t taken = 0;

	make_seeds();
	if (list.cap < 4) {
		list.v = realloc(list.v, 4 * sizeof(*list.v));
		list.cap = 4;
	}
	for (i = 0; i < ITER; i++) {
		int s = rnd() % N_SEEDS, flags = 0, ret, muts = rnd() % 6;
		size_t len = seed_len[s], n0, budget0, j;
		uint32_t from = 0;
		struct diag_ctx c = ctx_for(seed_family[s]);
		bool ok;

		memcpy(work, seeds[s], len);
		for (k = 0; k < muts; k++)
			mutate(work, &len, sizeof(work));
		if (rnd() % 20 == 0)
			from = rnd() % 3 ? PID : rnd();
		if (rnd() % 20 == 0)
			flags = MSG_TRUNC;
		if (rnd() % 4 == 0)
			c.budget = rnd() % 4;
		if (rnd() % 8 == 0)
			c.family = c.family == AF_INET ? AF_INET6 : AF_INET;
		list.n = rnd() % 3; /* sometimes earlier sockets are there */
		for (j = 0; j < list.n; j++)
			list.v[j].cgroup = 0xdead;
		n0 = list.n;
		budget0 = c.budget;
		ret = parse_from(&c, work, len, flags, from);

		/* what must hold whatever the input */
		ok = ret == DIAG_MORE || ret == DIAG_DONE || (ret < 0 && ret >= -4095);
		if (ret < 0)
			ok &= list.n == n0 && c.budget == budget0;
		else
			ok &= list.n - n0 == budget0 - c.budget && (!c.capped || ret == DIAG_DONE);
		for (j = n0; j < list.n; j++)
			ok &= list.v[j].cgroup != 0 && list.v[j].netns == NETNS;
		for (j = 0; j < n0; j++)
			ok &= list.v[j].cgroup == 0xdead;
		if (from)
			ok &= ret == -EPERM;
		else if (flags)
			ok &= ret == -EMSGSIZE;
		if (!ok && first_bad < 0)
			first_bad = i;
		broken += !ok;
		taken += list.n - n0;
		hist[ret == DIAG_MORE      ? 0 :
		     ret == DIAG_DONE      ? 1 :
		     ret == -EPERM         ? 2 :
		     ret == -EMSGSIZE      ? 3 :
		     ret == -EBADMSG       ? 4 :
		     ret == -EPROTO        ? 5 :
		     ret < 0 && ret >= -4095 ? 6 : 7]++;
	}
	printf("fuzz: %d replies: %d more, %d done, %d EPERM, %d EMSGSIZE, %d EBADMSG, %d EPROTO, "
	       "%d kernel errno, %d other; %zu sockets taken\n",
	       ITER, hist[0], hist[1], hist[2], hist[3], hist[4], hist[5], hist[6], hist[7],
	       taken);
	CHECK(!broken, "%d fuzzed replies broke an invariant (first: iteration %d)", broken,
	      first_bad);
	/* the loop reaches past the first checks, both ways */
	CHECK(hist[0] > 1000 && hist[1] > 1000 && hist[4] > 1000 && hist[5] > 1000,
	      "every outcome is reached often");
}

int main(void)
{
	/* an ASan abort must not swallow the FAIL lines printed before it */
	setvbuf(stdout, NULL, _IONBF, 0);
	test_well_formed();
	test_truncated();
	test_attrs();
	test_storage();
	test_errors();
	test_foreign();
	test_caps();
	test_fuzz();
	free(list.v);
	return CHECK_SUMMARY();
}

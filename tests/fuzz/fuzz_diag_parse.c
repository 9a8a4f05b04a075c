// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libFuzzer target: diag_parse (agent/diag_parse.c), the sock_diag dump
 * replies that any owner of a network namespace can shape.  The first byte
 * chooses the request (family, any cgroup, budget) and the datagram's
 * envelope (MSG_TRUNC, sender); the rest is the datagram, parsed from
 * exactly its bytes.  Besides the sanitizers it checks the contract of
 * diag_parse.h: a datagram is taken whole or not at all, within budget.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "diag_parse.h"

#define SEQ   0x1234
#define PID   4242u
#define NETNS 4026531840ull

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int families[] = { AF_INET, AF_INET6, AF_UNSPEC, AF_INET };
	static const size_t budgets[] = { DIAG_MAX_SOCKS_PER_NETNS, 0, 1, 2 };
	struct sockaddr_nl from = { .nl_family = AF_NETLINK };
	struct diag_list out = { 0 };
	struct diag_ctx ctx = { .seq = SEQ, .portid = PID, .netns = NETNS };
	size_t i, n0 = 1;
	uint8_t ctl;
	int ret;

	if (!size)
		return 0;
	ctl = data[0];
	ctx.family = families[ctl & 3];
	ctx.any_cgroup = ctl & 4;
	ctx.budget = budgets[(ctl >> 5) & 3];
	if (ctl & 0x10)
		from.nl_pid = PID; /* a forger: another socket of the namespace */
	/* one socket from an earlier datagram: it must stay as it was */
	out.v = calloc(1, sizeof(*out.v));
	if (!out.v)
		return 0;
	out.v[0].cgroup = 0xdead;
	out.n = out.cap = 1;
	ret = diag_parse(&ctx, data + 1, size - 1, ctl & 8 ? MSG_TRUNC : 0, &from, sizeof(from),
			 &out);
	if (!(ret == DIAG_MORE || ret == DIAG_DONE || (ret < 0 && ret >= -4095)))
		abort();
	if (ret < 0 && (out.n != n0 || ctx.budget != budgets[(ctl >> 5) & 3]))
		abort(); /* a refused datagram left sockets behind */
	if (ret >= 0 && out.n - n0 != budgets[(ctl >> 5) & 3] - ctx.budget)
		abort(); /* budget and sockets taken disagree */
	if (from.nl_pid && ret != -EPERM)
		abort();
	if (out.v[0].cgroup != 0xdead)
		abort();
	for (i = n0; i < out.n; i++)
		if (out.v[i].netns != NETNS || (!ctx.any_cgroup && !out.v[i].cgroup) ||
		    (out.v[i].family != AF_INET && out.v[i].family != AF_INET6))
			abort();
	free(out.v);
	return 0;
}

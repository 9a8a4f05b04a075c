// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "accel.h"
#include "enforcer.h"
#include "guard.h"
#include "log.h"

static int take_request(void *ctx, void *data, size_t size)
{
	const struct reset_request *r = data;
	struct enforcer *e = ctx;

	if (size < sizeof(*r) || e->n_pending >= (int)(sizeof(e->pending) / sizeof(e->pending[0])))
		return 0;
	e->pending[e->n_pending].cookie = r->cookie;
	e->pending[e->n_pending].reason = r->reason;
	e->n_pending++;
	return 0;
}

int enforcer_start(struct enforcer *e, struct guard *g, int resets_fd, int gauges_fd,
		   uint64_t max_unread, uint64_t budget)
{
	e->guard = g;
	e->gauges_fd = gauges_fd;
	e->max_unread = max_unread;
	e->budget = budget;
	e->rb = ring_buffer__new(resets_fd, take_request, e, NULL);
	return e->rb ? 0 : -errno;
}

int enforcer_epoll_fd(const struct enforcer *e)
{
	return e->rb ? ring_buffer__epoll_fd(e->rb) : -1;
}

/* One pass of reset_doomed in the current namespace: log what it ended and
 * doom the peers it named.  Returns how many new cookies it doomed. */
static int reset_pass(struct enforcer *e)
{
	unsigned long long cookie, peer;
	char line[512], local[128], remote[128];
	unsigned int reason;
	int added = 0;
	long destroyed;
	FILE *f;

	f = guard_run_reset(e->guard);
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llu %llu %u %ld %127s %127s", &cookie, &peer, &reason, &destroyed,
			   local, remote) != 6)
			continue;
		pr_warn("reset %s <-> %s (%s): %s\n", local, remote,
			reason < RS__MAX ? reset_names[reason] : "?",
			destroyed == 0 ? "both ends see an error" :
			destroyed < 0 && destroyed != -1 ? strerror((int)-destroyed) :
							   "this kernel has no bpf_sock_destroy");
		if (peer && !guard_doom(e->guard, peer, reason, false))
			added++;
	}
	fclose(f);
	return added;
}

/* Reset every doomed socket, wherever it lives, and its peer. */
static void enforce(struct enforcer *e)
{
	int self, pass, added;
	size_t i;

	self = netns_save();
	if (self < 0)
		return;
	for (pass = 0; pass < 3; pass++) {
		/* the agent's own namespace, then every tracked one */
		if (setns(self, CLONE_NEWNET) == 0)
			added = reset_pass(e);
		else
			added = 0;
		for (i = 0; i < e->n_ns; i++)
			if (!netns_enter(&e->ns[i]))
				added += reset_pass(e);
		if (!added)
			break;
	}
	netns_restore(self);
	guard_undoom_all(e->guard);
}

void enforcer_on_requests(struct enforcer *e)
{
	int i;

	ring_buffer__consume(e->rb);
	if (!e->n_pending)
		return;
	for (i = 0; i < e->n_pending; i++)
		guard_doom(e->guard, e->pending[i].cookie, e->pending[i].reason, true);
	e->n_pending = 0;
	enforce(e);
}

struct unread {
	uint64_t cookie, bytes;
};

static int by_bytes_desc(const void *a, const void *b)
{
	const struct unread *x = a, *y = b;

	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

void enforcer_tick(struct enforcer *e)
{
	struct agent_gauges g = { .unread_limit = e->max_unread, .unread_budget = e->budget,
				  .local_addrs = e->local_addrs, .guards_armed = e->guards_armed };
	static struct unread top[4096];
	unsigned long long cookie;
	unsigned int bytes;
	char line[128];
	__u32 zero = 0;
	int n = 0, i;
	uint64_t over;
	FILE *f;

	f = guard_run_scan(e->guard);
	if (f) {
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "%llu %u", &cookie, &bytes) != 2)
				continue;
			g.unread_bytes += bytes;
			if (bytes > g.unread_max_bytes)
				g.unread_max_bytes = bytes;
			if (n < (int)(sizeof(top) / sizeof(top[0])))
				top[n++] = (struct unread){ cookie, bytes };
		}
		fclose(f);
	}
	bpf_map_update_elem(e->gauges_fd, &zero, &g, BPF_ANY);
	if (!e->budget || g.unread_bytes <= e->budget)
		return;
	/* Over the host-wide budget: end the largest until back under it. */
	qsort(top, n, sizeof(top[0]), by_bytes_desc);
	over = g.unread_bytes - e->budget;
	for (i = 0; i < n && over; i++) {
		guard_doom(e->guard, top[i].cookie, RS_BUDGET, true);
		over = top[i].bytes >= over ? 0 : over - top[i].bytes;
	}
	pr_warn("unread redirected bytes %llu over the budget %llu: ending the %d largest\n",
		(unsigned long long)g.unread_bytes, (unsigned long long)e->budget, i);
	enforce(e);
}

void enforcer_stop(struct enforcer *e)
{
	ring_buffer__free(e->rb);
	e->rb = NULL;
}

uint64_t enforcer_default_budget(void)
{
	unsigned long long lo, pressure, hi;
	FILE *f = fopen("/proc/sys/net/ipv4/tcp_mem", "re");
	long page = sysconf(_SC_PAGESIZE);
	int got = 0;

	if (f) {
		got = fscanf(f, "%llu %llu %llu", &lo, &pressure, &hi);
		fclose(f);
	}
	/* redirected bytes are charged to TCP memory (bpf_tcp_ingress,
	 * sk_rmem_schedule): stay well clear of the pressure threshold,
	 * where every TCP socket on the host starts to suffer */
	return got == 3 ? (uint64_t)pressure * page / 2 : 256ULL << 20;
}

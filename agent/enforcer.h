/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Ending connections the data plane can't deliver as TCP would, and
 * watching what readers leave unread.
 *
 * Requests come from the data plane and the guard (reset_requests ring
 * buffer: a reader past --max-unread, a splicing reader, MSG_OOB where the
 * TCP fallback is unsafe).  For each, the guard's reset_doomed iterator runs
 * in every network namespace of tracked processes (iter/tcp walks only the
 * namespace it is created in): it resets the socket (bpf_sock_destroy) and
 * names its peer, which the next pass resets wherever it lives.  Each reset
 * is logged with both addresses.
 *
 * Every tick the guard's scan_unread iterator reports the unread redirected
 * bytes of every socket: the gauges (status, /metrics, top) and, past the
 * host-wide budget, resets of the largest ones until the total is back
 * under it.
 */
#ifndef NGX_SOCKMAP_ENFORCER_H
#define NGX_SOCKMAP_ENFORCER_H

#include <stdbool.h>
#include <stdint.h>
#include "netns.h"

struct guard;
struct ring_buffer;

struct enforcer {
	struct guard *guard;
	struct ring_buffer *rb;  /* reset_requests */
	int gauges_fd;           /* agent_gauges */
	uint64_t max_unread;     /* per socket (shown; the data plane enforces it) */
	uint64_t budget;         /* host-wide */
	const struct netns_ref *ns; /* where tracked processes live (runtime's) */
	size_t n_ns;
	uint64_t local_addrs;    /* shown in the gauges */
	uint64_t guards_armed;   /* likewise (guard_arming.c) */
	/* requests taken from the ring, not yet enforced */
	struct { uint64_t cookie; uint32_t reason; } pending[256];
	int n_pending;
};

int enforcer_start(struct enforcer *e, struct guard *g, int resets_fd, int gauges_fd,
		   uint64_t max_unread, uint64_t budget);
int enforcer_epoll_fd(const struct enforcer *e);
/* Requests are ready: take and carry them out. */
void enforcer_on_requests(struct enforcer *e);
/* Once a tick: measure unread bytes, publish the gauges, keep the budget. */
void enforcer_tick(struct enforcer *e);
void enforcer_stop(struct enforcer *e);
/* The default host-wide budget: half of tcp_mem's pressure threshold. */
uint64_t enforcer_default_budget(void);

#endif

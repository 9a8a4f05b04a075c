/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The agent's consumer of the two event rings: connection events (data
 * plane's arena) and packet samples (XDP's arena).  Sleeps on the rings'
 * wake-up ring buffers (batched by the writers, see bpf/event_ring.h) and
 * is also drained on the run loop's tick, for the stragglers of a batch.
 */
#ifndef NGX_SOCKMAP_EVENT_FEED_H
#define NGX_SOCKMAP_EVENT_FEED_H

#include "ring_reader.h"

struct ring_buffer;

enum feed_ring { FEED_CONN, FEED_PKT, FEED__MAX };
extern const char *const feed_ring_names[FEED__MAX];

struct event_feed {
	struct ring_buffer *rb;             /* wake-ups of every ring */
	struct ring_reader rd[FEED__MAX];
	bool on[FEED__MAX];
	__u64 wakeups[FEED__MAX];
	__u64 by_kind[EV__MAX];             /* events read, by kind */
};

/* Add one ring (its arena mapping and wake-up ring buffer map fd). */
int feed_add(struct event_feed *f, enum feed_ring which, struct event_ring *ring, int wake_fd);
/* fd to poll for wake-ups (-1 before feed_add). */
int feed_epoll_fd(const struct event_feed *f);
/* Wake-ups ready: take them, then drain. */
void feed_on_wakeup(struct event_feed *f);
/* Read every ready event of every ring and re-arm the wake-ups. */
void feed_drain(struct event_feed *f);
void feed_stop(struct event_feed *f);

#endif

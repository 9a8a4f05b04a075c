/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The agent's consumer of the two event streams: connection events (the
 * data plane) and packet samples (the XDP observer).  One reader
 * interface for both transports (bpf/event_ring.h, event_emit): the arena
 * ring, read in place and drained on its batched wake-ups and on the run
 * loop's tick; or, on kernels without BPF arena (before 6.9), a BPF ring
 * buffer of events, consumed through libbpf.
 */
#ifndef NGX_SOCKMAP_FEED_H
#define NGX_SOCKMAP_FEED_H

#include "ring_reader.h"

struct ring_buffer;

enum feed_ring { FEED_CONN, FEED_PKT, FEED__MAX };
extern const char *const feed_ring_names[FEED__MAX];

/* Where one stream's events come from. */
struct feed_source {
	struct event_ring *ring; /* the arena ring; NULL: ring buffer transport */
	int fd;                  /* arena: its wake-up ring buffer; else the events' */
};

struct event_feed {
	struct ring_buffer *rb;             /* wake-ups or events of every stream */
	struct ring_reader rd[FEED__MAX];   /* arena streams */
	bool on[FEED__MAX];
	bool in_arena[FEED__MAX];
	__u64 wakeups[FEED__MAX];
	__u64 by_kind[EV__MAX];             /* events read, by kind */
};

int feed_add(struct event_feed *f, enum feed_ring which, const struct feed_source *src);
/* fd to poll (-1 before feed_add). */
int feed_epoll_fd(const struct event_feed *f);
/* Ready: take wake-ups or events, then drain the arena rings. */
void feed_on_wakeup(struct event_feed *f);
/* Read every ready event of every stream (and re-arm arena wake-ups). */
void feed_drain(struct event_feed *f);
/* Events of a stream read so far, and those it lost (arena: lapped or
 * dropped positions; ring buffer: the writers count what had no room). */
__u64 feed_gaps(const struct event_feed *f, enum feed_ring which);
/* "arena" or "ringbuf": what a stream rides on. */
const char *feed_transport(const struct event_feed *f, enum feed_ring which);
void feed_stop(struct event_feed *f);

#endif

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Reader side of the arena event ring (protocol: bpf/event_ring.h). */
#ifndef NGX_SOCKMAP_RING_READER_H
#define NGX_SOCKMAP_RING_READER_H

#include <stdbool.h>
#include <stddef.h>
#include "event_ring.h"

/* The consuming reader of one ring. */
struct ring_reader {
	struct event_ring *ring; /* the arena mapping (skel->arena->ring) */
	__u64 pos;               /* next position to read */
	__u64 events;            /* events returned */
	__u64 gaps;              /* positions skipped: lapped or overwritten */
};

void ring_reader_init(struct ring_reader *r, struct event_ring *ring);
/* Next event in *out: 1, or 0 when nothing (more) is ready. */
int ring_reader_next(struct ring_reader *r, struct ring_event *out);
/* After a drain: tell writers where we are and re-arm the wake-up. */
void ring_reader_rearm(struct ring_reader *r);

/* Without consuming: copy up to max of the newest complete events, oldest
 * first (what `top` shows).  Returns how many. */
int ring_peek_recent(const struct event_ring *ring, struct ring_event *out, int max);

/* One line describing ev (no newline), e.g. for `top` and -v logs. */
void ring_event_str(const struct ring_event *ev, char *buf, size_t len);

#endif

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "feed.h"
#include "log.h"

const char *const feed_ring_names[FEED__MAX] = {
	[FEED_CONN] = "connections", [FEED_PKT] = "packets",
};

/* What the callbacks need: the feed and which stream. */
static struct feed_cb {
	struct event_feed *f;
	enum feed_ring which;
} cbs[FEED__MAX];

static void take(struct event_feed *f, const struct ring_event *ev)
{
	char line[160];

	if (ev->kind < EV__MAX)
		f->by_kind[ev->kind]++;
	if (log_verbosity >= LOG_DEBUG && ev->kind != EV_PACKET) {
		ring_event_str(ev, line, sizeof(line));
		pr_debug("event: %s\n", line);
	}
}

/* Arena transport: one record per wake-up (the position that triggered
 * it); the events themselves are read from the arena by feed_drain(). */
static int on_wakeup_record(void *ctx, void *data, size_t size)
{
	struct feed_cb *cb = ctx;

	(void)data;
	(void)size;
	cb->f->wakeups[cb->which]++;
	return 0;
}

/* Ring buffer transport: the record is the event. */
static int on_event_record(void *ctx, void *data, size_t size)
{
	struct feed_cb *cb = ctx;
	struct ring_event ev;

	if (size < sizeof(ev))
		return 0;
	memcpy(&ev, data, sizeof(ev));
	cb->f->rd[cb->which].events++;
	take(cb->f, &ev);
	return 0;
}

int feed_add(struct event_feed *f, enum feed_ring which, const struct feed_source *src)
{
	ring_buffer_sample_fn fn = src->ring ? on_wakeup_record : on_event_record;
	int err;

	cbs[which] = (struct feed_cb){ f, which };
	if (!f->rb) {
		f->rb = ring_buffer__new(src->fd, fn, &cbs[which], NULL);
		if (!f->rb)
			return -errno;
	} else {
		err = ring_buffer__add(f->rb, src->fd, fn, &cbs[which]);
		if (err)
			return err;
	}
	f->in_arena[which] = src->ring != NULL;
	if (src->ring)
		ring_reader_init(&f->rd[which], src->ring);
	f->on[which] = true;
	return 0;
}

int feed_epoll_fd(const struct event_feed *f)
{
	return f->rb ? ring_buffer__epoll_fd(f->rb) : -1;
}

void feed_drain(struct event_feed *f)
{
	struct ring_event ev;
	int r;

	if (f->rb)
		ring_buffer__consume(f->rb); /* ring buffer transport's events */
	for (r = 0; r < FEED__MAX; r++) {
		__u64 before;

		if (!f->on[r] || !f->in_arena[r])
			continue;
		before = f->rd[r].pos;
		while (ring_reader_next(&f->rd[r], &ev) > 0)
			take(f, &ev);
		/* Re-arm only after progress: stuck behind an event still being
		 * written, re-arming would let every new event wake us again;
		 * the 1 s tick comes back for it instead. */
		if (f->rd[r].pos != before)
			ring_reader_rearm(&f->rd[r]);
	}
}

void feed_on_wakeup(struct event_feed *f)
{
	feed_drain(f);
}

__u64 feed_gaps(const struct event_feed *f, enum feed_ring which)
{
	return f->rd[which].gaps;
}

const char *feed_transport(const struct event_feed *f, enum feed_ring which)
{
	return !f->on[which] ? "off" : f->in_arena[which] ? "arena" : "ringbuf";
}

void feed_stop(struct event_feed *f)
{
	ring_buffer__free(f->rb);
	memset(f, 0, sizeof(*f));
}

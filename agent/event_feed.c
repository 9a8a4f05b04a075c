// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "event_feed.h"
#include "log.h"

const char *const feed_ring_names[FEED__MAX] = {
	[FEED_CONN] = "connections", [FEED_PKT] = "packets",
};

/* One record per wake-up (the position that triggered it): count it; the
 * events themselves are read from the arena by feed_drain(). */
static int on_wakeup_record(void *ctx, void *data, size_t size)
{
	(void)data;
	(void)size;
	(*(__u64 *)ctx)++;
	return 0;
}

int feed_add(struct event_feed *f, enum feed_ring which, struct event_ring *ring, int wake_fd)
{
	int err;

	if (!f->rb) {
		f->rb = ring_buffer__new(wake_fd, on_wakeup_record, &f->wakeups[which], NULL);
		if (!f->rb)
			return -errno;
	} else {
		err = ring_buffer__add(f->rb, wake_fd, on_wakeup_record, &f->wakeups[which]);
		if (err)
			return err;
	}
	ring_reader_init(&f->rd[which], ring);
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
	char line[160];
	int r;

	for (r = 0; r < FEED__MAX; r++) {
		__u64 before;

		if (!f->on[r])
			continue;
		before = f->rd[r].pos;
		while (ring_reader_next(&f->rd[r], &ev) > 0) {
			if (ev.kind < EV__MAX)
				f->by_kind[ev.kind]++;
			if (log_verbosity >= LOG_DEBUG && ev.kind != EV_PACKET) {
				ring_event_str(&ev, line, sizeof(line));
				pr_debug("event: %s\n", line);
			}
		}
		/* Re-arm only after progress: stuck behind an event still being
		 * written, re-arming would let every new event wake us again;
		 * the 1 s tick comes back for it instead. */
		if (f->rd[r].pos != before)
			ring_reader_rearm(&f->rd[r]);
	}
}

void feed_on_wakeup(struct event_feed *f)
{
	if (f->rb)
		ring_buffer__consume(f->rb);
	feed_drain(f);
}

void feed_stop(struct event_feed *f)
{
	ring_buffer__free(f->rb);
	memset(f, 0, sizeof(*f));
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The reader side of the arena event ring (agent/ring_reader.c) against
 * ring memory in the states a writer can leave it in: in order, being
 * written (odd seq), lapped by writers, overwritten while copied, never
 * written.  The BPF writer itself is tested on the kernel by
 * tests/prog/event_ring_lap.c.
 */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "ring_reader.h"

static struct event_ring *ring;

/* What event_ring_claim/publish (bpf/event_ring.h) leave behind. */
static void put(__u64 pos, __u64 tag)
{
	struct ring_slot *s = &ring->slots[pos & (RING_SLOTS - 1)];

	memset(&s->ev, 0, sizeof(s->ev));
	s->ev.kind = EV_CLOSED;
	s->ev.conn.cookie = tag;
	s->seq = 2 * pos + 2;
	if (ring->head < pos + 1)
		ring->head = pos + 1;
}

static void write_n(__u64 n)
{
	__u64 i, h = ring->head;

	for (i = 0; i < n; i++)
		put(h + i, h + i);
}

int main(void)
{
	struct ring_event ev, recent[8];
	struct ring_reader r;
	__u64 i, want;
	int n, got;

	ring = calloc(1, sizeof(*ring));
	if (!ring)
		return 1;

	/* empty ring: nothing, and the wake-up is armed at position 0 */
	ring->wake_sent = 1;
	ring_reader_init(&r, ring);
	CHECK(ring_reader_next(&r, &ev) == 0, "empty ring returned an event");
	CHECK(ring->wake_sent == 0 && ring->reader_pos == 0, "init did not re-arm the wake-up");

	/* in order, every event once */
	write_n(10);
	for (i = 0; i < 10; i++) {
		CHECK(ring_reader_next(&r, &ev) == 1, "event %llu missing", (unsigned long long)i);
		CHECK(ev.conn.cookie == i, "event %llu out of order: got %llu", (unsigned long long)i,
		      (unsigned long long)ev.conn.cookie);
	}
	CHECK(ring_reader_next(&r, &ev) == 0, "read past the head");
	CHECK(r.events == 10 && r.gaps == 0, "10 events, 0 gaps: got %llu, %llu",
	      (unsigned long long)r.events, (unsigned long long)r.gaps);

	/* a slot being written (odd seq) is not returned, nor anything after it */
	ring->head = 12;
	ring->slots[10].seq = 2 * 10 + 1;
	put(11, 11);
	ring->head = 12;
	CHECK(ring_reader_next(&r, &ev) == 0, "returned a slot still being written");
	ring->slots[10].seq = 2 * 10 + 2;
	ring->slots[10].ev.conn.cookie = 10;
	CHECK(ring_reader_next(&r, &ev) == 1 && ev.conn.cookie == 10, "published slot 10 not read");
	CHECK(ring_reader_next(&r, &ev) == 1 && ev.conn.cookie == 11, "slot 11 not read after 10");

	/* re-arm publishes the position */
	ring->wake_sent = 1;
	ring_reader_rearm(&r);
	CHECK(ring->reader_pos == 12 && ring->wake_sent == 0, "rearm: reader_pos %llu wake_sent %llu",
	      (unsigned long long)ring->reader_pos, (unsigned long long)ring->wake_sent);

	/* lapped: writers went 3 rings ahead.  The reader must not return the
	 * newer events under old positions; it jumps to head - SLOTS/2 and
	 * counts every skipped position. */
	write_n(3 * RING_SLOTS);
	want = ring->head - RING_SLOTS / 2;
	CHECK(ring_reader_next(&r, &ev) == 1, "nothing read after a lap");
	CHECK(ev.conn.cookie == want, "after the lap: got event %llu, want %llu",
	      (unsigned long long)ev.conn.cookie, (unsigned long long)want);
	CHECK(r.gaps == want - 12, "gaps %llu, want %llu", (unsigned long long)r.gaps,
	      (unsigned long long)(want - 12));
	for (n = 1; ring_reader_next(&r, &ev) == 1; n++)
		;
	CHECK(n == RING_SLOTS / 2, "read %d events after the lap, want %d", n, RING_SLOTS / 2);
	CHECK(r.events + r.gaps == ring->head, "events %llu + gaps %llu != written %llu",
	      (unsigned long long)r.events, (unsigned long long)r.gaps,
	      (unsigned long long)ring->head);

	/* overwritten while being copied looks like seq moving between the two
	 * loads: simulate with a slot whose seq already belongs to a later lap */
	i = ring->head;
	put(i, i);
	ring->slots[i & (RING_SLOTS - 1)].seq = 2 * (i + RING_SLOTS) + 1;
	ring->head = i + RING_SLOTS + 1;
	got = ring_reader_next(&r, &ev);
	CHECK(got == 0 || ev.conn.cookie != i, "returned an event whose slot was being rewritten");
	CHECK(r.gaps > want - 12, "the rewritten slot was not counted as a gap");

	/* peek: newest complete events, oldest first, without consuming */
	memset(ring, 0, sizeof(*ring));
	write_n(5);
	ring->slots[3].seq = 2 * 3 + 1; /* being rewritten */
	n = ring_peek_recent(ring, recent, 8);
	CHECK(n == 4, "peek: %d events, want 4 (one being written)", n);
	CHECK(n == 4 && recent[0].conn.cookie == 0 && recent[3].conn.cookie == 4,
	      "peek: wrong events or order");
	n = ring_peek_recent(ring, recent, 2);
	CHECK(n == 1 && recent[0].conn.cookie == 4, "peek 2: want only event 4 (3 is torn), got %d", n);
	free(ring);
	return CHECK_SUMMARY();
}

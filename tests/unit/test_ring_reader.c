// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The reader side of the arena event ring (agent/ring_reader.c) against
 * ring memory in the states a writer can leave it in: in order, being
 * written (odd seq), lapped by writers, overwritten while copied, never
 * written.  The BPF writer itself is tested on the kernel by
 * tests/prog/event_ring_lap.c.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
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

/*
 * A writer thread running the BPF writer's protocol (bpf/event_ring.h) as
 * fast as it can, against the reader: every event read must be whole (all
 * fields from one position) and in order, and read + skipped must add up to
 * what was written.  Without the reader's re-check after the copy, torn
 * events show up here within milliseconds.
 */
static volatile int stop_writer;

static void *writer(void *arg)
{
	struct event_ring *rg = arg;

	while (!stop_writer) {
		__u64 p = __atomic_fetch_add(&rg->head, 1, __ATOMIC_SEQ_CST), old;
		struct ring_slot *s = &rg->slots[p & (RING_SLOTS - 1)];

		old = __atomic_load_n(&s->seq, __ATOMIC_SEQ_CST);
		if ((old & 1) || old >= 2 * p + 1 ||
		    !__atomic_compare_exchange_n(&s->seq, &old, 2 * p + 1, false, __ATOMIC_SEQ_CST,
						 __ATOMIC_SEQ_CST)) {
			__atomic_fetch_add(&rg->drops, 1, __ATOMIC_SEQ_CST);
			continue;
		}
		__atomic_store_n(&s->ev.conn.cookie, p, __ATOMIC_RELAXED);
		__atomic_store_n(&s->ev.conn.peer_cookie, ~p, __ATOMIC_RELAXED);
		__atomic_store_n(&s->ev.conn.bytes, p * 3, __ATOMIC_RELAXED);
		__atomic_store_n(&s->ev.ts_ns, p * 7, __ATOMIC_RELAXED);
		old = 2 * p + 1;
		__atomic_compare_exchange_n(&s->seq, &old, 2 * p + 2, false, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST);
	}
	return NULL;
}

static void torture(void)
{
	struct timespec t0, t;
	struct ring_reader r;
	struct ring_event ev;
	__u64 last = 0, torn = 0, disorder = 0, events = 0;
	pthread_t th;
	bool any = false;

	memset(ring, 0, sizeof(*ring));
	ring_reader_init(&r, ring);
	stop_writer = 0;
	if (pthread_create(&th, NULL, writer, ring)) {
		CHECK(0, "pthread_create");
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		while (ring_reader_next(&r, &ev) == 1) {
			__u64 p = ev.conn.cookie;

			events++;
			if (ev.conn.peer_cookie != ~p || ev.conn.bytes != p * 3 || ev.ts_ns != p * 7)
				torn++;
			if (any && p <= last)
				disorder++;
			last = p;
			any = true;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < 500);
	stop_writer = 1;
	pthread_join(th, NULL);
	while (ring_reader_next(&r, &ev) == 1)
		events++;
	CHECK(events > 1000, "the reader got only %llu events", (unsigned long long)events);
	CHECK(torn == 0, "%llu torn events of %llu", (unsigned long long)torn,
	      (unsigned long long)events);
	CHECK(disorder == 0, "%llu events out of order", (unsigned long long)disorder);
	CHECK(r.events + r.gaps == ring->head, "read %llu + gaps %llu != written %llu",
	      (unsigned long long)r.events, (unsigned long long)r.gaps,
	      (unsigned long long)ring->head);
	printf("torture: %llu events read, %llu gaps, %llu writer drops\n",
	       (unsigned long long)r.events, (unsigned long long)r.gaps,
	       (unsigned long long)ring->drops);
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

	/* a slot held (odd) by an older writer: its own writer dropped the
	 * event; the reader skips that one position, and reads on */
	memset(ring, 0, sizeof(*ring));
	ring_reader_init(&r, ring);
	write_n(5);
	ring->slots[2].seq = 2 * 1 + 1; /* odd, and older than 2*2+1 */
	n = 0;
	while (ring_reader_next(&r, &ev) == 1)
		n++;
	CHECK(n == 4 && r.gaps == 1 && r.pos == 5,
	      "dropped position: read %d, gaps %llu, pos %llu (want 4, 1, 5)", n,
	      (unsigned long long)r.gaps, (unsigned long long)r.pos);

	/* never claimed but the writers are a whole ring past it: gone too */
	memset(ring, 0, sizeof(*ring));
	ring_reader_init(&r, ring);
	ring->head = RING_SLOTS + 2; /* position 0 claimed long ago, never written */
	for (i = 1; i < RING_SLOTS + 2; i++)
		put(i, i);
	got = ring_reader_next(&r, &ev);
	CHECK(got == 1 && r.gaps >= 1, "unwritten position behind a whole ring not skipped");
	CHECK(r.events + r.gaps <= ring->head, "read past the head");

	/* the same, but the writers are less than a ring past it: wait */
	memset(ring, 0, sizeof(*ring));
	ring_reader_init(&r, ring);
	put(1, 1);
	ring->head = 2;
	CHECK(ring_reader_next(&r, &ev) == 0 && r.gaps == 0,
	      "skipped a position whose writer may still claim it");

	torture();

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

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libFuzzer target: the event ring's reader (agent/ring_reader.c) on ring
 * memory as the BPF writers may leave it, and ring_event_str() on the
 * events it returns (kinds, reasons and frame kinds of any value).
 * Input: the writers' head (8 bytes), how far behind it the reader starts
 * (2 bytes), then slots: a position behind the head (2 bytes), its seq
 * relative to that position (1 byte: 2p+0..3, or 0 never written) and the
 * event's bytes.  The head is kept below 2^40: it counts events from 0, so
 * it never comes near the wrap of 2p+2 (2^63 events).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "ring_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct event_ring ring;
	static struct ring_event recent[RING_SLOTS];
	struct ring_reader r;
	struct ring_event ev;
	__u64 head, back, pos0, d;
	uint16_t b16;
	char line[160];
	int i, n, k;

	if (size < 10)
		return 0;
	memset(&ring, 0, sizeof(ring));
	memcpy(&head, data, 8);
	head &= (1ULL << 40) - 1;
	memcpy(&b16, data + 8, 2);
	back = b16 % (3 * RING_SLOTS);
	data += 10;
	size -= 10;
	ring.head = head;
	while (size >= 3 + sizeof(ev)) {
		memcpy(&b16, data, 2);
		d = b16 % (3 * RING_SLOTS);
		k = data[2];
		if (d < head) {
			struct ring_slot *s = &ring.slots[(head - 1 - d) & (RING_SLOTS - 1)];

			s->seq = k >= 4 ? 0 : 2 * (head - 1 - d) + k;
			memcpy(&s->ev, data + 3, sizeof(ev));
		}
		data += 3 + sizeof(ev);
		size -= 3 + sizeof(ev);
	}
	ring_reader_init(&r, &ring);
	r.pos = pos0 = head > back ? head - back : 0;
	for (n = 0; n <= RING_SLOTS && ring_reader_next(&r, &ev); n++) {
		ring_event_str(&ev, line, sizeof(line));
		if (!memchr(line, 0, sizeof(line)))
			abort();
	}
	/* every position is read or counted as a gap, each slot at most once */
	if (n > RING_SLOTS || r.events != (__u64)n || r.pos - pos0 != r.events + r.gaps ||
	    r.pos > head + RING_SLOTS)
		abort();
	ring_reader_rearm(&r);
	if (ring.reader_pos != r.pos)
		abort();
	n = ring_peek_recent(&ring, recent, 1 + (int)(head % RING_SLOTS));
	if (n < 0 || n > RING_SLOTS / 2)
		abort();
	for (i = 0; i < n; i++)
		ring_event_str(&recent[i], line, sizeof(line));
	return 0;
}

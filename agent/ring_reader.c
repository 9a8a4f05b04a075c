// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Reader of the arena event ring; the protocol is described once, in
 * bpf/event_ring.h.  The ring is the arena mapping itself: events are
 * copied straight out of shared memory, with a seqlock check around each
 * copy because writers on other CPUs may be overwriting the slot.
 */
#include <stdio.h>
#include <string.h>
#include "accel.h"     /* fallback_names, reset_names */
#include "netaddr.h"
#include "ring_reader.h"
#include "telemetry.h" /* frame_kind_names */

/* Copy the event at position p: 1 copied, 0 not written yet, -1 gone
 * (lapped, dropped by its writer, or overwritten while we copied).  The
 * cases are listed in bpf/event_ring.h. */
static int slot_read(const struct event_ring *ring, __u64 p, struct ring_event *out)
{
	const struct ring_slot *s = &ring->slots[p & (RING_SLOTS - 1)];
	__u64 want = 2 * p + 2, before, after, head;

	before = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
	if (before == want - 1)
		return 0;
	if (before > want || (before & 1))
		return -1; /* lapped, or held by an older writer: p's dropped */
	if (before < want) {
		/* p's writer hasn't claimed it yet, unless the writers are a
		 * whole ring past p: then it was lapped before its claim */
		head = __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE);
		return head > p + RING_SLOTS ? -1 : 0;
	}
	memcpy(out, (const void *)&s->ev, sizeof(*out));
	/* the copy must complete before seq is checked again */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	after = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);
	return after == want ? 1 : -1;
}

void ring_reader_init(struct ring_reader *r, struct event_ring *ring)
{
	memset(r, 0, sizeof(*r));
	r->ring = ring;
	r->pos = __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE);
	ring_reader_rearm(r);
}

int ring_reader_next(struct ring_reader *r, struct ring_event *out)
{
	__u64 head, next;
	int rc;

	for (;;) {
		rc = slot_read(r->ring, r->pos, out);
		if (rc > 0) {
			r->pos++;
			r->events++;
			return 1;
		}
		if (rc == 0)
			return 0;
		/* Gone.  If lapped, jump to half a ring behind the writers,
		 * so the next reads don't race them again at once; count
		 * every position skipped. */
		head = __atomic_load_n(&r->ring->head, __ATOMIC_ACQUIRE);
		next = head > RING_SLOTS / 2 ? head - RING_SLOTS / 2 : 0;
		if (next <= r->pos || head <= r->pos + RING_SLOTS)
			next = r->pos + 1; /* not lapped: just this one */
		r->gaps += next - r->pos;
		r->pos = next;
	}
}

void ring_reader_rearm(struct ring_reader *r)
{
	__atomic_store_n(&r->ring->reader_pos, r->pos, __ATOMIC_RELEASE);
	__atomic_store_n(&r->ring->wake_sent, 0, __ATOMIC_RELEASE);
}

int ring_peek_recent(const struct event_ring *ring, struct ring_event *out, int max)
{
	__u64 head = __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE), p, first;
	int n = 0;

	if (max <= 0)
		return 0;
	if (max > RING_SLOTS / 2)
		max = RING_SLOTS / 2;
	first = head > (__u64)max ? head - max : 0;
	for (p = first; p < head; p++)
		if (slot_read(ring, p, &out[n]) > 0)
			n++;
	return n;
}

void ring_event_str(const struct ring_event *ev, char *buf, size_t len)
{
	char addr[64];

	switch (ev->kind) {
	case EV_PACKET:
		addr16_str(ev->pkt.saddr, addr, sizeof(addr));
		snprintf(buf, len, "packet   %-6s %5u B from %s (ifindex %u)",
			 ev->pkt.frame_kind < FK__MAX ? frame_kind_names[ev->pkt.frame_kind] : "?",
			 ev->pkt.len, ev->pkt.frame_kind <= FK_IPV6 ? addr : "-", ev->pkt.ifindex);
		break;
	case EV_PAIRED:
		snprintf(buf, len, "paired   port %-5u sk %llu <-> %llu", ev->conn.service_port,
			 (unsigned long long)ev->conn.cookie,
			 (unsigned long long)ev->conn.peer_cookie);
		break;
	case EV_FALLBACK:
		snprintf(buf, len, "fallback port %-5u sk %llu: %s", ev->conn.service_port,
			 (unsigned long long)ev->conn.cookie,
			 ev->conn.reason < FB__MAX ? fallback_names[ev->conn.reason] : "?");
		break;
	case EV_RESET:
		snprintf(buf, len, "reset    port %-5u sk %llu <-> %llu: %s", ev->conn.service_port,
			 (unsigned long long)ev->conn.cookie,
			 (unsigned long long)ev->conn.peer_cookie,
			 ev->conn.reason < RS__MAX ? reset_names[ev->conn.reason] : "?");
		break;
	case EV_CLOSED:
		snprintf(buf, len, "closed   port %-5u sk %llu: %llu B redirected, %u sends",
			 ev->conn.service_port, (unsigned long long)ev->conn.cookie,
			 (unsigned long long)ev->conn.bytes, ev->conn.msgs);
		break;
	default:
		snprintf(buf, len, "event kind %u", ev->kind);
	}
}

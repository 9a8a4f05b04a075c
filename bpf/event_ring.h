/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Event ring in a BPF arena: the one definition shared by the BPF writers
 * (bpf/telemetry.bpf.c, bpf/accel.bpf.c, bench/mapcost) and the agent's
 * reader (agent/ring_reader.c).
 *
 * The ring is plain shared memory (BPF_MAP_TYPE_ARENA, mmap()ed by libbpf
 * into the agent: the reader copies events straight out of the slots, no
 * syscall per event).  An arena has no ordering and no wake-up of its own
 * (kernel/bpf/arena.c), so:
 *
 * Writing (any number of programs on any CPUs, lock-free):
 *   pos = fetch_add(head, 1)                  claim a unique position
 *   slot = slots[pos % SLOTS]
 *   cmpxchg(slot->seq, old -> 2*pos + 1)      only if old is even and older
 *   fill slot->ev                             than 2*pos + 1; else drop it
 *   cmpxchg(slot->seq, 2*pos + 1 -> 2*pos + 2)
 * A writer owns a slot only from its odd mark to its even one.  The claim
 * checks the slot: a writer preempted long enough to be lapped (sk_msg and
 * sock_ops run in task context) finds a newer mark and drops its event
 * rather than scribble over a newer one; a writer finding the slot still
 * held (odd) by an older, preempted writer drops its event too.  The
 * atomics are fully ordered in the BPF memory model
 * (Documentation/bpf/standardization/instruction-set.rst), so no payload
 * store becomes visible outside the odd/even brackets on any arch.
 *
 * Reading (one consuming reader, the agent; any number of peeking readers,
 * e.g. `ngx-sockmap top`), seqlock style: at position r the reader wants
 * seq == 2r + 2, copies the event, and checks seq again.
 *   seq == 2r + 2   the event, if seq is unchanged after the copy
 *   seq == 2r + 1   being written: stop, come back later
 *   seq >  2r + 2   the writers lapped the reader: r is gone
 *   seq odd, older  held by an older writer, so r's writer dropped it: gone
 *   seq even, older r not written yet: stop, unless head is a whole ring
 *                   past r (its writer was lapped before it claimed): gone
 * A gone event is skipped and counted as a gap; after a lap the reader
 * jumps to (head - SLOTS/2).  So what a reader sees is a subsequence of the
 * events in order, plus an exact count of what it missed; never a torn
 * event.
 *
 * Wake-ups: a BPF ring buffer (one 8-byte record per wake-up, with the
 * position that triggered it).  A writer wakes the reader only when at
 * least RING_WAKE_BATCH events are waiting since the reader's last
 * reader_pos and no wake-up is outstanding (wake_sent, cleared by the
 * reader after it drains).  Under load that is one wake-up per
 * RING_WAKE_BATCH events or more; an idle ring wakes nobody, and the agent
 * drains stragglers on its once-a-second tick.
 *
 * Without an arena (before 6.9, or where a policy refuses arena maps) the
 * events go to a BPF ring buffer, batched the same way (ringbuf_wake_flags
 * below): a ring buffer's own wake-up (flags 0) fires whenever the reader
 * had caught up (kernel/bpf/ringbuf.c bpf_ringbuf_commit), which for a
 * reader that drains at once is nearly every event: 10,000 agent wake-ups
 * a second under a connection churn, a fifth of a CPU, and a self-IPI
 * in the writer for each (irq_work).
 */
#ifndef NGX_SOCKMAP_EVENT_RING_H
#define NGX_SOCKMAP_EVENT_RING_H

#ifndef __bpf__
#include <linux/types.h>
#endif
#include "names.h"

#define RING_SLOTS      1024 /* power of two */
#define RING_WAKE_BATCH 64
/* Ring buffer transport: a writer that finds a batch waiting wakes the
 * reader unless another did within this gap (the reader is on its way). */
#define RINGBUF_WAKE_GAP_NS 1000000ULL
/* Arena pages for one ring (128 B header + 64 B slots), with room to spare. */
#define RING_ARENA_PAGES 32

#define RING_EVENT_KINDS(X)                                                     \
	X(EV_NONE, "none")                                                      \
	X(EV_PACKET, "packet")     /* a sampled XDP frame (pkt) */              \
	X(EV_PAIRED, "paired")     /* two local sockets paired (conn) */        \
	X(EV_FALLBACK, "fallback") /* a tracked socket left or never got the    \
				    * redirect path (conn.reason) */            \
	X(EV_CLOSED, "closed")     /* a tracked socket closed (conn.bytes:      \
				    * redirected by it) */                      \
	X(EV_RESET, "reset")       /* the data plane asked for the connection   \
				    * to be ended (conn.reason: reset_reason) */

enum ring_event_kind { RING_EVENT_KINDS(NAMES_ENUM) EV__MAX };

#ifndef __bpf__
static const char *const ring_event_kind_names[EV__MAX] = { RING_EVENT_KINDS(NAMES_STR) };
#endif

struct ring_event {
	__u64 ts_ns;   /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u16 kind;    /* enum ring_event_kind */
	__u16 cpu;
	__u32 _pad;
	union {
		struct {
			__u32 saddr[4];  /* as struct src_key: v4-mapped, network order */
			__u32 len;       /* frame length */
			__u32 ifindex;
			__u16 frame_kind; /* enum frame_kind */
			__u16 _pad[3];
		} pkt;
		struct {
			__u64 cookie;      /* socket cookie */
			__u64 peer_cookie; /* EV_PAIRED: the other end */
			__u64 bytes;       /* EV_CLOSED: bytes it redirected */
			__u32 msgs;        /* EV_CLOSED: sends it made */
			__u16 service_port;
			__u8 reason;       /* EV_FALLBACK: fallback_reason; EV_RESET: reset_reason */
			__u8 _pad;
		} conn;
	};
};

/* The ring buffer transport's wake-up state (ringbuf_wake_flags): BPF's
 * alone, the agent never reads it. */
struct ringbuf_wake {
	__u64 last_ns; /* bpf_ktime_get_ns() of the last forced wake-up */
};

struct ring_slot {
	__u64 seq;  /* 0 never written; 2p+1 being written; 2p+2 holds p */
	struct ring_event ev;
	__u64 _pad; /* 64 B: one cache line per slot, writers on two CPUs
		     * don't share one */
};

struct event_ring {
	__u64 head;        /* next position to claim; written by BPF only */
	__u64 _pad1[7];    /* head, claimed on every event, on its own line */
	__u64 reader_pos;  /* where the consuming reader is; written by it */
	__u64 wake_sent;   /* 1 while a wake-up is outstanding */
	__u64 drops;       /* events writers dropped (see above) */
	__u64 _pad2[5];
	struct ring_slot slots[RING_SLOTS];
};

#ifdef __bpf__
#ifndef __arena
#define __arena __attribute__((address_space(1)))
#endif

/*
 * Why the explicit (struct ring_slot *) casts: they are the BPF
 * addr_space_cast from the arena's user address to the kernel's view, the
 * one register the verifier marks as an arena pointer.  Left to clang 19,
 * it inserted that cast for some accesses of an inlined writer and
 * re-derived others from the global's plain user address, which the
 * verifier rejects ("R7 invalid mem access 'scalar'").  barrier_var()
 * keeps clang from re-deriving the cast pointer.
 */
static __always_inline struct ring_slot *event_ring_slot(struct event_ring __arena *ring, __u64 pos)
{
	struct ring_slot *slot = (struct ring_slot *)&ring->slots[pos & (RING_SLOTS - 1)];

	barrier_var(slot);
	return slot;
}

/*
 * Claim the next position and, if its slot is ours to take, mark it being
 * written: returns the event to fill, then call event_ring_publish(), or
 * NULL when the event is dropped (see above).  kind, ts_ns and cpu are set
 * here.
 */
static __always_inline struct ring_event *
event_ring_claim(struct event_ring __arena *ring, __u64 *pos, __u16 kind)
{
	__u64 p = __sync_fetch_and_add(&ring->head, 1), old;
	struct ring_slot *slot = event_ring_slot(ring, p);

	old = slot->seq;
	if ((old & 1) || old >= 2 * p + 1 ||
	    __sync_val_compare_and_swap(&slot->seq, old, 2 * p + 1) != old) {
		__sync_fetch_and_add(&ring->drops, 1);
		return NULL;
	}
	slot->ev.ts_ns = bpf_ktime_get_ns();
	slot->ev.kind = kind;
	slot->ev.cpu = bpf_get_smp_processor_id();
	*pos = p;
	return &slot->ev;
}

/* Publish the slot claimed at pos; wake the reader if a batch is waiting. */
static __always_inline void event_ring_publish(struct event_ring __arena *ring, __u64 pos,
					       void *wakeups)
{
	struct ring_slot *slot = event_ring_slot(ring, pos);

	__sync_val_compare_and_swap(&slot->seq, 2 * pos + 1, 2 * pos + 2);
	/* signed: a straggler may publish below reader_pos */
	if ((__s64)(pos + 1 - ring->reader_pos) >= RING_WAKE_BATCH && !ring->wake_sent &&
	    __sync_lock_test_and_set(&ring->wake_sent, 1) == 0 &&
	    bpf_ringbuf_output(wakeups, &pos, sizeof(pos), 0))
		ring->wake_sent = 0; /* no room for the record: let the next one try */
}
/*
 * The ring buffer transport's wake-up flags: none until RING_WAKE_BATCH
 * events wait unread, then one writer wakes the reader (at most one per
 * RINGBUF_WAKE_GAP_NS, so a reader slow to run is woken again, never
 * flooded); the agent's tick drains what waits below a batch.  A record
 * is the event and the ring buffer's 8-byte header, rounded to 8
 * (kernel/bpf/ringbuf.c __bpf_ringbuf_reserve).  @wake: a one-entry ARRAY
 * of struct ringbuf_wake, the object's own.
 */
#define RINGBUF_EVENT_BYTES ((sizeof(struct ring_event) + 8 + 7) & ~7ULL)

static __always_inline __u64 ringbuf_wake_flags(void *events_rb, void *wake, __u64 now)
{
	struct ringbuf_wake *w;
	__u32 zero = 0;
	__u64 last;

	if (bpf_ringbuf_query(events_rb, BPF_RB_AVAIL_DATA) + RINGBUF_EVENT_BYTES <
	    RING_WAKE_BATCH * RINGBUF_EVENT_BYTES)
		return BPF_RB_NO_WAKEUP;
	w = bpf_map_lookup_elem(wake, &zero);
	if (!w)
		return 0; /* the ring buffer's own rule */
	last = w->last_ns;
	if (now - last < RINGBUF_WAKE_GAP_NS ||
	    __sync_val_compare_and_swap(&w->last_ns, last, now) != last)
		return BPF_RB_NO_WAKEUP;
	return BPF_RB_FORCE_WAKEUP;
}

/*
 * Where an object's events go, chosen at load from what the kernel has
 * (the agent sets events_in_arena): the arena ring above (6.9+, read in
 * place, batched wake-ups), or, on older kernels, a BPF ring buffer (one
 * copy per event, batched wake-ups too; the agent reads it the same way
 * through feed.c).  ev is filled by the caller; ts_ns and cpu are set
 * here.  A ring buffer with no room counts the event in *rb_drops (the
 * reader's gaps).
 */
static __always_inline void event_emit(struct event_ring __arena *ring, struct ring_event *ev,
				       bool in_arena, void *wakeups, void *events_rb,
				       void *rb_wake, __u64 *rb_drops)
{
	struct ring_event *slot;
	__u64 pos;

	ev->ts_ns = bpf_ktime_get_ns();
	ev->cpu = bpf_get_smp_processor_id();
	if (!in_arena) {
		if (bpf_ringbuf_output(events_rb, ev, sizeof(*ev),
				       ringbuf_wake_flags(events_rb, rb_wake, ev->ts_ns)))
			__sync_fetch_and_add(rb_drops, 1);
		return;
	}
	slot = event_ring_claim(ring, &pos, ev->kind);
	if (!slot)
		return;
	slot->ts_ns = ev->ts_ns;
	slot->cpu = ev->cpu;
	slot->conn = ev->conn; /* the union's larger member: pkt too */
	event_ring_publish(ring, pos, wakeups);
}
#endif /* __bpf__ */

#endif /* NGX_SOCKMAP_EVENT_RING_H */

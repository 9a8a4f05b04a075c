// SPDX-License-Identifier: GPL-2.0
/*
 * XDP observer: per-source packet and byte counters.  Always XDP_PASS: it
 * only watches.  Runs with BH disabled on one CPU (net/core/dev.c,
 * do_xdp_generic / the driver's NAPI poll), so a plain += on a per-CPU slot
 * can't be interleaved with another run on that CPU: no atomics needed.
 */
#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include "telemetry.h"
#include "pkt_parse.h"

char LICENSE[] SEC("license") = "GPL";

/* One frame in sample_every (a power of two; 0: none) goes into the event
 * ring, chosen from the per-CPU frame count we keep anyway: no extra map
 * lookup or random number per frame.  Set by the agent before load. */
const volatile __u32 sample_every = 64;

/* The arena behind `ring`: libbpf creates it, places the __arena globals
 * in it and mmap()s it for the agent (skel->arena).  Its own arena, not
 * the data plane's: a packet flood must not lap connection events, and
 * libbpf copies an object's arena globals into the arena at load, so two
 * objects can't share one live arena (libbpf.c, bpf_object__create_maps). */
struct {
	__uint(type, BPF_MAP_TYPE_ARENA);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, RING_ARENA_PAGES);
} pkt_arena SEC(".maps");

struct event_ring __arena ring;

/* Wake-ups for the agent; see event_ring.h for the batching. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} ring_wakeups SEC(".maps");

/* Where the kernel has no BPF arena (before 6.9): samples go to this ring
 * buffer instead (see event_emit). */
const volatile __u32 events_in_arena = 1;
__u64 events_dropped;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} pkt_events SEC(".maps");

/* pkt_events' batched wake-ups (event_ring.h, ringbuf_wake_flags) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ringbuf_wake);
} pkt_events_wake SEC(".maps");


struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, SRC_STATS_MAX);
	__type(key, struct src_key);
	__type(value, struct src_counters);
} src_stats SEC(".maps");

/* Per interface (ingress ifindex): the agent inserts each interface it
 * attaches to, so the packet path only looks up. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, XDP_MAX_IFACES);
	__type(key, __u32);
	__type(value, struct xdp_totals);
} xdp_totals SEC(".maps");

static __always_inline void sample_frame(struct xdp_md *ctx, enum frame_kind kind, __u64 len,
					 const struct src_key *key)
{
	struct ring_event ev = {
		.kind = EV_PACKET,
		.pkt = { .len = len, .ifindex = ctx->ingress_ifindex, .frame_kind = kind },
	};

	if (key) {
		ev.pkt.saddr[0] = key->addr[0];
		ev.pkt.saddr[1] = key->addr[1];
		ev.pkt.saddr[2] = key->addr[2];
		ev.pkt.saddr[3] = key->addr[3];
	}
	event_emit(&ring, &ev, events_in_arena, &ring_wakeups, &pkt_events, &pkt_events_wake,
		   &events_dropped);
}

/* key: the frame's source for IP frames, NULL for the others */
static __always_inline int count_kind(struct xdp_md *ctx, enum frame_kind kind, __u64 len,
				      const struct src_key *key)
{
	__u32 ifindex = ctx->ingress_ifindex;
	struct xdp_totals *t = bpf_map_lookup_elem(&xdp_totals, &ifindex);

	if (!t) { /* not pre-inserted (test runs): insert once */
		struct xdp_totals zero = {};

		bpf_map_update_elem(&xdp_totals, &ifindex, &zero, BPF_NOEXIST);
		t = bpf_map_lookup_elem(&xdp_totals, &ifindex);
	}
	if (t && kind < FK__MAX) {
		t->packets[kind]++;
		t->bytes[kind] += len;
		if (sample_every && !(t->packets[kind] & (sample_every - 1)))
			sample_frame(ctx, kind, len, key);
	}
	return XDP_PASS;
}

static __always_inline void count_source(const struct src_key *key, __u64 len)
{
	struct src_counters *c, init = { .packets = 1, .bytes = len };

	/* Look up first: an update takes the bucket lock, a lookup doesn't. */
	c = bpf_map_lookup_elem(&src_stats, key);
	if (c) {
		c->packets++;
		c->bytes += len;
		return;
	}
	bpf_map_update_elem(&src_stats, key, &init, BPF_NOEXIST);
}

SEC("xdp")
int xdp_count(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u64 len = end - data; /* before the parse: see pkt_parse.h's users */
	struct src_key key = {};
	enum frame_kind kind = pkt_parse(data, end, &key);

	if (kind != FK_IPV4 && kind != FK_IPV6)
		return count_kind(ctx, kind, len, NULL);
	count_source(&key, len);
	return count_kind(ctx, kind, len, &key);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * bench/maps: the per-packet cost of the telemetry map choices, measured
 * with BPF_PROG_TEST_RUN (bench/mapcost/cost.c drives it).
 *
 * Every program does the same first step, prep(): the project's parser
 * (bpf/pkt_parse.h, the one xdp_count uses) on the same frame, then a
 * synthetic source.  The synthetic source exists because test_run with
 * `repeat` feeds the same frame every time: to make a working set of
 * src_span sources, each run replaces the low bits of the parsed address
 * with a random index below src_span.  The random number (a per-CPU
 * prandom state, no shared cache line) costs the same in every program,
 * the baseline included, so "net" = program - baseline is the cost of the
 * map or ring alone.
 */
#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include "telemetry.h"
#include "pkt_parse.h"
#include "event_ring.h"

char LICENSE[] SEC("license") = "GPL";

/* Working set: sources 0 .. src_span-1 (set before load). */
const volatile __u32 src_span = 1;

/* The three per-source maps under test, sized like src_stats in
 * bpf/telemetry.bpf.c (cost.c can change max_entries before load).  All
 * preallocated (no BPF_F_NO_PREALLOC), as src_stats is. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SRC_STATS_MAX);
	__type(key, struct src_key);
	__type(value, struct src_counters);
} hash_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, SRC_STATS_MAX);
	__type(key, struct src_key);
	__type(value, struct src_counters);
} percpu_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, SRC_STATS_MAX);
	__type(key, struct src_key);
	__type(value, struct src_counters);
} lru_stats SEC(".maps");

/* The same with BPF_F_NO_COMMON_LRU: an LRU list per CPU (each holding
 * max_entries / CPUs), so that a miss never takes the one shared LRU lock
 * (kernel/bpf/bpf_lru_list.c, bpf_common_lru_pop_free vs
 * bpf_percpu_lru_pop_free).  Not what xdp_count uses: an alternative. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_COMMON_LRU);
	__uint(max_entries, SRC_STATS_MAX);
	__type(key, struct src_key);
	__type(value, struct src_counters);
} lru_nc_stats SEC(".maps");

/* A ring buffer record per packet.  cost.c sizes it before load so that a
 * whole measured run fits, and drains it between runs: a full ring would
 * measure the cheap failure path instead. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} sample_rb SEC(".maps");

/* Reservations that failed anyway: reported, a nonzero count flags the row. */
__u64 rb_drops;

/* The arena ring of bpf/event_ring.h, in an arena of our own (as
 * bpf/telemetry.bpf.c has its own). */
struct {
	__uint(type, BPF_MAP_TYPE_ARENA);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, RING_ARENA_PAGES);
} arena SEC(".maps");

struct event_ring __arena ring;

/* The ring's wake-ups.  Nobody reads in the benchmark: after the first
 * RING_WAKE_BATCH events a wake-up stays outstanding, which is the state
 * of a loaded ring between two drains of the agent (one check, no record). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} ring_wakeups SEC(".maps");

/* Parse, then give the frame one of src_span sources.  Returns the frame
 * kind (FK_IPV4/FK_IPV6 with *key set, the benchmark frames always are). */
static __always_inline enum frame_kind prep(struct xdp_md *ctx, struct src_key *key, __u64 *len)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	enum frame_kind kind;

	/* the length first, as xdp_count does: computed after the parse,
	 * clang re-read ctx->data_end through a moved ctx pointer on some
	 * paths, which the verifier refuses ("dereference of modified ctx") */
	*len = end - data;
	kind = pkt_parse(data, end, key);
	if (kind == FK_IPV4 || kind == FK_IPV6)
		key->addr[3] ^= bpf_htonl(bpf_get_prandom_u32() % src_span);
	return kind;
}

#define IS_IP(k) ((k) == FK_IPV4 || (k) == FK_IPV6)

SEC("xdp")
int xdp_baseline(struct xdp_md *ctx)
{
	struct src_key key = {};
	__u64 len;

	prep(ctx, &key, &len);
	/* keep the parse: the compiler must not drop stores nobody reads */
	asm volatile("" : : "r"(&key), "r"(len) : "memory");
	return XDP_PASS;
}

/* Shared map, so concurrent CPUs need atomic adds (and bounce the line). */
SEC("xdp")
int xdp_hash_atomic(struct xdp_md *ctx)
{
	struct src_key key = {};
	struct src_counters *c;
	__u64 len;

	if (!IS_IP(prep(ctx, &key, &len)))
		return XDP_PASS;
	c = bpf_map_lookup_elem(&hash_stats, &key);
	if (c) {
		__sync_fetch_and_add(&c->packets, 1);
		__sync_fetch_and_add(&c->bytes, len);
	} else {
		struct src_counters init = { .packets = 1, .bytes = len };

		/* lookup first: an update takes the bucket lock */
		bpf_map_update_elem(&hash_stats, &key, &init, BPF_NOEXIST);
	}
	return XDP_PASS;
}

/* Per-CPU value: plain adds, as count_source() in bpf/telemetry.bpf.c. */
#define COUNT_PERCPU(map)                                                        \
	do {                                                                     \
		struct src_counters *c = bpf_map_lookup_elem(&map, &key);        \
		if (c) {                                                         \
			c->packets++;                                            \
			c->bytes += len;                                         \
		} else {                                                         \
			struct src_counters init = { .packets = 1, .bytes = len }; \
			bpf_map_update_elem(&map, &key, &init, BPF_NOEXIST);     \
		}                                                                \
	} while (0)

SEC("xdp")
int xdp_percpu_hash(struct xdp_md *ctx)
{
	struct src_key key = {};
	__u64 len;

	if (IS_IP(prep(ctx, &key, &len)))
		COUNT_PERCPU(percpu_stats);
	return XDP_PASS;
}

SEC("xdp")
int xdp_lru_percpu_hash(struct xdp_md *ctx)
{
	struct src_key key = {};
	__u64 len;

	if (IS_IP(prep(ctx, &key, &len)))
		COUNT_PERCPU(lru_stats);
	return XDP_PASS;
}

SEC("xdp")
int xdp_lru_percpu_nocommon(struct xdp_md *ctx)
{
	struct src_key key = {};
	__u64 len;

	if (IS_IP(prep(ctx, &key, &len)))
		COUNT_PERCPU(lru_nc_stats);
	return XDP_PASS;
}

/* Not a map: the clock read both rings' events carry (ts_ns), to tell how
 * much of a ring's cost is the clock (kvm-clock in a VM, TSC on metal). */
SEC("xdp")
int xdp_clock(struct xdp_md *ctx)
{
	struct src_key key = {};
	__u64 len, t;

	prep(ctx, &key, &len);
	t = bpf_ktime_get_ns();
	asm volatile("" : : "r"(&key), "r"(len), "r"(t) : "memory");
	return XDP_PASS;
}

/* One event per packet into the arena ring, filled as sample_frame() in
 * bpf/telemetry.bpf.c fills it. */
SEC("xdp")
int xdp_arena_ring(struct xdp_md *ctx)
{
	struct ring_event *ev;
	struct src_key key = {};
	enum frame_kind kind;
	__u64 len, pos;

	kind = prep(ctx, &key, &len);
	ev = event_ring_claim(&ring, &pos, EV_PACKET);
	if (!ev)
		return XDP_PASS;
	ev->pkt.saddr[0] = key.addr[0];
	ev->pkt.saddr[1] = key.addr[1];
	ev->pkt.saddr[2] = key.addr[2];
	ev->pkt.saddr[3] = key.addr[3];
	ev->pkt.len = len;
	ev->pkt.ifindex = ctx->ingress_ifindex;
	ev->pkt.frame_kind = kind;
	event_ring_publish(&ring, pos, &ring_wakeups);
	return XDP_PASS;
}

/* The same event as a ring buffer record per packet (reserve + submit:
 * no copy through the stack).  Flags 0: the kernel wakes a waiting reader
 * only when it had caught up (kernel/bpf/ringbuf.c, bpf_ringbuf_commit). */
SEC("xdp")
int xdp_ringbuf(struct xdp_md *ctx)
{
	struct ring_event *ev;
	struct src_key key = {};
	enum frame_kind kind;
	__u64 len;

	kind = prep(ctx, &key, &len);
	ev = bpf_ringbuf_reserve(&sample_rb, sizeof(*ev), 0);
	if (!ev) {
		__sync_fetch_and_add(&rb_drops, 1);
		return XDP_PASS;
	}
	ev->ts_ns = bpf_ktime_get_ns();
	ev->kind = EV_PACKET;
	ev->cpu = bpf_get_smp_processor_id();
	ev->_pad = 0;
	ev->pkt.saddr[0] = key.addr[0];
	ev->pkt.saddr[1] = key.addr[1];
	ev->pkt.saddr[2] = key.addr[2];
	ev->pkt.saddr[3] = key.addr[3];
	ev->pkt.len = len;
	ev->pkt.ifindex = ctx->ingress_ifindex;
	ev->pkt.frame_kind = kind;
	ev->pkt._pad[0] = ev->pkt._pad[1] = ev->pkt._pad[2] = 0;
	bpf_ringbuf_submit(ev, 0);
	return XDP_PASS;
}

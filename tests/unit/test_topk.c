// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Sliding-window top talkers (agent/topk.c) against a known traffic mix
 * fed as per-second snapshots of cumulative per-source counters, the way
 * topk_tick() reads them from the LRU per-CPU map.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "topk.h"

#define NSRC 50

static __u64 cum_pkts[NSRC], cum_bytes[NSRC];
static int present[NSRC];

static struct src_key key_of(int i)
{
	struct src_key k = { .addr = { 0, 0, htonl(0xffff), htonl(0x0a000000 | (i + 1)) } };

	return k;
}

/* push a snapshot of every present source (unsorted on purpose) */
static void snapshot(struct topk_window *w)
{
	struct src_rank *v = calloc(NSRC, sizeof(*v));
	int i, n = 0;

	for (i = NSRC - 1; i >= 0; i--) {
		if (!present[i])
			continue;
		v[n].key = key_of(i);
		v[n].packets = cum_pkts[i];
		v[n].bytes = cum_bytes[i];
		n++;
	}
	topk_push(w, v, n);
}

static int rank_of(const struct src_rank *r, int n, int src)
{
	struct src_key k = key_of(src);
	int i;

	for (i = 0; i < n; i++)
		if (!memcmp(&r[i].key, &k, sizeof(k)))
			return i;
	return -1;
}

int main(void)
{
	struct topk_window w;
	struct src_rank top[5];
	int i, t, n;

	CHECK(topk_init(&w, 0) != 0 && topk_init(&w, TOPK_WINDOW_MAX + 1) != 0,
	      "bad window sizes accepted");
	CHECK(topk_init(&w, 3) == 0, "window 3 refused");
	snapshot(&w);
	CHECK(topk_top(&w, false, top, 5) == 0, "one snapshot: no window yet");

	/* t = 1..3: source i sends i packets of 100 B per second, and source
	 * 49 sends few but huge frames (the bytes ranking differs) */
	for (i = 0; i < NSRC; i++)
		present[i] = 1;
	for (t = 1; t <= 3; t++) {
		for (i = 0; i < NSRC; i++) {
			cum_pkts[i] += i;
			cum_bytes[i] += i * 100ULL;
		}
		cum_pkts[49] -= 49 - 1;  /* 1 packet/s ... */
		cum_bytes[49] += 1000000; /* ... of 1 MB */
		snapshot(&w);
	}
	n = topk_top(&w, false, top, 5);
	CHECK(n == 5, "top 5 by packets: got %d", n);
	CHECK(rank_of(top, n, 48) == 0 && top[0].packets == 3 * 48,
	      "by packets: source 48 first with 144 packets");
	CHECK(rank_of(top, n, 44) == 4, "by packets: source 44 fifth");
	CHECK(rank_of(top, n, 49) < 0, "by packets: the 1-packet/s source ranked");
	n = topk_top(&w, true, top, 5);
	CHECK(rank_of(top, n, 49) == 0 && top[0].bytes == 3 * 1000000ULL + 3 * 4900,
	      "by bytes: source 49 first with all its bytes");
	CHECK(topk_span(&w) == 3, "span %d, want 3", topk_span(&w));

	/* t = 4..6: only source 0 talks (the others idle): the window slides
	 * past the old traffic and source 0 is the only one left */
	for (t = 4; t <= 6; t++) {
		cum_pkts[0] += 1000;
		cum_bytes[0] += 64000;
		snapshot(&w);
	}
	n = topk_top(&w, false, top, 5);
	CHECK(n == 1 && rank_of(top, n, 0) == 0 && top[0].packets == 3000,
	      "after the window slid: only source 0 with 3000 packets (got %d entries)", n);

	/* eviction: source 0 vanishes from the LRU and comes back with a
	 * fresh, smaller total: counted from zero, never negative */
	present[0] = 0;
	snapshot(&w);
	present[0] = 1;
	cum_pkts[0] = 7;
	cum_bytes[0] = 700;
	snapshot(&w);
	n = topk_top(&w, false, top, 5);
	CHECK(n == 1 && top[0].packets == 7 && top[0].bytes == 700,
	      "re-inserted source: want 7 packets / 700 B, got %d entries", n);

	/* ties: lower address first */
	topk_free(&w);
	topk_init(&w, 1);
	memset(cum_pkts, 0, sizeof(cum_pkts));
	memset(cum_bytes, 0, sizeof(cum_bytes));
	snapshot(&w);
	cum_pkts[7] = cum_pkts[3] = 5;
	snapshot(&w);
	n = topk_top(&w, false, top, 2);
	CHECK(n == 2 && rank_of(top, n, 3) == 0 && rank_of(top, n, 7) == 1, "ties: lower address first");
	topk_free(&w);

	/* a snapshot listing a source twice (a map walk restarted under LRU
	 * churn) still ranks it once, with its own counts */
	topk_init(&w, 1);
	{
		struct src_rank *v0 = calloc(1, sizeof(*v0)), *v1 = calloc(3, sizeof(*v1));

		v0[0].key = key_of(5);
		v0[0].packets = 10;
		topk_push(&w, v0, 1);
		v1[0].key = v1[1].key = key_of(5);
		v1[0].packets = v1[1].packets = 15;
		v1[2].key = key_of(6);
		v1[2].packets = 4;
		topk_push(&w, v1, 3);
	}
	n = topk_top(&w, false, top, 5);
	CHECK(n == 2 && rank_of(top, n, 5) == 0 && top[0].packets == 5 && rank_of(top, n, 6) == 1,
	      "duplicate source: want it once with 5 packets, got %d entries", n);
	topk_free(&w);
	return CHECK_SUMMARY();
}

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Top talkers over a sliding window, from the XDP per-source map.
 *
 * Each tick (once a second) reads the LRU per-CPU map once, sums the CPUs,
 * and keeps that snapshot sorted by source.  The window's count for a
 * source is (now - the snapshot window ticks ago), a merge of two sorted
 * arrays: no hash table, memory bounded by (window + 1) snapshots of at
 * most SRC_STATS_MAX sources.  A source the LRU evicted and re-inserted
 * shows a smaller total than before: then its whole current total is the
 * window's count (what the map can still tell).
 */
#ifndef NGX_SOCKMAP_TOPK_H
#define NGX_SOCKMAP_TOPK_H

#include <stdbool.h>
#include "telemetry.h"

/* A source's counts, summed over CPUs. */
struct src_rank {
	struct src_key key;
	__u64 packets, bytes;
};

#define TOPK_WINDOW_MAX 60
#define TOPK_WINDOW_SEC 10 /* the agent's window: /metrics and top */

struct src_snapshot {
	struct src_rank *v; /* sorted by key */
	int n;
};

struct topk_window {
	int window;        /* ticks */
	int ticks;         /* snapshots taken so far */
	struct src_snapshot snaps[TOPK_WINDOW_MAX + 1]; /* ring, by tick */
};

/* window: ticks (seconds) the ranking covers, 1..TOPK_WINDOW_MAX. */
int topk_init(struct topk_window *w, int window);
void topk_free(struct topk_window *w);
/* Take one snapshot from the per-source map (fd of src_stats). */
int topk_tick(struct topk_window *w, int src_stats_fd);
/* Add a snapshot made elsewhere (sorted or not; takes ownership of v).
 * For tests: topk_tick() reads the map and calls this. */
void topk_push(struct topk_window *w, struct src_rank *v, int n);
/* Top k over the window (or since the first tick while it fills), by
 * packets or bytes, into out; returns how many.  Ties: lower address. */
int topk_top(const struct topk_window *w, bool by_bytes, struct src_rank *out, int k);
/* Seconds the current ranking covers (< window while filling). */
int topk_span(const struct topk_window *w);

#endif

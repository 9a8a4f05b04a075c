// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bpfutil.h"
#include "topk.h"

static int key_cmp(const void *a, const void *b)
{
	return memcmp(&((const struct src_rank *)a)->key, &((const struct src_rank *)b)->key,
		      sizeof(struct src_key));
}

int topk_init(struct topk_window *w, int window)
{
	if (window < 1 || window > TOPK_WINDOW_MAX)
		return -EINVAL;
	memset(w, 0, sizeof(*w));
	w->window = window;
	return 0;
}

void topk_free(struct topk_window *w)
{
	int i;

	for (i = 0; i <= TOPK_WINDOW_MAX; i++)
		free(w->snaps[i].v);
	memset(w, 0, sizeof(*w));
}

static struct src_snapshot *snap_at(const struct topk_window *w, int tick)
{
	return (struct src_snapshot *)&w->snaps[tick % (w->window + 1)];
}

void topk_push(struct topk_window *w, struct src_rank *v, int n)
{
	struct src_snapshot *s = snap_at(w, w->ticks);
	int i, u = 0;

	qsort(v, n, sizeof(*v), key_cmp);
	/* one entry per source (the merge in topk_top needs it): keep the
	 * larger counts of duplicates */
	for (i = 0; i < n; i++) {
		if (u && !key_cmp(&v[u - 1], &v[i])) {
			if (v[i].packets > v[u - 1].packets)
				v[u - 1] = v[i];
			continue;
		}
		v[u++] = v[i];
	}
	n = u;
	free(s->v);
	s->v = v;
	s->n = n;
	w->ticks++;
}

/*
 * One pass over the map with the batch API: it walks bucket by bucket.  A
 * bpf_map_get_next_key() walk restarts from the first key when the key it
 * stands on was just evicted (kernel/bpf/hashtab.c, htab_map_get_next_key),
 * which under a spoofed-source flood of the LRU means duplicates and a walk
 * of unbounded length.
 */
int topk_tick(struct topk_window *w, int fd)
{
	int ncpu = libbpf_num_possible_cpus(), n = 0, i, err = 0;
	__u32 batch_n, cap = SRC_STATS_MAX, count;
	struct src_key *keys = calloc(cap, sizeof(*keys));
	struct src_counters *vals = calloc((size_t)cap * ncpu, sizeof(*vals));
	struct src_rank *v = calloc(cap, sizeof(*v));
	struct src_key in_batch, out_batch;
	bool first = true;
	LIBBPF_OPTS(bpf_map_batch_opts, opts);

	if (!keys || !vals || !v || ncpu <= 0) {
		err = -ENOMEM;
		goto out;
	}
	while ((__u32)n < cap) {
		count = batch_n = cap - n;
		err = bpf_map_lookup_batch(fd, first ? NULL : &in_batch, &out_batch, keys,
					   vals, &count, &opts);
		/* ENOENT: the last batch; ENOSPC: the next bucket doesn't fit
		 * in what is left of cap (more sources than the map holds) */
		if (err && errno != ENOENT && errno != ENOSPC) {
			err = -errno;
			goto out;
		}
		for (i = 0; i < (int)count && i < (int)batch_n; i++, n++) {
			struct src_counters sum;

			v[n].key = keys[i];
			percpu_fold_u64((const __u64 *)&vals[(size_t)i * ncpu], ncpu,
					sizeof(sum) / sizeof(__u64), (__u64 *)&sum);
			v[n].packets = sum.packets;
			v[n].bytes = sum.bytes;
		}
		if (err)
			break;
		in_batch = out_batch;
		first = false;
	}
	err = 0;
	topk_push(w, v, n);
	v = NULL;
out:
	free(keys);
	free(vals);
	free(v);
	return err;
}

int topk_span(const struct topk_window *w)
{
	if (w->ticks <= 1)
		return 0;
	return w->ticks - 1 < w->window ? w->ticks - 1 : w->window;
}

/* insert r into out (sorted, at most k): ties go to the lower address */
static void rank_insert(struct src_rank *out, int *n, int k, const struct src_rank *r,
			bool by_bytes)
{
	__u64 rv = by_bytes ? r->bytes : r->packets, ov;
	int i, j;

	if (!rv)
		return;
	for (i = 0; i < *n; i++) {
		ov = by_bytes ? out[i].bytes : out[i].packets;
		if (rv > ov || (rv == ov && key_cmp(r, &out[i]) < 0))
			break;
	}
	if (i >= k)
		return;
	if (*n < k)
		(*n)++;
	for (j = *n - 1; j > i; j--)
		out[j] = out[j - 1];
	out[i] = *r;
}

int topk_top(const struct topk_window *w, bool by_bytes, struct src_rank *out, int k)
{
	const struct src_snapshot *now, *then;
	struct src_rank d;
	int i = 0, j = 0, n = 0, c;

	if (w->ticks < 2 || k <= 0)
		return 0;
	now = snap_at(w, w->ticks - 1);
	then = snap_at(w, w->ticks - 1 - topk_span(w));
	while (i < now->n) {
		c = j < then->n ? key_cmp(&now->v[i], &then->v[j]) : -1;
		if (c > 0) { /* gone from the map since */
			j++;
			continue;
		}
		d = now->v[i];
		if (c == 0) {
			/* smaller than before: evicted and counted anew */
			if (d.packets >= then->v[j].packets && d.bytes >= then->v[j].bytes) {
				d.packets -= then->v[j].packets;
				d.bytes -= then->v[j].bytes;
			}
			j++;
		}
		rank_insert(out, &n, k, &d, by_bytes);
		i++;
	}
	return n;
}

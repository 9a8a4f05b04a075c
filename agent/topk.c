// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
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

	qsort(v, n, sizeof(*v), key_cmp);
	free(s->v);
	s->v = v;
	s->n = n;
	w->ticks++;
}

int topk_tick(struct topk_window *w, int fd)
{
	int ncpu = libbpf_num_possible_cpus(), n = 0, cap = 1024, i;
	struct src_counters *per = calloc(ncpu, sizeof(*per));
	struct src_rank *v = malloc(cap * sizeof(*v)), *nv;
	struct src_key key, *prev = NULL;

	if (!per || !v)
		goto nomem;
	while (!bpf_map_get_next_key(fd, prev, &key)) {
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, per))
			continue; /* evicted meanwhile */
		if (n == cap) {
			nv = realloc(v, 2 * cap * sizeof(*v));
			if (!nv)
				goto nomem;
			v = nv;
			cap *= 2;
		}
		memset(&v[n], 0, sizeof(v[n]));
		v[n].key = key;
		for (i = 0; i < ncpu; i++) {
			v[n].packets += per[i].packets;
			v[n].bytes += per[i].bytes;
		}
		n++;
	}
	free(per);
	topk_push(w, v, n);
	return 0;
nomem:
	free(per);
	free(v);
	return -ENOMEM;
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

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "accel.h"
#include "log.h"
#include "sockiter.h"
#include "sockiter.skel.h"

int sockiter_probe(bool reset, bool scan)
{
	struct sockiter_bpf *skel = sockiter_bpf__open();
	int err;

	if (!skel)
		return -errno;
	bpf_program__set_autoload(skel->progs.reset_doomed, reset);
	bpf_program__set_autoload(skel->progs.scan_unread, scan);
	/* its own maps, the smallest that load: only the programs matter */
	bpf_map__set_max_entries(skel->maps.sock_hash, 1);
	bpf_map__set_max_entries(skel->maps.service_profiles, 1);
	bpf_map__set_max_entries(skel->maps.unread_watch, 1);
	err = sockiter_bpf__load(skel);
	sockiter_bpf__destroy(skel);
	return err;
}

int sockiter_load(struct sockiter *it, const struct bpf_object *dataplane, int sock_hash_fd,
		  bool reset, bool scan)
{
	LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info info = {};
	int err;

	memset(it, 0, sizeof(*it));
	it->skel = sockiter_bpf__open();
	if (!it->skel)
		return -errno;
	bpf_program__set_autoload(it->skel->progs.reset_doomed, reset);
	bpf_program__set_autoload(it->skel->progs.scan_unread, scan);
	err = object_share_maps(it->skel->obj, dataplane);
	if (!err)
		err = sockiter_bpf__load(it->skel);
	if (err)
		goto fail;
	it->reset_iter = reset ? bpf_program__attach_iter(it->skel->progs.reset_doomed, NULL) : NULL;
	if (reset && !it->reset_iter) {
		err = -errno;
		goto fail;
	}
	if (!scan)
		return 0;
	info.map.map_fd = sock_hash_fd;
	opts.link_info = &info;
	opts.link_info_len = sizeof(info);
	it->unread_iter = bpf_program__attach_iter(it->skel->progs.scan_unread, &opts);
	if (!it->unread_iter) {
		err = -errno;
		goto fail;
	}
	return 0;
fail:
	sockiter_destroy(it);
	return err;
}

void sockiter_destroy(struct sockiter *it)
{
	bpf_link__destroy(it->reset_iter);
	bpf_link__destroy(it->unread_iter);
	sockiter_bpf__destroy(it->skel);
	memset(it, 0, sizeof(*it));
}

int sockiter_doom(struct sockiter *it, __u64 cookie, __u32 reason, bool primary,
		  const struct service_key *svc)
{
	struct doom_entry d = { .reason = reason, .primary = primary };

	if (svc)
		d.service = *svc;

	return bpf_map_update_elem(bpf_map__fd(it->skel->maps.doomed), &cookie, &d,
				   primary ? BPF_ANY : BPF_NOEXIST) ? -errno : 0;
}

bool sockiter_doom_pending(struct sockiter *it, __u64 cookie)
{
	struct doom_entry d;

	return !bpf_map_lookup_elem(bpf_map__fd(it->skel->maps.doomed), &cookie, &d) && d.primary;
}

void sockiter_undoom_all(struct sockiter *it)
{
	int fd = bpf_map__fd(it->skel->maps.doomed);
	__u64 key;

	while (!bpf_map_get_next_key(fd, NULL, &key))
		bpf_map_delete_elem(fd, &key);
}

int iter_read_records(int fd, void *out, size_t size, int max,
		      void (*more)(const void *rec, void *ctx), void *ctx)
{
	char rec[sizeof(struct reset_record) > sizeof(struct unread_record)
		 ? sizeof(struct reset_record) : sizeof(struct unread_record)];
	size_t have = 0;
	int n = 0;
	ssize_t got;

	if (size > sizeof(rec) || !size)
		return -EINVAL;
	/* read() returns what fits of the seq buffer; the rest of a record
	 * comes with the next read (kernel/bpf/bpf_iter.c, bpf_seq_read) */
	for (;;) {
		got = read(fd, rec + have, size - have);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		have += got;
		if (have < size)
			continue;
		if (n < max)
			memcpy((char *)out + n * size, rec, size);
		else if (more)
			more(rec, ctx);
		n++;
		have = 0;
	}
	if (got < 0)
		return -errno;
	return n < max ? n : max;
}

/* Run one iterator and read its output as records of size bytes into
 * out (up to max; the rest is read and passed to more, if set). */
static int read_records(struct bpf_link *link, void *out, size_t size, int max,
			void (*more)(const void *rec, void *ctx), void *ctx)
{
	int fd, ret;

	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0)
		return -errno;
	ret = iter_read_records(fd, out, size, max, more, ctx);
	close(fd);
	return ret;
}

int sockiter_reset(struct sockiter *it, struct reset_record *out, int max)
{
	return read_records(it->reset_iter, out, sizeof(*out), max, NULL, NULL);
}

struct scan_sums {
	__u64 total, largest;
};

static void sum_rest(const void *rec, void *ctx)
{
	const struct unread_record *r = rec;
	struct scan_sums *s = ctx;

	s->total += r->bytes;
	if (r->bytes > s->largest)
		s->largest = r->bytes;
}

int sockiter_scan(struct sockiter *it, struct unread_record *out, int max, __u64 *total,
		  __u64 *largest)
{
	struct scan_sums s = {};
	int n, i;

	n = read_records(it->unread_iter, out, sizeof(*out), max, sum_rest, &s);
	for (i = 0; i < n; i++)
		sum_rest(&out[i], &s);
	*total = s.total;
	*largest = s.largest;
	return n;
}

int sockiter_progs(const struct sockiter *it, struct prog_ref *out, int max)
{
	return it->skel ? object_progs(it->skel->obj, out, max) : 0;
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "accel.h"
#include "syscall_ops.h"
#include "syscall_ops.skel.h"

int syscall_ops_load(struct syscall_ops *so, const struct bpf_object *dataplane)
{
	int err;

	so->skel = syscall_ops_bpf__open();
	if (!so->skel)
		return -errno;
	err = object_share_maps(so->skel->obj, dataplane);
	if (!err)
		err = syscall_ops_bpf__load(so->skel);
	if (err)
		syscall_ops_destroy(so);
	return err;
}

void syscall_ops_destroy(struct syscall_ops *so)
{
	syscall_ops_bpf__destroy(so->skel);
	so->skel = NULL;
}

static int run(struct bpf_program *prog, void *ctx, size_t ctx_size)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = ctx, .ctx_size_in = ctx_size);
	int err = bpf_prog_test_run_opts(bpf_program__fd(prog), &opts);

	if (err)
		return -errno;
	return opts.retval ? -EINVAL : 0;
}

int syscall_ops_scan(struct syscall_ops *so, const __u64 *added, struct unread_record *out,
		     int max, __u64 *total, __u64 *largest)
{
	/* 256 KiB: not on the stack */
	static struct unread_scan scan;
	struct unread_scan_args a = {};
	__u32 zero = 0;
	int err, n;

	*total = *largest = 0;
	/*
	 * unread_watch gains an entry only with sockets_added, counted after
	 * the insert (accel_life.h life_begin): unchanged since a scan that
	 * began after reading it and found the map empty, it is empty still.
	 * The scan visits every bucket of a map sized as the SOCKHASH
	 * (bpf_for_each_map_elem, kernel/bpf/hashtab.c), full or not.
	 */
	if (added && so->watch_empty && *added == so->added_seen)
		return 0;
	err = run(so->skel->progs.scan_watched, &a, sizeof(a));
	if (err)
		return err;
	so->watch_empty = added && !a.watched;
	so->added_seen = added ? *added : 0;
	*total = a.total;
	*largest = a.max;
	if (!a.n)
		return 0; /* nothing unread: the records need no copy */
	if (bpf_map_lookup_elem(bpf_map__fd(so->skel->maps.unread_scan_out), &zero, &scan))
		return -errno;
	n = scan.n < UNREAD_SCAN_MAX ? (int)scan.n : UNREAD_SCAN_MAX;
	if (n > max)
		n = max;
	memcpy(out, scan.rec, n * sizeof(*out));
	return n;
}

int syscall_ops_note_reset(struct syscall_ops *so, __u32 reason, const struct service_key *svc)
{
	struct note_reset_args a = { .reason = reason, .service = *svc };

	return run(so->skel->progs.note_reset, &a, sizeof(a));
}

int syscall_ops_progs(const struct syscall_ops *so, struct prog_ref *out, int max)
{
	return so->skel ? object_progs(so->skel->obj, out, max) : 0;
}

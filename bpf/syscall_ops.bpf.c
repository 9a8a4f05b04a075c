// SPDX-License-Identifier: GPL-2.0
/*
 * What the agent asks of the kernel where tracing programs are refused
 * (agent/syscall_ops.c): BPF_PROG_TYPE_SYSCALL programs, run on demand
 * with BPF_PROG_RUN.  A tracing policy (an LSM, this project's own hosts)
 * refuses fentry and iter programs but not these, and they need no
 * tracefs.  Shares the data plane's maps (accel_maps.h).
 *
 *   scan_watched    every socket of unread_watch (the data plane keeps it
 *                   with watch_unread): the unread redirected bytes its
 *                   psock holds, into unread_scan_out, and the sums
 *                   (and how many entries it kept) into its context.
 *                   What iter/sockmap reports, from a map instead of
 *                   the SOCKHASH.
 *   note_reset      a connection the agent ended over sock_diag: counted
 *                   (resets[reason]) and its service endpoint learned as
 *                   a hazard, as reset_doomed does for the connections
 *                   it ends.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "accel.h"
#include "accel_maps.h"
#include "psock.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unread_scan);
} unread_scan_out SEC(".maps");

/* bpf_for_each_map_elem's context must live on the stack */
struct scan_ctx {
	struct unread_scan *out;
	__u32 watched;
};

static long visit(struct bpf_map *map, __u64 *cookie, __u64 *psock, struct scan_ctx *c)
{
	struct unread_scan *out = c->out;
	struct unread_record rec;
	__u32 i;

	/* the psock is gone (the socket left the SOCKHASH, or closed after
	 * a reset, which the data plane can't see): that memory says
	 * nothing now, and the entry goes (deleting the element the
	 * callback was given is allowed: kernel/bpf/hashtab.c walks the
	 * bucket under RCU) */
	if (!psock_is_of(*psock, *cookie)) {
		bpf_map_delete_elem(&unread_watch, cookie);
		return 0;
	}
	c->watched++;
	rec.bytes = psock_unread(*psock);
	if (!rec.bytes)
		return 0;
	rec.cookie = *cookie;
	__builtin_memset(&rec.sock, 0, sizeof(rec.sock));
	tuple_of(&rec.sock, psock_sock(*psock));
	out->total += rec.bytes;
	if (rec.bytes > out->max)
		out->max = rec.bytes;
	i = out->n++;
	if (i < UNREAD_SCAN_MAX)
		out->rec[i] = rec;
	return 0;
}

SEC("syscall")
int scan_watched(struct unread_scan_args *a)
{
	struct scan_ctx c = {};
	__u32 zero = 0;

	c.out = bpf_map_lookup_elem(&unread_scan_out, &zero);
	if (!c.out)
		return -1;
	c.out->total = c.out->max = 0;
	c.out->n = 0;
	bpf_for_each_map_elem(&unread_watch, visit, &c, 0);
	a->total = c.out->total;
	a->max = c.out->max;
	a->n = c.out->n;
	a->watched = c.watched;
	return 0;
}

SEC("syscall")
int note_reset(struct note_reset_args *a)
{
	struct service_key svc = a->service; /* a map key must be on the stack */
	__u32 reason = a->reason;

	if (reason >= RS__MAX)
		return -1;
	STAT_ADD(resets[reason], 1);
	service_learn_hazard(&svc, reason);
	return 0;
}

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The enforcer's BPF_PROG_TYPE_SYSCALL programs (bpf/syscall_ops.bpf.c):
 * the only owner of their skeleton.  Where tracing programs are refused
 * they stand in for the iterators' side effects: scan_watched measures
 * unread bytes from the data plane's unread_watch map, note_reset counts
 * a reset done over sock_diag and learns its port.
 */
#ifndef NGX_SOCKMAP_SYSCALL_OPS_H
#define NGX_SOCKMAP_SYSCALL_OPS_H

#include <stdbool.h>
#include <linux/types.h>
#include "bpfutil.h" /* struct prog_ref */
#include "sockkey.h" /* struct service_key */

struct syscall_ops_bpf;
struct bpf_object;
struct unread_record;

struct syscall_ops {
	struct syscall_ops_bpf *skel;
	bool watch_empty;   /* the last scan left unread_watch empty */
	__u64 added_seen;   /* sockets_added when that scan began */
};

/* Load sharing the data plane's maps.  0 or -errno. */
int syscall_ops_load(struct syscall_ops *so, const struct bpf_object *dataplane);
void syscall_ops_destroy(struct syscall_ops *so);
/* Every watched socket holding unread bytes, up to max records; *total
 * and *largest over all of them.  added: the data plane's sockets_added,
 * read before the call (no scan while it says unread_watch is still as
 * empty as the last scan left it; NULL: not known, scan).  How many, or
 * -errno. */
int syscall_ops_scan(struct syscall_ops *so, const __u64 *added, struct unread_record *out,
		     int max, __u64 *total, __u64 *largest);
/* Count a reset for reason and learn its service endpoint (svc->port 0:
 * none) as a hazard. */
int syscall_ops_note_reset(struct syscall_ops *so, __u32 reason, const struct service_key *svc);
int syscall_ops_progs(const struct syscall_ops *so, struct prog_ref *out, int max);

#endif

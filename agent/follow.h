/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Follow Nginx's local peers: find the cgroups of the processes at the other
 * end of connections of the named cgroups, so both ends get tracked.
 * sock_diag (NETLINK_SOCK_DIAG, INET_DIAG_CGROUP_ID) reports each socket's
 * cgroup id; we dump TCP sockets in every network namespace that has a
 * process, match mirrored addresses, and map cgroup ids back to paths.
 * Only connections made after a cgroup is attached are accelerated.
 */
#ifndef NGX_SOCKMAP_FOLLOW_H
#define NGX_SOCKMAP_FOLLOW_H

#include <stdbool.h>
#include <stdint.h>
#include "options.h"
#include "target.h"

struct follow_candidate {
	struct cg_target target; /* reason says whose peer it is */
	uint64_t netns;          /* inode of the namespace of the peer's socket */
};

/*
 * One scan.  attached[n_attached] are the cgroups we run in now; used[i]
 * is set when attached[i] holds an end of a connection whose other end is
 * in an attached cgroup too (a connection the data plane tracks).  Writes
 * up to max new cgroups worth following into out (never the hierarchy
 * root, never an ancestor or descendant of an attached cgroup, only
 * connections whose ports pass the port policy, at most 8 from one
 * network namespace).  Only replies from the kernel to our own requests
 * count.  Returns how many, or -errno.
 */
int follow_scan(const char *cg2_mnt, const struct cg_target *attached, int n_attached,
		const struct port_set *ports, bool *used, struct follow_candidate *out, int max);

#endif

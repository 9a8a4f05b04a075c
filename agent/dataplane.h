/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Data plane life cycle: open -> configure -> load -> attach -> tear down. */
#ifndef NGX_SOCKMAP_DATAPLANE_H
#define NGX_SOCKMAP_DATAPLANE_H

#include <stdbool.h>
#include "options.h"
#include "target.h"

#define PIN_DIR "/sys/fs/bpf/ngx-sockmap"

struct accel_bpf;
struct bpf_link;

struct accel {
	struct accel_bpf *skel;
	struct bpf_link *links[MAX_TARGETS];
	struct cg_target targets[MAX_TARGETS];
	int n_targets;
	bool msg_attached;
	bool pinned;
};

/* Probe the kernel for what the data plane needs.  0 or -EOPNOTSUPP with a
 * message naming what is missing. */
int accel_probe_kernel(char *err, size_t errlen);
/* Open and load.  With pin, maps are pinned under PIN_DIR, and maps already
 * pinned there are reused (a restart keeps the data plane's state). */
int accel_load(struct accel *a, const struct run_opts *o, bool slow_reader_fallback);
/* Attach sock_ops to a cgroup through a bpf_link (detached when the agent
 * dies unless pinned).  Refuses a cgroup that already runs our sock_ops
 * unless it is our own pinned link, which is adopted. */
int accel_attach_cgroup(struct accel *a, const struct cg_target *t, char *err, size_t errlen);
/* Attach sk_msg to the sock_hash. */
int accel_attach_msg(struct accel *a);
/* Detach what is not pinned, free everything.  Sockets already in the
 * sock_hash keep their programs (the kernel copied them into the psock) and
 * keep redirecting until they close. */
void accel_destroy(struct accel *a);
/* Remove a pinned data plane.  0, or -ENOENT when nothing is pinned. */
int accel_unpin_all(void);
bool accel_pinned_exists(void);
/* Is a program named like ours attached to this cgroup's sock_ops hook? */
int accel_cgroup_has_ours(int cg_fd);

#endif

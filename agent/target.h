/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Which cgroups to attach to: paths, PIDs and pid files -> cgroup v2 dirs. */
#ifndef NGX_SOCKMAP_TARGET_H
#define NGX_SOCKMAP_TARGET_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

struct cg_target {
	char path[PATH_MAX];  /* absolute, canonical */
	uint64_t id;          /* cgroup id (inode of the cgroup v2 dir) */
	char reason[64];      /* "named", "nginx pid 123", ... */
};

/* Mount point of the cgroup v2 hierarchy.  0 or -ENOENT. */
int cg2_mount(char *out, size_t len);
/* PATH absolute or relative to the cgroup v2 mount -> target.  0 or -errno
 * with a one-line reason in err. */
int cg2_resolve(const char *mnt, const char *path, struct cg_target *t,
		char *err, size_t errlen);
/* The cgroup v2 directory a process lives in. */
int cg2_of_pid(const char *mnt, int pid, struct cg_target *t, char *err, size_t errlen);
/* First line of FILE as a pid. */
int read_pid_file(const char *file, int *pid, char *err, size_t errlen);

#endif

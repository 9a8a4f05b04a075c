/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Which cgroups to attach to: paths, PIDs and pid files -> cgroup v2 dirs. */
#ifndef NGX_SOCKMAP_TARGET_H
#define NGX_SOCKMAP_TARGET_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

/* cgroups one agent attaches to, named and followed together */
#define MAX_TARGETS 64

struct cg_target {
	char path[PATH_MAX];  /* absolute, canonical */
	uint64_t id;          /* cgroup id (inode of the cgroup v2 dir) */
	char reason[64];      /* "named", "nginx pid 123", ... */
};

/* Mount point of the cgroup v2 hierarchy (the first cgroup2 mount).  0 or
 * -ENOENT. */
int cg2_mount(char *out, size_t len);
/* PATH absolute or relative to the cgroup v2 mount -> target.  0 or -errno
 * with a one-line reason in err. */
int cg2_resolve(const char *mnt, const char *path, struct cg_target *t,
		char *err, size_t errlen);
/* In a container with its own cgroup namespace, /proc/PID/cgroup paths
 * are relative to the container's root ("0::/../x"): join the host's
 * (pid 1's, with hostPID) so that paths name real directories of the
 * mount.  Quietly does nothing where not needed or not allowed. */
void cg2_join_host_ns(void);
/* The cgroup v2 directory a process lives in. */
int cg2_of_pid(const char *mnt, int pid, struct cg_target *t, char *err, size_t errlen);
/* First line of FILE as a pid. */
int read_pid_file(const char *file, int *pid, char *err, size_t errlen);

/* The pid file `run` reads when it is given no target. */
#define DEFAULT_PID_FILE "/run/nginx.pid"

struct run_opts;
/* Every target `run` was given (--cgroup, --nginx-pid, --nginx-pid-file, or
 * DEFAULT_PID_FILE), deduplicated, into list (MAX_TARGETS).  0, or -1 with
 * one line naming the bad target in err. */
int targets_resolve(const struct run_opts *o, const char *mnt, struct cg_target *list, int *n,
		    char *err, size_t errlen);

#endif

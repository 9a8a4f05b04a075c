/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Which cgroups to attach to: paths, PIDs and pid files -> cgroup v2 dirs. */
#ifndef NGX_SOCKMAP_TARGET_H
#define NGX_SOCKMAP_TARGET_H

#include <limits.h>
#include <stdio.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

/* cgroups one agent attaches to, named and followed together */
#define MAX_TARGETS 64

/* How a target was named: what to look at again when it goes away. */
enum target_kind {
	TK_PATH,     /* --cgroup: the same path, recreated */
	TK_PID,      /* --nginx-pid: nothing (that process is gone) */
	TK_PIDFILE,  /* --nginx-pid-file: the pid it names now */
	TK_FOLLOWED, /* a peer's: following finds it again if it is still one */
	TK_K8S,      /* a pod --k8s-selector selects: the API is asked again */
	TK_UNIT,     /* --unit: the unit's cgroup, wherever its slice puts it */
};

struct cg_target {
	char path[PATH_MAX];  /* absolute, canonical */
	uint64_t id;          /* cgroup id (inode of the cgroup v2 dir) */
	char reason[64];      /* "named", "nginx pid 123", ... */
	enum target_kind kind;
	char source[PATH_MAX]; /* TK_PATH: the path as given; TK_PIDFILE: the file;
				* TK_UNIT: the unit's name */
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
/* A systemd unit's name as --unit takes it ("nginx", "openresty.service",
 * "nginx@blue", "nginx\x40blue") -> its full name ("nginx.service"):
 * ".service" added when it names no unit type, "\xNN" escapes kept.
 * 0, or -EINVAL with why in err. */
int sd_unit_name(const char *name, char *out, size_t len, char *err, size_t errlen);
/* The directory under root (a cgroup v2 mount) of the system manager's
 * unit `unit` (a full name): the one named so under nothing but slices.
 * 0 with path filled, or -ENOENT. */
int sd_unit_find(const char *root, const char *unit, char *path, size_t len);
/* The cgroup of unit name (as --unit takes it; an escaped spelling such
 * as "nginx\x40blue" is looked for decoded too). */
int cg2_of_unit(const char *mnt, const char *name, struct cg_target *t, char *err, size_t errlen);
/* First line of FILE as a pid. */
int read_pid_file(const char *file, int *pid, char *err, size_t errlen);

/* The parsers under those two, on an open file (the fuzz target gives
 * them any bytes).  pid_file_parse: the pid on the file's first line, or
 * -1; line[len] gets that line for the message.  proc_cgroup_read: the
 * path of a /proc/PID/cgroup's "0::" line into out: 0, -ENOENT without
 * one, -ENAMETOOLONG. */
int pid_file_parse(FILE *f, char *line, size_t len);
int proc_cgroup_read(FILE *f, char *out, size_t len);

/* The pid file `run` reads when it is given no target. */
#define DEFAULT_PID_FILE "/run/nginx.pid"

/* What `run` may attach to beyond nginx's own cgroups, as the user said. */
struct target_policy {
	bool any_process;       /* a pid target need not be nginx (--any-process) */
	bool allow_root_cgroup; /* a target may be the root (--allow-root-cgroup) */
};

/* The targets `run` was given. */
struct target_names {
	const char *const *cgroups; /* --cgroup */
	int n_cgroups;
	const char *const *units;   /* --unit */
	int n_units;
	const int *pids;            /* --nginx-pid */
	int n_pids;
	const char *pid_file;       /* --nginx-pid-file; NULL: none */
	bool pods;                  /* --k8s-selector names targets too */
	struct target_policy policy;
};

/* Is t still the cgroup it was attached to (same path, same inode)? */
bool target_alive(const struct cg_target *t);
/* Resolve a dead TK_PATH, TK_UNIT or TK_PIDFILE target again: 0 with *fresh filled
 * (a new cgroup at the path, or the cgroup of the pid file's new pid), or
 * -errno (nothing there, yet). */
int target_reresolve(const struct target_policy *p, const char *mnt, const struct cg_target *t,
		     struct cg_target *fresh, char *err, size_t errlen);
/* Every target named (or DEFAULT_PID_FILE when none is, pods neither),
 * deduplicated, into list (MAX_TARGETS).  0, or -1 with one line naming
 * the bad target in err. */
int targets_resolve(const struct target_names *names, const char *mnt, struct cg_target *list,
		    int *n, char *err, size_t errlen);

#endif

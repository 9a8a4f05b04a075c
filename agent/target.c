// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <mntent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include "options.h"
#include "target.h"

/*
 * Not libcgroup: Debian 12's libcgroup 2.0.2 lists a cgroup v2 mount only
 * through a controller enabled on it (it misses the controller-less
 * unified hierarchy of hybrid hosts, /sys/fs/cgroup/unified here), and its
 * cgroup_get_current_controller_path(pid, NULL) fails (ECGROUPNOTCOMPILED)
 * for v2.  The kernel's own interfaces are one line each: the "cgroup2"
 * entry of the mount table and the "0::" line of /proc/PID/cgroup
 * (Documentation/admin-guide/cgroup-v2.rst).
 */
int cg2_mount(char *out, size_t len)
{
	struct mntent *m;
	FILE *f;

	f = setmntent("/proc/self/mounts", "r");
	if (!f)
		return -errno;
	while ((m = getmntent(f))) {
		if (!strcmp(m->mnt_type, "cgroup2")) {
			snprintf(out, len, "%s", m->mnt_dir);
			endmntent(f);
			return 0;
		}
	}
	endmntent(f);
	return -ENOENT;
}

int cg2_resolve(const char *mnt, const char *path, struct cg_target *t,
		char *err, size_t errlen)
{
	char joined[PATH_MAX * 2], real[PATH_MAX];
	struct statfs sfs;
	struct stat st;

	if (path[0] == '/')
		snprintf(joined, sizeof(joined), "%s", path);
	else
		snprintf(joined, sizeof(joined), "%s/%s", mnt, path);
	if (!realpath(joined, real) || stat(real, &st)) {
		snprintf(err, errlen, "cgroup %s: %s", joined, strerror(errno));
		return -ENOENT;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "cgroup %s: not a directory", real);
		return -ENOTDIR;
	}
	if (statfs(real, &sfs))
		return -errno;
	if (sfs.f_type == CGROUP_SUPER_MAGIC) {
		snprintf(err, errlen,
			 "cgroup %s is on a cgroup v1 hierarchy; sock_ops needs cgroup v2 (mounted at %s)",
			 real, mnt);
		return -EMEDIUMTYPE;
	}
	if (sfs.f_type != CGROUP2_SUPER_MAGIC) {
		snprintf(err, errlen, "%s is not a cgroup v2 directory (cgroup v2 is mounted at %s)",
			 real, mnt);
		return -EMEDIUMTYPE;
	}
	snprintf(t->path, sizeof(t->path), "%s", real);
	/* On cgroup v2 the cgroup id is the kernfs inode number of its
	 * directory (kernfs_gen_ino / cgroup_id()). */
	t->id = st.st_ino;
	return 0;
}

int cg2_of_pid(const char *mnt, int pid, struct cg_target *t, char *err, size_t errlen)
{
	char file[64], line[PATH_MAX + 16];
	FILE *f;
	int ret = -ENOENT;

	if (kill(pid, 0) && errno == ESRCH) {
		snprintf(err, errlen, "pid %d: no such process", pid);
		return -ESRCH;
	}
	/* the "0::" line: cgroup v2 (cgroup-v2.rst "Processes"); see cg2_mount */
	snprintf(file, sizeof(file), "/proc/%d/cgroup", pid);
	f = fopen(file, "r");
	if (!f) {
		snprintf(err, errlen, "pid %d: %s", pid, strerror(errno));
		return -errno;
	}
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3))
			continue;
		line[strcspn(line, "\n")] = 0;
		ret = cg2_resolve(mnt, line[3] == '/' && line[4] ? line + 4 : ".", t, err, errlen);
		break;
	}
	fclose(f);
	if (ret == -ENOENT && !err[0])
		snprintf(err, errlen, "pid %d is in no cgroup v2 (no 0:: line in %s)", pid, file);
	if (!ret)
		snprintf(t->reason, sizeof(t->reason), "named: pid %d", pid);
	return ret;
}

int read_pid_file(const char *file, int *pid, char *err, size_t errlen)
{
	char buf[32] = "";
	FILE *f = fopen(file, "r");

	if (!f) {
		snprintf(err, errlen, "pid file %s: %s", file, strerror(errno));
		return -ENOENT;
	}
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	*pid = parse_pid(buf);
	if (*pid < 0) {
		snprintf(err, errlen, "pid file %s: '%s' is not a pid", file, buf);
		return -EINVAL;
	}
	return 0;
}

static void add_target(struct cg_target *list, int *n, const struct cg_target *t)
{
	int i;

	for (i = 0; i < *n; i++)
		if (list[i].id == t->id)
			return; /* named twice: attach once */
	if (*n < MAX_TARGETS)
		list[(*n)++] = *t;
}

int targets_resolve(const struct run_opts *o, const char *mnt, struct cg_target *list, int *n,
		    char *err, size_t errlen)
{
	const char *pid_file = o->pid_file;
	struct cg_target t;
	int i, pid;

	*n = 0;
	for (i = 0; i < o->n_cgroups; i++) {
		memset(&t, 0, sizeof(t));
		if (cg2_resolve(mnt, o->cgroups[i], &t, err, errlen))
			return -1;
		snprintf(t.reason, sizeof(t.reason), "named: --cgroup");
		add_target(list, n, &t);
	}
	for (i = 0; i < o->n_pids; i++) {
		memset(&t, 0, sizeof(t));
		if (cg2_of_pid(mnt, o->pids[i], &t, err, errlen))
			return -1;
		add_target(list, n, &t);
	}
	if (!pid_file && !o->n_cgroups && !o->n_pids)
		pid_file = DEFAULT_PID_FILE;
	if (pid_file) {
		memset(&t, 0, sizeof(t));
		if (read_pid_file(pid_file, &pid, err, errlen)) {
			if (pid_file != o->pid_file)
				snprintf(err, errlen,
					 "no target: nginx pid file %s not found; name one with --cgroup, --nginx-pid or --nginx-pid-file",
					 DEFAULT_PID_FILE);
			return -1;
		}
		if (cg2_of_pid(mnt, pid, &t, err, errlen))
			return -1;
		snprintf(t.reason, sizeof(t.reason), "named: nginx pid %d", pid);
		add_target(list, n, &t);
	}
	return 0;
}

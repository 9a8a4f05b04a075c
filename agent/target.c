// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <libcgroup.h>
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

static int is_cgroup2(const char *path)
{
	struct statfs sfs;

	return statfs(path, &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC;
}

int cg2_mount(char *out, size_t len)
{
	struct cgroup_mount_point mp;
	struct mntent *m;
	void *h = NULL;
	FILE *f;
	int ret;

	/* libcgroup's mount walk lists a controller's hierarchy, which finds
	 * the v2 mount whenever a controller is enabled on it. */
	if (cgroup_init() == 0) {
		ret = cgroup_get_controller_begin(&h, &mp);
		while (ret == 0) {
			if (is_cgroup2(mp.path)) {
				snprintf(out, len, "%s", mp.path);
				cgroup_get_controller_end(&h);
				return 0;
			}
			ret = cgroup_get_controller_next(&h, &mp);
		}
		cgroup_get_controller_end(&h);
	}
	/* libcgroup 2.0.2 skips a cgroup2 mount with no controllers enabled,
	 * the normal state of the unified hierarchy on hybrid hosts
	 * (/sys/fs/cgroup/unified), so read the mount table for it. */
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
	/* libcgroup 2.0.2's cgroup_get_current_controller_path() needs a
	 * controller name and fails for the unified hierarchy (controller
	 * NULL), so read the "0::" line ourselves (cgroup v2 format,
	 * Documentation/admin-guide/cgroup-v2.rst "Processes"). */
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

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>
#include <dirent.h>
#include <ftw.h>
#include <mntent.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include "log.h"
#include "options.h" /* parse_pid */
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

void cg2_join_host_ns(void)
{
	char ours[64] = "", host[64] = "";
	int fd;

	if (readlink("/proc/self/ns/cgroup", ours, sizeof(ours) - 1) < 0 ||
	    readlink("/proc/1/ns/cgroup", host, sizeof(host) - 1) < 0 || !strcmp(ours, host))
		return;
	fd = open("/proc/1/ns/cgroup", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (setns(fd, CLONE_NEWCGROUP) == 0)
		pr_info("joined the host's cgroup namespace (%s)\n", host);
	close(fd);
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

/* Whole lines, however long (getline): a fixed buffer would cut a long
 * line, and read its rest as a line of its own.  A cgroup v1 line's path
 * can be any length, and chosen by whoever may make cgroups there (a
 * container's user): its rest could start with "0::". */
int proc_cgroup_read(FILE *f, char *out, size_t len)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int ret = -ENOENT;

	while ((n = getline(&line, &cap, f)) >= 0) {
		if (n < 3 || strncmp(line, "0::", 3))
			continue;
		line[strcspn(line, "\n")] = 0;
		ret = snprintf(out, len, "%s", line + 3) < (int)len ? 0 : -ENAMETOOLONG;
		break;
	}
	free(line);
	return ret;
}

/* The "0::" path of pid (cgroup v2, cgroup-v2.rst "Processes"; see
 * cg2_mount), relative to the reader's cgroup namespace root. */
static int proc_cgroup(int pid, char *out, size_t len)
{
	char file[64];
	int ret;
	FILE *f;

	snprintf(file, sizeof(file), "/proc/%d/cgroup", pid);
	f = fopen(file, "re");
	if (!f)
		return -errno;
	ret = proc_cgroup_read(f, out, len);
	fclose(f);
	return ret;
}

static bool procs_has(const char *dir, int pid)
{
	char path[PATH_MAX + 16];
	bool found = false;
	FILE *f;
	int p;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fscanf(f, "%d", &p) == 1)
		found = p == pid;
	fclose(f);
	return found;
}

static char ns_root[PATH_MAX]; /* host directory of our cgroupns root */
static int ns_root_pid;

static int find_self(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_D && procs_has(path, ns_root_pid)) {
		snprintf(ns_root, sizeof(ns_root), "%s", path);
		return 1;
	}
	return 0;
}

/*
 * The mount directory our cgroup namespace's root is.  On the host that is
 * the mount itself.  A container with its own cgroup namespace that could
 * not join the host's (cg2_join_host_ns needs ptrace rights on pid 1) sees
 * itself at "/" and everyone else at "/../..."; its root is its own cgroup,
 * found once by the directory whose cgroup.procs lists us (hostPID: our pid
 * is the host's).
 */
static const char *cgns_root(const char *mnt)
{
	char own[PATH_MAX];

	if (ns_root[0])
		return ns_root;
	snprintf(ns_root, sizeof(ns_root), "%s", mnt);
	if (proc_cgroup(getpid(), own, sizeof(own)) || strcmp(own, "/") || procs_has(mnt, getpid()))
		return ns_root; /* not in a private namespace's root */
	ns_root_pid = getpid();
	if (nftw(mnt, find_self, 16, FTW_PHYS | FTW_MOUNT) == 1)
		pr_info("cgroup namespace root: %s\n", ns_root);
	else
		snprintf(ns_root, sizeof(ns_root), "%s", mnt);
	return ns_root;
}

int cg2_of_pid(const char *mnt, int pid, struct cg_target *t, char *err, size_t errlen)
{
	char rel[PATH_MAX], abs[PATH_MAX * 2];
	int ret;

	if (kill(pid, 0) && errno == ESRCH) {
		snprintf(err, errlen, "pid %d: no such process", pid);
		return -ESRCH;
	}
	ret = proc_cgroup(pid, rel, sizeof(rel));
	if (ret == -ENOENT) {
		snprintf(err, errlen, "pid %d is in no cgroup v2 (no 0:: line in /proc/%d/cgroup)",
			 pid, pid);
		return ret;
	}
	if (ret) {
		snprintf(err, errlen, "pid %d: %s", pid, strerror(-ret));
		return ret;
	}
	/* relative to our namespace's root; realpath() folds the ".." */
	snprintf(abs, sizeof(abs), "%s%s", cgns_root(mnt), rel);
	ret = cg2_resolve(mnt, abs, t, err, errlen);
	if (!ret)
		snprintf(t->reason, sizeof(t->reason), "named: pid %d", pid);
	return ret;
}

/*
 * systemd units.  systemd names a unit's cgroup after the unit, inside the
 * cgroups of its slices: "a-b.slice" is a child of "a.slice", "-.slice" is
 * the root, and an instance of a template goes to a slice of its own by
 * default, so nginx@blue.service lives at
 * system.slice/system-nginx.slice/nginx@blue.service (systemd.slice(5),
 * src/core/unit.c unit_default_slice()).  Found by that rule, not by
 * asking systemd (`systemctl show -p ControlGroup`): the agent may run
 * where there is no bus to ask (a container with the host's cgroups), and
 * the same walk serves a cgroup-v2-only host (/sys/fs/cgroup) and a hybrid
 * one (/sys/fs/cgroup/unified), where systemd mirrors its tree.
 */
static const char *const unit_types[] = { ".service", ".scope", ".slice", ".socket", ".mount",
					  ".swap" };

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

int sd_unit_name(const char *name, char *out, size_t len, char *err, size_t errlen)
{
	const char *p;
	size_t i;

	/* a unit name's characters (src/basic/unit-name.h VALID_CHARS, '@'
	 * of templates), at most 255 of them */
	for (p = name; *p; p++)
		if (!(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z') &&
		    !(*p >= '0' && *p <= '9') && !strchr(":-_.\\@", *p))
			break;
	if (!*name || *p || strlen(name) > 255) {
		snprintf(err, errlen, "--unit '%s' is not a systemd unit name%s", name,
			 *p == '/' ? " (ngx-sockmap@.service takes the instance escaped: a '-' "
				     "in it is \\x2d, see systemd-escape --template)"
				   : "");
		return -EINVAL;
	}
	for (i = 0; i < sizeof(unit_types) / sizeof(unit_types[0]); i++)
		if (ends_with(name, unit_types[i]))
			break;
	/* as systemctl does: a name without a type is a service's */
	if ((size_t)snprintf(out, len, "%s%s", name,
			     i < sizeof(unit_types) / sizeof(unit_types[0]) ? "" : ".service") >= len) {
		snprintf(err, errlen, "--unit '%s': name too long", name);
		return -EINVAL;
	}
	return 0;
}

/* Look for unit in dir and in the slices below it, depth levels at most. */
static int unit_in(const char *dir, const char *unit, int depth, char *path, size_t len)
{
	char sub[PATH_MAX];
	struct dirent *de;
	struct stat st;
	int ret = -ENOENT;
	DIR *d;

	snprintf(sub, sizeof(sub), "%s/%s", dir, unit);
	if (!stat(sub, &st) && S_ISDIR(st.st_mode)) {
		snprintf(path, len, "%s", sub);
		return 0;
	}
	if (depth <= 0)
		return -ENOENT;
	d = opendir(dir);
	if (!d)
		return -ENOENT;
	/* only slices hold units of the system manager: a user's manager
	 * (user@UID.service), a container's (a .scope) and a service's own
	 * subtree name theirs after the same rule, and are not this one's */
	while (ret && (de = readdir(d))) {
		if (de->d_name[0] == '.' || !ends_with(de->d_name, ".slice"))
			continue;
		if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name) >= sizeof(sub))
			continue;
		ret = unit_in(sub, unit, depth - 1, path, len);
	}
	closedir(d);
	return ret;
}

int sd_unit_find(const char *root, const char *unit, char *path, size_t len)
{
	/* slices nest once per '-' of their names; 16 is past any in use */
	return unit_in(root, unit, 16, path, len);
}

/* name with its "\xNN" escapes decoded (systemd-escape's) into out. */
static void unit_unescape(const char *name, char *out, size_t len)
{
	unsigned int c;
	size_t n = 0;

	while (*name && n + 1 < len) {
		if (name[0] == '\\' && name[1] == 'x' && sscanf(name + 2, "%2x", &c) == 1 &&
		    isxdigit((unsigned char)name[2]) && isxdigit((unsigned char)name[3]) && c) {
			out[n++] = (char)c;
			name += 4;
		} else {
			out[n++] = *name++;
		}
	}
	out[n] = 0;
}

int cg2_of_unit(const char *mnt, const char *name, struct cg_target *t, char *err, size_t errlen)
{
	char unit[256], plain[256], path[PATH_MAX];
	int ret;

	ret = sd_unit_name(name, unit, sizeof(unit), err, errlen);
	if (ret)
		return ret;
	unit_unescape(unit, plain, sizeof(plain));
	/* a unit's name as given; else, escaped, as the unit it spells
	 * ("nginx\x40blue" for nginx@blue.service) */
	if (sd_unit_find(mnt, unit, path, sizeof(path)) &&
	    (!strcmp(plain, unit) || sd_unit_find(mnt, plain, path, sizeof(path)))) {
		snprintf(err, errlen,
			 "unit %s: no cgroup under the slices of %s (not running? `systemctl show -p "
			 "ControlGroup %s` says where it is: name that with --cgroup)",
			 unit, mnt, unit);
		return -ENOENT;
	}
	ret = cg2_resolve(mnt, path, t, err, errlen);
	if (!ret)
		snprintf(t->reason, sizeof(t->reason), "named: --unit %.40s", unit);
	return ret;
}

/* Whoever can write the pid file chooses what the agent accelerates: it
 * must be root's (nginx's master writes it as root) or this agent's user's,
 * and nobody else may write it. */
static int pid_file_trusted(FILE *f, const char *file, char *err, size_t errlen)
{
	struct stat st;

	if (fstat(fileno(f), &st))
		return -errno;
	if ((st.st_uid == 0 || st.st_uid == geteuid()) && !(st.st_mode & 022))
		return 0;
	snprintf(err, errlen, "pid file %s is %s: whoever writes it would choose what is accelerated",
		 file, st.st_uid != 0 && st.st_uid != geteuid() ? "another user's" : "writable by others");
	return -EPERM;
}

/* The first line whole (getline), so that a long one is refused, not read
 * as its first bytes, and all of it: a NUL inside is not the end of it. */
int pid_file_parse(FILE *f, char *line, size_t len)
{
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n;
	int pid;

	n = getline(&buf, &cap, f);
	if (n > 0 && buf[n - 1] == '\n')
		buf[--n] = 0;
	pid = n > 0 && strlen(buf) == (size_t)n ? parse_pid(buf) : -1;
	snprintf(line, len, "%s", n > 0 ? buf : "");
	free(buf);
	return pid;
}

int read_pid_file(const char *file, int *pid, char *err, size_t errlen)
{
	char buf[32];
	FILE *f = fopen(file, "re");
	int ret;

	if (!f) {
		snprintf(err, errlen, "pid file %s: %s", file, strerror(errno));
		return -ENOENT;
	}
	ret = pid_file_trusted(f, file, err, errlen);
	if (ret) {
		fclose(f);
		return ret;
	}
	*pid = pid_file_parse(f, buf, sizeof(buf));
	fclose(f);
	if (*pid < 0) {
		snprintf(err, errlen, "pid file %s: '%s' is not a pid", file, buf);
		return -EINVAL;
	}
	return 0;
}

/* Is pid an nginx master: its executable's name starts with "nginx"
 * (nginx, nginx-debug) and it runs as root?  Not its own name (comm): any
 * process can set that (prctl PR_SET_NAME).  name gets what it is. */
static bool is_nginx(int pid, char *name, size_t len)
{
	char path[64], exe[PATH_MAX] = "";
	const char *base;
	struct stat st;
	ssize_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "re");
	if (!f || !fgets(name, len, f))
		snprintf(name, len, "?");
	if (f)
		fclose(f);
	name[strcspn(name, "\n")] = 0;
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	snprintf(path, sizeof(path), "/proc/%d", pid);
	if (stat(path, &st) || st.st_uid != 0) {
		snprintf(name + strlen(name), len - strlen(name), ", not root's");
		return false;
	}
	return !strncmp(base, "nginx", 5);
}

/* The policy on what `run` may attach to: not the root of the hierarchy
 * (every process on the host), not a process that is not nginx (a stale
 * pid file pointing at a reused pid, or at a kernel thread), unless said. */
static int target_allowed(const struct target_policy *p, const char *mnt,
			  const struct cg_target *t, int pid, char *err, size_t errlen)
{
	char real[PATH_MAX], name[64];

	if (pid > 0 && !p->any_process && !is_nginx(pid, name, sizeof(name))) {
		snprintf(err, errlen,
			 "pid %d (%s) is not nginx (a stale pid file?); say --any-process to attach to its cgroup anyway",
			 pid, name);
		return -EPERM;
	}
	if (!p->allow_root_cgroup && realpath(mnt, real) && !strcmp(real, t->path)) {
		snprintf(err, errlen,
			 "%s is the root cgroup: that would accelerate every process on the host; "
			 "name nginx's cgroup, or say --allow-root-cgroup", t->path);
		return -EPERM;
	}
	return 0;
}

/* Is a the same as or an ancestor of b (paths)? */
static bool covers(const char *a, const char *b)
{
	size_t la = strlen(a);

	return !strncmp(a, b, la) && (b[la] == '/' || b[la] == 0);
}

/* Add t unless it is there already or an attached ancestor covers it: a
 * sock_ops program attached to a cgroup runs for its descendants too, and
 * twice on one socket would count its decisions twice.  A new ancestor
 * replaces the descendants it covers. */
static void add_target(struct cg_target *list, int *n, const struct cg_target *t)
{
	int i;

	for (i = 0; i < *n; i++)
		if (list[i].id == t->id || covers(list[i].path, t->path))
			return; /* named twice, or inside a named one: attach once */
	for (i = *n - 1; i >= 0; i--)
		if (covers(t->path, list[i].path))
			list[i] = list[--(*n)];
	if (*n < MAX_TARGETS)
		list[(*n)++] = *t;
}

int targets_resolve(const struct target_names *names, const char *mnt, struct cg_target *list,
		    int *n, char *err, size_t errlen)
{
	const char *pid_file = names->pid_file;
	struct cg_target t;
	int i, pid;

	*n = 0;
	for (i = 0; i < names->n_cgroups; i++) {
		memset(&t, 0, sizeof(t));
		if (cg2_resolve(mnt, names->cgroups[i], &t, err, errlen) ||
		    target_allowed(&names->policy, mnt, &t, 0, err, errlen))
			return -1;
		snprintf(t.reason, sizeof(t.reason), "named: --cgroup");
		t.kind = TK_PATH;
		snprintf(t.source, sizeof(t.source), "%s", names->cgroups[i]);
		add_target(list, n, &t);
	}
	for (i = 0; i < names->n_units; i++) {
		memset(&t, 0, sizeof(t));
		if (cg2_of_unit(mnt, names->units[i], &t, err, errlen) ||
		    target_allowed(&names->policy, mnt, &t, 0, err, errlen))
			return -1;
		t.kind = TK_UNIT;
		snprintf(t.source, sizeof(t.source), "%s", names->units[i]);
		add_target(list, n, &t);
	}
	for (i = 0; i < names->n_pids; i++) {
		memset(&t, 0, sizeof(t));
		if (cg2_of_pid(mnt, names->pids[i], &t, err, errlen) ||
		    target_allowed(&names->policy, mnt, &t, names->pids[i], err, errlen))
			return -1;
		t.kind = TK_PID;
		add_target(list, n, &t);
	}
	if (!pid_file && !names->n_cgroups && !names->n_units && !names->n_pids && !names->pods)
		pid_file = DEFAULT_PID_FILE;
	if (pid_file) {
		memset(&t, 0, sizeof(t));
		if (read_pid_file(pid_file, &pid, err, errlen)) {
			if (pid_file != names->pid_file)
				snprintf(err, errlen,
					 "no target: nginx pid file %s not found; name one with --cgroup, --nginx-pid or --nginx-pid-file",
					 DEFAULT_PID_FILE);
			return -1;
		}
		if (cg2_of_pid(mnt, pid, &t, err, errlen) ||
		    target_allowed(&names->policy, mnt, &t, pid, err, errlen))
			return -1;
		snprintf(t.reason, sizeof(t.reason), "named: nginx pid %d", pid);
		t.kind = TK_PIDFILE;
		snprintf(t.source, sizeof(t.source), "%s", pid_file);
		add_target(list, n, &t);
	}
	return 0;
}

bool target_alive(const struct cg_target *t)
{
	struct stat st;

	return !stat(t->path, &st) && st.st_ino == t->id;
}

int target_reresolve(const struct target_policy *p, const char *mnt, const struct cg_target *t,
		     struct cg_target *fresh, char *err, size_t errlen)
{
	int pid, ret;

	memset(fresh, 0, sizeof(*fresh));
	fresh->kind = t->kind;
	snprintf(fresh->source, sizeof(fresh->source), "%s", t->source);
	switch (t->kind) {
	case TK_PATH:
		ret = cg2_resolve(mnt, t->source, fresh, err, errlen);
		snprintf(fresh->reason, sizeof(fresh->reason), "named: --cgroup");
		break;
	case TK_UNIT:
		ret = cg2_of_unit(mnt, t->source, fresh, err, errlen);
		break;
	case TK_PIDFILE:
		ret = read_pid_file(t->source, &pid, err, errlen);
		if (!ret)
			ret = cg2_of_pid(mnt, pid, fresh, err, errlen);
		if (!ret)
			ret = target_allowed(p, mnt, fresh, pid, err, errlen);
		snprintf(fresh->reason, sizeof(fresh->reason), "named: nginx pid %d", pid);
		break;
	default:
		ret = -ENOENT;
	}
	fresh->kind = t->kind;
	snprintf(fresh->source, sizeof(fresh->source), "%s", t->source);
	return ret;
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "netns.h"

struct netns_list {
	struct netns_ref *v;
	size_t n, cap;
};

/*
 * Enter pid's network namespace through a pidfd (5.8+): setns() with a
 * pidfd checks CAP_SYS_ADMIN over the namespace only (kernel/nsproxy.c),
 * where opening /proc/PID/ns/net asks ptrace rights on pid
 * (proc_ns_get_link), which a container that dropped its capabilities to
 * ours lacks over processes that kept more (the DaemonSet, the compose
 * sidecar).  0, or -errno.
 */
static int enter_by_pidfd(int pid)
{
	int fd = syscall(SYS_pidfd_open, pid, 0), ret = 0;

	if (fd < 0)
		return -errno;
	if (setns(fd, CLONE_NEWNET))
		ret = -errno;
	close(fd);
	return ret;
}

/* The inode of pid's network namespace: stat where allowed, else enter it
 * and look at our own (the caller comes back).  0 when it is gone. */
static uint64_t netns_ino(int pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", pid);
	if (!stat(path, &st))
		return st.st_ino;
	if (errno != EACCES || enter_by_pidfd(pid) || stat("/proc/self/ns/net", &st))
		return 0;
	return st.st_ino;
}

/* Add pid's namespace unless it is there already.  0, or -ENOMEM. */
static int add_pid(struct netns_list *l, int pid)
{
	struct netns_ref *grown;
	struct stat st;
	size_t i;

	st.st_ino = netns_ino(pid);
	if (!st.st_ino)
		return 0; /* gone meanwhile */
	for (i = 0; i < l->n; i++)
		if (l->v[i].ino == st.st_ino)
			return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;

		grown = realloc(l->v, cap * sizeof(*l->v));
		if (!grown)
			return -ENOMEM;
		l->v = grown;
		l->cap = cap;
	}
	l->v[l->n++] = (struct netns_ref){ .ino = st.st_ino, .pid = pid };
	return 0;
}

static int done(struct netns_list *l, int ret, struct netns_ref **out, size_t *n)
{
	if (ret) {
		free(l->v);
		l->v = NULL;
		l->n = 0;
	}
	*out = l->v;
	*n = l->n;
	return ret;
}

int netns_of_all(struct netns_ref **out, size_t *n)
{
	struct netns_list l = { 0 };
	int ret = 0, self = netns_save();
	struct dirent *de;
	DIR *d;

	d = opendir("/proc");
	if (!d) {
		netns_restore(self);
		return done(&l, -errno, out, n);
	}
	while (!ret && (de = readdir(d)))
		if (de->d_name[0] >= '1' && de->d_name[0] <= '9')
			ret = add_pid(&l, atoi(de->d_name));
	closedir(d);
	netns_restore(self); /* netns_ino may have entered some */
	return done(&l, ret, out, n);
}

int netns_of_cgroups(const struct cg_target *cgs, int ncg, struct netns_ref **out, size_t *n)
{
	struct netns_list l = { 0 };
	char path[PATH_MAX + 16];
	int i, pid, seen, ret = 0;
	FILE *f;

	int self = netns_save();

	for (i = 0; !ret && i < ncg; i++) {
		snprintf(path, sizeof(path), "%s/cgroup.procs", cgs[i].path);
		f = fopen(path, "re");
		if (!f)
			continue;
		for (seen = 0; !ret && seen < 4096 && fscanf(f, "%d", &pid) == 1; seen++)
			ret = add_pid(&l, pid);
		fclose(f);
	}
	netns_restore(self);
	return done(&l, ret, out, n);
}

int netns_enter(const struct netns_ref *ns)
{
	char path[64];
	struct stat st;
	int fd, ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", ns->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno != EACCES)
			return -errno;
		/* no ptrace rights on it: through a pidfd, then check we
		 * landed in the namespace we meant (the pid may be reused) */
		ret = enter_by_pidfd(ns->pid);
		if (!ret && (stat("/proc/self/ns/net", &st) || st.st_ino != ns->ino))
			ret = -ESRCH;
		return ret;
	}
	/* the pid may be another process's by now */
	if (fstat(fd, &st) || st.st_ino != ns->ino)
		ret = -ESRCH;
	else if (setns(fd, CLONE_NEWNET))
		ret = -errno;
	close(fd);
	return ret;
}

int netns_save(void)
{
	int fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

void netns_restore(int saved)
{
	if (saved < 0)
		return;
	/* our own namespace: can't fail short of the kernel failing us */
	if (setns(saved, CLONE_NEWNET))
		perror("ngx-sockmap: returning to the agent's network namespace");
	close(saved);
}

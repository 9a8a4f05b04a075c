// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include "netns.h"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71 /* 5.14+, include/uapi/asm-generic/socket.h */
#endif

/* netns_enter() took us out of our own namespace since netns_save() */
static bool left;

struct netns_list {
	struct netns_ref *v;
	size_t n, cap;
	int seen;       /* processes whose namespace we could open */
	int denied;     /* processes whose namespace we may not open */
	int denied_err;
};

/* Add pid's namespace unless it is there already.  0, or -ENOMEM. */
static int add_pid(struct netns_list *l, int pid)
{
	struct netns_ref *grown;
	char path[64];
	struct stat st;
	size_t i;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", pid);
	if (stat(path, &st)) {
		/* gone meanwhile (ENOENT, ESRCH), or not ours to open: a
		 * process of other credentials needs ptrace access
		 * (fs/proc/namespaces.c, PTRACE_MODE_READ_FSCREDS), i.e.
		 * CAP_SYS_PTRACE in a container */
		if (errno == EACCES || errno == EPERM) {
			l->denied++;
			l->denied_err = errno;
		}
		return 0;
	}
	l->seen++;
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
	struct dirent *de;
	int ret = 0;
	DIR *d;

	d = opendir("/proc");
	if (!d)
		return done(&l, -errno, out, n);
	while (!ret && (de = readdir(d)))
		if (de->d_name[0] >= '1' && de->d_name[0] <= '9')
			ret = add_pid(&l, atoi(de->d_name));
	closedir(d);
	return done(&l, ret, out, n);
}

int netns_of_cgroups(const struct cg_target *cgs, int ncg, struct netns_ref **out, size_t *n,
		     int *unresolved, int *err)
{
	struct netns_list l = { 0 };
	char path[PATH_MAX + 16];
	int i, pid, seen, ret = 0;
	FILE *f;

	*unresolved = *err = 0;
	for (i = 0; !ret && i < ncg; i++) {
		snprintf(path, sizeof(path), "%s/cgroup.procs", cgs[i].path);
		f = fopen(path, "re");
		if (!f)
			continue;
		l.seen = l.denied = 0;
		for (seen = 0; !ret && seen < 4096 && fscanf(f, "%d", &pid) == 1; seen++)
			ret = add_pid(&l, pid);
		fclose(f);
		/* processes, but none whose namespace we may open: where
		 * they live (and so their addresses, their sockets) is
		 * unknown.  One readable process is enough: the processes of
		 * a pod share its namespace. */
		if (l.denied && !l.seen) {
			(*unresolved)++;
			*err = l.denied_err;
		}
	}
	return done(&l, ret, out, n);
}

int netns_enter(const struct netns_ref *ns)
{
	char path[64];
	struct stat st;
	int fd, ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", ns->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* the pid may be another process's by now */
	if (fstat(fd, &st) || st.st_ino != ns->ino)
		ret = -ESRCH;
	else if (setns(fd, CLONE_NEWNET))
		ret = -errno;
	else
		left = true;
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
	/* our own namespace: can't fail short of the kernel failing us; an
	 * agent that may not setns() never left it */
	if (left && setns(saved, CLONE_NEWNET))
		perror("ngx-sockmap: returning to the agent's network namespace");
	left = false;
	close(saved);
}

int netns_back(int saved)
{
	if (saved < 0)
		return -EBADF;
	if (!left)
		return 0;
	if (setns(saved, CLONE_NEWNET))
		return -errno;
	left = false;
	return 0;
}

int netns_can_enter(void)
{
	int fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (setns(fd, CLONE_NEWNET))
		err = -errno;
	close(fd);
	return err;
}

int netns_cookie(uint64_t *cookie)
{
	socklen_t len = sizeof(*cookie);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	*cookie = 0;
	if (fd < 0)
		return -errno;
	if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, cookie, &len))
		err = -errno;
	close(fd);
	return err ? err : *cookie ? 0 : -ENOENT;
}

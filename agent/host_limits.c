// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What the default --max-sockets is derived from, read off this host: its
 * RAM, fs.file-max, and the open-file limits of the targets' nginx
 * processes (options.c's max_sockets_default() turns them into a size).
 */
#define _GNU_SOURCE /* prlimit */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include "options.h"
#include "target.h"

/* Sum of the open-file limits of the nginx processes in the targets'
 * cgroups (0: none found): each connection nginx holds is one of them, so
 * it bounds worker_connections (nginx warns past it). */
static uint64_t nginx_files(const struct cg_target *t, int n)
{
	char path[PATH_MAX + 32], comm[32];
	uint64_t sum = 0;
	struct rlimit rl;
	FILE *f, *c;
	int i, pid;

	for (i = 0; i < n; i++) {
		if (snprintf(path, sizeof(path), "%s/cgroup.procs", t[i].path) >= (int)sizeof(path))
			continue;
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fscanf(f, "%d", &pid) == 1) {
			snprintf(path, sizeof(path), "/proc/%d/comm", pid);
			c = fopen(path, "re");
			if (!c)
				continue;
			if (fgets(comm, sizeof(comm), c) && !strcmp(comm, "nginx\n") &&
			    !prlimit(pid, RLIMIT_NOFILE, NULL, &rl) && rl.rlim_cur != RLIM_INFINITY)
				sum += rl.rlim_cur;
			fclose(c);
		}
		fclose(f);
	}
	return sum;
}

void host_limits_read(const struct cg_target *t, int n, struct host_limits *h)
{
	unsigned long long fm = 0;
	struct sysinfo si;
	FILE *f;

	memset(h, 0, sizeof(*h));
	if (!sysinfo(&si))
		h->mem_bytes = (uint64_t)si.totalram * si.mem_unit;
	f = fopen("/proc/sys/fs/file-max", "re");
	if (f && fscanf(f, "%llu", &fm) == 1)
		h->file_max = fm;
	if (f)
		fclose(f);
	h->nginx_files = nginx_files(t, n);
}

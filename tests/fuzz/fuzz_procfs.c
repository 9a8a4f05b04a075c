// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libFuzzer target: the agent's readers of files other processes write
 * (agent/target.c): nginx's pid file (pid_file_parse) and a process's
 * /proc/PID/cgroup (proc_cgroup_read), whose cgroup v1 lines name paths
 * that a container's user may choose.  The input is the file, read
 * through fmemopen as from disk.  Each result is checked against the
 * file split into whole lines: the pid is the first line's, all of it a
 * decimal pid; the cgroup is the rest of the first line that starts with
 * "0::", never a piece of a longer line.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "target.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The first line (without its '\n') as a pid: 1..INT_MAX, digits only. */
static int want_pid(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);
	size_t n = nl ? (size_t)(nl - data) : size, i;
	unsigned long long v = 0;

	if (!n)
		return -1;
	for (i = 0; i < n; i++) {
		if (data[i] < '0' || data[i] > '9')
			return -1;
		v = v * 10 + (data[i] - '0');
		if (v > INT_MAX)
			return -1;
	}
	return v >= 1 && v <= INT_MAX ? (int)v : -1;
}

/* The first whole line that starts with "0::": its rest in *path (*n bytes). */
static int want_cgroup(const uint8_t *data, size_t size, const uint8_t **path, size_t *n)
{
	const uint8_t *p = data, *end = data + size, *nl;

	while (p < end) {
		nl = memchr(p, '\n', end - p);
		if (!nl)
			nl = end;
		if (nl - p >= 3 && !memcmp(p, "0::", 3)) {
			*path = p + 3;
			*n = nl - p - 3;
			return 0;
		}
		p = nl + 1;
	}
	return -ENOENT;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char line[32], out[PATH_MAX];
	const uint8_t *path;
	size_t n;
	FILE *f;
	int ret;

	if (!size)
		return 0;
	f = fmemopen((void *)data, size, "r");
	if (!f)
		return 0;
	ret = pid_file_parse(f, line, sizeof(line));
	fclose(f);
	if (ret != want_pid(data, size))
		abort();

	f = fmemopen((void *)data, size, "r");
	if (!f)
		return 0;
	ret = proc_cgroup_read(f, out, sizeof(out));
	fclose(f);
	if (want_cgroup(data, size, &path, &n)) {
		if (ret != -ENOENT)
			abort();
	} else if (memchr(path, 0, n)) {
		/* the kernel writes no NUL in a path: whatever is taken */
	} else if (n >= sizeof(out)) {
		if (ret != -ENAMETOOLONG)
			abort();
	} else if (ret || strlen(out) != n || memcmp(out, path, n)) {
		abort();
	}
	return 0;
}

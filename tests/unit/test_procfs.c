// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The readers of files other processes write (agent/target.c): nginx's
 * pid file and /proc/PID/cgroup, each read whole line by whole line.
 * The cases longer than a buffer and with a NUL inside came from the fuzz
 * target (tests/fuzz/fuzz_procfs.c; its corpus keeps them).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "target.h"

static int pid_of(const char *file, size_t len)
{
	char line[32];
	FILE *f = fmemopen((void *)file, len, "r");
	int pid;

	if (!f)
		return -2;
	pid = pid_file_parse(f, line, sizeof(line));
	fclose(f);
	return pid;
}

static int cgroup_of(const char *file, char *out, size_t len)
{
	FILE *f = fmemopen((void *)file, strlen(file), "r");
	int ret;

	if (!f)
		return -2;
	ret = proc_cgroup_read(f, out, len);
	fclose(f);
	return ret;
}

static void test_pid_file(void)
{
	/* 27 zeros, then 12345: a line longer than the 31 bytes a 32-byte
	 * buffer takes, whose first 31 are a pid of their own (1234) */
	const char *lng = "00000000000000000000000000012345\n";

	CHECK(pid_of("1234\n", 5) == 1234, "a pid and its newline");
	CHECK(pid_of("1234", 4) == 1234, "a pid without a newline");
	CHECK(pid_of("1234\n5678\n", 10) == 1234, "the first line");
	CHECK(pid_of("", 0) == -1, "an empty file");
	CHECK(pid_of("0\n", 2) == -1, "pid 0");
	CHECK(pid_of(" 1234\n", 6) == -1, "a blank before");
	CHECK(pid_of("1234 \n", 6) == -1, "a blank after");
	CHECK(pid_of(lng, strlen(lng)) == 12345, "a line longer than the buffer: %d, want 12345",
	      pid_of(lng, strlen(lng)));
	CHECK(pid_of("00000000000000000000000000001234x\n", 34) == -1,
	      "a long line that is not a pid, past the buffer: %d",
	      pid_of("00000000000000000000000000001234x\n", 34));
	CHECK(pid_of("3\0\0\0\n", 5) == -1, "a NUL in the line: %d, want -1",
	      pid_of("3\0\0\0\n", 5));
}

static void test_proc_cgroup(void)
{
	static char file[3 * PATH_MAX];
	char out[PATH_MAX];
	size_t n;

	CHECK(!cgroup_of("12:pids:/a\n1:name=systemd:/a\n0::/system.slice/nginx.service\n", out,
			 sizeof(out)) && !strcmp(out, "/system.slice/nginx.service"),
	      "a hybrid host's lines: '%s'", out);
	CHECK(cgroup_of("1:name=systemd:/a\n", out, sizeof(out)) == -ENOENT, "no 0:: line");
	CHECK(!cgroup_of("0::/\n", out, sizeof(out)) && !strcmp(out, "/"), "the root");
	CHECK(cgroup_of("0::/abcdef\n", out, 4) == -ENAMETOOLONG, "longer than out");
	/* A cgroup v1 path (which a container's user may choose) long
	 * enough that "0::/evil" falls where a line buffer of PATH_MAX + 16
	 * ends: it is the middle of that line, not a line. */
	n = snprintf(file, sizeof(file), "1:name=systemd:/");
	memset(file + n, 'd', PATH_MAX + 15 - n);
	n = PATH_MAX + 15;
	n += snprintf(file + n, sizeof(file) - n, "0::/evil\n0::/good\n");
	CHECK(!cgroup_of(file, out, sizeof(out)) && !strcmp(out, "/good"),
	      "a long v1 line is one line: '%.20s', want '/good'", out);
}

int main(void)
{
	test_pid_file();
	test_proc_cgroup();
	return CHECK_SUMMARY();
}

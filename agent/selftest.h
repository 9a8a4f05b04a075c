/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Probe this kernel's redirect path before trusting it: a private cgroup, a
 * private copy of the data plane, real loopback sockets in a child process
 * moved into that cgroup.  Checks that can corrupt data are CRITICAL (the
 * agent won't accelerate); the others are reported.
 */
#ifndef NGX_SOCKMAP_SELFTEST_H
#define NGX_SOCKMAP_SELFTEST_H

#include <stdbool.h>
#include <stdio.h>

enum st_result { ST_PASS, ST_FAIL, ST_SKIP };

struct selftest_check {
	const char *name;
	bool critical;       /* failure can lose, corrupt or reorder bytes */
	const char *what;
	enum st_result result;
	char detail[96];
};

#define SELFTEST_CHECKS 8

struct selftest_report {
	struct selftest_check checks[SELFTEST_CHECKS];
	bool ran;
	bool critical_failure;
	bool slow_reader_fallback_safe; /* FIONREAD sees TCP bytes: fallback OK */
	int failures;
};

/* Run every check.  0 when it could run (results in r), -errno otherwise. */
int selftest_run(const char *cg2_mnt, struct selftest_report *r);
void selftest_print(FILE *out, const struct selftest_report *r);
const char *selftest_result_name(enum st_result res);

#endif

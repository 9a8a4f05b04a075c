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

/* The checks, in the order they are printed (the table is in selftest.c). */
enum selftest_id {
	C_REDIRECT, C_ORDER, C_LARGE, C_HALF_CLOSE, C_FIONREAD, C_UNREAD_BOUND, C_RESET,
	C_FIONREAD_TCP, C_BLOCKING_EOF, C_BOUND, C_SPLICE_READ,
	SELFTEST_CHECKS
};

struct selftest_check {
	const char *name;
	bool critical;       /* failure can lose, corrupt or reorder bytes */
	const char *what;
	enum st_result result;
	char detail[96];
};

struct selftest_report {
	struct selftest_check checks[SELFTEST_CHECKS];
	bool ran;
	bool critical_failure;
	bool splice_reads_ingress;      /* splicing readers need nothing */
	bool slow_reader_fallback_safe; /* FIONREAD sees TCP bytes: fallback OK */
	int reset_mech;                 /* enum reset_mech the reset check used */
	int failures;
};

/* Run every check; the reset check ends a connection with resets (enum
 * reset_mech: iter/tcp or sock_diag, what the agent will use) and, with
 * fallback, with sock_diag where iter/tcp can't (r->reset_mech says which
 * passed).  0 when it could run (results in r), -errno otherwise. */
int selftest_run(const char *cg2_mnt, int resets, bool fallback, struct selftest_report *r);
void selftest_print(FILE *out, const struct selftest_report *r);
const char *selftest_result_name(enum st_result res);
/* A check in one line (agent.state, the run's warnings): a failure's
 * detail where it has one, else what the check proves. */
const char *selftest_summary(const struct selftest_check *c);

/* selftest_checks.c: the socket-level checks, run in the child inside the
 * private cgroup.  config_fd: the private data plane's config map (the
 * fionread_tcp check forces sends through TCP with it); stats_fd: its
 * counters (a data check must have redirected bytes to count). */
void selftest_run_checks(struct selftest_check *res, int config_fd, int stats_fd);

#endif

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The one answer to "is my nginx accelerated?", and why not: what
 * `status` says first and exits with, and what `accelerating` means in
 * `status --json` and /metrics.  Accelerating takes all of: an agent
 * running (its loop ticked within VERDICT_STALE_SEC: a pinned data plane
 * alone keeps old pairs but pairs no new connection), not paused (the
 * self-test, an unguarded hazard, `pause`), attached to at least one
 * cgroup, and, where connections were made in the last five minutes,
 * some of them paired.
 *
 * The agent keeps the five-minute window (pair_window, every tick) in its
 * gauges, so the answer is the same whoever reads it.
 */
#ifndef NGX_SOCKMAP_VERDICT_H
#define NGX_SOCKMAP_VERDICT_H

#include <stddef.h>
#include <stdint.h>

struct counters;

/* X(enum, word, exit code of `status`) */
#define VERDICTS(X)                                          \
	X(V_ACCELERATING, "accelerating", 0)                 \
	X(V_NO_AGENT, "no agent running", 6)                 \
	X(V_PAUSED, "paused", 3)                             \
	X(V_NO_CGROUP, "attached to no cgroup", 4)           \
	X(V_NOT_PAIRING, "connections made, none paired", 5)

#define VERDICT_ENUM(e, word, code) e,
enum verdict { VERDICTS(VERDICT_ENUM) V__MAX };

/* An agent whose loop has not ticked for this long is not running (the
 * same bound as `health`'s default --max-age). */
#define VERDICT_STALE_SEC 30
/* The window, and what "connections were made" takes in it: tracked
 * sockets (two per local connection) and connections skipped as remote. */
#define PAIR_WINDOW_SEC 300
#define PAIR_WINDOW_STEP_SEC 10
#define NOT_PAIRING_MIN_CONNS 20

/* Counts over the last PAIR_WINDOW_SEC, from samples every
 * PAIR_WINDOW_STEP_SEC (the agent's). */
struct pair_window {
	uint64_t pairs[PAIR_WINDOW_SEC / PAIR_WINDOW_STEP_SEC + 1];
	uint64_t conns[PAIR_WINDOW_SEC / PAIR_WINDOW_STEP_SEC + 1];
	unsigned int next, filled;
};
/* Take one sample of the running totals; *pairs and *conns: how much
 * they grew over the window (as far as it reaches yet). */
void pair_window_add(struct pair_window *w, uint64_t pairs, uint64_t conns,
		     uint64_t *recent_pairs, uint64_t *recent_conns);

/* The verdict of what counters_read() read, at CLOCK_BOOTTIME now_ns. */
enum verdict verdict_of(const struct counters *c, uint64_t now_ns);
const char *verdict_word(enum verdict v);
int verdict_exit_code(enum verdict v);
/* One line: "accelerating: ..." or "NOT accelerating: WHY ...". */
void verdict_line(const struct counters *c, enum verdict v, const char *paused_why, char *buf,
		  size_t len);

#endif

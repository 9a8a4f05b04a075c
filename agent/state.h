/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * How `status`, `pause`, `resume` and `top` reach a running agent: the agent
 * writes <run dir>/agent.state (JSON: its pid, the ids of its maps, its
 * cgroups, self-test results, where its event rings are) and holds an flock
 * on <run dir>/agent.lock.  Other commands open the maps by id (checking
 * their names: ids are reused) or, with no live agent, from the pins of a
 * --pin run.  No control protocol: the maps are the interface.  Both files
 * are root's alone (0600): they hold kernel object ids and the address the
 * agent mapped its arenas at.
 */
#ifndef NGX_SOCKMAP_STATE_H
#define NGX_SOCKMAP_STATE_H

#include <net/if.h>
#include <stdbool.h>
#include "maps.h"
#include "names.h"
#include "selftest.h"
#include "target.h"
#include "telemetry.h" /* XDP_MAX_IFACES */

struct selftest_line {
	char name[24];
	char result[8];       /* pass, FAIL, skip */
	bool critical;        /* a failure keeps the data plane paused */
	char detail[96];
};

/* Where an event ring is: its arena mapped at addr (every process must map
 * an arena where its first user did, kernel/bpf/arena.c arena_map_mmap),
 * the ring off bytes into it.  addr 0: no such ring. */
struct ring_place {
	unsigned long addr, off;
	char transport[8];     /* "arena", "ringbuf", "" (no such stream) */
};

enum { RING_CONN, RING_PKT, RING__MAX };

/* What a redirect can't do as TCP would, and what the agent guards it
 * with on this host (chosen at start: enforcer_plan, guard_load). */
#define HAZARDS(X)                                                          \
	X(HZ_RESETS, "resets") /* ending a connection: iter/tcp, sock_diag */   \
	X(HZ_UNREAD, "unread") /* unread bytes, the budget: iter/sockmap, watch */ \
	X(HZ_SPLICE, "splice") /* splice(2) readers: fentry, tracepoints */     \
	X(HZ_OOB, "oob")       /* MSG_OOB sends: fentry, tracepoints */         \
	X(HZ_ULP, "ulp")       /* setsockopt(TCP_ULP): cgroup/setsockopt */
enum hazard { HAZARDS(NAMES_ENUM) HZ__MAX };
extern const char *const hazard_names[HZ__MAX];

struct hazard_guard {
	char mech[16];   /* the mechanism; "none": unguarded, "not needed" */
	char why[80];    /* why not a stronger one, or why unguarded */
};

/*
 * What agent.state says, each fact written by its owner: the run
 * (runtime.c) its pid, cgroups, rings, interfaces, guards and the one
 * decision whether it accelerates (decide()); the guard its description
 * (guard_describe); the self-test's report its lines, through
 * state_set_selftest().  state.c serialises it and reads it back.
 */
struct agent_info {
	int pid;              /* 0: no live agent (pinned state only) */
	bool pinned;
	bool selftest_blocked; /* kept paused: the self-test, a hazard unguarded, no netns */
	char selftest_error[160]; /* why: the first reason found */
	struct cg_target cgroups[MAX_TARGETS];
	int n_cgroups;
	struct selftest_line selftest[SELFTEST_CHECKS]; /* state_set_selftest() */
	int n_selftest;
	struct {
		char name[IF_NAMESIZE];
		char mode[8];   /* native, generic */
	} xdp[XDP_MAX_IFACES];
	int n_xdp;
	char metrics[64];       /* listen address, "" when off */
	char guard_hooks[16];   /* the guard's hooks: fentry, tracepoints; "" without one */
	char guard_why[80];     /* why tracepoints: "fentry refused: ...", "--guard-hooks tracepoints" */
	char guard_ia32[8];     /* tracepoints on x86-64: "guarded", "standby" (no 32-bit program yet), "unseen" (hook refused), "off"; else "" */
	struct hazard_guard guards[HZ__MAX];
	char netns_scope[80];   /* "": every namespace; else why only its own */
	struct ring_place rings[RING__MAX];
};

/* Take the single-agent lock.  Returns the lock fd, or -EBUSY with the
 * other agent's pid in *other_pid, or -errno. */
int state_lock(int *other_pid);
/* The lines of a self-test that ran, as agent.state keeps them. */
void state_set_selftest(struct agent_info *info, const struct selftest_report *r);
/* Write agent.state atomically (temp file + rename), map ids from m. */
int state_write(const struct agent_info *info, const struct agent_maps *m);
/* Remove agent.state and drop the lock. */
void state_remove(int lock_fd);
/* Open the maps of the running agent, else of the pinned data plane.
 * 0, or -ENOENT with a message in err. */
int state_open(struct agent_maps *m, struct agent_info *info, char *err, size_t errlen);
void state_close(struct agent_maps *m);

#endif

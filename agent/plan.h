/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Whether this run accelerates, and what guards each hazard: decided once
 * at start, as pure functions of what the agent found out (the self-test's
 * report, what loaded for each hazard, how far it reaches into network
 * namespaces, the options).  runtime.c gathers the facts and applies the
 * plan; agent.state carries it to `status`, `/metrics` and the ready line.
 * Being pure, every kind of host README's "What each host gets" lists is a
 * row of tests/unit/test_plan.c.
 *
 * Two steps, because the self-test runs before the data plane loads:
 *   plan_load()    what the self-test changes in what is loaded (the TCP
 *                  fallbacks, the splice hook, sock_diag where iter/tcp
 *                  could not end a connection);
 *   plan_decide()  after loading: the mechanism per hazard and the one
 *                  verdict, accelerate or stay paused and why.
 */
#ifndef NGX_SOCKMAP_PLAN_H
#define NGX_SOCKMAP_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include "enforcer.h" /* struct enforce_plan */
#include "guard.h"    /* enum guard_hooks */
#include "names.h"
#include "selftest.h"
#include "state.h"    /* enum hazard, struct agent_info */

/* What guards a hazard; the names are what status and /metrics show. */
#define MECHS(X)                               \
	X(MECH_NONE, "none")     /* unguarded */ \
	X(MECH_NOT_NEEDED, "not needed")         \
	X(MECH_ITER_TCP, "iter/tcp")             \
	X(MECH_SOCK_DIAG, "sock_diag")           \
	X(MECH_ITER_SOCKMAP, "iter/sockmap")     \
	X(MECH_WATCH, "watch")                   \
	X(MECH_FENTRY, "fentry")                 \
	X(MECH_TRACEPOINTS, "tracepoints")       \
	X(MECH_SETSOCKOPT, "setsockopt")
enum mech { MECHS(NAMES_ENUM) MECH__MAX };
extern const char *const mech_names[MECH__MAX];

/* How far the agent reaches into network namespaces (setns, the netns
 * cookie): every one, only its own, or none it can name. */
enum netns_reach { NETNS_ALL, NETNS_OWN, NETNS_BLIND };

/* Why a run stays paused: the first reason found, in this order. */
enum pause_reason {
	PAUSE_NONE,
	PAUSE_SELFTEST_DID_NOT_RUN,
	PAUSE_SELFTEST_CRITICAL,  /* a critical check failed */
	PAUSE_UNGUARDED,          /* a hazard has no mechanism here */
	PAUSE_NETNS_BLIND,        /* not even its own namespace (--force can't help) */
};

/* What the self-test changes in what is loaded. */
struct load_plan {
	bool slow_reader_fallback; /* the TCP fallback was proved safe */
	bool splice_guard;         /* splice(2) does not read redirected bytes */
};

struct plan_facts {
	int selftest_err;                     /* 0, or -errno: it could not run */
	const struct selftest_report *selftest; /* when it ran */
	const struct enforce_plan *enforce;   /* after plan_load */
	int enforcer_err;                     /* enforcer_start's result */
	bool guard_loaded;                    /* at least its ULP refusal */
	enum guard_hooks hooks;               /* what loaded: FENTRY, TRACEPOINTS, NONE */
	const char *hooks_why;                /* guard_describe's why */
	bool splice_guard;                    /* load_plan's */
	enum netns_reach netns;
	bool force;                           /* --force */
};

struct plan {
	bool paused;              /* keep the data plane paused */
	bool overridden;          /* it would be, but --force */
	enum pause_reason reason; /* PAUSE_NONE: nothing against it */
	char why[160];            /* the reason in words (agent.state's selftest_error) */
	struct {
		enum mech mech;
		char why[80];     /* why not a stronger one, or why unguarded */
	} guards[HZ__MAX];
};

/* Before the data plane loads: what the self-test's report changes (a
 * self-test that did not run proves nothing: the safe side of each).
 * ep->resets moves to the mechanism the self-test's reset check proved. */
void plan_load(int selftest_err, const struct selftest_report *r, struct enforce_plan *ep,
	       struct load_plan *out);
/* After loading: the mechanism of each hazard and the verdict. */
void plan_decide(const struct plan_facts *f, struct plan *p);
/* Say what matters in the self-test's report, as soon as it is known:
 * why it could not run, or each failure and what follows from it. */
void plan_warn_selftest(int selftest_err, const struct selftest_report *r, bool force);
/* Say each unguarded hazard and what follows from it. */
void plan_warn_unguarded(const struct plan *p, bool force);
/* The plan as agent.state keeps it (guards, selftest_blocked, why). */
void plan_publish(const struct plan *p, struct agent_info *info);

#endif

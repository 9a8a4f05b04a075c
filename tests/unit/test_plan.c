// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The accelerate-or-not decision (agent/plan.c) as a table: one row per
 * kind of host README's "What each host gets" lists, then the rows the
 * options and failures add (--force, a blind agent, splice not needed, an
 * enforcer that did not start), then what the self-test changes in what
 * is loaded (plan_load). */
#include <errno.h>
#include <string.h>
#include "check.h"
#include "plan.h"

/* A self-test report: every check passed, or the named one failed. */
static void report(struct selftest_report *r, const char *failed, bool critical)
{
	static const char *const names[SELFTEST_CHECKS] = { [0] = "reset" };
	int i;

	memset(r, 0, sizeof(*r));
	r->ran = true;
	for (i = 0; i < SELFTEST_CHECKS; i++) {
		r->checks[i].name = names[i] ?: "check";
		r->checks[i].what = "what it proves";
		r->checks[i].result = ST_PASS;
	}
	if (!failed)
		return;
	r->checks[0].name = failed;
	r->checks[0].critical = critical;
	r->checks[0].result = ST_FAIL;
	snprintf(r->checks[0].detail, sizeof(r->checks[0].detail), "could not end a connection");
	r->failures = 1;
}

struct row {
	const char *host;
	/* facts */
	enum reset_mech resets;
	enum unread_mech unread;
	enum guard_hooks hooks;
	bool guard_loaded;
	bool splice_guard;
	enum netns_reach netns;
	int selftest_err;
	const char *failed_check; /* a check that failed: "reset" is critical */
	int enforcer_err;
	bool force;
	/* the plan */
	enum mech want[HZ__MAX];
	bool paused, overridden;
	enum pause_reason reason;
	const char *why; /* the start of p.why */
};

#define ALL_GUARDED(r, u, s) { MECH_##r, MECH_##u, MECH_##s, MECH_##s, MECH_SETSOCKOPT }

static const struct row rows[] = {
	/* README "What each host gets", top to bottom */
	{ "tracing programs allowed", RESETS_ITER, UNREAD_ITER, GUARD_HOOKS_FENTRY, true, true,
	  NETNS_ALL, 0, NULL, 0, false, ALL_GUARDED(ITER_TCP, ITER_SOCKMAP, FENTRY), false,
	  false, PAUSE_NONE, "" },
	{ "fentry and iter/sockmap refused", RESETS_ITER, UNREAD_WATCH, GUARD_HOOKS_TRACEPOINTS,
	  true, true, NETNS_ALL, 0, NULL, 0, false, ALL_GUARDED(ITER_TCP, WATCH, TRACEPOINTS),
	  false, false, PAUSE_NONE, "" },
	{ "every tracing program refused", RESETS_SOCK_DIAG, UNREAD_WATCH,
	  GUARD_HOOKS_TRACEPOINTS, true, true, NETNS_ALL, 0, NULL, 0, false,
	  ALL_GUARDED(SOCK_DIAG, WATCH, TRACEPOINTS), false, false, PAUSE_NONE, "" },
	{ "no tracepoints either", RESETS_SOCK_DIAG, UNREAD_WATCH, GUARD_HOOKS_NONE, true, true,
	  NETNS_ALL, 0, NULL, 0, false,
	  { MECH_SOCK_DIAG, MECH_WATCH, MECH_NONE, MECH_NONE, MECH_SETSOCKOPT }, true, false,
	  PAUSE_UNGUARDED, "splice unguarded: " },
	{ "neither iter/tcp nor INET_DIAG_DESTROY", RESETS_SOCK_DIAG, UNREAD_WATCH,
	  GUARD_HOOKS_TRACEPOINTS, true, true, NETNS_ALL, 0, "reset", 0, false,
	  ALL_GUARDED(SOCK_DIAG, WATCH, TRACEPOINTS), true, false, PAUSE_SELFTEST_CRITICAL,
	  "reset: could not end a connection" },
	{ "least-privilege container", RESETS_SOCK_DIAG, UNREAD_WATCH, GUARD_HOOKS_TRACEPOINTS,
	  true, true, NETNS_OWN, 0, NULL, 0, false, ALL_GUARDED(SOCK_DIAG, WATCH, TRACEPOINTS),
	  false, false, PAUSE_NONE, "" },
	{ "least-privilege container without CAP_DAC_OVERRIDE", RESETS_SOCK_DIAG, UNREAD_WATCH,
	  GUARD_HOOKS_TRACEPOINTS, true, true, NETNS_OWN, -EACCES, NULL, 0, false,
	  ALL_GUARDED(SOCK_DIAG, WATCH, TRACEPOINTS), true, false, PAUSE_SELFTEST_DID_NOT_RUN,
	  "the self-test could not run: Permission denied" },
	/* what options and failures add */
	{ "no tracepoints, --force", RESETS_SOCK_DIAG, UNREAD_WATCH, GUARD_HOOKS_NONE, true, true,
	  NETNS_ALL, 0, NULL, 0, true,
	  { MECH_SOCK_DIAG, MECH_WATCH, MECH_NONE, MECH_NONE, MECH_SETSOCKOPT }, false, true,
	  PAUSE_UNGUARDED, "splice unguarded: " },
	{ "no namespace it can name, --force", RESETS_SOCK_DIAG, UNREAD_WATCH,
	  GUARD_HOOKS_TRACEPOINTS, true, true, NETNS_BLIND, 0, NULL, 0, true,
	  ALL_GUARDED(SOCK_DIAG, WATCH, TRACEPOINTS), true, false, PAUSE_NETNS_BLIND,
	  "setns refused and no netns cookie" },
	{ "splice(2) reads redirected bytes", RESETS_ITER, UNREAD_ITER, GUARD_HOOKS_FENTRY, true,
	  false, NETNS_ALL, 0, NULL, 0, false,
	  { MECH_ITER_TCP, MECH_ITER_SOCKMAP, MECH_NOT_NEEDED, MECH_FENTRY, MECH_SETSOCKOPT },
	  false, false, PAUSE_NONE, "" },
	{ "the enforcer did not start", RESETS_ITER, UNREAD_ITER, GUARD_HOOKS_FENTRY, true, true,
	  NETNS_ALL, 0, NULL, -ENOMEM, false,
	  { MECH_NONE, MECH_NONE, MECH_FENTRY, MECH_FENTRY, MECH_SETSOCKOPT }, true, false,
	  PAUSE_UNGUARDED, "resets unguarded: Cannot allocate memory" },
	{ "the guard did not load", RESETS_ITER, UNREAD_ITER, GUARD_HOOKS_NONE, false, true,
	  NETNS_ALL, 0, NULL, 0, false,
	  { MECH_ITER_TCP, MECH_ITER_SOCKMAP, MECH_NONE, MECH_NONE, MECH_NONE }, true, false,
	  PAUSE_UNGUARDED, "splice unguarded: the guard did not load" },
	{ "a non-critical failure", RESETS_ITER, UNREAD_ITER, GUARD_HOOKS_FENTRY, true, true,
	  NETNS_ALL, 0, "fionread_tcp", 0, false, ALL_GUARDED(ITER_TCP, ITER_SOCKMAP, FENTRY),
	  false, false, PAUSE_NONE, "" },
};

static void test_decide(void)
{
	struct selftest_report r;
	struct enforce_plan ep;
	struct plan_facts f;
	struct plan p;
	size_t i;
	int h;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *w = &rows[i];

		report(&r, w->failed_check,
		       w->failed_check && strcmp(w->failed_check, "reset") == 0);
		memset(&ep, 0, sizeof(ep));
		ep.resets = w->resets;
		ep.unread = w->unread;
		f = (struct plan_facts){
			.selftest_err = w->selftest_err,
			.selftest = w->selftest_err ? NULL : &r,
			.enforce = &ep,
			.enforcer_err = w->enforcer_err,
			.guard_loaded = w->guard_loaded,
			.hooks = w->hooks,
			.hooks_why = w->hooks == GUARD_HOOKS_NONE ? "tracefs not mounted" : "",
			.splice_guard = w->splice_guard,
			.netns = w->netns,
			.force = w->force,
		};
		plan_decide(&f, &p);
		for (h = 0; h < HZ__MAX; h++)
			CHECK(p.guards[h].mech == w->want[h], "%s: %s by %s, want %s", w->host,
			      hazard_names[h], mech_names[p.guards[h].mech], mech_names[w->want[h]]);
		CHECK(p.paused == w->paused, "%s: paused %d, want %d", w->host, p.paused, w->paused);
		CHECK(p.overridden == w->overridden, "%s: overridden %d", w->host, p.overridden);
		CHECK(p.reason == w->reason, "%s: reason %d, want %d", w->host, p.reason, w->reason);
		CHECK(strncmp(p.why, w->why, strlen(w->why)) == 0 && (*w->why || !*p.why),
		      "%s: why \"%s\", want \"%s...\"", w->host, p.why, w->why);
	}
}

/* The first unguarded hazard is the one named; every one is in guards[]. */
static void test_publish(void)
{
	struct agent_info info;
	struct enforce_plan ep = { .resets = RESETS_SOCK_DIAG, .unread = UNREAD_WATCH };
	struct plan_facts f = { .enforce = &ep, .guard_loaded = true,
				.hooks = GUARD_HOOKS_NONE, .hooks_why = "no tracefs",
				.splice_guard = true };
	struct selftest_report r;
	struct plan p;

	report(&r, NULL, false);
	f.selftest = &r;
	plan_decide(&f, &p);
	memset(&info, 0, sizeof(info));
	plan_publish(&p, &info);
	CHECK(strcmp(info.guards[HZ_SPLICE].mech, "none") == 0, "splice: %s",
	      info.guards[HZ_SPLICE].mech);
	CHECK(strcmp(info.guards[HZ_SPLICE].why, "no tracefs") == 0, "why: %s",
	      info.guards[HZ_SPLICE].why);
	CHECK(strcmp(info.guards[HZ_RESETS].mech, "sock_diag") == 0, "resets: %s",
	      info.guards[HZ_RESETS].mech);
	CHECK(info.selftest_blocked, "blocked");
	CHECK(strcmp(info.selftest_error, "splice unguarded: no tracefs") == 0, "error: %s",
	      info.selftest_error);
}

static void test_load(void)
{
	struct selftest_report r;
	struct enforce_plan ep;
	struct load_plan lp;

	/* a self-test that did not run proves nothing: the safe side */
	memset(&ep, 0, sizeof(ep));
	ep.resets = RESETS_ITER;
	plan_load(-EPERM, NULL, &ep, &lp);
	CHECK(!lp.slow_reader_fallback && lp.splice_guard, "not run: no fallback, splice guarded");
	CHECK(ep.resets == RESETS_ITER, "not run: resets unchanged");

	report(&r, NULL, false);
	r.slow_reader_fallback_safe = true;
	r.splice_reads_ingress = true;
	r.reset_mech = RESETS_ITER;
	plan_load(0, &r, &ep, &lp);
	CHECK(lp.slow_reader_fallback && !lp.splice_guard, "proved: fallback, splice needs none");
	CHECK(ep.resets == RESETS_ITER && !*ep.resets_why, "iter/tcp proved: kept");

	/* iter/tcp loaded, but the self-test's reset passed only with sock_diag */
	r.reset_mech = RESETS_SOCK_DIAG;
	plan_load(0, &r, &ep, &lp);
	CHECK(ep.resets == RESETS_SOCK_DIAG, "moved to sock_diag: %d", ep.resets);
	CHECK(strstr(ep.resets_why, "iter/tcp") != NULL, "says why: %s", ep.resets_why);
}

int main(void)
{
	test_decide();
	test_publish();
	test_load();
	return CHECK_SUMMARY();
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The decision whether this run accelerates, from the facts runtime.c
 * gathered (plan.h says which).  plan_load() and plan_decide() read only
 * their arguments, so tests/unit/test_plan.c covers them as a table; the
 * warnings are kept apart, in plan_warn_*().
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "log.h"
#include "plan.h"

const char *const mech_names[MECH__MAX] = { MECHS(NAMES_STR) };

void plan_load(int selftest_err, const struct selftest_report *r, struct enforce_plan *ep,
	       struct load_plan *out)
{
	bool ran = !selftest_err && r;

	out->slow_reader_fallback = ran && r->slow_reader_fallback_safe;
	out->splice_guard = !(ran && r->splice_reads_ingress);
	if (ran && ep->resets != (enum reset_mech)r->reset_mech) {
		/* iter/tcp loaded but could not end a connection */
		snprintf(ep->resets_why, sizeof(ep->resets_why), "iter/tcp: %.60s",
			 "loads, but the self-test's reset failed with it");
		ep->resets = r->reset_mech;
	}
}

static void set_guard(struct plan *p, enum hazard h, enum mech m, const char *why)
{
	p->guards[h].mech = m;
	snprintf(p->guards[h].why, sizeof(p->guards[h].why), "%s", why ?: "");
}

static enum mech reset_mech(enum reset_mech m)
{
	return m == RESETS_ITER ? MECH_ITER_TCP : m == RESETS_SOCK_DIAG ? MECH_SOCK_DIAG : MECH_NONE;
}

static enum mech unread_mech(enum unread_mech m)
{
	return m == UNREAD_ITER ? MECH_ITER_SOCKMAP : m == UNREAD_WATCH ? MECH_WATCH : MECH_NONE;
}

/* What guards each hazard here: the enforcer's choice (none where it did
 * not start), the guard's hooks for MSG_OOB and splice (none where they did
 * not load; splice needs nothing where splice(2) reads redirected bytes),
 * its cgroup/setsockopt for ULPs. */
static void plan_guards(const struct plan_facts *f, struct plan *p)
{
	char err[80];

	snprintf(err, sizeof(err), "%s", f->enforcer_err ? strerror(-f->enforcer_err) : "");
	if (f->enforcer_err) {
		set_guard(p, HZ_RESETS, MECH_NONE, err);
		set_guard(p, HZ_UNREAD, MECH_NONE, err);
	} else {
		set_guard(p, HZ_RESETS, reset_mech(f->enforce->resets), f->enforce->resets_why);
		set_guard(p, HZ_UNREAD, unread_mech(f->enforce->unread), f->enforce->unread_why);
	}
	if (!f->guard_loaded || f->hooks == GUARD_HOOKS_NONE)
		set_guard(p, HZ_OOB, MECH_NONE,
			  f->guard_loaded ? f->hooks_why : "the guard did not load");
	else
		set_guard(p, HZ_OOB, f->hooks == GUARD_HOOKS_FENTRY ? MECH_FENTRY : MECH_TRACEPOINTS,
			  f->hooks_why);
	if (!f->splice_guard)
		set_guard(p, HZ_SPLICE, MECH_NOT_NEEDED, "splice(2) reads redirected bytes here");
	else
		p->guards[HZ_SPLICE] = p->guards[HZ_OOB];
	if (f->guard_loaded)
		set_guard(p, HZ_ULP, MECH_SETSOCKOPT, "");
	else
		set_guard(p, HZ_ULP, MECH_NONE, "the guard's cgroup/setsockopt did not load");
}

/* The self-test's reason to keep the data plane paused, the first found:
 * it could not run, or a critical check failed. */
static enum pause_reason selftest_refuses(const struct plan_facts *f, char *why, size_t len)
{
	const struct selftest_check *ck;
	int i;

	if (f->selftest_err || !f->selftest) {
		snprintf(why, len, "the self-test could not run: %s",
			 strerror(f->selftest_err ? -f->selftest_err : ENOENT));
		return PAUSE_SELFTEST_DID_NOT_RUN;
	}
	for (i = 0; i < SELFTEST_CHECKS; i++) {
		ck = &f->selftest->checks[i];
		if (ck->result == ST_FAIL && ck->critical) {
			snprintf(why, len, "%s: %s", ck->name, selftest_summary(ck));
			return PAUSE_SELFTEST_CRITICAL;
		}
	}
	return PAUSE_NONE;
}

/*
 * A self-test that could not run, a critical failure or an unguarded
 * hazard keeps the data plane paused unless --force; an agent that can
 * name no network namespace, even with it (nothing it could track is
 * safe).  The first reason found is the one given.
 */
void plan_decide(const struct plan_facts *f, struct plan *p)
{
	int h;

	memset(p, 0, sizeof(*p));
	plan_guards(f, p);
	p->reason = selftest_refuses(f, p->why, sizeof(p->why));
	for (h = 0; h < HZ__MAX; h++) {
		if (p->guards[h].mech != MECH_NONE || p->reason != PAUSE_NONE)
			continue;
		snprintf(p->why, sizeof(p->why), "%s unguarded: %s", hazard_names[h],
			 p->guards[h].why);
		p->reason = PAUSE_UNGUARDED;
	}
	p->paused = p->reason != PAUSE_NONE && !f->force;
	p->overridden = p->reason != PAUSE_NONE && f->force;
	if (f->netns == NETNS_BLIND) {
		p->paused = true;
		p->overridden = false;
		p->reason = PAUSE_NETNS_BLIND;
		snprintf(p->why, sizeof(p->why), "setns refused and no netns cookie");
	}
}

void plan_warn_selftest(int selftest_err, const struct selftest_report *r, bool force)
{
	const struct plan_facts f = { .selftest_err = selftest_err, .selftest = r };
	const struct selftest_check *ck;
	char why[160];
	int i;

	if (selftest_err) {
		selftest_refuses(&f, why, sizeof(why));
		pr_warn("%s: %s\n", why,
			force ? "accelerating anyway (--force)" : "not accelerating (--force overrides)");
		return;
	}
	for (i = 0; i < SELFTEST_CHECKS; i++) {
		ck = &r->checks[i];
		if (ck->result == ST_FAIL)
			pr_warn("selftest %s: %s (%s)\n", ck->name, selftest_summary(ck),
				!ck->critical ? "reported, not critical"
				: force ? "CRITICAL, accelerating anyway: --force"
					: "critical: acceleration disabled");
	}
}

void plan_warn_unguarded(const struct plan *p, bool force)
{
	int h;

	for (h = 0; h < HZ__MAX; h++)
		if (p->guards[h].mech == MECH_NONE)
			pr_warn("%s unguarded (%s): %s\n", hazard_names[h], p->guards[h].why,
				force ? "accelerating anyway (--force)"
				      : "not accelerating (--force overrides)");
}

void plan_publish(const struct plan *p, struct agent_info *info)
{
	int h;

	for (h = 0; h < HZ__MAX; h++) {
		snprintf(info->guards[h].mech, sizeof(info->guards[h].mech), "%s",
			 mech_names[p->guards[h].mech]);
		snprintf(info->guards[h].why, sizeof(info->guards[h].why), "%s", p->guards[h].why);
	}
	info->selftest_blocked = p->paused;
	snprintf(info->selftest_error, sizeof(info->selftest_error), "%s", p->why);
}

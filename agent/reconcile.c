// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The attachments' one reconciler (reconcile.h says what it keeps true):
 * drop the dead, attach the named and the pods first, then the followed
 * peers into what room is left, and release followed cgroups nobody uses.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "follow.h"
#include "log.h"
#include "reconcile.h"

#define EVERY_TICKS 2 /* pods and peers: the API and a netlink dump each time */
#define FOLLOW_MAX_NEW 16

static bool waiting_for(const struct reconciler *r, const struct cg_target *t)
{
	int i;

	for (i = 0; i < r->n_waiting; i++)
		if (r->waiting[i].kind == t->kind && !strcmp(r->waiting[i].source, t->source))
			return true;
	return false;
}

static int slot_of(const struct dataplane *dp, uint64_t id)
{
	int i;

	for (i = 0; i < dp->n_targets; i++)
		if (dp->targets[i].id == id)
			return i;
	return -1;
}

static unsigned int *idle_of(struct reconciler *r, uint64_t id)
{
	int i, free_i = -1;

	for (i = 0; i < MAX_TARGETS; i++) {
		if (r->followed[i].id == id)
			return &r->followed[i].idle;
		if (!r->followed[i].id && free_i < 0)
			free_i = i;
	}
	if (free_i < 0)
		return NULL;
	r->followed[free_i].id = id;
	r->followed[free_i].idle = 0;
	return &r->followed[free_i].idle;
}

static void detach(struct reconciler *r, int i)
{
	uint64_t id = r->dp->targets[i].id;
	int k;

	if (r->dp->targets[i].kind == TK_FOLLOWED)
		for (k = 0; k < MAX_TARGETS; k++)
			if (r->followed[k].id == id)
				r->followed[k].id = 0;
	dataplane_detach_cgroup(r->dp, i);
}

/* A free slot for a named cgroup or a pod: the followed cgroup idle the
 * longest gives its slot up when none is free.  false: every slot is
 * named, nothing to give. */
static bool make_room(struct reconciler *r, const struct cg_target *t)
{
	struct dataplane *dp = r->dp;
	unsigned int *idle, most = 0;
	int i, victim = -1;

	if (dp->n_targets < MAX_TARGETS)
		return true;
	for (i = 0; i < dp->n_targets; i++) {
		if (dp->targets[i].kind != TK_FOLLOWED)
			continue;
		idle = idle_of(r, dp->targets[i].id);
		if (victim < 0 || (idle && *idle > most)) {
			victim = i;
			most = idle ? *idle : 0;
		}
	}
	if (victim < 0)
		return false;
	printf("releasing followed %s for %s: every attach slot is taken\n",
	       dp->targets[victim].path, t->path);
	detach(r, victim);
	r->follow_released++;
	return true;
}

/* Attach a named target or a pod, taking a followed one's slot if need be. */
static int attach_wanted(struct reconciler *r, const struct cg_target *t, char *err, size_t len)
{
	if (!make_room(r, t)) {
		snprintf(err, len, "too many cgroups (max %d)", MAX_TARGETS);
		return -E2BIG;
	}
	return dataplane_attach_cgroup(r->dp, t, err, len);
}

/* Attach a target that came back; false while it isn't there yet. */
static bool reattach(struct reconciler *r, const struct cg_target *t)
{
	char err[PATH_MAX + 256];
	struct cg_target fresh;

	if (target_reresolve(r->policy, r->mnt, t, &fresh, err, sizeof(err)))
		return false;
	if (slot_of(r->dp, fresh.id) >= 0)
		return true; /* attached already (named twice) */
	if (attach_wanted(r, &fresh, err, sizeof(err))) {
		pr_warn("re-attaching %s: %s\n", fresh.path, err);
		return false;
	}
	printf("re-attached %s (%s)\n", fresh.path, fresh.reason);
	return true;
}

/*
 * Nginx restarted (systemctl restart, docker restart): its cgroup was
 * removed and made again, so the kernel dropped our attachment with it,
 * and the pid file names a new master.  Free the dead attachments' slots;
 * attach named ones again as soon as their path, or the cgroup of their
 * pid file's new pid, exists; followed ones come back through following.
 */
static bool check_targets(struct reconciler *r)
{
	struct dataplane *dp = r->dp;
	struct cg_target fresh, old;
	char err[PATH_MAX + 256];
	bool changed = false;
	int i;

	for (i = dp->n_targets - 1; i >= 0; i--) {
		old = dp->targets[i];
		if (target_alive(&old) &&
		    !(old.kind == TK_PIDFILE &&
		      !target_reresolve(r->policy, r->mnt, &old, &fresh, err, sizeof(err)) &&
		      fresh.id != old.id))
			continue;
		pr_warn("%s is gone or no longer nginx's (%s): detaching it\n", old.path, old.reason);
		detach(r, i);
		changed = true;
		if ((old.kind == TK_PATH || old.kind == TK_UNIT || old.kind == TK_PIDFILE) &&
		    !waiting_for(r, &old) && r->n_waiting < MAX_TARGETS)
			r->waiting[r->n_waiting++] = old;
		else if (old.kind == TK_PID)
			pr_warn("%s was named by a pid that is gone: not attached again\n", old.path);
	}
	for (i = r->n_waiting - 1; i >= 0; i--) {
		if (!reattach(r, &r->waiting[i]))
			continue;
		r->waiting[i] = r->waiting[--r->n_waiting];
		changed = true;
	}
	return changed;
}

/* The pods --k8s-selector selects now (the watch's sets): attach the new
 * ones, detach those no longer selected (their cgroup may live on a
 * while), but only once every namespace's list is in: a pod not yet
 * known is not one no longer selected. */
static bool k8s_sync(struct reconciler *r)
{
	struct dataplane *dp = r->dp;
	struct cg_target now[MAX_TARGETS];
	char err[PATH_MAX + 256];
	bool changed = false, there;
	int n, i, j;

	n = k8s_watch_targets(r->watch, r->mnt, now, MAX_TARGETS);
	for (i = dp->n_targets - 1; i >= 0 && k8s_watch_complete(r->watch); i--) {
		if (dp->targets[i].kind != TK_K8S)
			continue;
		for (j = 0, there = false; j < n && !there; j++)
			there = now[j].id == dp->targets[i].id;
		if (there)
			continue;
		printf("pod no longer selected: detaching %s\n", dp->targets[i].path);
		detach(r, i);
		changed = true;
	}
	for (j = 0; j < n; j++) {
		if (slot_of(dp, now[j].id) >= 0)
			continue;
		if (attach_wanted(r, &now[j], err, sizeof(err))) {
			pr_warn("k8s: %s\n", err);
			continue;
		}
		printf("attached %s (%s)\n", now[j].path, now[j].reason);
		changed = true;
	}
	return changed;
}

static int count_followed(const struct dataplane *dp)
{
	int i, n = 0;

	for (i = 0; i < dp->n_targets; i++)
		n += dp->targets[i].kind == TK_FOLLOWED;
	return n;
}

/* Attach to the cgroups of local peers of what is attached, as room and
 * max_followed allow; give back those no connection used for a while. */
static bool follow_peers(struct reconciler *r)
{
	struct dataplane *dp = r->dp;
	struct follow_candidate cand[FOLLOW_MAX_NEW];
	bool used[MAX_TARGETS] = { 0 }, changed = false;
	char err[PATH_MAX + 256];
	unsigned int *idle;
	int n, i, refused = 0;

	n = follow_scan(r->mnt, dp->targets, dp->n_targets, r->ports, used, cand, FOLLOW_MAX_NEW);
	if (n < 0) {
		pr_debug("follow: scan failed: %s\n", strerror(-n));
		return false;
	}
	for (i = dp->n_targets - 1; i >= 0; i--) {
		if (dp->targets[i].kind != TK_FOLLOWED)
			continue;
		idle = idle_of(r, dp->targets[i].id);
		if (!idle)
			continue;
		*idle = used[i] ? 0 : *idle + 1;
		if (*idle < FOLLOW_IDLE_SCANS)
			continue;
		printf("releasing followed %s: no tracked connection for %d s\n",
		       dp->targets[i].path, FOLLOW_IDLE_SCANS * EVERY_TICKS);
		detach(r, i);
		r->follow_released++;
		changed = true;
	}
	for (i = 0; i < n; i++) {
		if (dp->n_targets >= MAX_TARGETS || count_followed(dp) >= (int)r->max_followed) {
			refused++;
			continue;
		}
		if (dataplane_attach_cgroup(dp, &cand[i].target, err, sizeof(err))) {
			pr_warn("follow: %s\n", err);
			continue;
		}
		printf("following %s (%s)\n", cand[i].target.path, cand[i].target.reason);
		changed = true;
	}
	/* loud once per spell of refusals: those peers are not accelerated */
	if (refused && !r->refusing)
		pr_warn("follow: %d local peer cgroup%s not followed: %s (--max-followed %u)\n",
			refused, refused == 1 ? "" : "s",
			dp->n_targets >= MAX_TARGETS ? "every attach slot is taken"
						     : "the limit of followed cgroups is reached",
			r->max_followed);
	r->refusing = refused > 0;
	r->follow_refused += refused;
	return changed;
}

bool reconcile(struct reconciler *r, uint64_t ticks)
{
	bool changed = check_targets(r);

	/* the watch every tick (its events, as they came); the cgroups of
	 * its pods every other one too: a pod's may come after its event */
	if (r->k8s->selector && r->watch &&
	    (k8s_watch_poll(r->watch) || ticks % EVERY_TICKS == 0))
		changed |= k8s_sync(r);
	if (r->follow && ticks % EVERY_TICKS == 0)
		changed |= follow_peers(r);
	r->n_followed = count_followed(r->dp);
	if (changed)
		fflush(stdout);
	return changed;
}

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Which cgroups the data plane is attached to, kept in line with what is
 * wanted, in one place.  Four sources want cgroups: the named targets
 * (--cgroup, --nginx-pid, --nginx-pid-file: attached again when nginx
 * restarts and its cgroup is made anew), the Kubernetes pods the selector
 * selects, and the followed local peers of what is attached.  Each tick
 * reconcile() drops what is gone, adds what is wanted and says whether
 * anything changed; the caller then refreshes the namespaces and
 * agent.state once.
 *
 * The slots are few (MAX_TARGETS, 64) and anyone can make a cgroup and
 * connect to nginx, so followed cgroups must never cost nginx its own: a
 * named cgroup or a pod takes the slot of a followed one when none is
 * free, at most max_followed followed cgroups are attached at once, and a
 * followed cgroup no tracked connection used for FOLLOW_IDLE_SCANS scans
 * is released.
 */
#ifndef NGX_SOCKMAP_RECONCILE_H
#define NGX_SOCKMAP_RECONCILE_H

#include <stdbool.h>
#include <stdint.h>
#include "dataplane.h"
#include "k8s.h"
#include "options.h"
#include "target.h"

/* Scans (one every 2 s) a followed cgroup may go without a connection to
 * an attached one before its slot is given back: a client that pauses for
 * half a minute is not worth a re-attach, one gone for longer is. */
#define FOLLOW_IDLE_SCANS 15

struct reconciler {
	/* what it works on and with, set by the owner (runtime.c) */
	struct dataplane *dp;
	const char *mnt;                     /* cgroup v2 mount */
	const struct target_policy *policy;  /* what a target named again may be */
	const struct k8s_opts *k8s;          /* selector NULL: no pods */
	struct k8s_watcher *watch;           /* the pods k8s selects, watched */
	const struct port_set *ports;        /* whose peers are followed */
	bool follow;
	unsigned int max_followed;           /* --max-followed */
	/* named targets whose cgroup went away (nginx restarted): tried again
	 * every tick until their path, or their pid file's new pid, resolves */
	struct cg_target waiting[MAX_TARGETS];
	int n_waiting;
	/* scans since each attached followed cgroup was last seen used */
	struct {
		uint64_t id;
		unsigned int idle;
	} followed[MAX_TARGETS];
	/* facts for agent_gauges */
	uint64_t n_followed;                 /* attached now */
	uint64_t follow_refused;             /* peers not followed: no slot */
	uint64_t follow_released;            /* followed cgroups given back */
	bool refusing;                       /* the last scan refused some (said once) */
};

/* One tick's worth (ticks: the loop's count; pods and peers are looked at
 * every other one).  true when something was attached or detached. */
bool reconcile(struct reconciler *r, uint64_t ticks);

#endif

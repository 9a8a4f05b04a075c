/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The running agent: its parts (data plane, XDP observer, event rings,
 * metrics server, peer following), its one event loop, and its lifecycle,
 * owned here alone: runtime_start() sets every part up from the options,
 * runtime_stop() tears down whatever start got to.  cmd_run.c parses and
 * calls: start, serve, stop.  The loop reads values (follow, ports,
 * policy), never the options.
 */
#ifndef NGX_SOCKMAP_RUNTIME_H
#define NGX_SOCKMAP_RUNTIME_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include "dataplane.h"
#include "enforcer.h"
#include "arming.h"
#include "feed.h"
#include "k8s.h"
#include "maps.h"
#include "metrics.h"
#include "options.h"
#include "reconcile.h"
#include "selftest.h"
#include "state.h"
#include "topk.h"
#include "verdict.h"
#include "observer.h"

struct runtime {
	struct dataplane dp;
	struct enforcer enforcer;
	struct guard_arming arming; /* when the guard's tracepoints are attached */
	struct netns_ref *ns;     /* namespaces of tracked processes */
	size_t n_ns;
	/* facts the loop publishes in agent_gauges (publish_gauges), each
	 * written here by what finds it out */
	uint64_t local_addrs;     /* addresses of those namespaces (addrs_sync) */
	uint64_t netns_unresolved; /* attached cgroups whose netns is out of reach */
	uint64_t endpoints_swept; /* orphaned endpoints removed (sweep_endpoints) */
	struct pair_window pairs_window; /* the verdict's last 5 minutes */
	uint64_t recent_pairs, recent_conns;
	struct xdp_observer xdp;
	struct event_feed feed;
	struct topk_window topk;
	struct metrics_server metrics;
	struct metrics_src msrc;
	struct selftest_report selftest; /* what the self-test found */
	int selftest_err;         /* 0, or -errno: it could not run */
	struct agent_info info;   /* what agent.state says */
	struct agent_maps maps;   /* fds, owned by dp and xdp */
	char mnt[PATH_MAX];       /* cgroup v2 mount */
	struct port_set ports;    /* whose connections are tracked: peers followed */
	struct target_policy policy; /* what a target named again may be */
	struct k8s_opts k8s;      /* selector set: the pods it selects are attached */
	struct k8s_watcher k8s_watch; /* ... through a watch of the API */
	struct reconciler rec;    /* what is attached, kept in line every tick */
	int lock_fd;              /* the single-agent lock (state.h); -1: not held */
};

/* Everything up to "ready": resolve the targets, probe the kernel, take
 * the single-agent lock, self-test, load, attach, write agent.state, print
 * the ready line and tell the service manager.  0, or -1 having said why.
 * Call runtime_stop() either way. */
int runtime_start(struct runtime *rt, const struct run_opts *o);
/* What `check` found: run's start up to the plan, with nothing attached,
 * locked or pinned (the plan itself: rt->info). */
#define CHECK_MAX_SHOWN 8
struct check_report {
	char cg2_mount[PATH_MAX];     /* "": not mounted */
	bool bpffs;                   /* /sys/fs/bpf is a bpffs (--pin) */
	char kernel_err[256];         /* what the kernel lacks; "": enough */
	struct cg_target targets[CHECK_MAX_SHOWN];
	int n_targets;
	char targets_err[PATH_MAX + 256]; /* why none was found */
	char metrics[64];             /* the address, "" with --metrics off */
	char metrics_err[256];        /* why it can't be served there */
	bool loaded;                  /* the self-test ran and the data plane loaded */
};
/* Call runtime_stop() after it.  0, or -1 when it could not get as far as
 * loading (r says why). */
int runtime_check(struct runtime *rt, const struct run_opts *o, struct check_report *r);
/* Undo what runtime_start() did, as far as it got: the guard disarmed,
 * links closed (unless pinned), agent.state removed, the lock dropped. */
void runtime_stop(struct runtime *rt);
/* Write agent.state from what is attached now. */
void runtime_publish(struct runtime *rt);
/* Find the namespaces of the processes in these cgroups (NULL: the
 * attached ones) again, and their addresses (local_addrs): before the
 * first attach, after each, every tick. */
void runtime_refresh_netns(struct runtime *rt, const struct cg_target *cgs, int n);
/* The signals the loop takes through a signalfd, blocked from
 * runtime_start on: SIGINT and SIGTERM end the run, SIGHUP looks at the
 * targets again. */
void runtime_stop_signals(sigset_t *mask);
/* Serve until SIGINT/SIGTERM (blocked since runtime_start: taken through
 * a signalfd here; SIGHUP reloads).  0, or -errno when the loop itself failed. */
int runtime_serve(struct runtime *rt);

#endif

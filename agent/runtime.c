// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The running agent, one owner from start to stop: runtime_start()
 * resolves targets -> probes -> locks -> self-tests -> loads -> attaches
 * and says ready; runtime_serve() is the loop; runtime_stop() undoes
 * whatever start got to.  runtime_loop.c has the loop, reconcile.c what is
 * attached, plan.c whether it accelerates.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include "addrs.h"
#include "counters.h"
#include "log.h"
#include "notify.h"
#include "paths.h"
#include "plan.h"
#include "reconcile.h"
#include "runtime.h"
#include "selftest.h"
#include "test_knobs.h"

void runtime_publish(struct runtime *rt)
{
	rt->info.n_cgroups = rt->dp.n_targets;
	memcpy(rt->info.cgroups, rt->dp.targets, sizeof(rt->dp.targets[0]) * rt->dp.n_targets);
	if (state_write(&rt->info, &rt->maps))
		pr_warn("writing %s/agent.state failed: status will not find this agent\n", run_dir());
}

void runtime_refresh_netns(struct runtime *rt, const struct cg_target *cgs, int ncg)
{
	struct netns_ref *ns;
	int count, unresolved, err;
	size_t n;

	if (!cgs) {
		cgs = rt->dp.targets;
		ncg = rt->dp.n_targets;
	}
	if (netns_of_cgroups(cgs, ncg, &ns, &n, &unresolved, &err))
		return;
	/* loud, once per change: connections there are never paired, and
	 * nothing could be reset there */
	if (unresolved && (uint64_t)unresolved != rt->netns_unresolved)
		pr_warn("%d attached cgroup%s: no process whose network namespace the agent may "
			"open (%s): their local peers look remote and are not paired%s\n", unresolved,
			unresolved == 1 ? "" : "s", strerror(err),
			err == EACCES || err == EPERM ? "; processes of other users need CAP_SYS_PTRACE" : "");
	rt->netns_unresolved = unresolved;
	free(rt->ns);
	rt->ns = ns;
	rt->n_ns = n;
	enforcer_set_namespaces(&rt->enforcer, ns, n);
	count = addrs_sync(rt->maps.fd[MAP_LOCAL_ADDRS], ns, n);
	if (count >= 0)
		rt->local_addrs = count;
}

/* The default --max-sockets on this host (options.c says how). */
static uint32_t host_max_sockets(const struct cg_target *t, int n)
{
	struct host_limits h;
	uint32_t v;

	host_limits_read(t, n, &h);
	v = max_sockets_default(&h);
	pr_info("--max-sockets %u (from the host: %llu MiB of RAM, fs.file-max %llu, nginx open "
		"files %llu)\n", v, (unsigned long long)(h.mem_bytes >> 20),
		(unsigned long long)h.file_max, (unsigned long long)h.nginx_files);
	return v;
}

static void format_addr(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const void *)ss;

		inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
		snprintf(buf, len, "[%s]:%u", host, ntohs(a->sin6_port));
	} else {
		const struct sockaddr_in *a = (const void *)ss;

		inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, ntohs(a->sin_port));
	}
}

/* The XDP observer and its ring (--xdp). */
static int start_observer(struct runtime *rt, const struct run_opts *o)
{
	struct feed_source src;
	char err[256];
	int i, ret;

	if (observer_start(&rt->xdp, o->xdp_ifaces, o->n_xdp, o->xdp_sample, err, sizeof(err))) {
		pr_warn("%s\n", err);
		return -1;
	}
	observer_maps(&rt->xdp, &rt->maps);
	observer_ring_place(&rt->xdp, &rt->info.rings[RING_PKT].addr, &rt->info.rings[RING_PKT].off);
	observer_events(&rt->xdp, &src);
	ret = feed_add(&rt->feed, FEED_PKT, &src);
	if (ret) {
		pr_warn("reading the XDP event ring: %s\n", strerror(-ret));
		return -1;
	}
	ret = topk_init(&rt->topk, TOPK_WINDOW_SEC);
	if (ret) {
		pr_warn("the top-sources window: %s\n", strerror(-ret));
		return -1;
	}
	rt->msrc.xdp = &rt->xdp;
	snprintf(rt->info.rings[RING_PKT].transport, sizeof(rt->info.rings[RING_PKT].transport),
		 "%s", feed_transport(&rt->feed, FEED_PKT));
	rt->msrc.topk = &rt->topk;
	for (i = 0; i < rt->xdp.n_ifaces; i++) {
		snprintf(rt->info.xdp[i].name, sizeof(rt->info.xdp[i].name), "%s",
			 rt->xdp.ifaces[i].name);
		snprintf(rt->info.xdp[i].mode, sizeof(rt->info.xdp[i].mode), "%s",
			 rt->xdp.ifaces[i].mode);
	}
	rt->info.n_xdp = rt->xdp.n_ifaces;
	return 0;
}

/* The "ready" line, and the same words to the service manager: READY=1
 * makes a Type=notify unit active only once the cgroups are attached, and
 * STATUS= shows in `systemctl status` whether it accelerates, and why not. */
static void print_ready(const struct runtime *rt, bool pin)
{
	char line[512], msg[sizeof(line) + 32];
	int i, err;

	snprintf(line, sizeof(line), "ready: attached to %d cgroup%s%s%s%s", rt->dp.n_targets,
		 rt->dp.n_targets == 1 ? "" : "s", pin ? " (pinned)" : "",
		 rt->info.selftest_blocked ? ", NOT accelerating: " : "",
		 rt->info.selftest_blocked ? rt->info.selftest_error : "");
	printf("%s\n", line);
	for (i = 0; i < rt->dp.n_targets; i++)
		printf("  %s (%s)\n", rt->dp.targets[i].path, rt->dp.targets[i].reason);
	fflush(stdout);
	snprintf(msg, sizeof(msg), "READY=1\nSTATUS=%s", line);
	err = notify_service_manager(msg);
	if (err < 0)
		pr_warn("telling the service manager we are ready ($NOTIFY_SOCKET): %s\n",
			strerror(-err));
}

/*
 * An agent that may not setns() (no CAP_SYS_ADMIN: a least-privilege
 * container) can neither end a connection in another network namespace
 * (iter/tcp and sock_diag see only the caller's) nor learn its addresses:
 * the data plane tracks only sockets of the agent's own namespace
 * (skipped{other_netns}), and status says so.  0; 1 when it can't even
 * name its own (nothing can be accelerated: the plan keeps it paused); -1.
 */
static int limit_to_own_netns(struct runtime *rt)
{
	uint64_t cookie;
	int err, ret;

	err = netns_can_enter();
	if (!err) /* and none left by a pinned data plane's earlier run */
		return dataplane_set_netns_only(rt->maps.fd[MAP_CONFIG], 0) ? -1 : 0;
	ret = netns_cookie(&cookie);
	if (ret) {
		pr_warn("this agent may not enter other network namespaces (setns: %s) and can't "
			"name its own (SO_NETNS_COOKIE: %s): not accelerating\n", strerror(-err),
			strerror(-ret));
		return 1;
	}
	snprintf(rt->info.netns_scope, sizeof(rt->info.netns_scope), "setns: %s (CAP_SYS_ADMIN)",
		 strerror(-err));
	pr_warn("this agent may not enter other network namespaces (setns: %s; it needs "
		"CAP_SYS_ADMIN): only connections in its own are accelerated\n", strerror(-err));
	return dataplane_set_netns_only(rt->maps.fd[MAP_CONFIG], cookie) ? -1 : 0;
}

/* The cgroups named, and the pods selected.  0, or -1 with why in err. */
static int find_targets(struct runtime *rt, const struct run_opts *o, struct cg_target *targets,
			int *n, char *err, size_t errlen)
{
	const struct target_names names = {
		.cgroups = o->cgroups, .n_cgroups = o->n_cgroups,
		.units = o->units, .n_units = o->n_units,
		.pids = o->pids, .n_pids = o->n_pids,
		.pid_file = o->pid_file, .pods = o->k8s_selector,
		.policy = rt->policy,
	};
	int i;

	cg2_join_host_ns();
	if (cg2_mount(rt->mnt, sizeof(rt->mnt))) {
		snprintf(err, errlen, "cgroup v2 is not mounted: mount -t cgroup2 none /sys/fs/cgroup");
		return -1;
	}
	if (targets_resolve(&names, rt->mnt, targets, n, err, errlen))
		return -1;
	if (o->k8s_selector) {
		rt->k8s = (struct k8s_opts){
			.selector = o->k8s_selector, .namespaces = o->k8s_namespaces,
			.node = o->k8s_node, .api = o->k8s_api,
			.token_file = "/var/run/secrets/kubernetes.io/serviceaccount/token",
			.ca_file = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt",
		};
		/* an API server that is down now (a control plane upgrade)
		 * must not crash-loop the agent: start with the other
		 * targets, and the loop's k8s_sync attaches the pods once
		 * it answers */
		i = k8s_targets(&rt->k8s, rt->mnt, targets + *n, MAX_TARGETS - *n, err, errlen);
		if (i < 0)
			pr_warn("%s: starting without pods, asking again every few seconds\n", err);
		else
			*n += i;
		/* then the loop watches them (k8s.h): a list, and the
		 * changes as they come, not a list every 2 s per node */
		if (k8s_watch_init(&rt->k8s_watch, &rt->k8s)) {
			snprintf(err, errlen, "k8s: no memory for the watch");
			return -1;
		}
	}
	return 0;
}

/* Everything that can refuse before anything is loaded, so that a refusal
 * leaves nothing to undo: the kernel, the single-agent lock, pins, the
 * cgroups and interfaces, the metrics port. */
static int claim(struct runtime *rt, const struct run_opts *o, const struct cg_target *targets,
		 int n)
{
	char err[PATH_MAX + 256] = "";
	int other = 0, i;

	if (dataplane_probe_kernel(err, sizeof(err))) {
		pr_warn("%s\n", err);
		return -1;
	}
	rt->lock_fd = state_lock(&other);
	if (rt->lock_fd < 0) {
		if (rt->lock_fd == -EBUSY)
			pr_warn("another ngx-sockmap agent is running (pid %d); one agent per host\n", other);
		else if (rt->lock_fd != -EPERM) /* EPERM: state_lock said why */
			pr_warn("cannot create %s: %s\n", run_dir(), strerror(-rt->lock_fd));
		return -1;
	}
	if (!o->pin && dataplane_pinned_exists()) {
		pr_warn("a pinned data plane exists in %s: adopt it with --pin or remove it with 'ngx-sockmap detach'\n",
			PIN_DIR);
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (dataplane_check_cgroup(&targets[i], o->pin, err, sizeof(err))) {
			pr_warn("%s\n", err);
			return -1;
		}
	}
	if (observer_check_ifaces(o->xdp_ifaces, o->n_xdp, err, sizeof(err))) {
		pr_warn("%s\n", err);
		return -1;
	}
	/* Bind the metrics port before anything is attached: a port in use
	 * must fail with nothing to undo. */
	if (o->metrics) {
		if (metrics_start(&rt->metrics, (const struct sockaddr *)&o->metrics_addr,
				  o->metrics_addr_len, &rt->msrc, err, sizeof(err))) {
			char a[64] = "";

			format_addr(&o->metrics_addr, a, sizeof(a));
			pr_warn("%s: %s\n", err, a);
			return -1;
		}
		format_addr(&o->metrics_addr, rt->info.metrics, sizeof(rt->info.metrics));
	}
	return 0;
}

/* The self-test, then the data plane (with its guard) and the enforcer,
 * loaded as the self-test and this host allow; paused where decide() says. */
static int load(struct runtime *rt, const struct run_opts *o, uint32_t max_sockets)
{
	struct dataplane_params params = {
		.ports_all = o->ports.all,
		.port_bits = o->ports.bits,
		.short_conn_msgs = o->short_conn_msgs,
		.max_unread = o->max_unread,
		.check_local_addrs = true,
		.guard = true,
		.guard_hooks = o->guard_hooks,
		.pin = o->pin,
		.nginx_vars = o->nginx_vars,
		.max_sockets = max_sockets,
		.max_sockets_given = o->max_sockets,
	};
	struct enforce_plan enforce;
	struct load_plan lp;
	struct plan_facts facts;
	struct plan plan;
	int netns;

	/* tests only: widen the claim race (claim_race_stress.sh) */
	if (test_knob(KNOB_CLAIM_DELAY))
		params.test_claim_delay = atoi(test_knob(KNOB_CLAIM_DELAY));
	/* tests only: see a learned hazard age out (hazard_client_cgroup.sh) */
	if (test_knob(KNOB_HAZARD_TTL))
		params.hazard_ttl_ns = strtoull(test_knob(KNOB_HAZARD_TTL), NULL, 10) * 1000000000ULL;
	/* What this host allows for ending connections and measuring unread
	 * bytes, before the self-test (its reset check uses the choice) and
	 * the data plane (which keeps unread_watch for the weaker scan). */
	if (enforcer_plan(o->resets, o->unread_scan, &enforce))
		return -1;
	rt->selftest_err = selftest_run(rt->mnt, enforce.resets, o->resets == RESETS_AUTO,
					&rt->selftest);
	plan_warn_selftest(rt->selftest_err, &rt->selftest, o->force);
	if (!rt->selftest_err)
		state_set_selftest(&rt->info, &rt->selftest);
	plan_load(rt->selftest_err, &rt->selftest, &enforce, &lp);
	params.slow_reader_fallback = lp.slow_reader_fallback;
	params.splice_guard = lp.splice_guard;
	params.watch_unread = enforce.unread == UNREAD_WATCH;
	if (dataplane_load(&rt->dp, &params))
		return -1;
	dataplane_maps(&rt->dp, &rt->maps);
	rt->msrc.dp = &rt->dp;
	rt->msrc.enforcer = &rt->enforcer;
	facts = (struct plan_facts){
		.selftest_err = rt->selftest_err,
		.selftest = &rt->selftest,
		.enforce = &enforce,
		.enforcer_err = enforcer_start(&rt->enforcer, &enforce, dataplane_object(&rt->dp),
					       &rt->maps, o->max_unread,
					       o->unread_budget ?: enforcer_default_budget()),
		.guard_loaded = rt->dp.guard.skel != NULL,
		.hooks = rt->dp.guard.hooks,
		.hooks_why = rt->info.guard_why,
		.splice_guard = lp.splice_guard,
		.force = o->force,
	};
	guard_describe(&rt->dp.guard, rt->info.guard_hooks, sizeof(rt->info.guard_hooks),
		       rt->info.guard_why, sizeof(rt->info.guard_why));
	snprintf(rt->info.guard_ia32, sizeof(rt->info.guard_ia32), "%s", guard_ia32(&rt->dp.guard));
	netns = limit_to_own_netns(rt);
	if (netns < 0)
		return -1;
	facts.netns = netns > 0 ? NETNS_BLIND : rt->info.netns_scope[0] ? NETNS_OWN : NETNS_ALL;
	plan_decide(&facts, &plan);
	plan_warn_unguarded(&plan, o->force);
	plan_publish(&plan, &rt->info);
	if (plan.paused && dataplane_set_paused(rt->maps.fd[MAP_CONFIG], true))
		return -1;
	return 0;
}

/* The event ring, sk_msg, the guard's arming, then the cgroups (from here
 * on connections are tracked), and the XDP observer. */
static int attach(struct runtime *rt, const struct run_opts *o, const struct cg_target *targets,
		  int n)
{
	char err[PATH_MAX + 256] = "";
	struct feed_source src;
	int i, ret;

	dataplane_events(&rt->dp, &src);
	ret = feed_add(&rt->feed, FEED_CONN, &src);
	if (ret) {
		pr_warn("reading the data plane's event ring: %s\n", strerror(-ret));
		return -1;
	}
	rt->msrc.feed = &rt->feed;
	snprintf(rt->info.rings[RING_CONN].transport, sizeof(rt->info.rings[RING_CONN].transport),
		 "%s", feed_transport(&rt->feed, FEED_CONN));
	dataplane_ring_place(&rt->dp, &rt->info.rings[RING_CONN].addr,
			     &rt->info.rings[RING_CONN].off);
	if (dataplane_attach_msg(&rt->dp))
		return -1;
	ret = arming_start(&rt->arming, &rt->dp.guard, &rt->maps, o->guard_idle);
	if (ret) {
		pr_warn("arming the guard: %s\n", strerror(-ret));
		return -1;
	}
	/* the addresses of the targets' namespaces before any connection
	 * can be tracked: a peer not among them is never inserted */
	runtime_refresh_netns(rt, targets, n);
	for (i = 0; i < n; i++) {
		if (dataplane_attach_cgroup(&rt->dp, &targets[i], err, sizeof(err))) {
			pr_warn("%s\n", err);
			return -1;
		}
	}
	return o->n_xdp ? start_observer(rt, o) : 0;
}

/* What runtime_stop() looks at, before anything can fail. */
static void runtime_init(struct runtime *rt, const struct run_opts *o)
{
	memset(rt, 0, sizeof(*rt));
	rt->lock_fd = -1;
	agent_maps_init(&rt->maps);
	rt->msrc.maps = &rt->maps;
	rt->msrc.info = &rt->info;
	rt->ports = o->ports;
	rt->policy = (struct target_policy){ .any_process = o->any_process,
					     .allow_root_cgroup = o->allow_root_cgroup };
	rt->rec = (struct reconciler){ .dp = &rt->dp, .mnt = rt->mnt, .policy = &rt->policy,
				       .k8s = &rt->k8s, .watch = &rt->k8s_watch,
				       .ports = &rt->ports,
				       .follow = o->follow, .max_followed = o->max_followed };
}

int runtime_start(struct runtime *rt, const struct run_opts *o)
{
	struct cg_target targets[MAX_TARGETS];
	char err[PATH_MAX + 256] = "";
	uint32_t max_sockets;
	sigset_t mask;
	int n = 0;

	runtime_init(rt, o);
	if (find_targets(rt, o, targets, &n, err, sizeof(err))) {
		pr_warn("%s\n", err);
		return -1;
	}
	max_sockets = o->max_sockets ?: host_max_sockets(targets, n);
	if (claim(rt, o, targets, n))
		return -1;
	/* Signals are taken through a signalfd in runtime_serve(); block them
	 * now so a SIGTERM during set-up is not lost (or fatal) either. */
	runtime_stop_signals(&mask);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (load(rt, o, max_sockets) || attach(rt, o, targets, n))
		return -1;
	rt->info.pid = getpid();
	rt->info.pinned = o->pin;
	runtime_publish(rt);
	print_ready(rt, o->pin);
	return 0;
}

int runtime_check(struct runtime *rt, const struct run_opts *o, struct check_report *r)
{
	struct cg_target targets[MAX_TARGETS];
	struct run_opts dry = *o;
	struct statfs fs;
	int i;

	runtime_init(rt, o);
	memset(r, 0, sizeof(*r));
	dry.pin = false; /* nothing may outlive the check */
	if (!find_targets(rt, &dry, targets, &r->n_targets, r->targets_err,
			  sizeof(r->targets_err)))
		for (i = 0; i < r->n_targets && i < CHECK_MAX_SHOWN; i++)
			r->targets[i] = targets[i];
	snprintf(r->cg2_mount, sizeof(r->cg2_mount), "%s", rt->mnt);
	r->bpffs = !statfs("/sys/fs/bpf", &fs) && fs.f_type == BPF_FS_MAGIC;
	if (dataplane_probe_kernel(r->kernel_err, sizeof(r->kernel_err)))
		return -1;
	if (o->metrics) {
		format_addr(&o->metrics_addr, r->metrics, sizeof(r->metrics));
		if (!metrics_start(&rt->metrics, (const struct sockaddr *)&o->metrics_addr,
				   o->metrics_addr_len, &rt->msrc, r->metrics_err,
				   sizeof(r->metrics_err)))
			metrics_stop(&rt->metrics);
	}
	if (!rt->mnt[0])
		return -1;
	r->loaded = !load(rt, &dry, o->max_sockets ?: host_max_sockets(targets, r->n_targets));
	return 0;
}

void runtime_stop(struct runtime *rt)
{
	arming_stop(&rt->arming);
	enforcer_stop(&rt->enforcer);
	free(rt->ns);
	rt->ns = NULL;
	feed_stop(&rt->feed);
	topk_free(&rt->topk);
	if (observer_running(&rt->xdp))
		observer_stop(&rt->xdp);
	metrics_stop(&rt->metrics);
	k8s_watch_free(&rt->k8s_watch);
	dataplane_destroy(&rt->dp);
	/* agent.state is this agent's only while it holds the lock */
	if (rt->lock_fd >= 0)
		state_remove(rt->lock_fd);
	rt->lock_fd = -1;
}

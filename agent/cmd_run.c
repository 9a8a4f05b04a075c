// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * `ngx-sockmap run`: its options, then resolve targets -> probe -> lock ->
 * self-test -> load -> attach -> serve (runtime.c) until SIGINT/SIGTERM ->
 * tear down.  One exit path.
 */
#define _GNU_SOURCE /* prlimit */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include "cli.h"
#include "log.h"
#include "notify.h"
#include "options.h"
#include "paths.h"
#include "k8s.h"
#include "runtime.h"
#include "selftest.h"

/* ---- options (the table and its parser: options.c) ---- */

static error_t run_parse(int key, char *arg, struct argp_state *state)
{
	/* an error quotes the argument whole, and one is at most 128 KiB
	 * (MAX_ARG_STRLEN, include/uapi/linux/binfmts.h) */
	static char err[(128 << 10) + 256];
	struct run_opts *o = state->input;
	struct run_env env;
	int ret;

	switch (key) {
	case ARGP_KEY_INIT:
		run_opts_init(o);
		return 0;
	case ARGP_KEY_END:
		env = (struct run_env){ .node_name = getenv("NODE_NAME"),
					.k8s_host = getenv("KUBERNETES_SERVICE_HOST"),
					.k8s_port = getenv("KUBERNETES_SERVICE_PORT") };
		ret = run_opts_finish(o, &env, err, sizeof(err));
		break;
	default:
		ret = run_opt_set(o, key, arg, err, sizeof(err));
	}
	if (ret < 0)
		usage_error(state, "%s", err);
	return ret > 0 ? cli_parse_common(key, arg, state) : 0;
}

/* ---- set-up steps ---- */

/* Sum of the open-file limits of the nginx processes in the targets'
 * cgroups (0: none found): each connection nginx holds is one of them, so
 * it bounds worker_connections (nginx warns past it). */
static uint64_t nginx_files(const struct cg_target *t, int n)
{
	char path[PATH_MAX + 32], comm[32];
	uint64_t sum = 0;
	struct rlimit rl;
	FILE *f, *c;
	int i, pid;

	for (i = 0; i < n; i++) {
		if (snprintf(path, sizeof(path), "%s/cgroup.procs", t[i].path) >= (int)sizeof(path))
			continue;
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fscanf(f, "%d", &pid) == 1) {
			snprintf(path, sizeof(path), "/proc/%d/comm", pid);
			c = fopen(path, "re");
			if (!c)
				continue;
			if (fgets(comm, sizeof(comm), c) && !strcmp(comm, "nginx\n") &&
			    !prlimit(pid, RLIMIT_NOFILE, NULL, &rl) && rl.rlim_cur != RLIM_INFINITY)
				sum += rl.rlim_cur;
			fclose(c);
		}
		fclose(f);
	}
	return sum;
}

/* The default --max-sockets on this host (options.c says how). */
static uint32_t host_max_sockets(const struct cg_target *t, int n)
{
	struct host_limits h = {};
	unsigned long long fm = 0;
	struct sysinfo si;
	uint32_t v;
	FILE *f;

	if (!sysinfo(&si))
		h.mem_bytes = (uint64_t)si.totalram * si.mem_unit;
	f = fopen("/proc/sys/fs/file-max", "re");
	if (f && fscanf(f, "%llu", &fm) == 1)
		h.file_max = fm;
	if (f)
		fclose(f);
	h.nginx_files = nginx_files(t, n);
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

/*
 * Check this kernel's redirect path before trusting it with nginx's bytes.
 * Fails closed: a failed critical check, or a self-test that could not run
 * at all, keeps the data plane paused (info->selftest_blocked, shown by
 * status and /metrics) unless --force.  Fills what the data plane's load
 * depends on.
 */
static void run_selftest(const char *mnt, bool force, struct agent_info *info,
			 struct dataplane_params *params, struct enforce_plan *plan, bool fallback)
{
	struct selftest_report report;
	int i, ret;

	ret = selftest_run(mnt, plan->resets, fallback, &report);
	/* until a self-test says splice(2) reads redirected bytes, it doesn't */
	params->splice_guard = true;
	if (ret) {
		snprintf(info->selftest_error, sizeof(info->selftest_error),
			 "the self-test could not run: %s", strerror(-ret));
		info->selftest_blocked = !force;
		pr_warn("%s: %s\n", info->selftest_error,
			force ? "accelerating anyway (--force)" : "not accelerating (--force overrides)");
		return;
	}
	for (i = 0; i < SELFTEST_CHECKS; i++) {
		struct selftest_line *l = &info->selftest[info->n_selftest++];
		const struct selftest_check *ck = &report.checks[i];

		snprintf(l->name, sizeof(l->name), "%s", ck->name);
		snprintf(l->result, sizeof(l->result), "%s", selftest_result_name(ck->result));
		l->critical = ck->critical;
		snprintf(l->detail, sizeof(l->detail), "%s",
			 ck->result == ST_FAIL && ck->detail[0] ? ck->detail : ck->what);
		if (ck->result == ST_FAIL)
			pr_warn("selftest %s: %s (%s)\n", ck->name, l->detail,
				!ck->critical ? "reported, not critical"
				: force ? "CRITICAL, accelerating anyway: --force"
					: "critical: acceleration disabled");
		if (ck->result == ST_FAIL && ck->critical && !info->selftest_error[0])
			snprintf(info->selftest_error, sizeof(info->selftest_error), "%s: %s",
				 ck->name, l->detail);
	}
	info->selftest_blocked = report.critical_failure && !force;
	params->slow_reader_fallback = report.slow_reader_fallback_safe;
	params->splice_guard = !report.splice_reads_ingress;
	if (plan->resets != (enum reset_mech)report.reset_mech) {
		/* iter/tcp loaded but could not end a connection */
		snprintf(plan->resets_why, sizeof(plan->resets_why), "iter/tcp: %.60s",
			 "loads, but the self-test's reset failed with it");
		plan->resets = report.reset_mech;
	}
}

/* The XDP observer and its ring (--xdp). */
static int start_observer(struct runtime *rt, const struct run_opts *o)
{
	struct feed_source src;
	char err[256];
	int i;

	if (observer_start(&rt->xdp, o->xdp_ifaces, o->n_xdp, o->xdp_sample, err, sizeof(err))) {
		pr_warn("%s\n", err);
		return -1;
	}
	observer_maps(&rt->xdp, &rt->maps);
	observer_ring_place(&rt->xdp, &rt->info.rings[RING_PKT].addr, &rt->info.rings[RING_PKT].off);
	observer_events(&rt->xdp, &src);
	if (feed_add(&rt->feed, FEED_PKT, &src) ||
	    topk_init(&rt->topk, TOPK_WINDOW_SEC)) {
		pr_warn("reading the XDP event ring: %s\n", strerror(errno));
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

static void set_guard(struct agent_info *info, enum hazard h, const char *mech, const char *why)
{
	snprintf(info->guards[h].mech, sizeof(info->guards[h].mech), "%s", mech);
	snprintf(info->guards[h].why, sizeof(info->guards[h].why), "%s", why);
}

/*
 * What guards each hazard on this host (status, /metrics), and, where one
 * is unguarded, keep the data plane paused as after a critical self-test
 * failure (--force and 'resume --force' override): the agent stays up and
 * says why rather than exit.  enforcer_err: enforcer_start's result.
 */
static void plan_guards(struct runtime *rt, const struct enforce_plan *plan, int enforcer_err,
			bool splice_guard, bool force)
{
	const struct guard *g = &rt->dp.guard;
	struct agent_info *info = &rt->info;
	char hooks[16], why[80], err[80];
	int h;

	guard_describe(g, hooks, sizeof(hooks), why, sizeof(why));
	snprintf(info->guard_hooks, sizeof(info->guard_hooks), "%s", hooks);
	snprintf(info->guard_why, sizeof(info->guard_why), "%s", why);
	snprintf(err, sizeof(err), "%s", enforcer_err ? strerror(-enforcer_err) : "");
	set_guard(info, HZ_RESETS, enforcer_err ? "none" : reset_mech_names[plan->resets],
		  enforcer_err ? err : plan->resets_why);
	set_guard(info, HZ_UNREAD, enforcer_err ? "none" : unread_mech_names[plan->unread],
		  enforcer_err ? err : plan->unread_why);
	if (!g->skel || g->hooks == GUARD_HOOKS_NONE)
		set_guard(info, HZ_OOB, "none", g->skel ? why : "the guard did not load");
	else
		set_guard(info, HZ_OOB, hooks, why);
	/* where splice(2) reads redirected bytes (selftest: splice_read) a
	 * splicing reader needs nothing */
	if (!splice_guard)
		set_guard(info, HZ_SPLICE, "not needed", "splice(2) reads redirected bytes here");
	else
		info->guards[HZ_SPLICE] = info->guards[HZ_OOB];
	set_guard(info, HZ_ULP, g->skel ? "setsockopt" : "none",
		  g->skel ? "" : "the guard's cgroup/setsockopt did not load");
	for (h = 0; h < HZ__MAX; h++) {
		if (strcmp(info->guards[h].mech, "none"))
			continue;
		pr_warn("%s unguarded (%s): %s\n", hazard_names[h], info->guards[h].why,
			force ? "accelerating anyway (--force)" : "not accelerating (--force overrides)");
		if (!info->selftest_error[0])
			snprintf(info->selftest_error, sizeof(info->selftest_error),
				 "%s unguarded: %s", hazard_names[h], info->guards[h].why);
		info->selftest_blocked |= !force;
	}
}

/*
 * An agent that may not setns() (no CAP_SYS_ADMIN: a least-privilege
 * container) can neither end a connection in another network namespace
 * (iter/tcp and sock_diag see only the caller's) nor learn its addresses:
 * the data plane tracks only sockets of the agent's own namespace
 * (skipped{other_netns}), and status says so.  0 or -1.
 */
static int limit_to_own_netns(struct runtime *rt)
{
	socklen_t len = sizeof(__u64);
	__u64 cookie = 0;
	int err, fd;

	err = netns_can_enter();
	if (!err) /* and none left by a pinned data plane's earlier run */
		return dataplane_set_netns_only(rt->maps.fd[MAP_CONFIG], 0) ? -1 : 0;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	/* SO_NETNS_COOKIE (5.14+; asm-generic/socket.h): the cookie
	 * bpf_get_netns_cookie() gives the data plane */
	if (fd < 0 || getsockopt(fd, SOL_SOCKET, 71, &cookie, &len) || !cookie) {
		pr_warn("this agent may not enter other network namespaces (setns: %s) and can't "
			"name its own (SO_NETNS_COOKIE: %s): not accelerating\n", strerror(-err),
			strerror(errno));
		if (fd >= 0)
			close(fd);
		rt->info.selftest_blocked = true;
		snprintf(rt->info.selftest_error, sizeof(rt->info.selftest_error),
			 "setns refused and no netns cookie");
		return dataplane_set_paused(rt->maps.fd[MAP_CONFIG], true) ? -1 : 0;
	}
	close(fd);
	snprintf(rt->info.netns_scope, sizeof(rt->info.netns_scope), "setns: %s (CAP_SYS_ADMIN)",
		 strerror(-err));
	pr_warn("this agent may not enter other network namespaces (setns: %s; it needs "
		"CAP_SYS_ADMIN): only connections in its own are accelerated\n", strerror(-err));
	return dataplane_set_netns_only(rt->maps.fd[MAP_CONFIG], cookie) ? -1 : 0;
}

static int do_run(void *opts)
{
	static struct runtime runtime; /* big: keep it off the stack */
	const struct run_opts *o = opts;
	struct cg_target targets[MAX_TARGETS];
	struct dataplane_params params = {
		.ports_all = o->ports.all,
		.port_bits = o->ports.bits,
		.short_conn_msgs = o->short_conn_msgs,
		.max_unread = o->max_unread,
		.check_local_addrs = true,
		.guard = true,
		.guard_hooks = o->guard_hooks,
		.pin = o->pin,
	};
	const struct target_names names = {
		.cgroups = o->cgroups, .n_cgroups = o->n_cgroups,
		.pids = o->pids, .n_pids = o->n_pids,
		.pid_file = o->pid_file, .pods = o->k8s_selector,
		.policy = { .any_process = o->any_process,
			    .allow_root_cgroup = o->allow_root_cgroup },
	};
	char err[PATH_MAX + 256] = "";
	struct runtime *rt = &runtime;
	struct enforce_plan plan;
	struct feed_source src;
	int lock_fd = -1, other = 0, n = 0, i, rc = EXIT_RUNTIME, err_enf;
	sigset_t mask;

	if (need_root("run"))
		return EXIT_RUNTIME;
	/* tests only: widen the claim race (claim_race_stress.sh) */
	if (getenv("NGX_SOCKMAP_TEST_CLAIM_DELAY"))
		params.test_claim_delay = atoi(getenv("NGX_SOCKMAP_TEST_CLAIM_DELAY"));
	cg2_join_host_ns();
	if (cg2_mount(rt->mnt, sizeof(rt->mnt))) {
		pr_warn("cgroup v2 is not mounted: mount -t cgroup2 none /sys/fs/cgroup\n");
		return EXIT_RUNTIME;
	}
	if (targets_resolve(&names, rt->mnt, targets, &n, err, sizeof(err))) {
		pr_warn("%s\n", err);
		return EXIT_RUNTIME;
	}
	if (o->k8s_selector) {
		rt->k8s = (struct k8s_opts){
			.selector = o->k8s_selector, .node = o->k8s_node, .api = o->k8s_api,
			.token_file = "/var/run/secrets/kubernetes.io/serviceaccount/token",
			.ca_file = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt",
		};
		/* an API server that is down now (a control plane upgrade)
		 * must not crash-loop the agent: start with the other
		 * targets, and the loop's k8s_sync attaches the pods once
		 * it answers */
		i = k8s_targets(&rt->k8s, rt->mnt, targets + n, MAX_TARGETS - n, err, sizeof(err));
		if (i < 0)
			pr_warn("%s: starting without pods, asking again every few seconds\n", err);
		else
			n += i;
	}
	params.max_sockets = o->max_sockets ?: host_max_sockets(targets, n);
	params.max_sockets_given = o->max_sockets;
	if (dataplane_probe_kernel(err, sizeof(err))) {
		pr_warn("%s\n", err);
		return EXIT_RUNTIME;
	}
	lock_fd = state_lock(&other);
	if (lock_fd < 0) {
		if (lock_fd == -EBUSY)
			pr_warn("another ngx-sockmap agent is running (pid %d); one agent per host\n", other);
		else if (lock_fd != -EPERM) /* EPERM: state_lock said why */
			pr_warn("cannot create %s: %s\n", run_dir(), strerror(-lock_fd));
		return EXIT_RUNTIME;
	}
	agent_maps_init(&rt->maps);
	rt->follow = o->follow;
	rt->ports = o->ports;
	rt->policy = names.policy;
	rt->msrc.maps = &rt->maps;
	rt->msrc.info = &rt->info;
	if (!o->pin && dataplane_pinned_exists()) {
		pr_warn("a pinned data plane exists in %s: adopt it with --pin or remove it with 'ngx-sockmap detach'\n",
			PIN_DIR);
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (dataplane_check_cgroup(&targets[i], o->pin, err, sizeof(err))) {
			pr_warn("%s\n", err);
			goto out;
		}
	}
	if (observer_check_ifaces(o->xdp_ifaces, o->n_xdp, err, sizeof(err))) {
		pr_warn("%s\n", err);
		goto out;
	}
	/* Bind the metrics port before anything is attached: a port in use
	 * must fail with nothing to undo. */
	if (o->metrics) {
		if (metrics_start(&rt->metrics, (const struct sockaddr *)&o->metrics_addr,
				  o->metrics_addr_len, &rt->msrc, err, sizeof(err))) {
			char a[64] = "";

			format_addr(&o->metrics_addr, a, sizeof(a));
			pr_warn("%s: %s\n", err, a);
			goto out;
		}
		format_addr(&o->metrics_addr, rt->info.metrics, sizeof(rt->info.metrics));
	}

	/* Signals are taken through a signalfd in runtime_serve(); block them
	 * now so a SIGTERM during set-up is not lost (or fatal) either. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);

	/* What this host allows for ending connections and measuring unread
	 * bytes, before the self-test (its reset check uses the choice) and
	 * the data plane (which keeps unread_watch for the weaker scan). */
	if (enforcer_plan(o->resets, o->unread_scan, &plan))
		goto out;
	run_selftest(rt->mnt, o->force, &rt->info, &params, &plan, o->resets == RESETS_AUTO);
	params.watch_unread = plan.unread == UNREAD_WATCH;
	if (dataplane_load(&rt->dp, &params))
		goto out;
	dataplane_maps(&rt->dp, &rt->maps);
	rt->msrc.dp = &rt->dp;
	rt->msrc.enforcer = &rt->enforcer;
	err_enf = enforcer_start(&rt->enforcer, &plan, dataplane_object(&rt->dp),
				 rt->maps.fd[MAP_SOCK_HASH], rt->maps.fd[MAP_RESETS],
				 rt->maps.fd[MAP_RESET_BACKLOG], rt->maps.fd[MAP_GAUGES], o->max_unread,
				 o->unread_budget ?: enforcer_default_budget());
	plan_guards(rt, &plan, err_enf, params.splice_guard, o->force);
	if (rt->info.selftest_blocked && dataplane_set_paused(rt->maps.fd[MAP_CONFIG], true))
		goto out;
	if (limit_to_own_netns(rt))
		goto out;
	dataplane_events(&rt->dp, &src);
	if (feed_add(&rt->feed, FEED_CONN, &src)) {
		pr_warn("reading the data plane's event ring: %s\n", strerror(errno));
		goto out;
	}
	rt->msrc.feed = &rt->feed;
	snprintf(rt->info.rings[RING_CONN].transport, sizeof(rt->info.rings[RING_CONN].transport),
		 "%s", feed_transport(&rt->feed, FEED_CONN));
	dataplane_ring_place(&rt->dp, &rt->info.rings[RING_CONN].addr,
			     &rt->info.rings[RING_CONN].off);
	if (dataplane_attach_msg(&rt->dp))
		goto out;
	if (arming_start(&rt->arming, &rt->dp.guard, rt->maps.fd[MAP_GUARD_STATE],
			 rt->maps.fd[MAP_GUARD_WAKEUP], rt->maps.fd[MAP_SOCK_HASH], o->guard_idle)) {
		pr_warn("arming the guard: %s\n", strerror(errno));
		goto out;
	}
	/* the addresses of the targets' namespaces before any connection
	 * can be tracked: a peer not among them is never inserted */
	runtime_refresh_netns(rt, targets, n);
	for (i = 0; i < n; i++) {
		if (dataplane_attach_cgroup(&rt->dp, &targets[i], err, sizeof(err))) {
			pr_warn("%s\n", err);
			goto out;
		}
	}
	if (o->n_xdp && start_observer(rt, o))
		goto out;

	rt->info.pid = getpid();
	rt->info.pinned = o->pin;
	runtime_publish(rt);
	print_ready(rt, o->pin);
	rc = runtime_serve(rt) ? EXIT_RUNTIME : 0;
	/* detaching can take a moment (the guard, the links): say so, as
	 * sd_notify(3) asks, so the unit shows "deactivating" meanwhile */
	notify_service_manager("STOPPING=1\nSTATUS=detaching");
out:
	arming_stop(&rt->arming);
	enforcer_stop(&rt->enforcer);
	free(rt->ns);
	feed_stop(&rt->feed);
	topk_free(&rt->topk);
	if (observer_running(&rt->xdp))
		observer_stop(&rt->xdp);
	metrics_stop(&rt->metrics);
	dataplane_destroy(&rt->dp);
	state_remove(lock_fd);
	if (o->pin && rc == 0)
		pr_info("data plane stays pinned in %s; remove with 'ngx-sockmap detach'\n", PIN_DIR);
	return rc;
}

static struct run_opts run_opts; /* run_opts_init() sets the defaults */

const struct command cmd_run = {
	.name = "run",
	.summary = "attach to Nginx's cgroup(s) and accelerate until stopped",
	.doc = "Attach the sockmap data plane and stay in the foreground until SIGINT or "
	       "SIGTERM (exit 0). Prints a line starting with \"ready\" once attached.\n"
	       "\n"
	       "Sockets in the named cgroups are tracked; a send is redirected to the peer "
	       "socket only when both ends are tracked on this host and proven to be the two "
	       "ends of one connection. Everything else uses TCP, unchanged.\n"
	       "\n"
	       "Local peers are followed: every 2 s the agent looks (sock_diag) for local "
	       "processes connected to the tracked cgroups and attaches to their cgroups "
	       "too (never the root cgroup); new connections with them are accelerated.\n"
	       "\n"
	       "Without --pin nothing stays attached after exit: connections opened while "
	       "the agent ran keep their acceleration until they close, new ones use TCP.\n"
	       "\n"
	       "EXAMPLES:\n"
	       "  ngx-sockmap run\n"
	       "  ngx-sockmap run -p $(cat /run/nginx.pid) -c /sys/fs/cgroup/upstream.slice\n"
	       "  ngx-sockmap run --nginx-pid-file /var/run/nginx.pid --ports 80,443 -v"
	       "\vOPTIONS above; exit status 0 on a clean stop, 1 on a runtime error, 2 on a "
	       "usage error.",
	.options = run_argp_options,
	.parse = run_parse,
	.opts = &run_opts,
	.handler = do_run,
};

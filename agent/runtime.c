// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The running agent, one owner from start to stop: runtime_start()
 * resolves targets -> probes -> locks -> self-tests -> loads -> attaches
 * and says ready; runtime_serve() is the loop; runtime_stop() undoes
 * whatever start got to.
 */
#define _GNU_SOURCE /* prlimit */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/sysinfo.h>
#include <sys/timerfd.h>
#include <unistd.h>
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

#define TICK_SEC 1          /* event rings' stragglers, top-K window */
#define SUMMARY_EVERY_SEC 10

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

/* -v: one line of progress every SUMMARY_EVERY_SEC. */
static void log_summary(const struct runtime *rt)
{
	struct counters c;

	if (counters_read(&rt->maps, &c))
		return;
	pr_info("sockets %llu, pairs %llu, redirected %llu msgs / %llu bytes, via TCP %llu msgs\n",
		(unsigned long long)c.sockets_now, (unsigned long long)c.sum.pairs,
		(unsigned long long)c.sum.redirected_msgs,
		(unsigned long long)c.sum.redirected_bytes, (unsigned long long)c.sum.tcp_msgs);
}

/* Endpoints orphaned by a detach (dataplane_sweep_endpoints): a lookup or
 * two for each endpoint that existed at a detach, none without one. */
#define SWEEP_EVERY_TICKS 10

static void sweep_endpoints(struct runtime *rt)
{
	int n = dataplane_sweep_endpoints(&rt->dp);

	if (n > 0) {
		rt->endpoints_swept += n;
		pr_debug("removed %d orphaned endpoints\n", n);
	}
}

static __u64 boottime_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_BOOTTIME, &t);
	return (__u64)t.tv_sec * 1000000000ULL + t.tv_nsec;
}

/* agent_gauges, written whole once a tick: each fact from its owner, the
 * unread ones measured by the enforcer now, and the heartbeat `ngx-sockmap
 * health` checks (the loop ticked). */
static void publish_gauges(struct runtime *rt)
{
	struct agent_gauges g = { .local_addrs = rt->local_addrs,
				  .guards_armed = rt->arming.armed,
				  .netns_unresolved = rt->netns_unresolved,
				  .endpoints_swept = rt->endpoints_swept,
				  .followed = rt->rec.n_followed,
				  .followed_max = rt->rec.follow ? rt->rec.max_followed : 0,
				  .follow_refused = rt->rec.follow_refused,
				  .follow_released = rt->rec.follow_released };
	__u32 zero = 0;

	enforcer_tick(&rt->enforcer, &g);
	g.heartbeat_ns = boottime_ns();
	bpf_map_update_elem(rt->maps.fd[MAP_GAUGES], &zero, &g, BPF_ANY);
}

static void tick(struct runtime *rt, uint64_t n)
{
	static uint64_t ticks;
	int err;

	feed_drain(&rt->feed);
	err = dataplane_refill_nonces(&rt->dp);
	if (err < 0)
		pr_debug("refilling the nonce pool: %s\n", strerror(-err));
	if (observer_running(&rt->xdp))
		topk_tick(&rt->topk, rt->maps.fd[MAP_SRC_STATS]);
	runtime_refresh_netns(rt, NULL, 0);
	arming_tick(&rt->arming);
	ticks += n;
	if (ticks % SWEEP_EVERY_TICKS == 0)
		sweep_endpoints(rt);
	publish_gauges(rt);
	if (reconcile(&rt->rec, ticks)) {
		runtime_refresh_netns(rt, NULL, 0);
		runtime_publish(rt);
	}
}

static void watch(int ep, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	if (fd >= 0)
		epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

/* A periodic timerfd: first after first_sec (0: at once), then every
 * every_sec. */
static int timer(time_t first_sec, time_t every_sec)
{
	/* an all-zero it_value disarms the timer: "at once" is 1 ns */
	struct itimerspec its = { .it_interval = { every_sec, 0 },
				  .it_value = { first_sec, first_sec ? 0 : 1 } };
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);

	if (fd >= 0 && timerfd_settime(fd, 0, &its, NULL)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The signals that end the run: blocked from the start (runtime_start),
 * taken through a signalfd by the loop. */
static void stop_signals(sigset_t *mask)
{
	sigemptyset(mask);
	sigaddset(mask, SIGINT);
	sigaddset(mask, SIGTERM);
	sigaddset(mask, SIGHUP);
}

/* One epoll loop: signals, the tick (rings, top-K, nonces, following and
 * libmicrohttpd's timeouts), ring and nonce wake-ups, metrics connections,
 * and the -v summary timer. */
int runtime_serve(struct runtime *rt)
{
	int ep, sfd, tick_fd, sum_fd = -1, wake_fd, http_fd, reset_fd, arm_fd, nonce_fd, ret = 0;
	struct signalfd_siginfo si;
	struct epoll_event got;
	uint64_t ticks;
	sigset_t mask;

	stop_signals(&mask);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (sfd < 0 || ep < 0)
		return -errno;
	tick_fd = timer(0, TICK_SEC);
	if (log_verbosity >= LOG_INFO)
		sum_fd = timer(SUMMARY_EVERY_SEC, SUMMARY_EVERY_SEC);
	wake_fd = feed_epoll_fd(&rt->feed);
	http_fd = rt->metrics.daemon ? rt->metrics.epoll_fd : -1;
	reset_fd = enforcer_epoll_fd(&rt->enforcer);
	arm_fd = arming_epoll_fd(&rt->arming);
	nonce_fd = nonce_pool_epoll_fd(&rt->dp.nonces);
	watch(ep, reset_fd);
	watch(ep, arm_fd);
	watch(ep, nonce_fd);
	watch(ep, sfd);
	watch(ep, tick_fd);
	watch(ep, sum_fd);
	watch(ep, wake_fd);
	watch(ep, http_fd);
	for (;;) {
		if (epoll_wait(ep, &got, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
		if (got.data.fd == sum_fd) {
			if (read(sum_fd, &ticks, sizeof(ticks)) > 0)
				log_summary(rt);
		} else if (got.data.fd == tick_fd) {
			if (read(tick_fd, &ticks, sizeof(ticks)) > 0)
				tick(rt, ticks);
			metrics_serve(&rt->metrics);
		} else if (got.data.fd == reset_fd) {
			enforcer_on_requests(&rt->enforcer);
		} else if (got.data.fd == arm_fd) {
			arming_on_wakeup(&rt->arming);
		} else if (got.data.fd == nonce_fd) {
			nonce_pool_on_wakeup(&rt->dp.nonces);
		} else if (got.data.fd == wake_fd) {
			feed_on_wakeup(&rt->feed);
		} else if (got.data.fd == http_fd) {
			metrics_serve(&rt->metrics);
		} else if (read(sfd, &si, sizeof(si)) == sizeof(si)) {
			pr_info("%s: detaching\n", strsignal(si.ssi_signo));
			break;
		}
	}
	close(ep);
	close(sfd);
	if (tick_fd >= 0)
		close(tick_fd);
	if (sum_fd >= 0)
		close(sum_fd);
	return ret;
}

/* ---- start and stop ---- */

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
		return 1;
	}
	close(fd);
	snprintf(rt->info.netns_scope, sizeof(rt->info.netns_scope), "setns: %s (CAP_SYS_ADMIN)",
		 strerror(-err));
	pr_warn("this agent may not enter other network namespaces (setns: %s; it needs "
		"CAP_SYS_ADMIN): only connections in its own are accelerated\n", strerror(-err));
	return dataplane_set_netns_only(rt->maps.fd[MAP_CONFIG], cookie) ? -1 : 0;
}

/* The cgroups named, and the pods selected. */
static int find_targets(struct runtime *rt, const struct run_opts *o, struct cg_target *targets,
			int *n)
{
	const struct target_names names = {
		.cgroups = o->cgroups, .n_cgroups = o->n_cgroups,
		.pids = o->pids, .n_pids = o->n_pids,
		.pid_file = o->pid_file, .pods = o->k8s_selector,
		.policy = rt->policy,
	};
	char err[PATH_MAX + 256] = "";
	int i;

	cg2_join_host_ns();
	if (cg2_mount(rt->mnt, sizeof(rt->mnt))) {
		pr_warn("cgroup v2 is not mounted: mount -t cgroup2 none /sys/fs/cgroup\n");
		return -1;
	}
	if (targets_resolve(&names, rt->mnt, targets, n, err, sizeof(err))) {
		pr_warn("%s\n", err);
		return -1;
	}
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
		i = k8s_targets(&rt->k8s, rt->mnt, targets + *n, MAX_TARGETS - *n, err, sizeof(err));
		if (i < 0)
			pr_warn("%s: starting without pods, asking again every few seconds\n", err);
		else
			*n += i;
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
		.max_sockets = max_sockets,
		.max_sockets_given = o->max_sockets,
	};
	struct enforce_plan enforce;
	struct load_plan lp;
	struct plan_facts facts;
	struct plan plan;
	int netns;

	/* tests only: widen the claim race (claim_race_stress.sh) */
	if (getenv("NGX_SOCKMAP_TEST_CLAIM_DELAY"))
		params.test_claim_delay = atoi(getenv("NGX_SOCKMAP_TEST_CLAIM_DELAY"));
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

int runtime_start(struct runtime *rt, const struct run_opts *o)
{
	struct cg_target targets[MAX_TARGETS];
	uint32_t max_sockets;
	sigset_t mask;
	int n = 0;

	/* what runtime_stop() looks at, before anything can fail */
	memset(rt, 0, sizeof(*rt));
	rt->lock_fd = -1;
	agent_maps_init(&rt->maps);
	rt->msrc.maps = &rt->maps;
	rt->msrc.info = &rt->info;
	rt->ports = o->ports;
	rt->policy = (struct target_policy){ .any_process = o->any_process,
					     .allow_root_cgroup = o->allow_root_cgroup };
	rt->rec = (struct reconciler){ .dp = &rt->dp, .mnt = rt->mnt, .policy = &rt->policy,
				       .k8s = &rt->k8s, .ports = &rt->ports,
				       .follow = o->follow, .max_followed = o->max_followed };
	if (find_targets(rt, o, targets, &n))
		return -1;
	max_sockets = o->max_sockets ?: host_max_sockets(targets, n);
	if (claim(rt, o, targets, n))
		return -1;
	/* Signals are taken through a signalfd in runtime_serve(); block them
	 * now so a SIGTERM during set-up is not lost (or fatal) either. */
	stop_signals(&mask);
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
	dataplane_destroy(&rt->dp);
	/* agent.state is this agent's only while it holds the lock */
	if (rt->lock_fd >= 0)
		state_remove(rt->lock_fd);
	rt->lock_fd = -1;
}

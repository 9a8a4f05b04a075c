// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* `ngx-sockmap run`: resolve targets -> probe -> lock -> load -> attach ->
 * serve until SIGINT/SIGTERM -> tear down.  One exit path. */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "accel.h" /* the skeleton's types */
#include "accel.skel.h"
#include "commands.h"
#include "dataplane.h"
#include "event_feed.h"
#include "follow.h"
#include "metrics.h"
#include "xdp_observer.h"
#include "telemetry.h" /* the skeleton's types */
#include "telemetry.skel.h"
#include "topk.h"
#include "log.h"
#include "selftest.h"
#include "state.h"
#include "stats.h"

#define DEFAULT_PID_FILE "/run/nginx.pid"

static int add_target(struct cg_target *list, int *n, const struct cg_target *t)
{
	int i;

	for (i = 0; i < *n; i++)
		if (list[i].id == t->id)
			return 0; /* named twice: attach once */
	if (*n >= MAX_TARGETS)
		return -E2BIG;
	list[(*n)++] = *t;
	return 0;
}

static int resolve_targets(const struct run_opts *o, const char *mnt, struct cg_target *list,
			   int *n)
{
	const char *pid_file = o->pid_file;
	char err[PATH_MAX + 256] = "";
	struct cg_target t;
	int i, pid;

	*n = 0;
	for (i = 0; i < o->n_cgroups; i++) {
		memset(&t, 0, sizeof(t));
		if (cg2_resolve(mnt, o->cgroups[i], &t, err, sizeof(err)))
			goto bad;
		snprintf(t.reason, sizeof(t.reason), "named: --cgroup");
		add_target(list, n, &t);
	}
	for (i = 0; i < o->n_pids; i++) {
		memset(&t, 0, sizeof(t));
		if (cg2_of_pid(mnt, o->pids[i], &t, err, sizeof(err)))
			goto bad;
		add_target(list, n, &t);
	}
	if (!pid_file && !o->n_cgroups && !o->n_pids)
		pid_file = DEFAULT_PID_FILE;
	if (pid_file) {
		memset(&t, 0, sizeof(t));
		if (read_pid_file(pid_file, &pid, err, sizeof(err))) {
			if (pid_file != o->pid_file)
				snprintf(err, sizeof(err),
					 "no target: nginx pid file %s not found; name one with --cgroup, --nginx-pid or --nginx-pid-file",
					 DEFAULT_PID_FILE);
			goto bad;
		}
		if (cg2_of_pid(mnt, pid, &t, err, sizeof(err)))
			goto bad;
		snprintf(t.reason, sizeof(t.reason), "named: nginx pid %d", pid);
		add_target(list, n, &t);
	}
	return 0;
bad:
	pr_warn("%s\n", err);
	return -1;
}

static void log_summary(const struct accel *a)
{
	struct agent_maps m = {
		.stats_fd = bpf_map__fd(a->skel->maps.accel_stats),
		.config_fd = bpf_map__fd(a->skel->maps.accel_config),
		.sock_hash_fd = -1,
		.endpoints_fd = -1,
	};
	struct stats_snapshot s;

	if (stats_read(&m, &s))
		return;
	pr_info("sockets %llu, pairs %llu, redirected %llu msgs / %llu bytes, via TCP %llu msgs\n",
		(unsigned long long)(s.sum.sockets_added - s.sum.sockets_closed),
		(unsigned long long)s.sum.pairs, (unsigned long long)s.sum.redirected_msgs,
		(unsigned long long)s.sum.redirected_bytes, (unsigned long long)s.sum.tcp_msgs);
}

struct run_ctx {
	const struct run_opts *o;
	struct accel a;
	struct telemetry tel;
	struct metrics_server metrics;
	struct metrics_src msrc;
	struct event_feed feed;
	struct topk_window topk;
	struct agent_info info;
	struct agent_maps maps;
	char mnt[PATH_MAX];
};

/* Where an arena is mapped and an __arena global sits in it (for `top`). */
static void arena_place(const struct bpf_map *arena, const void *global, unsigned long *addr,
			unsigned long *off)
{
	size_t size = 0;
	const char *base = bpf_map__initial_value((struct bpf_map *)arena, &size);

	*addr = *off = 0;
	if (!base || (const char *)global < base || (const char *)global >= base + size)
		return;
	*addr = (unsigned long)base;
	*off = (const char *)global - base;
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

static void publish_state(struct run_ctx *c)
{
	c->info.n_cgroups = c->a.n_targets;
	memcpy(c->info.cgroups, c->a.targets, sizeof(c->a.targets[0]) * c->a.n_targets);
	if (state_write(&c->info, &c->maps))
		pr_warn("writing %s/agent.state failed: status will not find this agent\n", run_dir());
}

/* Attach to the cgroups of local peers of what we track (--no-follow: off). */
static void follow_peers(struct run_ctx *c)
{
	struct follow_candidate cand[16];
	char err[PATH_MAX + 256];
	int n, i, added = 0;

	n = follow_scan(c->mnt, c->a.targets, c->a.n_targets, &c->o->ports, cand, 16);
	if (n < 0) {
		pr_debug("follow: scan failed: %s\n", strerror(-n));
		return;
	}
	for (i = 0; i < n && c->a.n_targets < MAX_TARGETS; i++) {
		if (accel_attach_cgroup(&c->a, &cand[i].target, err, sizeof(err))) {
			pr_warn("follow: %s\n", err);
			continue;
		}
		printf("following %s (%s)\n", cand[i].target.path, cand[i].target.reason);
		added++;
	}
	if (added) {
		fflush(stdout);
		publish_state(c);
	}
}

#define TICK_SEC 1          /* event rings' stragglers, top-K window */
#define FOLLOW_EVERY_TICKS 2
#define SUMMARY_EVERY_SEC 10

static void tick(struct run_ctx *c, uint64_t n)
{
	static uint64_t ticks;

	feed_drain(&c->feed);
	if (c->tel.skel)
		topk_tick(&c->topk, bpf_map__fd(c->tel.skel->maps.src_stats));
	ticks += n;
	if (c->o->follow && ticks % FOLLOW_EVERY_TICKS == 0)
		follow_peers(c);
}

/* One epoll loop: signals, the follow timer, a timer for -v progress. */
static int serve(struct run_ctx *c)
{
	struct itimerspec tick_every = { .it_interval = { TICK_SEC, 0 }, .it_value = { 0, 1 } };
	struct itimerspec summary_every = { .it_interval = { SUMMARY_EVERY_SEC, 0 },
					    .it_value = { SUMMARY_EVERY_SEC, 0 } };
	struct epoll_event ev = { .events = EPOLLIN }, got;
	int ep, sfd, tfd = -1, ffd = -1, wfd, ret = 0;
	struct signalfd_siginfo si;
	uint64_t ticks;
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (sfd < 0 || ep < 0)
		return -errno;
	ev.data.fd = sfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev);
	if (log_verbosity >= LOG_INFO) {
		tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
		if (tfd >= 0 && !timerfd_settime(tfd, 0, &summary_every, NULL)) {
			ev.data.fd = tfd;
			epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev);
		}
	}
	if (c->metrics.daemon && c->metrics.epoll_fd >= 0) {
		ev.data.fd = c->metrics.epoll_fd;
		epoll_ctl(ep, EPOLL_CTL_ADD, c->metrics.epoll_fd, &ev);
	}
	wfd = feed_epoll_fd(&c->feed);
	if (wfd >= 0) {
		ev.data.fd = wfd;
		epoll_ctl(ep, EPOLL_CTL_ADD, wfd, &ev);
	}
	/* The tick also serves libmicrohttpd's connection timeouts. */
	{
		ffd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
		if (ffd >= 0 && !timerfd_settime(ffd, 0, &tick_every, NULL)) {
			ev.data.fd = ffd;
			epoll_ctl(ep, EPOLL_CTL_ADD, ffd, &ev);
		}
	}
	for (;;) {
		if (epoll_wait(ep, &got, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
		if (got.data.fd == tfd) {
			if (read(tfd, &ticks, sizeof(ticks)) > 0)
				log_summary(&c->a);
			continue;
		}
		if (got.data.fd == ffd) {
			if (read(ffd, &ticks, sizeof(ticks)) > 0)
				tick(c, ticks);
			metrics_serve(&c->metrics);
			continue;
		}
		if (wfd >= 0 && got.data.fd == wfd) {
			feed_on_wakeup(&c->feed);
			continue;
		}
		if (c->metrics.daemon && got.data.fd == c->metrics.epoll_fd) {
			metrics_serve(&c->metrics);
			continue;
		}
		if (read(sfd, &si, sizeof(si)) == sizeof(si)) {
			pr_info("%s: detaching\n", strsignal(si.ssi_signo));
			break;
		}
	}
	close(ep);
	close(sfd);
	if (tfd >= 0)
		close(tfd);
	if (ffd >= 0)
		close(ffd);
	return ret;
}

int cmd_run(const struct run_opts *o)
{
	static struct run_ctx ctx; /* big: keep it off the stack */
	struct cg_target targets[MAX_TARGETS];
	struct selftest_report report = { 0 };
	char err[PATH_MAX + 256] = "";
	struct run_ctx *c = &ctx;
	int lock_fd = -1, other = 0, n = 0, i, rc = EXIT_RUNTIME;
	sigset_t mask;

	c->o = o;
	if (geteuid() != 0) {
		pr_warn("run needs root (CAP_BPF, CAP_NET_ADMIN, CAP_SYS_ADMIN): try sudo ngx-sockmap run\n");
		return EXIT_RUNTIME;
	}
	if (cg2_mount(c->mnt, sizeof(c->mnt))) {
		pr_warn("cgroup v2 is not mounted: mount -t cgroup2 none /sys/fs/cgroup\n");
		return EXIT_RUNTIME;
	}
	if (resolve_targets(o, c->mnt, targets, &n))
		return EXIT_RUNTIME;
	if (accel_probe_kernel(err, sizeof(err))) {
		pr_warn("%s\n", err);
		return EXIT_RUNTIME;
	}
	lock_fd = state_lock(&other);
	if (lock_fd < 0) {
		if (lock_fd == -EBUSY)
			pr_warn("another ngx-sockmap agent is running (pid %d); one agent per host\n", other);
		else
			pr_warn("cannot create %s: %s\n", run_dir(), strerror(-lock_fd));
		return EXIT_RUNTIME;
	}
	if (!o->pin && accel_pinned_exists()) {
		pr_warn("a pinned data plane exists in %s: adopt it with --pin or remove it with 'ngx-sockmap detach'\n",
			PIN_DIR);
		goto out;
	}
	if (telemetry_check_ifaces(o->xdp_ifaces, o->n_xdp, err, sizeof(err))) {
		pr_warn("%s\n", err);
		goto out;
	}
	/* Bind the metrics port before anything is attached: a port in use
	 * must fail with nothing to undo. */
	c->maps = (struct agent_maps)AGENT_MAPS_INIT;
	c->msrc.maps = &c->maps;
	c->msrc.info = &c->info;
	if (o->metrics) {
		if (metrics_start(&c->metrics, (const struct sockaddr *)&o->metrics_addr,
				  o->metrics_addr_len, &c->msrc, err, sizeof(err))) {
			char a[64] = "";

			format_addr(&o->metrics_addr, a, sizeof(a));
			pr_warn("%s: %s\n", err, a);
			goto out;
		}
		format_addr(&o->metrics_addr, c->info.metrics, sizeof(c->info.metrics));
	}

	/* Signals are taken through a signalfd in serve(); block them now so
	 * a SIGTERM during set-up is not lost (or fatal) either. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);

	/* Check this kernel's redirect path before trusting it with nginx's
	 * bytes; a failure that can corrupt data keeps the data plane paused. */
	if (selftest_run(c->mnt, &report) == 0) {
		for (i = 0; i < SELFTEST_CHECKS; i++) {
			struct selftest_line *l = &c->info.selftest[c->info.n_selftest++];
			const struct selftest_check *ck = &report.checks[i];

			snprintf(l->name, sizeof(l->name), "%s", ck->name);
			snprintf(l->result, sizeof(l->result), "%s", selftest_result_name(ck->result));
			snprintf(l->detail, sizeof(l->detail), "%s",
				 ck->result == ST_FAIL && ck->detail[0] ? ck->detail : ck->what);
			if (ck->result == ST_FAIL)
				pr_warn("selftest %s: %s (%s)\n", ck->name, l->detail,
					ck->critical ? "critical: acceleration disabled"
						     : "reported, not critical");
		}
		c->info.selftest_blocked = report.critical_failure;
	} else {
		pr_warn("selftest could not run; accelerating without it\n");
	}

	if (accel_load(&c->a, o, report.ran && report.slow_reader_fallback_safe))
		goto out;
	if (c->info.selftest_blocked && config_pause_fd(bpf_map__fd(c->a.skel->maps.accel_config)))
		goto out;
	if (feed_add(&c->feed, FEED_CONN, &c->a.skel->arena->ring,
		     bpf_map__fd(c->a.skel->maps.ring_wakeups))) {
		pr_warn("reading the data plane's event ring: %s\n", strerror(errno));
		goto out;
	}
	arena_place(c->a.skel->maps.conn_arena, &c->a.skel->arena->ring, &c->info.conn_arena_addr,
		    &c->info.conn_ring_off);
	if (accel_attach_msg(&c->a))
		goto out;
	for (i = 0; i < n; i++) {
		if (accel_attach_cgroup(&c->a, &targets[i], err, sizeof(err))) {
			pr_warn("%s\n", err);
			goto out;
		}
	}

	if (o->n_xdp) {
		if (telemetry_start(&c->tel, o->xdp_ifaces, o->n_xdp, o->xdp_sample, err,
				    sizeof(err))) {
			pr_warn("%s\n", err);
			goto out;
		}
		c->msrc.telemetry = &c->tel;
		if (feed_add(&c->feed, FEED_PKT, &c->tel.skel->arena->ring,
			     bpf_map__fd(c->tel.skel->maps.ring_wakeups)) ||
		    topk_init(&c->topk, TOPK_WINDOW_SEC)) {
			pr_warn("reading the XDP event ring: %s\n", strerror(errno));
			goto out;
		}
		c->msrc.topk = &c->topk;
		arena_place(c->tel.skel->maps.pkt_arena, &c->tel.skel->arena->ring,
			    &c->info.pkt_arena_addr, &c->info.pkt_ring_off);
		c->maps.pkt_arena_fd = bpf_map__fd(c->tel.skel->maps.pkt_arena);
		c->maps.src_stats_fd = bpf_map__fd(c->tel.skel->maps.src_stats);
		for (i = 0; i < c->tel.n_ifaces && i < 16; i++) {
			snprintf(c->info.xdp[i].name, sizeof(c->info.xdp[i].name), "%s",
				 c->tel.ifaces[i].name);
			snprintf(c->info.xdp[i].mode, sizeof(c->info.xdp[i].mode), "%s",
				 c->tel.ifaces[i].mode);
			c->info.n_xdp++;
		}
	}
	c->msrc.accel = c->a.skel;
	c->msrc.feed = &c->feed;

	c->info.pid = getpid();
	c->info.pinned = o->pin;
	c->maps.stats_fd = bpf_map__fd(c->a.skel->maps.accel_stats);
	c->maps.config_fd = bpf_map__fd(c->a.skel->maps.accel_config);
	c->maps.sock_hash_fd = bpf_map__fd(c->a.skel->maps.sock_hash);
	c->maps.endpoints_fd = bpf_map__fd(c->a.skel->maps.endpoints);
	c->maps.conn_arena_fd = bpf_map__fd(c->a.skel->maps.conn_arena);
	publish_state(c);

	printf("ready: attached to %d cgroup%s%s%s\n", c->a.n_targets,
	       c->a.n_targets == 1 ? "" : "s", o->pin ? " (pinned)" : "",
	       c->info.selftest_blocked ? ", NOT accelerating: kernel self-test failed" : "");
	for (i = 0; i < c->a.n_targets; i++)
		printf("  %s (%s)\n", c->a.targets[i].path, c->a.targets[i].reason);
	fflush(stdout);

	rc = serve(c) ? EXIT_RUNTIME : 0;
out:
	feed_stop(&c->feed);
	topk_free(&c->topk);
	if (c->tel.skel)
		telemetry_stop(&c->tel);
	metrics_stop(&c->metrics);
	accel_destroy(&c->a);
	state_remove(lock_fd);
	if (o->pin && rc == 0)
		pr_info("data plane stays pinned in %s; remove with 'ngx-sockmap detach'\n", PIN_DIR);
	return rc;
}

int cmd_status(bool json)
{
	struct stats_snapshot s;
	struct agent_info info;
	struct agent_maps m;
	char err[256];
	int ret;

	if (geteuid() != 0) {
		pr_warn("status reads BPF maps and needs root: try sudo ngx-sockmap status\n");
		return EXIT_RUNTIME;
	}
	if (state_open(&m, &info, err, sizeof(err))) {
		pr_warn("%s\n", err);
		return EXIT_RUNTIME;
	}
	ret = stats_read(&m, &s);
	state_close(&m);
	if (ret) {
		pr_warn("reading counters failed: %s\n", strerror(-ret));
		return EXIT_RUNTIME;
	}
	if (json)
		stats_print_json(stdout, &s, &info);
	else
		stats_print_text(stdout, &s, &info);
	return 0;
}

int cmd_pause(bool paused)
{
	struct agent_info info;
	struct agent_maps m;
	char err[256];
	int ret;

	if (geteuid() != 0) {
		pr_warn("%s needs root: try sudo\n", paused ? "pause" : "resume");
		return EXIT_RUNTIME;
	}
	if (state_open(&m, &info, err, sizeof(err))) {
		pr_warn("%s\n", err);
		return EXIT_RUNTIME;
	}
	ret = config_set_paused(&m, paused);
	state_close(&m);
	if (ret) {
		pr_warn("updating the config map failed: %s\n", strerror(-ret));
		return EXIT_RUNTIME;
	}
	printf(paused ? "paused: new connections use TCP; paired ones stay redirected until they close\n"
		      : "resumed: new connections are accelerated again\n");
	return 0;
}

int cmd_selftest(void)
{
	struct selftest_report r;
	char mnt[PATH_MAX];
	int ret;

	if (geteuid() != 0) {
		pr_warn("selftest loads BPF programs and needs root: try sudo ngx-sockmap selftest\n");
		return EXIT_RUNTIME;
	}
	if (cg2_mount(mnt, sizeof(mnt))) {
		pr_warn("cgroup v2 is not mounted: mount -t cgroup2 none /sys/fs/cgroup\n");
		return EXIT_RUNTIME;
	}
	ret = selftest_run(mnt, &r);
	if (ret) {
		pr_warn("selftest could not run: %s\n", strerror(-ret));
		return EXIT_RUNTIME;
	}
	printf("kernel self-test of the redirect path (private cgroup, loopback):\n");
	selftest_print(stdout, &r);
	if (r.critical_failure)
		printf("result: CRITICAL failure: 'run' will not accelerate on this kernel\n");
	else if (r.failures)
		printf("result: usable; %d non-critical issue%s reported above\n", r.failures,
		       r.failures == 1 ? "" : "s");
	else
		printf("result: all checks passed\n");
	return r.critical_failure ? EXIT_RUNTIME : 0;
}

int cmd_detach(void)
{
	int other = 0, lock_fd, n;

	if (geteuid() != 0) {
		pr_warn("detach needs root: try sudo ngx-sockmap detach\n");
		return EXIT_RUNTIME;
	}
	lock_fd = state_lock(&other);
	if (lock_fd < 0 && lock_fd == -EBUSY) {
		pr_warn("agent pid %d is running: stop it first (its pinned state is removed by detach afterwards)\n",
			other);
		return EXIT_RUNTIME;
	}
	n = accel_unpin_all();
	if (lock_fd >= 0)
		close(lock_fd);
	if (n < 0) {
		printf("nothing pinned in %s\n", PIN_DIR);
		return 0;
	}
	printf("detached: removed %d pinned objects from %s\n", n, PIN_DIR);
	return 0;
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The running agent's one epoll loop (runtime.h): signals, the tick once a
 * second (event rings' stragglers, nonces, the top-K window, the guard's
 * arming, the gauges, then the attachments through the reconciler), the
 * wake-ups of the rings and the nonce pool, reset requests, metrics
 * connections and the -v summary.  runtime.c starts and stops what it
 * drives.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "bpfutil.h"
#include "counters.h"
#include "log.h"
#include "reconcile.h"
#include "runtime.h"

#define TICK_SEC 1          /* event rings' stragglers, top-K window */
#define SUMMARY_EVERY_SEC 10

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

/* The verdict's window (verdict.h): a sample of the pairs and the
 * connections made every PAIR_WINDOW_STEP_SEC. */
static void sample_pairs(struct runtime *rt)
{
	struct counters c;
	uint64_t conns;
	int i;

	if (counters_read(&rt->maps, &c))
		return;
	conns = c.sum.sockets_added;
	for (i = 0; i < SKIP__MAX; i++)
		conns += c.sum.skipped[i];
	pair_window_add(&rt->pairs_window, c.sum.pairs, conns, &rt->recent_pairs,
			&rt->recent_conns);
}

/* agent_gauges, written whole once a tick: each fact from its owner, the
 * unread ones measured by the enforcer now, and the heartbeat `ngx-sockmap
 * health` checks (the loop ticked). */
static void publish_gauges(struct runtime *rt, const struct accel_stats *st)
{
	struct agent_gauges g = { .local_addrs = rt->local_addrs,
				  .guards_armed = rt->arming.armed,
				  .netns_unresolved = rt->netns_unresolved,
				  .endpoints_swept = rt->endpoints_swept,
				  .followed = rt->rec.n_followed,
				  .followed_max = rt->rec.follow ? rt->rec.max_followed : 0,
				  .follow_refused = rt->rec.follow_refused,
				  .follow_released = rt->rec.follow_released,
				  .cgroups = rt->dp.n_targets,
				  .recent_pairs = rt->recent_pairs,
				  .recent_conns = rt->recent_conns };
	__u32 zero = 0;

	enforcer_tick(&rt->enforcer, st, &g);
	g.heartbeat_ns = boottime_ns();
	bpf_map_update_elem(rt->maps.fd[MAP_GAUGES], &zero, &g, BPF_ANY);
}

/* status's guard_ia32 moves from standby to guarded at the first 32-bit
 * exec (guard.c guard_ia32_sync, from arming) */
static void refresh_ia32(struct runtime *rt)
{
	const char *now = guard_ia32(&rt->dp.guard);

	if (!strcmp(now, rt->info.guard_ia32))
		return;
	snprintf(rt->info.guard_ia32, sizeof(rt->info.guard_ia32), "%s", now);
	runtime_publish(rt);
}

static void tick(struct runtime *rt, uint64_t n)
{
	static uint64_t ticks;
	struct accel_stats st, *stp = &st;
	__u32 zero = 0;
	int err;

	/* The data plane's counters, once: the arming and the enforcer learn
	 * from them whether there is anything to walk (a walk of an empty
	 * map of --max-sockets buckets still visits every bucket).  Unread
	 * (NULL), each walks as before. */
	if (percpu_sum_u64(rt->maps.fd[MAP_STATS], &zero, (__u64 *)&st,
			   sizeof(st) / sizeof(__u64)))
		stp = NULL;

	feed_drain(&rt->feed);
	err = dataplane_refill_nonces(&rt->dp);
	if (err < 0)
		pr_debug("refilling the nonce pool: %s\n", strerror(-err));
	if (observer_running(&rt->xdp))
		topk_tick(&rt->topk, rt->maps.fd[MAP_SRC_STATS]);
	runtime_refresh_netns(rt, NULL, 0);
	/* added - closed (counters.c's sockets_now); not known: not empty */
	arming_tick(&rt->arming, !stp ? 1
				 : st.sockets_added > st.sockets_closed
				 ? st.sockets_added - st.sockets_closed : 0);
	refresh_ia32(rt);
	ticks += n;
	if (ticks % SWEEP_EVERY_TICKS == 0)
		sweep_endpoints(rt);
	if (ticks % PAIR_WINDOW_STEP_SEC == 0 || !rt->pairs_window.filled)
		sample_pairs(rt);
	publish_gauges(rt, stp);
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

void runtime_stop_signals(sigset_t *mask)
{
	sigemptyset(mask);
	sigaddset(mask, SIGINT);
	sigaddset(mask, SIGTERM);
	sigaddset(mask, SIGHUP);
}

/*
 * SIGHUP (systemctl reload, the kill -HUP operators send daemons): look at
 * the targets now rather than at the next tick or scan (the pid file, the
 * named paths, the pods, the peers), keeping every pair.  The options are
 * the command line's, read once: changing them is a restart.
 */
static void reload(struct runtime *rt)
{
	/* tick 0: every source is due (pods and peers every other tick) */
	if (reconcile(&rt->rec, 0)) {
		runtime_refresh_netns(rt, NULL, 0);
		runtime_publish(rt);
	}
	printf("reloaded: %d cgroup%s attached (options are read at start: restart to change "
	       "them)\n", rt->dp.n_targets, rt->dp.n_targets == 1 ? "" : "s");
	fflush(stdout);
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

	runtime_stop_signals(&mask);
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
			refresh_ia32(rt);
		} else if (got.data.fd == nonce_fd) {
			nonce_pool_on_wakeup(&rt->dp.nonces);
		} else if (got.data.fd == wake_fd) {
			feed_on_wakeup(&rt->feed);
		} else if (got.data.fd == http_fd) {
			metrics_serve(&rt->metrics);
		} else if (read(sfd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo == SIGHUP) {
				reload(rt);
				continue;
			}
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

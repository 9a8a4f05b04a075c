// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include "addrs.h"
#include "counters.h"
#include "follow.h"
#include "log.h"
#include "paths.h"
#include "runtime.h"

#define TICK_SEC 1          /* event rings' stragglers, top-K window */
#define FOLLOW_EVERY_TICKS 2
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
	if (unresolved && (uint64_t)unresolved != rt->enforcer.netns_unresolved)
		pr_warn("%d attached cgroup%s: no process whose network namespace the agent may "
			"open (%s): their local peers look remote and are not paired%s\n", unresolved,
			unresolved == 1 ? "" : "s", strerror(err),
			err == EACCES || err == EPERM ? "; processes of other users need CAP_SYS_PTRACE" : "");
	rt->enforcer.netns_unresolved = unresolved;
	free(rt->ns);
	rt->ns = ns;
	rt->n_ns = n;
	rt->enforcer.ns = ns;
	rt->enforcer.n_ns = n;
	count = addrs_sync(rt->maps.fd[MAP_LOCAL_ADDRS], ns, n);
	if (count >= 0)
		rt->enforcer.local_addrs = count;
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

/* Attach to the cgroups of local peers of what we track. */
static void follow_peers(struct runtime *rt)
{
	struct follow_candidate cand[16];
	char err[PATH_MAX + 256];
	int n, i, added = 0;

	n = follow_scan(rt->mnt, rt->dp.targets, rt->dp.n_targets, &rt->ports, cand, 16);
	if (n < 0) {
		pr_debug("follow: scan failed: %s\n", strerror(-n));
		return;
	}
	for (i = 0; i < n && rt->dp.n_targets < MAX_TARGETS; i++) {
		if (dataplane_attach_cgroup(&rt->dp, &cand[i].target, err, sizeof(err))) {
			pr_warn("follow: %s\n", err);
			continue;
		}
		printf("following %s (%s)\n", cand[i].target.path, cand[i].target.reason);
		added++;
	}
	if (added) {
		fflush(stdout);
		runtime_refresh_netns(rt, NULL, 0);
		runtime_publish(rt);
	}
}

static bool waiting_for(const struct runtime *rt, const struct cg_target *t)
{
	int i;

	for (i = 0; i < rt->n_waiting; i++)
		if (rt->waiting[i].kind == t->kind && !strcmp(rt->waiting[i].source, t->source))
			return true;
	return false;
}

/* Attach a target that came back; false while it isn't there yet. */
static bool reattach(struct runtime *rt, const struct cg_target *t)
{
	char err[PATH_MAX + 256];
	struct cg_target fresh;
	int i;

	if (target_reresolve(&rt->policy, rt->mnt, t, &fresh, err, sizeof(err)))
		return false;
	for (i = 0; i < rt->dp.n_targets; i++)
		if (rt->dp.targets[i].id == fresh.id)
			return true; /* attached already (named twice) */
	if (dataplane_attach_cgroup(&rt->dp, &fresh, err, sizeof(err))) {
		pr_warn("re-attaching %s: %s\n", fresh.path, err);
		return false;
	}
	printf("re-attached %s (%s)\n", fresh.path, fresh.reason);
	fflush(stdout);
	return true;
}

/*
 * Nginx restarted (systemctl restart, docker restart): its cgroup was
 * removed and made again, so the kernel dropped our attachment with it,
 * and the pid file names a new master.  Free the dead attachments' slots;
 * attach named ones again as soon as their path, or the cgroup of their
 * pid file's new pid, exists; followed ones come back through following.
 */
static void check_targets(struct runtime *rt)
{
	struct cg_target fresh, old;
	char err[PATH_MAX + 256];
	bool changed = false;
	int i;

	for (i = rt->dp.n_targets - 1; i >= 0; i--) {
		old = rt->dp.targets[i];
		if (target_alive(&old) &&
		    !(old.kind == TK_PIDFILE &&
		      !target_reresolve(&rt->policy, rt->mnt, &old, &fresh, err, sizeof(err)) &&
		      fresh.id != old.id))
			continue;
		pr_warn("%s is gone or no longer nginx's (%s): detaching it\n", old.path, old.reason);
		dataplane_detach_cgroup(&rt->dp, i);
		changed = true;
		if ((old.kind == TK_PATH || old.kind == TK_PIDFILE) && !waiting_for(rt, &old) &&
		    rt->n_waiting < MAX_TARGETS)
			rt->waiting[rt->n_waiting++] = old;
		else if (old.kind == TK_PID)
			pr_warn("%s was named by a pid that is gone: not attached again\n", old.path);
	}
	for (i = rt->n_waiting - 1; i >= 0; i--) {
		if (!reattach(rt, &rt->waiting[i]))
			continue;
		rt->waiting[i] = rt->waiting[--rt->n_waiting];
		changed = true;
	}
	if (changed) {
		runtime_refresh_netns(rt, NULL, 0);
		runtime_publish(rt);
	}
}

/* The pods --k8s-selector selects now: attach the new ones, detach those
 * no longer selected (their cgroup may live on a while). */
static void k8s_sync(struct runtime *rt)
{
	struct cg_target now[MAX_TARGETS];
	char err[PATH_MAX + 256];
	bool changed = false, there;
	int n, i, j;

	n = k8s_targets(&rt->k8s, rt->mnt, now, MAX_TARGETS, err, sizeof(err));
	if (n < 0) {
		pr_warn("%s\n", err);
		return;
	}
	for (i = rt->dp.n_targets - 1; i >= 0; i--) {
		if (rt->dp.targets[i].kind != TK_K8S)
			continue;
		for (j = 0, there = false; j < n && !there; j++)
			there = now[j].id == rt->dp.targets[i].id;
		if (there)
			continue;
		printf("pod no longer selected: detaching %s\n", rt->dp.targets[i].path);
		dataplane_detach_cgroup(&rt->dp, i);
		changed = true;
	}
	for (j = 0; j < n; j++) {
		for (i = 0, there = false; i < rt->dp.n_targets && !there; i++)
			there = rt->dp.targets[i].id == now[j].id;
		if (there)
			continue;
		if (dataplane_attach_cgroup(&rt->dp, &now[j], err, sizeof(err))) {
			pr_warn("k8s: %s\n", err);
			continue;
		}
		printf("attached %s (%s)\n", now[j].path, now[j].reason);
		changed = true;
	}
	if (changed) {
		fflush(stdout);
		runtime_refresh_netns(rt, NULL, 0);
		runtime_publish(rt);
	}
}

/* Endpoints orphaned by a detach (dataplane_sweep_endpoints): rare, and
 * a walk of the map costs two syscalls an entry, so not every tick. */
#define SWEEP_EVERY_TICKS 10

static void sweep_endpoints(struct runtime *rt)
{
	int n = dataplane_sweep_endpoints(rt->maps.fd[MAP_ENDPOINTS], rt->maps.fd[MAP_SOCK_HASH]);

	if (n > 0) {
		rt->enforcer.endpoints_swept += n;
		pr_debug("removed %d orphaned endpoints\n", n);
	}
}

static void tick(struct runtime *rt, uint64_t n)
{
	static uint64_t ticks;

	feed_drain(&rt->feed);
	if (observer_running(&rt->xdp))
		topk_tick(&rt->topk, rt->maps.fd[MAP_SRC_STATS]);
	runtime_refresh_netns(rt, NULL, 0);
	arming_tick(&rt->arming);
	rt->enforcer.guards_armed = rt->arming.armed;
	ticks += n;
	if (ticks % SWEEP_EVERY_TICKS == 0)
		sweep_endpoints(rt);
	enforcer_tick(&rt->enforcer);
	check_targets(rt);
	if (rt->k8s.selector && ticks % FOLLOW_EVERY_TICKS == 0)
		k8s_sync(rt);
	if (rt->follow && ticks % FOLLOW_EVERY_TICKS == 0)
		follow_peers(rt);
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

/* One epoll loop: signals, the tick (rings, top-K, following and
 * libmicrohttpd's timeouts), ring wake-ups, metrics connections, and the
 * -v summary timer. */
int runtime_serve(struct runtime *rt)
{
	int ep, sfd, tick_fd, sum_fd = -1, wake_fd, http_fd, reset_fd, arm_fd, ret = 0;
	struct signalfd_siginfo si;
	struct epoll_event got;
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
	tick_fd = timer(0, TICK_SEC);
	if (log_verbosity >= LOG_INFO)
		sum_fd = timer(SUMMARY_EVERY_SEC, SUMMARY_EVERY_SEC);
	wake_fd = feed_epoll_fd(&rt->feed);
	http_fd = rt->metrics.daemon ? rt->metrics.epoll_fd : -1;
	reset_fd = enforcer_epoll_fd(&rt->enforcer);
	arm_fd = arming_epoll_fd(&rt->arming);
	watch(ep, reset_fd);
	watch(ep, arm_fd);
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

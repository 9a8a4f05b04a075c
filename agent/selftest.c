// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The self-test's parent side: a private cgroup and a private data plane
 * (the real one, loaded through dataplane.c with the self-test knobs on), a
 * child that runs the socket checks inside the cgroup (selftest_checks.c),
 * and the verdict.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "counters.h"
#include "dataplane.h"
#include "enforcer.h"
#include "log.h"
#include "selftest.h"
#include "test_knobs.h"

static const struct selftest_check check_table[SELFTEST_CHECKS] = {
	[C_REDIRECT] = { "redirect", false, "a tracked pair forms and sends are redirected" },
	[C_ORDER] = { "order", true, "2000 small sends arrive in order" },
	[C_LARGE] = { "large_message", true, "8 MiB arrive intact through a redirected pair" },
	[C_HALF_CLOSE] = { "half_close", true, "all bytes, then EOF, after shutdown(SHUT_WR); reply after" },
	/* nginx reads until FIONREAD says 0 and waits for the next epoll
	 * edge: a FIONREAD blind to redirected bytes hangs it (6.12.43) */
	[C_FIONREAD] = { "fionread", true, "FIONREAD counts redirected bytes (nginx relies on it)" },
	[C_UNREAD_BOUND] = { "unread_bound", true,
			     "unread redirected bytes are visible (psock msg_tot_len): --max-unread holds" },
	[C_RESET] = { "reset", true,
		      "the agent can end a connection (iter/tcp or sock_diag): splice, stalled readers" },
	[C_FIONREAD_TCP] = { "fionread_tcp", false,
			     "FIONREAD of a sockmap socket counts bytes that came through TCP" },
	[C_BLOCKING_EOF] = { "blocking_eof", false, "a blocked recv() sees EOF, not EAGAIN, after the peer's shutdown" },
	[C_BOUND] = { "slow_reader_bound", false,
		      "a reader that falls behind gets TCP back-pressure (needs msg_tot_len, fionread_tcp)" },
	[C_SPLICE_READ] = { "splice_read", false,
			    "splice(2) reads redirected bytes (else splicing readers are reset)" },
};

const char *selftest_result_name(enum st_result res)
{
	return res == ST_PASS ? "pass" : res == ST_FAIL ? "FAIL" : "skip";
}

const char *selftest_summary(const struct selftest_check *c)
{
	return c->result == ST_FAIL && c->detail[0] ? c->detail : c->what;
}

/* The child: join the private cgroup, run the checks, report through the
 * pipe.  It dies with the agent, and holds none of its files: a fork
 * without exec would keep the agent's lock and listening socket alive. */
static void __attribute__((noreturn)) child_main(const char *cg_procs, int config_fd, int stats_fd,
						 int out_fd)
{
	struct selftest_check res[SELFTEST_CHECKS];
	char pid[32];
	int fd, keep[3] = { config_fd, stats_fd, out_fd };

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (fd = 3; fd < 1024; fd++)
		if (fd != keep[0] && fd != keep[1] && fd != keep[2])
			close(fd);
	memcpy(res, check_table, sizeof(res));
	fd = open(cg_procs, O_WRONLY | O_CLOEXEC);
	snprintf(pid, sizeof(pid), "%d", getpid());
	if (fd < 0 || write(fd, pid, strlen(pid)) < 0)
		_exit(3);
	close(fd);
	selftest_run_checks(res, config_fd, stats_fd);
	if (write(out_fd, res, sizeof(res)) != (ssize_t)sizeof(res))
		_exit(4);
	_exit(0);
}

/* Fork the child and collect its results into r (the redirect and bound
 * checks are judged here, not by the child).  0, or -errno. */
static int run_child(const char *procs, int config_fd, int stats_fd, struct selftest_report *r)
{
	struct selftest_check got[SELFTEST_CHECKS];
	int pfd[2], i, status;
	struct pollfd p;
	pid_t child;

	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	fflush(NULL);
	child = fork();
	if (child < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -errno;
	}
	if (child == 0) {
		close(pfd[0]);
		child_main(procs, config_fd, stats_fd, pfd[1]);
	}
	close(pfd[1]);
	p = (struct pollfd){ .fd = pfd[0], .events = POLLIN };
	if (poll(&p, 1, 30000) == 1 && read(pfd[0], got, sizeof(got)) == (ssize_t)sizeof(got)) {
		for (i = 0; i < SELFTEST_CHECKS; i++)
			if (i != C_REDIRECT && i != C_BOUND)
				r->checks[i] = got[i];
	} else {
		pr_warn("selftest: the test process did not report (timeout or crash)\n");
		r->checks[C_ORDER].result = ST_FAIL;
		snprintf(r->checks[C_ORDER].detail, sizeof(r->checks[C_ORDER].detail),
			 "test process hung or crashed");
	}
	close(pfd[0]);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	return 0;
}

/* Linux 6.19 and later allocate BPF socket storage with kmalloc_nolock()
 * (kernel/bpf/bpf_local_storage.c, f484f4a3e058), and kmalloc_nolock()
 * fails on every call where slab caches lack cmpxchg16b (mm/slub.c,
 * kmalloc_nolock_noprof): an x86 CPU, or a VM's CPU model, without cx16.
 * Nothing can be tracked there; say so rather than "0 pairs". */
static bool cpu_lacks_cx16(void)
{
	char line[4096];
	bool x86 = false, cx16 = false;
	FILE *f = fopen("/proc/cpuinfo", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		x86 = true;
		cx16 = strstr(line, " cx16 ") || strstr(line, " cx16\n");
		break;
	}
	fclose(f);
	return x86 && !cx16;
}

/* Judge what only the parent can see: were pairs formed and sends
 * redirected at all (else the data checks tested TCP only), and is the
 * slow-reader fallback safe here. */
static void judge(const struct agent_maps *maps, bool has_tot_len, struct selftest_report *r)
{
	struct selftest_check *rd = &r->checks[C_REDIRECT], *bd = &r->checks[C_BOUND];
	struct selftest_check *ub = &r->checks[C_UNREAD_BOUND];
	struct counters c = {};
	int i;

	counters_read(maps, &c);
	rd->result = c.sum.pairs >= 1 && c.sum.redirected_msgs > 0 ? ST_PASS : ST_FAIL;
	if (rd->result == ST_FAIL && c.sum.fallbacks[FB_NO_STORAGE])
		snprintf(rd->detail, sizeof(rd->detail),
			 "0 pairs: the kernel refused socket storage %llu times%s",
			 (unsigned long long)c.sum.fallbacks[FB_NO_STORAGE],
			 cpu_lacks_cx16() ? "; 6.19+ needs CPU flag cx16" : "");
	else
		snprintf(rd->detail, sizeof(rd->detail), "%llu pairs, %llu msgs redirected",
			 (unsigned long long)c.sum.pairs, (unsigned long long)c.sum.redirected_msgs);
	/* The bound works by sending a lagging direction to TCP: only safe
	 * where the kernel reads that back right. */
	r->slow_reader_fallback_safe = has_tot_len && r->checks[C_FIONREAD_TCP].result == ST_PASS;
	bd->result = r->slow_reader_fallback_safe ? ST_PASS : ST_FAIL;
	if (!r->slow_reader_fallback_safe)
		snprintf(bd->detail, sizeof(bd->detail), "%s",
			 !has_tot_len ? "disabled: no psock->msg_tot_len to measure the backlog"
				      : "disabled: fallback unsafe here (fionread_tcp); --max-unread "
					"ends such connections instead");
	ub->result = has_tot_len ? ST_PASS : ST_FAIL;
	if (!has_tot_len)
		snprintf(ub->detail, sizeof(ub->detail),
			 "no psock->msg_tot_len (6.12.75+, 7.0): a reader could pin unbounded memory");
	/* tests only: make one check fail (selftest_fail_closed.sh), or pass
	 * as on a kernel that has what it looks for (splice_not_needed.sh:
	 * no Debian kernel's splice(2) reads redirected bytes yet) */
	for (i = 0; i < SELFTEST_CHECKS && test_knob(KNOB_FAIL_CHECK); i++)
		if (!strcmp(r->checks[i].name, test_knob(KNOB_FAIL_CHECK))) {
			r->checks[i].result = ST_FAIL;
			snprintf(r->checks[i].detail, sizeof(r->checks[i].detail),
				 "made to fail by NGX_SOCKMAP_TEST_FAIL_CHECK");
		}
	for (i = 0; i < SELFTEST_CHECKS && test_knob(KNOB_PASS_CHECK); i++)
		if (!strcmp(r->checks[i].name, test_knob(KNOB_PASS_CHECK))) {
			r->checks[i].result = ST_PASS;
			snprintf(r->checks[i].detail, sizeof(r->checks[i].detail),
				 "made to pass by NGX_SOCKMAP_TEST_PASS_CHECK");
		}
	r->splice_reads_ingress = r->checks[C_SPLICE_READ].result == ST_PASS;
	r->ran = true;
	for (i = 0; i < SELFTEST_CHECKS; i++) {
		if (r->checks[i].result != ST_FAIL)
			continue;
		r->failures++;
		if (r->checks[i].critical)
			r->critical_failure = true;
	}
}

/* Remove the private cgroups of self-tests whose agent was killed (the
 * child dies with it, PR_SET_PDEATHSIG, but nobody removed the directory). */
static void remove_stale(const char *dir)
{
	char path[PATH_MAX + 64];
	struct dirent *de;
	int pid;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (sscanf(de->d_name, "ngx-sockmap-selftest.%d", &pid) != 1 ||
		    (kill(pid, 0) && errno != ESRCH) || !kill(pid, 0))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (!rmdir(path))
			pr_info("removed %s, left by an agent that was killed\n", path);
	}
	closedir(d);
}

/* The private cgroup: under the hierarchy's root, or, where the agent may
 * not write there (a container with no CAP_DAC_OVERRIDE: the root is
 * 0555), under the agent's own cgroup. */
static int make_private_cgroup(const char *mnt, char *cg, size_t len)
{
	struct cg_target own = {};
	char err[256] = "";
	int e;

	remove_stale(mnt);
	snprintf(cg, len, "%s/ngx-sockmap-selftest.%d", mnt, getpid());
	if (!mkdir(cg, 0755))
		return 0;
	e = errno;
	if ((e == EACCES || e == EPERM || e == EROFS) &&
	    !cg2_of_pid(mnt, getpid(), &own, err, sizeof(err))) {
		if (snprintf(cg, len, "%.*s/ngx-sockmap-selftest.%d", (int)(len - 40), own.path,
			     getpid()) < (int)len && !mkdir(cg, 0755))
			return 0;
		e = errno;
	}
	pr_warn("selftest: mkdir %s: %s\n", cg, strerror(e));
	return -e;
}

/* The reset check, in the parent: the mechanism the agent will use must
 * really end a connection whose sockets have psocks.  iter/tcp that loads
 * but can't end one (no bpf_sock_destroy) falls back to sock_diag where
 * the agent may choose. */
static void check_reset(struct dataplane *dp, const struct agent_maps *maps, enum reset_mech mech,
			bool fallback, struct selftest_report *r)
{
	struct selftest_check *rs = &r->checks[C_RESET];
	char why[sizeof(rs->detail)];
	int err;

	err = enforcer_check_reset(mech, dataplane_object(dp), maps->fd[MAP_SOCK_HASH],
				   rs->detail, sizeof(rs->detail));
	if (err && mech == RESETS_ITER && fallback) {
		snprintf(why, sizeof(why), "%s", rs->detail);
		pr_info("selftest reset: %s; trying sock_diag\n", why);
		mech = RESETS_SOCK_DIAG;
		err = enforcer_check_reset(mech, dataplane_object(dp), maps->fd[MAP_SOCK_HASH],
					   rs->detail, sizeof(rs->detail));
	}
	rs->result = err ? ST_FAIL : ST_PASS;
	r->reset_mech = mech;
}

int selftest_run(const char *cg2_mnt, int resets, bool fallback, struct selftest_report *r)
{
	const struct dataplane_params params = {
		.ports_all = true,
		.short_conn_msgs = 0, /* every test connection counts */
		.selftest_knobs = true, /* check_fionread_tcp forces TCP */
	};
	struct dataplane dp = {};
	struct agent_maps maps;
	struct cg_target t = {};
	char cg[PATH_MAX], procs[PATH_MAX + 16], err[PATH_MAX + 64] = "";
	int i, ret;

	memset(r, 0, sizeof(*r));
	r->reset_mech = resets;
	memcpy(r->checks, check_table, sizeof(check_table));
	for (i = 0; i < SELFTEST_CHECKS; i++)
		r->checks[i].result = ST_SKIP;
	if (test_knob(KNOB_SELFTEST_ERROR))
		return -EIO;

	ret = make_private_cgroup(cg2_mnt, cg, sizeof(cg));
	if (ret)
		return ret;
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
	ret = dataplane_load(&dp, &params);
	if (!ret)
		ret = dataplane_attach_msg(&dp);
	if (!ret && (ret = cg2_resolve(cg2_mnt, cg, &t, err, sizeof(err))) == 0)
		ret = dataplane_attach_cgroup(&dp, &t, err, sizeof(err));
	if (ret) {
		pr_warn("selftest: setting up the private data plane failed%s%s\n", err[0] ? ": " : "",
			err);
		goto out;
	}
	agent_maps_init(&maps);
	dataplane_maps(&dp, &maps);
	ret = run_child(procs, maps.fd[MAP_CONFIG], maps.fd[MAP_STATS], r);
	if (!ret) {
		check_reset(&dp, &maps, resets, fallback, r);
		judge(&maps, kernel_has_psock_msg_tot_len(), r);
	}
out:
	dataplane_destroy(&dp);
	rmdir(cg);
	return ret;
}

void selftest_print(FILE *out, const struct selftest_report *r)
{
	const struct selftest_check *c;
	int i;

	for (i = 0; i < SELFTEST_CHECKS; i++) {
		c = &r->checks[i];
		fprintf(out, "  %-4s %-18s %s%s\n", selftest_result_name(c->result), c->name,
			c->detail[0] ? c->detail : c->what,
			c->result == ST_FAIL && c->critical ? " [critical]" : "");
	}
}

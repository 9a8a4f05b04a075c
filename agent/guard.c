// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The guard's object (guard.h): load it over the data plane's maps with
 * the strongest hooks the host takes (fentry, else syscall tracepoints,
 * else none: the ULP refusal alone), say which and why for status, and
 * attach or detach the hooks when arming.c says so.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "accel.h"
#include "guard.h"
#include "guard.skel.h"
#include "log.h"

#ifndef ENOTSUPP
#define ENOTSUPP 524 /* kernel-internal (include/linux/errno.h): no JIT support */
#endif

const char *const guard_hooks_names[GUARD_HOOKS__MAX] = {
	[GUARD_HOOKS_AUTO] = "auto",
	[GUARD_HOOKS_FENTRY] = "fentry",
	[GUARD_HOOKS_TRACEPOINTS] = "tracepoints",
	[GUARD_HOOKS_NONE] = "none",
};

/* The programs of one set of hooks (bpf/guard.bpf.c), each exit before
 * its enter: a sender marked by an enter hook must find its exit hook
 * attached. */
static int hook_progs(const struct guard *g, enum guard_hooks hooks, struct bpf_program **out)
{
	struct guard_bpf *s = g->skel;
	int n = 0;

	if (hooks == GUARD_HOOKS_NONE)
		return 0;
	if (hooks == GUARD_HOOKS_FENTRY) {
		out[n++] = s->progs.splice_fentry;
		out[n++] = s->progs.send_fexit;
		out[n++] = s->progs.send_fentry;
		return n;
	}
	out[n++] = s->progs.splice_enter;
	out[n++] = s->progs.sendfile_enter;
	out[n++] = s->progs.sendto_exit;
	out[n++] = s->progs.sendmsg_exit;
	out[n++] = s->progs.sendmmsg_exit;
	out[n++] = s->progs.ia32_enter;
	out[n++] = s->progs.sendto_enter;
	out[n++] = s->progs.sendmsg_enter;
	out[n++] = s->progs.sendmmsg_enter;
	out[n++] = s->progs.uring_enter_exit;
	out[n++] = s->progs.uring_submit;
	return n;
}

/* The hooks that see a socket spliced (tcp_splice_read(): splice(2),
 * sendfile(2)), which a kernel whose splice reads redirected bytes
 * (selftest: splice_read) does not need.  io_uring's splices are
 * uring_submit's, told apart there (uring_splice). */
static bool splice_hook(const struct guard *g, const struct bpf_program *p)
{
	return p == g->skel->progs.splice_fentry || p == g->skel->progs.splice_enter ||
	       p == g->skel->progs.sendfile_enter;
}

/* io_uring's hooks (the tracepoint set's last two): a kernel built
 * without io_uring has neither its tracepoint nor its syscall, and
 * nothing to guard there. */
static bool uring_hook(const struct guard *g, const struct bpf_program *p)
{
	return p == g->skel->progs.uring_submit || p == g->skel->progs.uring_enter_exit;
}

static bool kernel_has_uring(void)
{
	return !access("/sys/kernel/tracing/events/io_uring/io_uring_submit_req", F_OK);
}

/* The tag of the data plane's loaded msg_redirect, by which the guard
 * knows our sockets (guard.bpf.c our_socket). */
static int msg_redirect_tag(const struct bpf_object *dataplane, __u64 *tag)
{
	struct bpf_program *p = bpf_object__find_program_by_name(dataplane, "msg_redirect");
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (!p || bpf_program__fd(p) < 0)
		return -ENOENT;
	if (bpf_prog_get_info_by_fd(bpf_program__fd(p), &info, &len))
		return -errno;
	memcpy(tag, info.tag, sizeof(*tag));
	return 0;
}

/* Open and load with one set of hooks (NONE: sockopt_set alone); the
 * others are not loaded. */
static int load_with(struct guard *g, const struct bpf_object *dataplane, enum guard_hooks hooks)
{
	static const enum guard_hooks sets[] = { GUARD_HOOKS_FENTRY, GUARD_HOOKS_TRACEPOINTS };
	struct bpf_program *progs[GUARD_MAX_HOOKS];
	int err, i, n, k;

	g->skel = guard_bpf__open();
	if (!g->skel)
		return -errno;
	err = msg_redirect_tag(dataplane, &g->skel->rodata->msg_redirect_tag);
	if (err)
		return err;
	g->skel->rodata->uring_splice = g->splice;
	g->skel->rodata->ia32_splice = g->splice;
	g->hooks = hooks;
	for (k = 0; k < 2; k++) {
		if (sets[k] == hooks)
			continue;
		n = hook_progs(g, sets[k], progs);
		for (i = 0; i < n; i++)
			bpf_program__set_autoload(progs[i], false);
	}
	if (!g->ia32) {
		bpf_program__set_autoload(g->skel->progs.ia32_enter, false);
		bpf_program__set_autoload(g->skel->progs.ia32_exec, false);
	}
	/* one copy of every shared map: the data plane's */
	err = object_share_maps(g->skel->obj, dataplane);
	return err ? err : guard_bpf__load(g->skel);
}

#ifdef __x86_64__
static void ia32_fault(int sig)
{
	(void)sig;
	_exit(2);
}

/* Do ia32 syscalls run here?  A child makes one (int $0x80, i386
 * getpid): it returns the pid where ia32 emulation is on, and faults
 * (SIGSEGV, caught) where it is off (ia32_emulation=0 on the command
 * line, or not built: arch/x86/kernel/idt.c idt_setup_traps sets the
 * int 0x80 gate only where ia32_enabled()).  Anything else (a seccomp
 * filter on the agent, such as the unit's SystemCallArchitectures=native,
 * which may kill the child: not dumpable, so no core dump; no fork)
 * can't tell: other processes may still run them, so yes. */
static bool ia32_syscalls_run(void)
{
	struct sigaction sa = { .sa_handler = ia32_fault };
	sigset_t segv;
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return true;
	if (!pid) {
		long ret;

		prctl(PR_SET_DUMPABLE, 0);
		sigaction(SIGSEGV, &sa, NULL);
		sigemptyset(&segv);
		sigaddset(&segv, SIGSEGV);
		sigprocmask(SIG_UNBLOCK, &segv, NULL);
		asm volatile("int $0x80" : "=a"(ret) : "a"(20L) : "r8", "r9", "r10", "r11", "memory");
		_exit(ret == getpid() ? 0 : 1);
	}
	while (waitpid(pid, &st, 0) != pid)
		if (errno != EINTR)
			return true;
	return !((WIFEXITED(st) && WEXITSTATUS(st) == 2) ||
		 (WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV));
}
#else
static bool ia32_syscalls_run(void)
{
	return false;
}
#endif

/* Does a 32-bit (i386) program run here now?  Each process's executable,
 * by its ELF header (class 32, machine i386).  Kernel threads have none
 * (ENOENT), nor processes gone meanwhile.  One that can't be read even by
 * root (EACCES: a sandbox's own init, as PID 1 of this project's
 * firecracker hosts) is not counted, or the hook would be attached on
 * every such host: said at -v, and in README Limits. */
static bool ia32_program_runs(void)
{
	unsigned char h[20];
	struct dirent *e;
	char path[300];
	bool found = false;
	DIR *d;
	int fd;

	d = opendir("/proc");
	if (!d)
		return true;
	while (!found && (e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/exe", e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			if (errno == EACCES || errno == EPERM)
				pr_info("the executable of process %s can't be read (%s): "
					"not counted as a 32-bit program\n", e->d_name,
					strerror(errno));
			continue;
		}
		/* e_ident[EI_CLASS] ELFCLASS32, e_machine EM_386 (little-endian) */
		if (pread(fd, h, sizeof(h), 0) == (ssize_t)sizeof(h) && !memcmp(h, "\177ELF", 4) &&
		    h[4] == 1 && h[18] == 3 && h[19] == 0)
			found = true;
		close(fd);
	}
	closedir(d);
	return found;
}

static bool ia32_arch(void)
{
#ifdef __x86_64__
	return true;
#else
	return false;
#endif
}

/* Loaded and attached once: a refusal at attach (fentry: an ftrace user
 * with IPMODIFY on the function, an LSM; tracepoints: no tracefs and no
 * right to mount it) must make auto fall back too, not fail later.  The
 * hooks stay attached: arming_start() arms at once (arming.c), and
 * detaching the tracepoints here to attach them again there cost 0.6 s
 * of every start (destroy_links()). */
static int hooks_that_attach(struct guard *g, const struct bpf_object *dataplane,
			     enum guard_hooks hooks)
{
	int err = load_with(g, dataplane, hooks);

	if (!err)
		err = guard_arm(g); /* detaches what it attached when it fails */
	if (err) {
		bpf_link__destroy(g->exec_link);
		g->exec_link = NULL;
		guard_bpf__destroy(g->skel);
		g->skel = NULL;
		return err;
	}
	return 0;
}

/* EPERM where a policy refuses the program type (this project's own
 * development hosts, a BPF LSM), ENOTSUPP without a JIT for it, ESRCH or
 * ENOENT without the function in BTF or the tracepoint in tracefs:
 * expected.  Anything else may be a bug of ours: still fall back, but
 * say so. */
static bool expected_refusal(int err)
{
	return err == -EPERM || err == -EACCES || err == -ENOTSUPP || err == -EOPNOTSUPP ||
	       err == -ESRCH || err == -ENOENT || err == -EINVAL;
}

int guard_load(struct guard *g, const struct bpf_object *dataplane, enum guard_hooks want,
	       bool splice)
{
	int err;

	g->splice = splice;
	g->fentry_err = g->tracepoints_err = 0;
	g->ia32 = g->ia32_runs = false;
	if (want == GUARD_HOOKS_AUTO || want == GUARD_HOOKS_FENTRY) {
		err = hooks_that_attach(g, dataplane, GUARD_HOOKS_FENTRY);
		if (!err)
			return 0;
		g->fentry_err = -err;
		if (want == GUARD_HOOKS_FENTRY) {
			pr_warn("--guard-hooks fentry: this kernel refuses the guard's fentry programs "
				"(%s; -v shows why); --guard-hooks tracepoints loads where tracing "
				"programs are refused\n", strerror(-err));
			return err;
		}
		if (expected_refusal(err))
			pr_info("the guard's fentry programs were refused (%s): using syscall "
				"tracepoints, which slow every syscall on the host while sockets are "
				"tracked\n", strerror(-err));
		else
			pr_warn("the guard's fentry programs failed (%s; -v shows why): using syscall "
				"tracepoints, which slow every syscall on the host while sockets are "
				"tracked\n", strerror(-err));
	}
	if (want != GUARD_HOOKS_NONE) {
		/* ia32 syscalls need a hook of their own there (ia32_enter,
		 * on every syscall): only where they run */
		g->ia32 = g->ia32_runs = ia32_syscalls_run();
		err = hooks_that_attach(g, dataplane, GUARD_HOOKS_TRACEPOINTS);
		if (err && g->ia32) {
			/* a raw tracepoint a policy refuses must not cost the
			 * 64-bit hooks: without it, status says "unseen" */
			g->ia32 = false;
			if (!hooks_that_attach(g, dataplane, GUARD_HOOKS_TRACEPOINTS)) {
				pr_warn("the guard's hook for 32-bit (ia32) syscalls "
					"(raw_syscalls:sys_enter) failed (%s): their splices and "
					"MSG_OOB sends are unseen\n", strerror(-err));
				return 0;
			}
			g->ia32 = true;
		}
		if (!err)
			return 0;
		g->tracepoints_err = -err;
		if (want == GUARD_HOOKS_TRACEPOINTS) {
			pr_warn("--guard-hooks tracepoints: the guard's tracepoints failed: %s "
				"(-v shows why)\n", strerror(-err));
			return err;
		}
		pr_warn("the guard's tracepoints failed too (%s): splice and MSG_OOB are unguarded\n",
			strerror(-err));
	}
	/* The ULP refusal (cgroup/setsockopt) needs no tracing: it must not
	 * go with the hooks.  The caller keeps the data plane paused. */
	err = load_with(g, dataplane, GUARD_HOOKS_NONE);
	if (err) {
		pr_warn("loading the guard's ULP refusal failed: %s (run with -v for the verifier log)\n",
			strerror(-err));
		guard_bpf__destroy(g->skel);
		g->skel = NULL;
	}
	return err;
}

void guard_describe(const struct guard *g, char *hooks, size_t hlen, char *why, size_t wlen)
{
	snprintf(hooks, hlen, "%s", g->skel ? guard_hooks_names[g->hooks] : "");
	if (g->hooks == GUARD_HOOKS_NONE && g->tracepoints_err)
		snprintf(why, wlen, "fentry: %s, tracepoints: %s",
			 g->fentry_err ? strerror(g->fentry_err) : "not tried",
			 strerror(g->tracepoints_err));
	else if (g->hooks == GUARD_HOOKS_NONE)
		snprintf(why, wlen, "--guard-hooks none");
	else if (g->fentry_err)
		snprintf(why, wlen, "fentry refused: %s", strerror(g->fentry_err));
	else if (g->hooks == GUARD_HOOKS_TRACEPOINTS)
		snprintf(why, wlen, "--guard-hooks tracepoints");
	else
		snprintf(why, wlen, "%s", "");
}

/* The syscall tracepoints never fire for ia32 syscalls (x86's
 * ARCH_TRACE_IGNORE_COMPAT_SYSCALLS, arch/x86/include/asm/ftrace.h;
 * kernel/trace/trace_syscalls.c trace_get_syscall_nr): a 32-bit
 * program's splice or MSG_OOB send, or a 64-bit one's through int $0x80,
 * is seen by ia32_enter on raw_syscalls:sys_enter (bpf/guard.bpf.c) only.
 * fentry sees them (tcp_splice_read() and tcp_bpf_sendmsg() whatever the
 * syscall).  "guarded" where they run and ia32_enter is loaded, "unseen"
 * where they run and it is not (refused), "off" where ia32 emulation is
 * off, "" for fentry, none, or not x86-64. */
const char *guard_ia32(const struct guard *g)
{
	if (!g->skel || g->hooks != GUARD_HOOKS_TRACEPOINTS || !ia32_arch())
		return "";
	if (g->ia32)
		return g->skel->bss->ia32_seen ? "guarded" : "standby";
	return g->ia32_runs ? "unseen" : "off";
}

/* libbpf attaches tracepoints through tracefs (events/.../id), which a
 * host may not mount and a container does not see (its /sys is a fresh,
 * read-only sysfs): mount it where libbpf looks, as the agent does for
 * bpffs.  0, or -errno. */
static int ensure_tracefs(void)
{
	struct statfs sfs;

	if (!statfs("/sys/kernel/tracing", &sfs) && sfs.f_type == TRACEFS_MAGIC)
		return 0;
	if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL))
		return -errno;
	pr_info("mounted tracefs at /sys/kernel/tracing\n");
	return 0;
}

/* With no hook attached no task is inside a marked send: a mark left (an
 * exit hook that never ran, a pinned map of an earlier agent) is stale. */
static void forget_oob_senders(struct guard *g)
{
	int fd = bpf_map__fd(g->skel->maps.oob_senders);
	__u64 key, zero64 = 0;
	__u32 zero = 0;

	while (!bpf_map_get_next_key(fd, NULL, &key))
		bpf_map_delete_elem(fd, &key);
	bpf_map_update_elem(bpf_map__fd(g->skel->maps.oob_count), &zero, &zero64, BPF_ANY);
}

int guard_arm(struct guard *g)
{
	struct bpf_program *progs[GUARD_MAX_HOOKS];
	int err, i, n;

	if (g->n_hooks || !g->skel)
		return 0;
	if (g->hooks == GUARD_HOOKS_TRACEPOINTS) {
		err = ensure_tracefs();
		if (err) {
			pr_warn("the guard's tracepoints need tracefs, and mounting it failed (%s): "
				"mount -t tracefs nodev /sys/kernel/tracing (in a container: mount the host's)\n",
				strerror(-err));
			return err;
		}
	}
	forget_oob_senders(g);
	/* ia32_exec first, then the processes already running: a 32-bit
	 * program started in between is seen by one or the other */
	if (g->ia32 && !g->exec_link) {
		g->exec_link = bpf_program__attach(g->skel->progs.ia32_exec);
		if (!g->exec_link) {
			/* then it can't wait for one: attached now */
			pr_info("attaching ia32_exec failed: %s\n", strerror(errno));
			g->skel->bss->ia32_seen = 1;
		} else if (ia32_program_runs()) {
			g->skel->bss->ia32_seen = 1;
		}
	}
	n = hook_progs(g, g->hooks, progs);
	for (i = 0; i < n; i++) {
		/* where splice(2) sees redirected bytes (selftest:
		 * splice_read), a splicing reader needs nothing */
		if (!g->splice && splice_hook(g, progs[i]))
			continue;
		if (uring_hook(g, progs[i]) && !kernel_has_uring())
			continue;
		if (progs[i] == g->skel->progs.ia32_enter && (!g->ia32 || !g->skel->bss->ia32_seen))
			continue;
		g->hook_links[g->n_hooks] = bpf_program__attach(progs[i]);
		if (!g->hook_links[g->n_hooks]) {
			err = -errno;
			pr_info("attaching %s failed: %s\n", bpf_program__name(progs[i]),
				strerror(-err));
			guard_disarm(g);
			return err;
		}
		if (progs[i] == g->skel->progs.ia32_enter)
			g->ia32_attached = true;
		g->n_hooks++;
	}
	return 0;
}

/* fentry sees them (tcp_splice_read(), tcp_bpf_sendmsg()), and where
 * they can't run or it is not x86-64 there are none; on the tracepoint
 * tier, only with ia32_enter attached. */
bool guard_sees_ia32(const struct guard *g)
{
	if (!g->skel || g->hooks != GUARD_HOOKS_TRACEPOINTS || !ia32_arch() || !g->ia32_runs)
		return true;
	return g->ia32_attached;
}

void guard_ia32_sync(struct guard *g)
{
	struct bpf_link *link;

	if (!g->skel || !g->ia32 || g->ia32_attached || !g->n_hooks || !g->skel->bss->ia32_seen)
		return;
	if (g->n_hooks >= GUARD_MAX_HOOKS) /* can't be: hook_progs() fits */
		return;
	link = bpf_program__attach(g->skel->progs.ia32_enter);
	if (!link) {
		/* as where it is refused at load: the 64-bit hooks go on */
		pr_warn("the guard's hook for 32-bit (ia32) syscalls "
			"(raw_syscalls:sys_enter) failed (%s): their splices and "
			"MSG_OOB sends are unseen\n", strerror(errno));
		g->ia32 = false;
		return;
	}
	g->hook_links[g->n_hooks++] = link;
	g->ia32_attached = true;
	pr_info("a 32-bit program ran: the guard's ia32 hook is attached\n");
}

static void *destroy_link(void *link)
{
	bpf_link__destroy(link);
	return NULL;
}

/* Each tracepoint's detach waits for tracepoint_synchronize_unregister()
 * (kernel/trace/trace_event_perf.c, perf_trace_event_unreg()): 70 ms on
 * this project's 6.18 host, so nine hooks one after the other held
 * the agent's loop for 0.64 s at every disarm and exit.  From a thread
 * each, the waits overlap in part (0.35 s for those nine here: the kernel
 * still serializes some of each).  A mark an enter hook sets while its
 * exit hook is already gone is forgotten after (forget_oob_senders()). */
static void destroy_links(struct bpf_link **links, int n)
{
	pthread_t th[GUARD_MAX_HOOKS];
	bool started[GUARD_MAX_HOOKS];
	int i;

	for (i = 0; i < n; i++) {
		started[i] = !pthread_create(&th[i], NULL, destroy_link, links[i]);
		if (!started[i])
			bpf_link__destroy(links[i]);
	}
	for (i = 0; i < n; i++)
		if (started[i])
			pthread_join(th[i], NULL);
}

void guard_disarm(struct guard *g)
{
	destroy_links(g->hook_links, g->n_hooks);
	g->n_hooks = 0;
	g->ia32_attached = false;
	/* a sender between its enter and exit hooks stays marked: forget
	 * them all (no socket is in the map, nothing reads them) */
	if (g->skel)
		forget_oob_senders(g);
}

struct bpf_program *guard_ulp_program(const struct guard *g)
{
	return g->skel->progs.sockopt_set;
}

struct bpf_program *guard_query_program(const struct guard *g)
{
	return g->skel->progs.sockopt_query;
}

void guard_destroy(struct guard *g)
{
	destroy_links(g->hook_links, g->n_hooks);
	g->n_hooks = 0;
	g->ia32_attached = false;
	bpf_link__destroy(g->exec_link);
	g->exec_link = NULL;
	guard_bpf__destroy(g->skel);
	g->skel = NULL;
}

int guard_progs(const struct guard *g, struct prog_ref *out, int max)
{
	return object_progs(g->skel->obj, out, max);
}

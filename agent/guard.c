// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
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
};

/* The programs of one set of hooks, splice's first (bpf/guard.bpf.c),
 * and each exit before its enter: a sender marked by an enter hook must
 * find its exit hook attached. */
static int hook_progs(const struct guard *g, enum guard_hooks hooks, struct bpf_program **out)
{
	struct guard_bpf *s = g->skel;
	int n = 0;

	if (hooks == GUARD_HOOKS_FENTRY) {
		out[n++] = s->progs.splice_fentry;
		out[n++] = s->progs.send_fexit;
		out[n++] = s->progs.send_fentry;
		return n;
	}
	out[n++] = s->progs.splice_enter;
	out[n++] = s->progs.sendto_exit;
	out[n++] = s->progs.sendmsg_exit;
	out[n++] = s->progs.sendmmsg_exit;
	out[n++] = s->progs.sendto_enter;
	out[n++] = s->progs.sendmsg_enter;
	out[n++] = s->progs.sendmmsg_enter;
	return n;
}

/* Open and load with one set of hooks; the other is not loaded. */
static int load_with(struct guard *g, const struct bpf_object *dataplane, enum guard_hooks hooks)
{
	struct bpf_program *progs[GUARD_MAX_HOOKS];
	struct bpf_map *map, *theirs;
	int err, i, n;

	g->skel = guard_bpf__open();
	if (!g->skel)
		return -errno;
	g->hooks = hooks;
	n = hook_progs(g, hooks == GUARD_HOOKS_FENTRY ? GUARD_HOOKS_TRACEPOINTS : GUARD_HOOKS_FENTRY,
		       progs);
	for (i = 0; i < n; i++)
		bpf_program__set_autoload(progs[i], false);
	/* one copy of every shared map: the data plane's */
	bpf_object__for_each_map(map, g->skel->obj) {
		theirs = bpf_object__find_map_by_name(dataplane, bpf_map__name(map));
		if (!theirs || strchr(bpf_map__name(map), '.'))
			continue;
		err = bpf_map__reuse_fd(map, bpf_map__fd(theirs));
		if (err)
			return err;
	}
	return guard_bpf__load(g->skel);
}

/* Loaded and attached: the fentry hooks never idle (guard_arming.h), so
 * attaching them here tells auto whether to fall back (an ftrace user
 * with IPMODIFY on the function, an LSM, refuse at attach, not load). */
static int fentry_hooks(struct guard *g, const struct bpf_object *dataplane)
{
	int err = load_with(g, dataplane, GUARD_HOOKS_FENTRY);

	if (!err)
		err = guard_arm(g); /* detaches what it attached when it fails */
	if (err) {
		guard_bpf__destroy(g->skel);
		g->skel = NULL;
	}
	return err;
}

int guard_load(struct guard *g, const struct bpf_object *dataplane, enum guard_hooks want,
	       bool splice)
{
	int err;

	g->splice = splice;
	g->fentry_err = 0;
	if (want != GUARD_HOOKS_TRACEPOINTS) {
		err = fentry_hooks(g, dataplane);
		if (!err)
			return 0;
		g->fentry_err = -err;
		if (want == GUARD_HOOKS_FENTRY) {
			pr_warn("--guard-hooks fentry: this kernel refuses the guard's fentry programs "
				"(%s; -v shows why); --guard-hooks tracepoints loads everywhere\n",
				strerror(-err));
			return err;
		}
		/* EPERM where trampolines are refused (this project's own
		 * development host), ENOTSUPP without a JIT for them, ESRCH or
		 * ENOENT without the function in BTF: expected.  Anything else
		 * may be a bug of ours: still fall back, but say so. */
		if (err == -EPERM || err == -ENOTSUPP || err == -EOPNOTSUPP || err == -ESRCH ||
		    err == -ENOENT)
			pr_info("the guard's fentry programs were refused (%s): using syscall "
				"tracepoints, which slow every syscall on the host while sockets are "
				"tracked\n", strerror(-err));
		else
			pr_warn("the guard's fentry programs failed (%s; -v shows why): using syscall "
				"tracepoints, which slow every syscall on the host while sockets are "
				"tracked\n", strerror(-err));
	}
	err = load_with(g, dataplane, GUARD_HOOKS_TRACEPOINTS);
	if (err)
		pr_warn("loading the guard failed: %s (run with -v for the verifier log)\n",
			strerror(-err));
	return err;
}

void guard_describe(const struct guard *g, char *hooks, size_t hlen, char *why, size_t wlen)
{
	snprintf(hooks, hlen, "%s", guard_hooks_names[g->hooks]);
	if (g->fentry_err)
		snprintf(why, wlen, "fentry refused: %s", strerror(g->fentry_err));
	else if (g->hooks == GUARD_HOOKS_TRACEPOINTS)
		snprintf(why, wlen, "--guard-hooks tracepoints");
	else
		snprintf(why, wlen, "%s", "");
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

int guard_attach(struct guard *g, int sock_hash_fd)
{
	LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info info = {};

	g->reset_iter = bpf_program__attach_iter(g->skel->progs.reset_doomed, NULL);
	if (!g->reset_iter)
		return -errno;
	info.map.map_fd = sock_hash_fd;
	opts.link_info = &info;
	opts.link_info_len = sizeof(info);
	g->unread_iter = bpf_program__attach_iter(g->skel->progs.scan_unread, &opts);
	return g->unread_iter ? 0 : -errno;
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

	if (g->n_hooks)
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
	n = hook_progs(g, g->hooks, progs);
	/* where splice(2) sees redirected bytes (selftest: splice_read), a
	 * splicing reader needs nothing */
	for (i = g->splice ? 0 : 1; i < n; i++) {
		g->hook_links[g->n_hooks] = bpf_program__attach(progs[i]);
		if (!g->hook_links[g->n_hooks]) {
			err = -errno;
			pr_info("attaching %s failed: %s\n", bpf_program__name(progs[i]),
				strerror(-err));
			guard_disarm(g);
			return err;
		}
		g->n_hooks++;
	}
	return 0;
}

void guard_disarm(struct guard *g)
{
	int i;

	for (i = 0; i < g->n_hooks; i++)
		bpf_link__destroy(g->hook_links[i]);
	g->n_hooks = 0;
	/* a sender between its enter and exit hooks stays marked: forget
	 * them all (no socket is in the map, nothing reads them) */
	forget_oob_senders(g);
}

struct bpf_link *guard_attach_cgroup(struct guard *g, int cg_fd)
{
	return bpf_program__attach_cgroup(g->skel->progs.sockopt_ulp, cg_fd);
}

struct bpf_program *guard_ulp_program(const struct guard *g)
{
	return g->skel->progs.sockopt_ulp;
}

void guard_destroy(struct guard *g)
{
	int i;

	for (i = 0; i < g->n_hooks; i++)
		bpf_link__destroy(g->hook_links[i]);
	g->n_hooks = 0;
	bpf_link__destroy(g->reset_iter);
	bpf_link__destroy(g->unread_iter);
	g->reset_iter = g->unread_iter = NULL;
	guard_bpf__destroy(g->skel);
	g->skel = NULL;
}

int guard_doom(struct guard *g, __u64 cookie, __u32 reason, bool primary)
{
	struct doom_entry d = { .reason = reason, .primary = primary };

	return bpf_map_update_elem(bpf_map__fd(g->skel->maps.doomed), &cookie, &d,
				   primary ? BPF_ANY : BPF_NOEXIST) ? -errno : 0;
}

void guard_undoom_all(struct guard *g)
{
	int fd = bpf_map__fd(g->skel->maps.doomed);
	__u64 key;

	while (!bpf_map_get_next_key(fd, NULL, &key))
		bpf_map_delete_elem(fd, &key);
}

static FILE *run_iter(struct bpf_link *link)
{
	int fd = bpf_iter_create(bpf_link__fd(link));
	FILE *f;

	if (fd < 0)
		return NULL;
	f = fdopen(fd, "r");
	if (!f)
		close(fd);
	return f;
}

FILE *guard_run_reset(struct guard *g)
{
	return run_iter(g->reset_iter);
}

FILE *guard_run_scan(struct guard *g)
{
	return run_iter(g->unread_iter);
}

int guard_progs(const struct guard *g, struct prog_ref *out, int max)
{
	return object_progs(g->skel->obj, out, max);
}

bool guard_can_destroy(const struct guard *g)
{
	struct btf *btf = btf__load_vmlinux_btf();
	bool ok;

	(void)g;
	ok = btf && btf__find_by_name_kind(btf, "bpf_sock_destroy", BTF_KIND_FUNC) > 0;
	btf__free(btf);
	return ok;
}

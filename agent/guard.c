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

int guard_load(struct guard *g, const struct bpf_object *dataplane)
{
	struct bpf_map *map, *theirs;
	int err;

	g->skel = guard_bpf__open();
	if (!g->skel)
		return -errno;
	/* one copy of every shared map: the data plane's */
	bpf_object__for_each_map(map, g->skel->obj) {
		theirs = bpf_object__find_map_by_name(dataplane, bpf_map__name(map));
		if (!theirs || strchr(bpf_map__name(map), '.'))
			continue;
		err = bpf_map__reuse_fd(map, bpf_map__fd(theirs));
		if (err)
			return err;
	}
	err = guard_bpf__load(g->skel);
	if (err)
		pr_warn("loading the guard failed: %s (run with -v for the verifier log)\n",
			strerror(-err));
	return err;
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

int guard_attach(struct guard *g, int sock_hash_fd, bool splice)
{
	LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info info = {};

	g->splice = splice;
	g->reset_iter = bpf_program__attach_iter(g->skel->progs.reset_doomed, NULL);
	if (!g->reset_iter)
		return -errno;
	info.map.map_fd = sock_hash_fd;
	opts.link_info = &info;
	opts.link_info_len = sizeof(info);
	g->unread_iter = bpf_program__attach_iter(g->skel->progs.scan_unread, &opts);
	return g->unread_iter ? 0 : -errno;
}

int guard_arm(struct guard *g)
{
	struct bpf_program *tps[] = {
		g->skel->progs.splice_enter, g->skel->progs.sendto_enter,
		g->skel->progs.sendmsg_enter, g->skel->progs.sendmmsg_enter,
		g->skel->progs.sendto_exit, g->skel->progs.sendmsg_exit,
		g->skel->progs.sendmmsg_exit,
	};
	unsigned int i;
	int err;

	if (g->n_tracepoints)
		return 0;
	err = ensure_tracefs();
	if (err) {
		pr_warn("the guard's tracepoints need tracefs, and mounting it failed (%s): "
			"mount -t tracefs nodev /sys/kernel/tracing (in a container: mount the host's)\n",
			strerror(-err));
		return err;
	}
	/* where splice(2) sees redirected bytes (selftest: splice_read), a
	 * splicing reader needs nothing */
	for (i = g->splice ? 0 : 1; i < sizeof(tps) / sizeof(tps[0]); i++) {
		g->tracepoints[g->n_tracepoints] = bpf_program__attach(tps[i]);
		if (!g->tracepoints[g->n_tracepoints]) {
			err = -errno;
			pr_warn("attaching %s failed: %s\n", bpf_program__name(tps[i]),
				strerror(-err));
			guard_disarm(g);
			return err;
		}
		g->n_tracepoints++;
	}
	return 0;
}

void guard_disarm(struct guard *g)
{
	int fd = bpf_map__fd(g->skel->maps.oob_senders);
	__u64 key, zero64 = 0;
	__u32 zero = 0;
	int i;

	for (i = 0; i < g->n_tracepoints; i++)
		bpf_link__destroy(g->tracepoints[i]);
	g->n_tracepoints = 0;
	/* a sender between its enter and exit tracepoints stays marked:
	 * forget them all (no socket is in the map, nothing reads them) */
	while (!bpf_map_get_next_key(fd, NULL, &key))
		bpf_map_delete_elem(fd, &key);
	bpf_map_update_elem(bpf_map__fd(g->skel->maps.oob_count), &zero, &zero64, BPF_ANY);
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

	for (i = 0; i < g->n_tracepoints; i++)
		bpf_link__destroy(g->tracepoints[i]);
	g->n_tracepoints = 0;
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

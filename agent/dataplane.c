// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The data plane's object (dataplane.h): open it, give it its load-time
 * settings, load it (the guard with it), attach sk_msg to the SOCKHASH
 * and sock_ops to each cgroup (pinned under PIN_DIR with --pin, adopted
 * by the next run), and undo all of it; everyone else gets fds from here.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "accel.h"
#include "accel.skel.h"
#include "bpfutil.h"
#include "dataplane.h"
#include "feed.h"
#include "log.h"
#include "nonce_pool.h"
#include "paths.h"

int dataplane_probe_kernel(char *err, size_t errlen)
{
	static const struct {
		enum bpf_map_type map;
		enum bpf_prog_type prog;
		const char *what;
	} need[] = {
		{ BPF_MAP_TYPE_SOCKHASH, 0, "BPF_MAP_TYPE_SOCKHASH (CONFIG_BPF_STREAM_PARSER)" },
		{ BPF_MAP_TYPE_SK_STORAGE, 0, "BPF_MAP_TYPE_SK_STORAGE" },
		{ 0, BPF_PROG_TYPE_SOCK_OPS, "BPF_PROG_TYPE_SOCK_OPS" },
		{ 0, BPF_PROG_TYPE_SK_MSG, "BPF_PROG_TYPE_SK_MSG (CONFIG_BPF_STREAM_PARSER)" },
	};
	unsigned int i;
	int ret;

	for (i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		ret = need[i].map ? libbpf_probe_bpf_map_type(need[i].map, NULL)
				  : libbpf_probe_bpf_prog_type(need[i].prog, NULL);
		if (ret == 1)
			continue;
		if (ret == -EPERM) {
			snprintf(err, errlen,
				 "not allowed to load BPF: run as root (needs CAP_BPF, CAP_NET_ADMIN, CAP_SYS_ADMIN)");
			return -EPERM;
		}
		snprintf(err, errlen, "this kernel lacks %s: sockmap acceleration is not possible here",
			 need[i].what);
		return -EOPNOTSUPP;
	}
	return 0;
}

static int ensure_bpffs(void)
{
	struct statfs sfs;

	if (statfs("/sys/fs/bpf", &sfs) == 0 && sfs.f_type == BPF_FS_MAGIC)
		return 0;
	/* Some hosts (this container) boot without bpffs mounted.  Its
	 * default root is 1777 (kernel/bpf/inode.c): 0700, as systemd mounts
	 * it, so no other user can plant a directory where we pin. */
	if (mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700")) {
		pr_warn("bpffs is not mounted and mounting it failed (%s): mount -t bpf bpf /sys/fs/bpf\n",
			strerror(errno));
		return -errno;
	}
	pr_info("mounted bpffs at /sys/fs/bpf\n");
	return 0;
}

static __u64 roundup_pow2(__u64 v)
{
	__u64 p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

/* Which maps a --pin run pins: its state, not the per-run event ring
 * (accel.bpf.c, conn_arena: libbpf would also copy the object's arena
 * globals over a reused live arena) nor the load-time constants. */
static bool map_is_pinned(const struct bpf_map *map)
{
	enum bpf_map_type t = bpf_map__type(map);

	if (t == BPF_MAP_TYPE_ARENA || t == BPF_MAP_TYPE_RINGBUF)
		return false;
	return !(t == BPF_MAP_TYPE_ARRAY && strchr(bpf_map__name(map), '.'));
}

/* Something pinned there already: this run adopts it. */
static bool pin_dir_has_entries(void)
{
	struct dirent *e;
	bool any = false;
	DIR *d;

	d = opendir(PIN_DIR);
	if (!d)
		return false;
	while (!any && (e = readdir(d)))
		any = strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return any;
}

/* st (PIN_DIR's, not followed) as this agent makes it: a directory of its
 * own user that nobody else may write.  0, or -EPERM with why in buf. */
static int pin_dir_stat_trusted(const struct stat *st, char *buf, size_t len)
{
	if (!S_ISDIR(st->st_mode))
		snprintf(buf, len, "%s is not a directory", PIN_DIR);
	else if (st->st_uid != geteuid())
		snprintf(buf, len, "%s belongs to uid %u, not to this agent's %u", PIN_DIR,
			 (unsigned)st->st_uid, (unsigned)geteuid());
	else if (st->st_mode & 022)
		snprintf(buf, len, "%s is writable by others (mode %04o)", PIN_DIR,
			 (unsigned)(st->st_mode & 07777));
	else
		return 0;
	return -EPERM;
}

/* PIN_DIR as this agent makes it: a directory (not a link) of its own
 * user that nobody else may write.  Anything else was planted (bpffs is
 * often 1777) and its pins could be swapped: 0, or -EPERM with why in
 * buf. */
int dataplane_pin_dir_trusted(char *buf, size_t len)
{
	struct stat st;

	if (lstat(PIN_DIR, &st))
		return errno == ENOENT ? 0 : -errno;
	return pin_dir_stat_trusted(&st, buf, len);
}

static int pin_maps(struct dataplane *dp)
{
	char why[PATH_MAX + 64];
	char path[PATH_MAX];
	struct bpf_map *map;
	int err;

	err = ensure_bpffs();
	if (err)
		return err;
	if (mkdir(PIN_DIR, 0700) && errno != EEXIST) {
		pr_warn("mkdir %s: %s\n", PIN_DIR, strerror(errno));
		return -errno;
	}
	if (dataplane_pin_dir_trusted(why, sizeof(why))) {
		pr_warn("%s: not made by ngx-sockmap; check what it holds and remove it (rm -r %s)\n",
			why, PIN_DIR);
		return -EPERM;
	}
	/* With a pin path libbpf reuses a compatible map already pinned
	 * there, or pins the new one at load. */
	bpf_object__for_each_map(map, dp->skel->obj) {
		if (!map_is_pinned(map))
			continue;
		snprintf(path, sizeof(path), "%s/%s", PIN_DIR, bpf_map__name(map));
		bpf_map__set_pin_path(map, path);
	}
	dp->pinned = true;
	return 0;
}

/* max_entries of the sock_hash pinned in PIN_DIR: 0 and *n, or -errno. */
static int pinned_max_sockets(__u32 *n)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/%s", PIN_DIR, agent_map_names[MAP_SOCK_HASH]);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	if (bpf_map_get_info_by_fd(fd, &info, &len))
		err = -errno;
	close(fd);
	*n = info.max_entries;
	return err;
}

/*
 * Size the maps that hold one entry per tracked socket.  Past their size a
 * new connection stays on TCP (fallbacks{no_room}), never an error to the
 * application.  A pinned data plane keeps its size: libbpf reuses a pinned
 * map only with the same max_entries (bpf_object__reuse_map), and a map
 * with live sockets in it can't be recreated without dropping their
 * psocks (and their unread bytes).
 */
static int size_maps(struct dataplane *dp, const struct dataplane_params *p, bool adopting)
{
	__u32 n = p->max_sockets, pinned = 0;

	if (!n) {
		dp->max_sockets = bpf_map__max_entries(dp->skel->maps.sock_hash);
		return 0;
	}
	if (adopting && !pinned_max_sockets(&pinned) && pinned != n) {
		if (p->max_sockets_given) {
			pr_warn("the data plane pinned in %s holds %u sockets, --max-sockets asks for %u: "
				"its maps can't be resized with sockets in them; run with --max-sockets %u, "
				"or 'ngx-sockmap detach' (live pairs keep working) and run again\n",
				PIN_DIR, pinned, n, pinned);
			return -EEXIST;
		}
		pr_info("adopting the pinned data plane at its size, %u sockets (this host's default "
			"is %u; 'ngx-sockmap detach' and run again to change it)\n", pinned, n);
		n = pinned;
	}
	bpf_map__set_max_entries(dp->skel->maps.sock_hash, n);
	bpf_map__set_max_entries(dp->skel->maps.endpoints, n);
	bpf_map__set_max_entries(dp->skel->maps.unread_watch, n);
	/* a session and its two far ends' aliases per three sockets at most */
	bpf_map__set_max_entries(dp->skel->maps.splice_sessions, n);
	/* one reset request per tracked socket at most (accel_maps.h) */
	bpf_map__set_max_entries(dp->skel->maps.reset_backlog, n);
	dp->max_sockets = n;
	return 0;
}

int dataplane_load(struct dataplane *dp, const struct dataplane_params *p)
{
	bool adopting;
	int err;

	dp->nonces.pool_fd = -1; /* nothing to refill until loaded */
	dp->skel = accel_bpf__open();
	if (!dp->skel) {
		pr_warn("opening the BPF object failed: %s\n", strerror(errno));
		return -errno;
	}
	dp->skel->rodata->ports_all = p->ports_all;
	if (!p->ports_all)
		memcpy((void *)dp->skel->rodata->port_bits, p->port_bits,
		       sizeof(dp->skel->rodata->port_bits));
	dp->skel->rodata->short_conn_msgs = p->short_conn_msgs;
	dp->skel->rodata->slow_reader_fallback = p->slow_reader_fallback;
	dp->skel->rodata->max_unread = p->max_unread;
	dp->skel->rodata->check_local_addrs = p->check_local_addrs;
	dp->skel->rodata->watch_unread = p->watch_unread;
	dp->skel->rodata->selftest_knobs = p->selftest_knobs;
	dp->skel->rodata->test_claim_delay = p->test_claim_delay;
	if (p->hazard_ttl_ns)
		dp->skel->rodata->hazard_ttl_ns = p->hazard_ttl_ns;
	/* with the guard, sockets enter the map only while it is armed */
	dp->skel->rodata->guards_lazy = p->guard;
	dp->skel->rodata->task_btf = kernel_skmsg_has_task_btf();
	/* no arena before 6.9: the ring buffer transport (event_emit); the
	 * arena code is dead then, and libbpf poisons its map loads */
	dp->events_in_arena = kernel_has_arena();
	dp->skel->rodata->events_in_arena = dp->events_in_arena;
	if (!dp->events_in_arena)
		bpf_map__set_autocreate(dp->skel->maps.conn_arena, false);
	adopting = p->pin && pin_dir_has_entries();
	if ((err = size_maps(dp, p, adopting)))
		return err;
	dp->nginx_vars = p->nginx_vars;
	if (p->pin && (err = pin_maps(dp)))
		return err;
	err = accel_bpf__load(dp->skel);
	if (err == -ENOMEM || err == -E2BIG) {
		/* the five maps sized by size_maps() allocate their buckets at
		 * creation, 16 bytes each, rounded up to a power of two
		 * (net/core/sock_map.c sock_hash_alloc, kernel/bpf/hashtab.c),
		 * charged to the agent's memory cgroup */
		pr_warn("the data plane's maps for %u sockets could not be allocated (%s; about %u MiB "
			"of hash buckets up front): lower --max-sockets, or give the agent more memory\n",
			dp->max_sockets, strerror(-err),
			(unsigned)(5ULL * 16 * roundup_pow2(dp->max_sockets) >> 20));
		return err;
	}
	if (err == -EINVAL && adopting) {
		/* libbpf reuses a pinned map only with the same type, sizes and
		 * flags (bpf_object__reuse_map): a pin of an older build whose
		 * structs changed is refused as EINVAL, not a verifier error */
		pr_warn("the data plane pinned in %s does not match this build's (made by another "
			"version of ngx-sockmap?): remove it with 'ngx-sockmap detach' (its live pairs "
			"keep working), then run again\n", PIN_DIR);
		return err;
	}
	if (err) {
		pr_warn("loading the data plane failed: %s (run with -v for the verifier log)\n",
			strerror(-err));
		return err;
	}
	err = nonce_pool_open(&dp->nonces, bpf_map__fd(dp->skel->maps.nonce_pool),
			      bpf_map__fd(dp->skel->maps.nonce_wakeup));
	if (err < 0) {
		pr_warn("filling the nonce pool: %s\n", strerror(-err));
		return err;
	}
	if (!p->guard)
		return 0;
	err = guard_load(&dp->guard, dp->skel->obj, p->guard_hooks, p->splice_guard);
	/* an explicit --guard-hooks fentry or tracepoints that can't be had
	 * stops the agent; otherwise it runs, and whatever is unguarded
	 * keeps the data plane paused (the caller reads dp->guard) */
	if (err && (p->guard_hooks == GUARD_HOOKS_FENTRY || p->guard_hooks == GUARD_HOOKS_TRACEPOINTS))
		return err;
	return 0;
}

int dataplane_refill_nonces(struct dataplane *dp)
{
	return nonce_pool_fill(&dp->nonces);
}

int dataplane_attach_msg(struct dataplane *dp)
{
	int err;

	/* libbpf 1.4 (Debian backports) has no bpf_program__attach_sockmap()
	 * (1.5) and BPF_LINK_TYPE_SOCKMAP needs 6.10, so attach the classic
	 * way; dataplane_destroy() detaches, and the map's last user
	 * reference going away (agent killed) releases it too
	 * (net/core/sock_map.c sock_map_release_progs). */
	err = bpf_prog_attach(bpf_program__fd(dp->skel->progs.msg_redirect),
			      bpf_map__fd(dp->skel->maps.sock_hash), BPF_SK_MSG_VERDICT, 0);
	if (err) {
		pr_warn("attaching sk_msg to sock_hash failed: %s\n", strerror(-err));
		return err;
	}
	dp->msg_attached = true;
	return 0;
}

/* Is a program named like ours attached to this cgroup's sock_ops hook? */
static bool cgroup_has_ours(int cg_fd)
{
	__u32 ids[64], cnt = 64, i;
	struct bpf_prog_info info;
	bool found = false;
	__u32 len;
	int fd;

	if (bpf_prog_query(cg_fd, BPF_CGROUP_SOCK_OPS, 0, NULL, ids, &cnt))
		return false;
	for (i = 0; i < cnt && !found; i++) {
		fd = bpf_prog_get_fd_by_id(ids[i]);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (!bpf_prog_get_info_by_fd(fd, &info, &len) &&
		    !strncmp(info.name, "sockops_track", sizeof(info.name)))
			found = true;
		close(fd);
	}
	return found;
}

int dataplane_check_cgroup(const struct cg_target *t, bool adopt_pins, char *err, size_t errlen)
{
	char pin[PATH_MAX];
	int cg_fd, ret = 0;

	snprintf(pin, sizeof(pin), "%s/link-cgroup-%llu", PIN_DIR, (unsigned long long)t->id);
	if (adopt_pins && access(pin, F_OK) == 0)
		return 0;
	cg_fd = open(t->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg_fd < 0) {
		snprintf(err, errlen, "open %s: %s", t->path, strerror(errno));
		return -errno;
	}
	if (cgroup_has_ours(cg_fd)) {
		snprintf(err, errlen,
			 "cgroup %s already has ngx-sockmap attached (another agent, or a pinned one: ngx-sockmap detach)",
			 t->path);
		ret = -EBUSY;
	}
	close(cg_fd);
	return ret;
}

static void link_pin_path(char *buf, size_t len, const struct cg_target *t, const char *what)
{
	snprintf(buf, len, "%s/link-cgroup-%llu%s", PIN_DIR, (unsigned long long)t->id, what);
}

/* One of the guard's cgroup programs on the cgroup too (adopted or
 * pinned like the sock_ops link, its pin named with @what): the
 * setsockopt(TCP_ULP) refusal, and the getsockopt an owner asks its
 * socket's state with (bpf/sockmap_query.h), so a worker of the cgroup
 * can ask wherever sock_ops runs. */
static struct bpf_link *attach_guard_prog(struct dataplane *dp, const struct cg_target *t,
					  int cg_fd, struct bpf_program *prog, const char *what,
					  char *err, size_t errlen)
{
	struct bpf_link *link;
	char pin[PATH_MAX];
	int ret;

	link_pin_path(pin, sizeof(pin), t, what);
	if (dp->pinned && access(pin, F_OK) == 0) {
		link = bpf_link__open(pin);
		if (link && bpf_link__update_program(link, prog)) {
			bpf_link__destroy(link);
			link = NULL;
		}
	} else {
		link = bpf_program__attach_cgroup(prog, cg_fd);
	}
	if (!link) {
		snprintf(err, errlen, "attaching the guard's %s to %s: %s",
			 bpf_program__name(prog), t->path, strerror(errno));
		return NULL;
	}
	if (dp->pinned && access(pin, F_OK) && (ret = bpf_link__pin(link, pin))) {
		snprintf(err, errlen, "pinning %s: %s", pin, strerror(-ret));
		bpf_link__destroy(link);
		errno = -ret;
		return NULL;
	}
	return link;
}

static int attach_guard_progs(struct dataplane *dp, const struct cg_target *t, int cg_fd,
			      char *err, size_t errlen)
{
	struct bpf_link *ulp, *query;

	dp->ulp_links[dp->n_targets] = dp->query_links[dp->n_targets] = NULL;
	if (!dp->guard.skel)
		return 0;
	ulp = attach_guard_prog(dp, t, cg_fd, guard_ulp_program(&dp->guard), "-ulp", err, errlen);
	if (!ulp)
		return -errno;
	if (!dp->nginx_vars) {
		/* Off by default: with a getsockopt program attached every
		 * getsockopt(2) in the cgroup takes the kernel's slow path
		 * (kernel/bpf/cgroup.c, __cgroup_bpf_run_filter_getsockopt:
		 * the socket lock and optval copies), about 0.6 us, and
		 * nginx makes one per proxied request.  A link a pinned run
		 * with --nginx-vars left goes with its pin. */
		char pin[PATH_MAX];

		link_pin_path(pin, sizeof(pin), t, "-query");
		if (dp->pinned)
			unlink(pin);
		dp->ulp_links[dp->n_targets] = ulp;
		return 0;
	}
	query = attach_guard_prog(dp, t, cg_fd, guard_query_program(&dp->guard), "-query", err,
				  errlen);
	if (!query) {
		bpf_link__destroy(ulp);
		return -errno;
	}
	dp->ulp_links[dp->n_targets] = ulp;
	dp->query_links[dp->n_targets] = query;
	return 0;
}

int dataplane_attach_cgroup(struct dataplane *dp, const struct cg_target *t, char *err,
			    size_t errlen)
{
	struct bpf_link *link = NULL;
	char pin[PATH_MAX];
	int cg_fd, ret = 0;

	if (dp->n_targets >= MAX_TARGETS) {
		snprintf(err, errlen, "too many cgroups (max %d)", MAX_TARGETS);
		return -E2BIG;
	}
	cg_fd = open(t->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg_fd < 0) {
		snprintf(err, errlen, "open %s: %s", t->path, strerror(errno));
		return -errno;
	}
	link_pin_path(pin, sizeof(pin), t, "");
	if (dp->pinned && access(pin, F_OK) == 0) {
		/* Our own pinned link from an earlier --pin run: adopt it. */
		link = bpf_link__open(pin);
		if (!link) {
			ret = -errno;
			snprintf(err, errlen, "reopening pinned link %s: %s", pin, strerror(errno));
			goto out;
		}
		/* the link still runs the earlier run's program, with its
		 * load-time settings (--ports, --short-conn, --max-unread):
		 * swap in ours, atomically (BPF_LINK_UPDATE) */
		ret = bpf_link__update_program(link, dp->skel->progs.sockops_track);
		if (ret) {
			snprintf(err, errlen, "updating pinned link %s to this run's program: %s", pin,
				 strerror(-ret));
			bpf_link__destroy(link);
			goto out;
		}
		pr_info("adopted pinned attachment of %s, with this run's settings\n", t->path);
	} else if (cgroup_has_ours(cg_fd)) {
		snprintf(err, errlen,
			 "cgroup %s already has ngx-sockmap attached (another agent, or a pinned one: ngx-sockmap detach)",
			 t->path);
		ret = -EBUSY;
		goto out;
	} else {
		link = bpf_program__attach_cgroup(dp->skel->progs.sockops_track, cg_fd);
		if (!link) {
			ret = -errno;
			snprintf(err, errlen, "attaching sock_ops to %s: %s", t->path, strerror(errno));
			goto out;
		}
		if (dp->pinned && (ret = bpf_link__pin(link, pin))) {
			snprintf(err, errlen, "pinning %s: %s", pin, strerror(-ret));
			bpf_link__destroy(link);
			goto out;
		}
	}
	ret = attach_guard_progs(dp, t, cg_fd, err, errlen);
	if (ret) {
		bpf_link__destroy(link);
		goto out;
	}
	dp->links[dp->n_targets] = link;
	dp->targets[dp->n_targets++] = *t;
out:
	close(cg_fd);
	return ret;
}

static void suspects_take(struct dataplane *dp);

void dataplane_detach_cgroup(struct dataplane *dp, int i)
{
	char pin[PATH_MAX];

	if (i < 0 || i >= dp->n_targets)
		return;
	/* a pinned link would keep a dead cgroup's attachment alive */
	if (dp->pinned) {
		link_pin_path(pin, sizeof(pin), &dp->targets[i], "");
		unlink(pin);
		link_pin_path(pin, sizeof(pin), &dp->targets[i], "-ulp");
		unlink(pin);
		link_pin_path(pin, sizeof(pin), &dp->targets[i], "-query");
		unlink(pin);
	}
	bpf_link__destroy(dp->links[i]);
	bpf_link__destroy(dp->ulp_links[i]);
	bpf_link__destroy(dp->query_links[i]);
	suspects_take(dp);
	dp->n_targets--;
	memmove(&dp->links[i], &dp->links[i + 1], (dp->n_targets - i) * sizeof(dp->links[0]));
	memmove(&dp->ulp_links[i], &dp->ulp_links[i + 1],
		(dp->n_targets - i) * sizeof(dp->ulp_links[0]));
	memmove(&dp->query_links[i], &dp->query_links[i + 1],
		(dp->n_targets - i) * sizeof(dp->query_links[0]));
	memmove(&dp->targets[i], &dp->targets[i + 1], (dp->n_targets - i) * sizeof(dp->targets[0]));
}

void dataplane_destroy(struct dataplane *dp)
{
	int i;

	/* A pinned link stays attached after bpf_link__destroy (the pin holds
	 * it); an unpinned one detaches here. */
	for (i = 0; i < dp->n_targets; i++) {
		bpf_link__destroy(dp->links[i]);
		bpf_link__destroy(dp->ulp_links[i]);
		bpf_link__destroy(dp->query_links[i]);
	}
	dp->n_targets = 0;
	if (dp->guard.skel)
		guard_destroy(&dp->guard);
	if (dp->msg_attached && !dp->pinned && dp->skel)
		bpf_prog_detach2(bpf_program__fd(dp->skel->progs.msg_redirect),
				 bpf_map__fd(dp->skel->maps.sock_hash), BPF_SK_MSG_VERDICT);
	dp->msg_attached = false;
	nonce_pool_close(&dp->nonces);
	free(dp->suspects);
	dp->suspects = NULL;
	dp->n_suspects = 0;
	accel_bpf__destroy(dp->skel);
	dp->skel = NULL;
}

void dataplane_maps(const struct dataplane *dp, struct agent_maps *m)
{
#define MAP_FD(e, name) m->fd[e] = bpf_map__fd(dp->skel->maps.name);
	DATAPLANE_MAPS(MAP_FD)
#undef MAP_FD
}

const struct bpf_object *dataplane_object(const struct dataplane *dp)
{
	return dp->skel->obj;
}

void dataplane_events(const struct dataplane *dp, struct feed_source *src)
{
	src->ring = dp->events_in_arena ? &dp->skel->arena->ring : NULL;
	src->fd = bpf_map__fd(dp->events_in_arena ? dp->skel->maps.ring_wakeups
						  : dp->skel->maps.conn_events);
}

void dataplane_ring_place(const struct dataplane *dp, unsigned long *addr, unsigned long *off)
{
	*addr = *off = 0;
	if (dp->events_in_arena)
		arena_place(dp->skel->maps.conn_arena, &dp->skel->arena->ring, addr, off);
}

int dataplane_progs(const struct dataplane *dp, struct prog_ref *out, int max)
{
	int n = object_progs(dp->skel->obj, out, max);

	if (dp->guard.skel)
		n += guard_progs(&dp->guard, out + n, max - n);
	return n;
}

/* One field of the config, the others as they are (one writer: the
 * agent, or a control command while it runs) */
static int config_update(int config_fd, bool paused, const __u64 *netns_only)
{
	struct accel_config cfg = {};
	__u32 zero = 0;

	if (bpf_map_lookup_elem(config_fd, &zero, &cfg))
		return -errno;
	if (netns_only)
		cfg.netns_only = *netns_only;
	else
		cfg.paused = paused;
	return bpf_map_update_elem(config_fd, &zero, &cfg, BPF_ANY) ? -errno : 0;
}

/*
 * An endpoint (the active end's offer to pair) normally leaves at its
 * owner's first send, first packet in, or close (bpf/accel.bpf.c
 * track_closed).  A cgroup detached while the owner sat idle runs no
 * sock_ops program at that close any more (the program leaves with the
 * link), so the entry would stay for good, filling the map.  The owner is
 * in sock_hash under {cookie, snd_isn} from before it registers until
 * after its close callback (tcp_set_state() runs BPF_SOCK_OPS_STATE_CB,
 * then unhash, where the kernel drops it from the map: net/ipv4/tcp.c,
 * net/core/sock_map.c): an endpoint whose owner is not there is an orphan.
 *
 * Only endpoints that existed at a detach can be orphans (a detached
 * cgroup's sockets register no more), so a detach takes their list, one
 * walk of the map, and the sweep checks just those: nothing per tick while
 * no cgroup was detached (scrape_cost_constant.sh), whatever the map
 * holds.  One that left, or whose key a new owner took, leaves the list.
 * A new connection taking an orphan's 4-tuple between the check and the
 * delete loses its endpoint, and so its pairing (TCP, fallbacks{no_peer}):
 * never a wrong pair.
 */
static void suspects_take(struct dataplane *dp)
{
	int fd = bpf_map__fd(dp->skel->maps.endpoints);
	struct sock_key key, next, *prev = NULL;
	struct endpoint ep;
	struct endpoint_suspect *s;
	size_t n = 0, cap = 0;

	free(dp->suspects);
	dp->suspects = NULL;
	dp->n_suspects = 0;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &ep))
			continue; /* gone meanwhile */
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			s = realloc(dp->suspects, cap * sizeof(*s));
			if (!s)
				break; /* a shorter list: fewer swept, nothing wrong */
			dp->suspects = s;
		}
		dp->suspects[n++] = (struct endpoint_suspect){ .key = key, .cookie = ep.cookie,
							      .isn = ep.snd_isn };
	}
	dp->n_suspects = n;
}

int dataplane_sweep_endpoints(struct dataplane *dp)
{
	int ep_fd = bpf_map__fd(dp->skel->maps.endpoints);
	int sh_fd = bpf_map__fd(dp->skel->maps.sock_hash);
	struct sock_id owner;
	struct endpoint ep;
	size_t i, kept = 0;
	int removed = 0;
	__u64 cookie;

	for (i = 0; i < dp->n_suspects; i++) {
		struct endpoint_suspect *s = &dp->suspects[i];

		if (bpf_map_lookup_elem(ep_fd, &s->key, &ep) || ep.cookie != s->cookie)
			continue; /* decided, or another owner's now */
		owner = (struct sock_id){ .cookie = s->cookie, .isn = s->isn };
		if (!bpf_map_lookup_elem(sh_fd, &owner, &cookie) || errno != ENOENT) {
			dp->suspects[kept++] = *s; /* alive: still a suspect */
			continue;
		}
		removed += !bpf_map_delete_elem(ep_fd, &s->key);
	}
	dp->n_suspects = kept;
	return removed;
}

int dataplane_set_paused(int config_fd, bool paused)
{
	return config_update(config_fd, paused, NULL);
}

int dataplane_set_netns_only(int config_fd, __u64 cookie)
{
	return config_update(config_fd, false, &cookie);
}

/* A planted PIN_DIR is not a pinned data plane: a plain run need not
 * refuse to start over it, status and resume must not read its pins. */
bool dataplane_pinned_exists(void)
{
	char why[PATH_MAX + 64];

	if (access(PIN_DIR, F_OK))
		return false;
	if (dataplane_pin_dir_trusted(why, sizeof(why))) {
		pr_warn("ignoring %s: %s (not made by ngx-sockmap)\n", PIN_DIR, why);
		return false;
	}
	return true;
}

int dataplane_open_pinned(struct agent_maps *m)
{
	char path[PATH_MAX];
	int i, fd;

	if (!dataplane_pinned_exists())
		return -ENOENT;
	for (i = 0; i < MAP__MAX; i++) {
		snprintf(path, sizeof(path), "%s/%s", PIN_DIR, agent_map_names[i]);
		fd = bpf_obj_get(path);
		if (fd >= 0)
			m->fd[i] = fd;
	}
	return 0;
}

/* Release the sk_msg program of a pinned sock_hash; sockets already in the
 * map keep their own copy until they close. */
static void detach_pinned_msg(const char *path)
{
	__u32 ids[4], cnt = 4;
	int map_fd, pfd;

	map_fd = bpf_obj_get(path);
	if (map_fd < 0)
		return;
	if (!bpf_prog_query(map_fd, BPF_SK_MSG_VERDICT, 0, NULL, ids, &cnt) && cnt &&
	    (pfd = bpf_prog_get_fd_by_id(ids[0])) >= 0) {
		bpf_prog_detach2(pfd, map_fd, BPF_SK_MSG_VERDICT);
		close(pfd);
	}
	close(map_fd);
}

/* PIN_DIR is opened without following a link and checked as opened (not
 * by name, then opened), and what it holds is reached through that
 * descriptor: a planted directory, or a link to another product's, is
 * left alone (issue 37: root's detach followed a link to a foreign
 * SOCKHASH and stripped its sk_msg program).  In a trusted directory only
 * this user made the entries; a link among them is removed, not
 * followed. */
int dataplane_unpin_all(char *why, size_t len)
{
	char path[PATH_MAX];
	struct dirent *de;
	struct stat st;
	int dfd, err, n = 0;
	DIR *d;

	dfd = open(PIN_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0 && (errno == ENOTDIR || errno == ELOOP)) {
		snprintf(why, len, "%s is not a directory", PIN_DIR);
		return -EPERM;
	}
	if (dfd < 0)
		return -errno;
	err = fstat(dfd, &st) ? -errno : pin_dir_stat_trusted(&st, why, len);
	d = err ? NULL : fdopendir(dfd);
	if (!d) {
		if (!err)
			err = -errno;
		close(dfd);
		return err;
	}
	/* Links first: that detaches sock_ops, so no new socket is added. */
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "link-", 5))
			continue;
		if (!unlinkat(dfd, de->d_name, 0))
			n++;
	}
	rewinddir(d);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		/* bpf_obj_get() takes a path and follows a last link: give
		 * it the descriptor's /proc name (the directory checked, not
		 * whatever PIN_DIR names now), and only for a pinned object
		 * (a regular inode on bpffs, kernel/bpf/inode.c) */
		if (!strcmp(de->d_name, agent_map_names[MAP_SOCK_HASH]) &&
		    !fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode)) {
			snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dfd, de->d_name);
			detach_pinned_msg(path);
		}
		if (!unlinkat(dfd, de->d_name, 0))
			n++;
	}
	closedir(d);
	rmdir(PIN_DIR);
	return n;
}

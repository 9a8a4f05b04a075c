// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bpfutil.h"
#include "log.h"
#include "telemetry.h" /* the skeleton's types */
#include "telemetry.skel.h"
#include "feed.h"
#include "observer.h"

int observer_check_ifaces(const char *const *names, int n, char *err, size_t errlen)
{
	int i;

	for (i = 0; i < n; i++) {
		if (strlen(names[i]) >= IF_NAMESIZE) {
			snprintf(err, errlen, "--xdp: interface name '%.40s%s' is longer than %d characters",
				 names[i], strlen(names[i]) > 40 ? "..." : "", IF_NAMESIZE - 1);
			return -ENAMETOOLONG;
		}
		if (!if_nametoindex(names[i])) {
			snprintf(err, errlen, "--xdp: no interface named '%s' (ip link shows them)",
				 names[i]);
			return -ENODEV;
		}
	}
	if (n > XDP_MAX_IFACES) {
		snprintf(err, errlen, "--xdp: at most %d interfaces", XDP_MAX_IFACES);
		return -E2BIG;
	}
	return 0;
}

/* A bpf_link: detached by the kernel whenever the agent exits, SIGKILL
 * included.  With no mode flag the kernel picks native mode where the
 * driver has XDP, else generic (net/core/dev.c, dev_xdp_mode); ask which
 * one it took. */
static int attach_iface(struct xdp_observer *x, const char *name, char *err, size_t errlen)
{
	struct xdp_iface *i = &x->ifaces[x->n_ifaces];
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int ncpu = libbpf_num_possible_cpus();
	struct xdp_totals *zero;

	snprintf(i->name, sizeof(i->name), "%s", name);
	i->ifindex = if_nametoindex(name);
	/* the packet path only looks its interface up */
	zero = calloc(ncpu > 0 ? ncpu : 1, sizeof(*zero));
	if (!zero)
		return -ENOMEM;
	bpf_map_update_elem(bpf_map__fd(x->skel->maps.xdp_totals), &i->ifindex, zero, BPF_ANY);
	free(zero);
	i->link = bpf_program__attach_xdp(x->skel->progs.xdp_count, i->ifindex);
	if (!i->link) {
		snprintf(err, errlen, "attaching XDP to %s failed: %s%s", i->name, strerror(errno),
			 errno == EBUSY || errno == EEXIST ? " (another XDP program is attached)" : "");
		return -errno;
	}
	i->mode = !bpf_xdp_query(i->ifindex, 0, &q) && q.attach_mode == XDP_ATTACHED_DRV
			  ? "native" : "generic";
	x->n_ifaces++;
	pr_info("XDP on %s in %s mode\n", i->name, i->mode);
	return 0;
}

int observer_start(struct xdp_observer *x, const char *const *names, int n,
		   unsigned int sample_every, char *err, size_t errlen)
{
	int i, ret;

	x->skel = telemetry_bpf__open();
	if (!x->skel) {
		snprintf(err, errlen, "opening the XDP program failed: %s", strerror(errno));
		return -errno;
	}
	x->skel->rodata->sample_every = sample_every;
	x->events_in_arena = kernel_has_arena();
	x->skel->rodata->events_in_arena = x->events_in_arena;
	if (!x->events_in_arena)
		bpf_map__set_autocreate(x->skel->maps.pkt_arena, false);
	if (telemetry_bpf__load(x->skel)) {
		snprintf(err, errlen, "loading the XDP program failed: %s (run with -v for the verifier log)",
			 strerror(errno));
		return -errno;
	}
	for (i = 0; i < n; i++)
		if ((ret = attach_iface(x, names[i], err, errlen)))
			return ret;
	return 0;
}

void observer_stop(struct xdp_observer *x)
{
	int i;

	for (i = 0; i < x->n_ifaces; i++)
		bpf_link__destroy(x->ifaces[i].link);
	x->n_ifaces = 0;
	telemetry_bpf__destroy(x->skel);
	x->skel = NULL;
}

int observer_totals(const struct xdp_observer *x, unsigned int ifindex, struct xdp_totals *out)
{
	return percpu_sum_u64(bpf_map__fd(x->skel->maps.xdp_totals), &ifindex, (__u64 *)out,
			      sizeof(*out) / sizeof(__u64));
}

void observer_maps(const struct xdp_observer *x, struct agent_maps *m)
{
#define MAP_FD(e, name) m->fd[e] = bpf_map__fd(x->skel->maps.name);
	OBSERVER_MAPS(MAP_FD)
#undef MAP_FD
}

void observer_events(const struct xdp_observer *x, struct feed_source *src)
{
	src->ring = x->events_in_arena ? &x->skel->arena->ring : NULL;
	src->fd = bpf_map__fd(x->events_in_arena ? x->skel->maps.ring_wakeups
						 : x->skel->maps.pkt_events);
}

__u64 observer_events_dropped(const struct xdp_observer *x)
{
	return x->skel->bss->events_dropped;
}

void observer_ring_place(const struct xdp_observer *x, unsigned long *addr, unsigned long *off)
{
	*addr = *off = 0;
	if (x->events_in_arena)
		arena_place(x->skel->maps.pkt_arena, &x->skel->arena->ring, addr, off);
}

int observer_progs(const struct xdp_observer *x, struct prog_ref *out, int max)
{
	return object_progs(x->skel->obj, out, max);
}

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The XDP observer (bpf/telemetry.bpf.c): attach to interfaces, read its
 * counters.  The only owner of its skeleton; others get map fds, the event
 * ring and program fds from the functions below.
 */
#ifndef NGX_SOCKMAP_OBSERVER_H
#define NGX_SOCKMAP_OBSERVER_H

#include <net/if.h>
#include <stdbool.h>
#include "bpfutil.h" /* struct prog_ref */
#include "maps.h"
#include "telemetry.h"

struct telemetry_bpf;
struct bpf_link;
struct event_ring;

struct xdp_iface {
	char name[IF_NAMESIZE];
	unsigned int ifindex;
	const char *mode;      /* "native" or "generic" */
	struct bpf_link *link;
};

struct xdp_observer {
	struct telemetry_bpf *skel;
	struct xdp_iface ifaces[XDP_MAX_IFACES];
	int n_ifaces;
	bool events_in_arena;
};

/* Validate interface names before anything is loaded: 0 or -errno with a
 * message in err. */
int observer_check_ifaces(const char *const *names, int n, char *err, size_t errlen);
/* Load and attach.  sample_every: 1 frame in N into the event ring (0: none). */
int observer_start(struct xdp_observer *x, const char *const *names, int n,
		   unsigned int sample_every, char *err, size_t errlen);
void observer_stop(struct xdp_observer *x);
static inline bool observer_running(const struct xdp_observer *x)
{
	return x && x->skel;
}
/* Totals of one interface, summed over CPUs. */
int observer_totals(const struct xdp_observer *x, unsigned int ifindex, struct xdp_totals *out);

void observer_maps(const struct xdp_observer *x, struct agent_maps *m);
struct feed_source;
void observer_events(const struct xdp_observer *x, struct feed_source *src);
/* Samples its ring buffer transport had no room for. */
__u64 observer_events_dropped(const struct xdp_observer *x);
void observer_ring_place(const struct xdp_observer *x, unsigned long *addr, unsigned long *off);
int observer_progs(const struct xdp_observer *x, struct prog_ref *out, int max);

#endif

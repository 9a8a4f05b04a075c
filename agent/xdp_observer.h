/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* XDP observer: attach to interfaces, read counters, rank sources. */
#ifndef NGX_SOCKMAP_XDP_OBSERVER_H
#define NGX_SOCKMAP_XDP_OBSERVER_H

#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include "telemetry.h"
#include "event_ring.h"

struct telemetry_bpf;
struct bpf_link;

struct xdp_iface {
	char name[IF_NAMESIZE];
	unsigned int ifindex;
	const char *mode;      /* "native" or "generic" */
	struct bpf_link *link;
};

struct telemetry {
	struct telemetry_bpf *skel;
	struct xdp_iface ifaces[XDP_MAX_IFACES];
	int n_ifaces;
};

struct src_rank {
	struct src_key key;
	__u64 packets, bytes;
};

/* Validate interface names before anything is loaded: 0 or -errno with a
 * message in err. */
int telemetry_check_ifaces(const char *const *names, int n, char *err, size_t errlen);
/* Load and attach.  sample_every: 1 frame in N into the event ring (0: none). */
int telemetry_start(struct telemetry *t, const char *const *names, int n, unsigned int sample_every,
		    char *err, size_t errlen);
void telemetry_stop(struct telemetry *t);
/* Totals of one interface, summed over CPUs. */
int telemetry_totals(const struct telemetry *t, unsigned int ifindex, struct xdp_totals *out);
void src_key_str(const struct src_key *k, char *buf, size_t len);
extern const char *const frame_kind_names[FK__MAX];

#endif

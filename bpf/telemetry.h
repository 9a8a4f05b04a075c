/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* XDP telemetry: structures shared by bpf/telemetry.bpf.c and the agent. */
#ifndef NGX_SOCKMAP_TELEMETRY_H
#define NGX_SOCKMAP_TELEMETRY_H

#ifndef __bpf__
#include <linux/types.h>
#endif
#include "event_ring.h"

/* What a frame was, as far as XDP parsed it.  Every frame is passed. */
#define FRAME_KINDS(X)                                                          \
	X(FK_IPV4, "ipv4")           /* counted per source */                   \
	X(FK_IPV6, "ipv6")           /* counted per source */                   \
	X(FK_VLAN, "vlan")           /* 802.1Q / 802.1ad tagged: passed */      \
	X(FK_NON_IP, "non_ip")       /* ARP, LLDP, ...: passed untouched */     \
	X(FK_TRUNCATED, "truncated") /* ends inside the Ethernet or IP header */ \
	X(FK_MALFORMED, "malformed") /* IP header that can't be right */

enum frame_kind { FRAME_KINDS(NAMES_ENUM) FK__MAX };

#ifndef __bpf__
static const char *const frame_kind_names[FK__MAX] = { FRAME_KINDS(NAMES_STR) };
#endif

/* Per-source key: IPv4 as v4-mapped IPv6, network order. */
struct src_key {
	__u32 addr[4];
};

/* Per-source value, in an LRU per-CPU hash: bounded against spoofed
 * floods, no lock or atomic on the per-packet path. */
struct src_counters {
	__u64 packets;
	__u64 bytes;
};

/* Per-CPU totals by frame kind. */
struct xdp_totals {
	__u64 packets[FK__MAX];
	__u64 bytes[FK__MAX];
};

#define SRC_STATS_MAX 16384
#define XDP_MAX_IFACES 64

#endif

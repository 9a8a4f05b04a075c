/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The XDP telemetry parse step, shared by bpf/telemetry.bpf.c (xdp_count)
 * and bench/mapcost/cost.bpf.c (the per-packet cost of map choices), so that
 * the benchmark measures exactly the parser that ships.  BPF side only:
 * needs vmlinux.h and bpf_endian.h included first.
 */
#ifndef NGX_SOCKMAP_PKT_PARSE_H
#define NGX_SOCKMAP_PKT_PARSE_H

#include "telemetry.h"

#ifndef ETH_P_IP_BE
#define ETH_P_IP_BE     bpf_htons(0x0800)
#define ETH_P_IPV6_BE   bpf_htons(0x86DD)
#define ETH_P_8021Q_BE  bpf_htons(0x8100)
#define ETH_P_8021AD_BE bpf_htons(0x88A8)
#endif

/*
 * Classify the frame in [data, end) and, for FK_IPV4 and FK_IPV6, write its
 * source address to *key (IPv4 as v4-mapped IPv6, network order; all four
 * words are written).  For other kinds *key is left as it was.  Tagged
 * frames are not looked into: VLAN traffic is passed untouched, and a
 * parser that skips tags would need a loop bound the verifier accepts for
 * every stacking depth.
 */
static __always_inline enum frame_kind pkt_parse(void *data, void *end, struct src_key *key)
{
	struct ethhdr *eth = data;
	__u16 proto;

	if ((void *)(eth + 1) > end)
		return FK_TRUNCATED;
	proto = eth->h_proto;
	if (proto == ETH_P_8021Q_BE || proto == ETH_P_8021AD_BE)
		return FK_VLAN;
	if (proto == ETH_P_IP_BE) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) > end)
			return FK_TRUNCATED;
		if (ip->version != 4 || ip->ihl < 5)
			return FK_MALFORMED;
		if ((void *)ip + ip->ihl * 4 > end)
			return FK_TRUNCATED;
		key->addr[0] = 0;
		key->addr[1] = 0;
		key->addr[2] = bpf_htonl(0x0000ffff);
		key->addr[3] = ip->saddr;
		return FK_IPV4;
	}
	if (proto == ETH_P_IPV6_BE) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > end)
			return FK_TRUNCATED;
		if (ip6->version != 6)
			return FK_MALFORMED;
		__builtin_memcpy(key->addr, &ip6->saddr, sizeof(key->addr));
		return FK_IPV6;
	}
	return FK_NON_IP;
}

#endif

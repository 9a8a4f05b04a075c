/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What bench/skbsplice's BPF side and its relay share. */
#ifndef SKBSPLICE_H
#define SKBSPLICE_H

#define SKBSPLICE_MAX_SOCKS 8192

/* A socket's key in the SOCKHASH: N1 by the client's port, U by N2's port
 * (U's remote port).  The tag keeps the two apart. */
#define SKBSPLICE_FRONT_KEY(port)    ((1ULL << 32) | (port))
#define SKBSPLICE_UPSTREAM_KEY(port) ((2ULL << 32) | (port))

struct skbsplice_counts {
	__u64 tracked;        /* sockets sock_ops inserted (N1 and U) */
	__u64 pool_empty;     /* client connections that found no pooled upstream */
	__u64 skb_passed;     /* N1's skbs before its session was routed */
	__u64 skb_redirected; /* N1's skbs redirected into U's receive queue */
	__u64 skb_bytes;
	__u64 msg_passed;     /* U's sends before its session was routed */
	__u64 msg_redirected; /* U's sends redirected to N1's egress */
	__u64 msg_bytes;
};

#endif

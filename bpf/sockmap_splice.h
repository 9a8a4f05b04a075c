/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Splice: a relay (nginx's stream proxy) hands a session's two far ends
 * to each other, so that a local client C and a local upstream U send
 * straight into each other's receive queue, past the relay's sockets N1
 * (facing C) and N2 (facing U).  The relay asks with setsockopt(2) on its
 * own sockets, which the guard's cgroup/setsockopt program answers
 * (bpf/splice_control.h); the data plane switches a direction at the
 * sender's next send once the relay holds nothing of it
 * (bpf/accel_splice.h).  docs/DESIGN.md "Splice" has the argument.
 *
 *   struct sockmap_splice req = { .version = SOCKMAP_SPLICE_VERSION };
 *   req.op = SPLICE_OFFER;                       on N1
 *   setsockopt(n1, SOCKMAP_SPLICE_LEVEL, SOCKMAP_SPLICE_OPTNAME, &req, sizeof(req));
 *   req.op = SPLICE_JOIN; req.relay = <N1's SO_COOKIE>;   on N2
 *   ...
 *   req.op = SPLICE_FENCE; req.read = ..., req.sent = ..., req.added = ...;
 *   setsockopt(n2, ...)   after a pass that left nothing buffered for U
 *   setsockopt(n1, ...)   after a pass that left nothing buffered for C
 *
 * A fence says, from the relay's own thread, after its sends on that
 * socket returned: "of the bytes I read from the other side (read), all
 * are written to this socket; I wrote sent bytes to it, added of them my
 * own (a PROXY protocol header)".  sendmsg(2) on a sockmap socket queues
 * its redirects before it returns (net/ipv4/tcp_bpf.c tcp_bpf_sendmsg),
 * so at the fence they are all in the far end's queue.
 *
 * Every call is made on a socket the caller holds, and JOIN and FENCE
 * only by the thread that made the OFFER: nobody splices sockets it
 * does not hold.  0: taken.  EPERM: refused (not a paired, redirected
 * socket, not the offering thread, bytes went through TCP, the counts
 * don't agree; the socket's query says which, bpf/sockmap_query.h).  A
 * refused FENCE stays refused on that socket: ask no more.
 * ENOPROTOOPT: no agent (no program attached to the caller's cgroup; no
 * TCP option has this number, include/uapi/linux/tcp.h).
 */
#ifndef NGX_SOCKMAP_SOCKMAP_SPLICE_H
#define NGX_SOCKMAP_SOCKMAP_SPLICE_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#define SOCKMAP_SPLICE_LEVEL   6      /* SOL_TCP */
#define SOCKMAP_SPLICE_OPTNAME 0x4e54 /* next to the query's "NS" */
#define SOCKMAP_SPLICE_VERSION 1

enum sockmap_splice_op {
	SPLICE_OFFER = 1, /* on N1: this socket's peer is a session's client */
	SPLICE_JOIN,      /* on N2: its peer is the upstream of the session
			   * offered on the socket whose cookie is relay */
	SPLICE_FENCE,     /* on N1 or N2: nothing of that direction is held */
};

struct sockmap_splice {
	__u32 version;  /* SOCKMAP_SPLICE_VERSION */
	__u32 op;       /* enum sockmap_splice_op */
	__u64 relay;    /* JOIN: N1's socket cookie (SO_COOKIE) */
	__u64 read;     /* FENCE: bytes the relay read from the other socket */
	__u64 sent;     /* FENCE: bytes it wrote to this one ... */
	__u64 added;    /* FENCE: ... of which its own */
};

#endif /* NGX_SOCKMAP_SOCKMAP_SPLICE_H */

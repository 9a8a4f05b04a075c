/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Structures shared by bpf/accel.bpf.c and the agent.  One definition each;
 * agent code includes this header, never a copy of it.
 */
#ifndef NGX_SOCKMAP_ACCEL_H
#define NGX_SOCKMAP_ACCEL_H

#include "names.h"
#include "sockkey.h"
#include "event_ring.h"

/*
 * Why a socket is not accelerated.  Counted once per socket, when decided.
 * A socket in the SOCKHASH never receives a byte through TCP: on this
 * kernel FIONREAD on it counts only redirected bytes (tcp_bpf_ioctl), and
 * nginx stops reading when FIONREAD says 0.  So a socket is tracked only
 * while paired, and a paired direction never switches to TCP, except when
 * the peer is gone, or for a slow reader on a kernel whose FIONREAD
 * counts TCP bytes too (selftest: fionread_tcp).
 */
#define FALLBACK_REASONS(X)                                                        \
	X(FB_NO_PEER, "no_peer")         /* peer not tracked here or gone */       \
	X(FB_AMBIGUOUS, "ambiguous")     /* a key seen twice: never pair on it */  \
	X(FB_STICKY_TCP, "sticky_tcp")   /* bytes went through TCP before */       \
	X(FB_SLOW_READER, "slow_reader") /* peer's unread bytes reached the bound */ \
	X(FB_PAUSED, "paused")           /* established while paused */            \
	X(FB_POLICY, "policy")           /* port policy: not tracked at all */     \
	X(FB_NO_ROOM, "no_room")         /* a map was full */                      \
	X(FB_SHORT_LIVED, "short_lived") /* its port carries short connections */

enum fallback_reason { FALLBACK_REASONS(NAMES_ENUM) FB__MAX };

#ifndef __bpf__
static const char *const fallback_names[FB__MAX] = { FALLBACK_REASONS(NAMES_STR) };
#endif

/* Per-CPU counters (array map of one element, summed by the agent). */
struct accel_stats {
	__u64 sockets_added;     /* inserted into sock_hash */
	__u64 sockets_closed;    /* tracked sockets that reached TCP_CLOSE */
	__u64 pairs;             /* pairs formed */
	__u64 paired_closed;     /* paired sockets that reached TCP_CLOSE */
	__u64 redirected_msgs;
	__u64 redirected_bytes;
	__u64 tcp_msgs;          /* sends of tracked sockets that took TCP */
	__u64 tcp_bytes;
	__u64 fallbacks[FB__MAX];
};

/* Per-socket state, in socket local storage (sk_state map). */
enum sock_state_flags {
	SS_TCP       = 1 << 0, /* this socket's send direction is on TCP for good */
	SS_ENDPOINT  = 1 << 1, /* we own an entry in the endpoints map */
	SS_PAIRED    = 1 << 2, /* peer_cookie is the other end of our connection */
	SS_AMBIGUOUS = 1 << 3, /* our key collided: never pair */
	SS_TRACKED   = 1 << 4, /* in sock_hash (sock_ops may run once per
				* attached ancestor cgroup: act once) */
};

struct sock_state {
	__u64 cookie;            /* our own socket cookie (events) */
	__u64 peer_cookie;       /* socket cookie of the peer (sock_hash key) */
	__u32 msgs;              /* sends by this socket (redirected or TCP) */
	__u16 service_port;      /* the server's port of this connection */
	__u16 _pad;
	__u64 peer_psock;        /* address of the peer's struct sk_psock, only
				  * ever read with bpf_probe_read_kernel() */
	__u64 redirected_bytes;  /* bytes we redirected: ss -ti won't show them */
	__u32 peer_rcvbuf;       /* slow-reader bound: peer's sk_rcvbuf */
	__u32 flags;             /* enum sock_state_flags */
};

/*
 * Rendezvous entry.  The active end (connect) reaches ESTABLISHED first and
 * registers its key here; the passive end (accept) looks it up under the
 * reversed key, checks the initial sequence numbers cross-match and claims
 * it.  peer_cookie is the one word both race on, with cmpxchg from 0: the
 * passive end writes its cookie (paired), or the active end writes
 * EP_WITHDRAWN when it must decide before anyone claimed it (its first send
 * or first packet in).  Whoever loses leaves the SOCKHASH.
 */
enum endpoint_flags {
	EP_AMBIGUOUS = 1 << 0,
};

#define EP_WITHDRAWN (~0ULL)

struct endpoint {
	/* written by the owner (active end) at registration */
	__u64 cookie;      /* owner's socket cookie */
	__u64 psock;       /* owner's psock address (slow-reader check) */
	__u32 snd_isn;     /* owner's snd_nxt at ESTABLISHED (its ISN + 1) */
	__u32 rcv_isn;     /* owner's rcv_nxt at ESTABLISHED (peer's ISN + 1) */
	__u32 rcvbuf;      /* owner's sk_rcvbuf at ESTABLISHED */
	__u32 flags;       /* enum endpoint_flags */
	/* written by the claimer before its cmpxchg on peer_cookie */
	__u64 peer_psock;
	__u32 peer_rcvbuf;
	__u32 _pad;
	__u64 peer_cookie; /* 0, the claimer's cookie, or EP_WITHDRAWN */
};

/*
 * What connections on one service port (the server's port: local port of
 * the passive end, remote port of the active end) are like: an EWMA of the
 * messages a socket sends in its life, updated when a tracked socket
 * closes.  Setting up and tearing down a psock costs more than one
 * redirected request saves, so new connections on a port whose average is
 * below short_conn_msgs are not tracked; one in SHORT_SAMPLE_EVERY still
 * is, so the average follows the traffic.  Updates race (no lock): it is a
 * heuristic and a lost update only delays it.
 */
struct port_profile {
	__u32 ewma_msgs_x16; /* messages per socket, fixed point x16 */
	__u32 samples;       /* sockets that fed the average */
};

#define SHORT_EWMA_SHIFT   3  /* new sample weighs 1/8 */
#define SHORT_MIN_SAMPLES  32 /* don't judge a port before this many */
#define SHORT_SAMPLE_EVERY 16 /* keep tracking 1 connection in 16 */

/* Runtime switches the agent writes (array map of one element). */
struct accel_config {
	__u32 paused;         /* 1: connections established now are not tracked */
	__u32 test_force_tcp; /* self-test only: every send takes TCP */
};

#define ACCEL_MAX_SOCKETS 131072

#endif /* NGX_SOCKMAP_ACCEL_H */

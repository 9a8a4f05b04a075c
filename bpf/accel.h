/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Structures shared by the data plane (bpf/accel.bpf.c), its guard
 * (bpf/guard.bpf.c) and the agent.  One definition each; agent code
 * includes this header, never a copy of it.
 */
#ifndef NGX_SOCKMAP_ACCEL_H
#define NGX_SOCKMAP_ACCEL_H

#include "names.h"
#include "sockkey.h"
#include "event_ring.h"

/*
 * Why a socket is not accelerated.  Counted once per socket, when decided.
 * A socket in the SOCKHASH never receives a byte through TCP: on 6.18
 * FIONREAD on it counts only redirected bytes (tcp_bpf_ioctl), and nginx
 * stops reading when FIONREAD says 0.  So a socket is tracked only while
 * paired, and a paired direction never switches to TCP, except when the
 * peer is gone, or on a kernel whose FIONREAD counts TCP bytes too
 * (selftest: fionread_tcp).
 */
#define FALLBACK_REASONS(X)                                                          \
	X(FB_NO_PEER, "no_peer")         /* peer not tracked here, or gone */        \
	X(FB_AMBIGUOUS, "ambiguous")     /* a key seen twice: never pair on it */    \
	X(FB_STICKY_TCP, "sticky_tcp")   /* bytes went through TCP before */         \
	X(FB_SLOW_READER, "slow_reader") /* the reader fell behind: TCP for good */  \
	X(FB_PAUSED, "paused")           /* established while paused */              \
	X(FB_POLICY, "policy")           /* port policy: not tracked at all */       \
	X(FB_NO_ROOM, "no_room")         /* a map was full */                        \
	X(FB_SHORT_LIVED, "short_lived") /* its port carries short connections */    \
	X(FB_UNPROVEN, "unproven")       /* 4-tuple matched, ISNs or nonce did not */ \
	X(FB_REPAIR, "repair")           /* established without a handshake */       \
	X(FB_ULP, "ulp")                 /* the socket has a ULP (kTLS, ...) */      \
	X(FB_HAZARD, "hazard")           /* its service showed a hazard before */ \
	X(FB_ARMING, "arming")           /* guards idle: woken, next one pairs */ \
	X(FB_NO_STORAGE, "no_storage")   /* the kernel gave no socket storage */ \
	X(FB_UNGUARDED, "unguarded")     /* the agent guarding it left or died */ \
	X(FB_NO_NONCE, "no_nonce")       /* nonce_pool empty: no agent refills it */ \
	X(FB_NO_WSCALE, "no_wscale")     /* active end, peer's window scale 0 */

enum fallback_reason { FALLBACK_REASONS(NAMES_ENUM) FB__MAX };

/* Connections never inserted because their peer can't be a tracked socket
 * here: the cheapest decision, one map lookup. */
#define SKIP_REASONS(X)                                                           \
	X(SKIP_REMOTE, "remote")           /* peer address in no tracked netns */ \
	X(SKIP_NEVER_PAIRS, "never_pairs") /* that destination never paired */ \
	X(SKIP_OTHER_NETNS, "other_netns") /* a netns the agent can't enter */

enum skip_reason { SKIP_REASONS(NAMES_ENUM) SKIP__MAX };

/*
 * Connections the agent ended, both ends reset (bpf_sock_destroy), because
 * redirecting could no longer deliver their bytes as TCP would.  The
 * service endpoint is learned (service_profile.hazards): its later
 * connections are not paired.
 */
#define RESET_REASONS(X)                                                            \
	X(RS_SLOW_READER, "slow_reader") /* unread bytes reached --max-unread */    \
	X(RS_SPLICE, "splice")           /* the reader splices: can't see them */   \
	X(RS_OOB, "oob")                 /* MSG_OOB where TCP fallback is unsafe */ \
	X(RS_BUDGET, "budget")           /* host-wide unread budget exceeded */

enum reset_reason { RESET_REASONS(NAMES_ENUM) RS__MAX };

#ifndef __bpf__
static const char *const fallback_names[FB__MAX] = { FALLBACK_REASONS(NAMES_STR) };
static const char *const skip_names[SKIP__MAX] = { SKIP_REASONS(NAMES_STR) };
static const char *const reset_names[RS__MAX] = { RESET_REASONS(NAMES_STR) };
#endif

/* Per-CPU counters (array map of one element, summed by the agent). */
struct accel_stats {
	__u64 sockets_added;     /* inserted into sock_hash */
	__u64 sockets_closed;    /* tracked sockets that left it */
	__u64 pairs;             /* pairs formed */
	__u64 paired_closed;     /* paired sockets that reached TCP_CLOSE */
	__u64 redirected_msgs;
	__u64 redirected_bytes;
	__u64 tcp_msgs;          /* sends of tracked sockets that took TCP */
	__u64 tcp_bytes;
	__u64 endpoints_added;   /* registrations (endpoints gauge, no walk) */
	__u64 endpoints_removed;
	__u64 ulp_refused;       /* setsockopt(TCP_ULP) refused on a tracked socket */
	__u64 reused;            /* tracked sockets reused (connect AF_UNSPEC) */
	__u64 claims_lost;       /* passive ends that lost the claim race */
	__u64 events_dropped;    /* ring buffer transport full: ring gaps */
	__u64 reset_requests_deferred;   /* reset requests the ring had no room for,
				  * kept in reset_backlog */
	__u64 reset_requests_lost;       /* ... and the backlog neither: never ended */
	__u64 oob_untracked;     /* times oob_senders had no room: every sender
				  * taken for an urgent one (OOB_UNTRACKED) */
	__u64 splice_offers;     /* splice sessions a relay offered */
	__u64 splice_refused;    /* splice requests refused (bpf/sockmap_splice.h) */
	__u64 splice_switched;   /* directions switched past a relay */
	__u64 fallbacks[FB__MAX];
	__u64 skipped[SKIP__MAX];
	__u64 resets[RS__MAX];   /* counted by the enforcer, per connection */
};

/* A socket's key in sock_hash: one life of one socket.  The cookie is the
 * socket's for good; a socket reused with connect(AF_UNSPEC) gets a new
 * life (its own ISN + 1 at ESTABLISHED), so a peer of its old life can
 * never redirect into the new one. */
struct sock_id {
	__u64 cookie;
	__u32 isn;
	__u32 _pad;
};

/* Per-socket state, in socket local storage (sk_state map). */
enum sock_state_flags {
	SS_TCP       = 1 << 0, /* this socket's send direction is on TCP for good */
	SS_ENDPOINT  = 1 << 1, /* we own an entry in the endpoints map */
	SS_PAIRED    = 1 << 2, /* peer is the other end of our connection */
	SS_PASSIVE   = 1 << 3, /* the server's end (accepted), in this life */
	SS_TRACKED   = 1 << 4, /* tracked in this life (until TCP_CLOSE) */
	SS_IN_MAP    = 1 << 5, /* in sock_hash under self (until we delete it) */
	SS_DOOMED    = 1 << 6, /* sends refused; the agent resets the connection */
	SS_NONCE_OUT = 1 << 7, /* active end: the nonce option is still to be sent */
	SS_RELAY     = 1 << 8, /* a relay's end of a splice session (N1, N2) */
	SS_SPLICED   = 1 << 9, /* a session's far end (C, U): our sends go to the
				* other far end, past the relay, for life */
	SS_SPLICED_CLIENT = 1 << 10, /* ... and we are its client (C) */
};

struct sock_state {
	__u64 cookie;            /* our own socket cookie (events) */
	__u64 life;              /* ISNs of this life: (snd << 32) | rcv */
	struct sock_id self;     /* our sock_hash key */
	struct sock_id peer;     /* the peer's sock_hash key (paired) */
	__u64 nonce;             /* active end: what its final ACK carries */
	__u64 peer_psock;        /* address of the peer's struct sk_psock, only
				  * ever read with bpf_probe_read_kernel() */
	__u64 redirected_bytes;  /* bytes we redirected: ss -ti won't show them */
	__u32 msgs;              /* sends by this socket (redirected or TCP) */
	__u32 peer_rcvbuf;       /* slow-reader fallback: peer's sk_rcvbuf */
	__u32 flags;             /* enum sock_state_flags */
	__u8 doom_reason;        /* enum reset_reason, with SS_DOOMED */
	__u8 fallback;           /* enum fallback_reason + 1 that kept this
				  * life off the redirect path (0: none), for
				  * the owner's own question (sockmap_query.h) */
	__u8 _pad[2];
	__u64 unread_bound;      /* at least what the peer left unread of ours:
				  * its psock count when last read, plus what
				  * we redirected since (msg_redirect) */
	struct service_key service; /* this connection's server side: where
				     * the server's hazards are learned */
	struct service_key client;  /* its client side: the client's (the
				     * passive end has its cgroup from the
				     * endpoint it claimed) */
	__u64 splice_key;        /* the splice session we are in (struct
				  * splice_session): a relay's end from its
				  * OFFER or JOIN, a far end once it found it */
	__u64 splice_owner;      /* a relay's end: the offering thread */
	__u32 splice_gen;        /* accel_config.splice_gen when a far end
				  * last looked for its session */
	__u32 _pad2;
	/* N1 at TCP_CLOSE: its session's spliced counts (struct
	 * splice_session), kept for the query until the relay closes it */
	__u64 spliced_up;
	__u64 spliced_down;
	__u64 spliced_ns;
};

/*
 * A splice session (bpf/sockmap_splice.h), in splice_sessions under N1's
 * cookie; each far end has an entry of its own under its cookie whose
 * alias names the session (one socket has one peer, so it is the far end
 * of one session at most).  An LRU: an entry evicted is a session that
 * stops switching, never a wrong byte (a switched end keeps its target
 * in its own sock_state).
 * to_upstream (to_client): the client's (upstream's) send count at which
 * all its bytes are in the other far end's queue, from the relay's last
 * fence; SPLICE_UNFENCED before the first.  A far end's send count is an
 * upper bound of what it queued (counted at the verdict), a fence a
 * lower bound of what the relay delivered: equal, nothing is in flight.
 */
#define SPLICE_UNFENCED (~0ULL)

enum splice_session_flags {
	SPLICE_JOINED = 1 << 0, /* N2 joined: both far ends known */
	SPLICE_BROKEN = 1 << 1, /* a relay end was written by another thread:
				 * what it counted may not be queued yet */
};

struct splice_session {
	__u64 alias;            /* a far end's entry: the session's key */
	__u64 owner;            /* pid_tgid of the offering thread */
	struct sock_id client;  /* C, N1's peer */
	struct sock_id upstream; /* U, N2's peer (joined) */
	__u64 client_psock;     /* their psocks, for the unread bound */
	__u64 upstream_psock;
	__u64 upstream_relay;   /* N2's cookie (joined) */
	__u64 to_upstream;
	__u64 to_client;
	__u64 spliced_up;       /* bytes C sent straight to U (atomic add) */
	__u64 spliced_down;     /* bytes U sent straight to C: both what the
				 * relay would have read and written, for its
				 * own counts and timers (sockmap_query.h) */
	__u64 spliced_ns;       /* CLOCK_MONOTONIC (coarse) of the last */
	__u32 flags;            /* enum splice_session_flags (atomic or) */
	__u32 _pad;
};

/*
 * Rendezvous entry.  The active end (connect) reaches ESTABLISHED first and
 * registers its key here with a random nonce, which its final ACK also
 * carries in a TCP option; the passive end (accept) looks it up under the
 * reversed key, checks the ISNs cross-match and that the ACK that made it
 * ESTABLISHED carried the same nonce, and claims it.
 *
 * claim is the one word both race on: it holds the nonce while unclaimed;
 * the passive end swaps it for its cookie (paired), the active end for
 * EP_WITHDRAWN when it must decide before anyone claimed it (its first
 * send or first packet in, or its close).  Nothing deletes an entry whose
 * claim still holds its nonce, and a nonce is never reused, so a claim can
 * only land on the registration it was validated against, even though a
 * deleted element's memory is reused at once by the next insert
 * (kernel/bpf/hashtab.c, bpf_mem_alloc free lists).
 */
enum endpoint_flags {
	EP_AMBIGUOUS = 1 << 0,
};

#define EP_WITHDRAWN (~0ULL)
/* Nonces have the top bit set and the low bit clear: never a socket
 * cookie (a counter), never EP_WITHDRAWN. */
#define EP_NONCE_BIT (1ULL << 63)

struct endpoint {
	/* written by the owner (active end) at registration, then constant */
	__u64 cookie;      /* owner's socket cookie */
	__u64 nonce;       /* owner's nonce (also in its final ACK) */
	__u64 psock;       /* owner's psock address (slow-reader check) */
	__u32 snd_isn;     /* owner's snd_nxt at ESTABLISHED (its ISN + 1) */
	__u32 rcv_isn;     /* owner's rcv_nxt at ESTABLISHED (peer's ISN + 1) */
	__u32 rcvbuf;      /* owner's sk_rcvbuf at ESTABLISHED */
	__u32 flags;       /* enum endpoint_flags (atomic or) */
	__u64 cgroup;      /* owner's socket's cgroup id: the claimer keys the
			    * connection's client side with it (struct
			    * service_key), as the owner does */
	/* written by the claimer just before its claim */
	__u64 peer_psock;
	__u32 peer_rcvbuf;
	__u32 _pad;
	__u64 claim;       /* nonce, the claimer's cookie, or EP_WITHDRAWN */
};

/* The TCP option that carries the nonce (RFC 6994 experimental option,
 * kind 254, with our 16-bit ExID), only on the active end's final ACK of a
 * connection whose peer may be tracked here. */
#define NONCE_OPT_KIND 254
#define NONCE_OPT_EXID 0x4e53 /* "NS", network order on the wire */
struct nonce_opt {
	__u8 kind;
	__u8 len;
	__u16 exid;     /* network order */
	__u32 nonce_hi; /* network order halves of the nonce */
	__u32 nonce_lo;
} __attribute__((packed));

/*
 * What connections on one side are like (service_profiles, an LRU hash
 * keyed by struct service_key: a service endpoint, or a client's side of
 * it).  hazards: what that side's connections showed (1 << enum
 * reset_reason, 1 << PH_ULP); set once, never sampled again while
 * remembered: every one cost a reset or a refusal.  Remembered for
 * HAZARD_TTL_NS after the last one was learned (hazard_ns), not for
 * good: a client that sent one urgent byte, or a server that was
 * restarted without its splicing relay, gets its pairing back.  Forgetting
 * one (the time passed, or the LRU evicted it) is safe: the guard catches
 * the next occurrence the same way, which costs one more reset or
 * refusal, never a wrong byte.
 * ewma_msgs_x16: an EWMA of the messages a socket sends in its life,
 * updated when a tracked socket closes (only with --short-conn on).
 * Setting up and tearing down a psock costs more than one redirected
 * request saves, so new connections to an endpoint whose average is below
 * short_conn_msgs are not tracked; one in SHORT_SAMPLE_EVERY still is, so
 * the average follows the traffic, and at most one per slot of the
 * coarse clock (SHORT_SAMPLE_SLOT_SHIFT, sample_slot), so that a busy
 * endpoint does not pay for hundreds of samples a second.  Updates race
 * (no lock): it is a heuristic and a lost update only delays it (or lets
 * one more sample through).
 */
struct service_profile {
	__u32 ewma_msgs_x16; /* messages per socket, fixed point x16 */
	__u32 samples;       /* sockets that fed the average */
	__u32 hazards;       /* 1 << enum reset_reason, 1 << PH_ULP */
	__u32 sample_slot;   /* coarse clock >> SHORT_SAMPLE_SLOT_SHIFT when
			      * a client's end last took a sample here */
	__u64 hazard_ns;     /* bpf_ktime_get_ns() when a hazard was
			      * last learned here */
};

#define PH_ULP RS__MAX /* hazards bit: a ULP was refused on this endpoint */
/* How long a learned hazard keeps a side from pairing.  A side that keeps
 * showing it costs one reset (or refusal) per 10 minutes, against the
 * thousands of connections a busy upstream makes in that time; one that
 * showed it once (a debugging tool's MSG_OOB, a relay since replaced) is
 * accelerated again within 10 minutes, not never. */
#define HAZARD_TTL_NS (600ULL * 1000000000ULL)
#define SERVICE_PROFILES_MAX 65536

#define SHORT_EWMA_SHIFT   3  /* new sample weighs 1/8 */
#define SHORT_MIN_SAMPLES  32 /* don't judge an endpoint before this many */
#define SHORT_SAMPLE_EVERY 16 /* keep tracking 1 connection in 16 */
/* ... and at most one per slot of 2^24 ns (16.8 ms) per endpoint: 60 a
 * second.  Below 950 connections a second the 1 in 16 decides alone;
 * above, each sample's insert, psock, pairing, events and teardown would
 * cost every connection more (docs/bench/compare-sample-slot). */
#define SHORT_SAMPLE_SLOT_SHIFT 24

/* A destination (address, port) the active end connects to: how its
 * tracked connections ended.  Connections to one that withdrew
 * NEVER_PAIRS_AFTER times in a row without a pair are not inserted; 1 in
 * SHORT_SAMPLE_EVERY still is, so a peer that becomes tracked is found. */
struct dest_key {
	__u32 addr[4]; /* v4-mapped, network order */
	__u16 port;    /* host order */
	__u16 _pad;
};

struct dest_profile {
	__u32 withdrawn_in_row;
};

#define NEVER_PAIRS_AFTER 8
#define DEST_PROFILES_MAX 16384

/* Runtime switches the agent writes (array map of one element). */
struct accel_config {
	__u32 paused;         /* 1: connections established now are not tracked */
	__u32 test_force_tcp; /* self-test only: every send takes TCP */
	__u64 netns_only;     /* non-zero: track only sockets of this netns
			       * cookie (an agent that can't setns: it could
			       * neither reset nor see the others) */
	__u32 splice_gen;     /* not the agent's: bumped by each splice OFFER
			       * and JOIN, so far ends look for a session only
			       * after one was made (accel_splice.h).  The
			       * agent's read-modify-write of this map can set
			       * it back: ends look later, never wrongly. */
	__u32 _pad;
};

/*
 * The guard's syscall tracepoints (MSG_OOB, splice) tax every syscall of
 * every process on the host while attached, so the agent attaches them
 * only while sockets are tracked (agent/arming.c).  A socket enters
 * the SOCKHASH only while armed; otherwise its connection stays on TCP and
 * the first such one wakes the agent (guard_wakeup ring buffer).
 */
struct guard_state {
	__u32 armed;    /* written by the agent: the tracepoints are attached;
			 * with GUARD_ARMED_IA32, 32-bit syscalls are seen */
	__u32 wanted;   /* 0 -> 1 by the data plane: a socket wanted in */
	__u64 alive_ns; /* CLOCK_MONOTONIC of the agent's last write: armed
			 * counts only while it is recent (GUARD_ALIVE_NS) */
};

/* In guard_state.armed: the hooks see 32-bit (ia32) syscalls too (fentry;
 * the tracepoints' ia32_enter attached; or no ia32 emulation here).
 * Without it, msg_redirect takes a 32-bit send for an urgent one
 * (accel_redirect.h sending_oob). */
#define GUARD_ARMED_IA32 2

/* How long an armed guard_state stays good without the agent rewriting
 * it (it does every 1 s tick).  A SIGKILLed agent can't disarm: with
 * --pin the sock_ops links outlive it, its tracepoints and its enforcer
 * don't, and new connections must not pair unguarded.  15 s covers a
 * tick held up by a slow Kubernetes API call (libcurl timeout 5 s). */
#define GUARD_ALIVE_NS (15ULL * 1000000000ULL)

/* The socket a reset request names, as the kernel's exact sock_diag
 * lookup takes it (net/ipv4/inet_diag.c inet_diag_find_one_icsk: the
 * 4-tuple and bound device find it, the cookie confirms it): where the
 * agent ends connections over sock_diag it asks for that one socket, as
 * ss -K does, not for a dump of its namespace, which anyone in that
 * namespace can make as long as they like.  Its peer's is the reverse
 * (the two ends of a pair are each other's reversed view: sockkey.h). */
struct reset_tuple {
	__u32 local[4];  /* network order; v4 as ::ffff:a.b.c.d */
	__u32 remote[4];
	__u16 lport;     /* host order */
	__u16 rport;
	__u32 ifindex;   /* sk_bound_dev_if; 0: none */
	__u16 family;    /* the socket's own (AF_INET6 for a dual-stack
			  * socket's v4-mapped connection); 0: not known */
	__u16 _pad[3];
};

/* A connection the data plane (or the guard) wants ended: the agent's
 * enforcer resets both ends (reset_requests ring buffer). */
struct reset_request {
	__u64 cookie; /* a socket of the connection */
	__u64 peer;   /* its peer's cookie; 0: not known (the guard's splice
		       * hooks: the RST of the first reset tells the peer) */
	__u32 reason; /* enum reset_reason */
	__u32 _pad;
	struct service_key service; /* the side of the connection whose
				     * behaviour this is, to learn; port 0:
				     * the socket named's own (the guard's
				     * splice hooks: the enforcer finds it) */
	struct reset_tuple sock;    /* the socket cookie names: its address */
};

/* A connection the agent asked the reset_doomed iterator to end
 * (sockiter.bpf.c doomed map, keyed by socket cookie). */
struct doom_entry {
	__u32 reason;  /* enum reset_reason */
	__u32 primary; /* 1: the socket a request named (counted once) */
	struct service_key service; /* the request's side to learn; port 0:
				     * the primary socket's own side */
};

/* What reset_doomed reports for each socket it ended: one record per
 * socket, written with bpf_seq_write and read as is by the agent. */
struct reset_record {
	__u64 cookie;
	__u64 peer;        /* the peer's cookie (paired), else 0: doomed next */
	__s32 destroyed;   /* bpf_sock_destroy's result; 1: not called */
	__u32 reason;      /* enum reset_reason */
	__u16 family;      /* AF_INET, AF_INET6 */
	__u16 local_port;  /* host order */
	__u16 remote_port; /* host order */
	__u16 _pad;
	__u8 local[16];    /* AF_INET: the first 4 bytes */
	__u8 remote[16];
};

/* Unread redirected bytes one socket holds (the unread scans). */
struct unread_record {
	__u64 cookie;
	__u64 bytes;
	struct reset_tuple sock; /* its address, should the budget end it */
};

/* What scan_watched (syscall_ops.bpf.c) leaves for the agent: the one
 * element of unread_scan_out.  n may pass UNREAD_SCAN_MAX: the records
 * past it are in total and max only. */
#define UNREAD_SCAN_MAX 4096
struct unread_scan {
	__u64 total;
	__u64 max;
	__u32 n;
	__u32 _pad;
	struct unread_record rec[UNREAD_SCAN_MAX];
};

/* scan_watched's context, written back by BPF_PROG_RUN (net/bpf/
 * test_run.c, bpf_prog_test_run_syscall copies ctx out): the agent reads
 * the 256 KiB unread_scan_out only when n says it holds a record, and
 * skips the scan while watched says unread_watch was empty and no socket
 * was added since. */
struct unread_scan_args {
	__u64 total;   /* as struct unread_scan */
	__u64 max;
	__u32 n;
	__u32 watched; /* entries left in unread_watch */
};

/* note_reset's context (syscall_ops.bpf.c, BPF_PROG_RUN by the agent):
 * a connection the agent ended from user space. */
struct note_reset_args {
	__u32 reason; /* enum reset_reason */
	__u32 _pad;
	struct service_key service; /* learned as a hazard; port 0: none */
};

/* Levels the agent measures and the data plane's readers show (array map
 * of one element, written by the agent). */
struct agent_gauges {
	__u64 unread_bytes;     /* redirected bytes not read yet, all sockets */
	__u64 unread_max_bytes; /* the largest one socket holds */
	__u64 unread_limit;     /* --max-unread, per socket */
	__u64 unread_budget;    /* host-wide */
	__u64 local_addrs;      /* addresses of tracked namespaces known */
	__u64 guards_armed;     /* 1: the guard's tracepoints are attached */
	__u64 netns_unresolved; /* attached cgroups whose processes' network
				 * namespace the agent may not open */
	__u64 heartbeat_ns;     /* CLOCK_BOOTTIME of the agent loop's last
				 * tick: `ngx-sockmap health` checks its age */
	__u64 endpoints_swept;  /* orphaned endpoints the agent removed
				 * (dataplane_sweep_endpoints) */
	__u64 followed;         /* followed cgroups attached now */
	__u64 followed_max;     /* --max-followed */
	__u64 follow_refused;   /* peers' cgroups not followed: no slot */
	__u64 follow_released;  /* followed cgroups given back (idle, or for a named one) */
	__u64 cgroups;          /* cgroups attached now */
	__u64 recent_pairs;     /* pairs made in the last 5 minutes (agent/verdict.h) */
	__u64 recent_conns;     /* tracked sockets and skipped connections, likewise */
	__u64 reset_lookups_failed; /* sock_diag lookups of sockets to end
				     * that failed (agent/enforcer.c) */
};

/* Defaults of the data plane's load-time settings that are options too:
 * one definition, for accel.bpf.c's rodata and agent/options.c. */
/* --short-conn 8: on a host whose guard runs on syscall tracepoints,
 * pairing every one-request connection made the close profile 0.71x
 * plain TCP's req/s for 1.58x its CPU (docs/bench/close-all-paired);
 * keep-alive connections average hundreds of sends. */
#define ACCEL_DEFAULT_SHORT_CONN_MSGS 8
#define ACCEL_DEFAULT_MAX_UNREAD      (64ULL << 20) /* --max-unread 64M */

#define ACCEL_MAX_SOCKETS 131072
/* Nonces the agent keeps ready (getrandom(2)) for active ends; an empty
 * pool means TCP (fallbacks{no_nonce}).  Bit 0 of a nonce is never sent
 * (EP_WITHDRAWN is all ones), so the agent uses it on one nonce in
 * NONCE_WAKE_EVERY to ask for a wake-up when it is taken. */
#define NONCE_POOL_SIZE   32768
#define NONCE_WAKE_EVERY  4096
#define NONCE_WAKE_MARK   1ULL
#define LOCAL_ADDRS_MAX   4096

#endif /* NGX_SOCKMAP_ACCEL_H */

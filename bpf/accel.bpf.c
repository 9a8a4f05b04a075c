// SPDX-License-Identifier: GPL-2.0
/*
 * The data plane: sock_ops tracks and pairs established TCP sockets;
 * sk_msg redirects a send straight into the peer socket's ingress queue
 * when, and only when, that is provably the other end of the connection
 * and the direction has never sent a byte through TCP.
 *
 * How a pair is proven (docs/DESIGN.md has the long form):
 *   1. 4-tuple match: the passive end (second to reach ESTABLISHED) looks
 *      up the endpoint the active end registered under the reverse of its
 *      own key (the key has the netns cookie for loopback addresses);
 *   2. ISN cross-match: its snd_nxt/rcv_nxt at ESTABLISHED equal the
 *      registered end's rcv_nxt/snd_nxt at ESTABLISHED;
 *   3. nonce: the ACK that made the passive end ESTABLISHED carried the
 *      random nonce the active end registered.  ISNs are predictable and,
 *      with TCP_REPAIR or a forged SYN-ACK, choosable by a tracked process
 *      in another namespace; the nonce travels only on the wire between
 *      the two real ends;
 *   4. claim: one compare-and-swap of the endpoint's claim word from the
 *      nonce to the claimer's cookie, so one registration is claimed at
 *      most once, or withdrawn, and never after its memory was reused.
 * Redirects are keyed by socket cookie plus ISN (one life of one socket),
 * never by 4-tuple, so a stale, foreign or reused socket can't be hit.
 *
 * A socket is in the SOCKHASH only while it is (or may still become)
 * paired, and no TCP byte ever reaches a socket while it is in there: on
 * 6.18 FIONREAD of a sockmap socket counts only redirected bytes
 * (net/ipv4/tcp_bpf.c, tcp_bpf_ioctl), and nginx stops reading when
 * FIONREAD says 0, so TCP bytes behind it would hang the connection.
 *   - the passive end pairs at ESTABLISHED or is never inserted;
 *   - the active end, inserted at ESTABLISHED (its only chance), withdraws
 *     and leaves at its first send or first packet in if nobody claimed
 *     it: before any TCP byte is queued to it;
 *   - a paired direction stays redirected for life (peer closing aside).
 * What can't be delivered as TCP would (a splicing reader, MSG_OOB, a
 * reader past --max-unread) ends the connection with a reset on both ends
 * instead (guard.bpf.c, the agent's enforcer).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "accel.h"
#include "accel_maps.h"
#include "psock.h"

char LICENSE[] SEC("license") = "GPL";

/*
 * Load-time settings: every one the agent sets before load
 * (agent/dataplane.c dataplane_load), so the verifier drops the branches
 * a setting turns off.  The defaults are the options' (accel.h
 * ACCEL_DEFAULT_*, which options.c uses too).
 */
/* Port policy (--ports). */
const volatile __u32 ports_all = 1;
const volatile __u64 port_bits[65536 / 64];
/* Skip ports whose connections average fewer sends (--short-conn; 0:
 * track all). */
const volatile __u32 short_conn_msgs = ACCEL_DEFAULT_SHORT_CONN_MSGS;
/* Send a direction to TCP when its reader falls behind.  Only where the
 * self-test showed FIONREAD counts TCP bytes of a sockmap socket too. */
const volatile __u32 slow_reader_fallback = 0;
/* Unread redirected bytes one reader may hold (--max-unread): past it the
 * connection is ended.  0: no cap (the self-test's private copy). */
const volatile __u64 max_unread = ACCEL_DEFAULT_MAX_UNREAD;
/* Insert an active end only when its peer's address belongs to a network
 * namespace with tracked processes (local_addrs, kept by the agent). */
const volatile __u32 check_local_addrs = 0;
/* Set only in the self-test's private data plane: lets it force sends
 * through TCP (accel_config.test_force_tcp).  0 here, so the verifier
 * drops that map lookup from every sendmsg of the real data plane. */
const volatile __u32 selftest_knobs = 0;
/* Keep unread_watch (accel_maps.h): the agent sets it where the guard's
 * iter/sockmap is refused (or --unread-scan watch), so the unread scan
 * needs no tracing program.  Off, the verifier drops its map updates. */
const volatile __u32 watch_unread = 0;
/* Test builds only: spin this many rounds between the passive end's
 * checks and its claim, to widen the race the claim protocol closes. */
const volatile __u32 test_claim_delay = 0;
/* 1: insert sockets only while the agent says the guard's tracepoints are
 * attached (struct guard_state).  0 (the self-test's instance): always. */
const volatile __u32 guards_lazy = 0;
/* The events themselves where the kernel has no BPF arena (before 6.9):
 * the agent turns conn_arena's creation off and this on. */
const volatile __u32 events_in_arena = 1;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, ACCEL_MAX_SOCKETS);
	__type(key, struct sock_key);
	__type(value, struct endpoint);
} endpoints SEC(".maps");

/* Filled by the agent from getrandom(2) (agent/nonce_pool.c), taken by
 * new_nonce(). */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, NONCE_POOL_SIZE);
	__type(value, __u64);
} nonce_pool SEC(".maps");

/* new_nonce() wakes the agent to refill: at the nonces it marked
 * (NONCE_WAKE_MARK) and when the pool is empty.  A full ring just drops
 * the record: the agent is awake already, or its tick refills. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} nonce_wakeup SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct accel_config);
} accel_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct guard_state);
} guard_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} guard_wakeup SEC(".maps");

/* Addresses of the network namespaces where tracked processes live. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LOCAL_ADDRS_MAX);
	__type(key, __u32[4]);
	__type(value, __u32);
} local_addrs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, DEST_PROFILES_MAX);
	__type(key, struct dest_key);
	__type(value, struct dest_profile);
} dest_profiles SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct agent_gauges);
} agent_gauges SEC(".maps");

/* Connection events for the agent (paired, fell back, closed): an arena
 * ring read zero-copy, with batched wake-ups (event_ring.h).  One event
 * per connection decision, never per message.  The data plane's own
 * arena: XDP's packet samples can't lap these.  Not pinned with --pin: a
 * restarted agent reads a fresh ring; programs of the previous run, kept
 * by sockets still open, write to the previous one, which nobody reads. */
struct {
	__uint(type, BPF_MAP_TYPE_ARENA);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, RING_ARENA_PAGES);
} conn_arena SEC(".maps");

struct event_ring __arena ring;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} ring_wakeups SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} conn_events SEC(".maps");

#define TCPHDR_SYN 0x02
#define TCPHDR_ACK 0x10
#define SHUTDOWN_MASK 3 /* RCV_SHUTDOWN | SEND_SHUTDOWN (include/net/sock.h) */

static __always_inline void emit_conn(__u16 kind, __u64 cookie, __u64 peer, __u16 sport,
				      __u8 reason, __u64 bytes, __u32 msgs)
{
	struct ring_event ev = {
		.kind = kind,
		.conn = { .cookie = cookie, .peer_cookie = peer, .bytes = bytes, .msgs = msgs,
			  .service_port = sport, .reason = reason },
	};

	struct accel_stats *s = stats();
	__u64 lost;

	/* ring buffer drops count in the per-CPU stats (no .bss: libbpf
	 * 1.4.6 crashed loading this object with an arena and a .bss) */
	event_emit(&ring, &ev, events_in_arena, &ring_wakeups, &conn_events,
		   s ? &s->events_dropped : &lost);
}

/* A socket we tracked or tried to pair did not get (or lost) the redirect
 * path: count it and tell the agent.  The decisions taken before a socket
 * is considered at all (policy, short-lived port, paused) are counted
 * only: they come once per connection and must stay cheap. */
#define NOTE_FALLBACK(why, cookie, sport)                               \
	do {                                                            \
		STAT_ADD(fallbacks[why], 1);                            \
		emit_conn(EV_FALLBACK, (cookie), 0, (sport), (why), 0, 0); \
	} while (0)

static __always_inline int port_tracked(__u16 local, __u16 remote)
{
	if (ports_all)
		return 1;
	return (port_bits[local >> 6] >> (local & 63)) & 1 ||
	       (port_bits[remote >> 6] >> (remote & 63)) & 1;
}

/* struct bpf_sock_ops and struct sk_msg_md name their address fields
 * alike: one copy for both context types. */
#define VIEW_FROM_CTX(v, ctx)                                   \
	do {                                                    \
		(v)->family = (ctx)->family;                    \
		(v)->local_ip4 = (ctx)->local_ip4;              \
		(v)->remote_ip4 = (ctx)->remote_ip4;            \
		if ((v)->family == SK_AF_INET6) {               \
			(v)->local_ip6[0] = (ctx)->local_ip6[0];  \
			(v)->local_ip6[1] = (ctx)->local_ip6[1];  \
			(v)->local_ip6[2] = (ctx)->local_ip6[2];  \
			(v)->local_ip6[3] = (ctx)->local_ip6[3];  \
			(v)->remote_ip6[0] = (ctx)->remote_ip6[0]; \
			(v)->remote_ip6[1] = (ctx)->remote_ip6[1]; \
			(v)->remote_ip6[2] = (ctx)->remote_ip6[2]; \
			(v)->remote_ip6[3] = (ctx)->remote_ip6[3]; \
		}                                               \
		(v)->local_port = (ctx)->local_port;            \
		(v)->remote_port = (ctx)->remote_port;          \
	} while (0)

static __always_inline int key_from_sockops(struct sock_key *k, struct bpf_sock_ops *skops)
{
	struct sock_addr_view v = {};

	VIEW_FROM_CTX(&v, skops);
	if (sock_key_build(k, &v))
		return -1;
	if (sock_key_is_loopback(k))
		k->netns = bpf_get_netns_cookie(skops);
	return 0;
}

/*
 * Our psock address and receive buffer, for the peer's checks of how much
 * it left unread (psock.h).  Returns 0 when this kernel's psock has no
 * msg_tot_len.
 */
static __always_inline __u64 own_psock(struct bpf_sock *sk, __u32 *rcvbuf)
{
	struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);
	__u64 ud;

	*rcvbuf = 0;
	if (!tp || !bpf_core_field_exists(struct sk_psock, msg_tot_len))
		return 0;
	ud = (__u64)BPF_CORE_READ(tp, inet_conn.icsk_inet.sk.sk_user_data);
	*rcvbuf = BPF_CORE_READ(tp, inet_conn.icsk_inet.sk.sk_rcvbuf);
	return psock_from_user_data(ud);
}

static __always_inline bool has_ulp(struct bpf_sock *sk)
{
	struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);

	return tp && BPF_CORE_READ(tp, inet_conn.icsk_ulp_ops);
}

/*
 * The peer announced window scale 0 (its listener had under 64 KiB of
 * receive space at the SYN, or window scaling is off in its netns).
 * tcp_finish_connect() then turns header prediction on at once
 * (`if (!tp->rx_opt.snd_wscale) __tcp_fast_path_on(...)`, after our
 * ACTIVE_ESTABLISHED callback returned), and a first segment that matches
 * the prediction is queued by tcp_rcv_established()'s fast path, or its
 * `goto step5` when sk_forward_alloc is short, neither of which passes
 * tcp_validate_incoming(), the only caller of bpf_skops_parse_hdr()
 * (net/ipv4/tcp_input.c).  So the first-packet callback an unpaired end
 * leaves the SOCKHASH from may never run, and TCP bytes would sit behind a
 * FIONREAD that counts only the psock (withdraw_no_wscale.sh: 1000 queued,
 * FIONREAD 0).  With any other scale pred_flags starts at 0 and the first
 * segment always takes the slow path.  Such an end is not tracked.
 */
static __always_inline bool peer_wscale_zero(struct bpf_sock *sk)
{
	struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);

	/* the field path from tp: a CO-RE offset counts from the access
	 * chain's root, so &tp->rx_opt as the base would count rx_opt twice */
	return !tp || !BPF_CORE_READ_BITFIELD_PROBED(tp, rx_opt.snd_wscale);
}

/* A hazard learned on either side of the connection: the server's (its
 * endpoint) or this client's (its address, to this port).  Both ends
 * build both keys, so they agree.  Both ends see the same ISN sum, so they
 * agree on which connections are the 1-in-N sample: an end tracked alone
 * would pay for nothing. */
static __always_inline int service_is_skipped(const struct service_key *svc,
					      const struct service_key *client, __u32 isn_sum,
					      enum fallback_reason *why)
{
	struct service_profile *sp;

	sp = bpf_map_lookup_elem(&service_profiles, client);
	if (sp && sp->hazards) {
		*why = FB_HAZARD;
		return 1;
	}
	sp = bpf_map_lookup_elem(&service_profiles, svc);
	if (!sp)
		return 0;
	if (sp->hazards) {
		*why = FB_HAZARD;
		return 1;
	}
	if (!short_conn_msgs || isn_sum % SHORT_SAMPLE_EVERY == 0)
		return 0;
	*why = FB_SHORT_LIVED;
	return sp->samples >= SHORT_MIN_SAMPLES && sp->ewma_msgs_x16 < short_conn_msgs * 16;
}

/* Only with the policy on: off, no close inserts an entry (the LRU then
 * holds hazards alone, and ordinary traffic never evicts one). */
static __always_inline void service_profile_update(const struct service_key *svc, __u32 msgs)
{
	struct service_profile *sp, init = {};
	__u32 sample;

	if (!short_conn_msgs || !svc->port)
		return;
	sample = (msgs > 100000 ? 100000 : msgs) * 16;
	sp = bpf_map_lookup_elem(&service_profiles, svc);
	if (!sp) {
		init.ewma_msgs_x16 = sample;
		init.samples = 1;
		bpf_map_update_elem(&service_profiles, svc, &init, BPF_NOEXIST);
		return;
	}
	if (!sp->samples)
		sp->ewma_msgs_x16 = sample;
	else
		sp->ewma_msgs_x16 = sp->ewma_msgs_x16 -
				    (sp->ewma_msgs_x16 >> SHORT_EWMA_SHIFT) +
				    (sample >> SHORT_EWMA_SHIFT);
	sp->samples++;
}

/* Cheap decisions first, from the context alone: a connection we won't
 * track should cost as little as possible.  Fills the connection's key
 * and both its sides (struct service_key).  Returns 0 to go on. */
static __always_inline int worth_tracking(struct bpf_sock_ops *skops, struct sock_key *key,
					  struct service_key *svc, struct service_key *client)
{
	__u16 lport = skops->local_port;
	__u16 rport = sock_key_remote_port(skops->remote_port);
	bool passive = skops->op == BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB;
	enum fallback_reason why = FB_POLICY;
	struct accel_config *cfg;
	__u32 zero = 0;

	if (!port_tracked(lport, rport)) {
		STAT_ADD(fallbacks[FB_POLICY], 1);
		return -1;
	}
	if (key_from_sockops(key, skops))
		return -1;
	service_key_of(svc, key, passive, SVC_SERVER);
	service_key_of(client, key, passive, SVC_CLIENT);
	if (service_is_skipped(svc, client, skops->snd_nxt + skops->rcv_nxt, &why)) {
		STAT_ADD(fallbacks[why], 1);
		return -1;
	}
	cfg = bpf_map_lookup_elem(&accel_config, &zero);
	if (cfg && cfg->paused) {
		STAT_ADD(fallbacks[FB_PAUSED], 1);
		return -1;
	}
	/* an agent without setns() could not end a connection elsewhere
	 * (iter/tcp and sock_diag see only their own namespace) */
	if (cfg && cfg->netns_only && bpf_get_netns_cookie(skops) != cfg->netns_only) {
		STAT_ADD(skipped[SKIP_OTHER_NETNS], 1);
		return -1;
	}
	/* snd_nxt/rcv_nxt are ISN + 1 for both ends here: the active end
	 * runs this from tcp_finish_connect() before it sends the final ACK,
	 * the passive end from tcp_rcv_state_process() before it queues any
	 * data carried by that ACK (net/ipv4/tcp_input.c).  Bytes already
	 * sent or received (TCP Fast Open data in the SYN) would sit in the
	 * TCP queues: leave such a socket alone. */
	if (skops->data_segs_out || skops->bytes_received) {
		STAT_ADD(fallbacks[FB_STICKY_TCP], 1);
		return -1;
	}
	return 0;
}

/* Can the active end's peer be a tracked socket at all?  Loopback peers
 * are in our own namespace; others must have an address of a namespace
 * where tracked processes live, and a destination that never paired is
 * skipped (sampled).  At most two lookups, no insert, no event. */
static __always_inline int peer_may_be_tracked(const struct sock_key *key, __u32 isn_sum)
{
	struct dest_key dk = {};
	struct dest_profile *dp;

	if (!check_local_addrs || sock_key_is_loopback(key))
		return 1;
	if (!bpf_map_lookup_elem(&local_addrs, key->remote_ip)) {
		STAT_ADD(skipped[SKIP_REMOTE], 1);
		return 0;
	}
	__builtin_memcpy(dk.addr, key->remote_ip, sizeof(dk.addr));
	dk.port = key->remote_port;
	dp = bpf_map_lookup_elem(&dest_profiles, &dk);
	if (dp && dp->withdrawn_in_row >= NEVER_PAIRS_AFTER && isn_sum % SHORT_SAMPLE_EVERY) {
		STAT_ADD(skipped[SKIP_NEVER_PAIRS], 1);
		return 0;
	}
	return 1;
}

/* How a registration of the active end ended: feeds never_pairs. */
static __always_inline void dest_note(const struct sock_key *key, bool paired)
{
	struct dest_key dk = {};
	struct dest_profile *dp, init = { .withdrawn_in_row = 1 };

	if (!check_local_addrs || sock_key_is_loopback(key))
		return;
	__builtin_memcpy(dk.addr, key->remote_ip, sizeof(dk.addr));
	dk.port = key->remote_port;
	dp = bpf_map_lookup_elem(&dest_profiles, &dk);
	if (dp)
		dp->withdrawn_in_row = paired ? 0 : dp->withdrawn_in_row + 1;
	else if (!paired)
		bpf_map_update_elem(&dest_profiles, &dk, &init, BPF_NOEXIST);
}

/* Is an agent guarding this data plane's sockets now: armed, and renewed
 * within GUARD_ALIVE_NS (a SIGKILLed agent can't write armed = 0). */
static __always_inline bool guard_alive(const struct guard_state *gs)
{
	/* signed: the coarse clock may lag the agent's write by a tick */
	return gs->armed &&
	       (__s64)(bpf_ktime_get_coarse_ns() - gs->alive_ns) <= (__s64)GUARD_ALIVE_NS;
}

/* May a socket enter the SOCKHASH now?  While the guard is idle: no, and
 * the first socket that asked wakes the agent, which attaches the
 * tracepoints and then arms (so every socket in the map is guarded).
 * Armed by an agent that has not written for GUARD_ALIVE_NS: no either
 * (it was SIGKILLed, its tracepoints are gone); asking again lets a live
 * but slow agent renew it. */
static __always_inline bool guards_armed(void)
{
	struct guard_state *gs;
	__u32 zero = 0, one = 1;

	if (!guards_lazy)
		return true;
	gs = bpf_map_lookup_elem(&guard_state, &zero);
	if (!gs)
		return false;
	if (guard_alive(gs))
		return true;
	if (!__sync_val_compare_and_swap(&gs->wanted, 0, 1))
		bpf_ringbuf_output(&guard_wakeup, &one, sizeof(one), 0);
	return false;
}

/* A socket in the SOCKHASH, for the unread scan (watch_unread). */
static __always_inline void watch_add(__u64 cookie, struct bpf_sock *sk)
{
	__u32 rcvbuf;
	__u64 psock;

	if (!watch_unread)
		return;
	psock = own_psock(sk, &rcvbuf);
	if (psock)
		bpf_map_update_elem(&unread_watch, &cookie, &psock, BPF_ANY);
}

static __always_inline void watch_del(__u64 cookie)
{
	if (watch_unread)
		bpf_map_delete_elem(&unread_watch, &cookie);
}

/*
 * Begin this life of the socket: fresh state, inserted into the SOCKHASH
 * under {cookie, own ISN + 1}.  A socket reused with connect(AF_UNSPEC)
 * whose old life is still in the map (STATE_CB could not tell the
 * disconnect, see track_closed) leaves it first: deleting purges the old
 * life's unread redirected bytes, as tcp_disconnect() purged its receive
 * queue.  bpf_sock_hash_update is only allowed from the ESTABLISHED and
 * LISTEN callbacks (net/core/sock_map.c, sock_map_op_okay).
 */
static __always_inline struct sock_state *life_begin(struct bpf_sock_ops *skops,
						     struct bpf_sock *sk)
{
	__u64 life = ((__u64)skops->snd_nxt << 32) | skops->rcv_nxt;
	struct sock_state *st;
	struct sock_id self;

	/* From 6.19 the kernel allocates socket storage with kmalloc_nolock()
	 * (f484f4a3e058, kernel/bpf/bpf_local_storage.c), which always fails
	 * on a CPU without cmpxchg16b (mm/slub.c kmalloc_nolock_noprof): there
	 * no socket is ever tracked, and the self-test says why. */
	st = bpf_sk_storage_get(&sk_state, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!st) {
		STAT_ADD(fallbacks[FB_NO_STORAGE], 1);
		return NULL;
	}
	/* An ancestor and a descendant cgroup both attached would run us
	 * twice for one life (the agent attaches neither twice). */
	if (st->life == life && (st->flags & SS_TRACKED))
		return NULL;
	if (st->flags & SS_IN_MAP) {
		self = st->self;
		bpf_map_delete_elem(&sock_hash, &self);
		watch_del(st->cookie);
		STAT_ADD(reused, 1);
	}
	__builtin_memset(st, 0, sizeof(*st));
	st->life = life;
	if (!guards_armed()) {
		STAT_ADD(fallbacks[FB_ARMING], 1);
		return NULL;
	}
	st->cookie = bpf_get_socket_cookie(skops);
	st->self.cookie = st->cookie;
	st->self.isn = skops->snd_nxt;
	self = st->self;
	if (bpf_sock_hash_update(skops, &sock_hash, &self, BPF_NOEXIST)) {
		STAT_ADD(fallbacks[FB_NO_ROOM], 1);
		return NULL;
	}
	st->flags = SS_TRACKED | SS_IN_MAP;
	watch_add(st->cookie, sk);
	STAT_ADD(sockets_added, 1);
	return st;
}

/* Leave the SOCKHASH: allowed from sock_ops (kernel/bpf/verifier.c,
 * may_update_sockmap).  Safe only while nothing was redirected to us:
 * dropping the psock purges unread redirected bytes. */
static __always_inline void untrack_self(struct sock_state *st)
{
	struct sock_id self = st->self;

	bpf_map_delete_elem(&sock_hash, &self);
	watch_del(st->cookie);
	st->flags = (st->flags & ~(SS_TRACKED | SS_IN_MAP | SS_ENDPOINT | SS_PAIRED)) | SS_TCP;
	STAT_ADD(sockets_closed, 1);
}

/* The nonce an active end puts on its final ACK, from the kernel's CSPRNG
 * through the agent (bpf_get_prandom_u32 is a per-CPU PRNG whose state a
 * few observed outputs give away).  0: the pool is empty. */
static __always_inline __u64 new_nonce(void)
{
	__u64 n, one = 1;

	if (bpf_map_pop_elem(&nonce_pool, &n)) {
		bpf_ringbuf_output(&nonce_wakeup, &one, sizeof(one), 0);
		return 0;
	}
	if (n & NONCE_WAKE_MARK)
		bpf_ringbuf_output(&nonce_wakeup, &one, sizeof(one), 0);
	return (n | EP_NONCE_BIT) & ~NONCE_WAKE_MARK;
}

/* Active end: register, wait to be claimed. */
static __always_inline void track_active(struct bpf_sock_ops *skops)
{
	struct service_key svc = {}, client = {};
	struct sock_key key = {};
	struct endpoint ne = {};
	struct sock_state *st;
	struct bpf_sock *sk;
	struct endpoint *e;
	__u64 nonce;
	long err;

	sk = skops->sk;
	if (!sk)
		return;
	/* No SYN-ACK: a TCP_REPAIR socket reaches ESTABLISHED without a
	 * handshake and with the sequence numbers it chose
	 * (tcp_finish_connect(sk, NULL), net/ipv4/tcp_output.c tcp_connect) */
	if (!(skops->skb_tcp_flags & TCPHDR_SYN)) {
		STAT_ADD(fallbacks[FB_REPAIR], 1);
		return;
	}
	if (worth_tracking(skops, &key, &svc, &client))
		return;
	if (!peer_may_be_tracked(&key, skops->snd_nxt + skops->rcv_nxt))
		return;
	if (peer_wscale_zero(sk)) {
		STAT_ADD(fallbacks[FB_NO_WSCALE], 1);
		return;
	}
	/* the kernel refuses a socket with a ULP into a sockmap anyway */
	if (has_ulp(sk)) {
		STAT_ADD(fallbacks[FB_ULP], 1);
		return;
	}
	nonce = new_nonce();
	if (!nonce) {
		STAT_ADD(fallbacks[FB_NO_NONCE], 1);
		return;
	}
	st = life_begin(skops, sk);
	if (!st)
		return;
	st->service = svc;
	st->client = client;
	st->nonce = nonce;
	ne.cookie = st->cookie;
	ne.nonce = st->nonce;
	ne.claim = st->nonce;
	ne.psock = own_psock(sk, &ne.rcvbuf);
	ne.snd_isn = skops->snd_nxt;
	ne.rcv_isn = skops->rcv_nxt;
	err = bpf_map_update_elem(&endpoints, &key, &ne, BPF_NOEXIST);
	if (err) {
		if (err == -17 /* EEXIST */) {
			/* A live socket already has our key: the key no
			 * longer names one connection; nobody pairs on it. */
			e = bpf_map_lookup_elem(&endpoints, &key);
			if (e)
				__sync_fetch_and_or(&e->flags, EP_AMBIGUOUS);
			NOTE_FALLBACK(FB_AMBIGUOUS, st->cookie, svc.port);
		} else {
			NOTE_FALLBACK(FB_NO_ROOM, st->cookie, svc.port);
		}
		untrack_self(st);
		return;
	}
	STAT_ADD(endpoints_added, 1);
	st->flags |= SS_ENDPOINT | SS_NONCE_OUT;
	/* STATE_CB: see the close.  PARSE_ALL_HDR_OPT: be called on our first
	 * packet in, to leave before a TCP byte is queued to us if nobody
	 * claimed us (tcp_input.c, bpf_skops_parse_hdr: only on the slow
	 * path, which the first segment takes since the peer's window scale
	 * is not 0, see peer_wscale_zero).  WRITE_HDR_OPT: put
	 * the nonce on the final ACK, which tcp_rcv_synsent_state_process()
	 * sends right after this callback. */
	bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags |
					 BPF_SOCK_OPS_STATE_CB_FLAG |
					 BPF_SOCK_OPS_PARSE_ALL_HDR_OPT_CB_FLAG |
					 BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG);
}

/* The nonce option on the active end's outgoing packets, until the first
 * one carried it (the final ACK of the handshake). */
static __always_inline void nonce_opt_len(struct bpf_sock_ops *skops)
{
	struct sock_state *st;
	struct bpf_sock *sk = skops->sk;

	if (!sk)
		return;
	st = bpf_sk_storage_get(&sk_state, sk, 0, 0);
	if (st && (st->flags & SS_NONCE_OUT))
		bpf_reserve_hdr_opt(skops, sizeof(struct nonce_opt), 0);
}

static __always_inline void nonce_opt_write(struct bpf_sock_ops *skops)
{
	struct nonce_opt opt = { .kind = NONCE_OPT_KIND, .len = sizeof(opt) };
	struct sock_state *st;
	struct bpf_sock *sk = skops->sk;

	if (!sk)
		return;
	st = bpf_sk_storage_get(&sk_state, sk, 0, 0);
	if (!st || !(st->flags & SS_NONCE_OUT))
		return;
	opt.exid = bpf_htons(NONCE_OPT_EXID);
	opt.nonce_hi = bpf_htonl(st->nonce >> 32);
	opt.nonce_lo = bpf_htonl((__u32)st->nonce);
	if (bpf_store_hdr_opt(skops, &opt, sizeof(opt), 0))
		return;
	st->flags &= ~SS_NONCE_OUT;
	bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags &
					 ~BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG);
}

/* The nonce in the ACK that made the passive end ESTABLISHED
 * (skops->skb there, net/ipv4/tcp_input.c bpf_skops_established); 0 when
 * it carried none. */
static __always_inline __u64 ack_nonce(struct bpf_sock_ops *skops)
{
	/* search by kind and 2-byte ExID: len 4 says "match the ExID"
	 * (net/core/filter.c, bpf_sock_ops_load_hdr_opt) */
	struct nonce_opt opt = { .kind = NONCE_OPT_KIND, .len = 4 };

	opt.exid = bpf_htons(NONCE_OPT_EXID);
	if (bpf_load_hdr_opt(skops, &opt, sizeof(opt), 0) != sizeof(opt))
		return 0;
	return ((__u64)bpf_ntohl(opt.nonce_hi) << 32) | bpf_ntohl(opt.nonce_lo);
}

static __always_inline void test_delay(void)
{
	__u32 i;

	for (i = 0; i < test_claim_delay && i < 1000000; i++)
		barrier_var(i);
}

/* Passive end: pair now, or never be tracked. */
static __always_inline void track_passive(struct bpf_sock_ops *skops)
{
	struct sock_key key = {}, rkey = {};
	struct service_key svc = {}, client = {};
	__u64 owner, nonce, claim, psock;
	__u32 snd_isn, rcv_isn, rcvbuf, peer_rcvbuf;
	struct sock_state *st;
	struct bpf_sock *sk;
	struct endpoint *e;
	__u64 my_psock;

	sk = skops->sk;
	if (!sk || worth_tracking(skops, &key, &svc, &client))
		return;
	/* a client on another host (the common case for nginx) costs this
	 * one lookup: it can't have registered here */
	if (check_local_addrs && !sock_key_is_loopback(&key) &&
	    !bpf_map_lookup_elem(&local_addrs, key.remote_ip)) {
		STAT_ADD(skipped[SKIP_REMOTE], 1);
		return;
	}
	sock_key_reverse(&rkey, &key);
	e = bpf_map_lookup_elem(&endpoints, &rkey);
	if (!e) {
		NOTE_FALLBACK(FB_NO_PEER, bpf_get_socket_cookie(skops), svc.port);
		return;
	}
	/* The claim word first, with a full barrier (a fetching atomic):
	 * while it still holds the nonce, the entry was not deleted, so the
	 * fields read after it are that registration's. */
	claim = __sync_fetch_and_or(&e->claim, 0);
	nonce = e->nonce;
	owner = e->cookie;
	snd_isn = e->snd_isn;
	rcv_isn = e->rcv_isn;
	psock = e->psock;
	peer_rcvbuf = e->rcvbuf;
	if (claim != nonce || !(nonce & EP_NONCE_BIT)) {
		NOTE_FALLBACK(FB_NO_PEER, bpf_get_socket_cookie(skops), svc.port);
		return;
	}
	if (e->flags & EP_AMBIGUOUS) {
		NOTE_FALLBACK(FB_AMBIGUOUS, bpf_get_socket_cookie(skops), svc.port);
		return;
	}
	/* Same mirrored 4-tuple but another connection (another namespace),
	 * or an impostor that copied the tuple and ISNs but can't have seen
	 * the nonce: it travels only between the two real ends. */
	if (snd_isn != skops->rcv_nxt || rcv_isn != skops->snd_nxt ||
	    ack_nonce(skops) != nonce) {
		NOTE_FALLBACK(FB_UNPROVEN, bpf_get_socket_cookie(skops), svc.port);
		return;
	}
	if (has_ulp(sk)) {
		STAT_ADD(fallbacks[FB_ULP], 1);
		return;
	}
	st = life_begin(skops, sk);
	if (!st)
		return;
	st->service = svc;
	st->client = client;
	st->flags |= SS_PASSIVE;
	test_delay();
	my_psock = own_psock(sk, &rcvbuf);
	/* Handed over before the claim (the claim is a full barrier); the
	 * owner checks the psock really is ours (psock_is_of). */
	if (e->claim == nonce) {
		e->peer_psock = my_psock;
		e->peer_rcvbuf = rcvbuf;
	}
	if (__sync_val_compare_and_swap(&e->claim, nonce, st->cookie) != nonce) {
		/* withdrawn (its first byte went out) or claimed meanwhile */
		STAT_ADD(claims_lost, 1);
		NOTE_FALLBACK(FB_NO_PEER, st->cookie, svc.port);
		untrack_self(st);
		return;
	}
	st->peer.cookie = owner;
	st->peer.isn = snd_isn;
	st->peer_psock = psock;
	st->peer_rcvbuf = peer_rcvbuf;
	st->flags |= SS_PAIRED;
	STAT_ADD(pairs, 1);
	emit_conn(EV_PAIRED, st->cookie, owner, svc.port, 0, 0, 0);
	bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags |
					 BPF_SOCK_OPS_STATE_CB_FLAG);
}

/* Take the endpoint back from the rendezvous: returns the claimer's
 * cookie, or 0 when nobody claimed it (now nobody can).  Deletes it. */
static __always_inline __u64 endpoint_withdraw(struct sock_state *st, struct sock_key *key,
					       struct endpoint **claimed)
{
	struct endpoint *e;
	__u64 got;

	st->flags &= ~SS_ENDPOINT;
	e = bpf_map_lookup_elem(&endpoints, key);
	if (!e || e->cookie != st->cookie || e->nonce != st->nonce)
		return 0;
	got = __sync_val_compare_and_swap(&e->claim, st->nonce, EP_WITHDRAWN);
	*claimed = e;
	if (got == st->nonce)
		got = 0;
	return got;
}

static __always_inline void endpoint_delete(struct sock_key *key)
{
	if (!bpf_map_delete_elem(&endpoints, key))
		STAT_ADD(endpoints_removed, 1);
}

/*
 * The active end decides, at its first send or first packet in, whichever
 * comes first: adopt the claimer as peer, or withdraw (nobody can claim it
 * afterwards).  Returns 0 when paired.
 */
static __always_inline int active_decide(struct sock_state *st, struct sock_key *key)
{
	struct endpoint *e = NULL;
	__u64 peer;

	if (st->flags & SS_PAIRED)
		return 0;
	if (!(st->flags & SS_ENDPOINT))
		return -1;
	peer = endpoint_withdraw(st, key, &e);
	if (peer && e) {
		st->peer.cookie = peer;
		st->peer.isn = e->rcv_isn;
		st->peer_psock = e->peer_psock;
		st->peer_rcvbuf = e->peer_rcvbuf;
		/* A claimer that lost wrote its psock here too: keep only
		 * the winner's, else nothing bounds what we queue to it. */
		if (!psock_is_of(st->peer_psock, peer))
			st->peer_psock = 0;
		st->flags |= SS_PAIRED;
	}
	endpoint_delete(key);
	dest_note(key, peer != 0);
	return peer ? 0 : -1;
}

/* First packet in for an active end: decide, and leave the SOCKHASH if
 * unpaired, before the packet's data is queued. */
static __always_inline void active_first_packet(struct bpf_sock_ops *skops)
{
	struct sock_key key = {};
	struct sock_state *st;
	struct bpf_sock *sk;

	bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags &
					 ~BPF_SOCK_OPS_PARSE_ALL_HDR_OPT_CB_FLAG);
	sk = skops->sk;
	if (!sk)
		return;
	st = bpf_sk_storage_get(&sk_state, sk, 0, 0);
	if (!st || !(st->flags & SS_TRACKED) || (st->flags & SS_PAIRED))
		return;
	if (key_from_sockops(&key, skops))
		return;
	if (active_decide(st, &key) == 0)
		return;
	if (!(st->flags & SS_TCP)) /* not counted at a send already */
		NOTE_FALLBACK(FB_NO_PEER, st->cookie, st->service.port);
	untrack_self(st);
}

/*
 * TCP_CLOSE of a tracked socket.  Usually the socket is being closed and
 * the kernel already took it out of the SOCKHASH (sock_map_close runs
 * before tcp_close).  But connect(AF_UNSPEC) runs tcp_disconnect(), which
 * leaves it in, with its psock and the old peer's unread redirected bytes,
 * and tcp_bpf has no disconnect hook: the app would read the old peer's
 * bytes after reconnecting (TCP purged its receive queue).  tcp_disconnect
 * sets TCP_CLOSE before it sets sk_err, with the socket not shut down both
 * ways; every other way to TCP_CLOSE with the socket still open (a reset,
 * a timeout, tcp_abort) sets sk_err first, or comes after both FINs
 * (sk_shutdown == SHUTDOWN_MASK), and there the app may still read what
 * arrived, as with TCP.  So: no error and not fully shut down is a
 * disconnect, and the socket leaves the SOCKHASH now, which purges the old
 * life's redirected bytes (net/ipv4/tcp.c tcp_disconnect,
 * net/core/skmsg.c sk_psock_drop).  What this misses, end_stale_life()
 * catches at the next ACTIVE_ESTABLISHED, tracked or not.
 */
static __always_inline bool is_disconnect(struct bpf_sock *sk)
{
	struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);

	return tp && !BPF_CORE_READ(tp, inet_conn.icsk_inet.sk.sk_err) &&
	       BPF_CORE_READ(tp, inet_conn.icsk_inet.sk.sk_shutdown) != SHUTDOWN_MASK;
}

static __always_inline bool is_orphan(struct bpf_sock *sk)
{
	struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);

	return !tp || (BPF_CORE_READ(tp, inet_conn.icsk_inet.sk.__sk_common.skc_flags) &
		       (1UL << bpf_core_enum_value(enum sock_flags, SOCK_DEAD)));
}

static __always_inline void track_closed(struct bpf_sock_ops *skops)
{
	struct endpoint *e = NULL;
	struct sock_key key = {};
	struct sock_state *st;
	struct bpf_sock *sk;
	__u64 peer;

	/* One load of skops->sk: the verifier tracks each load separately */
	sk = skops->sk;
	if (!sk)
		return;
	st = bpf_sk_storage_get(&sk_state, sk, 0, 0);
	if (!st || !(st->flags & SS_TRACKED))
		return;
	emit_conn(EV_CLOSED, st->cookie, st->peer.cookie, st->service.port, 0,
		  st->redirected_bytes, st->msgs);
	service_profile_update(&st->service, st->msgs);
	if (st->flags & SS_PAIRED)
		STAT_ADD(paired_closed, 1);
	if ((st->flags & SS_ENDPOINT) && !key_from_sockops(&key, skops)) {
		peer = endpoint_withdraw(st, &key, &e);
		/* claimed but never adopted: a pair all the same */
		if (peer)
			STAT_ADD(paired_closed, 1);
		if (e)
			endpoint_delete(&key);
	}
	if ((st->flags & SS_IN_MAP) && is_disconnect(sk)) {
		struct sock_id self = st->self;

		bpf_map_delete_elem(&sock_hash, &self);
		st->flags &= ~SS_IN_MAP;
		STAT_ADD(reused, 1);
	}
	/* An application that closed it (orphaned: SOCK_DEAD, set by
	 * tcp_close() before the state moves on) took it out of the
	 * SOCKHASH, and its unread bytes went with its psock.  One that was
	 * reset still holds both until close(): the scan keeps counting it,
	 * and drops the entry once its psock is gone (scan_watched). */
	if (is_orphan(sk))
		watch_del(st->cookie);
	STAT_ADD(sockets_closed, 1);
	st->flags &= ~(SS_TRACKED | SS_ENDPOINT);
}

/*
 * An active end connecting again (connect(AF_UNSPEC), then connect) whose
 * old life is still in the SOCKHASH (track_closed took that disconnect for
 * a close: the app had shut both directions down first) leaves it here,
 * whether or not its new life will be tracked: deleting purges the old
 * life's unread redirected bytes, as tcp_disconnect() purged its receive
 * queue, and takes the psock away, so no send of the new life can reach
 * the old peer.  Not a second run for the same life (nested cgroups).
 */
static __always_inline void end_stale_life(struct bpf_sock_ops *skops)
{
	__u64 life = ((__u64)skops->snd_nxt << 32) | skops->rcv_nxt;
	struct bpf_sock *sk = skops->sk;
	struct sock_state *st;
	struct sock_id self;

	if (!sk)
		return;
	st = bpf_sk_storage_get(&sk_state, sk, 0, 0);
	if (!st || !(st->flags & SS_IN_MAP) || st->life == life)
		return;
	self = st->self;
	bpf_map_delete_elem(&sock_hash, &self);
	watch_del(st->cookie);
	st->flags = 0;
	STAT_ADD(reused, 1);
}

SEC("sockops")
int sockops_track(struct bpf_sock_ops *skops)
{
	switch (skops->op) {
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
		end_stale_life(skops);
		track_active(skops);
		break;
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		track_passive(skops);
		break;
	case BPF_SOCK_OPS_PARSE_HDR_OPT_CB:
		active_first_packet(skops);
		break;
	case BPF_SOCK_OPS_HDR_OPT_LEN_CB:
		nonce_opt_len(skops);
		break;
	case BPF_SOCK_OPS_WRITE_HDR_OPT_CB:
		nonce_opt_write(skops);
		break;
	case BPF_SOCK_OPS_STATE_CB:
		if (skops->args[1] == BPF_TCP_CLOSE)
			track_closed(skops);
		break;
	}
	return 1;
}

/* Count one send, redirected or through TCP: one per-CPU slot lookup for
 * both counters (this runs on every sendmsg of a tracked socket). */
static __always_inline void count_send(bool redirected, __u32 size)
{
	struct accel_stats *s = stats();

	if (!s)
		return;
	if (redirected) {
		__sync_fetch_and_add(&s->redirected_msgs, 1);
		__sync_fetch_and_add(&s->redirected_bytes, size);
	} else {
		__sync_fetch_and_add(&s->tcp_msgs, 1);
		__sync_fetch_and_add(&s->tcp_bytes, size);
	}
}

/* This direction goes through TCP from now on, for good: switching back to
 * redirect could let newer bytes overtake older ones in the reader. */
static __always_inline int fall_back(struct sock_state *st, enum fallback_reason why,
				     __u32 size)
{
	if (st) {
		st->flags |= SS_TCP;
		NOTE_FALLBACK(why, st->cookie, st->service.port);
	} else {
		STAT_ADD(fallbacks[why], 1);
	}
	count_send(false, size);
	return SK_PASS;
}

/*
 * This connection can't go on redirected and can't move to TCP here: end
 * it.  The send fails (SK_DROP: sendmsg returns EACCES, or a short count,
 * net/ipv4/tcp_bpf.c tcp_bpf_send_verdict), so nothing more is queued,
 * and the agent resets both ends (bpf_sock_destroy: ECONNABORTED here,
 * a RST there).  The side whose behaviour it is gets learned, so its next
 * connections aren't paired: ours for urgent data we send, the peer's
 * for bytes it leaves unread.
 */
static __always_inline int doom(struct sock_state *st, struct sk_msg_md *msg,
				enum reset_reason why)
{
	const struct service_key *side = side_of(st, why != RS_SLOW_READER);

	st->flags |= SS_DOOMED;
	st->doom_reason = why;
	service_learn_hazard(side, why);
	request_reset(st->cookie, st->flags & SS_PAIRED ? st->peer.cookie : 0, why, side);
	emit_conn(EV_RESET, st->cookie, st->peer.cookie, st->service.port, why, 0, 0);
	return SK_DROP;
}

/* Unread redirected bytes of the peer's psock (psock.h). */
static __always_inline __u32 peer_unread(const struct sock_state *st)
{
	return psock_unread(st->peer_psock);
}

/* The lowest unread level a send must be checked against: the slow-reader
 * fallback's (the peer's receive buffer) where it is on, else the cap; no
 * limit at all without either. */
static __always_inline __u64 unread_limit(const struct sock_state *st)
{
	__u64 limit = max_unread ? max_unread : ~0ULL;

	if (slow_reader_fallback && st->peer_rcvbuf < limit)
		limit = st->peer_rcvbuf;
	return limit;
}

/* Is this task inside a send() with MSG_OOB (guard.bpf.c's send hooks)?
 * One array lookup (inlined) per send while nobody sends urgent data.
 * OOB_UNKNOWN: a sender found oob_senders full, so any task may be one
 * (fail closed), until the guard re-arms (guard.c forget_oob_senders). */
enum oob_send { OOB_NONE, OOB_THIS_TASK, OOB_UNKNOWN };

static __always_inline enum oob_send sending_oob(void)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&oob_count, &zero), me;

	if (!n || !*n)
		return OOB_NONE;
	if (*n & OOB_UNTRACKED)
		return OOB_UNKNOWN;
	me = bpf_get_current_pid_tgid();
	return bpf_map_lookup_elem(&oob_senders, &me) ? OOB_THIS_TASK : OOB_NONE;
}

SEC("sk_msg")
int msg_redirect(struct sk_msg_md *msg)
{
	struct sock_addr_view v = {};
	struct accel_config *cfg;
	struct sock_key key = {};
	struct sock_state *st;
	struct sock_id peer;
	struct bpf_sock *sk;
	__u32 size = msg->size;
	__u32 zero = 0, queued;
	enum oob_send oob;

	sk = msg->sk;
	if (!sk)
		return SK_PASS;
	st = bpf_sk_storage_get(&sk_state, sk, 0, 0);
	if (!st)
		return fall_back(st, FB_NO_ROOM, size);
	st->msgs++;
	if (st->flags & SS_DOOMED)
		return SK_DROP; /* being reset: see doom() */
	if (st->flags & SS_TCP) {
		count_send(false, size);
		return SK_PASS;
	}
	if (selftest_knobs) {
		cfg = bpf_map_lookup_elem(&accel_config, &zero);
		if (cfg && cfg->test_force_tcp)
			return fall_back(st, FB_POLICY, size);
	}
	/* Nobody guards this socket any more: the agent that armed the guard
	 * exited (armed = 0) or was killed (not renewed for GUARD_ALIVE_NS).
	 * Its hooks and enforcer are gone, and a later agent without --pin
	 * guards its own maps, not these: this copy of the program (the
	 * psock holds it, net/core/sock_map.c sock_map_link) would go on
	 * redirecting what nobody watches for splice, MSG_OOB or a cap.
	 * Move to TCP for good where that is safe (tcp_bpf_recvmsg reads
	 * what was redirected first, then the TCP queue: order holds);
	 * where it is not, nothing could end the connection either, and it
	 * goes on redirecting (DESIGN "What run leaves behind"). */
	if (guards_lazy && slow_reader_fallback) {
		struct guard_state *gs = bpf_map_lookup_elem(&guard_state, &zero);

		if (!gs || !guard_alive(gs))
			return fall_back(st, FB_UNGUARDED, size);
	}
	if (!(st->flags & SS_PAIRED)) {
		/* Active end's first send before anything came in: decide.
		 * Withdrawn, our bytes go through TCP to a peer that is not
		 * tracked, and we leave the SOCKHASH at our first packet in. */
		VIEW_FROM_CTX(&v, msg);
		if (sock_key_build(&key, &v))
			return fall_back(st, FB_NO_PEER, size);
		if (sock_key_is_loopback(&key))
			key.netns = bpf_get_netns_cookie(msg);
		if (active_decide(st, &key))
			return fall_back(st, FB_NO_PEER, size);
		/* a lost psock handover: nothing could bound what we queue */
		if (!st->peer_psock && max_unread &&
		    bpf_core_field_exists(struct sk_psock, msg_tot_len))
			return doom(st, msg, RS_SLOW_READER);
	}
	/* Urgent data redirected would land inline in the peer's stream
	 * (tcp_bpf has no MSG_OOB path): send it through TCP where moving
	 * to TCP is safe and the reader holds no redirected bytes, else end
	 * the connection.  With bytes in its psock, the reader's
	 * recv(MSG_OOB) returns those (tcp_bpf_recvmsg() reads ingress_msg
	 * whatever the flags; it hands over to tcp_recvmsg() only when the
	 * psock is empty, net/ipv4/tcp_bpf.c): seen on 6.12.117.  Nothing
	 * can be added to that count meanwhile: we are its only sender. */
	oob = sending_oob();
	if (oob != OOB_NONE) {
		/* an unknown sender is no evidence about this endpoint
		 * (ending its connection teaches it all the same: the
		 * enforcer learns the endpoint of every reset) */
		if (oob == OOB_THIS_TASK)
			service_learn_hazard(side_of(st, true), RS_OOB);
		if (slow_reader_fallback && !peer_unread(st))
			return fall_back(st, FB_HAZARD, size);
		return doom(st, msg, RS_OOB);
	}
	/* The peer's unread count can only have grown by what we redirected
	 * since we last read it (we are its psock's only sender), so
	 * unread_bound is a true upper bound, and the psock is read only when
	 * the bound could cross a limit: about once per receive buffer of
	 * small sends, not on every send (the read was 40 of msg_redirect's
	 * 209 ns, docs/bench/sk-msg-cost). */
	if (st->unread_bound + size > unread_limit(st)) {
		queued = peer_unread(st);
		st->unread_bound = queued;
		if (slow_reader_fallback && queued && (__u64)queued + size > st->peer_rcvbuf)
			return fall_back(st, FB_SLOW_READER, size);
		if (max_unread && (__u64)queued + size > max_unread)
			return doom(st, msg, RS_SLOW_READER);
	}
	peer = st->peer;
	/* On a missing key (the peer closed) the helper returns SK_DROP and
	 * sets no redirect; we must still return SK_PASS, or sendmsg fails
	 * with EACCES (net/core/sock_map.c bpf_msg_redirect_hash). */
	if (bpf_msg_redirect_hash(msg, &sock_hash, &peer, BPF_F_INGRESS) != SK_PASS)
		return fall_back(st, FB_NO_PEER, size);
	st->redirected_bytes += size;
	st->unread_bound += size;
	count_send(true, size);
	return SK_PASS;
}

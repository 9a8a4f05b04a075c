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
 *      registered end's rcv_nxt/snd_nxt at ESTABLISHED.  Two unrelated
 *      connections with the same 4-tuple (other namespaces) match with
 *      probability 2^-64;
 *   3. claim: cmpxchg of the endpoint's peer_cookie from 0, so one
 *      registered end is claimed at most once, or withdrawn.
 * Redirects are keyed by socket cookie (unique host-wide, never reused),
 * never by 4-tuple, so a stale or foreign socket can't be hit.
 *
 * A socket is in the SOCKHASH only while it is (or may still become)
 * paired, and no TCP byte ever reaches a socket while it is in there: on
 * this kernel FIONREAD of a sockmap socket counts only redirected bytes
 * (net/ipv4/tcp_bpf.c, tcp_bpf_ioctl), and nginx stops reading when
 * FIONREAD says 0, so TCP bytes behind it would hang the connection.
 *   - the passive end pairs at ESTABLISHED or is never inserted;
 *   - the active end, inserted at ESTABLISHED (its only chance), withdraws
 *     and leaves at its first send or first packet in if nobody claimed
 *     it: before any TCP byte is queued to it;
 *   - a paired direction stays redirected for life (peer closing aside).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "accel.h"

char LICENSE[] SEC("license") = "GPL";

/* Port policy, set by the agent before load (--ports). */
const volatile __u32 ports_all = 1;
const volatile __u64 port_bits[65536 / 64];
/* Skip ports whose connections average fewer sends (0: track all). */
const volatile __u32 short_conn_msgs = 4;
/* Send a direction to TCP when its reader falls behind.  Only where the
 * self-test showed FIONREAD counts TCP bytes of a sockmap socket too. */
const volatile __u32 slow_reader_fallback = 0;
/* Set only in the self-test's private data plane: lets it force sends
 * through TCP (accel_config.test_force_tcp).  0 here, so the verifier
 * drops that map lookup from every sendmsg of the real data plane. */
const volatile __u32 selftest_knobs = 0;

struct {
	__uint(type, BPF_MAP_TYPE_SOCKHASH);
	__uint(max_entries, ACCEL_MAX_SOCKETS);
	__type(key, __u64);   /* socket cookie */
	__type(value, __u64);
} sock_hash SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sock_state);
} sk_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, ACCEL_MAX_SOCKETS);
	__type(key, struct sock_key);
	__type(value, struct endpoint);
} endpoints SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct accel_stats);
} accel_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct port_profile);
} port_profiles SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct accel_config);
} accel_config SEC(".maps");

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

static __always_inline void emit_conn(__u16 kind, __u64 cookie, __u64 peer, __u16 sport,
				      __u8 reason, __u64 bytes, __u32 msgs)
{
	struct ring_event *ev;
	__u64 pos;

	ev = event_ring_claim(&ring, &pos, kind);
	if (!ev)
		return;
	ev->conn.cookie = cookie;
	ev->conn.peer_cookie = peer;
	ev->conn.bytes = bytes;
	ev->conn.msgs = msgs;
	ev->conn.service_port = sport;
	ev->conn.reason = reason;
	event_ring_publish(&ring, pos, &ring_wakeups);
}

static __always_inline struct accel_stats *stats(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&accel_stats, &zero);
}

/* sk_msg and sock_ops programs can be preempted on this CPU by another run
 * of the same program (task context), so even per-CPU slots need atomic
 * adds; uncontended, they cost a locked add on a local cache line. */
#define STAT_ADD(field, n)                                      \
	do {                                                    \
		struct accel_stats *__s = stats();              \
		if (__s)                                        \
			__sync_fetch_and_add(&__s->field, (n)); \
	} while (0)

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

/* sk_user_data carries flag bits below the psock pointer
 * (include/net/sock.h, SK_USER_DATA_NOCOPY | _BPF | _PSOCK). */
#define SK_USER_DATA_PSOCK_BIT 4ULL
#define SK_USER_DATA_FLAGS     7ULL

/*
 * Our psock address and receive buffer, for the peer's slow-reader check.
 * sk_msg can't look a peer socket up (no bpf_sk_release for that program
 * type), so each end hands the other the address of its psock, and the
 * sender reads psock->msg_tot_len (the kernel's count of unread
 * redirected bytes, the one FIONREAD reports) with bpf_probe_read_kernel,
 * which never faults.  A read after the peer closed may see garbage; its
 * worst effect is a fall-back to TCP, which is always safe, and the
 * redirect itself fails then anyway (the peer's cookie is gone).
 * Returns 0 when this kernel's psock has no msg_tot_len: no bound.
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
	if (!(ud & SK_USER_DATA_PSOCK_BIT))
		return 0;
	return ud & ~SK_USER_DATA_FLAGS;
}

/* Both ends see the same ISN sum, so they agree on which connections
 * are the 1-in-N sample: an end tracked alone would pay for nothing. */
static __always_inline int port_is_short_lived(__u16 sport, __u32 isn_sum)
{
	__u32 key = sport;
	struct port_profile *pp;

	if (!short_conn_msgs || isn_sum % SHORT_SAMPLE_EVERY == 0)
		return 0;
	pp = bpf_map_lookup_elem(&port_profiles, &key);
	return pp && pp->samples >= SHORT_MIN_SAMPLES &&
	       pp->ewma_msgs_x16 < short_conn_msgs * 16;
}

static __always_inline void port_profile_update(__u16 sport, __u32 msgs)
{
	__u32 key = sport, sample;
	struct port_profile *pp;

	pp = bpf_map_lookup_elem(&port_profiles, &key);
	if (!pp)
		return;
	sample = (msgs > 100000 ? 100000 : msgs) * 16;
	if (!pp->samples)
		pp->ewma_msgs_x16 = sample;
	else
		pp->ewma_msgs_x16 = pp->ewma_msgs_x16 -
				    (pp->ewma_msgs_x16 >> SHORT_EWMA_SHIFT) +
				    (sample >> SHORT_EWMA_SHIFT);
	pp->samples++;
}

/* Cheap decisions first, from the context alone: a connection we won't
 * track should cost as little as possible.  Returns 0 to go on. */
static __always_inline int worth_tracking(struct bpf_sock_ops *skops, __u16 *sport)
{
	__u16 lport = skops->local_port;
	__u16 rport = sock_key_remote_port(skops->remote_port);
	struct accel_config *cfg;
	__u32 zero = 0;

	if (!port_tracked(lport, rport)) {
		STAT_ADD(fallbacks[FB_POLICY], 1);
		return -1;
	}
	*sport = skops->op == BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB ? lport : rport;
	if (port_is_short_lived(*sport, skops->snd_nxt + skops->rcv_nxt)) {
		STAT_ADD(fallbacks[FB_SHORT_LIVED], 1);
		return -1;
	}
	cfg = bpf_map_lookup_elem(&accel_config, &zero);
	if (cfg && cfg->paused) {
		STAT_ADD(fallbacks[FB_PAUSED], 1);
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

/* Insert ourselves into the SOCKHASH under our cookie, with fresh state.
 * bpf_sock_hash_update is only allowed from the ESTABLISHED and LISTEN
 * callbacks (net/core/sock_map.c, sock_map_op_okay). */
static __always_inline struct sock_state *track_self(struct bpf_sock_ops *skops,
						     struct bpf_sock *sk, __u64 *cookie)
{
	struct sock_state *st;

	st = bpf_sk_storage_get(&sk_state, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!st) {
		STAT_ADD(fallbacks[FB_NO_ROOM], 1);
		return NULL;
	}
	/* An ancestor and a descendant cgroup both attached run us twice. */
	if (st->flags & SS_TRACKED)
		return NULL;
	*cookie = bpf_get_socket_cookie(skops);
	if (bpf_sock_hash_update(skops, &sock_hash, cookie, BPF_NOEXIST)) {
		STAT_ADD(fallbacks[FB_NO_ROOM], 1);
		return NULL;
	}
	st->flags = SS_TRACKED;
	st->cookie = *cookie;
	STAT_ADD(sockets_added, 1);
	return st;
}

/* Leave the SOCKHASH: allowed from sock_ops (kernel/bpf/verifier.c,
 * may_update_sockmap).  Safe only while nothing was redirected to us:
 * dropping the psock purges unread redirected bytes. */
static __always_inline void untrack_self(struct sock_state *st, __u64 cookie)
{
	bpf_map_delete_elem(&sock_hash, &cookie);
	st->flags = (st->flags & ~(SS_TRACKED | SS_ENDPOINT | SS_PAIRED)) | SS_TCP;
	STAT_ADD(sockets_closed, 1);
}

/* Active end: register, wait to be claimed. */
static __always_inline void track_active(struct bpf_sock_ops *skops)
{
	struct sock_key key = {};
	struct endpoint ne = {};
	struct sock_state *st;
	struct bpf_sock *sk;
	struct endpoint *e;
	__u64 cookie = 0;
	__u16 sport;
	long err;

	sk = skops->sk;
	if (!sk || worth_tracking(skops, &sport) || key_from_sockops(&key, skops))
		return;
	st = track_self(skops, sk, &cookie);
	if (!st)
		return;
	st->service_port = sport;
	ne.cookie = cookie;
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
			NOTE_FALLBACK(FB_AMBIGUOUS, cookie, sport);
		} else {
			NOTE_FALLBACK(FB_NO_ROOM, cookie, sport);
		}
		untrack_self(st, cookie);
		return;
	}
	st->flags |= SS_ENDPOINT;
	/* STATE_CB: see the close.  PARSE_ALL_HDR_OPT: be called on our first
	 * packet in, to leave before a TCP byte is queued to us if nobody
	 * claimed us (tcp_input.c, bpf_skops_parse_hdr). */
	bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags |
					 BPF_SOCK_OPS_STATE_CB_FLAG |
					 BPF_SOCK_OPS_PARSE_ALL_HDR_OPT_CB_FLAG);
}

/* Passive end: pair now, or never be tracked. */
static __always_inline void track_passive(struct bpf_sock_ops *skops)
{
	struct sock_key key = {}, rkey = {};
	struct sock_state *st;
	struct bpf_sock *sk;
	struct endpoint *e;
	__u64 cookie = 0, psock;
	__u32 rcvbuf;
	__u16 sport;

	sk = skops->sk;
	if (!sk || worth_tracking(skops, &sport) || key_from_sockops(&key, skops))
		return;
	sock_key_reverse(&rkey, &key);
	e = bpf_map_lookup_elem(&endpoints, &rkey);
	if (!e || e->peer_cookie) {
		NOTE_FALLBACK(FB_NO_PEER, bpf_get_socket_cookie(skops), sport);
		return;
	}
	if (e->flags & EP_AMBIGUOUS) {
		NOTE_FALLBACK(FB_AMBIGUOUS, bpf_get_socket_cookie(skops), sport);
		return;
	}
	/* Same mirrored 4-tuple but another connection (other namespace) */
	if (e->snd_isn != skops->rcv_nxt || e->rcv_isn != skops->snd_nxt) {
		NOTE_FALLBACK(FB_NO_PEER, bpf_get_socket_cookie(skops), sport);
		return;
	}
	st = track_self(skops, sk, &cookie);
	if (!st)
		return;
	psock = own_psock(sk, &rcvbuf);
	e->peer_psock = psock;
	e->peer_rcvbuf = rcvbuf;
	/* The claim; a fetching atomic is fully ordered, so the owner sees
	 * the fields above once it sees our cookie. */
	if (__sync_val_compare_and_swap(&e->peer_cookie, 0, cookie) != 0) {
		/* withdrawn (its first byte went out) or claimed meanwhile */
		NOTE_FALLBACK(FB_NO_PEER, cookie, sport);
		untrack_self(st, cookie);
		return;
	}
	st->service_port = sport;
	st->peer_cookie = e->cookie;
	st->peer_psock = e->psock;
	st->peer_rcvbuf = e->rcvbuf;
	st->flags |= SS_PAIRED;
	STAT_ADD(pairs, 1);
	emit_conn(EV_PAIRED, cookie, e->cookie, sport, 0, 0, 0);
	bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags |
					 BPF_SOCK_OPS_STATE_CB_FLAG);
}

/*
 * The active end decides, at its first send or first packet in, whichever
 * comes first: adopt the claimer as peer, or withdraw (nobody can claim it
 * afterwards).  Returns 0 when paired.
 */
static __always_inline int active_decide(struct sock_state *st, struct sock_key *key)
{
	struct endpoint *e;
	__u64 peer;

	if (st->flags & SS_PAIRED)
		return 0;
	if (!(st->flags & SS_ENDPOINT))
		return -1;
	e = bpf_map_lookup_elem(&endpoints, key);
	if (!e)
		return -1;
	peer = __sync_val_compare_and_swap(&e->peer_cookie, 0, EP_WITHDRAWN);
	if (peer && peer != EP_WITHDRAWN) {
		st->peer_cookie = peer;
		st->peer_psock = e->peer_psock;
		st->peer_rcvbuf = e->peer_rcvbuf;
		st->flags = (st->flags & ~SS_ENDPOINT) | SS_PAIRED;
		bpf_map_delete_elem(&endpoints, key);
		return 0;
	}
	st->flags &= ~SS_ENDPOINT;
	bpf_map_delete_elem(&endpoints, key);
	return -1;
}

/* First packet in for an active end: decide, and leave the SOCKHASH if
 * unpaired, before the packet's data is queued. */
static __always_inline void active_first_packet(struct bpf_sock_ops *skops)
{
	struct sock_key key = {};
	struct sock_state *st;
	struct bpf_sock *sk;
	__u64 cookie;

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
		NOTE_FALLBACK(FB_NO_PEER, st->cookie, st->service_port);
	cookie = bpf_get_socket_cookie(skops);
	untrack_self(st, cookie);
}

static __always_inline void track_closed(struct bpf_sock_ops *skops)
{
	struct sock_key key = {};
	struct sock_state *st;
	struct bpf_sock *sk;
	struct endpoint *e;

	/* One load of skops->sk: the verifier tracks each load separately */
	sk = skops->sk;
	if (!sk)
		return;
	st = bpf_sk_storage_get(&sk_state, sk, 0, 0);
	if (!st || !(st->flags & SS_TRACKED))
		return;
	STAT_ADD(sockets_closed, 1);
	emit_conn(EV_CLOSED, st->cookie, st->peer_cookie, st->service_port, 0,
		  st->redirected_bytes, st->msgs);
	port_profile_update(st->service_port, st->msgs);
	if (st->flags & SS_PAIRED)
		STAT_ADD(paired_closed, 1);
	if (st->flags & SS_ENDPOINT) {
		st->flags &= ~SS_ENDPOINT;
		if (key_from_sockops(&key, skops))
			return;
		e = bpf_map_lookup_elem(&endpoints, &key);
		if (e && e->cookie == bpf_get_socket_cookie(skops)) {
			/* claimed but never adopted: a pair all the same */
			if (e->peer_cookie && e->peer_cookie != EP_WITHDRAWN)
				STAT_ADD(paired_closed, 1);
			bpf_map_delete_elem(&endpoints, &key);
		}
	}
	st->flags &= ~SS_TRACKED;
}

SEC("sockops")
int sockops_track(struct bpf_sock_ops *skops)
{
	switch (skops->op) {
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
		track_active(skops);
		break;
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		track_passive(skops);
		break;
	case BPF_SOCK_OPS_PARSE_HDR_OPT_CB:
		active_first_packet(skops);
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
		NOTE_FALLBACK(why, st->cookie, st->service_port);
	} else {
		STAT_ADD(fallbacks[why], 1);
	}
	count_send(false, size);
	return SK_PASS;
}

/*
 * Redirected bytes bypass the receiver's buffer accounting: bpf_tcp_ingress()
 * (net/ipv4/tcp_bpf.c) charges them with sk_wmem_schedule(), which only the
 * global tcp_mem limit stops.  So we bound them ourselves: a direction whose
 * reader already has unread redirected bytes and would go past its
 * sk_rcvbuf falls back to TCP for good, where the receive window pushes
 * back.  Unread redirected bytes per reader stay below
 * max(sk_rcvbuf, one message); a message is at most the sender's send
 * buffer (tcp_bpf_sendmsg copies at most what sk_stream_memory_free allows).
 */
static __always_inline int peer_backlogged(const struct sock_state *st, __u32 size)
{
	__u32 queued = 0;

	if (!st->peer_psock)
		return 0;
	bpf_probe_read_kernel(&queued, sizeof(queued),
			      (void *)(st->peer_psock +
				       bpf_core_field_offset(struct sk_psock, msg_tot_len)));
	return queued && (__u64)queued + size > st->peer_rcvbuf;
}

SEC("sk_msg")
int msg_redirect(struct sk_msg_md *msg)
{
	struct sock_addr_view v = {};
	struct accel_config *cfg;
	struct sock_key key = {};
	struct sock_state *st;
	struct bpf_sock *sk;
	__u32 size = msg->size;
	__u32 zero = 0;
	__u64 peer;

	sk = msg->sk;
	if (!sk)
		return SK_PASS;
	st = bpf_sk_storage_get(&sk_state, sk, 0, 0);
	if (!st)
		return fall_back(st, FB_NO_ROOM, size);
	st->msgs++;
	if (st->flags & SS_TCP) {
		count_send(false, size);
		return SK_PASS;
	}
	if (selftest_knobs) {
		cfg = bpf_map_lookup_elem(&accel_config, &zero);
		if (cfg && cfg->test_force_tcp)
			return fall_back(st, FB_POLICY, size);
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
	}
	if (slow_reader_fallback && peer_backlogged(st, size))
		return fall_back(st, FB_SLOW_READER, size);
	peer = st->peer_cookie;
	/* On a missing key (the peer closed) the helper returns SK_DROP and
	 * sets no redirect; we must still return SK_PASS, or sendmsg fails
	 * with EACCES (net/core/sock_map.c bpf_msg_redirect_hash). */
	if (bpf_msg_redirect_hash(msg, &sock_hash, &peer, BPF_F_INGRESS) != SK_PASS)
		return fall_back(st, FB_NO_PEER, size);
	st->redirected_bytes += size;
	count_send(true, size);
	return SK_PASS;
}

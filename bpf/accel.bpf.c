// SPDX-License-Identifier: GPL-2.0
/*
 * The data plane: sock_ops tracks and pairs established TCP sockets;
 * sk_msg redirects a send straight into the peer socket's ingress queue
 * when, and only when, that is provably the other end of the connection
 * and the direction has never sent a byte through TCP.
 *
 * How a pair is proven (docs/DESIGN.md has the long form):
 *   1. 4-tuple match: the second end to reach ESTABLISHED looks up the
 *      endpoint registered under the reverse of its own key (the key has
 *      the netns cookie for loopback addresses);
 *   2. ISN cross-match: its snd_nxt/rcv_nxt at ESTABLISHED equal the
 *      registered end's rcv_nxt/snd_nxt at ESTABLISHED.  Two unrelated
 *      connections with the same 4-tuple (other namespaces) match with
 *      probability 2^-64;
 *   3. claim: cmpxchg of the endpoint's peer_cookie from 0, so one
 *      registered end is claimed at most once.
 * Redirects are keyed by socket cookie (unique host-wide, never reused),
 * never by 4-tuple, so a stale or foreign socket can't be hit.
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

static __always_inline int port_tracked(__u16 local, __u16 remote)
{
	if (ports_all)
		return 1;
	return (port_bits[local >> 6] >> (local & 63)) & 1 ||
	       (port_bits[remote >> 6] >> (remote & 63)) & 1;
}

static __always_inline void view_from_sockops(struct sock_addr_view *v,
					      const struct bpf_sock_ops *s)
{
	v->family = s->family;
	v->local_ip4 = s->local_ip4;
	v->remote_ip4 = s->remote_ip4;
	if (v->family == SK_AF_INET6) {
		v->local_ip6[0] = s->local_ip6[0];
		v->local_ip6[1] = s->local_ip6[1];
		v->local_ip6[2] = s->local_ip6[2];
		v->local_ip6[3] = s->local_ip6[3];
		v->remote_ip6[0] = s->remote_ip6[0];
		v->remote_ip6[1] = s->remote_ip6[1];
		v->remote_ip6[2] = s->remote_ip6[2];
		v->remote_ip6[3] = s->remote_ip6[3];
	}
	v->local_port = s->local_port;
	v->remote_port = s->remote_port;
}

static __always_inline void view_from_msg(struct sock_addr_view *v,
					  const struct sk_msg_md *m)
{
	v->family = m->family;
	v->local_ip4 = m->local_ip4;
	v->remote_ip4 = m->remote_ip4;
	if (v->family == SK_AF_INET6) {
		v->local_ip6[0] = m->local_ip6[0];
		v->local_ip6[1] = m->local_ip6[1];
		v->local_ip6[2] = m->local_ip6[2];
		v->local_ip6[3] = m->local_ip6[3];
		v->remote_ip6[0] = m->remote_ip6[0];
		v->remote_ip6[1] = m->remote_ip6[1];
		v->remote_ip6[2] = m->remote_ip6[2];
		v->remote_ip6[3] = m->remote_ip6[3];
	}
	v->local_port = m->local_port;
	v->remote_port = m->remote_port;
}

static __always_inline int key_from_sockops(struct sock_key *k, struct bpf_sock_ops *skops)
{
	struct sock_addr_view v = {};

	view_from_sockops(&v, skops);
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

static __always_inline void track_established(struct bpf_sock_ops *skops)
{
	struct sock_key key = {}, rkey = {};
	struct endpoint *e, ne = {};
	struct sock_state *st;
	struct bpf_sock *sk;
	__u32 snd, rcv, rcvbuf;
	__u16 lport, rport, sport;
	__u64 cookie, psock;
	long err;

	sk = skops->sk;
	if (!sk)
		return;
	/* Cheap decisions first, from the context alone: a connection we
	 * won't track should cost as little as possible. */
	lport = skops->local_port;
	rport = sock_key_remote_port(skops->remote_port);
	if (!port_tracked(lport, rport)) {
		STAT_ADD(fallbacks[FB_POLICY], 1);
		return;
	}
	sport = skops->op == BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB ? lport : rport;
	snd = skops->snd_nxt;
	rcv = skops->rcv_nxt;
	if (port_is_short_lived(sport, snd + rcv)) {
		STAT_ADD(fallbacks[FB_SHORT_LIVED], 1);
		return;
	}
	if (key_from_sockops(&key, skops))
		return;
	/* Bytes already sent or received through TCP (TCP Fast Open data in
	 * the SYN): redirecting later bytes could overtake them in the
	 * reader (tcp_bpf_recvmsg reads ingress_msg before the receive
	 * queue, net/ipv4/tcp_bpf.c).  Leave such a socket alone. */
	/* snd_nxt/rcv_nxt (read above) are ISN + 1 for both ends: the active
	 * end runs this from tcp_finish_connect() before it sends the final
	 * ACK, the passive end from tcp_rcv_state_process() before it queues
	 * any data carried by that ACK (net/ipv4/tcp_input.c). */
	if (skops->data_segs_out || skops->bytes_received) {
		STAT_ADD(fallbacks[FB_STICKY_TCP], 1);
		return;
	}

	st = bpf_sk_storage_get(&sk_state, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!st) {
		STAT_ADD(fallbacks[FB_NO_ROOM], 1);
		return;
	}
	/* An ancestor and a descendant cgroup both attached run us twice. */
	if (st->flags & SS_TRACKED)
		return;
	cookie = bpf_get_socket_cookie(skops);
	/* bpf_sock_hash_update is only allowed from the ESTABLISHED and
	 * LISTEN callbacks (net/core/sock_map.c, sock_map_op_okay). */
	if (bpf_sock_hash_update(skops, &sock_hash, &cookie, BPF_NOEXIST)) {
		STAT_ADD(fallbacks[FB_NO_ROOM], 1);
		return;
	}
	st->flags |= SS_TRACKED;
	STAT_ADD(sockets_added, 1);
	/* The kernel drops the sock_hash entry itself at close; we want the
	 * close to release our endpoint entry and keep the gauges right. */
	bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags |
					 BPF_SOCK_OPS_STATE_CB_FLAG);
	/* After the insert: sock_map_link() has set up our psock. */
	psock = own_psock(sk, &rcvbuf);

	st->service_port = sport;

	sock_key_reverse(&rkey, &key);
	e = bpf_map_lookup_elem(&endpoints, &rkey);
	if (e) {
		if ((e->flags & EP_AMBIGUOUS) && !e->peer_cookie) {
			st->flags |= SS_AMBIGUOUS;
			return;
		}
		if (e->snd_isn == rcv && e->rcv_isn == snd &&
		    __sync_val_compare_and_swap(&e->claimed, 0, 1) == 0) {
			e->peer_psock = psock;
			e->peer_rcvbuf = rcvbuf;
			/* publish last; a fetching atomic is fully ordered */
			__sync_lock_test_and_set(&e->peer_cookie, cookie);
			st->peer_cookie = e->cookie;
			st->peer_psock = e->psock;
			st->peer_rcvbuf = e->rcvbuf;
			st->flags |= SS_PAIRED;
			STAT_ADD(pairs, 1);
			return;
		}
		/* Same mirrored 4-tuple, different connection (another
		 * namespace): not our peer.  Register ourselves instead. */
	}

	ne.cookie = cookie;
	ne.psock = psock;
	ne.rcvbuf = rcvbuf;
	ne.snd_isn = snd;
	ne.rcv_isn = rcv;
	err = bpf_map_update_elem(&endpoints, &key, &ne, BPF_NOEXIST);
	if (!err) {
		st->flags |= SS_ENDPOINT;
		return;
	}
	if (err == -17 /* EEXIST */) {
		/* A live socket already has our key: the key no longer names
		 * one connection.  Neither of us pairs on it. */
		e = bpf_map_lookup_elem(&endpoints, &key);
		if (e)
			__sync_fetch_and_or(&e->flags, EP_AMBIGUOUS);
		st->flags |= SS_AMBIGUOUS;
	}
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
	if (!st)
		return;
	STAT_ADD(sockets_closed, 1);
	if (st->flags & SS_TRACKED)
		port_profile_update(st->service_port, st->msgs);
	if (st->flags & SS_ENDPOINT) {
		st->flags &= ~SS_ENDPOINT;
		if (key_from_sockops(&key, skops))
			return;
		e = bpf_map_lookup_elem(&endpoints, &key);
		if (e && e->cookie == bpf_get_socket_cookie(skops)) {
			if (e->peer_cookie)
				STAT_ADD(paired_closed, 1);
			bpf_map_delete_elem(&endpoints, &key);
		}
	} else if (st->flags & SS_PAIRED) {
		STAT_ADD(paired_closed, 1);
	}
}

SEC("sockops")
int sockops_track(struct bpf_sock_ops *skops)
{
	switch (skops->op) {
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		track_established(skops);
		break;
	case BPF_SOCK_OPS_STATE_CB:
		if (skops->args[1] == BPF_TCP_CLOSE)
			track_closed(skops);
		break;
	}
	return 1;
}

/* This direction goes through TCP from now on, for good: switching back to
 * redirect could let newer bytes overtake older ones in the reader. */
static __always_inline int fall_back(struct sock_state *st, enum fallback_reason why,
				     __u32 size)
{
	if (st)
		st->flags |= SS_TCP;
	if (why < FB__MAX)
		STAT_ADD(fallbacks[why], 1);
	STAT_ADD(tcp_msgs, 1);
	STAT_ADD(tcp_bytes, size);
	return SK_PASS;
}

/* The first end to be established learns its peer lazily, on its first
 * send: the peer wrote its cookie into our endpoint entry when it claimed
 * it.  Returns FB__MAX when paired, else the reason we are not. */
static __always_inline int adopt_peer(struct sk_msg_md *msg, struct sock_state *st)
{
	struct sock_addr_view v = {};
	struct sock_key key = {};
	struct endpoint *e;

	if (st->flags & SS_AMBIGUOUS)
		return FB_AMBIGUOUS;
	if (!(st->flags & SS_ENDPOINT))
		return FB_NO_PEER;
	view_from_msg(&v, msg);
	if (sock_key_build(&key, &v))
		return FB_NO_PEER;
	if (sock_key_is_loopback(&key))
		key.netns = bpf_get_netns_cookie(msg);
	e = bpf_map_lookup_elem(&endpoints, &key);
	if (!e)
		return FB_NO_PEER;
	if (!e->peer_cookie)
		return (e->flags & EP_AMBIGUOUS) ? FB_AMBIGUOUS : FB_NO_PEER;
	st->peer_cookie = e->peer_cookie;
	st->peer_psock = e->peer_psock;
	st->peer_rcvbuf = e->peer_rcvbuf;
	st->flags = (st->flags & ~SS_ENDPOINT) | SS_PAIRED;
	bpf_map_delete_elem(&endpoints, &key);
	return FB__MAX;
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
	struct accel_config *cfg;
	struct sock_state *st;
	struct bpf_sock *sk;
	__u32 size = msg->size;
	__u32 zero = 0;
	__u64 peer;
	int why;

	sk = msg->sk;
	if (!sk)
		return SK_PASS;
	st = bpf_sk_storage_get(&sk_state, sk, 0, 0);
	if (!st)
		return fall_back(st, FB_NO_ROOM, size);
	st->msgs++;
	if (st->flags & SS_TCP) {
		STAT_ADD(tcp_msgs, 1);
		STAT_ADD(tcp_bytes, size);
		return SK_PASS;
	}
	cfg = bpf_map_lookup_elem(&accel_config, &zero);
	if (cfg && cfg->paused)
		return fall_back(st, FB_PAUSED, size);
	if (!(st->flags & SS_PAIRED)) {
		why = adopt_peer(msg, st);
		if (why != FB__MAX)
			return fall_back(st, why, size);
	}
	if (peer_backlogged(st, size))
		return fall_back(st, FB_SLOW_READER, size);
	peer = st->peer_cookie;
	/* On a missing key the helper returns SK_DROP and sets no redirect;
	 * we must still return SK_PASS, or sendmsg fails with EACCES
	 * (net/core/sock_map.c bpf_msg_redirect_hash, net/ipv4/tcp_bpf.c). */
	if (bpf_msg_redirect_hash(msg, &sock_hash, &peer, BPF_F_INGRESS) != SK_PASS)
		return fall_back(st, FB_NO_PEER, size);
	st->redirected_bytes += size;
	STAT_ADD(redirected_msgs, 1);
	STAT_ADD(redirected_bytes, size);
	return SK_PASS;
}

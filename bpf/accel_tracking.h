/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which connections are worth tracking (the port policy, the service
 * endpoints' learned hazards, remote peers, TCP state the redirect would
 * skip) and the connection events the agent reads.
 *
 * A part of bpf/accel.bpf.c, included there after its load-time settings
 * and maps, which it uses: not a header of its own.
 */
#ifndef NGX_SOCKMAP_ACCEL_TRACKING_H
#define NGX_SOCKMAP_ACCEL_TRACKING_H

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
	event_emit(&ring, &ev, events_in_arena, &ring_wakeups, &conn_events, &conn_events_wake,
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

/* ... and keep it in the socket's state, where its owner can ask why
 * (struct sockmap_query, guard.bpf.c sockopt_query): once per decision. */
#define NOTE_WHY(st, why) ((st)->fallback = (why) + 1)

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

/*
 * The cgroup v2 id of the socket: its creator's (net/core/sock.c sk_alloc,
 * cgroup_sk_alloc), the id sock_diag reports (INET_DIAG_CGROUP_ID,
 * net/ipv4/inet_diag.c).  Not the current task's: the active end reaches
 * ESTABLISHED from the SYN-ACK, in softirq, and sock_ops has no
 * bpf_sk_cgroup_id (net/core/filter.c, sock_ops_func_proto).  Direct
 * loads through the BTF pointer (the verifier makes them fault-safe), not
 * three bpf_probe_read_kernel calls: this runs once per connection.
 */
static __always_inline __u64 sock_cgroup_id(struct bpf_sock *sk)
{
	struct tcp_sock *tp;
	struct cgroup *cg;

	if (!sk || !bpf_core_field_exists(struct sock, sk_cgrp_data))
		return 0;
	tp = bpf_skc_to_tcp_sock(sk);
	if (!tp)
		return 0;
	cg = tp->inet_conn.icsk_inet.sk.sk_cgrp_data.cgroup;
	return cg ? cg->kn->id : 0;
}

/* A hazard learned on this side, less than hazard_ttl_ns ago (signed: a
 * learner on another CPU may have read the clock after us). */
static __always_inline bool hazard_recent(const struct service_profile *sp)
{
	return sp->hazards && (__s64)(bpf_ktime_get_ns() - sp->hazard_ns) < (__s64)hazard_ttl_ns;
}

/* A sample of a short-lived endpoint's connections (one in
 * SHORT_SAMPLE_EVERY by the ISN sum, which both ends see alike), taken by
 * the client's end at most once per slot of the coarse clock: at a
 * thousand connections a second and more, every sample (insert, psock,
 * nonce, pairing, events, teardown) cost each connection more than the
 * average it refreshes is worth.  The server's end can't know whether
 * the client's end took the slot (it took it a moment ago): it follows
 * the client, tracked only if it finds its registration (*sampled, read
 * by track_passive). */
static __always_inline bool short_sample(struct service_profile *sp, bool server_end,
					 bool *sampled)
{
	__u32 slot;

	if (server_end) {
		*sampled = true;
		return true;
	}
	slot = bpf_ktime_get_coarse_ns() >> SHORT_SAMPLE_SLOT_SHIFT;
	if (sp->sample_slot == slot)
		return false;
	sp->sample_slot = slot;
	return true;
}

/* A hazard learned on either side of the connection: the server's (its
 * endpoint) or this client's (its cgroup and address, to this port).
 * The client side only where the client is (@client NULL on the server's
 * end): the server's end learns the client's cgroup only from the
 * endpoint it claims, and a client skipped here registers none, so the
 * server's end finds nothing to pair with.  Both ends see the same ISN
 * sum, so they agree on which connections are the 1-in-N sample: an end
 * tracked alone would pay for nothing. */
static __always_inline int service_is_skipped(const struct service_key *svc,
					      const struct service_key *client, __u32 isn_sum,
					      enum fallback_reason *why, bool *sampled)
{
	struct service_profile *sp;

	if (client) {
		sp = bpf_map_lookup_elem(&service_profiles, client);
		if (sp && hazard_recent(sp)) {
			*why = FB_HAZARD;
			return 1;
		}
	}
	sp = bpf_map_lookup_elem(&service_profiles, svc);
	if (!sp)
		return 0;
	if (hazard_recent(sp)) {
		*why = FB_HAZARD;
		return 1;
	}
	if (!short_conn_msgs || sp->samples < SHORT_MIN_SAMPLES ||
	    sp->ewma_msgs_x16 >= short_conn_msgs * 16)
		return 0;
	*why = FB_SHORT_LIVED;
	if (isn_sum % SHORT_SAMPLE_EVERY)
		return 1;
	return !short_sample(sp, !client, sampled);
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
 * and its sides (struct service_key): both on the active end, the
 * server's on the passive end (track_passive keys the client's side with
 * the cgroup the endpoint it claims names).  Returns 0 to go on. */
static __always_inline int worth_tracking(struct bpf_sock_ops *skops, struct sock_key *key,
					  struct service_key *svc, struct service_key *client,
					  bool *sampled)
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
	service_key_of(svc, key, passive, SVC_SERVER, 0);
	if (!passive)
		service_key_of(client, key, 0, SVC_CLIENT, sock_cgroup_id(skops->sk));
	if (service_is_skipped(svc, passive ? NULL : client, skops->snd_nxt + skops->rcv_nxt,
			       &why, sampled)) {
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

#endif /* NGX_SOCKMAP_ACCEL_TRACKING_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pairing and the claim: the active end registers (struct endpoint), the
 * passive end proves the pair and claims it, and the active end decides
 * at its first send or packet in: adopt the claimer, or withdraw.
 *
 * A part of bpf/accel.bpf.c, included there after its load-time settings
 * and maps, which it uses: not a header of its own.
 */
#ifndef NGX_SOCKMAP_ACCEL_PAIRING_H
#define NGX_SOCKMAP_ACCEL_PAIRING_H

/* Active end: register, wait to be claimed. */
static __always_inline void track_active(struct bpf_sock_ops *skops)
{
	struct service_key svc = {}, client = {};
	struct sock_key key = {};
	struct endpoint ne = {};
	struct sock_state *st;
	struct bpf_sock *sk;
	bool sampled = false;
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
	if (worth_tracking(skops, &key, &svc, &client, &sampled))
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
	ne.cgroup = client.cgroup;
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
			NOTE_WHY(st, FB_AMBIGUOUS);
			NOTE_FALLBACK(FB_AMBIGUOUS, st->cookie, svc.port);
		} else {
			NOTE_WHY(st, FB_NO_ROOM);
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
	__u64 client_cgroup;
	struct sock_state *st;
	bool sampled = false;
	struct bpf_sock *sk;
	struct endpoint *e;
	__u64 my_psock;

	sk = skops->sk;
	if (!sk || worth_tracking(skops, &key, &svc, &client, &sampled))
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
		/* a sample the client's end did not take (short_sample):
		 * skipped as short-lived, like the others, and as quietly */
		if (sampled)
			STAT_ADD(fallbacks[FB_SHORT_LIVED], 1);
		else
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
	client_cgroup = e->cgroup;
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
	/* keyed as the client keyed it: what the client does is learned
	 * where its next connections look */
	service_key_of(&client, &key, 1, SVC_CLIENT, client_cgroup);
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
		NOTE_WHY(st, FB_NO_PEER);
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
	if (!(st->flags & SS_TCP)) { /* not counted at a send already */
		NOTE_WHY(st, FB_NO_PEER);
		NOTE_FALLBACK(FB_NO_PEER, st->cookie, st->service.port);
	}
	untrack_self(st);
}

#endif /* NGX_SOCKMAP_ACCEL_PAIRING_H */

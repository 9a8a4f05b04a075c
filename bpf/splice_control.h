/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Splice, the relay's side (bpf/sockmap_splice.h): OFFER, JOIN and FENCE,
 * asked with setsockopt(2) on the relay's own sockets.  Runs in the
 * guard's cgroup/setsockopt program, under the socket's lock
 * (kernel/bpf/cgroup.c __cgroup_bpf_run_filter_setsockopt takes
 * lock_sock around the programs), the lock msg_redirect runs under: this
 * socket's state can't change in between.
 *
 * A part of bpf/guard.bpf.c, included there after its maps: not a header
 * of its own.
 */
#ifndef NGX_SOCKMAP_SPLICE_CONTROL_H
#define NGX_SOCKMAP_SPLICE_CONTROL_H

#include "sockmap_splice.h"

/* A relay's socket a session may use: paired, in the SOCKHASH, every
 * byte it sent redirected (none through TCP into its peer's queue, which
 * its peer would read after the redirected ones: tcp_bpf_recvmsg reads
 * ingress_msg first, net/ipv4/tcp_bpf.c) and not being reset. */
static __always_inline bool splice_usable(const struct sock_state *st)
{
	return st && (st->flags & (SS_PAIRED | SS_IN_MAP | SS_TCP | SS_DOOMED | SS_SPLICED)) ==
			     (SS_PAIRED | SS_IN_MAP);
}

static __always_inline void splice_gen_bump(void)
{
	struct accel_config *cfg;
	__u32 zero = 0;

	cfg = bpf_map_lookup_elem(&accel_config, &zero);
	if (cfg)
		__sync_fetch_and_add(&cfg->splice_gen, 1);
}

/* On N1: its peer C becomes a session's client, the session keyed by
 * N1's cookie.  C's own entry names it, so C finds it at its next send.
 * C was paired with N1, so it is the far end of no other session. */
static __noinline bool splice_offer(struct sock_state *st)
{
	struct splice_session s = {};
	__u64 key, end, owner;

	if (!splice_usable(st) || (st->flags & SS_RELAY))
		return false;
	key = st->cookie;
	s.owner = bpf_get_current_pid_tgid();
	s.client = st->peer;
	s.client_psock = st->peer_psock;
	s.to_upstream = SPLICE_UNFENCED;
	s.to_client = SPLICE_UNFENCED;
	if (bpf_map_update_elem(&splice_sessions, &key, &s, BPF_NOEXIST))
		return false;
	/* the same bytes, as the client's alias entry */
	owner = s.owner;
	end = s.client.cookie;
	__builtin_memset(&s, 0, sizeof(s));
	s.alias = key;
	if (bpf_map_update_elem(&splice_sessions, &end, &s, BPF_ANY)) {
		bpf_map_delete_elem(&splice_sessions, &key);
		return false;
	}
	st->flags |= SS_RELAY;
	st->splice_key = key;
	st->splice_owner = owner;
	splice_gen_bump();
	STAT_ADD(splice_offers, 1);
	return true;
}

/* On N2: its peer U becomes the upstream of the session the same thread
 * offered on N1 (relay: N1's cookie).  The thread proves it holds N1 (it
 * offered there) and N2 (this call is on it). */
static __noinline bool splice_join(struct sock_state *st, __u64 relay)
{
	struct splice_session *s, alias = {};
	__u64 key = relay, end;

	if (!splice_usable(st) || (st->flags & SS_RELAY) || relay == st->cookie)
		return false;
	s = bpf_map_lookup_elem(&splice_sessions, &key);
	if (!s || s->alias || s->owner != bpf_get_current_pid_tgid() ||
	    (s->flags & SPLICE_JOINED))
		return false;
	/* N2 facing N1's own client (the relay connected to itself) */
	if (st->peer.cookie == s->client.cookie || st->peer.cookie == relay)
		return false;
	alias.alias = key;
	end = st->peer.cookie;
	if (bpf_map_update_elem(&splice_sessions, &end, &alias, BPF_ANY))
		return false;
	s->upstream = st->peer;
	s->upstream_psock = st->peer_psock;
	s->upstream_relay = st->cookie;
	/* the fields above before the flag (a full barrier) */
	__sync_fetch_and_or(&s->flags, SPLICE_JOINED);
	st->flags |= SS_RELAY;
	st->splice_key = key;
	st->splice_owner = s->owner;
	splice_gen_bump();
	return true;
}

/*
 * On N1 or N2, from the offering thread, after its sends on this socket
 * returned: every byte the relay read from the other relay socket is in
 * this one's far end's queue.  Proven against our own count: what
 * msg_redirect counted for this socket must be exactly what the relay
 * says its writes took (sent), and those its reads plus its own bytes.
 * A redirect that failed after its verdict was counted here but not in
 * sent: refused, never a count that covers bytes not queued.
 */
static __noinline bool splice_fence(struct sock_state *st, const struct sockmap_splice *req)
{
	struct splice_session *s;
	__u64 key;

	if (!splice_usable(st) || !(st->flags & SS_RELAY) ||
	    st->splice_owner != bpf_get_current_pid_tgid())
		return false;
	if (req->added > req->sent || req->sent - req->added != req->read ||
	    st->redirected_bytes != req->sent)
		return false;
	key = st->splice_key;
	s = bpf_map_lookup_elem(&splice_sessions, &key);
	if (!s || s->alias || (s->flags & (SPLICE_JOINED | SPLICE_BROKEN)) != SPLICE_JOINED)
		return false;
	/* what the relay read from C went out on N2 (to U): C's count;
	 * from U out on N1: U's.  A full barrier: the far end that reads
	 * it with one sees the JOIN's fields. */
	if (st->cookie == s->upstream_relay)
		__sync_lock_test_and_set(&s->to_upstream, req->read);
	else if (st->cookie == key)
		__sync_lock_test_and_set(&s->to_client, req->read);
	else
		return false;
	return true;
}

/* 1: taken (the kernel's own setsockopt is skipped, the call returns 0);
 * 0: refused, EPERM */
static __always_inline int splice_control(struct bpf_sockopt *ctx)
{
	void *optval = ctx->optval, *end = ctx->optval_end;
	struct sock_state *st = NULL;
	struct sockmap_splice req;
	struct bpf_sock *sk;
	bool ok = false;

	if (optval + sizeof(req) > end)
		goto refuse;
	__builtin_memcpy(&req, optval, sizeof(req));
	sk = ctx->sk;
	if (sk)
		st = bpf_sk_storage_get(&sk_state, sk, 0, 0);
	if (!st || req.version != SOCKMAP_SPLICE_VERSION)
		goto refuse;
	switch (req.op) {
	case SPLICE_OFFER:
		ok = splice_offer(st);
		break;
	case SPLICE_JOIN:
		ok = splice_join(st, req.relay);
		break;
	case SPLICE_FENCE:
		ok = splice_fence(st, &req);
		break;
	}
	if (ok) {
		ctx->optlen = -1;
		return 1;
	}
refuse:
	STAT_ADD(splice_refused, 1);
	return 0;
}

#endif /* NGX_SOCKMAP_SPLICE_CONTROL_H */

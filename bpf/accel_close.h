/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A tracked socket's end: close, disconnect (connect(AF_UNSPEC)) and a
 * socket reused for a new connection.
 *
 * A part of bpf/accel.bpf.c, included there after its load-time settings
 * and maps, which it uses: not a header of its own.
 */
#ifndef NGX_SOCKMAP_ACCEL_CLOSE_H
#define NGX_SOCKMAP_ACCEL_CLOSE_H

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
	if ((st->flags & SS_RELAY) && st->splice_key == st->cookie)
		splice_forget(st);
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

#endif /* NGX_SOCKMAP_ACCEL_CLOSE_H */

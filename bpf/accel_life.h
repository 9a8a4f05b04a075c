/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A tracked socket's life: the guard that must be watching before one
 * is inserted, its entry into the SOCKHASH and the unread watch, and its
 * way out.
 *
 * A part of bpf/accel.bpf.c, included there after its load-time settings
 * and maps, which it uses: not a header of its own.
 */
#ifndef NGX_SOCKMAP_ACCEL_LIFE_H
#define NGX_SOCKMAP_ACCEL_LIFE_H

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
		NOTE_WHY(st, FB_ARMING);
		STAT_ADD(fallbacks[FB_ARMING], 1);
		return NULL;
	}
	st->cookie = bpf_get_socket_cookie(skops);
	st->self.cookie = st->cookie;
	st->self.isn = skops->snd_nxt;
	self = st->self;
	if (bpf_sock_hash_update(skops, &sock_hash, &self, BPF_NOEXIST)) {
		NOTE_WHY(st, FB_NO_ROOM);
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

#endif /* NGX_SOCKMAP_ACCEL_LIFE_H */

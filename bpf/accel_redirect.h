/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The redirect policy of each send: counted, through TCP (fall_back) or
 * ended (doom), the unread bound, MSG_OOB senders.
 *
 * A part of bpf/accel.bpf.c, included there after its load-time settings
 * and maps, which it uses: not a header of its own.
 */
#ifndef NGX_SOCKMAP_ACCEL_REDIRECT_H
#define NGX_SOCKMAP_ACCEL_REDIRECT_H

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
		NOTE_WHY(st, why);
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
	struct sock_addr_view v = {};
	struct reset_tuple t = {};
	struct bpf_sock *sk;
	struct sock_key k;

	st->flags |= SS_DOOMED;
	st->doom_reason = why;
	service_learn_hazard(side, why);
	/* our address, for the enforcer's exact lookup (struct reset_tuple) */
	VIEW_FROM_CTX(&v, msg);
	if (!sock_key_build(&k, &v)) {
		__builtin_memcpy(t.local, k.local_ip, sizeof(t.local));
		__builtin_memcpy(t.remote, k.remote_ip, sizeof(t.remote));
		t.lport = k.local_port;
		t.rport = k.remote_port;
		t.family = v.family;
	}
	sk = msg->sk;
	if (sk)
		t.ifindex = sk->bound_dev_if;
	request_reset(st->cookie, st->flags & SS_PAIRED ? st->peer.cookie : 0, why, side, &t);
	emit_conn(EV_RESET, st->cookie, st->peer.cookie, st->service.port, why, 0, 0);
	return SK_DROP;
}

/* Unread redirected bytes of the peer's psock (psock.h).  The peer may
 * have closed since pairing: its psock is freed after an RCU grace period
 * (net/core/skmsg.c sk_psock_drop) and the memory can be reused, so what
 * psock_unread() reads there could be anything, and a large value would
 * end this connection and learn a hazard on the peer's side for nothing.
 * psock_is_of() checks the psock still names the peer's socket first; a
 * psock that doesn't has no unread bytes of ours (the redirect that
 * follows finds no peer and falls back to TCP).  Two probe reads, only on
 * the sends whose bound may cross a limit.  No test makes it fail: the
 * freed psock's memory must be reused by something with a large value at
 * msg_tot_len's offset inside that window, which no test can arrange. */
static __always_inline __u32 peer_unread(const struct sock_state *st)
{
	if (!psock_is_of(st->peer_psock, st->peer.cookie))
		return 0;
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

/* Is this send a 32-bit (ia32) syscall that no hook of the guard saw?
 * The syscall tracepoints never fire for ia32 syscalls (x86's
 * ARCH_TRACE_IGNORE_COMPAT_SYSCALLS), and the guard attaches its
 * ia32_enter only once a 32-bit program was exec'd (guard.bpf.c
 * ia32_exec): until then a 64-bit program's int $0x80 send, or a 32-bit
 * one's in the moment before the agent attached it, is seen here only,
 * without its flags (they are in the task's registers or, for
 * socketcall(2), its memory).  TS_COMPAT is set at every 32-bit syscall's
 * entry (arch/x86/entry/syscall_32.c syscall_32_enter) and cleared on the
 * way back to user space (arch/x86/include/asm/entry-common.h).  One
 * guard_state read while ia32_enter is attached; one task read more
 * while it is not. */
static __always_inline bool unseen_ia32_send(void)
{
	struct guard_state *gs;
	__u32 zero = 0;

	gs = bpf_map_lookup_elem(&guard_state, &zero);
	if (gs && (gs->armed & GUARD_ARMED_IA32))
		return false;
	return task_btf ? in_ia32_syscall() : in_ia32_syscall_probed();
}

static __always_inline enum oob_send sending_oob(void)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&oob_count, &zero), me;

	if (unseen_ia32_send())
		return OOB_UNKNOWN;
	if (!n || !*n)
		return OOB_NONE;
	if (*n & OOB_UNTRACKED)
		return OOB_UNKNOWN;
	me = bpf_get_current_pid_tgid();
	return bpf_map_lookup_elem(&oob_senders, &me) ? OOB_THIS_TASK : OOB_NONE;
}

#endif /* NGX_SOCKMAP_ACCEL_REDIRECT_H */

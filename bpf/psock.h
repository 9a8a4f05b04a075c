/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A tracked socket's psock, as the programs of every object read it: the
 * data plane (the peer's unread count before a redirect), the guard (is
 * this socket one of ours?) and the unread scans.  Include after
 * vmlinux.h and bpf_core_read.h.
 *
 * sk_msg can't look a peer socket up (no bpf_sk_release for that program
 * type), so the programs keep psock addresses and read them with
 * bpf_probe_read_kernel, which never faults: a read after the socket
 * closed may see garbage, which psock_is_of() rules out where it matters.
 */
#ifndef NGX_SOCKMAP_PSOCK_H
#define NGX_SOCKMAP_PSOCK_H

/* sk_user_data carries flag bits below the psock pointer
 * (include/net/sock.h, SK_USER_DATA_NOCOPY | _BPF | _PSOCK). */
#define SK_USER_DATA_PSOCK_BIT 4ULL
#define SK_USER_DATA_FLAGS     7ULL

/* The psock address in a socket's sk_user_data, 0 without one. */
static __always_inline __u64 psock_from_user_data(__u64 ud)
{
	return ud & SK_USER_DATA_PSOCK_BIT ? ud & ~SK_USER_DATA_FLAGS : 0;
}

/* The socket of a psock (probe reads: a psock may be gone; check it
 * with psock_is_of first). */
static __always_inline struct sock *psock_sock(__u64 psock)
{
	struct sock *sk = NULL;

	if (psock)
		bpf_probe_read_kernel(&sk, sizeof(sk),
				      (void *)(psock + bpf_core_field_offset(struct sk_psock, sk)));
	return sk;
}

/* Is psock the psock of the socket with this cookie?  Rules out a psock
 * written by a claimer whose claim then failed, and one freed since
 * (its memory reused): the socket it names must still carry the cookie. */
static __always_inline bool psock_is_of(__u64 psock, __u64 cookie)
{
	struct sock *sk = NULL;
	__u64 c = 0;

	if (!psock)
		return false;
	bpf_probe_read_kernel(&sk, sizeof(sk),
			      (void *)(psock + bpf_core_field_offset(struct sk_psock, sk)));
	if (!sk)
		return false;
	bpf_probe_read_kernel(&c, sizeof(c),
			      (void *)sk + bpf_core_field_offset(struct sock, __sk_common.skc_cookie));
	return c == cookie;
}

/* Unread redirected bytes in a psock: the kernel's own count, the one
 * FIONREAD reports (psock->msg_tot_len, net/core/skmsg.c).  A kernel
 * without the field (before 6.12.75, 7.0) fails the self-test's
 * unread_bound and is never accelerated; 0 there. */
static __always_inline __u32 psock_unread(__u64 psock)
{
	__u32 queued = 0;

	if (!psock || !bpf_core_field_exists(struct sk_psock, msg_tot_len))
		return 0;
	bpf_probe_read_kernel(&queued, sizeof(queued),
			      (void *)(psock + bpf_core_field_offset(struct sk_psock, msg_tot_len)));
	return queued;
}

#endif /* NGX_SOCKMAP_PSOCK_H */

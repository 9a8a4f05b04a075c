/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pairing nonce: taken from the agent's pool (getrandom(2)), carried
 * in a TCP option on the active end's final ACK, read by the passive end.
 *
 * A part of bpf/accel.bpf.c, included there after its load-time settings
 * and maps, which it uses: not a header of its own.
 */
#ifndef NGX_SOCKMAP_ACCEL_NONCE_H
#define NGX_SOCKMAP_ACCEL_NONCE_H

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

#endif /* NGX_SOCKMAP_ACCEL_NONCE_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * The enforcer's iterators, where the host allows tracing programs
 * (agent/sockiter.c; elsewhere the agent uses sock_diag and
 * syscall_ops.bpf.c instead).  An object of its own: one refused program
 * fails its whole object's load, and a host that refuses tracing programs
 * (BPF_PROG_TYPE_TRACING: fentry, iter) must keep the guard's other
 * programs.  Shares the data plane's maps (accel_maps.h).
 *
 *   reset_doomed    iter/tcp, run by the agent in each tracked namespace
 *                   (an iter/tcp walks only the namespace it is created
 *                   in, fs/proc/proc_net.c bpf_iter_init_seq_net): ends
 *                   the connections it was asked to (bpf_sock_destroy,
 *                   6.5+: tcp_abort, a RST to the peer and ECONNABORTED
 *                   here), stops their sends, learns their port and names
 *                   the peer, which the next pass ends wherever it lives.
 *   scan_unread     iter/sockmap over sock_hash, run by the agent every
 *                   second: unread redirected bytes per socket, for the
 *                   gauges and the host-wide budget.
 *
 * Both report typed records (struct reset_record, struct unread_record,
 * accel.h) with bpf_seq_write: the agent reads them as they are.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_tracing.h>
#include "accel.h"
#include "accel_maps.h"
#include "psock.h"

char LICENSE[] SEC("license") = "GPL";

#define AF_INET 2

/* The connections the agent asked reset_doomed to end. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct doom_entry);
} doomed SEC(".maps");

SEC("iter/tcp")
int reset_doomed(struct bpf_iter__tcp *ctx)
{
	struct sock_common *skc = ctx->sk_common;
	struct reset_record rec = { .destroyed = 1 };
	struct sock_state *st;
	struct tcp_sock *tp;
	struct service_key svc;
	struct doom_entry *d;
	__u32 reason;
	__u64 cookie;

	if (!skc)
		return 0;
	cookie = bpf_get_socket_cookie(skc);
	d = bpf_map_lookup_elem(&doomed, &cookie);
	if (!d)
		return 0;
	/* bounded in a register: the verifier forgets a bound kept in rec */
	reason = d->reason;
	if (reason >= RS__MAX)
		return 0;
	rec.reason = reason;
	tp = bpf_skc_to_tcp_sock(skc);
	if (!tp)
		return 0;
	rec.cookie = cookie;
	st = bpf_sk_storage_get(&sk_state, tp, 0, 0);
	if (st) {
		rec.peer = st->flags & SS_PAIRED ? st->peer.cookie : 0;
		st->flags |= SS_DOOMED; /* its sends stop now (msg_redirect) */
	}
	if (d->primary) {
		/* learned before the reset: a connection made after it must
		 * not pair.  The side the request names (the data plane's
		 * doom), else the named socket's own: a splicer's, a reader
		 * over the budget.  Not the peer's: it did nothing. */
		svc = d->service;
		if (svc.port)
			service_learn_hazard(&svc, reason);
		else if (st)
			service_learn_hazard(side_of(st, true), reason);
		STAT_ADD(resets[reason], 1);
		d->primary = 0; /* one count per connection */
	}
	if (bpf_ksym_exists(bpf_sock_destroy))
		rec.destroyed = bpf_sock_destroy(skc);
	rec.family = skc->skc_family;
	rec.local_port = skc->skc_num;
	rec.remote_port = bpf_ntohs(skc->skc_dport);
	if (rec.family == AF_INET) {
		BPF_CORE_READ_INTO(&rec.local, skc, skc_rcv_saddr);
		BPF_CORE_READ_INTO(&rec.remote, skc, skc_daddr);
	} else {
		BPF_CORE_READ_INTO(&rec.local, skc, skc_v6_rcv_saddr);
		BPF_CORE_READ_INTO(&rec.remote, skc, skc_v6_daddr);
	}
	bpf_seq_write(ctx->meta->seq, &rec, sizeof(rec));
	return 0;
}

SEC("iter/sockmap")
int scan_unread(struct bpf_iter__sockmap *ctx)
{
	struct sock *sk = ctx->sk;
	struct unread_record rec;

	if (!sk)
		return 0;
	rec.bytes = psock_unread(psock_from_user_data((__u64)BPF_CORE_READ(sk, sk_user_data)));
	if (!rec.bytes)
		return 0;
	rec.cookie = BPF_CORE_READ(sk, __sk_common.skc_cookie.counter);
	__builtin_memset(&rec.sock, 0, sizeof(rec.sock));
	tuple_of(&rec.sock, sk);
	bpf_seq_write(ctx->meta->seq, &rec, sizeof(rec));
	return 0;
}

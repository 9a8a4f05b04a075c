/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The maps the data plane (accel.bpf.c) and its guard (guard.bpf.c) share.
 * Declared once, here; the agent loads the data plane first and hands its
 * maps to the guard (bpf_map__reuse_fd), so both objects use one copy.
 */
#ifndef NGX_SOCKMAP_ACCEL_MAPS_H
#define NGX_SOCKMAP_ACCEL_MAPS_H

#include "accel.h"

struct {
	__uint(type, BPF_MAP_TYPE_SOCKHASH);
	__uint(max_entries, ACCEL_MAX_SOCKETS);
	__type(key, struct sock_id);
	__type(value, __u64);
} sock_hash SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sock_state);
} sk_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct accel_stats);
} accel_stats SEC(".maps");

/* What each service endpoint's connections showed (struct service_profile).
 * Keyed by endpoint, not port: one tenant's splice or kTLS turns pairing
 * off for its own service only.  An LRU of a fixed size: forgetting an
 * entry is safe (see struct service_profile).  The short-connection
 * average lives here too, so per endpoint as well: a second map would
 * grow the data plane's map count, which libbpf 1.4.6's arena relocation
 * can't take, and it scopes that policy to the tenant too (at the price
 * of SHORT_MIN_SAMPLES closes per endpoint before it judges one). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SERVICE_PROFILES_MAX);
	__type(key, struct service_key);
	__type(value, struct service_profile);
} service_profiles SEC(".maps");

/* Connections to end: the agent's enforcer reads them (see reset_request). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 128 * 1024);
} reset_requests SEC(".maps");

/* The requests reset_requests had no room for (about 1150 fit, 112
 * bytes each with its header: a splicing relay's 1150 connections doomed
 * while the agent was busy): kept by
 * cookie until the enforcer takes them, right after it empties the ring.
 * One per tracked socket at most, so sized as sock_hash (the agent sets
 * both from --max-sockets): a request is never lost while its socket is
 * tracked. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, ACCEL_MAX_SOCKETS);
	__type(key, __u64); /* the request's cookie */
	__type(value, struct reset_request);
} reset_backlog SEC(".maps");

/* Whether the guard watches now (struct guard_state), and the ring a
 * socket refused for want of it wakes the agent by.  Shared: the guard's
 * ia32_exec disarms it too (guard.bpf.c). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct guard_state);
} guard_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} guard_wakeup SEC(".maps");

/* pid_tgid of tasks inside a send with MSG_OOB (the guard's send hooks:
 * the syscall, or tcp_bpf_sendmsg()), and how many there are: sk_msg looks
 * the task up only while the count is not zero. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, __u32);
} oob_senders SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} oob_count SEC(".maps");
/* In oob_count: a sender found oob_senders full; sticky until the guard
 * re-arms (agent/guard.c forget_oob_senders), below it the count goes on. */
#define OOB_UNTRACKED (1ULL << 63)

/* Where the guard's iter/sockmap is refused (the agent sets the data
 * plane's watch_unread): each socket in the SOCKHASH with its psock
 * address, so that syscall_ops.bpf.c's scan_watched, a program type no
 * tracing policy refuses, can sum what readers left unread. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, ACCEL_MAX_SOCKETS);
	__type(key, __u64);   /* socket cookie */
	__type(value, __u64); /* its psock */
} unread_watch SEC(".maps");

/* The agent's runtime switches (struct accel_config), and the splice
 * sessions' generation, which the guard's splice control bumps. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct accel_config);
} accel_config SEC(".maps");

/* Splice sessions and their far ends' aliases (struct splice_session):
 * written by the guard's cgroup/setsockopt program (splice_control.h),
 * read by msg_redirect (accel_splice.h), deleted when N1 closes
 * (splice_forget).  Bounded as sock_hash (a session and its two aliases
 * for every three tracked sockets at most) but not preallocated: an LRU
 * hash preallocates every element (kernel/bpf/hashtab.c, prealloc_init),
 * ~190 bytes times max_sockets (100 MiB at 524288) charged to the agent's
 * memory cgroup whether or not anything is ever spliced.  Full (sessions
 * whose N1 never closed through sock_ops), OFFER is refused and the
 * relay relays. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, ACCEL_MAX_SOCKETS);
	__type(key, __u64);
	__type(value, struct splice_session);
} splice_sessions SEC(".maps");

static __always_inline struct accel_stats *stats(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&accel_stats, &zero);
}

/* sk_msg, sock_ops and the guard's programs can be preempted on this CPU
 * by another run (task context), so even per-CPU slots need atomic adds;
 * uncontended, they cost a locked add on a local cache line. */
#define STAT_ADD(field, n)                                      \
	do {                                                    \
		struct accel_stats *__s = stats();              \
		if (__s)                                        \
			__sync_fetch_and_add(&__s->field, (n)); \
	} while (0)

/* Remember what a service endpoint's connections showed, for
 * HAZARD_TTL_NS and while the LRU keeps it (forgotten, the guard catches
 * the next one: one more reset).  Only a hazard or, with --short-conn, a
 * close inserts an entry, so with the policy off ordinary traffic never
 * evicts a hazard.  bpf_ktime_get_ns, not the coarse clock: tracing
 * programs (the reset iterator) and cgroup/setsockopt may not call that
 * one (kernel/trace/bpf_trace.c, bpf_tracing_func_proto). */
static __always_inline void service_learn_hazard(const struct service_key *svc, __u32 bit)
{
	struct service_profile *sp, init = { .hazards = 1U << bit };

	if (!svc->port)
		return;
	init.hazard_ns = bpf_ktime_get_ns();
	sp = bpf_map_lookup_elem(&service_profiles, svc);
	if (!sp) {
		if (bpf_map_update_elem(&service_profiles, svc, &init, BPF_NOEXIST) != -17 /* EEXIST */)
			return;
		sp = bpf_map_lookup_elem(&service_profiles, svc); /* lost the race */
	}
	if (!sp)
		return;
	/* the time first: a reader that sees a new bit sees it recent (the
	 * fetching atomic is a full barrier) */
	sp->hazard_ns = init.hazard_ns;
	if (!(sp->hazards & (1U << bit)))
		__sync_fetch_and_or(&sp->hazards, 1U << bit);
}

/* The side of @st's connection a hazard is learned on (struct
 * service_key): @st's own (@self), else its peer's.  A server's own side
 * is the service endpoint, a client's is the client's. */
static __always_inline const struct service_key *side_of(const struct sock_state *st, bool self)
{
	return !!(st->flags & SS_PASSIVE) == self ? &st->service : &st->client;
}

/* Ask the agent to end a connection (both ends).  Wakes it at once: the
 * reader of a spliced or stalled connection is waiting on it.  A full ring
 * has woken the agent already (each record before this one forced a
 * wake-up): the request waits in reset_backlog for that wake-up. */
static __always_inline void request_reset(__u64 cookie, __u64 peer, __u32 reason,
					  const struct service_key *svc,
					  const struct reset_tuple *sock)
{
	struct reset_request r = { .cookie = cookie, .peer = peer, .reason = reason };

	if (svc)
		r.service = *svc;
	r.sock = *sock;
	if (!bpf_ringbuf_output(&reset_requests, &r, sizeof(r), BPF_RB_FORCE_WAKEUP))
		return;
	if (bpf_map_update_elem(&reset_backlog, &cookie, &r, BPF_ANY))
		STAT_ADD(reset_requests_lost, 1);
	else
		STAT_ADD(reset_requests_deferred, 1);
}

/* sk's address, for the enforcer's exact lookup (struct reset_tuple):
 * CO-RE reads, which a tracepoint or syscall program makes with
 * bpf_probe_read_kernel (an iterator's typed socket reads as well) */
static __always_inline void tuple_of(struct reset_tuple *t, struct sock *sk)
{
	t->family = BPF_CORE_READ(sk, __sk_common.skc_family);
	if (t->family == SK_AF_INET) {
		t->local[2] = t->remote[2] = SK_V4MAPPED_WORD;
		t->local[3] = BPF_CORE_READ(sk, __sk_common.skc_rcv_saddr);
		t->remote[3] = BPF_CORE_READ(sk, __sk_common.skc_daddr);
	} else if (t->family == SK_AF_INET6) {
		BPF_CORE_READ_INTO(&t->local, sk, __sk_common.skc_v6_rcv_saddr.in6_u.u6_addr32);
		BPF_CORE_READ_INTO(&t->remote, sk, __sk_common.skc_v6_daddr.in6_u.u6_addr32);
	} else {
		t->family = 0;
	}
	t->lport = BPF_CORE_READ(sk, __sk_common.skc_num);
	t->rport = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
	t->ifindex = BPF_CORE_READ(sk, __sk_common.skc_bound_dev_if);
}

#endif /* NGX_SOCKMAP_ACCEL_MAPS_H */

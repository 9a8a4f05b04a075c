/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * "Was this socket of mine accelerated, and if not, why?": the one
 * question an unprivileged process may ask the data plane, about its own
 * socket, with a getsockopt(2) nobody else answers.  Shared by the
 * guard's cgroup/getsockopt program (bpf/guard.bpf.c sockopt_query), the
 * agent, and the nginx module (nginx-module/ngx_sockmap_query.c, the
 * $sockmap and $sockmap_upstream variables).
 *
 *   struct sockmap_query q;
 *   socklen_t len = sizeof(q);
 *   getsockopt(fd, SOCKMAP_QUERY_LEVEL, SOCKMAP_QUERY_OPTNAME, &q, &len);
 *
 * Linux has no TCP option with this number (include/uapi/linux/tcp.h
 * stops in the 40s), so without the program attached to the caller's
 * cgroup the kernel answers ENOPROTOOPT (net/ipv4/tcp.c
 * do_tcp_getsockopt's default case): no agent.  The program sees the
 * kernel's answer and replaces it (kernel/bpf/cgroup.c
 * __cgroup_bpf_run_filter_getsockopt lets it reset retval to 0); every
 * other getsockopt it leaves as the kernel answered it.
 *
 * A socket is only ever asked about by whoever holds its descriptor:
 * the answer is what the data plane decided for that socket, nothing of
 * any other, and nothing a sock_diag dump would not tell root.
 */
#ifndef NGX_SOCKMAP_SOCKMAP_QUERY_H
#define NGX_SOCKMAP_SOCKMAP_QUERY_H

#ifndef __bpf__
#include <linux/types.h> /* BPF side: vmlinux.h defines the __uN types */
#endif

#define SOCKMAP_QUERY_LEVEL   6      /* SOL_TCP */
#define SOCKMAP_QUERY_OPTNAME 0x4e53 /* "NS", as the nonce option's ExID */
#define SOCKMAP_QUERY_VERSION 2

enum sockmap_query_state {
	SQ_NOT_TRACKED = 0, /* the data plane never took it: a remote or
			     * untracked peer, or a decision taken before
			     * any per-socket state (policy, a hazard on
			     * its side, paused, ...): counted host-wide
			     * only (status --json fallbacks, skipped) */
	SQ_PENDING,         /* tracked, its pairing still undecided (the
			     * active end decides at its first send) */
	SQ_PAIRED,          /* paired with its peer, nothing sent yet */
	SQ_REDIRECTED,      /* paired, and its sends were redirected */
	SQ_FALLBACK,        /* on TCP: reason is an enum fallback_reason */
	SQ_RESET,           /* ended: reason is an enum reset_reason */
	SQ_SPLICED,         /* a splice session's far end, whose sends go
			     * past the relay, or a relay's end whose
			     * session's bytes did (bpf/sockmap_splice.h) */
	SQ__MAX
};

struct sockmap_query {
	__u32 version;          /* SOCKMAP_QUERY_VERSION */
	__u8 state;             /* enum sockmap_query_state */
	__u8 reason;            /* SQ_FALLBACK, SQ_RESET: which one */
	__u16 _pad;
	__u64 redirected_bytes; /* what this socket sent by redirect */
	/* version 2: on a splice relay's end (bpf/sockmap_splice.h), what
	 * went past the relay since its far ends switched: the bytes it
	 * would have read and written itself */
	__u64 spliced_up;       /* from the session's client to its upstream */
	__u64 spliced_down;     /* from its upstream to its client */
	__u64 spliced_ns;       /* when the last of them was sent:
				 * CLOCK_MONOTONIC_COARSE, in ns (0: none) */
};

/* A caller's buffer of this size gets the version 1 answer (an nginx
 * module built before version 2, say). */
#define SOCKMAP_QUERY_V1_SIZE 16

#endif /* NGX_SOCKMAP_SOCKMAP_QUERY_H */

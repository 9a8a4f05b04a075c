/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The agent's sock_diag requests (NETLINK_SOCK_DIAG, inet_diag), in the
 * network namespace the caller is in: dumps of TCP sockets (following
 * peers), exact lookups of one socket (the doomed ones) and SOCK_DESTROY,
 * which ends a socket from user space where no BPF program may
 * (bpf_sock_destroy is callable only from iter/tcp, a tracing program:
 * net/core/filter.c bpf_sk_iter_kfunc_set).  SOCK_DESTROY runs tcp_abort() like the kfunc:
 * ECONNABORTED here, a RST to the peer (net/ipv4/tcp_diag.c
 * tcp_diag_destroy; CONFIG_INET_DIAG_DESTROY, CAP_NET_ADMIN in the
 * namespace's user namespace).  Every reply goes through diag_parse.
 */
#ifndef NGX_SOCKMAP_SOCK_DIAG_H
#define NGX_SOCKMAP_SOCK_DIAG_H

#include <stddef.h>
#include <stdint.h>
#include "diag_parse.h"

/* TCP states as inet_diag numbers them (include/net/tcp_states.h) */
#define DIAG_TCP_ESTABLISHED 1
#define DIAG_TCP_TIME_WAIT   6
#define DIAG_TCP_LISTEN      10
#define DIAG_TCP_ALL         0xfff

/* Dump the TCP sockets of family (AF_INET, AF_INET6) in the states
 * (a bit per state) into l.  0 or -errno. */
int diag_dump_tcp(int family, uint32_t states, struct diag_ctx *ctx, struct diag_list *l);
/* diag_dump_tcp, each socket with its value in the socket storage map
 * map_fd (ctx->storage_*: which bytes of it to keep).  0 or -errno. */
int diag_dump_tcp_storage(int family, uint32_t states, int map_fd, struct diag_ctx *ctx,
			  struct diag_list *l);
/* End one socket (SOCK_DESTROY by its 4-tuple, bound device and cookie:
 * the kernel refuses it if the cookie no longer matches).  0 or -errno. */
int diag_destroy(const struct diag_sock *s);
/* Ask for one socket by its 4-tuple, bound device and cookie (want's
 * family, local, remote, ports, ifindex, cookie; v4 as ::ffff:a.b.c.d
 * with family AF_INET): a lookup, not a dump, so it costs the same
 * however many sockets the namespace holds.  *got is the socket as the
 * kernel reports it (its own family).  0, -ENOENT (not in this
 * namespace, or its cookie differs), or another -errno. */
int diag_get(const struct diag_sock *want, struct diag_sock *got);
/* Whether s's local address and port have a listener here (the one an
 * exact lookup of that end and any remote finds).  1, 0, or -errno. */
int diag_listening(const struct diag_sock *s);

#endif

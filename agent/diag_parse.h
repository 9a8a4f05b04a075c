/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Parse NETLINK_SOCK_DIAG (inet_diag) dump replies exactly as recvmsg()
 * returned them.  Pure: no sockets, no globals, no logging, so a harness can
 * feed it anything (tests/unit/test_diag_parse.c runs it under ASan/UBSan).
 *
 * The agent reads these replies inside every network namespace that has a
 * process, including ones an unprivileged user made (`unshare -Urn`): root
 * of that user namespace may send netlink unicasts to our socket there, and
 * our port id is guessable (our pid).  So nothing is taken on trust: a
 * datagram counts only if the kernel (port id 0) sent it, every message in
 * it answers our request (sequence number and port id), and every length is
 * checked before the bytes it covers are read.
 */
#ifndef NGX_SOCKMAP_DIAG_PARSE_H
#define NGX_SOCKMAP_DIAG_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/netlink.h>

/* Sockets one network namespace may add to a scan: a namespace whose
 * owner fills it with sockets costs us bounded memory and time. */
#define DIAG_MAX_SOCKS_PER_NETNS 65536

/* Bytes of a socket storage value a dump may keep per socket (see
 * struct diag_ctx storage_*). */
#define DIAG_STORAGE_WINDOW 8

/* One TCP socket (with a cgroup id, unless the dump asked for any). */
struct diag_sock {
	uint8_t local[16], remote[16]; /* v4 as ::ffff:a.b.c.d */
	uint16_t lport, rport;         /* host order */
	uint64_t cgroup;
	uint64_t netns;                /* inode of the netns we dumped it in */
	uint64_t cookie;               /* the socket's cookie (SOCK_DESTROY names it) */
	uint32_t ifindex;              /* bound device, 0: none */
	uint8_t family;                /* AF_INET or AF_INET6: the dump's */
	uint8_t state;                 /* TCP_ESTABLISHED, TCP_LISTEN, ... */
	bool has_storage;              /* storage[] holds a window of the
					* socket's value in the asked map */
	uint8_t storage[DIAG_STORAGE_WINDOW];
};

struct diag_list {
	struct diag_sock *v;
	size_t n, cap;
};

/* One dump request and the namespace it runs in. */
struct diag_ctx {
	/* set before each request */
	uint32_t seq;    /* our nlmsg_seq: unique per request */
	uint32_t portid; /* our socket's port id (getsockname) */
	int family;      /* AF_INET or AF_INET6: what we asked for;
			  * AF_UNSPEC: either (an exact request: the
			  * family of the socket found) */
	uint64_t netns;
	bool any_cgroup; /* take sockets without a cgroup id too */
	/* the socket storage the dump asked for (INET_DIAG_REQ_SK_BPF_STORAGES):
	 * a value of map storage_id counts only if it is storage_size bytes
	 * long, and its bytes [storage_off, storage_off + storage_len) go to
	 * diag_sock.storage (storage_len <= DIAG_STORAGE_WINDOW); 0: none */
	uint32_t storage_id;
	uint32_t storage_size, storage_off, storage_len;
	/* set once per namespace, shared by its requests */
	size_t budget;   /* sockets it may still add */
	bool capped;     /* budget ran out: the rest was not taken */
};

enum { DIAG_MORE = 0, DIAG_DONE = 1 };

/*
 * One datagram: buf[len] as recvmsg() returned it, msg_flags its
 * msghdr.msg_flags, from/fromlen its msg_name/msg_namelen.  Appends the
 * sockets with a cgroup id (any, with ctx->any_cgroup) to out (while
 * ctx->budget lasts).  Returns
 * DIAG_MORE (read the next datagram), DIAG_DONE (NLMSG_DONE, an ACK, or
 * ctx->capped), or a negative errno, in which case out and ctx->budget are
 * as they were (a datagram is taken whole or not at all):
 *   -EPERM     not from the kernel (nl_pid != 0, a multicast, no address)
 *   -EMSGSIZE  MSG_TRUNC: the datagram did not fit the buffer
 *   -EBADMSG   a length that does not fit (header, message, payload, attribute)
 *   -EPROTO    not an answer to our request (seq, port id, type, family)
 *   -ENOMEM    out could not grow
 *   other      the kernel's own error (NLMSG_ERROR, or NLMSG_DONE's errno)
 */
int diag_parse(struct diag_ctx *ctx, const void *buf, size_t len, int msg_flags,
	       const struct sockaddr_nl *from, size_t fromlen, struct diag_list *out);

#endif

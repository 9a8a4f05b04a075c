/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The one key builder used by sock_ops, sk_msg and the host unit tests.
 *
 * A sock_key is a socket's own view of its connection: local address/port,
 * remote address/port.  The peer of a connection has the reversed view, so
 * "who is my peer" is "who registered sock_key_reverse(my key)".
 *
 * Pure C on purpose: no BPF helpers, no libc, only __u8/__u16/__u32/__u64,
 * so tests/unit/test_sockkey.c compiles it on the host.
 */
#ifndef NGX_SOCKMAP_SOCKKEY_H
#define NGX_SOCKMAP_SOCKKEY_H

#ifndef __bpf__
#include <linux/types.h> /* BPF side: vmlinux.h defines the __uN types */
#endif

#define SK_AF_INET  2
#define SK_AF_INET6 10

struct sock_key {
	/* IPv6 addresses in network order; IPv4 is stored v4-mapped
	 * (::ffff:a.b.c.d) so that a dual-stack listener (AF_INET6 socket,
	 * v4-mapped addresses) pairs with a plain AF_INET client. */
	__u32 local_ip[4];
	__u32 remote_ip[4];
	/* Network namespace cookie, only for loopback connections: every
	 * netns has its own 127.0.0.1, so loopback 4-tuples repeat across
	 * namespaces.  For other addresses the two ends of one connection
	 * may sit in different namespaces (a veth or bridge between them),
	 * so the cookie would differ at each end and can't be in the key. */
	__u64 netns;
	__u16 local_port;  /* host order */
	__u16 remote_port; /* host order */
	__u32 _pad;        /* explicit: keys are hashed bytewise */
};

/* The address fields of struct bpf_sock_ops / struct sk_msg_md, copied out
 * as they are in the context.  Only full 4-byte context loads are accepted
 * by the verifier (net/core/filter.c, sock_ops_is_valid_access and
 * sk_msg_is_valid_access), so callers copy whole __u32 fields. */
struct sock_addr_view {
	__u32 family;
	__u32 local_ip4;      /* network order */
	__u32 remote_ip4;     /* network order */
	__u32 local_ip6[4];   /* network order */
	__u32 remote_ip6[4];  /* network order */
	__u32 local_port;     /* host order (the kernel converts it) */
	__u32 remote_port;    /* raw: network-order port in the upper 16 bits
			       * on little endian (filter.c loads skc_dport and
			       * shifts it); ntohl() of it is the port. */
};

static inline __u32 sk_bswap32_if_le(__u32 v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return __builtin_bswap32(v);
#else
	return v;
#endif
}

/* htonl(0x0000ffff): word 2 of a v4-mapped IPv6 address. */
#define SK_V4MAPPED_WORD sk_bswap32_if_le(0x0000ffffU)
/* htonl(1): word 3 of ::1. */
#define SK_V6_ONE_WORD sk_bswap32_if_le(1U)

/* Host-order port from the raw remote_port context field: bpf_ntohl(). */
static inline __u16 sock_key_remote_port(__u32 raw)
{
	return (__u16)sk_bswap32_if_le(raw);
}

static inline int sk_ip_is_loopback(const __u32 ip[4])
{
	if (ip[0] != 0 || ip[1] != 0)
		return 0;
	if (ip[2] == 0 && ip[3] == SK_V6_ONE_WORD)
		return 1; /* ::1 */
	/* v4-mapped 127.0.0.0/8: first byte in memory of word 3 */
	return ip[2] == SK_V4MAPPED_WORD && ((const __u8 *)&ip[3])[0] == 127;
}

static inline int sock_key_is_loopback(const struct sock_key *k)
{
	return sk_ip_is_loopback(k->local_ip) || sk_ip_is_loopback(k->remote_ip);
}

/*
 * Fill @k from a context view.  Returns 0, or -1 for a family that is
 * neither AF_INET nor AF_INET6.  k->netns is left 0: the caller sets it
 * (bpf_get_netns_cookie) only when sock_key_is_loopback(k), which saves the
 * helper call on every other connection.
 */
static inline int sock_key_build(struct sock_key *k, const struct sock_addr_view *v)
{
	int i;

	if (v->family == SK_AF_INET) {
		k->local_ip[0] = k->local_ip[1] = 0;
		k->remote_ip[0] = k->remote_ip[1] = 0;
		k->local_ip[2] = k->remote_ip[2] = SK_V4MAPPED_WORD;
		k->local_ip[3] = v->local_ip4;
		k->remote_ip[3] = v->remote_ip4;
	} else if (v->family == SK_AF_INET6) {
		for (i = 0; i < 4; i++) {
			k->local_ip[i] = v->local_ip6[i];
			k->remote_ip[i] = v->remote_ip6[i];
		}
	} else {
		return -1;
	}
	k->netns = 0;
	k->local_port = (__u16)v->local_port;
	k->remote_port = sock_key_remote_port(v->remote_port);
	k->_pad = 0;
	return 0;
}

/* The key the other end of the same connection has. */
static inline void sock_key_reverse(struct sock_key *out, const struct sock_key *k)
{
	int i;

	for (i = 0; i < 4; i++) {
		out->local_ip[i] = k->remote_ip[i];
		out->remote_ip[i] = k->local_ip[i];
	}
	out->netns = k->netns;
	out->local_port = k->remote_port;
	out->remote_port = k->local_port;
	out->_pad = 0;
}

/*
 * Where a connection's hazards are learned: one side of it, as both ends
 * of a pair see it.  The server side (SVC_SERVER) is the service
 * endpoint: the server's address and port.  The client side (SVC_CLIENT)
 * is the client socket's cgroup, with the client's address and the port
 * it connects to: what a client does (splice its replies, send MSG_OOB,
 * refuse to read) is learned there, so it changes that client's
 * connections to the port, not the service's for every other client.
 * The address alone can't name a client: in one network namespace every
 * local process connects from 127.0.0.1 (or the host's address), nginx's
 * workers to their upstreams too.  A socket's cgroup is its creator's
 * (net/core/sock.c sk_alloc, cgroup_sk_alloc), so another process shares
 * it only by being put in the same cgroup: nginx's workers share
 * nginx's, which is right.  The network namespace cookie only where the
 * address is loopback, as in struct sock_key: every netns has its own
 * 127.0.0.1, while any other address names one pod's interface on this
 * host.  So a key belongs to one pod, and a client side to one cgroup in
 * it: what is learned about it changes that tenant's connections only.
 */
enum service_side {
	SVC_SERVER = 0,
	SVC_CLIENT = 1,
};

struct service_key {
	__u32 addr[4]; /* v4-mapped, network order */
	__u64 netns;   /* netns cookie when addr is loopback, else 0 */
	__u64 cgroup;  /* SVC_CLIENT: the client socket's cgroup v2 id
			* (INET_DIAG_CGROUP_ID, cgroup->kn->id); 0 on the
			* server side */
	__u16 port;    /* the server's, host order; 0: not known */
	__u8 side;     /* enum service_side */
	__u8 _pad[5];  /* explicit: keys are hashed bytewise */
};

/* The @side of the connection @k is a view of (@passive: @k is the
 * server's view).  The port is the server's on both sides; @cgroup, the
 * client socket's, is kept on the client side only. */
static inline void service_key_of(struct service_key *out, const struct sock_key *k, int passive,
				  enum service_side side, __u64 cgroup)
{
	int local = (side == SVC_SERVER) == !!passive;
	const __u32 *ip = local ? k->local_ip : k->remote_ip;
	int i;

	for (i = 0; i < 4; i++)
		out->addr[i] = ip[i];
	out->netns = sk_ip_is_loopback(ip) ? k->netns : 0;
	out->cgroup = side == SVC_CLIENT ? cgroup : 0;
	out->port = passive ? k->local_port : k->remote_port;
	out->side = side;
	for (i = 0; i < 5; i++)
		out->_pad[i] = 0;
}

#endif /* NGX_SOCKMAP_SOCKKEY_H */

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * bench/remote-splice's prototype data plane: what splicing a *remote*
 * client past a relay would cost the kernel, measured before the product
 * offers it (docs/DESIGN.md, "Splice: a relay's far ends, past it").
 *
 * A remote client's connection ends on the relay's socket N1 (its bytes
 * come from the network, so no sk_msg sees them); the relay's upstream
 * socket N2 talks to a local server whose socket is U.  Spliced:
 *   - N1's incoming bytes: an sk_skb stream verdict on N1 redirects each
 *     skb into U's receive queue (bpf_sk_redirect_hash, BPF_F_INGRESS);
 *   - U's sends: an sk_msg verdict redirects them to N1's egress
 *     (bpf_msg_redirect_hash, no flag): out through N1's TCP to the client.
 * N2 stays open and carries nothing once a session is routed.
 *
 * Not the product: no fence, so a session is routed before its first byte
 * or never: the relay keeps a pool of upstream connections already
 * established (their U in the SOCKHASH), and sock_ops takes one for each
 * new client connection as its handshake completes, before any of its data
 * is queued; with the pool empty the session is relayed for life.  No
 * guard, IPv4 only, keyed by ports.  It measures the kernel path.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "skbsplice.h"

const volatile __u16 front_port;    /* where the relay listens: N1's local port */
const volatile __u16 upstream_port; /* the server's port: U's local port */

/* N1 and U, inserted by sock_ops when they are established (before any
 * byte arrives: a verdict only sees data that comes after the insert,
 * net/core/skmsg.c sk_psock_start_verdict). */
struct {
	__uint(type, BPF_MAP_TYPE_SOCKHASH);
	__uint(max_entries, SKBSPLICE_MAX_SOCKS);
	__type(key, __u64);
	__type(value, __u64);
} socks SEC(".maps");

/* The relay's routes: N1's key -> U's key and U's key -> N1's key. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SKBSPLICE_MAX_SOCKS);
	__type(key, __u64);
	__type(value, __u64);
} routes SEC(".maps");

/* U keys of pooled upstream connections nobody uses yet (the relay
 * pushes, sock_ops pops). */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, SKBSPLICE_MAX_SOCKS);
	__type(value, __u64);
} pool SEC(".maps");

struct skbsplice_counts counts;

/* The remote_port context field holds the network-order port in its upper
 * 16 bits on little endian (net/core/filter.c loads skc_dport and shifts
 * it): bpf_ntohl() of the whole word is the port, in sock_ops, sk_skb and
 * sk_msg alike. */
static __always_inline __u16 port_of(__u32 raw)
{
	return (__u16)bpf_ntohl(raw);
}

SEC("sockops")
int skbsplice_track(struct bpf_sock_ops *skops)
{
	__u32 local, remote;
	__u64 key;

	if (skops->op != BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB || skops->family != 2 /* AF_INET */)
		return 1;
	/* each field read once, whole: the verifier refuses a load through a
	 * context pointer the compiler offset (sock_ops_is_valid_access) */
	local = skops->local_port;
	remote = skops->remote_port;
	barrier_var(remote);
	if (local == front_port)
		key = SKBSPLICE_FRONT_KEY(port_of(remote));
	else if (local == upstream_port)
		key = SKBSPLICE_UPSTREAM_KEY(port_of(remote));
	else
		return 1;
	if (bpf_sock_hash_update(skops, &socks, &key, BPF_ANY))
		return 1;
	__sync_fetch_and_add(&counts.tracked, 1);
	if (local == front_port) {
		__u64 up;

		/* routed now or never: its first byte is not queued yet */
		if (bpf_map_pop_elem(&pool, &up)) {
			__sync_fetch_and_add(&counts.pool_empty, 1);
			return 1;
		}
		bpf_map_update_elem(&routes, &up, &key, BPF_ANY);
		bpf_map_update_elem(&routes, &key, &up, BPF_ANY);
	}
	return 1;
}

SEC("sk_skb/stream_verdict")
int skbsplice_ingress(struct __sk_buff *skb)
{
	__u64 key, *to;

	if (skb->local_port != front_port)
		return SK_PASS; /* U's incoming bytes (from N2): TCP as ever */
	key = SKBSPLICE_FRONT_KEY(port_of(skb->remote_port));
	to = bpf_map_lookup_elem(&routes, &key);
	if (!to) {
		/* never routed: into N1's own queue, for the relay */
		__sync_fetch_and_add(&counts.skb_passed, 1);
		return SK_PASS;
	}
	__sync_fetch_and_add(&counts.skb_redirected, 1);
	__sync_fetch_and_add(&counts.skb_bytes, skb->len);
	return bpf_sk_redirect_hash(skb, &socks, to, BPF_F_INGRESS);
}

SEC("sk_msg")
int skbsplice_egress(struct sk_msg_md *msg)
{
	__u64 key, *to;

	if (msg->local_port != upstream_port)
		return SK_PASS; /* the relay's own writes to N1 */
	key = SKBSPLICE_UPSTREAM_KEY(port_of(msg->remote_port));
	to = bpf_map_lookup_elem(&routes, &key);
	if (!to) {
		__sync_fetch_and_add(&counts.msg_passed, 1);
		return SK_PASS;
	}
	__sync_fetch_and_add(&counts.msg_redirected, 1);
	__sync_fetch_and_add(&counts.msg_bytes, msg->size);
	return bpf_msg_redirect_hash(msg, &socks, to, 0);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

// SPDX-License-Identifier: GPL-2.0
/*
 * Another product's sockmap, for guard_foreign_sockmap.sh: a SOCKHASH and
 * an sk_msg program that lets every send through TCP, named msg_redirect
 * as ours is.  The guard must know its sockets are not ours (it once went
 * by that name, and reset this product's splicing readers).  Loaded by
 * tests/prog/foreign_splice.c.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_SOCKHASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} foreign_hash SEC(".maps");

__u64 sends = 0;

SEC("sk_msg")
int msg_redirect(struct sk_msg_md *msg)
{
	__sync_fetch_and_add(&sends, 1);
	return SK_PASS;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * A host policy for the kernel matrix (tests/vm): refuse every
 * BPF_PROG_TYPE_TRACING load (fentry, fexit, iter, tp_btf) with EPERM,
 * as some of this project's own machines and hardened hosts do, so that a
 * kernel that allows tracing still proves the agent on the kind of host
 * that doesn't.  A BPF LSM program on the bpf() hook (security_bpf,
 * kernel/bpf/syscall.c __sys_bpf): Debian's kernels have CONFIG_BPF_LSM
 * and "bpf" in their LSM list.  Loaded by tests/prog/refuse_tracing.c.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

#define EPERM 1

/* only the first two arguments: later kernels added more */
SEC("lsm/bpf")
int BPF_PROG(refuse_tracing, int cmd, union bpf_attr *attr)
{
	if (cmd == BPF_PROG_LOAD && BPF_CORE_READ(attr, prog_type) == BPF_PROG_TYPE_TRACING)
		return -EPERM;
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Is the current task inside a 32-bit (ia32) syscall?  One definition for
 * the data plane (msg_redirect: a send no guard hook saw) and the guard
 * (ia32_exec, ia32_enter).  Include after vmlinux.h and bpf_core_read.h.
 */
#ifndef NGX_SOCKMAP_IA32_H
#define NGX_SOCKMAP_IA32_H

#define TS_COMPAT 0x0002 /* arch/x86/include/asm/thread_info.h */

/* x86 only: flavors, so that the objects build from any arch's vmlinux.h */
struct thread_info___x86 {
	__u32 status;
} __attribute__((preserve_access_index));

struct task_struct___x86 {
	struct thread_info___x86 thread_info;
} __attribute__((preserve_access_index));

/* in_ia32_syscall() (arch/x86/include/asm/compat.h); false off x86,
 * where thread_info has no status.  The task is typed
 * (bpf_get_current_task_btf), so the read is a plain load: the probe read
 * in_ia32_syscall_probed() makes is a helper call, about 10 ns on every
 * send of msg_redirect and every syscall of ia32_enter. */
static __always_inline bool in_ia32_syscall(void)
{
	struct task_struct___x86 *t = (void *)bpf_get_current_task_btf();

	if (!bpf_core_field_exists(t->thread_info.status))
		return false;
	return t->thread_info.status & TS_COMPAT;
}

/* The same for program types that may not call bpf_get_current_task_btf:
 * tracing programs always may (kernel/trace/bpf_trace.c), an sk_msg
 * program only where the kernel's base helpers include it (the agent
 * probes for it: accel.bpf.c task_btf). */
static __always_inline bool in_ia32_syscall_probed(void)
{
	struct task_struct___x86 *t = (void *)bpf_get_current_task();

	if (!bpf_core_field_exists(t->thread_info.status))
		return false;
	return BPF_CORE_READ(t, thread_info.status) & TS_COMPAT;
}

#endif

// SPDX-License-Identifier: GPL-2.0
/*
 * The data plane's guard: it watches for what a redirect can't deliver as
 * TCP would, and ends such connections.  Shares the data plane's maps
 * (accel_maps.h; the agent hands them over with bpf_map__reuse_fd).
 *
 *   splice_*        a tracked socket read with splice(2) or sendfile(2):
 *   sendfile_*      tcp_splice_read() reads only sk_receive_queue, never
 *                   the psock's ingress_msg, so the reader would wait
 *                   forever (or spin: poll says readable).  Ask for a
 *                   reset.
 *   send*_*         a send() with MSG_OOB: tcp_bpf_sendmsg() has no urgent
 *                   path, a redirect delivers the byte inline.  Mark the
 *                   task; msg_redirect sends it through TCP or ends the
 *                   connection.
 *   sockopt_set     setsockopt(TCP_ULP) on a tracked socket: refused.  kTLS
 *                   runs the sk_msg verdict on plaintext (net/tls/tls_sw.c
 *                   bpf_exec_tx_verdict), and TLS keys on a sockmap socket
 *                   are rejected only from 6.12.111/7.2 on ("tls: reject
 *                   the combination of TLS and sockmap"), after a reported
 *                   use-after-free.  OpenSSL falls back to user-space TLS
 *                   when TCP_ULP fails; its service endpoint is learned,
 *                   so that endpoint's later connections are not paired
 *                   and get their kTLS.  Also a relay's splice requests
 *                   on its own sockets (splice_control.h,
 *                   bpf/sockmap_splice.h).
 *   sockopt_query   getsockopt(SOCKMAP_QUERY_LEVEL, SOCKMAP_QUERY_OPTNAME)
 *                   on any socket: what the data plane decided for it
 *                   (bpf/sockmap_query.h), for its owner (nginx's
 *                   $sockmap).  Here, beside sockopt_set, because the
 *                   agent attaches this object's cgroup programs to
 *                   every cgroup it attaches sock_ops to.
 *
 * The enforcer's iterators live in sockiter.bpf.c, an object of their own:
 * a host that refuses tracing programs refuses them, and one refused
 * program fails its whole object's load.
 *
 * The splice and MSG_OOB checks come in two sets of hooks, and the agent
 * loads one (agent/guard.c, --guard-hooks), or none where neither loads
 * (sockopt_set alone; the agent then keeps the data plane paused):
 *
 *   fentry          on tcp_splice_read() and tcp_bpf_sendmsg(): only TCP
 *                   splices and sends on sockets with an sk_msg program
 *                   (ours, or another sockmap user's) run them.  Needs
 *                   BPF trampolines, which some hosts refuse (EPERM; this
 *                   development host, which also has no kprobes).
 *   tracepoints     on the splice, sendfile and send* syscalls, and
 *                   io_uring's submissions: load everywhere, but while one is
 *                   attached every syscall of every task on the host takes
 *                   the slow entry path (kernel/tracepoint.c
 *                   syscall_regfunc sets SYSCALL_TRACEPOINT on all
 *                   threads).  ia32_enter, on raw_syscalls:sys_enter,
 *                   does the same for 32-bit syscalls, which those
 *                   events never see (below).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_tracing.h>
#include "accel.h"
#include "accel_maps.h"
#include "psock.h"
#include "ia32.h"
#include "sockmap_query.h"
#include "splice_control.h"

char LICENSE[] SEC("license") = "GPL";

#define MSG_OOB     1
#define EEXIST      17
#define SOL_TCP     6
#define TCP_ULP     31
#define S_IFMT      00170000
#define S_IFSOCK    0140000
#define PAGE_SIZE   4096

/* Sockets already reported as spliced: a non-blocking splicer calls
 * splice() in a loop until the reset lands. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, __u8);
} spliced SEC(".maps");

/* The tag of the data plane's msg_redirect (bpf_prog_info.tag: a hash of
 * its instructions, kernel/bpf/core.c bpf_prog_calc_tag), set by the agent
 * (agent/guard.c) before loading: the program, not its name, says a socket
 * is ours.  Another sockmap user's program may be called msg_redirect too;
 * a previous run of this build (--pin, or live pairs of an agent before)
 * carries the same instructions. */
const volatile __u64 msg_redirect_tag = 0;

/* sk, if it is one of ours: in a sockmap with our sk_msg program.  Probe
 * reads all along: a tracepoint gets no typed pointers. */
static __always_inline struct sock *our_socket(struct sock *sk)
{
	struct sk_psock *psock;
	struct bpf_prog *prog;
	__u64 ud, tag = 0;

	if (!sk)
		return NULL;
	ud = (__u64)BPF_CORE_READ(sk, sk_user_data);
	psock = (void *)psock_from_user_data(ud);
	if (!psock)
		return NULL;
	prog = BPF_CORE_READ(psock, progs.msg_parser);
	if (!prog)
		return NULL;
	bpf_core_read(&tag, sizeof(tag), &prog->tag);
	if (!msg_redirect_tag || tag != msg_redirect_tag)
		return NULL;
	return sk;
}

/* The socket behind fd of the current task, if it is one of ours.  The
 * task is typed (every program here is a tracing one), so the walk to its
 * fd table is loads the verifier makes fault-safe, not probe-read helper
 * calls: sendfile(2) pays this on every call, whatever in_fd is (a file,
 * nearly always), and seven probe reads were about 100 ns of it. */
static __always_inline struct sock *our_socket_of_fd(int fd)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct file **fds, *f = NULL;
	struct files_struct *files;
	struct socket *sock;
	struct fdtable *fdt;

	if (fd < 0)
		return NULL;
	files = task->files;
	if (!files)
		return NULL;
	fdt = files->fdt;
	if (!fdt || (unsigned int)fd >= fdt->max_fds)
		return NULL;
	/* a pointer to pointers is no typed pointer: read the slot */
	fds = fdt->fd;
	bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]);
	if (!f || (BPF_CORE_READ(f, f_inode, i_mode) & S_IFMT) != S_IFSOCK)
		return NULL;
	sock = BPF_CORE_READ(f, private_data);
	return our_socket(BPF_CORE_READ(sock, sk));
}

/* A splice on one of ours: ask for its reset, once. */
static __always_inline void spliced_socket(struct sock *sk)
{
	struct reset_tuple t = {};
	__u64 cookie;
	__u8 one = 1;

	if (!sk)
		return;
	cookie = BPF_CORE_READ(sk, __sk_common.skc_cookie.counter);
	if (bpf_map_update_elem(&spliced, &cookie, &one, BPF_NOEXIST))
		return; /* reported already */
	tuple_of(&t, sk);
	request_reset(cookie, 0, RS_SPLICE, NULL, &t);
}

SEC("tracepoint/syscalls/sys_enter_splice")
int splice_enter(struct trace_event_raw_sys_enter *ctx)
{
	spliced_socket(our_socket_of_fd((int)ctx->args[0]));
	return 0;
}

/* sendfile(2) from a socket splices it without the splice syscall:
 * do_sendfile() (fs/read_write.c) reads in_fd with splice_file_to_pipe()
 * when out_fd is a pipe, else with do_splice_direct(); both end in its
 * .splice_read, tcp_splice_read().  This hook costs sendfile calls
 * only: the slow entry path every syscall takes comes with the other
 * hooks already (kernel/trace/trace_syscalls.c runs a program only for
 * the syscall numbers it is attached to). */
SEC("tracepoint/syscalls/sys_enter_sendfile64")
int sendfile_enter(struct trace_event_raw_sys_enter *ctx)
{
	spliced_socket(our_socket_of_fd((int)ctx->args[1]));
	return 0;
}

/* inet_stream_ops and inet6_stream_ops .splice_read (net/ipv4/af_inet.c):
 * splice(2), sendfile(2) and io_uring's splices all come here */
SEC("fentry/tcp_splice_read")
int BPF_PROG(splice_fentry, struct socket *sock)
{
	spliced_socket(our_socket(BPF_CORE_READ(sock, sk)));
	return 0;
}

static __always_inline void oob_exit(void)
{
	__u64 me = bpf_get_current_pid_tgid(), *n;
	__u32 zero = 0;

	n = bpf_map_lookup_elem(&oob_count, &zero);
	if (!n || !*n || bpf_map_delete_elem(&oob_senders, &me))
		return;
	__sync_fetch_and_add(n, -1);
}

/* MSG_OOB sends: the task is marked for the length of the syscall (the
 * tracepoints) or of tcp_bpf_sendmsg() (fentry, fexit).  Any other send
 * unmarks it first: an exit that never ran (a hook attached between the
 * two; fexit skipped for a sender asleep in tcp_bpf_sendmsg() while the
 * trampoline was rebuilt, kernel/bpf/trampoline.c bpf_tramp_image_put; a
 * thread killed inside its send, whose id is reused) must not make the
 * task's later sends count as urgent. */
static __always_inline void oob_enter(__u64 flags)
{
	__u64 me = bpf_get_current_pid_tgid(), *n;
	__u32 zero = 0, one = 1;
	long err;

	if (!(flags & MSG_OOB)) {
		oob_exit();
		return;
	}
	err = bpf_map_update_elem(&oob_senders, &me, &one, BPF_NOEXIST);
	if (err == -EEXIST)
		return; /* marked already: a mark whose exit hook never ran */
	n = bpf_map_lookup_elem(&oob_count, &zero);
	if (!n)
		return;
	if (err) {
		/* no room (1024 tasks inside urgent sends) or no memory: msg_redirect
		 * can't tell this task from the others, so it takes every
		 * sender for an urgent one until the guard re-arms */
		if (!(__sync_fetch_and_or(n, OOB_UNTRACKED) & OOB_UNTRACKED))
			STAT_ADD(oob_untracked, 1); /* the first to set it */
		return;
	}
	__sync_fetch_and_add(n, 1);
}

SEC("tracepoint/syscalls/sys_enter_sendto")
int sendto_enter(struct trace_event_raw_sys_enter *ctx)
{
	oob_enter(ctx->args[3]);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_sendmsg")
int sendmsg_enter(struct trace_event_raw_sys_enter *ctx)
{
	oob_enter(ctx->args[2]);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_sendmmsg")
int sendmmsg_enter(struct trace_event_raw_sys_enter *ctx)
{
	oob_enter(ctx->args[3]);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_sendto")
int sendto_exit(void *ctx)
{
	oob_exit();
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_sendmsg")
int sendmsg_exit(void *ctx)
{
	oob_exit();
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_sendmmsg")
int sendmmsg_exit(void *ctx)
{
	oob_exit();
	return 0;
}

/*
 * io_uring: its splices and sends never enter the splice and send*
 * syscalls, so the tracepoints above would not see them (fentry does:
 * io_uring ends in tcp_splice_read() and tcp_bpf_sendmsg() as well).
 * io_uring_submit_req fires for each request after its prep, before its
 * first issue (io_uring/io_uring.c io_submit_sqe): the fds are known
 * there, in the submitting task (the SQPOLL thread shares its files).
 *   IORING_OP_SPLICE from one of ours: as splice(2), ask for a reset.
 *   IORING_OP_SEND*, SENDMSG* with MSG_OOB on one of ours: mark the task
 *   as a send(2) would (the first issue runs inline, in this task, right
 *   after: msg_redirect sees the mark), and ask for a reset: a send that
 *   could not go inline is retried later by an io-wq worker or task work,
 *   which carries no mark, so the connection must end (resets{oob}).
 * A registered ("fixed") file has no fd to resolve here: an urgent send
 * on one marks the task only, and a splice from one is not seen (README,
 * Limits).  Each op's struct is the request's
 * command area (io_kiocb_to_cmd: &req->cmd).
 */
#define SPLICE_F_FD_IN_FIXED (1U << 31) /* include/uapi/linux/io_uring.h */
#define IOSQE_FIXED_FILE     (1U << 0)
const volatile bool uring_splice = true; /* false where splice(2) reads redirected bytes */

static __always_inline void *uring_cmd(struct io_kiocb *req)
{
	return (void *)req + bpf_core_field_offset(struct io_kiocb, cmd);
}

SEC("tracepoint/io_uring/io_uring_submit_req")
int uring_submit(struct trace_event_raw_io_uring_submit_req *ctx)
{
	struct io_splice *sp;
	struct io_sr_msg *sr;
	struct reset_tuple t = {};
	struct io_kiocb *req;
	struct sock *sk;
	__u8 op;

	if (!bpf_core_type_exists(struct io_kiocb) || !bpf_core_type_exists(struct io_splice) ||
	    !bpf_core_type_exists(struct io_sr_msg) || !bpf_core_field_exists(ctx->req))
		return 0;
	/* Where the checks fail (6.1's event has no req) libbpf poisons the
	 * load's relocation, which the verifier then must never reach: keep
	 * clang from hoisting it above them (it did, once our_socket_of_fd's
	 * walk changed shape). */
	barrier_var(ctx);
	req = ctx->req;
	op = BPF_CORE_READ(req, opcode);
	if (op == IORING_OP_SPLICE) {
		sp = uring_cmd(req);
		if (!uring_splice || (BPF_CORE_READ(sp, flags) & SPLICE_F_FD_IN_FIXED))
			return 0;
		spliced_socket(our_socket_of_fd(BPF_CORE_READ(sp, splice_fd_in)));
		return 0;
	}
	if (op != IORING_OP_SEND && op != IORING_OP_SENDMSG && op != IORING_OP_SEND_ZC &&
	    op != IORING_OP_SENDMSG_ZC)
		return 0;
	sr = uring_cmd(req);
	if (!(BPF_CORE_READ(sr, msg_flags) & MSG_OOB)) {
		oob_enter(0); /* a send without: unmarks, as send(2) does */
		return 0;
	}
	/* a registered file: cqe.fd is an index into the ring's table, not
	 * an fd of the task (io_init_req; REQ_F_FIXED_FILE is bit 0, as
	 * IOSQE_FIXED_FILE).  Its socket is not known here: mark the task
	 * all the same, for the inline issue (a mark costs a send that is
	 * not ours nothing: only msg_redirect reads it) */
	if (ctx->flags & IOSQE_FIXED_FILE) {
		oob_enter(MSG_OOB);
		return 0;
	}
	sk = our_socket_of_fd(BPF_CORE_READ(req, cqe.fd));
	if (!sk)
		return 0;
	oob_enter(MSG_OOB);
	tuple_of(&t, sk);
	request_reset(BPF_CORE_READ(sk, __sk_common.skc_cookie.counter), 0, RS_OOB, NULL, &t);
	return 0;
}

/* the submitter's marks end with its io_uring_enter, as a send's with its
 * syscall */
SEC("tracepoint/syscalls/sys_exit_io_uring_enter")
int uring_enter_exit(void *ctx)
{
	oob_exit();
	return 0;
}

/*
 * 32-bit (ia32) syscalls: x86-64 fires no syscalls/sys_enter_* event for
 * them (arch/x86/include/asm/ftrace.h ARCH_TRACE_IGNORE_COMPAT_SYSCALLS;
 * kernel/trace/trace_syscalls.c trace_get_syscall_nr() returns -1), so a
 * 32-bit program, or a 64-bit one through int $0x80, would splice or send
 * MSG_OOB unseen by the hooks above.  raw_syscalls:sys_enter fires for
 * every syscall, compat ones too (kernel/entry/syscall-common.c
 * syscall_trace_enter, with the 32-bit number): this program does for the
 * ia32 numbers what the hooks above do for the 64-bit ones.  It runs on
 * every syscall of every task while attached, so its common path is a
 * switch on the number and one array lookup; the agent attaches it only
 * with the tracepoint set, where ia32 syscalls run (agent/guard.c), and
 * only once a 32-bit program runs (ia32_exec, below).  A raw
 * tracepoint: no event record is built for it, and hosts that refuse
 * tracing programs (BPF_PROG_TYPE_TRACING) take it.
 *
 * Numbers: arch/x86/entry/syscalls/syscall_32.tbl; socketcall's calls:
 * include/uapi/linux/net.h.  The arguments of an ia32 syscall are in
 * bx, cx, dx, si, di, bp (arch/x86/include/asm/syscall.h).  x32 syscalls,
 * also unseen by the syscall events, are not handled: CONFIG_X86_X32_ABI
 * (README, Limits).
 */
#define NR32_SOCKETCALL 102
#define NR32_SENDFILE   187
#define NR32_SENDFILE64 239
#define NR32_SPLICE     313
#define NR32_SENDMMSG   345
#define NR32_SENDTO     369
#define NR32_SENDMSG    370
#define SYS_SEND        9
#define SYS_SENDTO      11
#define SYS_SENDMSG     16
#define SYS_SENDMMSG    20

const volatile bool ia32_splice = true; /* false where splice(2) reads redirected bytes */

/* x86 only: flavors, so that the object builds from any arch's vmlinux.h
 * (elsewhere the agent never loads this program) */
struct pt_regs___x86 {
	unsigned long bx, cx, dx, si;
} __attribute__((preserve_access_index));

/*
 * ia32_enter runs on every syscall of every task while attached (88 ns a
 * run on this project's 6.18 host, 16.5 runs a keep-alive request: most
 * of it the kernel's dispatch, not the check).  So the agent attaches it
 * only once a 32-bit program runs: one found at start (agent/guard.c
 * reads each process's executable), or one exec'd since, seen here.
 * __set_personality_ia32() sets TS_COMPAT when the new image is ia32, for
 * its first return to user space; set_personality_64bit() clears it
 * (arch/x86/kernel/process_64.c).  sched_process_exec fires after the
 * binary's loader ran, before that return (fs/exec.c exec_binprm): the
 * flag tells the new image's kind.  The first one disarms an armed
 * guard (guard_state.armed = 0: no socket enters the SOCKHASH) and wakes
 * the agent, which attaches ia32_enter and arms again: a 32-bit
 * program's connections made meanwhile stay on TCP, and its sends on
 * older ones are taken for urgent (accel_redirect.h unseen_ia32_send).
 * Runs on exec only.
 */
__u32 ia32_seen = 0; /* read by the agent (agent/guard.c guard_ia32_sync) */

SEC("tracepoint/sched/sched_process_exec")
int ia32_exec(void *ctx)
{
	struct guard_state *gs;
	__u32 zero = 0, one = 1;

	if (ia32_seen || !in_ia32_syscall())
		return 0;
	if (__sync_val_compare_and_swap(&ia32_seen, 0, 1))
		return 0; /* another exec was first */
	/* idle (armed 0): the next arming attaches it (guard_arm) */
	gs = bpf_map_lookup_elem(&guard_state, &zero);
	if (!gs || !gs->armed)
		return 0;
	gs->armed = 0;
	bpf_ringbuf_output(&guard_wakeup, &one, sizeof(one), 0);
	return 0;
}

/* The flags of a socketcall send, from its argument block in user memory
 * (unsigned ints: compat_sys_socketcall, net/compat.c).  One the
 * program can't read (the page not resident: this hook can't fault it
 * in; the kernel's copy will) counts as MSG_OOB: a mark costs a send on
 * a socket that is not ours nothing (only msg_redirect reads it).
 * Another thread of the caller can rewrite the block between this read
 * and the kernel's copy: the flags it writes then are not seen (README,
 * Limits). */
static __always_inline __u64 socketcall_flags(__u32 call, unsigned long args)
{
	__u32 flags;
	int i;

	if (call == SYS_SENDMSG)
		i = 2; /* fd, msg, flags */
	else
		i = 3; /* SEND: fd, buf, len, flags; SENDTO: ..., addr, addrlen;
			* SENDMMSG: fd, mmsg, vlen, flags */
	if (bpf_probe_read_user(&flags, sizeof(flags), (void *)(args + i * sizeof(__u32))))
		return MSG_OOB;
	return flags;
}

SEC("raw_tracepoint/sys_enter")
int ia32_enter(struct bpf_raw_tracepoint_args *ctx)
{
	struct pt_regs___x86 *regs = (void *)ctx->args[0];
	long nr = ctx->args[1];
	__u64 *n, flags;
	__u32 zero = 0, call;

	n = bpf_map_lookup_elem(&oob_count, &zero);
	switch (nr) {
	case NR32_SOCKETCALL:
	case NR32_SENDFILE:
	case NR32_SENDFILE64:
	case NR32_SPLICE:
	case NR32_SENDMMSG:
	case NR32_SENDTO:
	case NR32_SENDMSG:
		break;
	default:
		/* no number of interest, and no task anywhere inside a
		 * marked send: the common path */
		if (!n || !*n)
			return 0;
	}
	if (!in_ia32_syscall())
		return 0; /* 64-bit: the syscalls/ events saw it */
	/* No sys_exit hook clears the mark of an ia32 urgent send, or of an
	 * ia32 io_uring_enter's (uring_submit; sys_exit_io_uring_enter does
	 * not fire for it): one would run on every syscall's exit too.  The
	 * thread's next ia32 syscall does, here; between the two the thread
	 * runs only in user space.
	 * A 64-bit syscall of the same thread in between (int $0x80 for the
	 * send, then a 64-bit write()) finds the mark still set: its send is
	 * taken for an urgent one, on its own connection only. */
	oob_exit();
	switch (nr) {
	case NR32_SPLICE:
		if (ia32_splice)
			spliced_socket(our_socket_of_fd((int)BPF_CORE_READ(regs, bx)));
		return 0;
	case NR32_SENDFILE:
	case NR32_SENDFILE64:
		if (ia32_splice)
			spliced_socket(our_socket_of_fd((int)BPF_CORE_READ(regs, cx)));
		return 0;
	case NR32_SENDTO:
	case NR32_SENDMMSG:
		flags = (__u32)BPF_CORE_READ(regs, si);
		break;
	case NR32_SENDMSG:
		flags = (__u32)BPF_CORE_READ(regs, dx);
		break;
	case NR32_SOCKETCALL:
		call = BPF_CORE_READ(regs, bx);
		if (call != SYS_SEND && call != SYS_SENDTO && call != SYS_SENDMSG &&
		    call != SYS_SENDMMSG)
			return 0;
		flags = socketcall_flags(call, (__u32)BPF_CORE_READ(regs, cx));
		break;
	default:
		return 0;
	}
	if (flags & MSG_OOB)
		oob_enter(MSG_OOB);
	return 0;
}

/* tcp_bpf_prots' .sendmsg (net/ipv4/tcp_bpf.c): the sendmsg of every
 * socket with an sk_msg program, whatever the caller (a syscall, io_uring),
 * and of no other; msg_redirect runs inside it, between these two.
 * (tcp_bpf_sendpage, up to 6.4, runs the verdict too, but its flags come
 * from sock_sendpage(): never MSG_OOB.) */
SEC("fentry/tcp_bpf_sendmsg")
int BPF_PROG(send_fentry, struct sock *sk, struct msghdr *msg)
{
	oob_enter(BPF_CORE_READ(msg, msg_flags));
	return 0;
}

SEC("fexit/tcp_bpf_sendmsg")
int BPF_PROG(send_fexit)
{
	oob_exit();
	return 0;
}

/* setsockopt(2) in the attached cgroups: a ULP on a tracked socket is
 * refused; splice requests are answered (splice_control.h).  Every other
 * option returns at the compares, to the kernel's own handler. */
SEC("cgroup/setsockopt")
int sockopt_set(struct bpf_sockopt *ctx)
{
	struct sock_state *st;
	struct bpf_sock *sk;

	if (ctx->level != SOL_TCP)
		return 1;
	if (ctx->optname == SOCKMAP_SPLICE_OPTNAME)
		return splice_control(ctx);
	if (ctx->optname != TCP_ULP)
		return 1;
	sk = ctx->sk;
	if (!sk)
		return 1;
	st = bpf_sk_storage_get(&sk_state, sk, 0, 0);
	if (!st || !(st->flags & SS_IN_MAP))
		return 1;
	service_learn_hazard(side_of(st, true), PH_ULP);
	STAT_ADD(ulp_refused, 1);
	return 0; /* EPERM */
}

/* What the data plane decided for this socket (struct sockmap_query). */
static __always_inline void query_fill(struct sockmap_query *q, const struct sock_state *st)
{
	if (!st)
		return; /* SQ_NOT_TRACKED */
	q->redirected_bytes = st->redirected_bytes;
	if (st->flags & SS_RELAY) {
		struct splice_session *s;
		__u64 key = st->splice_key;

		s = bpf_map_lookup_elem(&splice_sessions, &key);
		if (s && !s->alias) {
			q->spliced_up = s->spliced_up;
			q->spliced_down = s->spliced_down;
			q->spliced_ns = s->spliced_ns;
		} else { /* ended: what N1 kept (accel_splice.h splice_forget) */
			q->spliced_up = st->spliced_up;
			q->spliced_down = st->spliced_down;
			q->spliced_ns = st->spliced_ns;
		}
	}
	if (st->flags & SS_DOOMED) {
		q->state = SQ_RESET;
		q->reason = st->doom_reason;
	} else if ((st->flags & SS_SPLICED) || q->spliced_up || q->spliced_down) {
		q->state = SQ_SPLICED;
	} else if ((st->flags & SS_PAIRED) && !(st->flags & SS_TCP)) {
		q->state = st->redirected_bytes ? SQ_REDIRECTED : SQ_PAIRED;
	} else if (st->fallback && st->fallback <= FB__MAX) {
		q->state = SQ_FALLBACK;
		q->reason = st->fallback - 1;
	} else if (st->flags & SS_TRACKED) {
		q->state = SQ_PENDING;
	}
}

/*
 * The owner of a socket asks what became of it (bpf/sockmap_query.h).
 * Runs after the kernel's own getsockopt, for every getsockopt in the
 * cgroup: any other (level, optname) returns at the first compare, with
 * the kernel's answer as it was.  An option longer than a page reaches
 * programs cut to one page: optlen 0 tells the kernel to hand the
 * caller its own full answer (kernel/bpf/cgroup.c
 * __cgroup_bpf_run_filter_getsockopt, as the kernel's
 * tools/testing/selftests/bpf/progs/sockopt_sk.c does).
 */
SEC("cgroup/getsockopt")
int sockopt_query(struct bpf_sockopt *ctx)
{
	struct sockmap_query q = { .version = SOCKMAP_QUERY_VERSION };
	void *optval = ctx->optval, *end = ctx->optval_end;
	struct sock_state *st = NULL;
	struct bpf_sock *sk;

	if (ctx->level != SOCKMAP_QUERY_LEVEL || ctx->optname != SOCKMAP_QUERY_OPTNAME) {
		if (ctx->optlen > PAGE_SIZE)
			ctx->optlen = 0;
		return 1;
	}
	/* too short a buffer: the kernel's ENOPROTOOPT stands */
	if (optval + SOCKMAP_QUERY_V1_SIZE > end)
		return 1;
	sk = ctx->sk;
	if (sk)
		st = bpf_sk_storage_get(&sk_state, sk, 0, 0);
	query_fill(&q, st);
	if (optval + sizeof(q) > end) {
		q.version = 1;
		__builtin_memcpy(optval, &q, SOCKMAP_QUERY_V1_SIZE);
		ctx->optlen = SOCKMAP_QUERY_V1_SIZE;
	} else {
		__builtin_memcpy(optval, &q, sizeof(q));
		ctx->optlen = sizeof(q);
	}
	ctx->retval = 0;
	return 1;
}

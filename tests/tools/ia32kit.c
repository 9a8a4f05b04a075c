// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * ia32kit: a 32-bit program (gcc -m32; guard_ia32.sh builds it, `make
 * tools` does not) that splices from, or sends MSG_OOB on, its own
 * loopback connection with ia32 syscalls, which x86-64's syscall
 * tracepoints never see (arch/x86/include/asm/ftrace.h).
 *
 *   ia32kit MODE
 *
 * One process: listen on 127.0.0.1:0, connect, accept.  MODE:
 *   splice, sendfile, sendfile64   the client sends 1000 bytes, the server
 *                                  end reads them into a pipe with that
 *                                  syscall (non-blocking, 5 s at most);
 *   oob-sendto, oob-sendmsg, oob-sendmmsg, oob-socketcall-send,
 *   oob-socketcall-sendto, oob-socketcall-sendmsg, oob-socketcall-sendmmsg
 *                                  the client sends "hello", "abc" with
 *                                  MSG_OOB through that syscall (or
 *                                  socketcall(2) call), "world", and
 *                                  half-closes (stops at a failed send,
 *                                  as an application would); the server
 *                                  end reads the
 *                                  stream to EOF (SO_OOBINLINE off), then
 *                                  recv(MSG_OOB).
 * Built 64-bit (without -m32), it takes the int80-splice and
 * int80-oob-sendto modes only: the same through int $0x80 from a 64-bit
 * program (i386 numbers, arguments below 4 GiB).
 * Prints one line:
 *   server=OUTCOME client=OUTCOME got=BYTES [stream=S oob=C]
 * server: ok (all bytes, right), reset (an error: the connection was
 * ended), timeout (no progress in 5 s: a hang), bad (wrong bytes); client:
 * ok, or reset where a send failed or its socket holds an error after.
 * Plain TCP gives server=ok client=ok; stream and oob are what a TCP
 * reader gets (the urgent byte out of the stream).
 */
#if !defined(__i386__) && !defined(__x86_64__)
#error "ia32kit is an x86 program: gcc -m32 (or, for its int80-* modes, 64-bit)"
#endif
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/net.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include "toolkit.h"

#define LEN 1000

static int client_err;

static int die(const char *what)
{
	fprintf(stderr, "ia32kit: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void pair(int *cli, int *srv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (void *)&a, sizeof(a)) || listen(l, 1) ||
	    getsockname(l, (void *)&a, &len))
		die("listen");
	*cli = socket(AF_INET, SOCK_STREAM, 0);
	if (*cli < 0 || connect(*cli, (void *)&a, sizeof(a)))
		die("connect");
	*srv = accept(l, NULL, NULL);
	if (*srv < 0)
		die("accept");
	close(l);
}

/* The client's view after the server's: an error it holds (the reset
 * reached it) or a send that failed */
static const char *client_outcome(int cli)
{
	int err = 0;
	socklen_t len = sizeof(err);
	char c;

	if (client_err)
		return "reset";
	getsockopt(cli, SOL_SOCKET, SO_ERROR, &err, &len);
	if (err)
		return "reset";
	if (recv(cli, &c, 1, MSG_DONTWAIT) < 0 && errno != EAGAIN)
		return "reset";
	return "ok";
}

#ifdef __x86_64__
#define NR32_SPLICE 313 /* arch/x86/entry/syscalls/syscall_32.tbl */
#define NR32_SENDTO 369

/* An i386 syscall from 64-bit code: int $0x80 takes its arguments in
 * ebx, ecx, edx, esi, edi, ebp (arch/x86/entry/entry_64_compat.S); the
 * red zone is stepped over before rbp is pushed. */
static long int80(long nr, long b, long c, long d, long si, long di, long bp)
{
	long ret;

	asm volatile("sub $128, %%rsp\n\tpush %%rbp\n\tmov %[bp], %%rbp\n\t"
		     "int $0x80\n\tpop %%rbp\n\tadd $128, %%rsp"
		     : "=a"(ret)
		     : "a"(nr), "b"(b), "c"(c), "d"(d), "S"(si), "D"(di), [bp] "r"(bp)
		     : "r8", "r9", "r10", "r11", "memory", "cc");
	if ((int)ret < 0) {
		errno = -(int)ret;
		return -1;
	}
	return (int)ret;
}
#endif

/* One read of srv into the pipe's write end with the syscall MODE names */
static long splice_once(const char *mode, int srv, int pipe_w, size_t len)
{
#ifdef __x86_64__
	(void)mode;
	return int80(NR32_SPLICE, srv, 0, pipe_w, 0, len, SPLICE_F_NONBLOCK);
#else
	if (!strcmp(mode, "splice"))
		return syscall(SYS_splice, srv, NULL, pipe_w, NULL, len, SPLICE_F_NONBLOCK);
	return syscall(!strcmp(mode, "sendfile") ? SYS_sendfile : SYS_sendfile64, pipe_w, srv,
		       NULL, len);
#endif
}

/* splice, sendfile, sendfile64: the socket into a pipe */
static int spliced(const char *mode)
{
	char want[LEN], got[LEN];
	int cli, srv, p[2], n = 0, i;
	const char *out = "timeout";
	double deadline;
	long r;

	for (i = 0; i < LEN; i++)
		want[i] = (char)mix64(i);
	pair(&cli, &srv);
	if (pipe(p) || fcntl(srv, F_SETFL, O_NONBLOCK))
		die("pipe");
	if (send(cli, want, LEN, 0) != LEN)
		die("send");
	deadline = now_s() + 5;
	while (n < LEN && now_s() < deadline) {
		r = splice_once(mode, srv, p[1], LEN - n);
		if (r > 0) {
			if (read(p[0], got + n, r) != r)
				die("read pipe");
			n += r;
			continue;
		}
		if (r == 0 || errno != EAGAIN) {
			out = "reset"; /* an error, or EOF before every byte */
			break;
		}
		wait_fd(srv, POLLIN, now_s() + 0.05);
	}
	if (n == LEN)
		out = memcmp(got, want, LEN) ? "bad" : "ok";
	printf("server=%s client=%s got=%d\n", out, client_outcome(cli), n);
	return 0;
}

/* One send of buf with MSG_OOB through the syscall MODE names */
static long oob_send(int fd, const char *mode, const char *buf, size_t len)
{
#ifdef __x86_64__
	static char *low;

	/* int $0x80 takes 32-bit pointers */
	if (!low) {
		low = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT,
			   -1, 0);
		if (low == MAP_FAILED)
			die("mmap MAP_32BIT");
	}
	(void)mode;
	memcpy(low, buf, len);
	return int80(NR32_SENDTO, fd, (long)low, len, MSG_OOB, 0, 0);
#else
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct mmsghdr mm = { .msg_hdr = { .msg_iov = &iov, .msg_iovlen = 1 } };
	unsigned long a[6] = { fd, (unsigned long)buf, len, MSG_OOB, 0, 0 };

	if (!strcmp(mode, "oob-sendto"))
		return syscall(SYS_sendto, fd, buf, len, MSG_OOB, NULL, 0);
	if (!strcmp(mode, "oob-sendmsg"))
		return syscall(SYS_sendmsg, fd, &mm.msg_hdr, MSG_OOB);
	if (!strcmp(mode, "oob-sendmmsg"))
		return syscall(SYS_sendmmsg, fd, &mm, 1, MSG_OOB) == 1 ? (long)len : -1;
	if (!strcmp(mode, "oob-socketcall-send"))
		return syscall(SYS_socketcall, SYS_SEND, a);
	if (!strcmp(mode, "oob-socketcall-sendto"))
		return syscall(SYS_socketcall, SYS_SENDTO, a);
	if (!strcmp(mode, "oob-socketcall-sendmsg")) {
		unsigned long m[3] = { fd, (unsigned long)&mm.msg_hdr, MSG_OOB };

		return syscall(SYS_socketcall, SYS_SENDMSG, m);
	}
	if (!strcmp(mode, "oob-socketcall-sendmmsg")) {
		unsigned long m[4] = { fd, (unsigned long)&mm, 1, MSG_OOB };

		return syscall(SYS_socketcall, SYS_SENDMMSG, m) == 1 ? (long)len : -1;
	}
	fprintf(stderr, "ia32kit: unknown mode %s\n", mode);
	exit(2);
#endif
}

/* A send that fails ends the client's part, as it would an application's:
 * no more sends, no half-close (whose FIN the reader would take for the
 * end of a stream cut short) */
static void client_send(int fd, const char *mode, const char *s)
{
	long r;

	if (client_err)
		return;
	r = mode ? oob_send(fd, mode, s, strlen(s)) : send(fd, s, strlen(s), 0);
	if (r != (long)strlen(s))
		client_err = 1;
}

static int urgent(const char *mode)
{
	char stream[64], oob[8] = "-", c;
	const char *out = "timeout";
	int cli, srv, n = 0;
	double deadline;
	long r;

	pair(&cli, &srv);
	client_send(cli, NULL, "hello");
	client_send(cli, mode, "abc");
	client_send(cli, NULL, "world");
	if (!client_err)
		shutdown(cli, SHUT_WR);
	if (fcntl(srv, F_SETFL, O_NONBLOCK))
		die("fcntl");
	deadline = now_s() + 5;
	while (now_s() < deadline && n < (int)sizeof(stream) - 1) {
		r = recv(srv, stream + n, sizeof(stream) - 1 - n, 0);
		if (r > 0) {
			n += r;
			continue;
		}
		if (r == 0) {
			out = "ok";
			break;
		}
		if (errno != EAGAIN) {
			out = "reset";
			break;
		}
		wait_fd(srv, POLLIN, now_s() + 0.05);
	}
	stream[n] = 0;
	r = recv(srv, &c, 1, MSG_OOB);
	if (r == 1)
		snprintf(oob, sizeof(oob), "%c", c);
	else if (r < 0)
		snprintf(oob, sizeof(oob), "E%d", errno);
	printf("server=%s client=%s got=%d stream=%s oob=%s\n", out, client_outcome(cli), n, stream,
	       oob);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: ia32kit splice|sendfile|sendfile64|oob-SYSCALL\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
#ifdef __x86_64__
	if (!strcmp(argv[1], "int80-oob-sendto"))
		return urgent(argv[1]);
	if (!strcmp(argv[1], "int80-splice"))
		return spliced(argv[1]);
	fprintf(stderr, "ia32kit: built 64-bit: int80-splice or int80-oob-sendto only\n");
	return 2;
#endif
	if (!strncmp(argv[1], "oob-", 4))
		return urgent(argv[1]);
	if (strcmp(argv[1], "splice") && strcmp(argv[1], "sendfile") && strcmp(argv[1], "sendfile64")) {
		fprintf(stderr, "ia32kit: unknown mode %s\n", argv[1]);
		return 2;
	}
	return spliced(argv[1]);
}

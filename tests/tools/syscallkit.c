// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * syscallkit: what a syscall costs a process the agent never tracks.
 *
 *   syscallkit [ROUNDS]
 *
 * One send() and one recv() of 1 byte on a unix socketpair, ROUNDS times
 * (default 10^6), in one thread; prints "ns_per_round N".  The guard's
 * syscall tracepoints put every syscall of every task on the kernel's
 * slow entry path while attached (kernel/tracepoint.c syscall_regfunc):
 * bench/guard-tax runs this without the agent and with each set of the
 * guard's hooks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "toolkit.h"

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 1000000;
	char c = 'x';
	double t0, t1;
	int sv[2];
	long i;

	if (argc > 2 || rounds <= 0) {
		fprintf(stderr, "usage: syscallkit [ROUNDS]\n");
		return 2;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		fprintf(stderr, "syscallkit: socketpair: %s\n", strerror(errno));
		return 1;
	}
	t0 = now_s();
	for (i = 0; i < rounds; i++) {
		if (send(sv[0], &c, 1, 0) != 1 || recv(sv[1], &c, 1, 0) != 1) {
			fprintf(stderr, "syscallkit: round %ld: %s\n", i, strerror(errno));
			return 1;
		}
	}
	t1 = now_s();
	printf("ns_per_round %.0f\n", (t1 - t0) * 1e9 / rounds);
	return 0;
}

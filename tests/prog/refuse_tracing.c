// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Make this kernel refuse BPF tracing programs (tests/bpf/refuse_tracing.bpf.c)
 * until killed:
 *   build/prog/refuse_tracing   prints "refusing" once the policy is
 *                               attached, then waits for SIGTERM/SIGINT
 * tests/vm/guest.sh starts it in the matrix's "notracing" column.
 * Exit 1 when the kernel has no BPF LSM (the column then can't be had).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "refuse_tracing.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(void)
{
	struct refuse_tracing_bpf *skel;
	struct bpf_link *link;

	skel = refuse_tracing_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "refuse_tracing: loading the policy: %s\n", strerror(errno));
		return 1;
	}
	link = bpf_program__attach_lsm(skel->progs.refuse_tracing);
	if (!link) {
		fprintf(stderr, "refuse_tracing: attaching to lsm/bpf (is bpf in the kernel's lsm= "
			"list?): %s\n", strerror(errno));
		refuse_tracing_bpf__destroy(skel);
		return 1;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	printf("refusing BPF tracing programs (pid %d)\n", getpid());
	fflush(stdout);
	while (!stop)
		pause();
	bpf_link__destroy(link);
	refuse_tracing_bpf__destroy(skel);
	return 0;
}

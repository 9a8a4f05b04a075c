// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <sys/random.h>
#include <bpf/bpf.h>
#include "nonce_pool.h"

/* nonces drawn per getrandom(2) call */
#define BATCH 256

int nonce_pool_fill(int pool_fd)
{
	__u64 batch[BATCH];
	int added = 0, i;
	ssize_t got;

	for (;;) {
		got = getrandom(batch, sizeof(batch), 0);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (i = 0; i < got / (ssize_t)sizeof(batch[0]); i++) {
			/* a queue's push fails with E2BIG when full
			 * (kernel/bpf/queue_stack_maps.c queue_stack_map_push_elem) */
			if (bpf_map_update_elem(pool_fd, NULL, &batch[i], BPF_ANY))
				return errno == E2BIG ? added : -errno;
			added++;
		}
	}
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "accel.h"
#include "log.h"
#include "nonce_pool.h"

/* nonces drawn per getrandom(2) call */
#define BATCH 256

int nonce_pool_fill(struct nonce_pool *p)
{
	__u64 batch[BATCH];
	int added = 0, i;
	ssize_t got;

	if (p->pool_fd < 0)
		return 0;
	for (;;) {
		got = getrandom(batch, sizeof(batch), 0);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (i = 0; i < got / (ssize_t)sizeof(batch[0]); i++) {
			/* bit 0 is cleared before a nonce is used: here it
			 * asks sock_ops to wake us when it takes this one */
			batch[i] &= ~NONCE_WAKE_MARK;
			if (p->pushed % NONCE_WAKE_EVERY == 0)
				batch[i] |= NONCE_WAKE_MARK;
			/* a queue's push fails with E2BIG when full
			 * (kernel/bpf/queue_stack_maps.c queue_stack_map_push_elem) */
			if (bpf_map_update_elem(p->pool_fd, NULL, &batch[i], BPF_ANY))
				return errno == E2BIG ? added : -errno;
			p->pushed++;
			added++;
		}
	}
}

/* The record says only "refill": the pool itself says how much. */
static int take_wakeup(void *ctx, void *data, size_t size)
{
	(void)ctx, (void)data, (void)size;
	return 0;
}

int nonce_pool_open(struct nonce_pool *p, int pool_fd, int wakeup_fd)
{
	int err;

	memset(p, 0, sizeof(*p));
	p->pool_fd = pool_fd;
	err = nonce_pool_fill(p);
	if (err < 0)
		return err;
	p->wakeups = ring_buffer__new(wakeup_fd, take_wakeup, NULL, NULL);
	return p->wakeups ? 0 : -errno;
}

int nonce_pool_epoll_fd(const struct nonce_pool *p)
{
	return p->wakeups ? ring_buffer__epoll_fd(p->wakeups) : -1;
}

void nonce_pool_on_wakeup(struct nonce_pool *p)
{
	int err;

	if (p->wakeups)
		ring_buffer__consume(p->wakeups);
	err = nonce_pool_fill(p);
	if (err < 0)
		pr_debug("refilling the nonce pool: %s\n", strerror(-err));
}

void nonce_pool_close(struct nonce_pool *p)
{
	ring_buffer__free(p->wakeups);
	p->wakeups = NULL;
	p->pool_fd = -1;
}

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The data plane's nonce_pool (bpf/accel_nonce.h new_nonce): the nonces
 * active ends put on their final ACK, drawn here from the kernel's CSPRNG
 * (getrandom(2)) and pushed into the BPF queue, which sock_ops pops.  An
 * empty pool means no pairing (fallbacks{no_nonce}), never a weak nonce.
 * Refilled at load, on every tick, and when sock_ops asks (nonce_wakeup:
 * it took a marked nonce, or found the pool empty).
 */
#ifndef NGX_SOCKMAP_NONCE_POOL_H
#define NGX_SOCKMAP_NONCE_POOL_H

#include <linux/types.h>

struct ring_buffer;

struct nonce_pool {
	int pool_fd;                 /* nonce_pool, -1: none */
	struct ring_buffer *wakeups; /* nonce_wakeup */
	__u64 pushed;                /* every NONCE_WAKE_EVERY-th is marked */
};

/* Fill the pool, and listen to its wake-ups.  0 or -errno. */
int nonce_pool_open(struct nonce_pool *p, int pool_fd, int wakeup_fd);
/* Top the pool up until it is full.  Returns how many were added, or
 * -errno (getrandom or the map refused: the pool keeps what it has). */
int nonce_pool_fill(struct nonce_pool *p);
/* For the run loop: readable when sock_ops asked for a refill; -1: none. */
int nonce_pool_epoll_fd(const struct nonce_pool *p);
/* Take the wake-ups, refill. */
void nonce_pool_on_wakeup(struct nonce_pool *p);
void nonce_pool_close(struct nonce_pool *p);

#endif

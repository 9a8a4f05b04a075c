/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The data plane's nonce_pool (bpf/accel.bpf.c new_nonce): the nonces
 * active ends put on their final ACK, drawn here from the kernel's CSPRNG
 * (getrandom(2)) and pushed into the BPF queue, which sock_ops pops.  An
 * empty pool means no pairing (fallbacks{no_nonce}), never a weak nonce.
 */
#ifndef NGX_SOCKMAP_NONCE_POOL_H
#define NGX_SOCKMAP_NONCE_POOL_H

/* Top the pool up until it is full.  Returns how many were added, or
 * -errno (getrandom or the map refused: the pool keeps what it has). */
int nonce_pool_fill(int pool_fd);

#endif

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Addresses as the BPF side stores them: IPv6, IPv4 v4-mapped, network
 * order (struct sock_key, struct src_key, ring events). */
#ifndef NGX_SOCKMAP_NETADDR_H
#define NGX_SOCKMAP_NETADDR_H

#include <arpa/inet.h>
#include <stddef.h>
#include <string.h>
#include <linux/types.h>

/* "10.0.0.1" for v4-mapped, else the IPv6 text form. */
static inline void addr16_str(const __u32 addr[4], char *buf, size_t len)
{
	if (!addr[0] && !addr[1] && addr[2] == htonl(0xffff))
		inet_ntop(AF_INET, &addr[3], buf, len);
	else
		inet_ntop(AF_INET6, addr, buf, len);
}

#endif

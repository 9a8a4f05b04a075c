/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The opening of a netlink dump, shared by sock_diag (follow.c) and
 * rtnetlink (addrs.c): a socket connected to the kernel (port id 0), so it
 * takes no unicast from other sockets once connected (net/netlink/
 * af_netlink.c netlink_getsockbyportid: a NETLINK_CONNECTED socket takes
 * only its dst_portid), and the request sent with a sequence number of its
 * own.  The callers still check every reply's sender, sequence and lengths:
 * netlink_connect autobinds before it sets NETLINK_CONNECTED, so a unicast
 * can slip in between.
 */
#ifndef NGX_SOCKMAP_NL_DUMP_H
#define NGX_SOCKMAP_NL_DUMP_H

#include <stdint.h>
#include <linux/netlink.h>

/* Send req (its nlmsg_len bytes) on a new NETLINK_<protocol> socket with
 * nlmsg_seq = ++*seq and nlmsg_pid = our port id (also in *portid).
 * Returns the socket (caller closes), or -errno. */
int nl_dump_start(int protocol, struct nlmsghdr *req, uint32_t *seq, uint32_t *portid);

#endif

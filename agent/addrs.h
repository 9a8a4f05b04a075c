/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * "Can this peer be a tracked socket?"  The addresses of every network
 * namespace where processes of attached cgroups live (rtnetlink
 * RTM_GETADDR, in each of them), kept in the data plane's local_addrs map:
 * an active end whose peer has none of them is never inserted (a remote
 * upstream costs one lookup).  Refreshed on every follow tick and whenever
 * cgroups are attached.
 */
#ifndef NGX_SOCKMAP_ADDRS_H
#define NGX_SOCKMAP_ADDRS_H

#include <stddef.h>
#include "netns.h"

/* Make local_addrs (map fd) hold exactly the addresses of these
 * namespaces.  Returns how many it holds, or -errno. */
int addrs_sync(int map_fd, const struct netns_ref *ns, size_t n);

#endif

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Network namespaces, found through processes (/proc/PID/ns/net), entered
 * with setns().  No fd is kept open between uses: a busy host has
 * thousands of namespaces (EMFILE).
 */
#ifndef NGX_SOCKMAP_NETNS_H
#define NGX_SOCKMAP_NETNS_H

#include <stddef.h>
#include <stdint.h>
#include "target.h"

struct netns_ref {
	uint64_t ino; /* the namespace's inode: its identity */
	int pid;      /* a process in it when we looked */
};

/* Every namespace that has a process (peers of a container's nginx sit in
 * other containers' namespaces), deduplicated.  *out is malloc'ed. */
int netns_of_all(struct netns_ref **out, size_t *n);
/* The namespaces of the processes in these cgroups (at most 4096 processes
 * looked at per cgroup).  *unresolved: cgroups with processes none of
 * whose namespace we may open (*err: why; other credentials need
 * CAP_SYS_PTRACE), so their peers look remote and can't be reset. */
int netns_of_cgroups(const struct cg_target *cgs, int ncg, struct netns_ref **out, size_t *n,
		     int *unresolved, int *err);
/* Enter ns (checking the pid still lives in it): 0, or -errno. */
int netns_enter(const struct netns_ref *ns);
/* May we setns() at all (CAP_SYS_ADMIN)?  0, or -errno (-EPERM). */
int netns_can_enter(void);
/* The cookie of the namespace this thread is in, the one
 * bpf_get_netns_cookie() gives BPF (SO_NETNS_COOKIE, 5.14+): 0, or -errno
 * with *cookie 0. */
int netns_cookie(uint64_t *cookie);
/* The caller's own namespace, to come back to: an fd, or -errno. */
int netns_save(void);
/* Back to the saved namespace, keeping the fd (a loop over namespaces
 * that starts with its own): 0 when there (also when never left: an
 * agent that may not setns() is always there), or -errno. */
int netns_back(int saved);
/* Back to the saved namespace and close the fd. */
void netns_restore(int saved);

#endif

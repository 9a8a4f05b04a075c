/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The enforcer's iterators (bpf/sockiter.bpf.c): the only owner of their
 * skeleton.  reset_doomed (iter/tcp) ends the sockets named in its doomed
 * map, in the network namespace the caller is in; scan_unread
 * (iter/sockmap) reports what every socket in the SOCKHASH left unread.
 * Both are tracing programs, which a host may refuse, each on its own (seen
 * on this project's hosts: iter/tcp loads where iter/sockmap and fentry
 * get EPERM): each is loaded only where it was asked for, and the
 * enforcer uses sock_diag or syscall_ops.h for what is refused.
 */
#ifndef NGX_SOCKMAP_SOCKITER_H
#define NGX_SOCKMAP_SOCKITER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "bpfutil.h" /* struct prog_ref */
#include "sockkey.h"  /* struct service_key */

struct sockiter_bpf;
struct bpf_object;
struct bpf_link;
struct reset_record;
struct unread_record;

struct sockiter {
	struct sockiter_bpf *skel;
	struct bpf_link *reset_iter;  /* iter/tcp: reset_doomed */
	struct bpf_link *unread_iter; /* iter/sockmap over sock_hash: scan_unread */
};

/* Can this host load these iterators (reset_doomed, scan_unread)?  Loads
 * them with maps of their own and frees them.  0 or -errno (-EPERM,
 * -EACCES: refused by a policy). */
int sockiter_probe(bool reset, bool scan);
/* Load the iterators asked for, sharing the data plane's maps, and
 * attach them (scan_unread over sock_hash_fd).  0 or -errno; nothing is
 * left on failure. */
int sockiter_load(struct sockiter *it, const struct bpf_object *dataplane, int sock_hash_fd,
		  bool reset, bool scan);
void sockiter_destroy(struct sockiter *it);

/* Ask reset_doomed to end the socket with this cookie (primary: the one a
 * request named, counted once, and where the hazard is learned: on svc,
 * or NULL: on that socket's own side).  0 or -errno. */
int sockiter_doom(struct sockiter *it, __u64 cookie, __u32 reason, bool primary,
		  const struct service_key *svc);
/* Whether a request's socket is still to be found: reset_doomed clears
 * primary when it ends one. */
bool sockiter_doom_pending(struct sockiter *it, __u64 cookie);
void sockiter_undoom_all(struct sockiter *it);
/* Run reset_doomed in the caller's network namespace: each socket it
 * ended as a record, up to max.  How many, or -errno. */
int sockiter_reset(struct sockiter *it, struct reset_record *out, int max);
/* Run scan_unread: a record per socket holding unread bytes, up to max;
 * *total and *largest over all of them.  How many, or -errno. */
int sockiter_scan(struct sockiter *it, struct unread_record *out, int max, __u64 *total,
		  __u64 *largest);
int sockiter_progs(const struct sockiter *it, struct prog_ref *out, int max);

/* An iterator's output, read from fd (bpf_iter_create) as records of size
 * bytes (at most the larger of the two records) into out, up to max; the
 * rest is passed to more, if set.  A partial record at the end is
 * dropped.  How many went into out, or -errno.  The fuzz target reads it
 * from a socket. */
int iter_read_records(int fd, void *out, size_t size, int max,
		      void (*more)(const void *rec, void *ctx), void *ctx);

#endif

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The data plane's guard (bpf/guard.bpf.c): the only owner of its
 * skeleton.  It shares the data plane's maps, so it is loaded after the
 * data plane, from dataplane.c; the enforcer (enforcer.c) runs its two
 * iterators.
 */
#ifndef NGX_SOCKMAP_GUARD_H
#define NGX_SOCKMAP_GUARD_H

#include <stdbool.h>
#include <stdio.h>
#include "bpfutil.h" /* struct prog_ref */

struct guard_bpf;
struct bpf_object;
struct bpf_link;
struct bpf_program;

/* How the guard sees splice and MSG_OOB sends (bpf/guard.bpf.c):
 * fentry on the two kernel functions only tracked sockets reach, or, where
 * the kernel refuses trampolines, syscall tracepoints, which put every
 * syscall on the host on the slow path while attached. */
enum guard_hooks {
	GUARD_HOOKS_AUTO,        /* fentry, else tracepoints */
	GUARD_HOOKS_FENTRY,
	GUARD_HOOKS_TRACEPOINTS,
	GUARD_HOOKS__MAX,
};
extern const char *const guard_hooks_names[GUARD_HOOKS__MAX];

#define GUARD_MAX_HOOKS 8

struct guard {
	struct guard_bpf *skel;
	enum guard_hooks hooks;          /* loaded: FENTRY or TRACEPOINTS */
	int fentry_err;                  /* errno of fentry's refusal; 0: not tried */
	struct bpf_link *hook_links[GUARD_MAX_HOOKS]; /* while armed (guard_arming.c) */
	int n_hooks;
	bool splice;                     /* splice's hook too */
	struct bpf_link *reset_iter;  /* iter/tcp: reset_doomed */
	struct bpf_link *unread_iter; /* iter/sockmap over sock_hash: scan_unread */
};

/* Open and load, sharing every map of the same name with the data plane's
 * object (accel_maps.h), with the hooks asked for (AUTO: fentry if the
 * kernel loads and attaches them; fentry hooks come attached).  splice:
 * splice's hook too.  0 or -errno. */
int guard_load(struct guard *g, const struct bpf_object *dataplane, enum guard_hooks want,
	       bool splice);
/* For status: the hooks loaded (fentry, tracepoints) and, for
 * tracepoints, why ("fentry refused: ...", "--guard-hooks tracepoints"). */
void guard_describe(const struct guard *g, char *hooks, size_t hlen, char *why, size_t wlen);
/* The iterators. */
int guard_attach(struct guard *g, int sock_hash_fd);
/* The hooks (MSG_OOB sends, splice): attach, or detach and forget the
 * senders they marked.  guard_arming.c decides when. */
int guard_arm(struct guard *g);
void guard_disarm(struct guard *g);
/* setsockopt(TCP_ULP) refusal on a cgroup: a bpf_link, NULL + errno. */
struct bpf_link *guard_attach_cgroup(struct guard *g, int cg_fd);
/* The program guard_attach_cgroup attaches (to adopt a pinned link). */
struct bpf_program *guard_ulp_program(const struct guard *g);
void guard_destroy(struct guard *g);

/* The enforcer's tools.  doom: ask reset_doomed to end the socket with
 * this cookie (primary: the one a request named, counted once). */
int guard_doom(struct guard *g, __u64 cookie, __u32 reason, bool primary);
void guard_undoom_all(struct guard *g);
/* Run an iterator in the caller's network namespace (reset_doomed: the
 * namespace whose sockets it walks) and return its output as a FILE to
 * read lines from (caller fcloses), NULL + errno. */
FILE *guard_run_reset(struct guard *g);
FILE *guard_run_scan(struct guard *g);
int guard_progs(const struct guard *g, struct prog_ref *out, int max);
/* Whether this kernel can end a connection from BPF (bpf_sock_destroy). */
bool guard_can_destroy(const struct guard *g);

#endif

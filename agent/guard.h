/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The data plane's guard (bpf/guard.bpf.c): the only owner of its
 * skeleton.  It shares the data plane's maps, so it is loaded after the
 * data plane, from dataplane.c.  The iterators that end connections and
 * scan unread bytes are the enforcer's (sockiter.h): an object of their
 * own, which a host that refuses tracing programs refuses whole.
 */
#ifndef NGX_SOCKMAP_GUARD_H
#define NGX_SOCKMAP_GUARD_H

#include <stdbool.h>
#include "bpfutil.h" /* struct prog_ref */

struct guard_bpf;
struct bpf_object;
struct bpf_link;
struct bpf_program;

/* How the guard sees splice and MSG_OOB sends (bpf/guard.bpf.c):
 * fentry on the two kernel functions only tracked sockets reach, or, where
 * the kernel refuses trampolines, syscall tracepoints, which put every
 * syscall on the host on the slow path while attached; or, where neither
 * loads, not at all (the ULP refusal alone: the agent stays paused). */
enum guard_hooks {
	GUARD_HOOKS_AUTO,        /* fentry, else tracepoints, else none */
	GUARD_HOOKS_FENTRY,
	GUARD_HOOKS_TRACEPOINTS,
	GUARD_HOOKS_NONE,
	GUARD_HOOKS__MAX,
};
extern const char *const guard_hooks_names[GUARD_HOOKS__MAX];

#define GUARD_MAX_HOOKS 12

struct guard {
	struct guard_bpf *skel;
	enum guard_hooks hooks;          /* loaded: FENTRY, TRACEPOINTS or NONE */
	int fentry_err;                  /* errno of fentry's refusal; 0: not tried */
	int tracepoints_err;             /* likewise, the tracepoints' */
	struct bpf_link *hook_links[GUARD_MAX_HOOKS]; /* while armed (arming.c) */
	int n_hooks;
	bool splice;                     /* splice's hook too */
	bool ia32_runs;                  /* tracepoints: ia32 syscalls run here */
	bool ia32;                       /* and ia32_enter is loaded for them */
	bool ia32_attached;              /* among hook_links: a 32-bit program ran */
	struct bpf_link *exec_link;      /* ia32_exec, from the first arming on */
};

/* Open and load, sharing every map of the same name with the data plane's
 * object (accel_maps.h), with the hooks asked for (AUTO: fentry if the
 * kernel loads and attaches them, else tracepoints if they do, else
 * none; fentry hooks come attached).  splice: splice's hook too.  0 (see
 * g->hooks for what was loaded) or -errno: not even the ULP refusal. */
int guard_load(struct guard *g, const struct bpf_object *dataplane, enum guard_hooks want,
	       bool splice);
/* For status: the hooks loaded (fentry, tracepoints, none) and, for the
 * weaker ones, why ("fentry refused: ...", "--guard-hooks tracepoints"). */
void guard_describe(const struct guard *g, char *hooks, size_t hlen, char *why, size_t wlen);
/* For status, on the tracepoint hooks of x86-64: "guarded" where 32-bit
 * (ia32) syscalls run here and the guard's raw_syscalls hook sees them,
 * "standby" where it is loaded but no 32-bit program has run yet (it
 * attaches at the first one's exec), "unseen" where that hook was
 * refused; "off" where ia32 emulation is off; else "". */
const char *guard_ia32(const struct guard *g);
/* While armed: attach the ia32 hook if a 32-bit program was exec'd since
 * (guard.bpf.c ia32_exec), before the guard is armed again. */
void guard_ia32_sync(struct guard *g);
/* Do the hooks see 32-bit syscalls now (GUARD_ARMED_IA32)? */
bool guard_sees_ia32(const struct guard *g);
/* The hooks (MSG_OOB sends, splice): attach, or detach and forget the
 * senders they marked.  arming.c decides when. */
int guard_arm(struct guard *g);
void guard_disarm(struct guard *g);
/* The guard's cgroup programs, which the data plane attaches to each of
 * its cgroups with sock_ops (dataplane.c): setsockopt(TCP_ULP) refusal,
 * and the owner's question (bpf/sockmap_query.h). */
struct bpf_program *guard_ulp_program(const struct guard *g);
struct bpf_program *guard_query_program(const struct guard *g);
void guard_destroy(struct guard *g);

int guard_progs(const struct guard *g, struct prog_ref *out, int max);
#endif

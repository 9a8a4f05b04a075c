/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * When the guard's hooks (guard.h) are attached.
 *
 * With tracepoint hooks they watch every send*() and splice() of every
 * process on the host (a syscall tracepoint can't be limited to a cgroup),
 * and while one is enabled every syscall of every task takes the kernel's
 * slow entry path: about 400 ns more per send+recv pair measured here
 * (docs/DESIGN.md, "Guard arming").  fentry hooks cost nothing while no
 * socket is tracked: the agent never idles them (idle_sec 0).
 * Where nothing is local that is a cost with no use, so:
 *
 *   - armed at start (the first local connections pair at once);
 *   - disarmed once the SOCKHASH has been empty for idle_sec: the data
 *     plane is told first (guard_state.armed = 0: no socket may enter),
 *     every BPF program that may have read the old value is waited for
 *     (bpf_wait_programs), and only if the map is still empty are the
 *     hooks detached; else it stays armed;
 *   - re-armed when a socket wanted in (guard_wakeup): hooks first,
 *     then guard_state.armed = 1.  That connection stays on TCP
 *     (fallbacks{arming}); the next ones pair.
 *
 * So a socket is in the SOCKHASH only while the hooks are attached.
 */
#ifndef NGX_SOCKMAP_ARMING_H
#define NGX_SOCKMAP_ARMING_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include "maps.h"

struct guard;
struct ring_buffer;

struct guard_arming {
	struct guard *guard;
	struct ring_buffer *rb; /* guard_wakeup */
	int state_fd;           /* guard_state */
	int sock_hash_fd;
	unsigned int idle_sec;  /* 0: never disarm */
	time_t empty_since;     /* CLOCK_MONOTONIC s; 0: the map is not empty */
	bool armed;
	bool woken;
	uint64_t arms;          /* times armed again after idling */
};

/* Arm now and watch the wake-ups (the data plane's guard_state,
 * guard_wakeup and sock_hash of maps); idle_sec applies to tracepoint
 * hooks only.  0 or -errno. */
int arming_start(struct guard_arming *a, struct guard *g, const struct agent_maps *maps,
		 unsigned int idle_sec);
int arming_epoll_fd(const struct guard_arming *a);
/* A socket wanted in: arm. */
void arming_on_wakeup(struct guard_arming *a);
/* Once a tick: disarm after idle_sec of an empty SOCKHASH (tracked: the
 * data plane's count of sockets in it, sockets_added - sockets_closed). */
void arming_tick(struct guard_arming *a, __u64 tracked);
/* The agent leaves: no socket may enter without it (a pinned data plane
 * outlives the agent; the tracepoints don't). */
void arming_stop(struct guard_arming *a);

#endif

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "accel.h"
#include "bpfutil.h"
#include "guard.h"
#include "arming.h"
#include "log.h"

/* CLOCK_MONOTONIC, the clock of bpf_ktime_get_ns */
static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static time_t now_sec(void)
{
	return now_ns() / 1000000000ULL;
}

/* armed, and when, which the data plane checks against GUARD_ALIVE_NS */
static int write_state(const struct guard_arming *a, bool armed)
{
	struct guard_state gs = { .alive_ns = now_ns() };
	__u32 zero = 0;

	/* a 32-bit program's exec disarmed it (guard.bpf.c ia32_exec):
	 * its hook first */
	if (armed) {
		guard_ia32_sync(a->guard);
		gs.armed = 1 | (guard_sees_ia32(a->guard) ? GUARD_ARMED_IA32 : 0);
	}

	return bpf_map_update_elem(a->state_fd, &zero, &gs, BPF_ANY) ? -errno : 0;
}

static bool sock_hash_empty(const struct guard_arming *a)
{
	struct sock_id key;

	return bpf_map_get_next_key(a->sock_hash_fd, NULL, &key) && errno == ENOENT;
}

static int arm(struct guard_arming *a)
{
	int err;

	if (a->armed)
		return write_state(a, true); /* clears a late 'wanted' */
	/* the hooks before the data plane may insert anything */
	err = guard_arm(a->guard);
	if (err) {
		pr_warn("attaching the guard's hooks failed (%s): local connections stay on TCP\n",
			strerror(-err));
		return err;
	}
	err = write_state(a, true);
	if (err) {
		guard_disarm(a->guard);
		return err;
	}
	a->armed = true;
	a->empty_since = 0;
	return 0;
}

/* The record says nothing more than "wanted": guard_state has it. */
static int take_wakeup(void *ctx, void *data, size_t size)
{
	(void)ctx, (void)data, (void)size;
	return 0;
}

int arming_start(struct guard_arming *a, struct guard *g, const struct agent_maps *maps,
		 unsigned int idle_sec)
{
	int err;

	memset(a, 0, sizeof(*a));
	a->guard = g;
	a->state_fd = maps->fd[MAP_GUARD_STATE];
	a->sock_hash_fd = maps->fd[MAP_SOCK_HASH];
	/* idling only saves the tracepoints' syscall tax: fentry hooks run
	 * for TCP splices and sends on sockets with a psock only, so they stay */
	a->idle_sec = g->hooks == GUARD_HOOKS_TRACEPOINTS ? idle_sec : 0;
	err = arm(a);
	if (err)
		return err;
	a->rb = ring_buffer__new(maps->fd[MAP_GUARD_WAKEUP], take_wakeup, NULL, NULL);
	return a->rb ? 0 : -errno;
}

int arming_epoll_fd(const struct guard_arming *a)
{
	return a->rb ? ring_buffer__epoll_fd(a->rb) : -1;
}

void arming_on_wakeup(struct guard_arming *a)
{
	ring_buffer__consume(a->rb);
	if (a->armed) {
		write_state(a, true); /* a socket found it stale: renew */
		return;
	}
	if (!arm(a)) {
		a->arms++;
		pr_info("guard armed: a local connection wanted in\n");
	}
}

static void disarm(struct guard_arming *a)
{
	int err;

	if (write_state(a, false))
		return;
	/* a sock_ops program that read armed = 1 before the write may still
	 * be inserting: wait for every running one (they are non-sleepable,
	 * kernel/bpf/syscall.c maybe_wait_bpf_programs) */
	err = bpf_wait_programs();
	if (err || !sock_hash_empty(a)) {
		if (err)
			pr_warn("waiting for running BPF programs failed (%s): guard stays armed\n",
				strerror(-err));
		write_state(a, true);
		a->empty_since = 0;
		return;
	}
	guard_disarm(a->guard);
	a->armed = false;
	pr_info("guard idle: no tracked socket for %u s, syscall tracepoints detached\n",
		a->idle_sec);
}

void arming_tick(struct guard_arming *a, __u64 tracked)
{
	time_t now = now_sec();

	if (!a->rb)
		return;
	if (!a->armed) {
		struct guard_state gs;
		__u32 zero = 0;

		/* a wake-up the ring dropped */
		if (!bpf_map_lookup_elem(a->state_fd, &zero, &gs) && gs.wanted)
			arming_on_wakeup(a);
		return;
	}
	write_state(a, true); /* alive: GUARD_ALIVE_NS */
	if (!a->idle_sec)
		return;
	/* The data plane's count, not the map: on an empty map get_next_key
	 * visits every bucket (htab_map_get_next_key, kernel/bpf/hashtab.c),
	 * half a millisecond a tick at 512k.  disarm() asks the map itself,
	 * once, after the programs in flight are done. */
	if (tracked) {
		a->empty_since = 0;
		return;
	}
	if (!a->empty_since)
		a->empty_since = now;
	else if (now - a->empty_since >= (time_t)a->idle_sec)
		disarm(a);
}

void arming_stop(struct guard_arming *a)
{
	if (!a->rb)
		return;
	write_state(a, false);
	ring_buffer__free(a->rb);
	a->rb = NULL;
}

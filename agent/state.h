/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * How `status`, `pause` and `resume` reach a running agent: the agent writes
 * RUN_DIR/agent.state (its pid, the ids of its maps, its cgroups) and holds
 * an flock on RUN_DIR/agent.lock.  Other commands open the maps by id (and
 * check their names, ids are reused) or, with no live agent, from the pins of
 * a --pin run.  No control protocol: the maps are the interface.
 */
#ifndef NGX_SOCKMAP_STATE_H
#define NGX_SOCKMAP_STATE_H

#include <stdbool.h>
#include "target.h"

#define RUN_DIR "/run/ngx-sockmap"

/* RUN_DIR, or $NGX_SOCKMAP_RUN_DIR: a second agent for development and
 * tests (one per run dir; the data planes must not share cgroups). */
const char *run_dir(void);

struct agent_maps {
	int stats_fd;
	int config_fd;
	int sock_hash_fd;
	int endpoints_fd;
	/* telemetry: -1 when absent (pkt_arena, src_stats: only with --xdp) */
	int conn_arena_fd;
	int pkt_arena_fd;
	int src_stats_fd;
};
#define AGENT_MAPS_N 7
#define AGENT_MAPS_INIT { -1, -1, -1, -1, -1, -1, -1 }

struct selftest_line {
	char name[24];
	char result[8];       /* pass, FAIL, skip */
	char detail[96];
};

struct agent_info {
	int pid;              /* 0: no live agent (pinned state only) */
	bool pinned;
	bool selftest_blocked; /* a critical self-test failed: kept paused */
	struct cg_target cgroups[64];
	int n_cgroups;
	struct selftest_line selftest[8];
	int n_selftest;
	struct {
		char name[16];
		char mode[8];   /* native, generic */
	} xdp[16];
	int n_xdp;
	char metrics[64];       /* listen address, "" when off */
	/* where each event ring sits in its arena (bytes from the start of
	 * the mapping): `top` maps the arenas by id and reads them in place */
	unsigned long conn_ring_off, pkt_ring_off;
	/* and where the agent mapped each arena: a second process must map an
	 * arena at the same address (kernel/bpf/arena.c, arena_map_mmap) */
	unsigned long conn_arena_addr, pkt_arena_addr;
};

/* Take the single-agent lock.  Returns the lock fd, or -EBUSY with the
 * other agent's pid in *other_pid. */
int state_lock(int *other_pid);
/* Write agent.state atomically (temp file + rename). */
int state_write(const struct agent_info *info, const struct agent_maps *ids_from_fds);
void state_remove(int lock_fd);
/* Open the maps of the running agent, else of the pinned data plane.
 * 0, or -ENOENT with a message in err. */
int state_open(struct agent_maps *m, struct agent_info *info, char *err, size_t errlen);
void state_close(struct agent_maps *m);

#endif

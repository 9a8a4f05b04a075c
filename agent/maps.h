/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The maps of a running agent that other commands (status, pause, top)
 * reach: the agent publishes their ids in agent.state, readers open them by
 * id and check the name.  The names are the maps' own names in the BPF
 * objects: dataplane.c and observer.c expand these lists against their
 * skeletons (skel->maps.NAME), so a name that is not a map of that object
 * does not compile.
 */
#ifndef NGX_SOCKMAP_MAPS_H
#define NGX_SOCKMAP_MAPS_H

/* X(ENUMERATOR, map_name) */
#define DATAPLANE_MAPS(X)                     \
	X(MAP_STATS, accel_stats)             \
	X(MAP_CONFIG, accel_config)           \
	X(MAP_SOCK_HASH, sock_hash)           \
	X(MAP_ENDPOINTS, endpoints)           \
	X(MAP_CONN_ARENA, conn_arena)         \
	X(MAP_GAUGES, agent_gauges)           \
	X(MAP_LOCAL_ADDRS, local_addrs)       \
	X(MAP_RESETS, reset_requests)         \
	X(MAP_RESET_BACKLOG, reset_backlog)   \
	X(MAP_GUARD_STATE, guard_state)       \
	X(MAP_GUARD_WAKEUP, guard_wakeup)     \
	X(MAP_SK_STATE, sk_state)             \
	X(MAP_SERVICE_PROFILES, service_profiles)
#define OBSERVER_MAPS(X)                      \
	X(MAP_PKT_ARENA, pkt_arena)           \
	X(MAP_SRC_STATS, src_stats)

#define MAP_ENUM(e, name) e,
#define MAP_NAME(e, name) [e] = #name,

enum agent_map { DATAPLANE_MAPS(MAP_ENUM) OBSERVER_MAPS(MAP_ENUM) MAP__MAX };

static const char *const agent_map_names[MAP__MAX] = {
	DATAPLANE_MAPS(MAP_NAME) OBSERVER_MAPS(MAP_NAME)
};

/* fd of each map; -1 where absent (no --xdp: no observer maps). */
struct agent_maps {
	int fd[MAP__MAX];
};

static inline void agent_maps_init(struct agent_maps *m)
{
	int i;

	for (i = 0; i < MAP__MAX; i++)
		m->fd[i] = -1;
}

#endif

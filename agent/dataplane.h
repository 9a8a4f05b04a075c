/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The data plane (bpf/accel.bpf.c): open -> configure -> load -> attach ->
 * tear down.  The only owner of its skeleton: everything else gets what it
 * needs (map fds, the event ring, program fds) from the functions below.
 */
#ifndef NGX_SOCKMAP_DATAPLANE_H
#define NGX_SOCKMAP_DATAPLANE_H

#include <stdbool.h>
#include <stdint.h>
#include "accel.h"   /* struct sock_key (sockkey.h) */
#include "bpfutil.h" /* struct prog_ref */
#include "guard.h"
#include "maps.h"
#include "nonce_pool.h"
#include "target.h"

struct accel_bpf;
struct bpf_link;
struct event_ring;

/* What the data plane is told at load time (read-only for its life). */
struct dataplane_params {
	bool ports_all;               /* track every port, else port_bits */
	const uint64_t *port_bits;    /* 65536 bits, when !ports_all */
	unsigned int short_conn_msgs; /* see struct service_profile; 0: off */
	bool slow_reader_fallback;    /* selftest proved the TCP fallback safe */
	uint64_t max_unread;          /* per reader, bytes; 0: no cap */
	bool check_local_addrs;       /* insert only peers in tracked netns */
	bool watch_unread;            /* keep unread_watch (enforcer: UNREAD_WATCH) */
	bool guard;                   /* load the guard (the agent; not the selftest):
				       * dp->guard.skel stays NULL where even its ULP
				       * refusal fails, hooks NONE where only that loads */
	bool splice_guard;            /* end connections whose reader splices */
	int guard_hooks;              /* enum guard_hooks: what to try */
	bool pin;                     /* pin maps and links under PIN_DIR */
	bool nginx_vars;              /* attach the guard's getsockopt too
				       * (bpf/sockmap_query.h) */
	uint32_t max_sockets;         /* size of sock_hash, endpoints, unread_watch;
				       * 0: the compiled ACCEL_MAX_SOCKETS */
	bool max_sockets_given;       /* by the user: a pinned data plane of
				       * another size is refused, not adopted */
	bool selftest_knobs;          /* the self-test's private copy only */
	unsigned int test_claim_delay; /* tests only: widen the claim race */
	uint64_t hazard_ttl_ns;       /* tests only: a learned hazard's time;
				       * 0: HAZARD_TTL_NS */
};

/* An endpoint that existed when a cgroup was detached: maybe an orphan
 * (dataplane_sweep_endpoints). */
struct endpoint_suspect {
	struct sock_key key;
	__u64 cookie;
	__u32 isn;
};

struct dataplane {
	struct accel_bpf *skel;
	struct guard guard;           /* loaded when params.guard */
	struct bpf_link *links[MAX_TARGETS];        /* sock_ops */
	struct bpf_link *ulp_links[MAX_TARGETS];    /* the guard's setsockopt */
	struct bpf_link *query_links[MAX_TARGETS];  /* its getsockopt */
	struct cg_target targets[MAX_TARGETS];
	int n_targets;
	bool msg_attached;
	bool pinned;
	bool nginx_vars;              /* params.nginx_vars */
	bool events_in_arena;         /* else the conn_events ring buffer */
	struct nonce_pool nonces;     /* filled from getrandom(2) after load */
	uint32_t max_sockets;         /* what sock_hash holds (after load) */
	struct endpoint_suspect *suspects; /* taken at each detach */
	size_t n_suspects;
};

/* Probe the kernel for what the data plane needs.  0, or -EOPNOTSUPP /
 * -EPERM with one line naming what is missing. */
int dataplane_probe_kernel(char *err, size_t errlen);
/* Open, configure and load.  With pin, maps are pinned under PIN_DIR, and
 * maps already pinned there are reused (a restart keeps the state); a
 * pinned sock_hash of another size than p->max_sockets is adopted at its
 * size, or refused when the size was given (maps can't be resized). */
int dataplane_load(struct dataplane *dp, const struct dataplane_params *p);
/* Top up the nonce pool new active ends draw from (nonce_pool.h): at load,
 * on every tick and on its wake-ups (dp->nonces).  How many were added, or
 * -errno. */
int dataplane_refill_nonces(struct dataplane *dp);
/* Before anything is loaded: can we attach to this cgroup (not attached
 * by another agent; our own pins count as ours with adopt_pins)?  0, or
 * -EBUSY with one line in err. */
int dataplane_check_cgroup(const struct cg_target *t, bool adopt_pins, char *err, size_t errlen);
/* Detach target i (its cgroup is gone or moved) and free its slot. */
void dataplane_detach_cgroup(struct dataplane *dp, int i);
/* Attach sk_msg to the sock_hash. */
int dataplane_attach_msg(struct dataplane *dp);
/* Attach sock_ops to a cgroup through a bpf_link (detached when the agent
 * dies unless pinned).  Refuses a cgroup that already runs our sock_ops
 * unless it is our own pinned link, which is adopted. */
int dataplane_attach_cgroup(struct dataplane *dp, const struct cg_target *t, char *err,
			    size_t errlen);
/* Detach what is not pinned, free everything.  Sockets already in the
 * sock_hash keep their programs (the kernel copied them into the psock) and
 * keep redirecting until they close. */
void dataplane_destroy(struct dataplane *dp);

/* What others read.  fds stay owned by the data plane. */
void dataplane_maps(const struct dataplane *dp, struct agent_maps *m);
/* Its object, for the objects that share its maps (guard, enforcer). */
const struct bpf_object *dataplane_object(const struct dataplane *dp);
struct feed_source;
/* Where its connection events come from (arena ring or ring buffer). */
void dataplane_events(const struct dataplane *dp, struct feed_source *src);
/* Where the ring's arena is mapped and the ring sits in it (for `top`). */
void dataplane_ring_place(const struct dataplane *dp, unsigned long *addr, unsigned long *off);
/* Its programs, for run-time statistics (see object_progs). */
int dataplane_progs(const struct dataplane *dp, struct prog_ref *out, int max);

/* Pause or resume tracking of new connections through the config map. */
int dataplane_set_paused(int config_fd, bool paused);
/* Remove endpoints whose owner socket is gone without its close being seen
 * (its cgroup was detached first); returns how many. */
int dataplane_sweep_endpoints(struct dataplane *dp);
/* Track only sockets of the network namespace with this cookie (0: all). */
int dataplane_set_netns_only(int config_fd, __u64 cookie);

/* A pinned data plane (left by `run --pin`). */
bool dataplane_pinned_exists(void);
/* 0 when PIN_DIR is absent or as the agent makes it (its user's, nobody
 * else may write); -EPERM with the reason in buf when it was planted. */
int dataplane_pin_dir_trusted(char *buf, size_t len);
/* Open its maps (those it pins) into m.  0, or -ENOENT. */
int dataplane_open_pinned(struct agent_maps *m);
/* Remove it.  Objects removed, -ENOENT when nothing is pinned, -EPERM
 * with why in buf when PIN_DIR was planted (left alone), or -errno. */
int dataplane_unpin_all(char *why, size_t len);

#endif

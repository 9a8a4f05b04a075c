/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Ending connections the data plane can't deliver as TCP would, and
 * watching what readers leave unread: with the strongest mechanism the
 * host allows, chosen at start (enforcer_plan) and named in status.
 *
 * Ending a connection (reset requests from the data plane and the guard,
 * through the reset_requests ring buffer: a reader past --max-unread, a
 * splicing reader, MSG_OOB where the TCP fallback is unsafe; and the
 * budget's own):
 *   iter/tcp    the reset_doomed iterator (sockiter.h) in every network
 *               namespace of tracked processes: bpf_sock_destroy, the
 *               socket's sends stopped and its service endpoint
 *               learned in BPF, its peer named and ended by the next
 *               pass wherever it lives;
 *   sock_diag   where tracing programs are refused: each socket is
 *               looked up by the address the request gives and its
 *               cookie, in each such namespace until found (an exact
 *               lookup: what a namespace holds besides costs nothing),
 *               and SOCK_DESTROY ends it (sock_diag.h).  The request
 *               names the peer (the data plane's do; the guard's splice
 *               hooks can't, and the RST of the first end tells the
 *               peer), which is ended, and counted in its place when
 *               the request's own socket is gone; syscall_ops counts the
 *               reset and learns the service endpoint (the request's,
 *               else the ended socket's listened-on end).  A lookup that
 *               fails is said and counted (reset_lookups_failed).
 * Either way each reset is logged with both addresses, and both ends see
 * an error.
 *
 * Unread bytes, every tick (the gauges and, past the host-wide budget,
 * resets of the largest until the total is back under it):
 *   iter/sockmap  the scan_unread iterator over the SOCKHASH;
 *   watch         where tracing programs are refused: the data plane keeps
 *                 unread_watch (socket -> psock) and syscall_ops' scan
 *                 reads each psock's count.
 */
#ifndef NGX_SOCKMAP_ENFORCER_H
#define NGX_SOCKMAP_ENFORCER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "maps.h"
#include "accel.h" /* struct reset_tuple */
#include "netns.h"
#include "sockiter.h"
#include "syscall_ops.h"

struct bpf_object;
struct ring_buffer;

enum reset_mech { RESETS_AUTO, RESETS_ITER, RESETS_SOCK_DIAG, RESETS__MAX };
enum unread_mech { UNREAD_AUTO, UNREAD_ITER, UNREAD_WATCH, UNREAD__MAX };
/* option words (--resets, --unread-scan) */
extern const char *const reset_mech_opts[RESETS__MAX];
extern const char *const unread_mech_opts[UNREAD__MAX];
/* what status names them */
extern const char *const reset_mech_names[RESETS__MAX];
extern const char *const unread_mech_names[UNREAD__MAX];

/* What the enforcer will use, decided before the data plane loads (the
 * data plane keeps unread_watch only for UNREAD_WATCH). */
struct enforce_plan {
	enum reset_mech resets;
	enum unread_mech unread;
	int reset_iter_err;     /* errno of reset_doomed's refusal; 0: loaded or not tried */
	int scan_iter_err;      /* likewise scan_unread's */
	char resets_why[80];    /* why not iter/tcp; "" when iter/tcp */
	char unread_why[80];    /* why not iter/sockmap */
};

/* Choose from what was asked (AUTO: the iterators where this host loads
 * them, else sock_diag and watch).  0, or -errno (with a message) when
 * an explicit --resets iter or --unread-scan iter can't be honoured. */
int enforcer_plan(enum reset_mech resets, enum unread_mech unread, struct enforce_plan *plan);

struct reset_ask {
	uint64_t cookie, peer;      /* peer 0: not known */
	uint32_t reason;
	struct service_key service; /* its service endpoint, as the data plane
				     * learns it; port 0: not known */
	struct reset_tuple sock;    /* cookie's address (sock_diag looks it
				     * up); family 0: not known */
};

struct enforcer {
	struct enforce_plan plan;
	struct sockiter it;      /* loaded for iter/tcp or iter/sockmap */
	struct syscall_ops so;   /* loaded for sock_diag or watch */
	struct ring_buffer *rb;  /* reset_requests */
	int backlog_fd;          /* reset_backlog: what the ring had no room for */
	int stats_fd;            /* accel_stats: reset_requests_deferred */
	__u64 deferred_seen;     /* reset_requests_deferred at the last walk */
	uint64_t max_unread;     /* per socket (shown; the data plane enforces it) */
	uint64_t budget;         /* host-wide */
	const struct netns_ref *ns; /* where tracked processes live (runtime's) */
	size_t n_ns;
	uint64_t lookups_failed; /* sock_diag lookups of sockets to end that
				  * failed (reset_lookups_failed) */
	/* requests taken from the ring, not yet carried out */
	struct reset_ask *pending;
	size_t n_pending, cap_pending;
};

/* Load what the plan needs, sharing the data plane's maps (its
 * sock_hash, reset_requests and reset_backlog of maps), and read its reset
 * requests.  0 or -errno (nothing to end connections with). */
int enforcer_start(struct enforcer *e, const struct enforce_plan *plan,
		   const struct bpf_object *dataplane, const struct agent_maps *maps,
		   uint64_t max_unread, uint64_t budget);
/* Where tracked processes live now: the namespaces it resets in (the
 * caller's array, kept until the next call). */
void enforcer_set_namespaces(struct enforcer *e, const struct netns_ref *ns, size_t n);
int enforcer_epoll_fd(const struct enforcer *e);
/* Requests are ready: take and carry them out. */
void enforcer_on_requests(struct enforcer *e);
/* Once a tick, with the data plane's counters read just before (st; NULL:
 * not read, every map is walked):
 * take what the ring missed, measure unread bytes into g's unread fields
 * (the rest of the gauges are their owners'), keep the budget. */
struct agent_gauges;
void enforcer_tick(struct enforcer *e, const struct accel_stats *st, struct agent_gauges *g);
void enforcer_stop(struct enforcer *e);
int enforcer_progs(const struct enforcer *e, struct prog_ref *out, int max);
/* The default host-wide budget: half of tcp_mem's pressure threshold. */
uint64_t enforcer_default_budget(void);

/* The self-test's reset check: end one end of a loopback connection
 * whose sockets are in sock_hash_fd (they have psocks, as tracked ones
 * do) with mech, and see both ends get an error.  0, or -errno with why
 * in detail. */
int enforcer_check_reset(enum reset_mech mech, const struct bpf_object *dataplane,
			 int sock_hash_fd, char *detail, size_t len);

#endif

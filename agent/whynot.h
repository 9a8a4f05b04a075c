/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * "Why not this upstream?": nginx's live TCP connections, each with its
 * verdict (redirected, or TCP and why), and a summary per service
 * endpoint (the server's address:port, the side struct service_key
 * names).  Read from what the data plane already keeps, no new write on
 * its hot path: one sock_diag dump of the namespace the caller is in,
 * with each socket's sk_state value (INET_DIAG_REQ_SK_BPF_STORAGES), and
 * the service_profiles entries of the endpoints whose connections were
 * not tracked (what hazard kept them off).  `status`, `top` and /metrics
 * show it.
 */
#ifndef NGX_SOCKMAP_WHYNOT_H
#define NGX_SOCKMAP_WHYNOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <json-c/json.h>
#include "accel.h"
#include "counters.h"
#include "maps.h"
#include "state.h"

/*
 * Why a connection is on TCP: the data plane's own reasons first (enum
 * fallback_reason, then enum skip_reason, their names as the counters
 * fallbacks{reason} and skipped{reason} have them), then what only the
 * agent can tell, the data plane never having seen the socket.
 */
#define WHYNOT_EXTRA_REASONS(X)                                                     \
	X(WN_CGROUP, "cgroup")       /* its peer's cgroup is not attached */          \
	X(WN_PENDING, "pending")     /* registered, nothing sent yet: undecided */     \
	X(WN_UNTRACKED, "untracked") /* made before the agent attached, or a port  \
				      * --ports leaves out */

enum whynot_extra { WN__BASE = FB__MAX + SKIP__MAX - 1, WHYNOT_EXTRA_REASONS(NAMES_ENUM) WN__MAX };

#define WN_SKIP(r) (FB__MAX + (r)) /* an enum skip_reason as a whynot reason */
#define WN_REDIRECTED (-1)

/* Services summarised, most connections first; the rest are counted in
 * whynot.services_dropped (bounded output, bounded metrics). */
#define WHYNOT_SERVICES_MAX 4096
/* /metrics and top name this many services only (top-K by connections):
 * a label set bounded whatever the upstreams. */
#define WHYNOT_TOP_SERVICES 10

struct whynot_conn {
	uint8_t local[16], remote[16]; /* v4 as ::ffff:a.b.c.d */
	uint16_t lport, rport;
	uint64_t cookie, cgroup;
	bool passive;       /* the server's end */
	int reason;         /* WN_REDIRECTED, or a reason (above) */
	uint32_t hazards;   /* reason hazard: 1 << enum reset_reason, 1 << PH_ULP */
	int svc;            /* index in whynot.svc */
};

struct whynot_service {
	uint8_t addr[16];
	uint16_t port;
	unsigned int conns, redirected;
	unsigned int tcp[WN__MAX]; /* by reason */
	uint32_t hazards;           /* learned, less than HAZARD_TTL_NS ago */
	double hazard_age_s;        /* since the last one was learned */
};

struct whynot {
	struct whynot_conn *conns;
	size_t n_conns;
	struct whynot_service *svc;
	size_t n_svc, services_dropped;
	bool capped;   /* more sockets than one dump takes: the rest unseen */
};

/* One scan of the caller's network namespace: the established
 * connections of the attached cgroups (info->cgroups).  c: the counters
 * now (paused, how full sock_hash is).  0 or -errno (w is empty then). */
int whynot_scan(const struct agent_maps *m, const struct agent_info *info,
		const struct counters *c, struct whynot *w);
void whynot_free(struct whynot *w);
const char *whynot_reason_name(int reason);
/* "127.0.0.1:8080", "[::1]:8080" */
void whynot_endpoint_str(const uint8_t addr[16], uint16_t port, char *buf, size_t len);
/* services (at most max_svc) and connections (at most max_conns) */
json_object *whynot_json(const struct whynot *w, size_t max_svc, size_t max_conns);
/* the top services, one line each in width columns */
void whynot_print_services(FILE *o, const struct whynot *w, size_t max, int width);
/* each connection (at most max): its two ends, its cookie, its verdict */
void whynot_print_connections(FILE *o, const struct whynot *w, size_t max);
/* ngx_sockmap_service_connections{service,verdict,reason}, top-K only */
void whynot_prometheus(FILE *o, const struct whynot *w);

#endif

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Prometheus text exposition on /metrics (libmicrohttpd), /healthz. */
#ifndef NGX_SOCKMAP_METRICS_H
#define NGX_SOCKMAP_METRICS_H

#include <stdio.h>
#include <sys/socket.h>
#include "maps.h"
#include "state.h"

struct dataplane;
struct xdp_observer;
struct event_feed;
struct topk_window;
struct MHD_Daemon;
struct metrics_conn;

/* Everything /metrics reads; owned by the run loop. */
struct enforcer;

struct metrics_src {
	const struct agent_maps *maps;
	const struct agent_info *info;
	const struct dataplane *dp;           /* program run stats */
	const struct enforcer *enforcer;      /* likewise, its programs */
	const struct xdp_observer *xdp;       /* NULL without --xdp */
	const struct event_feed *feed;        /* event rings read so far */
	const struct topk_window *topk;       /* NULL without --xdp */
};

struct metrics_server {
	struct MHD_Daemon *daemon;
	int epoll_fd;  /* add to the run loop; call metrics_serve() when ready */
	const struct metrics_src *src;
	struct metrics_conn *conns;  /* open connections, timed (metrics.c) */
};

int metrics_start(struct metrics_server *m, const struct sockaddr *addr, socklen_t len,
		  const struct metrics_src *src, char *err, size_t errlen);
/* Runs libmicrohttpd and ends requests past their time: call it on
 * epoll_fd's readiness and on every tick. */
void metrics_serve(struct metrics_server *m);
void metrics_stop(struct metrics_server *m);
/* The exposition text itself (also used by tests through the endpoint). */
void metrics_render(FILE *out, const struct metrics_src *src);

/* What a request gets, from its method and URL (the path as
 * libmicrohttpd hands it to the handler).  Pure: the fuzz target feeds
 * it any bytes. */
enum metrics_page { MP_METRICS, MP_HEALTHZ, MP_NOT_FOUND, MP_NOT_ALLOWED };
enum metrics_page metrics_route(const char *method, const char *url);

#endif

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Ask the ngx-sockmap data plane what it decided for one of this worker's
 * own sockets (bpf/sockmap_query.h): the word $sockmap and
 * $sockmap_upstream log.  Shared by the http and stream modules.
 */

#ifndef _NGX_SOCKMAP_QUERY_H_INCLUDED_
#define _NGX_SOCKMAP_QUERY_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>


/*
 * "redirected", "paired", "pending", "not_tracked", a fallback reason
 * ("no_peer", "hazard", ...), "reset_" and a reset reason, "no_agent"
 * (nothing answers in this worker's cgroup: said once per worker, at
 * notice level, naming @who asked first: "http" or "stream"; nginx loads
 * modules RTLD_GLOBAL, so both use one copy of this), "not_tcp", or
 * "error".  Points to static text or to @pool's memory.  Returns 1 when
 * the answer can't change any more for this socket's life (the stream
 * module stops asking), else 0.
 */
ngx_uint_t ngx_sockmap_query(ngx_connection_t *c, ngx_pool_t *pool,
    ngx_log_t *log, const char *who, ngx_str_t *out);


#endif /* _NGX_SOCKMAP_QUERY_H_INCLUDED_ */

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * One getsockopt(2) on the worker's own socket, answered by the agent's
 * cgroup/getsockopt program (bpf/guard.bpf.c sockopt_query) from what
 * the data plane keeps for that socket.  Workers need no privilege: a
 * process can only ask about descriptors it holds.
 */

#include <ngx_config.h>
#include <ngx_core.h>

#include "accel.h"
#include "sockmap_query.h"
#include "ngx_sockmap_query.h"


static ngx_str_t  ngx_sockmap_states[SQ__MAX] = {
    [SQ_NOT_TRACKED] = ngx_string("not_tracked"),
    [SQ_PENDING] = ngx_string("pending"),
    [SQ_PAIRED] = ngx_string("paired"),
    [SQ_REDIRECTED] = ngx_string("redirected"),
    [SQ_SPLICED] = ngx_string("spliced"),
};

static ngx_str_t  ngx_sockmap_no_agent = ngx_string("no_agent");
static ngx_str_t  ngx_sockmap_not_tcp = ngx_string("not_tcp");
static ngx_str_t  ngx_sockmap_error = ngx_string("error");


ngx_uint_t
ngx_sockmap_query(ngx_connection_t *c, ngx_pool_t *pool, ngx_log_t *log,
    const char *who, ngx_str_t *out)
{
    u_char                *p;
    socklen_t              len;
    ngx_err_t              err;
    const char            *name;
    struct sockmap_query   q;

    static ngx_uint_t      said_no_agent;

    /* an upstream connection has no c->sockaddr (its peer's is in
     * ngx_peer_connection_t): a unix socket there is told by its errno */
    if (c->type != SOCK_STREAM
        || (c->sockaddr
            && c->sockaddr->sa_family != AF_INET
            && c->sockaddr->sa_family != AF_INET6))
    {
        *out = ngx_sockmap_not_tcp;
        return 1;
    }

    ngx_memzero(&q, sizeof(q));
    len = sizeof(q);

    if (getsockopt(c->fd, SOCKMAP_QUERY_LEVEL, SOCKMAP_QUERY_OPTNAME,
                   &q, &len)
        == -1)
    {
        err = ngx_socket_errno;

        if (err == NGX_ENOPROTOOPT) {
            /* the kernel's own answer: no program in our cgroup */
            if (!said_no_agent) {
                said_no_agent = 1;
                ngx_log_error(NGX_LOG_NOTICE, log, 0,
                              "sockmap: no ngx-sockmap agent answers in "
                              "this worker's cgroup (none attached, or run "
                              "without --nginx-vars): %s $sockmap says "
                              "\"no_agent\"", who);
            }

            /* final: an agent started later never tracks a socket
             * connected before it */
            *out = ngx_sockmap_no_agent;
            return 1;
        }

        if (err == NGX_EOPNOTSUPP) {
            /* SOL_TCP on a unix socket, without the agent */
            *out = ngx_sockmap_not_tcp;
            return 1;
        }

        ngx_log_error(NGX_LOG_INFO, log, err, "sockmap: getsockopt() failed");
        *out = ngx_sockmap_error;
        return 1;
    }

    /* an agent of version 1 answers the first 16 bytes */
    if (len < SOCKMAP_QUERY_V1_SIZE || q.version < 1
        || q.version > SOCKMAP_QUERY_VERSION
        || (q.version > 1 && len < sizeof(q)))
    {
        ngx_log_error(NGX_LOG_INFO, log, 0,
                      "sockmap: unknown answer (version %uD, %uD bytes)",
                      (uint32_t) q.version, (uint32_t) len);
        *out = ngx_sockmap_error;
        return 1;
    }

    switch (q.state) {

    case SQ_PENDING:
    case SQ_PAIRED:
        *out = ngx_sockmap_states[q.state];
        return 0;

    case SQ_NOT_TRACKED:
    case SQ_REDIRECTED:
    case SQ_SPLICED:
        *out = ngx_sockmap_states[q.state];
        return 1;

    case SQ_FALLBACK:
        if (q.reason >= FB__MAX) {
            break;
        }

        name = fallback_names[q.reason];
        out->len = ngx_strlen(name);
        out->data = (u_char *) name;
        return 1;

    case SQ_RESET:
        if (q.reason >= RS__MAX) {
            break;
        }

        name = reset_names[q.reason];
        len = sizeof("reset_") - 1 + ngx_strlen(name);

        p = ngx_pnalloc(pool, len);
        if (p == NULL) {
            *out = ngx_sockmap_error;
            return 0;
        }

        out->data = p;
        p = ngx_cpymem(p, "reset_", sizeof("reset_") - 1);
        ngx_memcpy(p, name, ngx_strlen(name));
        out->len = len;
        return 1;
    }

    ngx_log_error(NGX_LOG_INFO, log, 0,
                  "sockmap: unknown state %ud, reason %ud",
                  (ngx_uint_t) q.state, (ngx_uint_t) q.reason);
    *out = ngx_sockmap_error;
    return 1;
}

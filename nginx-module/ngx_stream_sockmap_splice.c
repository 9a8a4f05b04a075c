/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * sockmap_splice for stream{} sessions (ngx_stream_sockmap_splice.h).
 *
 * The data plane takes the session in three steps, each a setsockopt(2)
 * on this worker's own sockets (bpf/sockmap_splice.h): OFFER on the
 * client's connection once the upstream is connected, JOIN on the
 * upstream's once the data plane paired it (at nginx's first send on it,
 * or its first byte in), and a FENCE on the connection nginx just wrote
 * whenever it holds nothing of that direction: everything it read was
 * written (nginx's own counts: s->received and pc->sent, u->received and
 * c->sent).  Two kinds of bytes nginx writes upstream without counting
 * them in s->received, both first, in the chain of nginx's first write
 * towards the upstream (ngx_stream_proxy_init_upstream), before its relay
 * loop reads a byte: the PROXY protocol header (proxy_protocol on),
 * nginx's own, which the fences of that direction declare as added; and
 * what a preread phase such as ssl_preread read (nginx 1.22 reads it into
 * c->buffer without counting it), the client's, which the fences count
 * as read.  A session whose counts differ by anything else never has
 * agreeing counts: never joined, never spliced.  TLS on either side, rate limits and UDP are never offered.
 *
 * What passes nginx by is read back with the data plane's query
 * (bpf/sockmap_query.h, version 2: the agent runs with --nginx-vars) at
 * every event of either connection: added to nginx's counts, so that
 * $bytes_sent, $bytes_received, $upstream_bytes_sent,
 * $upstream_bytes_received and the "client/upstream" bytes of the
 * session's info line include it, and checked when proxy_timeout fires:
 * a session whose spliced bytes moved less than proxy_timeout ago is
 * given the rest of it; an idle one ends as nginx would have ended it.
 */

#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_stream.h>

#include "sockmap_query.h"
#include "sockmap_splice.h"
#include "ngx_stream_sockmap_splice.h"


/* JOINs tried before a session is given up (the upstream's first byte
 * either way pairs it or sends it to TCP) */
#define NGX_STREAM_SOCKMAP_SPLICE_JOINS  4


/*
 * The first two members of the proxy module's private server
 * configuration (src/stream/ngx_stream_proxy_module.c,
 * ngx_stream_proxy_srv_conf_t), unchanged since the stream module came
 * in nginx 1.9.0: the proxy_timeout a spliced session is held to.  This
 * module is built against the headers of the nginx it loads into
 * (nginx-dev, dh_nginx), whose proxy module is this one.
 */
typedef struct {
    ngx_msec_t  connect_timeout;
    ngx_msec_t  timeout;
} ngx_stream_sockmap_proxy_conf_head_t;

extern ngx_module_t  ngx_stream_proxy_module;


static void ngx_stream_sockmap_splice_handler(ngx_event_t *ev);


static ngx_int_t
ngx_stream_sockmap_splice_req(ngx_socket_t fd, uint32_t op, uint64_t relay,
    off_t read, off_t sent, off_t added)
{
    struct sockmap_splice  r;

    ngx_memzero(&r, sizeof(r));
    r.version = SOCKMAP_SPLICE_VERSION;
    r.op = op;
    r.relay = relay;
    r.read = read;
    r.sent = sent;
    r.added = added;

    if (setsockopt(fd, SOCKMAP_SPLICE_LEVEL, SOCKMAP_SPLICE_OPTNAME,
                   &r, sizeof(r))
        == -1)
    {
        return NGX_ERROR;
    }

    return NGX_OK;
}


static ngx_int_t
ngx_stream_sockmap_splice_query(ngx_connection_t *c, struct sockmap_query *q)
{
    socklen_t  len;

    ngx_memzero(q, sizeof(*q));
    len = sizeof(*q);

    if (getsockopt(c->fd, SOCKMAP_QUERY_LEVEL, SOCKMAP_QUERY_OPTNAME, q, &len)
        == -1
        || len < sizeof(*q) || q->version < 2)
    {
        return NGX_ERROR;
    }

    return NGX_OK;
}


static void
ngx_stream_sockmap_splice_never(ngx_stream_session_t *s,
    ngx_stream_sockmap_splice_t *sp, const char *why)
{
    sp->state = NGX_STREAM_SOCKMAP_SPLICE_NEVER;

    ngx_log_error(NGX_LOG_INFO, s->connection->log, 0,
                  "sockmap: session not spliced: %s", why);
}


/* Add what went past nginx since the last call to nginx's own counts. */
static void
ngx_stream_sockmap_splice_sync(ngx_stream_session_t *s,
    ngx_stream_sockmap_splice_t *sp, struct sockmap_query *q)
{
    off_t  up, down;

    up = (off_t) q->spliced_up - sp->synced_up;
    down = (off_t) q->spliced_down - sp->synced_down;

    if (up > 0) {
        s->received += up;
        sp->pc->sent += up;
        sp->synced_up += up;
    }

    if (down > 0) {
        s->upstream->received += down;
        s->connection->sent += down;
        sp->synced_down += down;
    }
}


static ngx_int_t
ngx_stream_sockmap_splice_offer(ngx_stream_session_t *s,
    ngx_stream_sockmap_splice_t *sp)
{
    socklen_t                len;
    ngx_connection_t        *c, *pc;
    ngx_stream_upstream_t   *u;
    struct sockmap_query     q;

    static ngx_uint_t        said_no_query;

    c = s->connection;
    u = s->upstream;
    pc = u->peer.connection;

    if (c->type != SOCK_STREAM) {
        ngx_stream_sockmap_splice_never(s, sp, "udp");
        return NGX_DECLINED;
    }

#if (NGX_SSL || NGX_COMPAT)
    if (c->ssl || pc->ssl) {
        ngx_stream_sockmap_splice_never(s, sp, "tls");
        return NGX_DECLINED;
    }
#endif

    if (u->upload_rate || u->download_rate) {
        ngx_stream_sockmap_splice_never(s, sp, "rate limits");
        return NGX_DECLINED;
    }

    /* without the query, nginx could neither count nor time what
     * passes it by: not offered at all */
    if (ngx_stream_sockmap_splice_query(c, &q) != NGX_OK) {
        if (!said_no_query) {
            said_no_query = 1;
            ngx_log_error(NGX_LOG_NOTICE, c->log, 0,
                          "sockmap: sockmap_splice is on, but no "
                          "ngx-sockmap agent answers the query in this "
                          "worker's cgroup (none attached, one before "
                          "version 2 of the query, or one run without "
                          "--nginx-vars): sessions are relayed by nginx");
        }

        ngx_stream_sockmap_splice_never(s, sp, "no agent answers queries");
        return NGX_DECLINED;
    }

    len = sizeof(sp->cookie);

    if (getsockopt(c->fd, SOL_SOCKET, SO_COOKIE, &sp->cookie, &len) == -1) {
        ngx_stream_sockmap_splice_never(s, sp, "no socket cookie");
        return NGX_DECLINED;
    }

    /* refused: the client is not a redirected socket here (remote,
     * unpaired, on TCP) */
    if (ngx_stream_sockmap_splice_req(c->fd, SPLICE_OFFER, 0, 0, 0, 0)
        != NGX_OK)
    {
        ngx_stream_sockmap_splice_never(s, sp, "client not redirected");
        return NGX_DECLINED;
    }

    sp->state = NGX_STREAM_SOCKMAP_SPLICE_OFFERED;

    return NGX_OK;
}


void
ngx_stream_sockmap_splice_first_up(ngx_stream_session_t *s,
    ngx_stream_sockmap_splice_t *sp, ngx_chain_t *in)
{
    off_t              size, pre;
    ngx_chain_t       *cl;
    ngx_connection_t  *c;

    if (sp->first_up_seen) {
        return;
    }

    sp->first_up_seen = 1;

    /* nginx read (and counted) a client byte before its first write
     * upstream: nothing uncounted went first */
    if (s->received) {
        return;
    }

    size = 0;

    for (cl = in; cl; cl = cl->next) {
        size += ngx_buf_size(cl->buf);
    }

    /* the preread bytes, still in c->buffer (the chain holds a copy of
     * that buffer); a preread phase that only peeked (1.25.5) left it
     * empty, and nginx reads and counts those bytes later */
    c = s->connection;
    pre = (c->buffer && c->buffer->last > c->buffer->pos)
          ? c->buffer->last - c->buffer->pos : 0;

    if (pre > size) {
        sp->first_up_unknown = 1;
        return;
    }

    sp->preread_up = pre;
    sp->added_up = size - pre;
}


static ngx_int_t
ngx_stream_sockmap_splice_join(ngx_stream_session_t *s,
    ngx_stream_sockmap_splice_t *sp)
{
    ngx_connection_t       *c, *pc;
    ngx_stream_upstream_t  *u;

    c = s->connection;
    u = s->upstream;
    pc = u->peer.connection;

    /* the upstream's pairing is decided at its first byte either way */
    if (pc->sent == 0 && u->received == 0) {
        return NGX_AGAIN;
    }

    /* nginx wrote more upstream than it read (preread included) and
     * than its own first bytes (ngx_stream_sockmap_splice_first_up):
     * counts that can never agree, no fence would pass, and joined the
     * session would pay a query per event */
    if (sp->first_up_unknown
        || pc->sent > s->received + sp->preread_up + sp->added_up)
    {
        ngx_stream_sockmap_splice_never(s, sp, "nginx adds bytes upstream");
        return NGX_DECLINED;
    }

    if (ngx_stream_sockmap_splice_req(pc->fd, SPLICE_JOIN, sp->cookie, 0, 0, 0)
        != NGX_OK)
    {
        if (++sp->joins >= NGX_STREAM_SOCKMAP_SPLICE_JOINS) {
            ngx_stream_sockmap_splice_never(s, sp, "upstream not redirected");
        }

        return NGX_AGAIN;
    }

    sp->state = NGX_STREAM_SOCKMAP_SPLICE_JOINED;
    sp->pc = pc;

    sp->read = c->read->handler;
    sp->write = c->write->handler;
    sp->up_read = pc->read->handler;
    sp->up_write = pc->write->handler;

    c->read->handler = ngx_stream_sockmap_splice_handler;
    c->write->handler = ngx_stream_sockmap_splice_handler;
    pc->read->handler = ngx_stream_sockmap_splice_handler;
    pc->write->handler = ngx_stream_sockmap_splice_handler;

    ngx_log_debug0(NGX_LOG_DEBUG_STREAM, c->log, 0, "sockmap: session joined");

    return NGX_OK;
}


/* Everything read was written (with nginx's own added bytes), and
 * something new since the last fence (*fenced: what was read then; -1
 * once refused: for good) */
static void
ngx_stream_sockmap_splice_fence(ngx_socket_t fd, off_t read, off_t sent,
    off_t added, off_t *fenced)
{
    if (read + added != sent || read == *fenced || *fenced == -1) {
        return;
    }

    *fenced = ngx_stream_sockmap_splice_req(fd, SPLICE_FENCE, 0, read, sent,
                                            added)
              == NGX_OK ? read : -1;
}


void
ngx_stream_sockmap_splice_pass(ngx_stream_session_t *s,
    ngx_stream_sockmap_splice_t *sp, ngx_uint_t from_upstream)
{
    ngx_connection_t       *c, *pc;
    ngx_stream_upstream_t  *u;

    switch (sp->state) {

    case NGX_STREAM_SOCKMAP_SPLICE_NEW:
        if (ngx_stream_sockmap_splice_offer(s, sp) != NGX_OK) {
            return;
        }

        /* fall through */

    case NGX_STREAM_SOCKMAP_SPLICE_OFFERED:
        if (ngx_stream_sockmap_splice_join(s, sp) != NGX_OK) {
            return;
        }

        break;

    case NGX_STREAM_SOCKMAP_SPLICE_JOINED:
        break;

    default:
        return;
    }

    c = s->connection;
    u = s->upstream;
    pc = u->peer.connection;

    if (pc != sp->pc) {
        ngx_stream_sockmap_splice_never(s, sp, "upstream replaced");
        return;
    }

    /* this pass's direction, less what was spliced (not nginx's to
     * fence) */
    if (from_upstream) {
        ngx_stream_sockmap_splice_fence(c->fd, u->received - sp->synced_down,
                                        c->sent - sp->synced_down, 0,
                                        &sp->fenced_down);

    } else {
        ngx_stream_sockmap_splice_fence(pc->fd,
                                        s->received + sp->preread_up
                                        - sp->synced_up,
                                        pc->sent - sp->synced_up,
                                        sp->added_up, &sp->fenced_up);
    }
}


/*
 * Every event of a joined session's two connections: nginx's counts
 * first, then proxy_timeout, then nginx's own handler.  After that
 * handler nothing here is touched: it may have ended the session and
 * freed its pool.
 */
static void
ngx_stream_sockmap_splice_handler(ngx_event_t *ev)
{
    ngx_msec_t                             idle, last, timeout;
    ngx_connection_t                      *c, *dc;
    ngx_event_handler_pt                   handler;
    ngx_stream_session_t                  *s;
    ngx_stream_sockmap_splice_t           *sp;
    ngx_stream_sockmap_proxy_conf_head_t  *pscf;
    struct sockmap_query                   q;

    c = ev->data;
    s = c->data;
    dc = s->connection;
    sp = ngx_stream_sockmap_splice_of(s);

    if (ev == dc->read) {
        handler = sp->read;

    } else if (ev == dc->write) {
        handler = sp->write;

    } else if (ev == sp->pc->read) {
        handler = sp->up_read;

    } else {
        handler = sp->up_write;
    }

    if (ngx_stream_sockmap_splice_query(dc, &q) == NGX_OK) {
        ngx_stream_sockmap_splice_sync(s, sp, &q);

        /* nginx arms proxy_timeout on the client's write event after
         * each pass (ngx_stream_proxy_process): spliced bytes are passes
         * it never made */
        if (ev == dc->write && ev->timedout && !ev->delayed
            && q.spliced_ns)
        {
            pscf = ngx_stream_get_module_srv_conf(s, ngx_stream_proxy_module);
            timeout = pscf->timeout;
            last = (ngx_msec_t) (q.spliced_ns / 1000000);
            idle = ngx_current_msec > last ? ngx_current_msec - last : 0;

            if (idle < timeout) {
                ev->timedout = 0;
                ngx_add_timer(ev, timeout - idle);
                return;
            }
        }
    }

    handler(ev);
}

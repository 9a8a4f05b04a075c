/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * $sockmap and $sockmap_upstream for stream{} sessions: the client
 * connection's and the upstream connection's answer
 * (ngx_sockmap_query.h).
 *
 * ngx_stream_proxy_finalize() closes the upstream connection before the
 * session is logged, so its answer is taken while bytes are relayed: a
 * stream filter asks at each pass until the answer is final (a pair
 * turns "redirected" at nginx's first send to the upstream, so a paired
 * session asks two or three times, any other once, none more than
 * NGX_STREAM_SOCKMAP_ASKS times).  Installed only
 * where a configuration uses $sockmap_upstream or sockmap_splice.
 *
 * sockmap_splice on|off (stream, server; off): hand the session to the
 * kernel once nginx holds nothing of it (ngx_stream_sockmap_splice.c).
 */

#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_stream.h>

#include "ngx_sockmap_query.h"
#include "ngx_stream_sockmap_splice.h"


/* a pair whose nginx end never sends (a server that only talks) stays
 * "paired": stop asking after this many passes */
#define NGX_STREAM_SOCKMAP_ASKS  4


typedef struct {
    ngx_str_t                    upstream;
    ngx_uint_t                   asks;
    ngx_uint_t                   final;   /* unsigned final:1 */
    ngx_stream_sockmap_splice_t  splice;
} ngx_stream_sockmap_ctx_t;


typedef struct {
    ngx_flag_t  splice;
} ngx_stream_sockmap_srv_conf_t;


static ngx_int_t ngx_stream_sockmap_variable(ngx_stream_session_t *s,
    ngx_stream_variable_value_t *v, uintptr_t data);
static ngx_int_t ngx_stream_sockmap_upstream_variable(ngx_stream_session_t *s,
    ngx_stream_variable_value_t *v, uintptr_t data);
static ngx_int_t ngx_stream_sockmap_filter(ngx_stream_session_t *s,
    ngx_chain_t *in, ngx_uint_t from_upstream);
static ngx_int_t ngx_stream_sockmap_add_variables(ngx_conf_t *cf);
static ngx_int_t ngx_stream_sockmap_init(ngx_conf_t *cf);
static void *ngx_stream_sockmap_create_srv_conf(ngx_conf_t *cf);
static char *ngx_stream_sockmap_merge_srv_conf(ngx_conf_t *cf, void *parent,
    void *child);
static char *ngx_stream_sockmap_splice(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);


/* a server has sockmap_splice on: the filter is needed */
static ngx_uint_t  ngx_stream_sockmap_splice_used;
static ngx_uint_t  ngx_stream_sockmap_vars_used;


static ngx_command_t  ngx_stream_sockmap_commands[] = {

    { ngx_string("sockmap_splice"),
      NGX_STREAM_MAIN_CONF|NGX_STREAM_SRV_CONF|NGX_CONF_FLAG,
      ngx_stream_sockmap_splice,
      NGX_STREAM_SRV_CONF_OFFSET,
      offsetof(ngx_stream_sockmap_srv_conf_t, splice),
      NULL },

      ngx_null_command
};


static ngx_stream_module_t  ngx_stream_sockmap_module_ctx = {
    ngx_stream_sockmap_add_variables,      /* preconfiguration */
    ngx_stream_sockmap_init,               /* postconfiguration */

    NULL,                                  /* create main configuration */
    NULL,                                  /* init main configuration */

    ngx_stream_sockmap_create_srv_conf,    /* create server configuration */
    ngx_stream_sockmap_merge_srv_conf      /* merge server configuration */
};


ngx_module_t  ngx_stream_sockmap_module = {
    NGX_MODULE_V1,
    &ngx_stream_sockmap_module_ctx,        /* module context */
    ngx_stream_sockmap_commands,           /* module directives */
    NGX_STREAM_MODULE,                     /* module type */
    NULL,                                  /* init master */
    NULL,                                  /* init module */
    NULL,                                  /* init process */
    NULL,                                  /* init thread */
    NULL,                                  /* exit thread */
    NULL,                                  /* exit process */
    NULL,                                  /* exit master */
    NGX_MODULE_V1_PADDING
};


static ngx_stream_variable_t  ngx_stream_sockmap_vars[] = {

    { ngx_string("sockmap"), NULL, ngx_stream_sockmap_variable, 0,
      NGX_STREAM_VAR_NOCACHEABLE, 0 },

    { ngx_string("sockmap_upstream"), NULL,
      ngx_stream_sockmap_upstream_variable, 0,
      NGX_STREAM_VAR_NOCACHEABLE, 0 },

      ngx_stream_null_variable
};


static ngx_stream_filter_pt  ngx_stream_next_filter;


static void
ngx_stream_sockmap_set(ngx_stream_variable_value_t *v, ngx_str_t *s)
{
    v->len = s->len;
    v->data = s->data;
    v->valid = 1;
    v->no_cacheable = 1;
    v->not_found = 0;
}


static ngx_int_t
ngx_stream_sockmap_variable(ngx_stream_session_t *s,
    ngx_stream_variable_value_t *v, uintptr_t data)
{
    ngx_str_t  str;

    (void) ngx_sockmap_query(s->connection, s->connection->pool,
                             s->connection->log, "stream", &str);

    ngx_stream_sockmap_set(v, &str);

    return NGX_OK;
}


static ngx_int_t
ngx_stream_sockmap_upstream_variable(ngx_stream_session_t *s,
    ngx_stream_variable_value_t *v, uintptr_t data)
{
    ngx_str_t                  str;
    ngx_stream_upstream_t     *u;
    ngx_stream_sockmap_ctx_t  *ctx;

    u = s->upstream;

    if (u && u->peer.connection) {
        (void) ngx_sockmap_query(u->peer.connection, s->connection->pool,
                                 s->connection->log, "stream", &str);
        ngx_stream_sockmap_set(v, &str);
        return NGX_OK;
    }

    ctx = ngx_stream_get_module_ctx(s, ngx_stream_sockmap_module);

    if (ctx && ctx->upstream.len) {
        ngx_stream_sockmap_set(v, &ctx->upstream);
        return NGX_OK;
    }

    v->not_found = 1;

    return NGX_OK;
}


ngx_stream_sockmap_splice_t *
ngx_stream_sockmap_splice_of(ngx_stream_session_t *s)
{
    ngx_stream_sockmap_ctx_t  *ctx;

    ctx = ngx_stream_get_module_ctx(s, ngx_stream_sockmap_module);

    return &ctx->splice;
}


static ngx_int_t
ngx_stream_sockmap_filter(ngx_stream_session_t *s, ngx_chain_t *in,
    ngx_uint_t from_upstream)
{
    ngx_int_t                       rc;
    ngx_stream_upstream_t          *u;
    ngx_stream_sockmap_ctx_t       *ctx;
    ngx_stream_sockmap_srv_conf_t  *smcf;

    u = s->upstream;

    if (u == NULL || u->peer.connection == NULL) {
        return ngx_stream_next_filter(s, in, from_upstream);
    }

    ctx = ngx_stream_get_module_ctx(s, ngx_stream_sockmap_module);

    if (ctx == NULL) {
        ctx = ngx_pcalloc(s->connection->pool,
                          sizeof(ngx_stream_sockmap_ctx_t));
        if (ctx == NULL) {
            return NGX_ERROR;
        }

        ngx_stream_set_ctx(s, ctx, ngx_stream_sockmap_module);

        smcf = ngx_stream_get_module_srv_conf(s, ngx_stream_sockmap_module);

        if (!smcf->splice) {
            ctx->splice.state = NGX_STREAM_SOCKMAP_SPLICE_NEVER;
        }

        if (!ngx_stream_sockmap_vars_used) {
            ctx->final = 1;
        }
    }

    if (!ctx->final && ctx->asks++ < NGX_STREAM_SOCKMAP_ASKS) {
        ctx->final = ngx_sockmap_query(u->peer.connection,
                                       s->connection->pool,
                                       s->connection->log, "stream",
                                       &ctx->upstream);
    }

    if (!from_upstream
        && ctx->splice.state != NGX_STREAM_SOCKMAP_SPLICE_NEVER)
    {
        ngx_stream_sockmap_splice_first_up(s, &ctx->splice, in);
    }

    rc = ngx_stream_next_filter(s, in, from_upstream);

    /* after nginx's write: what it holds now is what the fence says */
    if (rc != NGX_ERROR
        && ctx->splice.state != NGX_STREAM_SOCKMAP_SPLICE_NEVER)
    {
        ngx_stream_sockmap_splice_pass(s, &ctx->splice, from_upstream);
    }

    return rc;
}


static ngx_int_t
ngx_stream_sockmap_add_variables(ngx_conf_t *cf)
{
    ngx_stream_variable_t  *var, *v;

    for (v = ngx_stream_sockmap_vars; v->name.len; v++) {
        var = ngx_stream_add_variable(cf, &v->name, v->flags);
        if (var == NULL) {
            return NGX_ERROR;
        }

        var->get_handler = v->get_handler;
        var->data = v->data;
    }

    return NGX_OK;
}


static ngx_int_t
ngx_stream_sockmap_init(ngx_conf_t *cf)
{
    ngx_uint_t                    i;
    ngx_stream_variable_t        *v;
    ngx_stream_core_main_conf_t  *cmcf;

    static ngx_str_t  name = ngx_string("sockmap_upstream");

    cmcf = ngx_stream_conf_get_module_main_conf(cf, ngx_stream_core_module);

    v = cmcf->variables.elts;

    for (i = 0; i < cmcf->variables.nelts; i++) {
        if (v[i].name.len == name.len
            && ngx_strncasecmp(v[i].name.data, name.data, name.len) == 0)
        {
            ngx_stream_sockmap_vars_used = 1;
            break;
        }
    }

    if (ngx_stream_sockmap_vars_used || ngx_stream_sockmap_splice_used) {
        ngx_stream_next_filter = ngx_stream_top_filter;
        ngx_stream_top_filter = ngx_stream_sockmap_filter;
    }

    return NGX_OK;
}


static void *
ngx_stream_sockmap_create_srv_conf(ngx_conf_t *cf)
{
    ngx_stream_sockmap_srv_conf_t  *conf;

    conf = ngx_pcalloc(cf->pool, sizeof(ngx_stream_sockmap_srv_conf_t));
    if (conf == NULL) {
        return NULL;
    }

    conf->splice = NGX_CONF_UNSET;

    return conf;
}


static char *
ngx_stream_sockmap_merge_srv_conf(ngx_conf_t *cf, void *parent, void *child)
{
    ngx_stream_sockmap_srv_conf_t *prev = parent;
    ngx_stream_sockmap_srv_conf_t *conf = child;

    ngx_conf_merge_value(conf->splice, prev->splice, 0);

    return NGX_CONF_OK;
}


static char *
ngx_stream_sockmap_splice(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    char                           *rv;
    ngx_stream_sockmap_srv_conf_t  *smcf = conf;

    rv = ngx_conf_set_flag_slot(cf, cmd, conf);

    if (rv == NGX_CONF_OK && smcf->splice) {
        ngx_stream_sockmap_splice_used = 1;
    }

    return rv;
}

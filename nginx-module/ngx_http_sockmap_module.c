/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * $sockmap: what ngx-sockmap did with this request's client connection;
 * $sockmap_upstream: with its upstream connection ("redirected",
 * "paired", or why not: ngx_sockmap_query.h).
 *
 * The upstream connection is closed, or back in the keepalive cache,
 * before the log phase (ngx_http_upstream_finalize_request), so its
 * answer is taken when the response header goes out, while the
 * connection is still the request's: by then nginx sent the request on
 * it.  Only where a configuration uses $sockmap_upstream: otherwise the
 * header filter is not installed and no request pays for it.
 */

#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_sockmap_query.h"


typedef struct {
    ngx_str_t  upstream;
} ngx_http_sockmap_ctx_t;


static ngx_int_t ngx_http_sockmap_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data);
static ngx_int_t ngx_http_sockmap_upstream_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data);
static ngx_int_t ngx_http_sockmap_header_filter(ngx_http_request_t *r);
static ngx_int_t ngx_http_sockmap_add_variables(ngx_conf_t *cf);
static ngx_int_t ngx_http_sockmap_init(ngx_conf_t *cf);


static ngx_http_module_t  ngx_http_sockmap_module_ctx = {
    ngx_http_sockmap_add_variables,        /* preconfiguration */
    ngx_http_sockmap_init,                 /* postconfiguration */

    NULL,                                  /* create main configuration */
    NULL,                                  /* init main configuration */

    NULL,                                  /* create server configuration */
    NULL,                                  /* merge server configuration */

    NULL,                                  /* create location configuration */
    NULL                                   /* merge location configuration */
};


ngx_module_t  ngx_http_sockmap_module = {
    NGX_MODULE_V1,
    &ngx_http_sockmap_module_ctx,          /* module context */
    NULL,                                  /* module directives */
    NGX_HTTP_MODULE,                       /* module type */
    NULL,                                  /* init master */
    NULL,                                  /* init module */
    NULL,                                  /* init process */
    NULL,                                  /* init thread */
    NULL,                                  /* exit thread */
    NULL,                                  /* exit process */
    NULL,                                  /* exit master */
    NGX_MODULE_V1_PADDING
};


static ngx_http_variable_t  ngx_http_sockmap_vars[] = {

    { ngx_string("sockmap"), NULL, ngx_http_sockmap_variable, 0,
      NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("sockmap_upstream"), NULL,
      ngx_http_sockmap_upstream_variable, 0,
      NGX_HTTP_VAR_NOCACHEABLE, 0 },

      ngx_http_null_variable
};


static ngx_http_output_header_filter_pt  ngx_http_next_header_filter;


static void
ngx_http_sockmap_set(ngx_http_variable_value_t *v, ngx_str_t *s)
{
    v->len = s->len;
    v->data = s->data;
    v->valid = 1;
    v->no_cacheable = 1;
    v->not_found = 0;
}


static ngx_int_t
ngx_http_sockmap_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data)
{
    ngx_str_t  s;

    (void) ngx_sockmap_query(r->connection, r->pool, r->connection->log,
                             "http", &s);

    ngx_http_sockmap_set(v, &s);

    return NGX_OK;
}


/* The upstream connection's answer: taken at the header (see above), or
 * now while the request still holds the connection. */
static ngx_int_t
ngx_http_sockmap_upstream_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data)
{
    ngx_str_t                s;
    ngx_http_upstream_t     *u;
    ngx_http_sockmap_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_sockmap_module);

    if (ctx && ctx->upstream.len) {
        ngx_http_sockmap_set(v, &ctx->upstream);
        return NGX_OK;
    }

    u = r->upstream;

    if (u && u->peer.connection) {
        (void) ngx_sockmap_query(u->peer.connection, r->pool,
                                 r->connection->log, "http", &s);
        ngx_http_sockmap_set(v, &s);
        return NGX_OK;
    }

    v->not_found = 1;

    return NGX_OK;
}


static ngx_int_t
ngx_http_sockmap_header_filter(ngx_http_request_t *r)
{
    ngx_http_upstream_t     *u;
    ngx_http_sockmap_ctx_t  *ctx;

    u = r->upstream;

    if (u == NULL || u->peer.connection == NULL) {
        return ngx_http_next_header_filter(r);
    }

    ctx = ngx_http_get_module_ctx(r, ngx_http_sockmap_module);

    if (ctx == NULL) {
        ctx = ngx_pcalloc(r->pool, sizeof(ngx_http_sockmap_ctx_t));
        if (ctx == NULL) {
            return NGX_ERROR;
        }

        ngx_http_set_ctx(r, ctx, ngx_http_sockmap_module);
    }

    (void) ngx_sockmap_query(u->peer.connection, r->pool,
                             r->connection->log, "http", &ctx->upstream);

    return ngx_http_next_header_filter(r);
}


static ngx_int_t
ngx_http_sockmap_add_variables(ngx_conf_t *cf)
{
    ngx_http_variable_t  *var, *v;

    for (v = ngx_http_sockmap_vars; v->name.len; v++) {
        var = ngx_http_add_variable(cf, &v->name, v->flags);
        if (var == NULL) {
            return NGX_ERROR;
        }

        var->get_handler = v->get_handler;
        var->data = v->data;
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_sockmap_init(ngx_conf_t *cf)
{
    ngx_uint_t                  i;
    ngx_http_variable_t        *v;
    ngx_http_core_main_conf_t  *cmcf;

    static ngx_str_t  name = ngx_string("sockmap_upstream");

    /* the variables a configuration uses (log_format, map, ...) have
     * their index by now: no filter where nothing asks */
    cmcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_core_module);

    v = cmcf->variables.elts;

    for (i = 0; i < cmcf->variables.nelts; i++) {
        if (v[i].name.len == name.len
            && ngx_strncasecmp(v[i].name.data, name.data, name.len) == 0)
        {
            ngx_http_next_header_filter = ngx_http_top_header_filter;
            ngx_http_top_header_filter = ngx_http_sockmap_header_filter;
            break;
        }
    }

    return NGX_OK;
}

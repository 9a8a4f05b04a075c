/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * sockmap_splice: a stream{} session handed to the kernel, the client's
 * bytes straight into the upstream's socket and back, past this worker
 * (bpf/sockmap_splice.h).  The stream module's filter calls
 * ngx_stream_sockmap_splice_pass() after each write nginx's proxy makes;
 * once the session is joined, the event handlers of both connections go
 * through this file first, so that nginx's counts and its proxy_timeout
 * see the bytes that no longer pass through it.
 */

#ifndef _NGX_STREAM_SOCKMAP_SPLICE_H_INCLUDED_
#define _NGX_STREAM_SOCKMAP_SPLICE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_stream.h>


typedef enum {
    NGX_STREAM_SOCKMAP_SPLICE_NEW = 0,
    NGX_STREAM_SOCKMAP_SPLICE_OFFERED,  /* waiting for the upstream's pairing */
    NGX_STREAM_SOCKMAP_SPLICE_JOINED,   /* fencing after each write */
    NGX_STREAM_SOCKMAP_SPLICE_NEVER     /* not for this session (said why) */
} ngx_stream_sockmap_splice_state_e;


typedef struct {
    ngx_stream_sockmap_splice_state_e  state;
    ngx_uint_t                         joins;      /* JOINs tried */
    uint64_t                           cookie;     /* the client socket's */
    ngx_connection_t                  *pc;         /* the upstream joined */

    /* what nginx read of each direction at its last fence; -1: a fence
     * was refused, and every later one would be (the socket went to TCP,
     * a redirect failed: bpf/splice_control.h) */
    off_t                              fenced_up;
    off_t                              fenced_down;
    /* what nginx wrote upstream first without counting it in
     * s->received: its own bytes (the PROXY protocol header), which a
     * fence of that direction declares as added, and the client's bytes
     * a preread phase read, which it counts as read */
    off_t                              added_up;
    off_t                              preread_up;
    unsigned                           first_up_seen:1;
    unsigned                           first_up_unknown:1;
    /* spliced bytes already added to nginx's own counts */
    off_t                              synced_up;
    off_t                              synced_down;

    /* nginx's handlers, called after ours */
    ngx_event_handler_pt               read;
    ngx_event_handler_pt               write;
    ngx_event_handler_pt               up_read;
    ngx_event_handler_pt               up_write;
} ngx_stream_sockmap_splice_t;


void ngx_stream_sockmap_splice_pass(ngx_stream_session_t *s,
    ngx_stream_sockmap_splice_t *sp, ngx_uint_t from_upstream);

/* before nginx's first write towards the upstream: what it writes then,
 * if it read no client byte yet, is its own (added_up) */
void ngx_stream_sockmap_splice_first_up(ngx_stream_session_t *s,
    ngx_stream_sockmap_splice_t *sp, ngx_chain_t *in);

/* the module's context of a session: its splice state (the stream
 * module keeps it in its ctx, ngx_stream_sockmap_module.c) */
ngx_stream_sockmap_splice_t *ngx_stream_sockmap_splice_of(
    ngx_stream_session_t *s);


#endif /* _NGX_STREAM_SOCKMAP_SPLICE_H_INCLUDED_ */

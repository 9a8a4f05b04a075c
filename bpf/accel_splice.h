/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Splice, the sending side (bpf/sockmap_splice.h): a session's far end
 * (C or U) switches its sends from the relay's socket to the other far
 * end, once the relay's fence says it holds nothing of them; a relay's
 * end (N1, N2) written by a thread other than the one that offered the
 * session breaks it.
 *
 * A part of bpf/accel.bpf.c, included there after its load-time settings
 * and maps, which it uses: not a header of its own.
 */
#ifndef NGX_SOCKMAP_ACCEL_SPLICE_H
#define NGX_SOCKMAP_ACCEL_SPLICE_H

/* A fence counts what the relay's sendmsg calls queued, which is only
 * sure while its offering thread is their one caller (a send of another
 * thread may be between its verdict, where it was counted, and the far
 * end's queue): anything else sending on N1 or N2 ends the session's
 * switching.  Directions already switched stay: their bytes were in
 * order when they switched, and the relay holds none of them since. */
static __always_inline void splice_relay_send(const struct sock_state *st)
{
	struct splice_session *s;
	__u64 key;

	if (bpf_get_current_pid_tgid() == st->splice_owner)
		return;
	key = st->splice_key;
	s = bpf_map_lookup_elem(&splice_sessions, &key);
	if (s && !(s->flags & SPLICE_BROKEN))
		__sync_fetch_and_or(&s->flags, SPLICE_BROKEN);
}

static __always_inline bool same_sock(const struct sock_id *a, const struct sock_id *b)
{
	return a->cookie == b->cookie && a->isn == b->isn;
}

/*
 * At a far end's send, before its target is chosen: switch to the other
 * far end if the relay's last fence covers every byte we sent.  Our
 * count (redirected_bytes) is taken at the verdict, under our socket
 * lock, so it includes a send still on its way to N1; the fence's is
 * what the relay read from N1 and its sendmsg calls had queued in the
 * other far end before it asked.  Equal, nothing of ours is in N1, in
 * the relay, or between N2 and the far end: this send and every later
 * one may go straight there and land after all of them
 * (docs/DESIGN.md "Splice").
 * Cost while no session was ever made: one array slot read (inlined) and
 * a compare per send.  Ends look their session up when a new one was
 * made since they last looked, and then at each send until they switch.
 */
static __always_inline void splice_try(struct sock_state *st)
{
	struct splice_session *s, *alias;
	struct accel_config *cfg;
	const struct sock_id *to;
	__u64 key, done, psock;
	__u32 zero = 0;
	bool client;

	if (!st->splice_key) {
		cfg = bpf_map_lookup_elem(&accel_config, &zero);
		if (!cfg || cfg->splice_gen == st->splice_gen)
			return;
		st->splice_gen = cfg->splice_gen;
		key = st->cookie;
		alias = bpf_map_lookup_elem(&splice_sessions, &key);
		if (!alias || !alias->alias)
			return;
		st->splice_key = alias->alias;
	}
	key = st->splice_key;
	s = bpf_map_lookup_elem(&splice_sessions, &key);
	if (!s || s->alias) {
		/* ended (its relay closed): look again only for a session
		 * made after this one */
		st->splice_key = 0;
		return;
	}
	/* the fence's value first, with a full barrier: the fields it was
	 * set after (JOIN's, the flags) are read after it */
	client = same_sock(&s->client, &st->self);
	if (client)
		done = __sync_fetch_and_add(&s->to_upstream, 0);
	else if (same_sock(&s->upstream, &st->self))
		done = __sync_fetch_and_add(&s->to_client, 0);
	else
		return;
	if (done != st->redirected_bytes ||
	    (s->flags & (SPLICE_JOINED | SPLICE_BROKEN)) != SPLICE_JOINED)
		return;
	to = client ? &s->upstream : &s->client;
	psock = client ? s->upstream_psock : s->client_psock;
	/* with a cap, a target whose unread bytes can't be read can't be
	 * bounded: stay with the relay */
	if (!psock && max_unread)
		return;
	st->peer = *to;
	st->peer_psock = psock;
	/* the target's psock holds what the relay queued there: read it at
	 * the next check instead of assuming our own bound */
	st->unread_bound = 1ULL << 62;
	st->flags |= SS_SPLICED | (client ? SS_SPLICED_CLIENT : 0);
	STAT_ADD(splice_switched, 1);
}

/* A switched far end's send, redirected: count it in the session, where
 * the relay asks for it (its query, bpf/sockmap_query.h), with its time
 * (the relay's idle timer: nginx's clock is CLOCK_MONOTONIC, or its
 * coarse variant, src/core/ngx_times.c ngx_monotonic_time; the coarse
 * one here is within a tick of it).  One hash lookup per send
 * of a spliced socket; nothing once the relay closed. */
static __always_inline void splice_count(const struct sock_state *st, __u32 size)
{
	struct splice_session *s;
	__u64 key = st->splice_key;

	s = bpf_map_lookup_elem(&splice_sessions, &key);
	if (!s || s->alias)
		return;
	if (st->flags & SS_SPLICED_CLIENT)
		__sync_fetch_and_add(&s->spliced_up, size);
	else
		__sync_fetch_and_add(&s->spliced_down, size);
	s->spliced_ns = bpf_ktime_get_coarse_ns();
}

/* N1 reaching TCP_CLOSE ends its session (the client's connection is
 * over: nothing more can pass either way): its counts stay in N1's own
 * state, where the relay's query finds them until it closes N1 (a
 * relay that shut N1 down gets there before its close(2)); the far ends
 * that switched keep their targets, the others stop looking
 * (splice_try). */
static __always_inline void splice_forget(struct sock_state *st)
{
	struct splice_session *s;
	__u64 key = st->splice_key, end;

	s = bpf_map_lookup_elem(&splice_sessions, &key);
	if (!s || s->alias)
		return;
	st->spliced_up = s->spliced_up;
	st->spliced_down = s->spliced_down;
	st->spliced_ns = s->spliced_ns;
	end = s->client.cookie;
	bpf_map_delete_elem(&splice_sessions, &end);
	end = s->upstream.cookie;
	if (end)
		bpf_map_delete_elem(&splice_sessions, &end);
	bpf_map_delete_elem(&splice_sessions, &key);
}

#endif /* NGX_SOCKMAP_ACCEL_SPLICE_H */

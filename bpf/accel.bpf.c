// SPDX-License-Identifier: GPL-2.0
/*
 * The data plane: sock_ops tracks and pairs established TCP sockets;
 * sk_msg redirects a send straight into the peer socket's ingress queue
 * when, and only when, that is provably the other end of the connection
 * and the direction has never sent a byte through TCP.
 *
 * How a pair is proven (docs/DESIGN.md has the long form):
 *   1. 4-tuple match: the passive end (second to reach ESTABLISHED) looks
 *      up the endpoint the active end registered under the reverse of its
 *      own key (the key has the netns cookie for loopback addresses);
 *   2. ISN cross-match: its snd_nxt/rcv_nxt at ESTABLISHED equal the
 *      registered end's rcv_nxt/snd_nxt at ESTABLISHED;
 *   3. nonce: the ACK that made the passive end ESTABLISHED carried the
 *      random nonce the active end registered.  ISNs are predictable and,
 *      with TCP_REPAIR or a forged SYN-ACK, choosable by a tracked process
 *      in another namespace; the nonce travels only on the wire between
 *      the two real ends;
 *   4. claim: one compare-and-swap of the endpoint's claim word from the
 *      nonce to the claimer's cookie, so one registration is claimed at
 *      most once, or withdrawn, and never after its memory was reused.
 * Redirects are keyed by socket cookie plus ISN (one life of one socket),
 * never by 4-tuple, so a stale, foreign or reused socket can't be hit.
 *
 * A socket is in the SOCKHASH only while it is (or may still become)
 * paired, and no TCP byte ever reaches a socket while it is in there: on
 * 6.18 FIONREAD of a sockmap socket counts only redirected bytes
 * (net/ipv4/tcp_bpf.c, tcp_bpf_ioctl), and nginx stops reading when
 * FIONREAD says 0, so TCP bytes behind it would hang the connection.
 *   - the passive end pairs at ESTABLISHED or is never inserted;
 *   - the active end, inserted at ESTABLISHED (its only chance), withdraws
 *     and leaves at its first send or first packet in if nobody claimed
 *     it: before any TCP byte is queued to it;
 *   - a paired direction stays redirected for life (peer closing aside).
 * What can't be delivered as TCP would (a splicing reader, MSG_OOB, a
 * reader past --max-unread) ends the connection with a reset on both ends
 * instead (guard.bpf.c, the agent's enforcer).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "accel.h"
#include "accel_maps.h"
#include "psock.h"
#include "ia32.h"

char LICENSE[] SEC("license") = "GPL";

/*
 * Load-time settings: every one the agent sets before load
 * (agent/dataplane.c dataplane_load), so the verifier drops the branches
 * a setting turns off.  The defaults are the options' (accel.h
 * ACCEL_DEFAULT_*, which options.c uses too).
 */
/* Port policy (--ports). */
const volatile __u32 ports_all = 1;
const volatile __u64 port_bits[65536 / 64];
/* Skip ports whose connections average fewer sends (--short-conn; 0:
 * track all). */
const volatile __u32 short_conn_msgs = ACCEL_DEFAULT_SHORT_CONN_MSGS;
/* Send a direction to TCP when its reader falls behind.  Only where the
 * self-test showed FIONREAD counts TCP bytes of a sockmap socket too. */
const volatile __u32 slow_reader_fallback = 0;
/* Unread redirected bytes one reader may hold (--max-unread): past it the
 * connection is ended.  0: no cap (the self-test's private copy). */
const volatile __u64 max_unread = ACCEL_DEFAULT_MAX_UNREAD;
/* Insert an active end only when its peer's address belongs to a network
 * namespace with tracked processes (local_addrs, kept by the agent). */
const volatile __u32 check_local_addrs = 0;
/* Set only in the self-test's private data plane: lets it force sends
 * through TCP (accel_config.test_force_tcp).  0 here, so the verifier
 * drops that map lookup from every sendmsg of the real data plane. */
const volatile __u32 selftest_knobs = 0;
/* Keep unread_watch (accel_maps.h): the agent sets it where the guard's
 * iter/sockmap is refused (or --unread-scan watch), so the unread scan
 * needs no tracing program.  Off, the verifier drops its map updates. */
const volatile __u32 watch_unread = 0;
/* Test builds only: spin this many rounds between the passive end's
 * checks and its claim, to widen the race the claim protocol closes. */
const volatile __u32 test_claim_delay = 0;
/* How long a learned hazard keeps its side from pairing: HAZARD_TTL_NS
 * (a test knob shortens it, to see one age out). */
const volatile __u64 hazard_ttl_ns = HAZARD_TTL_NS;
/* 1: insert sockets only while the agent says the guard's tracepoints are
 * attached (struct guard_state).  0 (the self-test's instance): always. */
const volatile __u32 guards_lazy = 0;
/* The events themselves where the kernel has no BPF arena (before 6.9):
 * the agent turns conn_arena's creation off and this on. */
const volatile __u32 events_in_arena = 1;
/* 1: this kernel lets an sk_msg program call bpf_get_current_task_btf
 * (the agent probes): msg_redirect reads the task without a helper call */
const volatile __u32 task_btf = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, ACCEL_MAX_SOCKETS);
	__type(key, struct sock_key);
	__type(value, struct endpoint);
} endpoints SEC(".maps");

/* Filled by the agent from getrandom(2) (agent/nonce_pool.c), taken by
 * new_nonce(). */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, NONCE_POOL_SIZE);
	__type(value, __u64);
} nonce_pool SEC(".maps");

/* new_nonce() wakes the agent to refill: at the nonces it marked
 * (NONCE_WAKE_MARK) and when the pool is empty.  A full ring just drops
 * the record: the agent is awake already, or its tick refills. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} nonce_wakeup SEC(".maps");

/* Addresses of the network namespaces where tracked processes live. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LOCAL_ADDRS_MAX);
	__type(key, __u32[4]);
	__type(value, __u32);
} local_addrs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, DEST_PROFILES_MAX);
	__type(key, struct dest_key);
	__type(value, struct dest_profile);
} dest_profiles SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct agent_gauges);
} agent_gauges SEC(".maps");

/* Connection events for the agent (paired, fell back, closed): an arena
 * ring read zero-copy, with batched wake-ups (event_ring.h).  One event
 * per connection decision, never per message.  The data plane's own
 * arena: XDP's packet samples can't lap these.  Not pinned with --pin: a
 * restarted agent reads a fresh ring; programs of the previous run, kept
 * by sockets still open, write to the previous one, which nobody reads. */
struct {
	__uint(type, BPF_MAP_TYPE_ARENA);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, RING_ARENA_PAGES);
} conn_arena SEC(".maps");

struct event_ring __arena ring;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} ring_wakeups SEC(".maps");

/* Where the kernel has no BPF arena: the events themselves, with their
 * batched wake-ups' state (event_ring.h, ringbuf_wake_flags). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} conn_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ringbuf_wake);
} conn_events_wake SEC(".maps");

/* The programs' parts, in the order they use each other. */
#include "accel_tracking.h"
#include "accel_life.h"
#include "accel_nonce.h"
#include "accel_pairing.h"
#include "accel_splice.h"
#include "accel_close.h"
#include "accel_redirect.h"

SEC("sockops")
int sockops_track(struct bpf_sock_ops *skops)
{
	switch (skops->op) {
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
		end_stale_life(skops);
		track_active(skops);
		break;
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		track_passive(skops);
		break;
	case BPF_SOCK_OPS_PARSE_HDR_OPT_CB:
		active_first_packet(skops);
		break;
	case BPF_SOCK_OPS_HDR_OPT_LEN_CB:
		nonce_opt_len(skops);
		break;
	case BPF_SOCK_OPS_WRITE_HDR_OPT_CB:
		nonce_opt_write(skops);
		break;
	case BPF_SOCK_OPS_STATE_CB:
		if (skops->args[1] == BPF_TCP_CLOSE)
			track_closed(skops);
		break;
	}
	return 1;
}

SEC("sk_msg")
int msg_redirect(struct sk_msg_md *msg)
{
	struct sock_addr_view v = {};
	struct accel_config *cfg;
	struct sock_key key = {};
	struct sock_state *st;
	struct sock_id peer;
	struct bpf_sock *sk;
	__u32 size = msg->size;
	__u32 zero = 0, queued;
	enum oob_send oob;

	sk = msg->sk;
	if (!sk)
		return SK_PASS;
	st = bpf_sk_storage_get(&sk_state, sk, 0, 0);
	if (!st)
		return fall_back(st, FB_NO_ROOM, size);
	st->msgs++;
	if (st->flags & SS_DOOMED)
		return SK_DROP; /* being reset: see doom() */
	if (st->flags & SS_TCP) {
		count_send(false, size);
		return SK_PASS;
	}
	if (selftest_knobs) {
		cfg = bpf_map_lookup_elem(&accel_config, &zero);
		if (cfg && cfg->test_force_tcp)
			return fall_back(st, FB_POLICY, size);
	}
	/* Nobody guards this socket any more: the agent that armed the guard
	 * exited (armed = 0) or was killed (not renewed for GUARD_ALIVE_NS).
	 * Its hooks and enforcer are gone, and a later agent without --pin
	 * guards its own maps, not these: this copy of the program (the
	 * psock holds it, net/core/sock_map.c sock_map_link) would go on
	 * redirecting what nobody watches for splice, MSG_OOB or a cap.
	 * Move to TCP for good where that is safe (tcp_bpf_recvmsg reads
	 * what was redirected first, then the TCP queue: order holds);
	 * where it is not, nothing could end the connection either, and it
	 * goes on redirecting (DESIGN "What run leaves behind"). */
	if (guards_lazy && slow_reader_fallback) {
		struct guard_state *gs = bpf_map_lookup_elem(&guard_state, &zero);

		if (!gs || !guard_alive(gs))
			return fall_back(st, FB_UNGUARDED, size);
	}
	if (!(st->flags & SS_PAIRED)) {
		/* Active end's first send before anything came in: decide.
		 * Withdrawn, our bytes go through TCP to a peer that is not
		 * tracked, and we leave the SOCKHASH at our first packet in. */
		VIEW_FROM_CTX(&v, msg);
		if (sock_key_build(&key, &v))
			return fall_back(st, FB_NO_PEER, size);
		if (sock_key_is_loopback(&key))
			key.netns = bpf_get_netns_cookie(msg);
		if (active_decide(st, &key))
			return fall_back(st, FB_NO_PEER, size);
		/* a lost psock handover: nothing could bound what we queue */
		if (!st->peer_psock && max_unread &&
		    bpf_core_field_exists(struct sk_psock, msg_tot_len))
			return doom(st, msg, RS_SLOW_READER);
	}
	/* Urgent data redirected would land inline in the peer's stream
	 * (tcp_bpf has no MSG_OOB path): send it through TCP where moving
	 * to TCP is safe and the reader holds no redirected bytes, else end
	 * the connection.  With bytes in its psock, the reader's
	 * recv(MSG_OOB) returns those (tcp_bpf_recvmsg() reads ingress_msg
	 * whatever the flags; it hands over to tcp_recvmsg() only when the
	 * psock is empty, net/ipv4/tcp_bpf.c): seen on 6.12.117.  Nothing
	 * can be added to that count meanwhile: we are its only sender. */
	oob = sending_oob();
	if (oob != OOB_NONE) {
		/* an unknown sender is no evidence about this endpoint
		 * (ending its connection teaches it all the same: the
		 * enforcer learns the endpoint of every reset) */
		if (oob == OOB_THIS_TASK)
			service_learn_hazard(side_of(st, true), RS_OOB);
		if (slow_reader_fallback && !peer_unread(st))
			return fall_back(st, FB_HAZARD, size);
		return doom(st, msg, RS_OOB);
	}
	/* A splice session's far end switches here, before its target and
	 * its unread bound are used; a relay's end checks its writer. */
	if (!(st->flags & (SS_SPLICED | SS_RELAY)))
		splice_try(st);
	else if (st->flags & SS_RELAY)
		splice_relay_send(st);
	/* The peer's unread count can only have grown by what we redirected
	 * since we last read it (we are its psock's only sender), so
	 * unread_bound is a true upper bound, and the psock is read only when
	 * the bound could cross a limit: about once per receive buffer of
	 * small sends, not on every send (the read was 40 of msg_redirect's
	 * 209 ns, docs/bench/sk-msg-cost). */
	if (st->unread_bound + size > unread_limit(st)) {
		queued = peer_unread(st);
		st->unread_bound = queued;
		if (slow_reader_fallback && queued && (__u64)queued + size > st->peer_rcvbuf)
			return fall_back(st, FB_SLOW_READER, size);
		if (max_unread && (__u64)queued + size > max_unread)
			return doom(st, msg, RS_SLOW_READER);
	}
	peer = st->peer;
	/* On a missing key (the peer closed) the helper returns SK_DROP and
	 * sets no redirect; we must still return SK_PASS, or sendmsg fails
	 * with EACCES (net/core/sock_map.c bpf_msg_redirect_hash). */
	if (bpf_msg_redirect_hash(msg, &sock_hash, &peer, BPF_F_INGRESS) != SK_PASS)
		return fall_back(st, FB_NO_PEER, size);
	st->redirected_bytes += size;
	st->unread_bound += size;
	if (st->flags & SS_SPLICED)
		splice_count(st, size);
	count_send(true, size);
	return SK_PASS;
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The enforcer (enforcer.h says what and why): at start the plan picks
 * iter/tcp or sock_diag to end connections and iter/sockmap or watch to
 * measure unread bytes; then it takes reset requests from the data plane's
 * ring (and its backlog when the ring was full), carries each out in the
 * doomed socket's network namespace, logs and counts it, and once a tick
 * measures unread bytes and ends the largest readers past the budget.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "accel.h"
#include "enforcer.h"
#include "log.h"
#include "sock_diag.h"

#ifndef SO_COOKIE
#define SO_COOKIE 57
#endif

const char *const reset_mech_opts[RESETS__MAX] = {
	[RESETS_AUTO] = "auto", [RESETS_ITER] = "iter", [RESETS_SOCK_DIAG] = "sock_diag",
};
const char *const unread_mech_opts[UNREAD__MAX] = {
	[UNREAD_AUTO] = "auto", [UNREAD_ITER] = "iter", [UNREAD_WATCH] = "watch",
};
const char *const reset_mech_names[RESETS__MAX] = {
	[RESETS_AUTO] = "auto", [RESETS_ITER] = "iter/tcp", [RESETS_SOCK_DIAG] = "sock_diag",
};
const char *const unread_mech_names[UNREAD__MAX] = {
	[UNREAD_AUTO] = "auto", [UNREAD_ITER] = "iter/sockmap", [UNREAD_WATCH] = "watch",
};

int enforcer_plan(enum reset_mech resets, enum unread_mech unread, struct enforce_plan *p)
{
	memset(p, 0, sizeof(*p));
	/* each alone: a host may refuse one and take the other */
	if (resets != RESETS_SOCK_DIAG)
		p->reset_iter_err = -sockiter_probe(true, false);
	if (unread != UNREAD_WATCH)
		p->scan_iter_err = -sockiter_probe(false, true);
	if (resets == RESETS_ITER && p->reset_iter_err) {
		pr_warn("--resets iter: this host refuses the iter/tcp program (%s); --resets "
			"sock_diag needs none\n", strerror(p->reset_iter_err));
		return -p->reset_iter_err;
	}
	if (unread == UNREAD_ITER && p->scan_iter_err) {
		pr_warn("--unread-scan iter: this host refuses the iter/sockmap program (%s); "
			"--unread-scan watch needs none\n", strerror(p->scan_iter_err));
		return -p->scan_iter_err;
	}
	p->resets = resets == RESETS_SOCK_DIAG || p->reset_iter_err ? RESETS_SOCK_DIAG : RESETS_ITER;
	p->unread = unread == UNREAD_WATCH || p->scan_iter_err ? UNREAD_WATCH : UNREAD_ITER;
	if (resets == RESETS_SOCK_DIAG)
		snprintf(p->resets_why, sizeof(p->resets_why), "--resets sock_diag");
	else if (p->reset_iter_err)
		snprintf(p->resets_why, sizeof(p->resets_why), "iter/tcp refused: %s",
			 strerror(p->reset_iter_err));
	if (unread == UNREAD_WATCH)
		snprintf(p->unread_why, sizeof(p->unread_why), "--unread-scan watch");
	else if (p->scan_iter_err)
		snprintf(p->unread_why, sizeof(p->unread_why), "iter/sockmap refused: %s",
			 strerror(p->scan_iter_err));
	if (p->reset_iter_err)
		pr_info("the iter/tcp program was refused (%s): ending connections over sock_diag\n",
			strerror(p->reset_iter_err));
	if (p->scan_iter_err)
		pr_info("the iter/sockmap program was refused (%s): measuring unread bytes from the "
			"data plane's unread_watch\n", strerror(p->scan_iter_err));
	return 0;
}

/* Queue one request for the next enforce().  Out of memory, it goes to
 * the backlog map, which the next wake-up or tick reads again. */
static void push_request(struct enforcer *e, const struct reset_request *r)
{
	struct reset_ask *v;
	size_t i;

	/* one connection asked for twice in one wake-up (the guard's io_uring
	 * hook and msg_redirect both see an urgent send): ended and counted
	 * once, as the first asked */
	for (i = 0; i < e->n_pending; i++)
		if (e->pending[i].cookie == r->cookie)
			return;

	if (e->n_pending == e->cap_pending) {
		size_t cap = e->cap_pending ? 2 * e->cap_pending : 256;

		v = realloc(e->pending, cap * sizeof(*v));
		if (!v) {
			if (bpf_map_update_elem(e->backlog_fd, &r->cookie, r, BPF_ANY))
				pr_warn("reset request of cookie %llu dropped: out of memory\n",
					(unsigned long long)r->cookie);
			return;
		}
		e->pending = v;
		e->cap_pending = cap;
	}
	e->pending[e->n_pending++] = (struct reset_ask){
		.cookie = r->cookie, .peer = r->peer, .reason = r->reason, .service = r->service,
		.sock = r->sock,
	};
}

static int take_request(void *ctx, void *data, size_t size)
{
	if (size >= sizeof(struct reset_request))
		push_request(ctx, data);
	return 0;
}

/* Take what the data plane kept in reset_backlog because the ring was full.
 * Each key is deleted once its request is queued; a request added while we
 * walk is taken now or on the next call (the ring's next wake-up or the
 * tick), never lost. */
static void take_backlog(struct enforcer *e, __u64 deferred)
{
	struct reset_request r;
	__u64 key, next;
	bool have = false;
	size_t n = 0;

	/*
	 * Walk only when the data plane deferred a request since the last
	 * walk: it counts reset_requests_deferred after the insert
	 * (accel_maps.h request_reset), and deferred is read before the
	 * walk, so a request the walk missed moves the count again.  Even
	 * empty, the walk's first get_next_key visits every bucket of a map
	 * sized as the SOCKHASH (htab_map_get_next_key, kernel/bpf/
	 * hashtab.c): a third of a millisecond at 512k.
	 */
	if (e->backlog_fd < 0 || deferred == e->deferred_seen)
		return;
	e->deferred_seen = deferred;
	while (!bpf_map_get_next_key(e->backlog_fd, have ? &key : NULL, &next)) {
		/* delete the previous key only now: get_next_key needs it */
		if (have)
			bpf_map_delete_elem(e->backlog_fd, &key);
		key = next;
		have = true;
		if (bpf_map_lookup_elem(e->backlog_fd, &key, &r))
			continue;
		push_request(e, &r);
		n++;
	}
	if (have)
		bpf_map_delete_elem(e->backlog_fd, &key);
	if (n)
		pr_info("%zu reset requests taken from the backlog (the ring was full)\n", n);
}

int enforcer_start(struct enforcer *e, const struct enforce_plan *plan,
		   const struct bpf_object *dataplane, const struct agent_maps *maps,
		   uint64_t max_unread, uint64_t budget)
{
	int sock_hash_fd = maps->fd[MAP_SOCK_HASH], err;

	e->plan = *plan;
	e->backlog_fd = maps->fd[MAP_RESET_BACKLOG];
	e->stats_fd = maps->fd[MAP_STATS];
	e->deferred_seen = 0;
	e->max_unread = max_unread;
	e->budget = budget;
	if (plan->resets == RESETS_ITER || plan->unread == UNREAD_ITER) {
		err = sockiter_load(&e->it, dataplane, sock_hash_fd, plan->resets == RESETS_ITER,
				    plan->unread == UNREAD_ITER);
		if (err) {
			pr_warn("loading the enforcer's iterators failed: %s\n", strerror(-err));
			return err;
		}
	}
	if (plan->resets == RESETS_SOCK_DIAG || plan->unread == UNREAD_WATCH) {
		err = syscall_ops_load(&e->so, dataplane);
		if (err) {
			pr_warn("loading the enforcer's syscall programs failed: %s\n", strerror(-err));
			return err;
		}
	}
	e->rb = ring_buffer__new(maps->fd[MAP_RESETS], take_request, e, NULL);
	return e->rb ? 0 : -errno;
}

int enforcer_epoll_fd(const struct enforcer *e)
{
	return e->rb ? ring_buffer__epoll_fd(e->rb) : -1;
}

static void format_end(char *out, size_t len, int family, const __u8 *addr, __u16 port)
{
	char a[INET6_ADDRSTRLEN] = "?";

	if (family == AF_INET) {
		inet_ntop(AF_INET, addr, a, sizeof(a));
		snprintf(out, len, "%s:%u", a, port);
	} else {
		inet_ntop(AF_INET6, addr, a, sizeof(a));
		snprintf(out, len, "[%s]:%u", a, port);
	}
}

static void log_reset(int family, const __u8 *local, __u16 lport, const __u8 *remote,
		      __u16 rport, __u32 reason, const char *outcome)
{
	char l[64], r[64];

	format_end(l, sizeof(l), family, local, lport);
	format_end(r, sizeof(r), family, remote, rport);
	pr_warn("reset %s <-> %s (%s): %s\n", l, r, reason < RS__MAX ? reset_names[reason] : "?",
		outcome);
}

/* ---- iter/tcp ---- */

/* One pass of reset_doomed in the current namespace: log what it ended and
 * doom the peers it named.  Returns how many new cookies it doomed. */
static int iter_pass(struct enforcer *e)
{
	static struct reset_record rec[4096]; /* the doomed map's size */
	int n, i, added = 0;

	n = sockiter_reset(&e->it, rec, 4096);
	for (i = 0; i < n; i++) {
		log_reset(rec[i].family, rec[i].local, rec[i].local_port, rec[i].remote,
			  rec[i].remote_port, rec[i].reason,
			  rec[i].destroyed == 0 ? "both ends see an error" :
			  rec[i].destroyed < 0 ? strerror(-rec[i].destroyed) :
						 "this kernel has no bpf_sock_destroy");
		if (rec[i].peer && !sockiter_doom(&e->it, rec[i].peer, rec[i].reason, false, NULL))
			added++;
	}
	return added;
}

/* Passes of reset_doomed in the agent's own namespace, then every tracked
 * one, until a pass names no new peer (at most 3). */
static void iter_passes(struct enforcer *e, int self)
{
	int pass, added;
	size_t i;

	for (pass = 0; pass < 3; pass++) {
		added = netns_back(self) == 0 ? iter_pass(e) : 0;
		for (i = 0; i < e->n_ns; i++)
			if (!netns_enter(&e->ns[i]))
				added += iter_pass(e);
		if (!added)
			break;
	}
}

/* Requests per round of enforce_iter: with the peers each names, they fit
 * the doomed map (sockiter.bpf.c, 4096) and one pass's records. */
#define ITER_CHUNK 1024

static void enforce_iter_chunk(struct enforcer *e, const struct reset_ask *asks, size_t n)
{
	int self, added, err;
	size_t i;

	/* the requests' sockets only: each pass names the peers of what it
	 * ended, and the next ends them.  A peer doomed with its socket
	 * could be ended first, and its RST close the socket the request
	 * named before the iterator reaches it: that reset would go uncounted */
	for (i = 0; i < n; i++) {
		err = sockiter_doom(&e->it, asks[i].cookie, asks[i].reason, true,
				    &asks[i].service);
		if (err)
			pr_warn("reset of cookie %llu: the doomed map refused it (%s)\n",
				(unsigned long long)asks[i].cookie, strerror(-err));
	}
	self = netns_save();
	if (self < 0)
		goto out;
	iter_passes(e, self);
	/* A request's socket not found: its owner closed it after the send
	 * was refused, and it is a timewait socket now (tcp_time_wait(),
	 * net/ipv4/tcp_minisocks.c), which iter/tcp hands over but
	 * bpf_skc_to_tcp_sock() refuses.  Nothing named its peer, which
	 * would read a clean EOF after what it got: end the peer the request
	 * named instead, counted and learned in its place. */
	for (i = 0, added = 0; i < n; i++) {
		if (!asks[i].peer || !sockiter_doom_pending(&e->it, asks[i].cookie))
			continue;
		if (!sockiter_doom(&e->it, asks[i].peer, asks[i].reason, true, &asks[i].service))
			added++;
	}
	if (added)
		iter_passes(e, self);
	netns_restore(self);
out:
	sockiter_undoom_all(&e->it);
}

static void enforce_iter(struct enforcer *e, const struct reset_ask *asks, size_t n)
{
	size_t off;

	for (off = 0; off < n; off += ITER_CHUNK)
		enforce_iter_chunk(e, asks + off, n - off < ITER_CHUNK ? n - off : ITER_CHUNK);
}

/* ---- sock_diag ---- */


/* The side to learn for a socket ended over sock_diag: the request's,
 * from the data plane (the same key it learns), else (the guard's splice
 * requests, the budget's) what the data plane would have built for the
 * socket named: its own side (struct service_key), the server's where it
 * is the end listened on here, else the client's with the socket's
 * cgroup id (the dump's INET_DIAG_CGROUP_ID, the id sock_ops reads), with
 * this namespace's cookie where the address is loopback. */
static void diag_service(const struct reset_ask *a, const struct diag_sock *s,
			 bool service_local, struct service_key *svc)
{
	struct sock_key k = { .local_port = s->lport, .remote_port = s->rport };
	uint64_t cookie;

	if (a->service.port) {
		*svc = a->service;
		return;
	}
	memcpy(k.local_ip, s->local, sizeof(k.local_ip));
	memcpy(k.remote_ip, s->remote, sizeof(k.remote_ip));
	/* the doomed socket's namespace: the enforcer entered it (0 before 5.14) */
	if (sock_key_is_loopback(&k)) {
		netns_cookie(&cookie);
		k.netns = cookie;
	}
	service_key_of(svc, &k, service_local, service_local ? SVC_SERVER : SVC_CLIENT, s->cgroup);
}

/* End s, found in the namespace this thread is in.  counts: it stands for
 * the request (its own socket, or its peer when its own is gone): learn
 * its service endpoint and count the reset first (as reset_doomed does
 * before bpf_sock_destroy: a connection made after the reset must not
 * pair with that endpoint), then end it. */
static void diag_end(struct enforcer *e, const struct reset_ask *a, const struct diag_sock *s,
		     bool counts, bool service_local)
{
	struct service_key svc;
	int err;

	if (counts) {
		diag_service(a, s, service_local, &svc);
		err = syscall_ops_note_reset(&e->so, a->reason, &svc);
		if (err)
			pr_debug("counting a reset: %s\n", strerror(-err));
	}
	err = diag_destroy(s);
	/* a peer gone by its turn: the first end's RST reached it */
	if (!counts && err == -ENOENT)
		return;
	log_reset(s->family, s->family == AF_INET ? s->local + 12 : s->local, s->lport,
		  s->family == AF_INET ? s->remote + 12 : s->remote, s->rport, a->reason,
		  err ? strerror(-err) : "both ends see an error");
}

/* A lookup of a socket to end that could not finish (not "no such
 * socket"): that socket may stay up, so it is said and counted
 * (reset_lookups_failed). */
static void diag_lookup_failed(struct enforcer *e, const struct reset_ask *a, const char *where,
			       int err)
{
	e->lookups_failed++;
	pr_warn("sock_diag in %s: looking up a socket to end (%s, cookie %" PRIu64 "): %s\n",
		where,
		a->reason < RS__MAX ? reset_names[a->reason] : "?", a->cookie, strerror(-err));
}

/* The socket a request names, as an exact lookup takes it: its address
 * (struct reset_tuple), or the reverse of it for its peer.  A v4 tuple is
 * asked for as AF_INET, which finds a dual-stack AF_INET6 socket too
 * (inet_diag_find_one_icsk looks a v4-mapped one up as v4 all the same):
 * the two ends of one connection need not be of one family. */
static void diag_want(const struct reset_ask *a, bool peer, struct diag_sock *w)
{
	const struct reset_tuple *t = &a->sock;
	static const uint8_t v4[12] = { [10] = 0xff, [11] = 0xff };

	memset(w, 0, sizeof(*w));
	memcpy(peer ? w->remote : w->local, t->local, 16);
	memcpy(peer ? w->local : w->remote, t->remote, 16);
	w->lport = peer ? t->rport : t->lport;
	w->rport = peer ? t->lport : t->rport;
	/* the peer's bound device is not known; a local pair's ends are
	 * rarely bound to one (inet_bound_dev_eq: 0 takes the unbound) */
	w->ifindex = peer ? 0 : t->ifindex;
	w->family = !memcmp(w->local, v4, 12) && !memcmp(w->remote, v4, 12) ? AF_INET : AF_INET6;
	w->cookie = peer ? a->peer : a->cookie;
}

/* Look w up in the agent's namespace, then in every tracked one, until
 * found: 0 with the thread in that namespace and *got filled, or -ENOENT
 * (in none: closed), or the last error of a lookup that failed (said and
 * counted). */
static int diag_locate(struct enforcer *e, const struct reset_ask *a, int self,
		       const struct diag_sock *w, struct diag_sock *got)
{
	int ret, err = -ENOENT;
	size_t i;

	for (i = 0; i <= e->n_ns; i++) {
		if (i == 0 ? netns_back(self) : netns_enter(&e->ns[i - 1]))
			continue;
		ret = diag_get(w, got);
		if (!ret)
			return 0;
		if (ret != -ENOENT) {
			diag_lookup_failed(e, a, i ? "a tracked netns" : "the agent's netns", ret);
			err = ret;
		}
	}
	return err;
}

/* End the requests' connections by looking each socket up by its address
 * and cookie: the requests' sockets everywhere first, then their peers
 * (a peer ended first would RST the request's socket away before it is
 * found, and its reset would go uncounted). */
static void enforce_diag_exact(struct enforcer *e, const struct reset_ask *asks, size_t n,
			       int self)
{
	struct diag_sock w, s;
	bool *found;
	size_t i;
	int ret;

	found = calloc(n, sizeof(*found));
	if (!found) {
		pr_warn("ending %zu connections: out of memory\n", n);
		return;
	}
	for (i = 0; i < n; i++) {
		if (!asks[i].sock.family)
			continue;
		diag_want(&asks[i], false, &w);
		if (diag_locate(e, &asks[i], self, &w, &s))
			continue;
		found[i] = true;
		ret = diag_listening(&s);
		diag_end(e, &asks[i], &s, true, ret > 0);
	}
	for (i = 0; i < n; i++) {
		if (!asks[i].peer || !asks[i].sock.family)
			continue;
		diag_want(&asks[i], true, &w);
		if (diag_locate(e, &asks[i], self, &w, &s))
			continue;
		/* A request's socket found nowhere: its owner closed it
		 * after the send was refused, and the kernel let it go.
		 * Nothing else would end its peer, which would read a clean
		 * EOF after what it got: it is ended in its place, counted
		 * and learned as the request says (as enforce_iter_chunk
		 * does). */
		diag_end(e, &asks[i], &s, !found[i], !found[i] && diag_listening(&s) > 0);
	}
	free(found);
}

static void enforce_diag(struct enforcer *e, const struct reset_ask *asks, size_t n)
{
	size_t i;
	int self;

	/* a request without an address (its socket's could not be read):
	 * nothing to look it up by */
	for (i = 0; i < n; i++)
		if (!asks[i].sock.family)
			diag_lookup_failed(e, &asks[i], "no netns", -EDESTADDRREQ);
	self = netns_save();
	if (self < 0)
		return;
	enforce_diag_exact(e, asks, n, self);
	netns_restore(self);
}

/* End these connections, both ends, wherever they live. */
static void enforce(struct enforcer *e, const struct reset_ask *asks, size_t n)
{
	if (!n)
		return;
	if (e->plan.resets == RESETS_ITER)
		enforce_iter(e, asks, n);
	else
		enforce_diag(e, asks, n);
}

/* The ring first, then what it had no room for. */
static void take_requests(struct enforcer *e, __u64 deferred)
{
	ring_buffer__consume(e->rb);
	take_backlog(e, deferred);
	enforce(e, e->pending, e->n_pending);
	e->n_pending = 0;
}

void enforcer_on_requests(struct enforcer *e)
{
	struct accel_stats st;
	__u32 zero = 0;

	if (percpu_sum_u64(e->stats_fd, &zero, (__u64 *)&st, sizeof(st) / sizeof(__u64)))
		st.reset_requests_deferred = e->deferred_seen + 1; /* unknown: walk */
	take_requests(e, st.reset_requests_deferred);
}

void enforcer_set_namespaces(struct enforcer *e, const struct netns_ref *ns, size_t n)
{
	e->ns = ns;
	e->n_ns = n;
}

static int by_bytes_desc(const void *a, const void *b)
{
	const struct unread_record *x = a, *y = b;

	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

void enforcer_tick(struct enforcer *e, const struct accel_stats *st, struct agent_gauges *g)
{
	static struct unread_record top[UNREAD_SCAN_MAX];
	static struct reset_ask asks[UNREAD_SCAN_MAX];
	__u64 total = 0, largest = 0;
	uint64_t over;
	int n, i;

	/* a request the data plane put in the backlog just after the last
	 * wake-up took it: no wake-up follows, this tick takes it */
	if (e->rb) /* st unknown: a count the last walk did not see */
		take_requests(e, st ? st->reset_requests_deferred : e->deferred_seen + 1);
	if (!e->rb) /* not started: nothing to measure with */
		n = 0;
	else if (e->plan.unread == UNREAD_ITER)
		n = sockiter_scan(&e->it, top, UNREAD_SCAN_MAX, &total, &largest);
	else
		n = syscall_ops_scan(&e->so, st ? &st->sockets_added : NULL, top,
				     UNREAD_SCAN_MAX, &total, &largest);
	if (n < 0) {
		pr_debug("unread scan: %s\n", strerror(-n));
		n = 0;
	}
	g->unread_bytes = total;
	g->unread_max_bytes = largest;
	g->unread_limit = e->max_unread;
	g->unread_budget = e->budget;
	g->reset_lookups_failed = e->lookups_failed;
	if (!e->budget || g->unread_bytes <= e->budget || !e->rb)
		return;
	/* Over the host-wide budget: end the largest until back under it. */
	qsort(top, n, sizeof(top[0]), by_bytes_desc);
	over = g->unread_bytes - e->budget;
	for (i = 0; i < n && over; i++) {
		asks[i] = (struct reset_ask){ .cookie = top[i].cookie, .reason = RS_BUDGET,
					      .sock = top[i].sock };
		over = top[i].bytes >= over ? 0 : over - top[i].bytes;
	}
	pr_warn("unread redirected bytes %llu over the budget %llu: ending the %d largest\n",
		(unsigned long long)g->unread_bytes, (unsigned long long)e->budget, i);
	enforce(e, asks, i);
}

void enforcer_stop(struct enforcer *e)
{
	ring_buffer__free(e->rb);
	e->rb = NULL;
	if (e->it.skel)
		sockiter_destroy(&e->it);
	if (e->so.skel)
		syscall_ops_destroy(&e->so);
	free(e->pending);
	e->pending = NULL;
	e->n_pending = e->cap_pending = 0;
}

int enforcer_progs(const struct enforcer *e, struct prog_ref *out, int max)
{
	int n = sockiter_progs(&e->it, out, max);

	return n + syscall_ops_progs(&e->so, out + n, max - n);
}

uint64_t enforcer_default_budget(void)
{
	unsigned long long lo, pressure, hi;
	FILE *f = fopen("/proc/sys/net/ipv4/tcp_mem", "re");
	long page = sysconf(_SC_PAGESIZE);
	int got = 0;

	if (f) {
		got = fscanf(f, "%llu %llu %llu", &lo, &pressure, &hi);
		fclose(f);
	}
	/* redirected bytes are charged to TCP memory (bpf_tcp_ingress,
	 * sk_rmem_schedule): stay well clear of the pressure threshold,
	 * where every TCP socket on the host starts to suffer */
	return got == 3 ? (uint64_t)pressure * page / 2 : 256ULL << 20;
}

/* ---- the self-test's reset check ---- */

/* A connected loopback pair: fds in s[0] (client), s[1] (server). */
static int loopback_pair(int s[2])
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	s[0] = s[1] = -1;
	if (l < 0)
		return -errno;
	if (bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&a, &alen))
		goto fail;
	s[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s[0] < 0 || connect(s[0], (struct sockaddr *)&a, sizeof(a)))
		goto fail;
	s[1] = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	if (s[1] < 0)
		goto fail;
	close(l);
	return 0;
fail:
	{
		int err = -errno;

		close(l);
		if (s[0] >= 0)
			close(s[0]);
		s[0] = -1;
		return err;
	}
}

/* The error a socket sees (ECONNABORTED, ECONNRESET), within 2 s; 0: none. */
static int error_seen(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;

	if (poll(&p, 1, 2000) != 1)
		return 0;
	if (recv(fd, &c, 1, MSG_DONTWAIT) < 0)
		return errno == EAGAIN ? 0 : errno;
	return 0;
}

/* End fd's socket over sock_diag as the enforcer does: looked up by its
 * address and cookie, then SOCK_DESTROY. */
static int diag_end_fd(int fd, uint64_t cookie)
{
	struct sockaddr_in a, b;
	socklen_t alen = sizeof(a), blen = sizeof(b);
	struct diag_sock w = { .family = AF_INET, .cookie = cookie }, s;
	int err;

	if (getsockname(fd, (struct sockaddr *)&a, &alen) ||
	    getpeername(fd, (struct sockaddr *)&b, &blen))
		return -errno;
	w.local[10] = w.local[11] = w.remote[10] = w.remote[11] = 0xff;
	memcpy(w.local + 12, &a.sin_addr, 4);
	memcpy(w.remote + 12, &b.sin_addr, 4);
	w.lport = ntohs(a.sin_port);
	w.rport = ntohs(b.sin_port);
	err = diag_get(&w, &s);
	return err ? err : diag_destroy(&s);
}

int enforcer_check_reset(enum reset_mech mech, const struct bpf_object *dataplane,
			 int sock_hash_fd, char *detail, size_t len)
{
	struct sockiter it = {};
	uint64_t cookie = 0;
	socklen_t clen = sizeof(cookie);
	struct sock_id key;
	int s[2], i, err, e0, e1;
	__u64 value;

	err = loopback_pair(s);
	if (err) {
		snprintf(detail, len, "a loopback connection to end: %s", strerror(-err));
		return err;
	}
	/* in the SOCKHASH, as a tracked socket is: psock, tcp_bpf's proto */
	for (i = 0; i < 2; i++) {
		key = (struct sock_id){ .cookie = ~0ULL - i, .isn = 1 };
		value = s[i];
		if (bpf_map_update_elem(sock_hash_fd, &key, &value, BPF_NOEXIST)) {
			err = -errno;
			snprintf(detail, len, "a socket into the SOCKHASH: %s", strerror(errno));
			goto out;
		}
	}
	if (getsockopt(s[0], SOL_SOCKET, SO_COOKIE, &cookie, &clen)) {
		err = -errno;
		snprintf(detail, len, "SO_COOKIE: %s", strerror(errno));
		goto out;
	}
	if (mech == RESETS_ITER) {
		struct reset_record rec;

		err = sockiter_load(&it, dataplane, sock_hash_fd, true, false);
		if (!err)
			err = sockiter_doom(&it, cookie, RS_SPLICE, false, NULL);
		if (!err) {
			err = sockiter_reset(&it, &rec, 1);
			err = err == 1 ? rec.destroyed ? (rec.destroyed < 0 ? rec.destroyed : -ENOSYS) : 0
				       : err < 0 ? err : -ENOENT;
		}
		if (err) {
			snprintf(detail, len, "iter/tcp: %s",
				 err == -ENOSYS ? "no bpf_sock_destroy kfunc (6.5+)" : strerror(-err));
			goto out;
		}
	} else {
		err = diag_end_fd(s[0], cookie);
		if (err < 0) {
			snprintf(detail, len, "sock_diag SOCK_DESTROY: %s%s", strerror(-err),
				 err == -EOPNOTSUPP ? " (CONFIG_INET_DIAG_DESTROY off)" : "");
			goto out;
		}
		err = 0;
	}
	e0 = error_seen(s[0]);
	e1 = error_seen(s[1]);
	if (!e0 || !e1) {
		err = -EPROTO;
		snprintf(detail, len, "%s ended a connection, but %s saw no error",
			 reset_mech_names[mech], !e0 ? "the ended end" : "its peer");
		goto out;
	}
	snprintf(detail, len, "%s ends a connection: %s here, %s at the peer",
		 reset_mech_names[mech], strerrorname_np(e0) ?: "?", strerrorname_np(e1) ?: "?");
out:
	if (it.skel)
		sockiter_destroy(&it);
	close(s[0]);
	close(s[1]);
	return err;
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Why a connection is not redirected, per connection and per service
 * endpoint: see whynot.h. */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "netaddr.h"
#include "sock_diag.h"
#include "whynot.h"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

#define WN_NAME(e, s) [e - WN__BASE] = s,
static const char *const extra_names[WN__MAX - WN__BASE] = { WHYNOT_EXTRA_REASONS(WN_NAME) };

const char *whynot_reason_name(int r)
{
	if (r == WN_REDIRECTED)
		return "redirected";
	if (r >= 0 && r < FB__MAX)
		return fallback_names[r];
	if (r >= FB__MAX && r < FB__MAX + SKIP__MAX)
		return skip_names[r - FB__MAX];
	if (r > WN__BASE && r < WN__MAX)
		return extra_names[r - WN__BASE];
	return "?";
}

void whynot_endpoint_str(const uint8_t addr[16], uint16_t port, char *buf, size_t len)
{
	__u32 a[4];
	char s[INET6_ADDRSTRLEN];

	memcpy(a, addr, sizeof(a));
	addr16_str(a, s, sizeof(s));
	snprintf(buf, len, strchr(s, ':') ? "[%s]:%u" : "%s:%u", s, port);
}

/* What a dump keeps of each socket's sk_state: its flags and, next to
 * them, why it is doomed (struct sock_state). */
struct st_window {
	uint32_t flags;
	uint8_t doom_reason;
};
_Static_assert(offsetof(struct sock_state, doom_reason) ==
	       offsetof(struct sock_state, flags) + sizeof(__u32),
	       "sk_state: doom_reason right after flags");

static int cmp_tuple(const void *a, const void *b)
{
	const struct diag_sock *x = *(const struct diag_sock *const *)a;
	const struct diag_sock *y = *(const struct diag_sock *const *)b;
	int c;

	if ((c = memcmp(x->local, y->local, 16)))
		return c;
	if (x->lport != y->lport)
		return x->lport < y->lport ? -1 : 1;
	if ((c = memcmp(x->remote, y->remote, 16)))
		return c;
	return x->rport < y->rport ? -1 : x->rport > y->rport;
}

/* The local socket at the other end of s, if it is in this namespace. */
static const struct diag_sock *peer_of(struct diag_sock **est, size_t n,
				       const struct diag_sock *s)
{
	struct diag_sock want = {}, *wp = &want, **hit;

	memcpy(want.local, s->remote, 16);
	memcpy(want.remote, s->local, 16);
	want.lport = s->rport;
	want.rport = s->lport;
	hit = bsearch(&wp, est, n, sizeof(*est), cmp_tuple);
	return hit ? *hit : NULL;
}

static bool addr_any(const uint8_t a[16])
{
	static const uint8_t zero[16], v4any[16] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(a, zero, 16) || !memcmp(a, v4any, 16);
}

/* s's local end is a listener's (it was accepted: the server's end). */
static bool accepted(const struct diag_list *l, const struct diag_sock *s)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		const struct diag_sock *x = &l->v[i];

		if (x->state == DIAG_TCP_LISTEN && x->lport == s->lport &&
		    (addr_any(x->local) || !memcmp(x->local, s->local, 16)))
			return true;
	}
	return false;
}

static bool cgroup_attached(const struct agent_info *info, uint64_t id)
{
	int i;

	for (i = 0; i < info->n_cgroups; i++)
		if (info->cgroups[i].id == id)
			return true;
	return false;
}

static bool st_of(const struct diag_sock *s, struct st_window *w)
{
	if (!s || !s->has_storage)
		return false;
	memcpy(&w->flags, s->storage, sizeof(w->flags));
	w->doom_reason = s->storage[sizeof(w->flags)];
	return true;
}

static uint64_t netns_cookie(void)
{
	uint64_t c = 0;
	socklen_t len = sizeof(c);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd >= 0) {
		if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &c, &len))
			c = 0;
		close(fd);
	}
	return c;
}

struct scan {
	const struct agent_maps *m;
	uint64_t netns, now_ns;
	/* client sides looked up: one lookup per distinct side, not per
	 * socket, whatever the connections (scrape_cost_constant.sh) */
	struct {
		struct service_key k;
		uint32_t hazards;
	} client[64];
	int n_client;
};

/* The hazards learned on side k, less than HAZARD_TTL_NS ago
 * (bpf/accel_tracking.h hazard_recent); *age_s since the last. */
static uint32_t hazards_of(const struct scan *sc, const struct service_key *k, double *age_s)
{
	struct service_profile p;

	if (sc->m->fd[MAP_SERVICE_PROFILES] < 0 ||
	    bpf_map_lookup_elem(sc->m->fd[MAP_SERVICE_PROFILES], k, &p) || !p.hazards ||
	    (int64_t)(sc->now_ns - p.hazard_ns) >= (int64_t)HAZARD_TTL_NS)
		return 0;
	if (age_s)
		*age_s = (int64_t)(sc->now_ns - p.hazard_ns) / 1e9;
	return p.hazards;
}

static void side_key(struct service_key *k, const struct scan *sc, const uint8_t addr[16],
		     uint16_t port, enum service_side side, uint64_t cgroup)
{
	memset(k, 0, sizeof(*k));
	memcpy(k->addr, addr, 16);
	k->netns = sk_ip_is_loopback(k->addr) ? sc->netns : 0;
	k->cgroup = side == SVC_CLIENT ? cgroup : 0;
	k->port = port;
	k->side = side;
}

static uint32_t client_hazards(struct scan *sc, const uint8_t addr[16], uint16_t port,
			       uint64_t cgroup)
{
	struct service_key k;
	int i;

	side_key(&k, sc, addr, port, SVC_CLIENT, cgroup);
	for (i = 0; i < sc->n_client; i++)
		if (!memcmp(&sc->client[i].k, &k, sizeof(k)))
			return sc->client[i].hazards;
	if (sc->n_client == (int)(sizeof(sc->client) / sizeof(sc->client[0])))
		return 0;
	sc->client[sc->n_client].k = k;
	sc->client[sc->n_client].hazards = hazards_of(sc, &k, NULL);
	return sc->client[sc->n_client++].hazards;
}

static int find_service(struct whynot *w, const uint8_t addr[16], uint16_t port)
{
	struct whynot_service *s;
	size_t i;

	for (i = 0; i < w->n_svc; i++)
		if (w->svc[i].port == port && !memcmp(w->svc[i].addr, addr, 16))
			return (int)i;
	if (w->n_svc == WHYNOT_SERVICES_MAX) {
		w->services_dropped++;
		return -1;
	}
	s = &w->svc[w->n_svc];
	memset(s, 0, sizeof(*s));
	memcpy(s->addr, addr, 16);
	s->port = port;
	s->hazard_age_s = -1;
	return (int)w->n_svc++;
}

/*
 * One end's verdict.  With its sk_state: what the data plane decided
 * (a socket keeps it after it left the SOCKHASH, bpf/accel_life.h
 * untrack_self).  Without: the data plane decided before it made any
 * (bpf/accel_tracking.h worth_tracking, peer_may_be_tracked) or never saw
 * it; what it would have decided on is read back: the hazards the two
 * sides learned, whether the peer is local and attached, the pause.
 */
static int verdict_of(struct scan *sc, const struct agent_info *info, const struct counters *cn,
		      const struct diag_sock *s, const struct diag_sock *peer, bool passive,
		      struct whynot_service *svc, int svc_i, uint32_t *hazards)
{
	const struct diag_sock *client = passive ? peer : s;
	struct service_key k;
	struct st_window st, pst;

	*hazards = 0;
	if (st_of(s, &st)) {
		if (st.flags & SS_DOOMED) {
			*hazards = 1U << st.doom_reason;
			return FB_HAZARD;
		}
		if ((st.flags & SS_PAIRED) && !(st.flags & SS_TCP))
			return WN_REDIRECTED;
		if ((st.flags & SS_TRACKED) && (st.flags & SS_ENDPOINT))
			return WN_PENDING;
		if (st.flags & SS_PAIRED)
			return FB_NO_PEER; /* its peer went, or fell behind */
		/* storage made, never tracked (bpf/accel_life.h life_begin):
		 * sock_hash was full, or the guard was idle */
		if (!(st.flags & (SS_TRACKED | SS_TCP)))
			return cn->sockets_max && cn->sockets_now >= cn->sockets_max ? FB_NO_ROOM
										   : FB_ARMING;
		/* tracked, withdrawn unclaimed: why its peer did not claim */
		if (peer && !cgroup_attached(info, peer->cgroup) && !st_of(peer, &pst))
			return WN_CGROUP;
		return FB_NO_PEER;
	}
	if (svc_i >= 0 && svc->hazard_age_s < 0) {
		side_key(&k, sc, svc->addr, svc->port, SVC_SERVER, 0);
		svc->hazards = hazards_of(sc, &k, &svc->hazard_age_s);
		if (!svc->hazards)
			svc->hazard_age_s = 0;
	}
	if (svc_i >= 0 && svc->hazards) {
		*hazards = svc->hazards;
		return FB_HAZARD;
	}
	if (client) {
		*hazards = client_hazards(sc, client->local, passive ? s->lport : s->rport,
					  client->cgroup);
		if (*hazards)
			return FB_HAZARD;
	}
	if (!peer)
		return WN_SKIP(SKIP_REMOTE);
	if (!cgroup_attached(info, peer->cgroup) && !st_of(peer, &pst))
		return WN_CGROUP;
	if (cn->paused)
		return FB_PAUSED;
	if (st_of(peer, &pst))
		return FB_NO_PEER;
	return WN_UNTRACKED;
}

static int cmp_svc(const void *a, const void *b)
{
	const struct whynot_service *x = a, *y = b;
	int c;

	if (x->conns != y->conns)
		return x->conns > y->conns ? -1 : 1;
	if ((c = memcmp(x->addr, y->addr, 16)))
		return c;
	return x->port < y->port ? -1 : x->port > y->port;
}

static int dump(const struct agent_maps *m, struct diag_list *l, bool *capped)
{
	static const int families[] = { AF_INET, AF_INET6 };
	const uint32_t states = 1 << DIAG_TCP_ESTABLISHED | 1 << DIAG_TCP_LISTEN;
	struct diag_ctx ctx = { .any_cgroup = true, .budget = DIAG_MAX_SOCKS_PER_NETNS };
	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi);
	int fd = m->fd[MAP_SK_STATE], ret = 0;
	size_t i;

	if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &mi, &len)) {
		ctx.storage_id = mi.id;
		ctx.storage_size = sizeof(struct sock_state);
		ctx.storage_off = offsetof(struct sock_state, flags);
		ctx.storage_len = sizeof(__u32) + 1;
	}
	for (i = 0; i < sizeof(families) / sizeof(families[0]) && !ret; i++)
		ret = ctx.storage_id ? diag_dump_tcp_storage(families[i], states, fd, &ctx, l)
				     : diag_dump_tcp(families[i], states, &ctx, l);
	*capped = ctx.capped;
	return ret;
}

int whynot_scan(const struct agent_maps *m, const struct agent_info *info,
		const struct counters *cn, struct whynot *w)
{
	struct scan sc = { .m = m, .netns = netns_cookie() };
	struct diag_list l = {};
	struct diag_sock **est = NULL;
	struct whynot_service *sorted;
	struct timespec ts;
	size_t i, n = 0, *rank = NULL;
	int ret;

	memset(w, 0, sizeof(*w));
	clock_gettime(CLOCK_MONOTONIC, &ts); /* bpf_ktime_get_ns's clock */
	sc.now_ns = (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	ret = dump(m, &l, &w->capped);
	if (ret)
		goto out;
	est = calloc(l.n + 1, sizeof(*est));
	w->conns = calloc(l.n + 1, sizeof(*w->conns));
	w->svc = calloc(WHYNOT_SERVICES_MAX, sizeof(*w->svc));
	if (!est || !w->conns || !w->svc) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < l.n; i++)
		if (l.v[i].state == DIAG_TCP_ESTABLISHED)
			est[n++] = &l.v[i];
	qsort(est, n, sizeof(*est), cmp_tuple);

	for (i = 0; i < n; i++) {
		const struct diag_sock *s = est[i], *peer;
		struct whynot_conn *c;
		struct st_window st;
		bool passive;
		int svc;

		if (!cgroup_attached(info, s->cgroup))
			continue; /* not nginx's: its peer's view only */
		peer = peer_of(est, n, s);
		passive = st_of(s, &st) && (st.flags & SS_TRACKED) ? !!(st.flags & SS_PASSIVE)
								  : accepted(&l, s);
		c = &w->conns[w->n_conns++];
		memcpy(c->local, s->local, 16);
		memcpy(c->remote, s->remote, 16);
		c->lport = s->lport;
		c->rport = s->rport;
		c->cookie = s->cookie;
		c->cgroup = s->cgroup;
		c->passive = passive;
		svc = passive ? find_service(w, s->local, s->lport)
			      : find_service(w, s->remote, s->rport);
		c->svc = svc;
		c->reason = verdict_of(&sc, info, cn, s, peer, passive,
				       svc >= 0 ? &w->svc[svc] : NULL, svc, &c->hazards);
	}
	/* per service, each connection once: by its server's end where both
	 * ends are nginx's, and not redirected if either end is not */
	for (i = 0; i < w->n_conns; i++) {
		struct whynot_conn *c = &w->conns[i], *other = NULL;
		size_t j;
		int r;

		if (c->svc < 0)
			continue;
		for (j = 0; j < w->n_conns && !c->passive; j++)
			if (w->conns[j].passive && w->conns[j].lport == c->rport &&
			    w->conns[j].rport == c->lport &&
			    !memcmp(w->conns[j].local, c->remote, 16) &&
			    !memcmp(w->conns[j].remote, c->local, 16))
				other = &w->conns[j];
		if (other)
			continue; /* counted at the server's end */
		r = c->reason;
		w->svc[c->svc].conns++;
		if (r == WN_REDIRECTED)
			w->svc[c->svc].redirected++;
		else
			w->svc[c->svc].tcp[r]++;
	}
	/* a client end counted at its server's: take its reason there too */
	for (i = 0; i < w->n_conns; i++) {
		struct whynot_conn *c = &w->conns[i];
		size_t j;

		if (c->svc < 0 || c->passive || c->reason == WN_REDIRECTED)
			continue;
		for (j = 0; j < w->n_conns; j++) {
			struct whynot_conn *sv = &w->conns[j];

			if (sv->passive && sv->lport == c->rport && sv->rport == c->lport &&
			    !memcmp(sv->local, c->remote, 16) && !memcmp(sv->remote, c->local, 16) &&
			    sv->reason == WN_REDIRECTED) {
				w->svc[sv->svc].redirected--;
				w->svc[sv->svc].tcp[c->reason]++;
			}
		}
	}
	/* most connections first; conns follow their service */
	rank = calloc(w->n_svc + 1, sizeof(*rank));
	sorted = calloc(w->n_svc + 1, sizeof(*sorted));
	if (!rank || !sorted) {
		free(sorted);
		ret = -ENOMEM;
		goto out;
	}
	memcpy(sorted, w->svc, w->n_svc * sizeof(*sorted));
	qsort(sorted, w->n_svc, sizeof(*sorted), cmp_svc);
	for (i = 0; i < w->n_svc; i++) {
		size_t j;

		for (j = 0; j < w->n_svc; j++)
			if (sorted[j].port == w->svc[i].port && !memcmp(sorted[j].addr, w->svc[i].addr, 16))
				rank[i] = j;
	}
	for (i = 0; i < w->n_conns; i++)
		if (w->conns[i].svc >= 0)
			w->conns[i].svc = (int)rank[w->conns[i].svc];
	free(w->svc);
	w->svc = sorted;
out:
	free(rank);
	free(est);
	free(l.v);
	if (ret)
		whynot_free(w);
	return ret;
}

void whynot_free(struct whynot *w)
{
	free(w->conns);
	free(w->svc);
	memset(w, 0, sizeof(*w));
}

static json_object *hazards_json(uint32_t bits)
{
	json_object *a = json_object_new_array();
	int i;

	for (i = 0; i < RS__MAX; i++)
		if (bits & (1U << i))
			json_object_array_add(a, json_object_new_string(reset_names[i]));
	if (bits & (1U << PH_ULP))
		json_object_array_add(a, json_object_new_string("ulp"));
	return a;
}

static void hazards_str(uint32_t bits, char *buf, size_t len)
{
	size_t at = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i <= PH_ULP && at < len; i++)
		if (bits & (1U << i))
			at += snprintf(buf + at, len - at, "%s%s", at ? "," : "",
				       i == PH_ULP ? "ulp" : reset_names[i]);
}

json_object *whynot_json(const struct whynot *w, size_t max_svc, size_t max_conns)
{
	json_object *root = json_object_new_object(), *a, *o, *t;
	char b[64], c[64];
	size_t i;
	int r;

	json_object_object_add(root, "scope", json_object_new_string(
		"established TCP connections of the attached cgroups, in the network "
		"namespace of this command"));
	json_object_object_add(root, "capped", json_object_new_boolean(w->capped));
	a = json_object_new_array();
	for (i = 0; i < w->n_svc && i < max_svc; i++) {
		const struct whynot_service *s = &w->svc[i];

		o = json_object_new_object();
		whynot_endpoint_str(s->addr, s->port, b, sizeof(b));
		json_object_object_add(o, "service", json_object_new_string(b));
		json_object_object_add(o, "connections", json_object_new_int(s->conns));
		json_object_object_add(o, "redirected", json_object_new_int(s->redirected));
		t = json_object_new_object();
		for (r = 0; r < WN__MAX; r++)
			if (s->tcp[r])
				json_object_object_add(t, whynot_reason_name(r),
						       json_object_new_int(s->tcp[r]));
		json_object_object_add(o, "tcp", t);
		json_object_object_add(o, "hazards", hazards_json(s->hazards));
		if (s->hazards)
			json_object_object_add(o, "hazard_age_seconds",
					       json_object_new_double(s->hazard_age_s));
		json_object_array_add(a, o);
	}
	json_object_object_add(root, "services", a);
	json_object_object_add(root, "services_total",
			       json_object_new_uint64(w->n_svc + w->services_dropped));
	a = json_object_new_array();
	for (i = 0; i < w->n_conns && i < max_conns; i++) {
		const struct whynot_conn *x = &w->conns[i];

		o = json_object_new_object();
		whynot_endpoint_str(x->local, x->lport, b, sizeof(b));
		json_object_object_add(o, "local", json_object_new_string(b));
		whynot_endpoint_str(x->remote, x->rport, b, sizeof(b));
		json_object_object_add(o, "remote", json_object_new_string(b));
		/* as ss -e prints it (sk:%llx) */
		snprintf(c, sizeof(c), "%" PRIx64, x->cookie);
		json_object_object_add(o, "cookie", json_object_new_string(c));
		json_object_object_add(o, "end", json_object_new_string(x->passive ? "server"
										   : "client"));
		if (x->svc >= 0) {
			whynot_endpoint_str(w->svc[x->svc].addr, w->svc[x->svc].port, b, sizeof(b));
			json_object_object_add(o, "service", json_object_new_string(b));
		}
		json_object_object_add(o, "verdict", json_object_new_string(
			x->reason == WN_REDIRECTED ? "redirected" : "tcp"));
		if (x->reason != WN_REDIRECTED)
			json_object_object_add(o, "reason",
					       json_object_new_string(whynot_reason_name(x->reason)));
		if (x->hazards)
			json_object_object_add(o, "hazards", hazards_json(x->hazards));
		json_object_array_add(a, o);
	}
	json_object_object_add(root, "connections", a);
	json_object_object_add(root, "connections_total", json_object_new_uint64(w->n_conns));
	return root;
}

/* "hazard 2 (splice), no_peer 1": the reasons of a service's TCP ones */
static void tcp_str(const struct whynot_service *s, char *buf, size_t len)
{
	char hz[48];
	size_t at = 0;
	int r;

	buf[0] = 0;
	for (r = 0; r < WN__MAX && at < len; r++) {
		if (!s->tcp[r])
			continue;
		hz[0] = 0;
		if (r == FB_HAZARD && s->hazards) {
			hazards_str(s->hazards, hz + 2, sizeof(hz) - 3);
			hz[0] = ' ';
			hz[1] = '(';
			strcat(hz, ")");
		}
		at += snprintf(buf + at, len - at, "%s%s %u%s", at ? ", " : "",
			       whynot_reason_name(r), s->tcp[r], hz);
	}
}

void whynot_print_services(FILE *o, const struct whynot *w, size_t max, int width)
{
	char ep[64], why[160];
	size_t i;

	fprintf(o, "%-24s %6s %10s  %s\n", "service (nginx's now)", "conns", "redirected",
		"on TCP, why");
	for (i = 0; i < w->n_svc && i < max; i++) {
		const struct whynot_service *s = &w->svc[i];

		whynot_endpoint_str(s->addr, s->port, ep, sizeof(ep));
		tcp_str(s, why, sizeof(why));
		fprintf(o, "  %-22.22s %6u %10u  %-.*s\n", ep, s->conns, s->redirected,
			width > 45 ? width - 45 : 1, why[0] ? why : "-");
	}
	if (!w->n_svc)
		fputs("  (no established connections in the attached cgroups)\n", o);
	else if (w->n_svc > max)
		fprintf(o, "  ... %zu more\n", w->n_svc - max + w->services_dropped);
}

void whynot_print_connections(FILE *o, const struct whynot *w, size_t max)
{
	char local[64], remote[64];
	uint32_t r;
	size_t i;

	fprintf(o, "%-22s %-22s %-16s %s\n", "nginx's end", "peer", "cookie", "verdict");
	for (i = 0; i < w->n_conns && i < max; i++) {
		const struct whynot_conn *c = &w->conns[i];

		whynot_endpoint_str(c->local, c->lport, local, sizeof(local));
		whynot_endpoint_str(c->remote, c->rport, remote, sizeof(remote));
		/* hex, as ss -e prints cookies (sk_cookie: ...) */
		fprintf(o, "%-22.22s %-22.22s %-16" PRIx64 " ", local, remote, c->cookie);
		if (c->reason == WN_REDIRECTED) {
			fputs("redirected\n", o);
			continue;
		}
		fprintf(o, "tcp: %s", whynot_reason_name(c->reason));
		for (r = 0; r <= PH_ULP; r++)
			if (c->hazards & (1U << r))
				fprintf(o, " %s", r == PH_ULP ? "ulp" : reset_names[r]);
		fputc('\n', o);
	}
	if (!w->n_conns)
		fputs("(no established connections in the attached cgroups)\n", o);
	else if (w->n_conns > max)
		fprintf(o, "... %zu more (status --json lists %zu)\n", w->n_conns - max, max);
}

void whynot_prometheus(FILE *o, const struct whynot *w)
{
	unsigned int other = 0;
	char ep[64];
	size_t i;
	int r;

	fprintf(o, "# HELP ngx_sockmap_service_connections nginx's established connections per "
		   "service endpoint (server address:port), the top %d services by connections "
		   "only; reason \"none\": redirected.\n"
		   "# TYPE ngx_sockmap_service_connections gauge\n", WHYNOT_TOP_SERVICES);
	for (i = 0; i < w->n_svc; i++) {
		const struct whynot_service *s = &w->svc[i];

		if (i >= WHYNOT_TOP_SERVICES) {
			other += s->conns;
			continue;
		}
		whynot_endpoint_str(s->addr, s->port, ep, sizeof(ep));
		fprintf(o, "ngx_sockmap_service_connections{service=\"%s\",verdict=\"redirected\","
			   "reason=\"none\"} %u\n", ep, s->redirected);
		for (r = 0; r < WN__MAX; r++)
			if (s->tcp[r])
				fprintf(o, "ngx_sockmap_service_connections{service=\"%s\","
					   "verdict=\"tcp\",reason=\"%s\"} %u\n",
					ep, whynot_reason_name(r), s->tcp[r]);
	}
	fprintf(o, "# HELP ngx_sockmap_service_hazard_info Hazards a service of the top %d learned in "
		   "the last 10 minutes, which keep its new connections on TCP; always 1.\n"
		   "# TYPE ngx_sockmap_service_hazard_info gauge\n", WHYNOT_TOP_SERVICES);
	for (i = 0; i < w->n_svc && i < WHYNOT_TOP_SERVICES; i++) {
		whynot_endpoint_str(w->svc[i].addr, w->svc[i].port, ep, sizeof(ep));
		for (r = 0; r <= PH_ULP; r++)
			if (w->svc[i].hazards & (1U << r))
				fprintf(o, "ngx_sockmap_service_hazard_info{service=\"%s\",hazard=\"%s\"} 1\n",
					ep, r == PH_ULP ? "ulp" : reset_names[r]);
	}
	fprintf(o, "# HELP ngx_sockmap_service_other_connections nginx's established connections "
		   "to the services past the top %d.\n"
		   "# TYPE ngx_sockmap_service_other_connections gauge\n"
		   "ngx_sockmap_service_other_connections %u\n", WHYNOT_TOP_SERVICES, other);
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Names and units follow Prometheus conventions: ngx_sockmap_ prefix,
 * counters end in _total, sizes in _bytes, durations in _seconds.  The
 * README lists every metric.
 */
#include <errno.h>
#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "counters.h"
#include "dataplane.h"
#include "enforcer.h"
#include "feed.h"
#include "log.h"
#include "metrics.h"
#include "netaddr.h"
#include "topk.h"
#include "observer.h"
#include "version.h" /* build/version.h */
#include "whynot.h"

#define TOP_K 10

static void help(FILE *o, const char *name, const char *type, const char *text)
{
	fprintf(o, "# HELP %s %s\n# TYPE %s %s\n", name, text, name, type);
}

static void prog_stats(FILE *o, const struct prog_ref *progs, int n)
{
	struct bpf_prog_info info[24] = {};
	__u32 len;
	int i;

	for (i = 0; i < n && i < 24; i++) {
		len = sizeof(info[i]);
		bpf_prog_get_info_by_fd(progs[i].fd, &info[i], &len);
	}
	help(o, "ngx_sockmap_bpf_prog_run_seconds_total", "counter",
	     "Time spent in each BPF program (kernel.bpf_stats_enabled=1 only).");
	for (i = 0; i < n && i < 24; i++)
		fprintf(o, "ngx_sockmap_bpf_prog_run_seconds_total{program=\"%s\"} %.9f\n",
			progs[i].name, info[i].run_time_ns / 1e9);
	help(o, "ngx_sockmap_bpf_prog_runs_total", "counter",
	     "Runs of each BPF program (kernel.bpf_stats_enabled=1 only).");
	for (i = 0; i < n && i < 24; i++)
		fprintf(o, "ngx_sockmap_bpf_prog_runs_total{program=\"%s\"} %llu\n", progs[i].name,
			(unsigned long long)info[i].run_cnt);
}

static void top_sources(FILE *o, const struct topk_window *w, bool by_bytes)
{
	const char *name = by_bytes ? "ngx_sockmap_top_source_bytes" : "ngx_sockmap_top_source_packets";
	struct src_rank top[TOP_K];
	char addr[64];
	int i, n;

	/* No rank label: a rank moves between series every window, and the
	 * top 10 is what topk() over these gives back. */
	help(o, name, "gauge",
	     by_bytes ? "Bytes from the top sources (at most 10) over the last 10 s."
		      : "Packets from the top sources (at most 10) over the last 10 s.");
	n = topk_top(w, by_bytes, top, TOP_K);
	for (i = 0; i < n; i++) {
		addr16_str(top[i].key.addr, addr, sizeof(addr));
		fprintf(o, "%s{source=\"%s\"} %llu\n", name, addr,
			(unsigned long long)(by_bytes ? top[i].bytes : top[i].packets));
	}
}

static void ring_metrics(FILE *o, const struct metrics_src *src, __u64 conn_dropped)
{
	const struct event_feed *f = src->feed;
	__u64 gaps;
	int r, k;

	help(o, "ngx_sockmap_event_transport_info", "gauge",
	     "How each event stream reaches the agent: arena (6.9+) or ringbuf; always 1.");
	for (r = 0; r < FEED__MAX; r++)
		if (f->on[r])
			fprintf(o, "ngx_sockmap_event_transport_info{ring=\"%s\",transport=\"%s\"} 1\n",
				feed_ring_names[r], feed_transport(f, r));

	help(o, "ngx_sockmap_ring_events_total", "counter",
	     "Events read from the arena event rings, by kind.");
	for (k = EV_PACKET; k < EV__MAX; k++)
		fprintf(o, "ngx_sockmap_ring_events_total{kind=\"%s\"} %llu\n",
			ring_event_kind_names[k], (unsigned long long)f->by_kind[k]);
	help(o, "ngx_sockmap_ring_gaps_total", "counter",
	     "Events the agent missed because writers lapped it (counted, never read torn).");
	for (r = 0; r < FEED__MAX; r++) {
		if (!f->on[r])
			continue;
		/* the ring buffer transport's losses are counted by its writers */
		gaps = feed_gaps(f, r);
		if (!f->in_arena[r])
			gaps += r == FEED_CONN ? conn_dropped
			      : observer_running(src->xdp) ? observer_events_dropped(src->xdp) : 0;
		fprintf(o, "ngx_sockmap_ring_gaps_total{ring=\"%s\"} %llu\n", feed_ring_names[r],
			(unsigned long long)gaps);
	}
	help(o, "ngx_sockmap_ring_wakeups_total", "counter",
	     "Wake-ups of the agent by an event ring (batched by the writers).");
	for (r = 0; r < FEED__MAX; r++)
		if (f->on[r])
			fprintf(o, "ngx_sockmap_ring_wakeups_total{ring=\"%s\"} %llu\n",
				feed_ring_names[r], (unsigned long long)f->wakeups[r]);
}

/* Per-interface XDP totals: packets or bytes, by kind. */
static void xdp_totals(FILE *o, const struct xdp_observer *x, bool bytes)
{
	const char *name = bytes ? "ngx_sockmap_xdp_bytes_total" : "ngx_sockmap_xdp_packets_total";
	struct xdp_totals tot;
	int i, k;

	help(o, name, "counter",
	     bytes ? "Bytes seen by the XDP observer, by interface and kind."
		   : "Frames seen by the XDP observer, by interface and kind (all passed).");
	for (i = 0; i < x->n_ifaces; i++) {
		if (observer_totals(x, x->ifaces[i].ifindex, &tot))
			continue;
		for (k = 0; k < FK__MAX; k++)
			fprintf(o, "%s{interface=\"%s\",kind=\"%s\"} %llu\n", name,
				x->ifaces[i].name, frame_kind_names[k],
				(unsigned long long)(bytes ? tot.bytes[k] : tot.packets[k]));
	}
}

static bool bpf_stats_enabled(void)
{
	FILE *f = fopen("/proc/sys/kernel/bpf_stats_enabled", "r");
	int v = 0;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v == 1;
}

/* Why not, per service endpoint (whynot.h): one sock_diag dump of the
 * agent's namespace, taken again at most every WHYNOT_EVERY_S seconds
 * however often Prometheus scrapes; the top WHYNOT_TOP_SERVICES services
 * only, so the label set is bounded whatever the upstreams.  Served from
 * the run loop's one thread: the cache needs no lock. */
#define WHYNOT_EVERY_S 10
static void why_not(FILE *o, const struct metrics_src *src, const struct counters *c)
{
	static struct whynot why;
	static double taken;
	static bool have;
	struct timespec ts;
	double now;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = ts.tv_sec + ts.tv_nsec / 1e9;
	if (!taken || now - taken >= WHYNOT_EVERY_S) { /* failed too: not every scrape */
		whynot_free(&why);
		have = !whynot_scan(src->maps, src->info, c, &why);
		taken = now;
	}
	if (have)
		whynot_prometheus(o, &why);
}

void metrics_render(FILE *o, const struct metrics_src *src)
{
	const struct agent_info *info = src->info;
	struct prog_ref progs[24];
	struct counters c;
	int i, n;

	/* The _info convention: what the agent is, as labels of a constant 1,
	 * for joins (`* on (instance) group_left (version) ...`); the guard's
	 * hooks are here too, since they set what the host pays for it. */
	help(o, "ngx_sockmap_build_info", "gauge",
	     "Agent version, commit and the guard's hooks; always 1.");
	fprintf(o, "ngx_sockmap_build_info{version=\"%s\",commit=\"%s\",guard_hooks=\"%s\"} 1\n",
		NGX_SOCKMAP_VERSION, NGX_SOCKMAP_COMMIT,
		info->guard_hooks[0] ? info->guard_hooks : "none");
	memset(&c, 0, sizeof(c));
	if (counters_read(src->maps, &c) == 0)
		counters_print_prometheus(o, &c);
	if (info->n_selftest) {
		help(o, "ngx_sockmap_selftest_passed", "gauge",
		     "Kernel self-test at start-up: 1 passed, 0 failed or skipped; "
		     "critical: a failure keeps the data plane paused.");
		for (i = 0; i < info->n_selftest; i++)
			fprintf(o, "ngx_sockmap_selftest_passed{check=\"%s\",critical=\"%s\"} %d\n",
				info->selftest[i].name, info->selftest[i].critical ? "true" : "false",
				!strcmp(info->selftest[i].result, "pass"));
	}
	why_not(o, src, &c);
	help(o, "ngx_sockmap_cgroups", "gauge", "cgroups the data plane is attached to.");
	fprintf(o, "ngx_sockmap_cgroups %d\n", info->n_cgroups);
	if (info->guard_hooks[0]) {
		help(o, "ngx_sockmap_guard_info", "gauge",
		     "How the guard sees splice and MSG_OOB; always 1. tracepoints: every "
		     "syscall on the host is slower while armed.");
		fprintf(o, "ngx_sockmap_guard_info{hooks=\"%s\"} 1\n", info->guard_hooks);
	}
	if (info->guards[HZ_RESETS].mech[0]) {
		help(o, "ngx_sockmap_hazard_guarded", "gauge",
		     "What guards each hazard on this host (mechanism label); 1 guarded, "
		     "0 unguarded (mechanism none: the data plane stays paused).");
		for (i = 0; i < HZ__MAX; i++)
			fprintf(o, "ngx_sockmap_hazard_guarded{hazard=\"%s\",mechanism=\"%s\"} %d\n",
				hazard_names[i], info->guards[i].mech,
				strcmp(info->guards[i].mech, "none") != 0);
	}

	if (observer_running(src->xdp)) {
		xdp_totals(o, src->xdp, false);
		xdp_totals(o, src->xdp, true);
		help(o, "ngx_sockmap_xdp_info", "gauge",
		     "XDP attachment mode by interface; always 1.");
		for (i = 0; i < src->xdp->n_ifaces; i++)
			fprintf(o, "ngx_sockmap_xdp_info{interface=\"%s\",mode=\"%s\"} 1\n",
				src->xdp->ifaces[i].name, src->xdp->ifaces[i].mode);
		if (src->topk) {
			top_sources(o, src->topk, false);
			top_sources(o, src->topk, true);
		}
	}
	if (src->feed)
		ring_metrics(o, src, c.sum.events_dropped);
	if (bpf_stats_enabled() && src->dp) {
		n = dataplane_progs(src->dp, progs, 24);
		if (src->enforcer)
			n += enforcer_progs(src->enforcer, progs + n, 24 - n);
		if (observer_running(src->xdp))
			n += observer_progs(src->xdp, progs + n, 24 - n);
		prog_stats(o, progs, n);
	}
}

static enum MHD_Result respond(struct MHD_Connection *c, unsigned int code, const char *type,
			       char *body, size_t len)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

enum metrics_page metrics_route(const char *method, const char *url)
{
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return MP_NOT_ALLOWED;
	if (!strcmp(url, "/healthz"))
		return MP_HEALTHZ;
	return strcmp(url, "/metrics") ? MP_NOT_FOUND : MP_METRICS;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_len, void **req)
{
	const struct metrics_server *m = cls;
	char *body = NULL;
	size_t len = 0;
	FILE *out;

	(void)version;
	(void)upload;
	(void)upload_len;
	(void)req;
	switch (metrics_route(method, url)) {
	case MP_NOT_ALLOWED:
		return respond(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain",
			       strdup("GET only\n"), 9);
	case MP_HEALTHZ:
		return respond(c, MHD_HTTP_OK, "text/plain", strdup("ok\n"), 3);
	case MP_NOT_FOUND:
		return respond(c, MHD_HTTP_NOT_FOUND, "text/plain",
			       strdup("not found: try /metrics or /healthz\n"), 36);
	case MP_METRICS:
		break;
	}
	out = open_memstream(&body, &len);
	if (!out)
		return MHD_NO;
	metrics_render(out, m->src);
	fclose(out);
	return respond(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", body, len);
}

/* The server can't tell a scraper from a client that holds connections
 * open, so it bounds what one address holds and how long any request
 * lives; the probes don't ride on it at all (the manifests run the exec
 * `ngx-sockmap health`, which reads the loop's heartbeat from the maps).
 * - 64 slots, 4 for any one address: a scraper uses one connection at a
 *   time (Prometheus keeps one alive per target), 4 leave room for a few
 *   behind one address.  With 8 each, 8 addresses took every slot
 *   (127.0.0.10-17 on loopback, or 8 pods); now it takes 16.  Addresses
 *   are cheap (all of 127/8, any pod), so this limits one client, not
 *   many: see METRICS_REQUEST_SEC.
 * - 10 s idle (MHD_OPTION_CONNECTION_TIMEOUT): a connection without a
 *   byte for that long is closed.  Any byte resets it, so a client that
 *   sends one every few seconds would keep its slot forever.
 * - METRICS_REQUEST_SEC, 20 s, from the accept or the end of the previous
 *   response to the end of this one, however the client trickles: twice
 *   the idle timeout, so a keep-alive connection's next request always has
 *   at least 10 s (Prometheus' default scrape_timeout) and a render takes
 *   milliseconds.  Past it the socket is shut down and MHD closes it.
 *   With every slot taken MHD stops accepting (the kernel's backlog keeps
 *   new connections in order), so one waiting there is served once a slot
 *   frees, within 20 s, however many addresses hold the others
 *   (tests/integration/health_probe.sh). */
#define METRICS_SLOTS       64
#define METRICS_PER_CLIENT  4
#define METRICS_IDLE_SEC    10
#define METRICS_REQUEST_SEC 20

/* One connection: when its current request began (its accept, or the end
 * of the response before). */
struct metrics_conn {
	struct metrics_conn *next, **pprev;
	int fd;
	bool cut;      /* shut down: MHD closes it on its next run */
	__u64 since;   /* CLOCK_MONOTONIC seconds */
};

static __u64 mono_sec(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec;
}

static void conn_notify(void *cls, struct MHD_Connection *c, void **ctx,
			enum MHD_ConnectionNotificationCode what)
{
	struct metrics_server *m = cls;
	const union MHD_ConnectionInfo *ci;
	struct metrics_conn *mc;

	if (what == MHD_CONNECTION_NOTIFY_CLOSED) {
		mc = *ctx;
		if (!mc)
			return;
		*mc->pprev = mc->next;
		if (mc->next)
			mc->next->pprev = mc->pprev;
		free(mc);
		*ctx = NULL;
		return;
	}
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (!ci)
		return;
	mc = calloc(1, sizeof(*mc));
	if (!mc) {
		/* a connection that can't be timed is not served */
		shutdown(ci->connect_fd, SHUT_RDWR);
		return;
	}
	mc->fd = ci->connect_fd;
	mc->since = mono_sec();
	mc->next = m->conns;
	mc->pprev = &m->conns;
	if (m->conns)
		m->conns->pprev = &mc->next;
	m->conns = mc;
	*ctx = mc;
}

/* A response sent (or a request given up): the next request's time
 * starts now. */
static void request_done(void *cls, struct MHD_Connection *c, void **req,
			 enum MHD_RequestTerminationCode why)
{
	const union MHD_ConnectionInfo *ci;
	struct metrics_conn *mc;

	(void)cls;
	(void)req;
	(void)why;
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	mc = ci ? ci->socket_context : NULL;
	if (mc)
		mc->since = mono_sec();
}

int metrics_start(struct metrics_server *m, const struct sockaddr *addr, socklen_t len,
		  const struct metrics_src *src, char *err, size_t errlen)
{
	const union MHD_DaemonInfo *di;
	unsigned int flags = MHD_USE_EPOLL;

	(void)len;
	m->src = src;
	m->conns = NULL;
	if (addr->sa_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	m->daemon = MHD_start_daemon(flags, 0, NULL, NULL, handle, m, MHD_OPTION_SOCK_ADDR, addr,
				     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)METRICS_IDLE_SEC,
				     MHD_OPTION_CONNECTION_LIMIT, (unsigned int)METRICS_SLOTS,
				     MHD_OPTION_PER_IP_CONNECTION_LIMIT,
				     (unsigned int)METRICS_PER_CLIENT,
				     MHD_OPTION_NOTIFY_CONNECTION, conn_notify, m,
				     MHD_OPTION_NOTIFY_COMPLETED, request_done, m, MHD_OPTION_END);
	if (!m->daemon) {
		snprintf(err, errlen, "--metrics: cannot listen (%s)",
			 errno == EADDRINUSE ? "address already in use" : strerror(errno));
		return -EADDRINUSE;
	}
	di = MHD_get_daemon_info(m->daemon, MHD_DAEMON_INFO_EPOLL_FD);
	m->epoll_fd = di ? di->epoll_fd : -1;
	return 0;
}

/* Requests past METRICS_REQUEST_SEC are shut down first, so that this
 * MHD_run already sees them end (the shutdown wakes MHD's epoll). */
void metrics_serve(struct metrics_server *m)
{
	struct metrics_conn *mc;
	__u64 now;

	if (!m->daemon)
		return;
	now = mono_sec();
	for (mc = m->conns; mc; mc = mc->next) {
		if (mc->cut || now - mc->since <= METRICS_REQUEST_SEC)
			continue;
		pr_debug("metrics: ending a connection whose request took over %d s\n",
			 METRICS_REQUEST_SEC);
		shutdown(mc->fd, SHUT_RDWR);
		mc->cut = true;
	}
	MHD_run(m->daemon);
}

void metrics_stop(struct metrics_server *m)
{
	if (m->daemon)
		MHD_stop_daemon(m->daemon);
	m->daemon = NULL;
}

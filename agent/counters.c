// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <json-c/json.h>
#include "bpfutil.h"
#include "counters.h"
#include "verdict.h"

static const char *const map_names[CM__MAX] = {
	[CM_SOCK_HASH] = "sock_hash", [CM_ENDPOINTS] = "endpoints",
};

#define AT(field) offsetof(struct counters, field)
#define ONE NULL, NULL, 1

/* Names follow Prometheus conventions: ngx_sockmap_ prefix, counters end
 * in _total, sizes in _bytes.  The README's metrics table lists them. */
const struct counter_def counter_table[] = {
	{ "sockets", "ngx_sockmap_sockets", CT_GAUGE, CU_COUNT,
	  "TCP sockets tracked now", ONE, AT(sockets_now) },
	/* Past sockets_max new connections stay on TCP (fallbacks{no_room});
	 * the alert NgxSockmapMapFilling fires on their ratio before that. */
	{ "sockets_max", "ngx_sockmap_sockets_max", CT_GAUGE, CU_COUNT,
	  "sockets it can hold (--max-sockets)", ONE, AT(sockets_max) },
	{ "sockets_fill", NULL, CT_GAUGE, CU_PERCENT,
	  "sockets of sockets_max (full: TCP, no_room)", ONE, AT(sockets_fill) },
	{ "sockets_total", "ngx_sockmap_sockets_tracked_total", CT_COUNTER, CU_COUNT,
	  "TCP sockets tracked since start", ONE, AT(sum.sockets_added) },
	{ "pairs", "ngx_sockmap_pairs_total", CT_COUNTER, CU_COUNT,
	  "connections paired on this host", ONE, AT(sum.pairs) },
	{ "pairs_active", "ngx_sockmap_pairs_active", CT_GAUGE, CU_COUNT,
	  "paired connections still open", ONE, AT(pairs_active) },
	{ "redirected_msgs", "ngx_sockmap_redirected_messages_total", CT_COUNTER, CU_COUNT,
	  "sends handed straight to the peer socket", ONE, AT(sum.redirected_msgs) },
	{ "redirected_bytes", "ngx_sockmap_redirected_bytes_total", CT_COUNTER, CU_BYTES,
	  "bytes that skipped TCP (not in ss -ti, tcpdump)", ONE, AT(sum.redirected_bytes) },
	{ "tcp_msgs", "ngx_sockmap_tcp_messages_total", CT_COUNTER, CU_COUNT,
	  "sends of tracked sockets that went through TCP", ONE, AT(sum.tcp_msgs) },
	{ "tcp_bytes", "ngx_sockmap_tcp_bytes_total", CT_COUNTER, CU_BYTES,
	  "bytes of tracked sockets that went through TCP", ONE, AT(sum.tcp_bytes) },
	{ "fallbacks", "ngx_sockmap_fallbacks_total", CT_COUNTER, CU_COUNT,
	  "sockets sent to TCP for good, by first reason", "reason", fallback_names, FB__MAX,
	  AT(sum.fallbacks) },
	{ "skipped", "ngx_sockmap_skipped_total", CT_COUNTER, CU_COUNT,
	  "connections whose peer can't be tracked here", "reason", skip_names, SKIP__MAX,
	  AT(sum.skipped) },
	{ "resets", "ngx_sockmap_resets_total", CT_COUNTER, CU_COUNT,
	  "connections ended, both ends reset, by reason", "reason", reset_names, RS__MAX,
	  AT(sum.resets) },
	{ "ulp_refused", "ngx_sockmap_ulp_refused_total", CT_COUNTER, CU_COUNT,
	  "setsockopt(TCP_ULP) refused on tracked sockets", ONE, AT(sum.ulp_refused) },
	{ "reused", "ngx_sockmap_sockets_reused_total", CT_COUNTER, CU_COUNT,
	  "tracked sockets reused (connect AF_UNSPEC)", ONE, AT(sum.reused) },
	{ "claims_lost", "ngx_sockmap_claims_lost_total", CT_COUNTER, CU_COUNT,
	  "passive ends whose peer withdrew first (to TCP)", ONE, AT(sum.claims_lost) },
	{ "reset_requests_deferred", "ngx_sockmap_reset_requests_deferred_total", CT_COUNTER,
	  CU_COUNT, "resets asked while the ring was full (kept)", ONE,
	  AT(sum.reset_requests_deferred) },
	{ "reset_requests_lost", "ngx_sockmap_reset_requests_lost_total", CT_COUNTER, CU_COUNT,
	  "resets asked, ring and backlog full (not done)", ONE,
	  AT(sum.reset_requests_lost) },
	{ "reset_lookups_failed", "ngx_sockmap_reset_lookups_failed_total", CT_COUNTER, CU_COUNT,
	  "lookups of sockets to end that failed", ONE,
	  AT(gauges.reset_lookups_failed) },
	{ "oob_untracked", "ngx_sockmap_oob_untracked_total", CT_COUNTER, CU_COUNT,
	  "urgent senders past oob_senders: all sends to TCP", ONE, AT(sum.oob_untracked) },
	{ "splice_offers", "ngx_sockmap_splice_offers_total", CT_COUNTER, CU_COUNT,
	  "relay sessions offered for splicing", ONE, AT(sum.splice_offers) },
	{ "splice_refused", "ngx_sockmap_splice_refused_total", CT_COUNTER, CU_COUNT,
	  "splice requests of relays refused (EPERM)", ONE, AT(sum.splice_refused) },
	{ "splice_switched", "ngx_sockmap_splice_switched_total", CT_COUNTER, CU_COUNT,
	  "directions that now skip their relay", ONE, AT(sum.splice_switched) },
	{ "endpoints_swept", "ngx_sockmap_endpoints_swept_total", CT_COUNTER, CU_COUNT,
	  "offers to pair orphaned by a detach, removed", ONE, AT(gauges.endpoints_swept) },
	{ "unread.bytes", "ngx_sockmap_unread_bytes", CT_GAUGE, CU_BYTES,
	  "redirected bytes not read yet, all sockets", ONE, AT(gauges.unread_bytes) },
	{ "unread.max_bytes", "ngx_sockmap_unread_max_bytes", CT_GAUGE, CU_BYTES,
	  "the most one socket leaves unread", ONE, AT(gauges.unread_max_bytes) },
	{ "unread.limit", "ngx_sockmap_unread_limit_bytes", CT_GAUGE, CU_BYTES,
	  "per socket, past it the connection is ended", ONE, AT(gauges.unread_limit) },
	{ "unread.budget", "ngx_sockmap_unread_budget_bytes", CT_GAUGE, CU_BYTES,
	  "host-wide, past it the largest are ended", ONE, AT(gauges.unread_budget) },
	{ "local_addresses", "ngx_sockmap_local_addresses", CT_GAUGE, CU_COUNT,
	  "addresses of namespaces with tracked processes", ONE, AT(gauges.local_addrs) },
	{ "netns_unresolved", "ngx_sockmap_netns_unresolved", CT_GAUGE, CU_COUNT,
	  "attached cgroups whose netns is out of reach", ONE,
	  AT(gauges.netns_unresolved) },
	{ "follow.attached", "ngx_sockmap_followed_cgroups", CT_GAUGE, CU_COUNT,
	  "followed peer cgroups attached now", ONE, AT(gauges.followed) },
	{ "follow.max", "ngx_sockmap_followed_cgroups_max", CT_GAUGE, CU_COUNT,
	  "--max-followed: at most this many at once", ONE, AT(gauges.followed_max) },
	{ "follow.refused", "ngx_sockmap_follow_refused_total", CT_COUNTER, CU_COUNT,
	  "peer cgroups not followed: no slot (not paired)", ONE, AT(gauges.follow_refused) },
	{ "follow.released", "ngx_sockmap_follow_released_total", CT_COUNTER, CU_COUNT,
	  "followed cgroups released (idle, or for a named)", ONE,
	  AT(gauges.follow_released) },
	{ "guards_armed", "ngx_sockmap_guards_armed", CT_BOOL, CU_COUNT,
	  "the guard's splice and MSG_OOB hooks are attached", ONE, AT(gauges.guards_armed) },
	{ "paused", "ngx_sockmap_paused", CT_BOOL, CU_COUNT,
	  "new connections are not tracked (pause, selftest)", ONE, AT(paused) },
	{ "accelerating", "ngx_sockmap_accelerating", CT_BOOL, CU_COUNT,
	  "running, attached, not paused, and pairing", ONE, AT(accelerating) },
	{ "maps", NULL, CT_GAUGE, CU_COUNT, "entries in the data plane's maps", "map", map_names,
	  CM__MAX, AT(map_entries) },
};
const unsigned int counter_table_len = sizeof(counter_table) / sizeof(counter_table[0]);

static __u64 gauge(__u64 added, __u64 removed)
{
	return added > removed ? added - removed : 0;
}

/* max_entries of a map (0: unknown): read from the kernel, so status of
 * a pinned data plane or another agent's shows the size it was made with. */
static __u64 map_capacity(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (fd < 0 || bpf_map_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.max_entries;
}

int counters_read(const struct agent_maps *m, struct counters *c)
{
	struct accel_config cfg = {};
	struct timespec now;
	__u32 zero = 0;
	int err;

	memset(c, 0, sizeof(*c));
	err = percpu_sum_u64(m->fd[MAP_STATS], &zero, (__u64 *)&c->sum,
			     sizeof(c->sum) / sizeof(__u64));
	if (err)
		return err;
	if (!bpf_map_lookup_elem(m->fd[MAP_CONFIG], &zero, &cfg))
		c->paused = !!cfg.paused;
	if (m->fd[MAP_GAUGES] >= 0)
		bpf_map_lookup_elem(m->fd[MAP_GAUGES], &zero, &c->gauges);
	clock_gettime(CLOCK_BOOTTIME, &now);
	c->verdict = verdict_of(c, (__u64)now.tv_sec * 1000000000ULL + now.tv_nsec);
	c->accelerating = c->verdict == V_ACCELERATING;
	c->sockets_now = gauge(c->sum.sockets_added, c->sum.sockets_closed);
	/* both ends of a pair count in paired_closed */
	c->pairs_active = (gauge(2 * c->sum.pairs, c->sum.paired_closed) + 1) / 2;
	c->map_entries[CM_SOCK_HASH] = c->sockets_now;
	c->map_entries[CM_ENDPOINTS] = gauge(c->sum.endpoints_added,
					     c->sum.endpoints_removed + c->gauges.endpoints_swept);
	c->sockets_max = map_capacity(m->fd[MAP_SOCK_HASH]);
	if (c->sockets_max)
		c->sockets_fill = c->sockets_now * 100 / c->sockets_max;
	return 0;
}

__u64 counter_value(const struct counters *c, const struct counter_def *d, unsigned int i)
{
	return ((const __u64 *)((const char *)c + d->off))[i];
}

void human_bytes(char *buf, size_t len, double v)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
}

static void value_text(char *buf, size_t len, const struct counter_def *d, __u64 v)
{
	if (d->type == CT_BOOL)
		snprintf(buf, len, "%s", v ? "yes" : "no");
	else if (d->unit == CU_BYTES)
		human_bytes(buf, len, v);
	else if (d->unit == CU_PERCENT)
		snprintf(buf, len, "%llu%%", (unsigned long long)v);
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
}

void counters_print_text(FILE *out, const struct counters *c)
{
	const struct counter_def *d;
	unsigned int t, i;
	char v[32];

	for (t = 0; t < counter_table_len; t++) {
		d = &counter_table[t];
		if (!d->label) {
			value_text(v, sizeof(v), d, counter_value(c, d, 0));
			fprintf(out, "%-17s %10s  %s\n", d->key, v, d->help);
			continue;
		}
		fprintf(out, "%-28s  %s\n", d->key, d->help);
		for (i = 0; i < d->n; i++) {
			value_text(v, sizeof(v), d, counter_value(c, d, i));
			fprintf(out, "  %-15s %10s\n", d->label_values[i], v);
		}
	}
}

static json_object *json_value(const struct counter_def *d, __u64 v)
{
	return d->type == CT_BOOL ? json_object_new_boolean(v != 0)
				  : json_object_new_uint64(v);
}

/* The object a key goes in and the key's last part: "unread.bytes" goes
 * in obj's "unread" object (made on first use) as "bytes". */
static json_object *json_parent(json_object *obj, const char *key, const char **leaf)
{
	const char *dot = strchr(key, '.');
	json_object *sub;
	char group[32];

	*leaf = key;
	if (!dot || (size_t)(dot - key) >= sizeof(group))
		return obj;
	snprintf(group, sizeof(group), "%.*s", (int)(dot - key), key);
	if (!json_object_object_get_ex(obj, group, &sub)) {
		sub = json_object_new_object();
		json_object_object_add(obj, group, sub);
	}
	*leaf = dot + 1;
	return sub;
}

void counters_add_json(json_object *obj, const struct counters *c)
{
	const struct counter_def *d;
	unsigned int t, i;
	json_object *vec;
	const char *leaf = NULL;

	for (t = 0; t < counter_table_len; t++) {
		d = &counter_table[t];
		if (!d->label) {
			json_object *parent = json_parent(obj, d->key, &leaf);

			json_object_object_add(parent, leaf, json_value(d, counter_value(c, d, 0)));
			continue;
		}
		vec = json_object_new_object();
		for (i = 0; i < d->n; i++)
			json_object_object_add(vec, d->label_values[i],
					       json_value(d, counter_value(c, d, i)));
		json_object_object_add(obj, d->key, vec);
	}
}

void counters_print_prometheus(FILE *out, const struct counters *c)
{
	const struct counter_def *d;
	unsigned int t, i;

	for (t = 0; t < counter_table_len; t++) {
		d = &counter_table[t];
		if (!d->metric)
			continue;
		fprintf(out, "# HELP %s %s.\n# TYPE %s %s\n", d->metric, d->help, d->metric,
			d->type == CT_COUNTER ? "counter" : "gauge");
		for (i = 0; i < d->n; i++) {
			if (d->label)
				fprintf(out, "%s{%s=\"%s\"} %llu\n", d->metric, d->label,
					d->label_values[i], (unsigned long long)counter_value(c, d, i));
			else
				fprintf(out, "%s %llu\n", d->metric,
					(unsigned long long)counter_value(c, d, i));
		}
	}
}

/* "1.2 k/s", "3.4 MB/s": decimal prefixes for rates, as top(1) does */
static void rate_text(char *buf, size_t len, double v, enum counter_unit u)
{
	const char *pre[] = { "", "k", "M", "G", "T" };
	int i = 0;

	while (v >= 1000 && i < 4) {
		v /= 1000;
		i++;
	}
	if (u == CU_BYTES)
		snprintf(buf, len, i ? "%.1f %sB/s" : "%.0f B/s", v, pre[i]);
	else
		snprintf(buf, len, i ? "%.1f%s/s" : "%.0f/s", v, pre[i]);
}

/* Print item at the current column, wrapping to an indented line. */
static void flow(FILE *out, int *col, int width, const char *item)
{
	int n = strlen(item);

	if (*col > 0 && *col + 2 + n > width) {
		fputs("\n", out);
		*col = 0;
	}
	*col += fprintf(out, "%s%s", *col ? "  " : "", item);
}

/* One vector on its own line(s): "name label total(+delta) ...". */
static void top_vector(FILE *out, const struct counter_def *d, const struct counters *now,
		       const struct counters *prev, int width)
{
	char item[96];
	unsigned int i;
	int col;
	__u64 a, b;

	col = fprintf(out, "%s", d->key);
	for (i = 0; i < d->n; i++) {
		a = counter_value(now, d, i);
		b = counter_value(prev, d, i);
		if (a > b)
			snprintf(item, sizeof(item), "%s %llu(+%llu)", d->label_values[i],
				 (unsigned long long)a, (unsigned long long)(a - b));
		else
			snprintf(item, sizeof(item), "%s %llu", d->label_values[i], (unsigned long long)a);
		flow(out, &col, width, item);
	}
	fputs("\n", out);
}

void counters_print_top(FILE *out, const struct counters *now, const struct counters *prev,
			double dt, int width)
{
	const struct counter_def *d;
	char item[96], v[32];
	unsigned int t;
	int col = 0;
	__u64 a, b;

	/* scalars flow together, counters as rates; vectors after them */
	for (t = 0; t < counter_table_len; t++) {
		d = &counter_table[t];
		if (!d->metric || d->label)
			continue;
		/* top's header has its own line for these (with the fill) */
		if (d->off == AT(sockets_now) || d->off == AT(sockets_max))
			continue;
		a = counter_value(now, d, 0);
		if (d->type == CT_COUNTER) {
			b = counter_value(prev, d, 0);
			rate_text(v, sizeof(v), dt > 0 && a >= b ? (a - b) / dt : 0, d->unit);
		} else {
			value_text(v, sizeof(v), d, a);
		}
		snprintf(item, sizeof(item), "%s %s", d->key, v);
		flow(out, &col, width, item);
	}
	if (col)
		fputs("\n", out);
	for (t = 0; t < counter_table_len; t++) {
		d = &counter_table[t];
		if (d->metric && d->label)
			top_vector(out, d, now, prev, width);
	}
}

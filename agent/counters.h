/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Every counter of the data plane, described once (counters.c): its status
 * and JSON name, its Prometheus name and help, counter or gauge, its unit,
 * its label, and where its value sits in struct counters.  `status` (text
 * and --json), /metrics and `top` all render this one table: adding a
 * counter is one line there (and the field it reads).
 */
#ifndef NGX_SOCKMAP_COUNTERS_H
#define NGX_SOCKMAP_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "accel.h"
#include "maps.h"

struct json_object;

enum counter_map { CM_SOCK_HASH, CM_ENDPOINTS, CM__MAX };

/* One reading of everything the table describes.  Every value comes from
 * counters the data plane keeps and gauges the agent publishes
 * (agent_gauges): reading costs the same whatever the number of sockets. */
struct counters {
	struct accel_stats sum; /* the per-CPU counters, summed */
	struct agent_gauges gauges;
	__u64 sockets_now;      /* tracked now: added - closed */
	__u64 pairs_active;     /* pairs whose sockets are both still open */
	__u64 paused;           /* 1 while new connections are not tracked */
	__u64 accelerating;     /* verdict == V_ACCELERATING */
	__u64 verdict;          /* enum verdict (verdict.h) */
	__u64 sockets_max;      /* what sock_hash holds (--max-sockets) */
	__u64 sockets_fill;     /* sockets_now of sockets_max, per cent */
	__u64 map_entries[CM__MAX];
};

enum counter_type {
	CT_COUNTER, /* only grows: Prometheus counter, `top` shows a rate */
	CT_GAUGE,   /* a level */
	CT_BOOL,    /* 0 or 1; JSON true/false */
};

enum counter_unit { CU_COUNT, CU_BYTES, CU_PERCENT };

struct counter_def {
	const char *key;    /* status / JSON name; "a.b" nests b in JSON object a */
	const char *metric; /* Prometheus name; NULL: not exported */
	enum counter_type type;
	enum counter_unit unit;
	const char *help;   /* one short line: Prometheus HELP and status text */
	const char *label;  /* label name of a vector; NULL: one value */
	const char *const *label_values;
	unsigned int n;     /* values: 1, or the number of label values */
	size_t off;         /* offsetof(struct counters, first value) */
};

extern const struct counter_def counter_table[];
extern const unsigned int counter_table_len;

/* Read every counter from the agent's maps (MAP_STATS, MAP_CONFIG,
 * MAP_GAUGES where open).  No map walk. */
int counters_read(const struct agent_maps *m, struct counters *c);
/* Value i of def in c. */
__u64 counter_value(const struct counters *c, const struct counter_def *def, unsigned int i);

/* Renderings of the whole table. */
void counters_print_text(FILE *out, const struct counters *c);
void counters_add_json(struct json_object *obj, const struct counters *c);
void counters_print_prometheus(FILE *out, const struct counters *c);
/* `top`: values, and rates of counters over dt seconds since prev,
 * wrapped at width columns; not sockets and sockets_max, which top's
 * header shows with the fill level. */
void counters_print_top(FILE *out, const struct counters *now, const struct counters *prev,
			double dt, int width);

/* "1.2 MiB" */
void human_bytes(char *buf, size_t len, double v);

#endif

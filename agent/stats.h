/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Counters of the data plane: sum the per-CPU slots, print as text or JSON. */
#ifndef NGX_SOCKMAP_STATS_H
#define NGX_SOCKMAP_STATS_H

#include <stdbool.h>
#include <stdio.h>
#include "accel.h"
#include "state.h"

struct stats_snapshot {
	struct accel_stats sum;
	bool paused;
	long sock_hash_entries; /* -1: unknown */
	long endpoint_entries;
};

extern const char *const accel_fallback_names[FB__MAX];

int stats_read(const struct agent_maps *m, struct stats_snapshot *s);
void stats_print_text(FILE *out, const struct stats_snapshot *s, const struct agent_info *info);
void stats_print_json(FILE *out, const struct stats_snapshot *s, const struct agent_info *info);
int config_set_paused(const struct agent_maps *m, bool paused);
int config_pause_fd(int config_fd);

#endif

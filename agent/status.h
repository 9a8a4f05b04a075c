/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* `status` output: the agent's state and every counter, as text or JSON.
 * JSON is built with json-c, so every string is escaped by construction. */
#ifndef NGX_SOCKMAP_STATUS_H
#define NGX_SOCKMAP_STATUS_H

#include <stdio.h>
#include "counters.h"
#include "state.h"

struct json_object;

void status_print_text(FILE *out, const struct counters *c, const struct agent_info *info);
/* [{path, id, reason}] of these cgroups (status's "cgroups", check's
 * "targets"). */
struct json_object *status_cgroups_json(const struct cg_target *t, int n);
/* The --json object (the caller frees it with json_object_put). */
struct json_object *status_to_json(const struct counters *c, const struct agent_info *info);
void status_print_json(FILE *out, const struct counters *c, const struct agent_info *info);

#endif

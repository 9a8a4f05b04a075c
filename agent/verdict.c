// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The verdict (verdict.h): pure functions of the counters, unit-tested in
 * tests/unit/test_verdict.c. */
#include <stdio.h>
#include "counters.h"
#include "verdict.h"

#define VERDICT_WORD(e, word, code) [e] = word,
#define VERDICT_CODE(e, word, code) [e] = code,
static const char *const words[V__MAX] = { VERDICTS(VERDICT_WORD) };
static const int codes[V__MAX] = { VERDICTS(VERDICT_CODE) };

void pair_window_add(struct pair_window *w, uint64_t pairs, uint64_t conns,
		     uint64_t *recent_pairs, uint64_t *recent_conns)
{
	const unsigned int n = sizeof(w->pairs) / sizeof(w->pairs[0]);
	unsigned int oldest;

	w->pairs[w->next] = pairs;
	w->conns[w->next] = conns;
	w->next = (w->next + 1) % n;
	if (w->filled < n)
		w->filled++;
	/* the oldest sample kept: the slot written next, once all are filled */
	oldest = w->filled < n ? 0 : w->next;
	*recent_pairs = pairs - w->pairs[oldest];
	*recent_conns = conns - w->conns[oldest];
}

enum verdict verdict_of(const struct counters *c, uint64_t now_ns)
{
	const struct agent_gauges *g = &c->gauges;

	if (!g->heartbeat_ns || now_ns > g->heartbeat_ns + VERDICT_STALE_SEC * 1000000000ULL)
		return V_NO_AGENT;
	if (c->paused)
		return V_PAUSED;
	if (!g->cgroups)
		return V_NO_CGROUP;
	if (g->recent_conns >= NOT_PAIRING_MIN_CONNS && !g->recent_pairs)
		return V_NOT_PAIRING;
	return V_ACCELERATING;
}

const char *verdict_word(enum verdict v)
{
	return v < V__MAX ? words[v] : "?";
}

int verdict_exit_code(enum verdict v)
{
	return v < V__MAX ? codes[v] : 1;
}

void verdict_line(const struct counters *c, enum verdict v, const char *paused_why, char *buf,
		  size_t len)
{
	const struct agent_gauges *g = &c->gauges;
	unsigned long long n = g->cgroups, p = g->recent_pairs, k = g->recent_conns;

	switch (v) {
	case V_ACCELERATING:
		snprintf(buf, len, "accelerating: %llu cgroup%s, %llu pair%s in the last %d min",
			 n, n == 1 ? "" : "s", p, p == 1 ? "" : "s", PAIR_WINDOW_SEC / 60);
		break;
	case V_NO_AGENT:
		snprintf(buf, len, "NOT accelerating: no agent running (new connections use TCP; "
			 "start it: ngx-sockmap run)");
		break;
	case V_PAUSED:
		snprintf(buf, len, "NOT accelerating: paused (%s)",
			 paused_why && *paused_why ? paused_why : "ngx-sockmap resume");
		break;
	case V_NO_CGROUP:
		snprintf(buf, len, "NOT accelerating: attached to no cgroup (nginx gone, or no pod "
			 "selected; status lists the targets)");
		break;
	case V_NOT_PAIRING:
		snprintf(buf, len, "NOT accelerating: %llu connections in the last %d min, none "
			 "paired (remote peers, or peers not attached: see skipped, fallbacks)",
			 k, PAIR_WINDOW_SEC / 60);
		break;
	default:
		snprintf(buf, len, "?");
	}
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The verdict (agent/verdict.c): each reason not to accelerate, in the
 * order status gives them, its exit code, and the five-minute window. */
#include <string.h>
#include "check.h"
#include "counters.h"
#include "verdict.h"

#define SEC 1000000000ULL

static struct counters running(void)
{
	struct counters c;

	memset(&c, 0, sizeof(c));
	c.gauges.heartbeat_ns = 100 * SEC;
	c.gauges.cgroups = 2;
	return c;
}

static void test_verdicts(void)
{
	struct counters c = running();
	char line[300];

	CHECK(verdict_of(&c, 101 * SEC) == V_ACCELERATING, "running, attached, quiet");
	c.gauges.recent_conns = 500;
	c.gauges.recent_pairs = 1;
	CHECK(verdict_of(&c, 101 * SEC) == V_ACCELERATING, "one pair under traffic is enough");
	c.gauges.recent_pairs = 0;
	CHECK(verdict_of(&c, 101 * SEC) == V_NOT_PAIRING, "traffic, no pair");
	c.gauges.recent_conns = NOT_PAIRING_MIN_CONNS - 1;
	CHECK(verdict_of(&c, 101 * SEC) == V_ACCELERATING, "too few connections to judge");
	c.gauges.cgroups = 0;
	CHECK(verdict_of(&c, 101 * SEC) == V_NO_CGROUP, "attached to nothing");
	c.paused = 1;
	CHECK(verdict_of(&c, 101 * SEC) == V_PAUSED, "paused comes before the cgroups");
	CHECK(verdict_of(&c, (100 + VERDICT_STALE_SEC + 1) * SEC) == V_NO_AGENT,
	      "a loop that stopped ticking: no agent");
	c.gauges.heartbeat_ns = 0;
	CHECK(verdict_of(&c, 101 * SEC) == V_NO_AGENT, "never ticked (pinned data plane only)");

	CHECK(verdict_exit_code(V_ACCELERATING) == 0, "accelerating: 0");
	CHECK(verdict_exit_code(V_PAUSED) == 3 && verdict_exit_code(V_NO_CGROUP) == 4 &&
		      verdict_exit_code(V_NOT_PAIRING) == 5 && verdict_exit_code(V_NO_AGENT) == 6,
	      "documented codes");
	c = running();
	c.paused = 1;
	verdict_line(&c, V_PAUSED, "fionread: made to fail", line, sizeof(line));
	CHECK(!strcmp(line, "NOT accelerating: paused (fionread: made to fail)"), "%s", line);
	verdict_line(&c, V_PAUSED, NULL, line, sizeof(line));
	CHECK(strstr(line, "ngx-sockmap resume") != NULL, "paused by hand: says how back: %s", line);
	c.gauges.recent_pairs = 1;
	verdict_line(&c, V_ACCELERATING, NULL, line, sizeof(line));
	CHECK(!strcmp(line, "accelerating: 2 cgroups, 1 pair in the last 5 min"), "%s", line);
}

static void test_window(void)
{
	struct pair_window w;
	uint64_t p, k;
	int i;

	memset(&w, 0, sizeof(w));
	pair_window_add(&w, 10, 100, &p, &k);
	CHECK(p == 0 && k == 0, "first sample: nothing yet");
	pair_window_add(&w, 15, 130, &p, &k);
	CHECK(p == 5 && k == 30, "since the first: %llu, %llu", (unsigned long long)p,
	      (unsigned long long)k);
	/* five minutes of samples later, the first ones have left the window */
	for (i = 0; i < PAIR_WINDOW_SEC / PAIR_WINDOW_STEP_SEC; i++)
		pair_window_add(&w, 15, 130 + i, &p, &k);
	CHECK(p == 0, "no pair in the last window: %llu", (unsigned long long)p);
	CHECK(k == PAIR_WINDOW_SEC / PAIR_WINDOW_STEP_SEC - 1, "connections in the window: %llu",
	      (unsigned long long)k);
}

int main(void)
{
	test_verdicts();
	test_window();
	return CHECK_SUMMARY();
}

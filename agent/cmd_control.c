// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* `status`, `pause`, `resume`, `detach`: commands that reach a running (or
 * pinned) data plane through its maps (state.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <time.h>
#include <stdlib.h>
#include "cli.h"
#include "counters.h"
#include "dataplane.h"
#include "log.h"
#include "options.h"
#include "paths.h"
#include "state.h"
#include "status.h"
#include "verdict.h"
#include "whynot.h"

/* ---- status ---- */

/* connections status --json lists (the count is whole), services
 * status lists as text */
#define STATUS_CONNS_MAX     1024
#define STATUS_SERVICES_TEXT 10

struct status_opts {
	bool json;
	bool connections;
};

static int do_status(void *opts)
{
	const struct status_opts *o = opts;
	struct agent_info info;
	struct agent_maps m;
	struct whynot why = {};
	struct counters c;
	char err[256];
	int ret;

	if (need_root("status"))
		return EXIT_RUNTIME;
	if (state_open(&m, &info, err, sizeof(err))) {
		pr_warn("%s\n", err);
		return EXIT_RUNTIME;
	}
	ret = counters_read(&m, &c);
	/* why not, per connection and service: a dump of this namespace */
	if (!ret && whynot_scan(&m, &info, &c, &why))
		pr_debug("why-not scan failed\n");
	state_close(&m);
	if (ret) {
		pr_warn("reading counters failed: %s\n", strerror(-ret));
		return EXIT_RUNTIME;
	}
	if (o->json) {
		json_object *root = status_to_json(&c, &info);

		json_object_object_add(root, "why_not", whynot_json(&why, WHYNOT_SERVICES_MAX,
								   STATUS_CONNS_MAX));
		printf("%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN |
								 JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(root);
	} else {
		status_print_text(stdout, &c, &info);
		fputc('\n', stdout);
		whynot_print_services(stdout, &why, STATUS_SERVICES_TEXT, 80);
		if (o->connections) {
			fputc('\n', stdout);
			whynot_print_connections(stdout, &why, STATUS_CONNS_MAX);
		}
	}
	whynot_free(&why);
	return verdict_exit_code(c.verdict);
}

static error_t status_parse(int key, char *arg, struct argp_state *state)
{
	struct status_opts *o = state->input;

	switch (key) {
	case 'j':
		o->json = true;
		return 0;
	case 'c':
		o->connections = true;
		return 0;
	}
	return cli_parse_common(key, arg, state);
}

static const struct argp_option status_options[] = {
	{ "json", 'j', NULL, 0, "one JSON object, for scripts", 0 },
	{ "connections", 'c', NULL, 0,
	  "also each of nginx's connections: its ends, its cookie (hex, as ss -e prints it), "
	  "redirected or on TCP and why (--json always lists them)", 0 },
	{ 0 },
};

static struct status_opts status_opts;

const struct command cmd_status = {
	.name = "status",
	.summary = "is nginx accelerated, and the counters (--json for scripts)",
	.doc = "Counters of the running agent (or of a pinned data plane): sockets tracked, "
	       "pairs, bytes redirected past the TCP stack (ss -ti and tcpdump don't see "
	       "them), and fallbacks to TCP by reason.  The first line is the verdict, and "
	       "the exit code says it too: 0 accelerating; 3 paused (the self-test, an "
	       "unguarded hazard, or 'pause'); 4 attached to no cgroup; 5 connections were "
	       "made in the last 5 minutes and none paired; 6 no agent running (a pinned data "
	       "plane only); 1 status could not be read.\n"
	       "\n"
	       "EXAMPLES:\n"
	       "  ngx-sockmap status\n"
	       "  ngx-sockmap status --connections\n"
	       "  ngx-sockmap status --json | jq .fallbacks",
	.options = status_options,
	.parse = status_parse,
	.opts = &status_opts,
	.handler = do_status,
};

/* ---- health ---- */

struct health_opts {
	unsigned int max_age; /* seconds */
};

/* The liveness check the DaemonSet's probe runs (an exec probe: it needs no
 * slot of the metrics server, which any pod can fill).  The agent's loop
 * writes agent_gauges on every tick (runtime.c publish_gauges), so their heartbeat
 * says whether the loop still turns; a Kubernetes API call blocks it up
 * to 5 s (k8s.c), far below the default age. */
static int do_health(void *opts)
{
	const struct health_opts *o = opts;
	struct agent_gauges g = {};
	struct agent_info info;
	struct agent_maps m;
	struct timespec now;
	char err[256];
	double age;
	__u32 zero = 0;
	int ret;

	if (need_root("health"))
		return EXIT_RUNTIME;
	if (state_open(&m, &info, err, sizeof(err))) {
		printf("unhealthy: %s\n", err);
		return EXIT_RUNTIME;
	}
	ret = m.fd[MAP_GAUGES] < 0 ? -ENOENT :
	      bpf_map_lookup_elem(m.fd[MAP_GAUGES], &zero, &g) ? -errno : 0;
	state_close(&m);
	if (!info.pid) {
		printf("unhealthy: no agent is running (a pinned data plane only)\n");
		return EXIT_RUNTIME;
	}
	if (ret || !g.heartbeat_ns) {
		printf("unhealthy: agent pid %d has not ticked yet%s%s\n", info.pid,
		       ret ? ": " : "", ret ? strerror(-ret) : "");
		return EXIT_RUNTIME;
	}
	clock_gettime(CLOCK_BOOTTIME, &now);
	age = ((double)now.tv_sec * 1e9 + now.tv_nsec - (double)g.heartbeat_ns) / 1e9;
	if (age > o->max_age) {
		printf("unhealthy: agent pid %d last ticked %.0f s ago (over %u s): its loop is stuck\n",
		       info.pid, age, o->max_age);
		return EXIT_RUNTIME;
	}
	printf("ok: agent pid %d ticked %.1f s ago\n", info.pid, age < 0 ? 0 : age);
	return 0;
}

static error_t health_parse(int key, char *arg, struct argp_state *state)
{
	struct health_opts *o = state->input;
	unsigned long long v;

	if (key != 'a')
		return cli_parse_common(key, arg, state);
	if (parse_decimal(arg, 1, 3600, &v))
		usage_error(state, "--max-age: '%s' is not a number of seconds from 1 to 3600", arg);
	o->max_age = v;
	return 0;
}

static const struct argp_option health_options[] = {
	{ "max-age", 'a', "SECONDS", 0, "the loop must have ticked this recently (default 30)", 0 },
	{ 0 },
};

static struct health_opts health_opts = { .max_age = 30 };

const struct command cmd_health = {
	.name = "health",
	.summary = "exit 0 if the running agent's loop is turning (a liveness probe)",
	.doc = "Exit 0 when an agent is running and its loop ticked within --max-age "
	       "seconds, 1 otherwise, with one line saying which. It reads the agent's "
	       "maps, not its metrics server: a probe that works however many clients "
	       "hold /metrics connections open.\n"
	       "\n"
	       "EXAMPLES:\n"
	       "  ngx-sockmap health\n"
	       "  ngx-sockmap health --max-age 10   # in a Kubernetes exec livenessProbe",
	.options = health_options,
	.parse = health_parse,
	.opts = &health_opts,
	.handler = do_health,
};

/* ---- pause / resume ---- */

static int set_paused(bool paused, bool force)
{
	struct agent_info info;
	struct agent_maps m;
	char err[256];
	int ret;

	if (need_root(paused ? "pause" : "resume"))
		return EXIT_RUNTIME;
	if (state_open(&m, &info, err, sizeof(err))) {
		pr_warn("%s\n", err);
		return EXIT_RUNTIME;
	}
	/* the self-test's pause is the fail-closed verdict: lifting it is
	 * what `run --force` does, so it takes the same word */
	/* A pinned data plane with no agent: no self-test vouches for this
	 * kernel (agent.state went with the agent), so lifting a pause is the
	 * override it would be under a blocked agent. */
	if (!paused && info.pinned && !force) {
		state_close(&m);
		pr_warn("no agent is running: nothing checked this kernel for the pinned data plane; "
			"'ngx-sockmap run --pin' adopts it and runs the self-test, 'resume --force' "
			"resumes it as it is\n");
		return EXIT_RUNTIME;
	}
	if (!paused && info.selftest_blocked && !force) {
		state_close(&m);
		pr_warn("kept paused at start (%s): accelerating here can lose, corrupt or hang "
			"connections; 'resume --force' accelerates anyway\n", info.selftest_error);
		return EXIT_RUNTIME;
	}
	ret = dataplane_set_paused(m.fd[MAP_CONFIG], paused);
	state_close(&m);
	if (ret) {
		pr_warn("updating the config map failed: %s\n", strerror(-ret));
		return EXIT_RUNTIME;
	}
	printf(paused ? "paused: new connections use TCP; paired ones stay redirected until they close\n"
		      : "resumed: new connections are accelerated again\n");
	return 0;
}

static int do_pause(void *opts)
{
	(void)opts;
	return set_paused(true, false);
}

struct resume_opts {
	bool force;
};

static error_t resume_parse(int key, char *arg, struct argp_state *state)
{
	struct resume_opts *o = state->input;

	if (key != 'f')
		return cli_parse_common(key, arg, state);
	o->force = true;
	return 0;
}

static const struct argp_option resume_options[] = {
	{ "force", 'f', NULL, 0,
	  "also lift a pause the start-up self-test imposed (a critical check failed: "
	  "for kernel developers; never in production)", 0 },
	{ 0 },
};

static struct resume_opts resume_opts;

static int do_resume(void *opts)
{
	return set_paused(false, ((struct resume_opts *)opts)->force);
}

const struct command cmd_pause = {
	.name = "pause",
	.summary = "stop redirecting; connections keep working over TCP",
	.doc = "Stop accelerating: connections established from now on use TCP. Connections "
	       "already paired stay redirected until they close: moving a live connection to "
	       "TCP is not safe on kernels whose FIONREAD ignores TCP bytes of a sockmap "
	       "socket (selftest check fionread_tcp), and nginx relies on FIONREAD.",
	.handler = do_pause,
};

const struct command cmd_resume = {
	.name = "resume",
	.summary = "redirect new connections again",
	.doc = "Accelerate again: connections established from now on. A pause the "
	       "start-up self-test imposed (a critical check failed on this kernel) is "
	       "lifted only with --force.",
	.options = resume_options,
	.parse = resume_parse,
	.opts = &resume_opts,
	.handler = do_resume,
};

/* ---- detach ---- */

static int do_detach(void *opts)
{
	char why[PATH_MAX + 64];
	int other = 0, lock_fd, n;

	(void)opts;
	if (need_root("detach"))
		return EXIT_RUNTIME;
	lock_fd = state_lock(&other);
	if (lock_fd == -EBUSY) {
		pr_warn("agent pid %d is running: stop it first (its pinned state is removed by detach afterwards)\n",
			other);
		return EXIT_RUNTIME;
	}
	n = dataplane_unpin_all(why, sizeof(why));
	if (lock_fd >= 0)
		close(lock_fd);
	if (n == -EPERM) {
		pr_warn("%s: not made by ngx-sockmap, left alone; check what it holds and remove it (rm -r %s)\n",
			why, PIN_DIR);
		return EXIT_RUNTIME;
	}
	if (n == -ENOENT) {
		printf("nothing pinned in %s\n", PIN_DIR);
		return 0;
	}
	if (n < 0) {
		pr_warn("%s: %s\n", PIN_DIR, strerror(-n));
		return EXIT_RUNTIME;
	}
	printf("detached: removed %d pinned objects from %s\n", n, PIN_DIR);
	return 0;
}

const struct command cmd_detach = {
	.name = "detach",
	.summary = "remove the data plane a `run --pin` left attached",
	.doc = "Remove what 'run --pin' left in " PIN_DIR ": detaches sock_ops "
	       "from every cgroup. Connections already accelerated keep working.",
	.handler = do_detach,
};

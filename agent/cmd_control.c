// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* `status`, `pause`, `resume`, `detach`: commands that reach a running (or
 * pinned) data plane through its maps (state.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "counters.h"
#include "dataplane.h"
#include "log.h"
#include "paths.h"
#include "state.h"
#include "status.h"

/* ---- status ---- */

struct status_opts {
	bool json;
};

static int do_status(void *opts)
{
	const struct status_opts *o = opts;
	struct agent_info info;
	struct agent_maps m;
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
	state_close(&m);
	if (ret) {
		pr_warn("reading counters failed: %s\n", strerror(-ret));
		return EXIT_RUNTIME;
	}
	if (o->json)
		status_print_json(stdout, &c, &info);
	else
		status_print_text(stdout, &c, &info);
	return 0;
}

static error_t status_parse(int key, char *arg, struct argp_state *state)
{
	struct status_opts *o = state->input;

	if (key != 'j')
		return cli_parse_common(key, arg, state);
	o->json = true;
	return 0;
}

static const struct argp_option status_options[] = {
	{ "json", 'j', NULL, 0, "one JSON object, for scripts", 0 },
	{ 0 },
};

static struct status_opts status_opts;

const struct command cmd_status = {
	.name = "status",
	.summary = "counters of the running agent (--json for scripts)",
	.doc = "Counters of the running agent (or of a pinned data plane): sockets tracked, "
	       "pairs, bytes redirected past the TCP stack (ss -ti and tcpdump don't see "
	       "them), and fallbacks to TCP by reason.\n"
	       "\n"
	       "EXAMPLES:\n"
	       "  ngx-sockmap status\n"
	       "  ngx-sockmap status --json | jq .fallbacks",
	.options = status_options,
	.parse = status_parse,
	.opts = &status_opts,
	.handler = do_status,
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
	n = dataplane_unpin_all();
	if (lock_fd >= 0)
		close(lock_fd);
	if (n < 0) {
		printf("nothing pinned in %s\n", PIN_DIR);
		return 0;
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

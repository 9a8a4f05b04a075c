// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * `ngx-sockmap run`: its options (the table is options.c's), then the run
 * itself, which runtime.c owns: start (targets -> probe -> lock ->
 * self-test -> load -> attach -> ready), serve until SIGINT/SIGTERM, stop.
 * One exit path: runtime_stop(), however far start got.
 */
#include <stdlib.h>
#include "cli.h"
#include "log.h"
#include "notify.h"
#include "options.h"
#include "paths.h"
#include "runtime.h"

/* ---- options (the table and its parser: options.c) ---- */

static error_t run_parse(int key, char *arg, struct argp_state *state)
{
	/* an error quotes the argument whole, and one is at most 128 KiB
	 * (MAX_ARG_STRLEN, include/uapi/linux/binfmts.h) */
	static char err[(128 << 10) + 256];
	struct run_opts *o = state->input;
	struct run_env env;
	int ret;

	switch (key) {
	case ARGP_KEY_INIT:
		run_opts_init(o);
		return 0;
	case ARGP_KEY_END:
		env = (struct run_env){ .node_name = getenv("NODE_NAME"),
					.k8s_host = getenv("KUBERNETES_SERVICE_HOST"),
					.k8s_port = getenv("KUBERNETES_SERVICE_PORT") };
		ret = run_opts_finish(o, &env, err, sizeof(err));
		break;
	default:
		ret = run_opt_set(o, key, arg, err, sizeof(err));
	}
	if (ret < 0)
		usage_error(state, "%s", err);
	return ret > 0 ? cli_parse_common(key, arg, state) : 0;
}

static int do_run(void *opts)
{
	static struct runtime rt; /* big: keep it off the stack */
	const struct run_opts *o = opts;
	int rc = EXIT_RUNTIME;

	if (need_root("run"))
		return EXIT_RUNTIME;
	if (!runtime_start(&rt, o)) {
		rc = runtime_serve(&rt) ? EXIT_RUNTIME : 0;
		/* detaching can take a moment (the guard, the links): say so, as
		 * sd_notify(3) asks, so the unit shows "deactivating" meanwhile */
		notify_service_manager("STOPPING=1\nSTATUS=detaching");
	}
	runtime_stop(&rt);
	if (o->pin && rc == 0)
		pr_info("data plane stays pinned in %s; remove with 'ngx-sockmap detach'\n", PIN_DIR);
	return rc;
}

static struct run_opts run_opts; /* run_opts_init() sets the defaults */

const struct command cmd_run = {
	.name = "run",
	.summary = "attach to Nginx's cgroup(s) and accelerate until stopped",
	.doc = "Attach the sockmap data plane and stay in the foreground until SIGINT or "
	       "SIGTERM (exit 0). Prints a line starting with \"ready\" once attached.\n"
	       "\n"
	       "Sockets in the named cgroups are tracked; a send is redirected to the peer "
	       "socket only when both ends are tracked on this host and proven to be the two "
	       "ends of one connection. Everything else uses TCP, unchanged.\n"
	       "\n"
	       "Local peers are followed: every 2 s the agent looks (sock_diag) for local "
	       "processes connected to the tracked cgroups and attaches to their cgroups "
	       "too (never the root cgroup); new connections with them are accelerated.\n"
	       "\n"
	       "Without --pin nothing stays attached after exit: connections opened while "
	       "the agent ran keep their acceleration until they close, new ones use TCP.\n"
	       "\n"
	       "EXAMPLES:\n"
	       "  ngx-sockmap run\n"
	       "  ngx-sockmap run -p $(cat /run/nginx.pid) -c /sys/fs/cgroup/upstream.slice\n"
	       "  ngx-sockmap run --nginx-pid-file /var/run/nginx.pid --ports 80,443 -v"
	       "\vOPTIONS above; exit status 0 on a clean stop, 1 on a runtime error, 2 on a "
	       "usage error.",
	.options = run_argp_options,
	.parse = run_parse,
	.opts = &run_opts,
	.handler = do_run,
};

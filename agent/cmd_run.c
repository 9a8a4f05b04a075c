// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * `ngx-sockmap run`: its options (the table is options.c's), then the run
 * itself, which runtime.c owns: start (targets -> probe -> lock ->
 * self-test -> load -> attach -> ready), serve until SIGINT/SIGTERM, stop.
 * One exit path: runtime_stop(), however far start got.  `check` is
 * run's start up to its decision, with nothing attached.
 */
#include <limits.h>
#include <stdlib.h>
#include <json-c/json.h>
#include "cli.h"
#include "log.h"
#include "notify.h"
#include "options.h"
#include "paths.h"
#include "runtime.h"
#include "status.h"

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

/* ---- check: run's start up to the plan, nothing attached ---- */

/* What check says, and exits with: the order of the questions an operator
 * asks (can it run here at all? is there an nginx? would it accelerate?). */
static int check_verdict(const struct runtime *rt, const struct check_report *r, char *line,
			 size_t len)
{
	if (!r->cg2_mount[0]) {
		snprintf(line, len, "cannot run here: cgroup v2 is not mounted");
		return EXIT_RUNTIME;
	}
	if (r->kernel_err[0]) {
		snprintf(line, len, "cannot run here: %s", r->kernel_err);
		return EXIT_RUNTIME;
	}
	if (!r->loaded) {
		snprintf(line, len, "cannot run here: the data plane did not load (above: why)");
		return EXIT_RUNTIME;
	}
	if (r->metrics_err[0]) {
		snprintf(line, len, "run would refuse: metrics on %s: %s (--metrics ADDR:PORT|off)",
			 r->metrics, r->metrics_err);
		return EXIT_RUNTIME;
	}
	if (rt->info.selftest_blocked) {
		snprintf(line, len, "run would attach but NOT accelerate: %s", rt->info.selftest_error);
		return 3;
	}
	if (!r->n_targets) {
		snprintf(line, len, "this host can accelerate, but no nginx was found: %s",
			 r->targets_err);
		return 4;
	}
	snprintf(line, len, "run would accelerate here: %d cgroup%s", r->n_targets,
		 r->n_targets == 1 ? "" : "s");
	return 0;
}

static void check_print_text(const struct runtime *rt, const struct check_report *r,
			     const char *line)
{
	const struct agent_info *info = &rt->info;
	int i;

	printf("%s\n", line);
	printf("cgroup v2   %s\n", r->cg2_mount[0] ? r->cg2_mount : "NOT mounted");
	printf("bpffs       %s\n", r->bpffs ? "/sys/fs/bpf (--pin can keep the data plane)"
				       : "/sys/fs/bpf is not a bpffs: --pin can't be used");
	printf("kernel      %s\n", r->kernel_err[0] ? r->kernel_err : "sockmap, sk_msg, sock_ops: yes");
	for (i = 0; i < r->n_targets && i < CHECK_MAX_SHOWN; i++)
		printf("%-12s%s (%s)\n", i ? "" : "targets", r->targets[i].path, r->targets[i].reason);
	if (!r->n_targets)
		printf("targets     none found: %.61s\n", r->targets_err);
	if (r->metrics[0])
		printf("metrics     %s%s%s\n", r->metrics, r->metrics_err[0] ? ": " : " is free",
		       r->metrics_err);
	for (i = 0; i < HZ__MAX && info->guards[HZ_RESETS].mech[0]; i++)
		printf("%-12s%-8s%-12s%.48s\n", i ? "" : "hazards", hazard_names[i],
		       info->guards[i].mech, info->guards[i].why);
	for (i = 0; i < info->n_selftest; i++)
		printf("%-12s%-4s %-18s %.42s\n", i ? "" : "selftest", info->selftest[i].result,
		       info->selftest[i].name, info->selftest[i].detail);
}

static void check_print_json(const struct runtime *rt, const struct check_report *r,
			     const char *line, int code)
{
	json_object *root = json_object_new_object(), *o;

	json_object_object_add(root, "line", json_object_new_string(line));
	json_object_object_add(root, "exit_code", json_object_new_int(code));
	json_object_object_add(root, "cgroup2", json_object_new_string(r->cg2_mount));
	json_object_object_add(root, "bpffs", json_object_new_boolean(r->bpffs));
	json_object_object_add(root, "kernel_error", json_object_new_string(r->kernel_err));
	json_object_object_add(root, "targets",
			       status_cgroups_json(r->targets, r->n_targets < CHECK_MAX_SHOWN
								  ? r->n_targets : CHECK_MAX_SHOWN));
	json_object_object_add(root, "targets_error", json_object_new_string(r->targets_err));
	json_object_object_add(root, "metrics", json_object_new_string(r->metrics));
	json_object_object_add(root, "metrics_error", json_object_new_string(r->metrics_err));
	/* the plan and the self-test, as status --json has them */
	o = status_to_json(&(struct counters){ 0 }, &rt->info);
	json_object_object_add(root, "hazards", json_object_get(json_object_object_get(o, "hazards")));
	json_object_object_add(root, "selftest", json_object_get(json_object_object_get(o, "selftest")));
	json_object_put(o);
	printf("%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN |
							     JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
}

struct check_opts {
	struct run_opts run; /* first: run_parse takes the input as run's */
	bool json;
};

static error_t check_parse(int key, char *arg, struct argp_state *state)
{
	struct check_opts *o = state->input;

	if (key != 'j')
		return run_parse(key, arg, state);
	o->json = true;
	return 0;
}

static int do_check(void *opts)
{
	static struct runtime rt;
	const struct check_opts *o = opts;
	struct check_report r;
	char line[PATH_MAX + 512];
	int code;

	if (need_root("check"))
		return EXIT_RUNTIME;
	runtime_check(&rt, &o->run, &r);
	code = check_verdict(&rt, &r, line, sizeof(line));
	if (o->json)
		check_print_json(&rt, &r, line, code);
	else
		check_print_text(&rt, &r, line);
	runtime_stop(&rt);
	return code;
}

static struct argp_option check_argp_options[64];
static struct check_opts check_opts;

/* check takes run's options, and --json */
static void __attribute__((constructor)) check_options_init(void)
{
	const struct argp_option json = { "json", 'j', NULL, 0, "one JSON object, for scripts", 0 };
	int n = 0;

	while (run_argp_options[n].name && n < 62) {
		check_argp_options[n] = run_argp_options[n];
		n++;
	}
	check_argp_options[n] = json;
}

const struct command cmd_check = {
	.name = "check",
	.summary = "would 'run' accelerate here? (attaches nothing)",
	.doc = "Everything 'run' does up to its decision, with the same options, and nothing "
	       "attached, locked or pinned: cgroup v2 and bpffs, what the kernel has, the "
	       "targets (nginx found, its cgroup), the metrics port, the self-test and what "
	       "guards each hazard here.  The first line is the answer.\n"
	       "\n"
	       "EXAMPLES:\n"
	       "  ngx-sockmap check\n"
	       "  ngx-sockmap check --nginx-pid-file /var/run/nginx.pid --json"
	       "\vExit status: 0 run would accelerate; 3 it would attach but stay paused (a "
	       "critical self-test check, an unguarded hazard); 4 this host can accelerate but "
	       "no nginx was found; 1 it cannot run here (the kernel, cgroup v2, the metrics "
	       "port); 2 usage error.",
	.options = check_argp_options,
	.parse = check_parse,
	.opts = &check_opts,
	.handler = do_check,
};

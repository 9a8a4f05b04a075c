// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* CLI: `ngx-sockmap COMMAND [OPTIONS]`, one argp parser per command. */
#include <argp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "commands.h"
#include "log.h"
#include "options.h"

const char *argp_program_version = "ngx-sockmap " NGX_SOCKMAP_VERSION;
const char *argp_program_bug_address = "the project's issue tracker";

static const char main_doc[] =
	"Accelerate local Nginx connections with sockmap, safely.\n"
	"\n"
	"USAGE: ngx-sockmap COMMAND [OPTIONS]\n"
	"\n"
	"COMMANDS:\n"
	"  run      attach to Nginx's cgroup(s) and accelerate until stopped\n"
	"  status   counters of the running agent (--json for scripts)\n"
	"  top      live view: redirect rate, fallbacks, top sources, recent events\n"
	"  pause    stop redirecting; connections keep working over TCP\n"
	"  resume   redirect new connections again\n"
	"  detach   remove the data plane a `run --pin` left attached\n"
	"  selftest check this kernel's redirect path (also run by `run`)\n"
	"\n"
	"'ngx-sockmap COMMAND --help' explains each command.\n"
	"\n"
	"EXAMPLES:\n"
	"  sudo ngx-sockmap run                   # cgroup of the pid in /run/nginx.pid\n"
	"  sudo ngx-sockmap run -c system.slice/nginx.service --ports 80,8080\n"
	"  sudo ngx-sockmap status";

/* One line, exit 2: argp_error() adds a "Try --help" line, and scripts
 * want the problem on one line. */
static void __attribute__((noreturn, format(printf, 2, 3)))
usage_error(const struct argp_state *state, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", state->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see: %s --help)\n", state->name);
	exit(EXIT_USAGE);
}

/* argp runs with ARGP_NO_ERRS so getopt prints nothing; report the
 * argument it stopped at ourselves. */
static void parse_failed(const struct argp_state *state)
{
	const char *arg = state->next > 0 && state->next <= state->argc
				  ? state->argv[state->next - 1] : "?";

	usage_error(state, "unknown option or missing value: '%s'", arg);
}

/* ---- run ---- */

enum { OPT_PID_FILE = 1000, OPT_PORTS, OPT_PIN, OPT_NO_FOLLOW, OPT_SHORT_CONN, OPT_XDP, OPT_XDP_SAMPLE, OPT_METRICS };

static const struct argp_option run_options[] = {
	{ "cgroup", 'c', "PATH", 0,
	  "cgroup v2 directory to attach to (absolute, or relative to the cgroup v2 mount); "
	  "repeatable", 0 },
	{ "nginx-pid", 'p', "PID", 0, "attach to the cgroup of this process; repeatable", 0 },
	{ "nginx-pid-file", OPT_PID_FILE, "FILE", 0,
	  "attach to the cgroup of the pid in FILE (default with no target: /run/nginx.pid)", 0 },
	{ "ports", OPT_PORTS, "LIST", 0,
	  "track only connections with a local or remote port in LIST, e.g. 80,8000-8100 "
	  "(default: all ports)", 0 },
	{ "pin", OPT_PIN, NULL, 0,
	  "keep the data plane attached after the agent exits (pinned in /sys/fs/bpf/ngx-sockmap); "
	  "a later 'run --pin' adopts it, 'detach' removes it", 0 },
	{ "no-follow", OPT_NO_FOLLOW, NULL, 0,
	  "attach only to the named cgroups; by default the cgroups of local processes "
	  "connected to them (upstreams, local clients) are followed and attached too", 0 },
	{ "short-conn", OPT_SHORT_CONN, "MSGS", 0,
	  "don't track new connections on a server port whose connections average fewer "
	  "than MSGS sends per socket (learned; 1 in 16 still sampled). Default 4; "
	  "0 tracks every connection", 0 },
	{ "xdp", OPT_XDP, "IFACE", 0,
	  "count packets per source on IFACE with an XDP observer (native mode where the "
	  "driver has it, else generic; always passes); repeatable", 0 },
	{ "xdp-sample", OPT_XDP_SAMPLE, "N", 0,
	  "put 1 frame in N (a power of two; default 64, 0: none) into the event ring "
	  "that 'ngx-sockmap top' shows", 0 },
	{ "metrics", OPT_METRICS, "ADDR:PORT", 0,
	  "serve Prometheus /metrics and /healthz here (default " DEFAULT_METRICS_ADDR
	  "; 'off' to disable; all interfaces only if you say 0.0.0.0)", 0 },
	{ "verbose", 'v', NULL, 0, "more output: -v progress, -vv libbpf debug", 0 },
	{ 0 },
};

static const char run_doc[] =
	"Attach the sockmap data plane and stay in the foreground until SIGINT or "
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
	"usage error.";

static error_t run_parse(int key, char *arg, struct argp_state *state)
{
	struct run_opts *o = state->input;
	char err[256];
	int pid;

	switch (key) {
	case 'c':
		if (o->n_cgroups >= MAX_TARGETS)
			usage_error(state, "too many --cgroup (max %d)", MAX_TARGETS);
		o->cgroups[o->n_cgroups++] = arg;
		break;
	case 'p':
		pid = parse_pid(arg);
		if (pid < 0)
			usage_error(state, "--nginx-pid: '%s' is not a process id", arg);
		if (o->n_pids >= MAX_TARGETS)
			usage_error(state, "too many --nginx-pid (max %d)", MAX_TARGETS);
		o->pids[o->n_pids++] = pid;
		break;
	case OPT_PID_FILE:
		o->pid_file = arg;
		break;
	case OPT_PORTS:
		if (parse_ports(arg, &o->ports, err, sizeof(err)))
			usage_error(state, "--ports: %s", err);
		break;
	case OPT_PIN:
		o->pin = true;
		break;
	case OPT_NO_FOLLOW:
		o->follow = false;
		break;
	case OPT_XDP:
		if (strlen(arg) >= 16)
			usage_error(state, "--xdp: interface name '%.40s' is longer than 15 characters",
				    arg);
		if (o->n_xdp >= MAX_TARGETS)
			usage_error(state, "too many --xdp (max %d)", MAX_TARGETS);
		o->xdp_ifaces[o->n_xdp++] = arg;
		break;
	case OPT_METRICS:
		if (!strcmp(arg, "off")) {
			o->metrics = false;
			break;
		}
		if (parse_listen(arg, &o->metrics_addr, &o->metrics_addr_len, err, sizeof(err)))
			usage_error(state, "--metrics: %s", err);
		o->metrics = true;
		break;
	case OPT_XDP_SAMPLE: {
		long v = parse_sample_every(arg);

		if (v < 0)
			usage_error(state, "--xdp-sample: '%s' is not 0 or a power of two up to 65536",
				    arg);
		o->xdp_sample = v;
		break;
	}
	case OPT_SHORT_CONN: {
		char *end;
		unsigned long v = strtoul(arg, &end, 10);

		if (!*arg || *end || v > 1000000)
			usage_error(state, "--short-conn: '%s' is not a count of messages (0-1000000)",
				   arg);
		o->short_conn_msgs = v;
		break;
	}
	case 'v':
		log_verbosity++;
		break;
	case ARGP_KEY_ARG:
		usage_error(state, "unexpected argument '%s'", arg);
		break;
	case ARGP_KEY_ERROR:
		parse_failed(state);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* ---- status / pause / resume / detach ---- */

struct simple_opts {
	bool json;
	bool once;              /* top: one frame, no terminal control */
	unsigned int delay_ms;  /* top: refresh period */
};

static const struct argp_option status_options[] = {
	{ "json", 'j', NULL, 0, "one JSON object, for scripts", 0 },
	{ "verbose", 'v', NULL, 0, "more output", 0 },
	{ 0 },
};

static const struct argp_option top_options[] = {
	{ "delay", 'd', "SECS", 0, "refresh every SECS seconds (default 1; 0.2 to 60)", 0 },
	{ "verbose", 'v', NULL, 0, "more output", 0 },
	{ "once", '1', NULL, 0,
	  "print one frame (rates over one refresh period) and exit; for scripts and logs", 0 },
	{ 0 },
};

static const struct argp_option plain_options[] = {
	{ "verbose", 'v', NULL, 0, "more output", 0 },
	{ 0 },
};

static error_t simple_parse(int key, char *arg, struct argp_state *state)
{
	struct simple_opts *o = state->input;

	switch (key) {
	case 'j':
		o->json = true;
		break;
	case '1':
		o->once = true;
		break;
	case 'd': {
		char *end;
		double d = strtod(arg, &end);

		if (!*arg || *end || !(d >= 0.2 && d <= 60))
			usage_error(state, "--delay: '%s' is not a number of seconds from 0.2 to 60",
				    arg);
		o->delay_ms = (unsigned int)(d * 1000);
		break;
	}
	case 'v':
		log_verbosity++;
		break;
	case ARGP_KEY_ARG:
		usage_error(state, "unexpected argument '%s'", arg);
		break;
	case ARGP_KEY_ERROR:
		parse_failed(state);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const char status_doc[] =
	"Counters of the running agent (or of a pinned data plane): sockets tracked, "
	"pairs, bytes redirected past the TCP stack (ss -ti and tcpdump don't see "
	"them), and fallbacks to TCP by reason.\n"
	"\n"
	"EXAMPLES:\n"
	"  ngx-sockmap status\n"
	"  ngx-sockmap status --json | jq .fallbacks";
static const char pause_doc[] =
	"Stop accelerating: connections established from now on use TCP. Connections "
	"already paired stay redirected until they close: moving a live connection to "
	"TCP is not safe on kernels whose FIONREAD ignores TCP bytes of a sockmap "
	"socket (selftest check fionread_tcp), and nginx relies on FIONREAD.";
static const char resume_doc[] = "Accelerate again: connections established from now on.";
static const char selftest_doc[] =
	"Exercise the redirect path of this kernel in a private cgroup with a private "
	"copy of the data plane: ordering, large messages, half-close, FIONREAD, "
	"blocking reads after the peer's shutdown, the slow-reader bound. Exit 1 if a "
	"check that can corrupt data fails ('run' then stays paused).";
static const char detach_doc[] =
	"Remove what 'run --pin' left in /sys/fs/bpf/ngx-sockmap: detaches sock_ops "
	"from every cgroup. Connections already accelerated keep working.";

static const char top_doc[] =
	"Live view of the running agent, refreshed every second, 80 columns: "
	"redirected messages and bytes per second, fallbacks to TCP by reason, the top "
	"sources of the last 10 s (with --xdp), and the newest events of the arena "
	"rings (pairs, fallbacks, closes with the bytes each socket redirected; sampled "
	"packets), read in place from the agent's maps. q or Ctrl-C quits.\n"
	"\n"
	"EXAMPLES:\n"
	"  sudo ngx-sockmap top\n"
	"  sudo ngx-sockmap top --once -d 5 > snapshot.txt";

struct command {
	const char *name;
	const struct argp_option *options;
	argp_parser_t parser;
	const char *doc;
};

static const struct command commands[] = {
	{ "run", run_options, run_parse, run_doc },
	{ "status", status_options, simple_parse, status_doc },
	{ "top", top_options, simple_parse, top_doc },
	{ "pause", plain_options, simple_parse, pause_doc },
	{ "resume", plain_options, simple_parse, resume_doc },
	{ "detach", plain_options, simple_parse, detach_doc },
	{ "selftest", plain_options, simple_parse, selftest_doc },
};

static void main_usage(FILE *out)
{
	fprintf(out, "%s\n", main_doc);
}

int main(int argc, char **argv)
{
	static struct run_opts run = { .ports.all = true, .follow = true, .short_conn_msgs = 4,
					 .xdp_sample = 64 };
	struct simple_opts simple = { .delay_ms = 1000 };
	const struct command *cmd = NULL;
	char prog[64];
	unsigned int i;
	struct argp argp = { 0 };

	argp_err_exit_status = EXIT_USAGE;
	{
		char err[160];

		run.metrics = true;
		parse_listen(DEFAULT_METRICS_ADDR, &run.metrics_addr, &run.metrics_addr_len, err,
			     sizeof(err));
	}
	log_setup_libbpf();
	if (argc < 2) {
		main_usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		main_usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("%s\n", argp_program_version);
		return 0;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			cmd = &commands[i];
	if (!cmd) {
		fprintf(stderr, "ngx-sockmap: unknown command '%s' (try: ngx-sockmap --help)\n", argv[1]);
		return EXIT_USAGE;
	}
	/* argp names the program after argv[0]: make it "ngx-sockmap run". */
	snprintf(prog, sizeof(prog), "ngx-sockmap %s", cmd->name);
	argv[1] = prog;
	argp.options = cmd->options;
	argp.parser = cmd->parser;
	argp.doc = cmd->doc;
	/* ARGP_NO_ERRS (below) also silences argp's own --help, so answer
	 * the help options here. */
	for (i = 2; i < (unsigned int)argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-?") || !strcmp(argv[i], "-h")) {
			argp_help(&argp, stdout, ARGP_HELP_STD_HELP, prog);
			return 0;
		}
		if (!strcmp(argv[i], "--usage")) {
			argp_help(&argp, stdout, ARGP_HELP_USAGE, prog);
			return 0;
		}
	}
	if (argp_parse(&argp, argc - 1, argv + 1, ARGP_NO_ERRS, NULL,
		       cmd->parser == run_parse ? (void *)&run : (void *)&simple))
		return EXIT_USAGE;

	if (cmd->parser == run_parse)
		return cmd_run(&run);
	if (!strcmp(cmd->name, "status"))
		return cmd_status(simple.json);
	if (!strcmp(cmd->name, "top"))
		return cmd_top(simple.delay_ms, simple.once);
	if (!strcmp(cmd->name, "pause"))
		return cmd_pause(true);
	if (!strcmp(cmd->name, "resume"))
		return cmd_pause(false);
	if (!strcmp(cmd->name, "selftest"))
		return cmd_selftest();
	return cmd_detach();
}

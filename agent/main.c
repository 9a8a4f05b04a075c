// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* `ngx-sockmap COMMAND [OPTIONS]`: the command table and dispatch.  Each
 * command lives in its own cmd_*.c. */
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "log.h"
#include "version.h" /* build/version.h: VERSION and scripts/version.sh */

const char *argp_program_version = "ngx-sockmap " NGX_SOCKMAP_VERSION;
const char *argp_program_bug_address = "the project's issue tracker";

static const struct command *const commands[] = {
	&cmd_run,    &cmd_check,  &cmd_status,   &cmd_top,   &cmd_pause,
	&cmd_resume, &cmd_detach, &cmd_selftest, &cmd_health,
};
#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct argp_option verbose_option[] = {
	{ "verbose", 'v', NULL, 0, "more output: -v progress, -vv libbpf debug", -1 },
	{ 0 },
};

static void main_usage(FILE *out)
{
	unsigned int i;

	fprintf(out, "Accelerate local Nginx connections with sockmap, safely.\n\n"
		     "USAGE: ngx-sockmap COMMAND [OPTIONS]\n\nCOMMANDS:\n");
	for (i = 0; i < N_COMMANDS; i++)
		fprintf(out, "  %-8s %s\n", commands[i]->name, commands[i]->summary);
	fprintf(out, "\n'ngx-sockmap COMMAND --help' explains each command.\n\n"
		     "EXAMPLES:\n"
		     "  sudo ngx-sockmap run                   # cgroup of the pid in /run/nginx.pid\n"
		     "  sudo ngx-sockmap run -c system.slice/nginx.service --ports 80,8080\n"
		     "  sudo ngx-sockmap status\n");
}

static error_t parse_common_only(int key, char *arg, struct argp_state *state)
{
	return cli_parse_common(key, arg, state);
}

int main(int argc, char **argv)
{
	const struct command *cmd = NULL;
	struct argp_child children[] = { { 0 }, { 0 } };
	struct argp common = { verbose_option, parse_common_only, NULL, NULL, NULL, NULL, NULL };
	struct argp argp = { 0 };
	char prog[64];
	unsigned int i;

	argp_err_exit_status = EXIT_USAGE;
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
	for (i = 0; i < N_COMMANDS; i++)
		if (!strcmp(argv[1], commands[i]->name))
			cmd = commands[i];
	if (!cmd) {
		fprintf(stderr, "ngx-sockmap: unknown command '%s' (try: ngx-sockmap --help)\n", argv[1]);
		return EXIT_USAGE;
	}
	/* argp names the program after argv[0]: make it "ngx-sockmap run". */
	snprintf(prog, sizeof(prog), "ngx-sockmap %s", cmd->name);
	argv[1] = prog;
	argp.options = cmd->options;
	argp.parser = cmd->parse ? cmd->parse : parse_common_only;
	argp.doc = cmd->doc;
	children[0].argp = &common;
	argp.children = children;
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
	if (argp_parse(&argp, argc - 1, argv + 1, ARGP_NO_ERRS, NULL, cmd->opts))
		return EXIT_USAGE;
	return cmd->handler(cmd->opts);
}

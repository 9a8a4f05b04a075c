/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Subcommands, in the xdp-tools style: each cmd_*.c defines one struct
 * command (its options, argp parser, documentation and handler); main.c
 * only holds the table and dispatches.  Handlers return the process exit
 * status.
 */
#ifndef NGX_SOCKMAP_CLI_H
#define NGX_SOCKMAP_CLI_H

#include <argp.h>

#define EXIT_RUNTIME 1 /* not root, no such cgroup, kernel lacks sockmap, ... */
#define EXIT_USAGE 2

struct command {
	const char *name;
	const char *summary;  /* one line in `ngx-sockmap --help` */
	const char *doc;      /* argp doc: what it does, EXAMPLES */
	const struct argp_option *options; /* without -v, which every command has */
	argp_parser_t parse;  /* NULL: no options beyond -v */
	void *opts;           /* the parser's input, with defaults set */
	int (*handler)(void *opts);
};

extern const struct command cmd_run, cmd_status, cmd_top, cmd_pause, cmd_resume, cmd_detach,
	cmd_selftest, cmd_health, cmd_check;

/* One line on stderr naming the problem, exit 2 (argp_error() would add a
 * second line; scripts want one). */
void __attribute__((noreturn, format(printf, 2, 3)))
usage_error(const struct argp_state *state, const char *fmt, ...);
/* Keys every command shares (-v, stray arguments, parse errors): call from
 * a command's parser for keys it does not know. */
error_t cli_parse_common(int key, char *arg, struct argp_state *state);
/* Refuse to go on without root, naming the command: 0 or EXIT_RUNTIME. */
int need_root(const char *what);

#endif

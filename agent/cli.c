// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "cli.h"
#include "log.h"

void usage_error(const struct argp_state *state, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", state->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see: %s --help)\n", state->name);
	exit(EXIT_USAGE);
}

error_t cli_parse_common(int key, char *arg, struct argp_state *state)
{
	const char *at;

	switch (key) {
	case 'v':
		log_verbosity++;
		return 0;
	case ARGP_KEY_ARG:
		usage_error(state, "unexpected argument '%s'", arg);
	case ARGP_KEY_ERROR:
		/* argp runs with ARGP_NO_ERRS, so getopt printed nothing:
		 * name the argument it stopped at */
		at = state->next > 0 && state->next <= state->argc ? state->argv[state->next - 1]
								   : "?";
		usage_error(state, "unknown option or missing value: '%s'", at);
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

int need_root(const char *what)
{
	if (geteuid() == 0)
		return 0;
	pr_warn("%s needs root (BPF maps and programs): try sudo ngx-sockmap %s\n", what, what);
	return EXIT_RUNTIME;
}

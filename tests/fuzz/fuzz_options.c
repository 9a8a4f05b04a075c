// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libFuzzer target: `run`'s options (agent/options.c) as argp hands them
 * over, from the command line or from the options file (the unit's
 * EnvironmentFile, /etc/default/ngx-sockmap: systemd splits
 * $NGX_SOCKMAP_OPTS at whitespace), then what defaults to the environment
 * ($NODE_NAME, $KUBERNETES_SERVICE_HOST and _PORT, run_opts_finish).
 * Input: a mode byte (bit 0: the options file's one line, split at
 * whitespace; else NUL-separated arguments), then three NUL-terminated
 * environment values (empty: unset), then the arguments.  What parses
 * must hold together: counts within their arrays, a --k8s-selector with
 * a node and an API, an error message terminated.
 */
#include <argp.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fz {
	struct run_opts o;
	struct run_env env;
	char err[4096];
	int failed;
};

static void check_err(const struct fz *z)
{
	if (!memchr(z->err, 0, sizeof(z->err)) || !z->err[0])
		abort();
}

static error_t parse(int key, char *arg, struct argp_state *state)
{
	struct fz *z = state->input;
	int ret;

	switch (key) {
	case ARGP_KEY_INIT:
		run_opts_init(&z->o);
		return 0;
	case ARGP_KEY_END:
		ret = run_opts_finish(&z->o, &z->env, z->err, sizeof(z->err));
		break;
	case ARGP_KEY_ARG:
		return EINVAL; /* cli_parse_common: "unexpected argument" */
	case 'v':
		return 0;
	default:
		ret = run_opt_set(&z->o, key, arg, z->err, sizeof(z->err));
		if (ret > 0)
			return ARGP_ERR_UNKNOWN;
	}
	if (ret < 0) {
		check_err(z);
		z->failed = 1;
		return EINVAL;
	}
	return 0;
}

static const struct argp_option verbose[] = { { "verbose", 'v', NULL, 0, "more", -1 }, { 0 } };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fz z;
	struct argp_child child[] = { { &(struct argp){ verbose, NULL, NULL, NULL, NULL, NULL,
							 NULL }, 0, NULL, 0 },
				      { 0 } };
	struct argp argp = { run_argp_options, parse, NULL, NULL, child, NULL, NULL };
	char *buf, *p, *end, *env[3], *argv[130];
	int argc = 0, i, ret;

	if (!size)
		return 0;
	buf = malloc(size + 4);
	if (!buf)
		return 0;
	memcpy(buf, data + 1, size - 1);
	memset(buf + size - 1, 0, 5);
	p = buf;
	end = buf + size - 1;
	for (i = 0; i < 3; i++) {
		env[i] = *p ? p : NULL;
		p += strlen(p) + (p < end);
	}
	memset(&z, 0, sizeof(z));
	z.env = (struct run_env){ env[0], env[1], env[2] };
	argv[argc++] = "run";
	while (p < end && argc < 129) {
		if (data[0] & 1) {
			p += strspn(p, " \t\n");
			if (!*p)
				break;
			argv[argc++] = p;
			p += strcspn(p, " \t\n");
			if (*p)
				*p++ = 0;
		} else {
			argv[argc++] = p;
			p += strlen(p) + 1;
		}
	}
	argv[argc] = NULL;
	ret = argp_parse(&argp, argc, argv, ARGP_NO_ERRS | ARGP_NO_EXIT | ARGP_NO_HELP, NULL, &z);
	if (!ret && !z.failed) {
		if (z.o.n_cgroups > RUN_MAX_NAMED || z.o.n_pids > RUN_MAX_NAMED ||
		    z.o.n_xdp > RUN_MAX_NAMED || z.o.n_cgroups < 0 || z.o.n_pids < 0)
			abort();
		for (i = 0; i < z.o.n_pids; i++)
			if (z.o.pids[i] <= 0)
				abort();
		if (z.o.k8s_selector && (!z.o.k8s_node || !*z.o.k8s_node || !z.o.k8s_api))
			abort();
		if (z.o.k8s_namespaces && !z.o.k8s_selector)
			abort();
		if (z.o.metrics && z.o.metrics_addr_len != sizeof(struct sockaddr_in) &&
		    z.o.metrics_addr_len != sizeof(struct sockaddr_in6))
			abort();
		if (!memchr(z.o.k8s_api_buf, 0, sizeof(z.o.k8s_api_buf)))
			abort();
	}
	free(buf);
	return 0;
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <stdarg.h>
#include <stdio.h>
#include <bpf/libbpf.h>
#include "log.h"

int log_verbosity;

void log_msg(enum log_level lvl, const char *fmt, ...)
{
	va_list ap;

	if ((int)lvl > log_verbosity)
		return;
	va_start(ap, fmt);
	fputs("ngx-sockmap: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* libbpf warnings become our info, its info our debug. */
	int ours = level == LIBBPF_WARN ? LOG_INFO : LOG_DEBUG;

	if (ours > log_verbosity)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void log_setup_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}

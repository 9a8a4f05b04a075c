// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libFuzzer target: metrics_route (agent/metrics.c), what the /metrics
 * server answers to a request's method and URL, whoever sends them.  The
 * input is the method, a NUL, and the URL (libmicrohttpd hands the
 * handler C strings).  Only GET and HEAD of /metrics and /healthz are
 * served; anything else is refused, never rendered.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "metrics.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 2), *method, *url;
	enum metrics_page p;
	bool get;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = buf[size + 1] = 0;
	method = buf;
	url = buf + strlen(buf) + 1;
	p = metrics_route(method, url);
	get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
	if (p == MP_NOT_ALLOWED ? get
	    : p == MP_METRICS   ? !get || strcmp(url, "/metrics")
	    : p == MP_HEALTHZ   ? !get || strcmp(url, "/healthz")
	    : p == MP_NOT_FOUND ? !get || !strcmp(url, "/metrics") || !strcmp(url, "/healthz")
				: true)
		abort();
	free(buf);
	return 0;
}

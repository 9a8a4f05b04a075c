// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "options.h"

static int parse_port(const char *s, char **end)
{
	long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtol(s, end, 10);
	if (errno || v < 1 || v > 65535)
		return -1;
	return (int)v;
}

int parse_ports(const char *s, struct port_set *set, char *err, size_t errlen)
{
	const char *p = s;
	char *end;
	int lo, hi, i;

	memset(set, 0, sizeof(*set));
	if (!*s) {
		snprintf(err, errlen, "empty port list");
		return -1;
	}
	while (*p) {
		lo = parse_port(p, &end);
		if (lo < 0)
			goto bad;
		hi = lo;
		if (*end == '-') {
			hi = parse_port(end + 1, &end);
			if (hi < 0 || hi < lo)
				goto bad;
		}
		for (i = lo; i <= hi; i++)
			set->bits[i >> 6] |= 1ULL << (i & 63);
		if (*end == ',' && end[1])
			end++;
		else if (*end)
			goto bad;
		p = end;
	}
	return 0;
bad:
	snprintf(err, errlen,
		 "bad port list '%s': want ports 1-65535 or ranges, e.g. 80,443,8000-8100", s);
	return -1;
}

int parse_pid(const char *s)
{
	char *end;
	long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 1 || v > INT_MAX)
		return -1;
	return (int)v;
}

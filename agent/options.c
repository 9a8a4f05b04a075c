// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
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

int parse_ports_add(const char *s, struct port_set *set, char *err, size_t errlen)
{
	struct port_set more;
	size_t i;

	if (parse_ports(s, &more, err, errlen))
		return -1;
	if (set->all)
		memset(set, 0, sizeof(*set));
	for (i = 0; i < sizeof(set->bits) / sizeof(set->bits[0]); i++)
		set->bits[i] |= more.bits[i];
	return 0;
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

int parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *len, char *err,
		 size_t errlen)
{
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	char host[64];
	const char *colon;
	char *end;
	size_t hl;
	int port;

	memset(ss, 0, sizeof(*ss));
	if (s[0] == '[') {
		colon = strstr(s, "]:");
		if (!colon)
			goto bad;
		hl = colon - s - 1;
		colon++;
		if (hl >= sizeof(host))
			goto bad;
		memcpy(host, s + 1, hl);
	} else {
		colon = strrchr(s, ':');
		if (!colon || strchr(s, ':') != colon)
			goto bad;
		hl = colon - s;
		if (hl >= sizeof(host))
			goto bad;
		memcpy(host, s, hl);
	}
	host[hl] = 0;
	port = parse_port(colon + 1, &end);
	if (port < 0 || *end)
		goto bad;
	if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons(port);
		*len = sizeof(*a4);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(port);
		*len = sizeof(*a6);
		return 0;
	}
bad:
	snprintf(err, errlen,
		 "bad listen address '%s': want IP:PORT, e.g. 127.0.0.1:9435 or [::1]:9435", s);
	return -1;
}

long parse_sample_every(const char *s)
{
	char *end;
	unsigned long v;

	if (!*s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > 65536 || (v & (v - 1)))
		return -1;
	return (long)v;
}

int parse_size(const char *s, uint64_t *bytes)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case 'K': case 'k': shift = 10; end++; break;
	case 'M': case 'm': shift = 20; end++; break;
	case 'G': case 'g': shift = 30; end++; break;
	}
	if (*end == 'i')
		end++; /* "64Mi" */
	if (*end == 'B')
		end++; /* "64MB", "64MiB": binary all the same */
	if (*end || v > (1ULL << 40) >> shift)
		return -1;
	*bytes = (uint64_t)v << shift;
	return 0;
}

int parse_word(const char *s, const char *const *words, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (words[i] && !strcmp(s, words[i]))
			return i;
	return -1;
}

int parse_max_sockets(const char *s, uint32_t *n)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < MAX_SOCKETS_MIN || v > MAX_SOCKETS_LIMIT)
		return -1;
	*n = (uint32_t)v;
	return 0;
}

/* a at most b, where b is known (not 0) */
static uint64_t bound(uint64_t a, bool known, uint64_t b)
{
	return known && b < a ? b : a;
}

uint32_t max_sockets_default(const struct host_limits *h)
{
	uint64_t n = MAX_SOCKETS_LIMIT, p = 1;

	if (!h->mem_bytes && !h->file_max && !h->nginx_files)
		return MAX_SOCKETS_FLOOR; /* nothing known: not the largest */
	n = bound(n, h->mem_bytes, h->mem_bytes / 16 / SOCKET_COST_BYTES);
	n = bound(n, h->file_max, h->file_max);
	n = bound(n, h->nginx_files, h->nginx_files * 2);
	while (p < n)
		p <<= 1;
	if (p < MAX_SOCKETS_FLOOR)
		p = MAX_SOCKETS_FLOOR;
	return p > MAX_SOCKETS_LIMIT ? MAX_SOCKETS_LIMIT : (uint32_t)p;
}

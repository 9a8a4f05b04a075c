// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libFuzzer target: notify_addr (agent/notify.c), $NOTIFY_SOCKET as the
 * agent turns it into the address of its readiness datagram.  The input
 * is the variable's value (up to its first NUL, as an environment string
 * is).  An address taken must fit struct sockaddr_un, name the path given
 * (NUL-terminated within the length) or the abstract name given.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include "notify.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_un sa;
	socklen_t alen = 0;
	char *env = malloc(size + 1);
	size_t n;

	if (!env)
		return 0;
	memcpy(env, data, size);
	env[size] = 0;
	n = strlen(env);
	if (!notify_addr(env, &sa, &alen)) {
		if (alen > sizeof(sa) || alen <= offsetof(struct sockaddr_un, sun_path) + 1 ||
		    sa.sun_family != AF_UNIX)
			abort();
		if (env[0] == '/' && (sa.sun_path[alen - offsetof(struct sockaddr_un, sun_path) - 1] ||
				      memcmp(sa.sun_path, env, n)))
			abort();
		if (env[0] == '@' && (sa.sun_path[0] || memcmp(sa.sun_path + 1, env + 1, n - 1)))
			abort();
		if (env[0] != '/' && env[0] != '@')
			abort();
	}
	free(env);
	return 0;
}

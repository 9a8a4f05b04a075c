// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * systemd's notify protocol written out rather than linking libsystemd:
 * it is one datagram to the AF_UNIX socket named in $NOTIFY_SOCKET (a path,
 * or "@name" in the abstract namespace), a protocol systemd documents as
 * stable and to be reimplemented freely (sd_notify(3), NOTES; systemd's
 * docs/PORTABILITY_AND_STABILITY).  libsystemd would add a build
 * dependency (libsystemd-dev), and, in a process holding CAP_BPF and
 * CAP_SYS_ADMIN, a library that itself links liblz4, liblzma, libzstd,
 * libgcrypt and libcap, for these 30 lines; the container images
 * (docker/, deploy/) never run under systemd.  Not implemented: vsock
 * addresses ("vsock:CID:PORT", systemd 253+, for VMs reporting to a host)
 * and the watchdog; an address of another kind is refused, not guessed.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "notify.h"

int notify_addr(const char *env, struct sockaddr_un *sa, socklen_t *alen)
{
	size_t n = strlen(env);

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if ((env[0] != '/' && env[0] != '@') || n < 2 || n >= sizeof(sa->sun_path))
		return -EAFNOSUPPORT;
	memcpy(sa->sun_path, env, n);
	/* "@name": abstract, the leading NUL counts in the address length */
	if (env[0] == '@')
		sa->sun_path[0] = '\0';
	*alen = offsetof(struct sockaddr_un, sun_path) + n + (env[0] == '/');
	return 0;
}

int notify_service_manager(const char *msg)
{
	const char *env = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa;
	size_t mlen = strlen(msg);
	socklen_t alen;
	ssize_t sent;
	int fd, err;

	if (!env || !*env)
		return 0;
	err = notify_addr(env, &sa, &alen);
	if (err)
		return err;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	sent = sendto(fd, msg, mlen, MSG_NOSIGNAL, (struct sockaddr *)&sa, alen);
	err = sent < 0 ? -errno : (size_t)sent == mlen ? 1 : -EMSGSIZE;
	close(fd);
	return err;
}

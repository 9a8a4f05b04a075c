// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* notify_service_manager(): the datagram systemd reads, to a path and to an
 * abstract address, and what it does without (or with a bad) NOTIFY_SOCKET. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "check.h"
#include "notify.h"

/* a datagram socket bound at NAME ("/path" or "@abstract"), as systemd's */
static int listener(const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n = strlen(name);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	memcpy(sa.sun_path, name, n);
	if (name[0] == '@')
		sa.sun_path[0] = '\0';
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa,
			   offsetof(struct sockaddr_un, sun_path) + n + (name[0] == '/'))) {
		perror("bind");
		exit(2);
	}
	return fd;
}

static void got(int fd, const char *want)
{
	char buf[256];
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);

	CHECK(n == (ssize_t)strlen(want), "received %zd bytes, want %zu", n, strlen(want));
	if (n >= 0) {
		buf[n] = '\0';
		CHECK(!strcmp(buf, want), "received '%s', want '%s'", buf, want);
	}
}

int main(void)
{
	char dir[] = "/tmp/ngx-sockmap-notify.XXXXXX", path[128], abs[64];
	int fd;

	unsetenv("NOTIFY_SOCKET");
	CHECK(notify_service_manager("READY=1") == 0, "no NOTIFY_SOCKET: nothing sent, no error");
	setenv("NOTIFY_SOCKET", "", 1);
	CHECK(notify_service_manager("READY=1") == 0, "empty NOTIFY_SOCKET: nothing sent");

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/notify", dir);
	fd = listener(path);
	setenv("NOTIFY_SOCKET", path, 1);
	CHECK(notify_service_manager("READY=1\nSTATUS=ready: attached to 1 cgroup") == 1,
	      "sent to a path");
	got(fd, "READY=1\nSTATUS=ready: attached to 1 cgroup");
	close(fd);
	unlink(path);
	CHECK(notify_service_manager("READY=1") == -ENOENT, "a socket that is gone: -ENOENT");
	rmdir(dir);

	snprintf(abs, sizeof(abs), "@ngx-sockmap-test-notify.%d", getpid());
	fd = listener(abs);
	setenv("NOTIFY_SOCKET", abs, 1);
	CHECK(notify_service_manager("STOPPING=1") == 1, "sent to an abstract address");
	got(fd, "STOPPING=1");
	close(fd);

	setenv("NOTIFY_SOCKET", "vsock:2:1234", 1);
	CHECK(notify_service_manager("READY=1") == -EAFNOSUPPORT, "vsock: refused, not guessed");
	setenv("NOTIFY_SOCKET", "relative/path", 1);
	CHECK(notify_service_manager("READY=1") == -EAFNOSUPPORT, "a relative path: refused");
	return CHECK_SUMMARY();
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <unistd.h>
#include <sys/socket.h>
#include "nl_dump.h"

int nl_dump_start(int protocol, struct nlmsghdr *req, uint32_t *seq, uint32_t *portid)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK }, self;
	socklen_t slen = sizeof(self);
	int fd, err;

	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, protocol);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&kernel, sizeof(kernel)) ||
	    getsockname(fd, (struct sockaddr *)&self, &slen))
		goto fail;
	req->nlmsg_seq = ++*seq;
	req->nlmsg_pid = self.nl_pid;
	*portid = self.nl_pid;
	if (send(fd, req, req->nlmsg_len, 0) < 0)
		goto fail;
	return fd;
fail:
	err = -errno;
	close(fd);
	return err;
}

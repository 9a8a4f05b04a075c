// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * uringkit: the sends of tests/lib/oob_probe.py's sender, through io_uring
 * (IORING_OP_SEND, one SQE each), for oob_urgent.sh.  An io_uring send
 * enters no send*(2) syscall, so the guard's syscall tracepoints never
 * see its MSG_OOB; the tracepoint tier watches io_uring_submit_req.
 *
 *   uringkit oob-sender PORT DIR [--fixed]
 *
 * Connects to 127.0.0.1:PORT and sends, 50 ms apart: "hello", "abc" with
 * MSG_OOB, "world", "XY" with MSG_OOB, "tail"; then shutdown(SHUT_WR).
 * Writes DIR/sender.json as oob_probe.py does ({"sends": [each send's
 * count or "error:NAME", "shutdown:ok" or "shutdown:error:NAME"]}), then
 * DIR/sender.done, and keeps the socket open until DIR/reader.json
 * appears (10 s at most).  --fixed registers the socket with the ring and
 * sends on it as a registered file (IOSQE_FIXED_FILE): the request names
 * an index into the ring's table, not an fd.  Exit 0 when the file was
 * written, 2 on bad usage, 1 otherwise.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <liburing.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const struct {
	const char *data;
	int flags;
} sends[] = {
	{ "hello", 0 }, { "abc", MSG_OOB }, { "world", 0 }, { "XY", MSG_OOB }, { "tail", 0 },
};

static void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&t, NULL);
}

static bool fixed; /* --fixed: fd 0 of the ring's registered files */

/* One send through the ring: its CQE's res (bytes, or -errno). */
static int uring_send(struct io_uring *ring, int fd, const char *data, int flags)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	int ret;

	if (!sqe)
		return -EBUSY;
	io_uring_prep_send(sqe, fixed ? 0 : fd, data, strlen(data), flags);
	if (fixed)
		sqe->flags |= IOSQE_FIXED_FILE;
	ret = io_uring_submit_and_wait(ring, 1);
	if (ret < 0)
		return ret;
	ret = io_uring_peek_cqe(ring, &cqe);
	if (ret)
		return ret;
	ret = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return ret;
}

static int write_file(const char *dir, const char *name, const char *text)
{
	char path[4096], tmp[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f || fputs(text, f) < 0 || fclose(f))
		return -1;
	return rename(tmp, path);
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	char json[1024], path[4096];
	struct io_uring ring;
	size_t i, len;
	struct stat st;
	int fd, ret;

	fixed = argc == 5 && !strcmp(argv[4], "--fixed");
	if ((argc != 4 && !fixed) || strcmp(argv[1], "oob-sender") || atoi(argv[2]) <= 0 ||
	    atoi(argv[2]) > 65535) {
		fprintf(stderr, "usage: uringkit oob-sender PORT DIR [--fixed]\n");
		return 2;
	}
	a.sin_port = htons(atoi(argv[2]));
	ret = io_uring_queue_init(4, &ring, 0);
	if (ret) {
		fprintf(stderr, "uringkit: io_uring_queue_init: %s\n", strerror(-ret));
		return 1;
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		fprintf(stderr, "uringkit: connect: %s\n", strerror(errno));
		return 1;
	}
	if (fixed) {
		ret = io_uring_register_files(&ring, &fd, 1);
		if (ret) {
			fprintf(stderr, "uringkit: io_uring_register_files: %s\n", strerror(-ret));
			return 1;
		}
	}
	len = snprintf(json, sizeof(json), "{\"sends\": [");
	for (i = 0; i < sizeof(sends) / sizeof(sends[0]); i++) {
		ret = uring_send(&ring, fd, sends[i].data, sends[i].flags);
		if (ret >= 0)
			len += snprintf(json + len, sizeof(json) - len, "%d, ", ret);
		else
			len += snprintf(json + len, sizeof(json) - len, "\"error:%s\", ",
					strerrorname_np(-ret) ?: "?");
		sleep_ms(50);
	}
	if (shutdown(fd, SHUT_WR))
		len += snprintf(json + len, sizeof(json) - len, "\"shutdown:error:%s\"]}",
				strerrorname_np(errno) ?: "?");
	else
		len += snprintf(json + len, sizeof(json) - len, "\"shutdown:ok\"]}");
	if (write_file(argv[3], "sender.json", json) || write_file(argv[3], "sender.done", "")) {
		fprintf(stderr, "uringkit: writing %s/sender.json: %s\n", argv[3], strerror(errno));
		return 1;
	}
	/* the reader's end must not be this close */
	snprintf(path, sizeof(path), "%s/reader.json", argv[3]);
	for (i = 0; i < 200 && stat(path, &st); i++)
		sleep_ms(50);
	close(fd);
	io_uring_queue_exit(&ring);
	return 0;
}

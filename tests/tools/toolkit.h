/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the test tools (tcpkit, splicekit, racekit) share: the stop flag
 * their signal handler sets, a monotonic clock in seconds, a bounded wait
 * on one socket, and the mixer
 * their byte patterns are made of (splitmix64's finaliser: every bit of
 * the input moves every bit of the output, so a shifted or repeated chunk
 * never matches).
 */
#ifndef NGX_SOCKMAP_TOOLKIT_H
#define NGX_SOCKMAP_TOOLKIT_H

#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <time.h>

static volatile sig_atomic_t g_stop;

static inline void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Wait for ev on fd until deadline (now_s() seconds), in polls of at most
 * 100 ms so a stop is seen: 1 ready, 0 timed out or stopping. */
static inline int wait_fd(int fd, short ev, double deadline)
{
	struct pollfd p = { .fd = fd, .events = ev };
	int ms;

	while (!g_stop) {
		ms = (int)((deadline - now_s()) * 1000);
		if (ms <= 0)
			return 0;
		if (poll(&p, 1, ms > 100 ? 100 : ms) > 0)
			return 1;
	}
	return 0;
}

static inline uint64_t mix64(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ULL;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
	return x ^ (x >> 31);
}

#endif

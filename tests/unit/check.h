/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* CHECK(cond, fmt, ...): count, and on failure name the line and say why.
 * Each test's main() ends with CHECK_SUMMARY(). */
#ifndef NGX_SOCKMAP_CHECK_H
#define NGX_SOCKMAP_CHECK_H

#include <stdio.h>

static int failures, checks;

#define CHECK(cond, ...)                                            \
	do {                                                        \
		checks++;                                           \
		if (!(cond)) {                                      \
			failures++;                                 \
			printf("FAIL %s:%d: ", __FILE__, __LINE__); \
			printf(__VA_ARGS__);                        \
			printf("\n");                               \
		}                                                   \
	} while (0)

#define CHECK_SUMMARY()                                                   \
	(printf("%d checks, %d failed\n", checks, failures), failures != 0)

#endif

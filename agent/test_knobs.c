// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The tests' knobs, behind their one switch (test_knobs.h). */
#include <stdlib.h>
#include "test_knobs.h"

#define TEST_KNOB_ENV(e, env) [e] = env,
static const char *const knob_env[KNOB__MAX] = { TEST_KNOBS(TEST_KNOB_ENV) };

const char *test_knob(enum test_knob k)
{
	if (k >= KNOB__MAX || !getenv("NGX_SOCKMAP_TEST_RUN"))
		return NULL;
	return getenv(knob_env[k]);
}

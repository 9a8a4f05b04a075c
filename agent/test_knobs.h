/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The knobs the tests turn (a self-test check made to fail or pass, the
 * claim race widened, hazards kept seconds, no BPF arena, no typed task in
 * sk_msg), in one place and behind one switch:
 * a knob is read only when NGX_SOCKMAP_TEST_RUN is set, which tests/run
 * and tests/lib/common.sh set for what they start and nothing else does.
 * An agent in production ignores them, whatever its environment holds.
 */
#ifndef NGX_SOCKMAP_TEST_KNOBS_H
#define NGX_SOCKMAP_TEST_KNOBS_H

#define TEST_KNOBS(X)                                                                  \
	X(KNOB_FAIL_CHECK, "NGX_SOCKMAP_TEST_FAIL_CHECK")         /* a check's name */  \
	X(KNOB_PASS_CHECK, "NGX_SOCKMAP_TEST_PASS_CHECK")         /* a check's name */  \
	X(KNOB_SELFTEST_ERROR, "NGX_SOCKMAP_TEST_SELFTEST_ERROR") /* it can't run */    \
	X(KNOB_NO_REDIRECT, "NGX_SOCKMAP_TEST_NO_REDIRECT")       /* checks over TCP */ \
	X(KNOB_CLAIM_DELAY, "NGX_SOCKMAP_TEST_CLAIM_DELAY")       /* spin rounds */     \
	X(KNOB_HAZARD_TTL, "NGX_SOCKMAP_TEST_HAZARD_TTL")         /* seconds */         \
	X(KNOB_NO_ARENA, "NGX_SOCKMAP_TEST_NO_ARENA")             /* the pre-6.9 path */ \
	X(KNOB_NO_TASK_BTF, "NGX_SOCKMAP_TEST_NO_TASK_BTF")       /* sk_msg probe reads */ \
	X(KNOB_FOLLOW_SOCKS, "NGX_SOCKMAP_TEST_FOLLOW_SOCKS")     /* follow's total cap */

#define TEST_KNOB_ENUM(e, env) e,
enum test_knob { TEST_KNOBS(TEST_KNOB_ENUM) KNOB__MAX };

/* The knob's value, or NULL: not set, or not under test. */
const char *test_knob(enum test_knob k);

#endif

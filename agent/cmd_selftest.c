// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* `ngx-sockmap selftest`: run the kernel self-test (selftest.c) and print it. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "enforcer.h"
#include "log.h"
#include "selftest.h"
#include "target.h"

static int do_selftest(void *opts)
{
	struct selftest_report r;
	struct enforce_plan plan;
	char mnt[PATH_MAX];
	int ret;

	(void)opts;
	if (need_root("selftest"))
		return EXIT_RUNTIME;
	cg2_join_host_ns();
	if (cg2_mount(mnt, sizeof(mnt))) {
		pr_warn("cgroup v2 is not mounted: mount -t cgroup2 none /sys/fs/cgroup\n");
		return EXIT_RUNTIME;
	}
	/* the mechanism `run` would choose: iter/tcp where it loads */
	enforcer_plan(RESETS_AUTO, UNREAD_AUTO, &plan);
	ret = selftest_run(mnt, plan.resets, true, &r);
	if (ret) {
		pr_warn("selftest could not run: %s\n", strerror(-ret));
		return EXIT_RUNTIME;
	}
	printf("kernel self-test of the redirect path (private cgroup, loopback):\n");
	selftest_print(stdout, &r);
	if (r.critical_failure)
		printf("result: CRITICAL failure: 'run' will not accelerate on this kernel\n");
	else if (r.failures)
		printf("result: usable; %d non-critical issue%s reported above\n", r.failures,
		       r.failures == 1 ? "" : "s");
	else
		printf("result: all checks passed\n");
	return r.critical_failure ? EXIT_RUNTIME : 0;
}

const struct command cmd_selftest = {
	.name = "selftest",
	.summary = "check this kernel's redirect path (also run by `run`)",
	.doc = "Exercise the redirect path of this kernel in a private cgroup with a private "
	       "copy of the data plane: ordering, large messages, half-close, FIONREAD (of "
	       "redirected and of TCP bytes), the kernel's count of unread redirected bytes, "
	       "ending a connection (iter/tcp with bpf_sock_destroy where tracing programs "
	       "load, else sock_diag's SOCK_DESTROY), blocking reads after the peer's shutdown, "
	       "the slow-reader bound, splice(2) readers. Exit 1 if a critical check fails: "
	       "one that can lose, corrupt, reorder or hang connections ('run' then stays "
	       "paused).",
	.handler = do_selftest,
};

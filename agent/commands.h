/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Subcommands.  Each returns the process exit code: 0 ok, 1 runtime error,
 * 2 usage error. */
#ifndef NGX_SOCKMAP_COMMANDS_H
#define NGX_SOCKMAP_COMMANDS_H

#include <stdbool.h>
#include "options.h"

#define EXIT_RUNTIME 1
#define EXIT_USAGE 2

int cmd_run(const struct run_opts *o);
int cmd_status(bool json);
int cmd_top(unsigned int delay_ms, bool once);
int cmd_pause(bool paused);
int cmd_detach(void);
int cmd_selftest(void);

#endif

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Where the agent keeps things on the host. */
#ifndef NGX_SOCKMAP_PATHS_H
#define NGX_SOCKMAP_PATHS_H

#include <stddef.h>

/* Pins of a `run --pin` data plane (detach removes them). */
#define PIN_DIR "/sys/fs/bpf/ngx-sockmap"
/* agent.state and agent.lock (see state.h). */
#define RUN_DIR_DEFAULT "/run/ngx-sockmap"

/* RUN_DIR_DEFAULT, or $NGX_SOCKMAP_RUN_DIR: a second agent for development
 * and tests (one agent per run dir; their data planes must not share
 * cgroups). */
const char *run_dir(void);
/* "<run dir>/<name>" into buf. */
void run_path(char *buf, size_t len, const char *name);

#endif

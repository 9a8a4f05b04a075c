/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Logging in the xdp-tools style: warnings always, info with -v, debug with
 * -vv; libbpf's own messages are demoted one level. */
#ifndef NGX_SOCKMAP_LOG_H
#define NGX_SOCKMAP_LOG_H

enum log_level { LOG_WARN, LOG_INFO, LOG_DEBUG };

extern int log_verbosity; /* 0: warnings only, 1: -v, 2: -vv */

void log_msg(enum log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_setup_libbpf(void);

#define pr_warn(...)  log_msg(LOG_WARN, __VA_ARGS__)
#define pr_info(...)  log_msg(LOG_INFO, __VA_ARGS__)
#define pr_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * An enum and its names from one list, so they can't drift apart.  A list
 * is a macro LIST(X) that expands X(ENUMERATOR, "name") once per entry:
 *
 *   enum fruit { FRUITS(NAMES_ENUM) FRUIT__MAX };
 *   static const char *const fruit_names[] = { FRUITS(NAMES_STR) };
 *
 * The name tables are for the agent only (guarded by #ifndef __bpf__ where
 * they are defined): BPF programs never print.
 */
#ifndef NGX_SOCKMAP_NAMES_H
#define NGX_SOCKMAP_NAMES_H

#define NAMES_ENUM(e, s) e,
#define NAMES_STR(e, s)  [e] = s,

#endif

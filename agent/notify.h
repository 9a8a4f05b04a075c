/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Readiness for a service manager: systemd's notify protocol (sd_notify(3)),
 * so a Type=notify unit is "active" only once the agent is attached. */
#ifndef NGX_SOCKMAP_NOTIFY_H
#define NGX_SOCKMAP_NOTIFY_H

#include <sys/socket.h>

/* Send MSG ("READY=1\nSTATUS=...") to $NOTIFY_SOCKET.  1 when sent, 0 when
 * there is no NOTIFY_SOCKET (not started by systemd: nothing to do), -errno
 * when it could not be sent. */
int notify_service_manager(const char *msg);

/* $NOTIFY_SOCKET's value as a socket address: 0 with sa and *alen set,
 * -EAFNOSUPPORT for a value that is no path and no "@name" (or does not
 * fit).  Pure: the fuzz target feeds it any string. */
struct sockaddr_un;
int notify_addr(const char *env, struct sockaddr_un *sa, socklen_t *alen);

#endif

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Readiness for a service manager: systemd's notify protocol (sd_notify(3)),
 * so a Type=notify unit is "active" only once the agent is attached. */
#ifndef NGX_SOCKMAP_NOTIFY_H
#define NGX_SOCKMAP_NOTIFY_H

/* Send MSG ("READY=1\nSTATUS=...") to $NOTIFY_SOCKET.  1 when sent, 0 when
 * there is no NOTIFY_SOCKET (not started by systemd: nothing to do), -errno
 * when it could not be sent. */
int notify_service_manager(const char *msg);

#endif

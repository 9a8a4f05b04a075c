/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Pure parsing of command-line values: no I/O, unit-tested. */
#ifndef NGX_SOCKMAP_OPTIONS_H
#define NGX_SOCKMAP_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include "target.h" /* MAX_TARGETS */

struct port_set {
	bool all;               /* no --ports given: every port */
	uint64_t bits[65536 / 64];
};

struct run_opts {
	const char *cgroups[MAX_TARGETS];
	int n_cgroups;
	int pids[MAX_TARGETS];
	int n_pids;
	const char *pid_file;
	struct port_set ports;
	bool pin;
	bool follow;            /* attach to local peers' cgroups too */
	bool force;             /* accelerate despite a critical self-test failure */
	bool allow_root_cgroup; /* a target may be the hierarchy's root */
	bool any_process;       /* a pid target need not be nginx */
	const char *k8s_selector; /* attach to the pods it selects on k8s_node */
	const char *k8s_node;
	const char *k8s_api;
	unsigned int short_conn_msgs; /* see struct port_profile; 0: off */
	const char *xdp_ifaces[MAX_TARGETS];
	int n_xdp;
	unsigned int xdp_sample;      /* 1 frame in N into the event ring; 0: none */
	uint64_t max_unread;          /* per reader, bytes (--max-unread) */
	uint64_t unread_budget;       /* host-wide, bytes; 0: from tcp_mem */
	unsigned int guard_idle;      /* s of no tracked socket before the guard idles; 0: never */
	int guard_hooks;              /* enum guard_hooks (guard.h) */
	int resets;                   /* enum reset_mech (enforcer.h) */
	int unread_scan;              /* enum unread_mech (enforcer.h) */
	bool metrics;                 /* serve /metrics (--metrics off: no) */
	struct sockaddr_storage metrics_addr;
	socklen_t metrics_addr_len;
};

#define DEFAULT_METRICS_ADDR "127.0.0.1:9435"

/* "127.0.0.1:9435", "[::1]:9435", "0.0.0.0:9435" -> socket address.
 * Numeric hosts only: the agent binds, it never resolves names. */
int parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *len, char *err,
		 size_t errlen);

/* "80,443,8000-8100" -> set.  Ports 1..65535; ranges inclusive.  Returns 0,
 * or -1 with a message in err (size errlen). */
int parse_ports(const char *s, struct port_set *set, char *err, size_t errlen);
/* The same, adding to set (a repeated --ports adds to the list): set->all
 * is cleared by the first. */
int parse_ports_add(const char *s, struct port_set *set, char *err, size_t errlen);
/* "--xdp-sample" value: 0 (no samples) or a power of two up to 65536
 * (the XDP program tests the low bits of a count).  Returns it, or -1. */
long parse_sample_every(const char *s);
/* "64M", "512K", "1G", "1048576" -> bytes (binary units).  Returns 0, or
 * -1 for anything else (or more than 1 TiB). */
int parse_size(const char *s, uint64_t *bytes);
/* One of n words (an option's choices): its index, or -1. */
int parse_word(const char *s, const char *const *words, int n);
/* Decimal pid > 0 that fits pid_t. Returns the pid or -1. */
int parse_pid(const char *s);
static inline bool port_set_has(const struct port_set *set, uint16_t port)
{
	return set->all || (set->bits[port >> 6] >> (port & 63)) & 1;
}

#endif

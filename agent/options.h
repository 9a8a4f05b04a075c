/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The options of `run`, typed, as xdp-tools' params.h has them: one table
 * (options.c) names each option, its argument and help text, the field of
 * struct run_opts it sets and how its value is parsed; the defaults are
 * const beside it.  Pure parsing: no I/O, unit-tested
 * (tests/unit/test_options.c).  cmd_run.c hands the table to argp; the
 * layers below get the values they need (target.h's struct target_names,
 * the runtime's fields), never this struct.
 */
#ifndef NGX_SOCKMAP_OPTIONS_H
#define NGX_SOCKMAP_OPTIONS_H

#include <argp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct port_set {
	bool all;               /* no --ports given: every port */
	uint64_t bits[65536 / 64];
};

/* --cgroup, --unit, --nginx-pid and --xdp: each given at most this often */
#define RUN_MAX_NAMED 64

struct run_opts {
	const char *cgroups[RUN_MAX_NAMED];
	int n_cgroups;
	const char *units[RUN_MAX_NAMED];
	int n_units;
	int pids[RUN_MAX_NAMED];
	int n_pids;
	const char *pid_file;
	struct port_set ports;
	bool pin;
	bool follow;            /* attach to local peers' cgroups too */
	bool nginx_vars;        /* answer the nginx module's getsockopt */
	unsigned int max_followed; /* followed cgroups attached at once */
	bool force;             /* accelerate despite a critical self-test failure */
	bool allow_root_cgroup; /* a target may be the hierarchy's root */
	bool any_process;       /* a pid target need not be nginx */
	const char *k8s_selector; /* attach to the pods it selects on k8s_node */
	const char *k8s_namespaces; /* "ns[,ns...]"; NULL: every namespace */
	const char *k8s_node;
	const char *k8s_api;
	char k8s_api_buf[300];  /* k8s_api when made from the pod's environment */
	unsigned int short_conn_msgs; /* see struct service_profile; 0: off */
	const char *xdp_ifaces[RUN_MAX_NAMED];
	int n_xdp;
	unsigned int xdp_sample;      /* 1 frame in N into the event ring; 0: none */
	uint64_t max_unread;          /* per reader, bytes (--max-unread) */
	uint64_t unread_budget;       /* host-wide, bytes; 0: from tcp_mem */
	uint32_t max_sockets;         /* SOCKHASH size (--max-sockets); 0: from the host */
	unsigned int guard_idle;      /* s of no tracked socket before the guard idles; 0: never */
	int guard_hooks;              /* enum guard_hooks (guard.h) */
	int resets;                   /* enum reset_mech (enforcer.h) */
	int unread_scan;              /* enum unread_mech (enforcer.h) */
	bool metrics;                 /* serve /metrics (--metrics off: no) */
	struct sockaddr_storage metrics_addr;
	socklen_t metrics_addr_len;
};

/* What the defaults of the k8s options come from (the caller reads the
 * environment: parsing stays pure). */
struct run_env {
	const char *node_name; /* $NODE_NAME */
	const char *k8s_host;  /* $KUBERNETES_SERVICE_HOST */
	const char *k8s_port;  /* $KUBERNETES_SERVICE_PORT */
};

/* argp's view of the table: names, arguments, help texts. */
extern const struct argp_option run_argp_options[];
/* The defaults (and the default --metrics address, parsed like a user's). */
extern const struct run_opts run_opts_defaults;
void run_opts_init(struct run_opts *o);
/* Option key with its argument (NULL for a flag) into o.  0; -1 with the
 * one-line usage error in err (it quotes the argument: size err for it);
 * 1 when key is none of run's options. */
int run_opt_set(struct run_opts *o, int key, const char *arg, char *err, size_t errlen);
/* After the last option: what defaults to the environment (--k8s-node,
 * --k8s-api), and what must come with --k8s-selector.  0, or -1 with the
 * usage error in err. */
int run_opts_finish(struct run_opts *o, const struct run_env *env, char *err, size_t errlen);

/* Not 9435: ebpf_exporter registered it in Prometheus' default port
 * allocations, so both could not run on one host.  That registry's range
 * (9100-9999) has been full since 2023, so any port in it is some
 * exporter's; 10435 is outside it, below the ephemeral range
 * (ip_local_port_range starts at 32768, so no outgoing connection can hold
 * it), below Kubernetes' NodePorts (30000-32767), clear of kubelet's
 * 10248-10259, and netbase's /etc/services names no service on it. */
#define DEFAULT_METRICS_ADDR "127.0.0.1:10435"

/* "127.0.0.1:10435", "[::1]:10435", "0.0.0.0:10435" -> socket address.
 * Numeric hosts only: the agent binds, it never resolves names. */
int parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *len, char *err,
		 size_t errlen);

/* "80,443,8000-8100" -> set.  Ports 1..65535; ranges inclusive.  Returns 0,
 * or -1 with a message in err (size errlen). */
int parse_ports(const char *s, struct port_set *set, char *err, size_t errlen);
/* The same, adding to set (a repeated --ports adds to the list): set->all
 * is cleared by the first. */
int parse_ports_add(const char *s, struct port_set *set, char *err, size_t errlen);
/* A decimal number, digits only (not " 30", "+30", "-1"), from min to
 * max: 0 and the number in *v, or -1. */
int parse_decimal(const char *s, unsigned long long min, unsigned long long max,
		  unsigned long long *v);
/* "--xdp-sample" value: 0 (no samples) or a power of two up to 65536
 * (the XDP program tests the low bits of a count).  Returns it, or -1. */
long parse_sample_every(const char *s);
/* "64M", "512K", "1G", "1048576" -> bytes (binary units).  Returns 0, or
 * -1 for anything else (or more than 1 TiB). */
int parse_size(const char *s, uint64_t *bytes);
/* --max-sockets: how many sockets the SOCKHASH (and the maps sized with
 * it) can hold.  At least 2 (one pair); at most MAX_SOCKETS_LIMIT, whose
 * hash buckets alone take 256 MiB per map (16 bytes a bucket,
 * net/core/sock_map.c sock_hash_alloc). */
#define MAX_SOCKETS_MIN   2
#define MAX_SOCKETS_LIMIT (1U << 24)
/* Decimal count in that range: 0 and the count in *n, or -1. */
int parse_max_sockets(const char *s, uint32_t *n);

/* What the default --max-sockets is derived from (read by runtime.c). */
struct host_limits {
	uint64_t mem_bytes;   /* RAM (sysinfo totalram); 0: unknown */
	uint64_t file_max;    /* fs.file-max: open files host-wide; 0: unknown */
	uint64_t nginx_files; /* the open-file limits (RLIMIT_NOFILE) of the
			       * targets' nginx processes, summed; 0: unknown */
};
/* Read them off this host for these targets (host_limits.c). */
struct cg_target;
void host_limits_read(const struct cg_target *t, int n, struct host_limits *h);
/* The kernel memory one tracked socket may cost, for the memory bound:
 * the target (docs/bench/scale measures it). */
#define SOCKET_COST_BYTES 4096
/* The default when nothing bounds it lower, and the floor. */
#define MAX_SOCKETS_FLOOR (1U << 14)
/*
 * Default --max-sockets: the least of (a) 1/16 of RAM at SOCKET_COST_BYTES
 * a socket, (b) fs.file-max (each socket is an open file), (c) twice
 * nginx's open files (each nginx socket, and its local peer's), rounded
 * up to a power of two (the SOCKHASH rounds its buckets so anyway) and
 * kept within [MAX_SOCKETS_FLOOR, MAX_SOCKETS_LIMIT].  Unknown bounds are
 * left out.  Pure, for the unit tests.
 */
uint32_t max_sockets_default(const struct host_limits *h);

/* One of n words (an option's choices): its index, or -1. */
int parse_word(const char *s, const char *const *words, int n);
/* Decimal pid > 0 that fits pid_t. Returns the pid or -1. */
int parse_pid(const char *s);
static inline bool port_set_has(const struct port_set *set, uint16_t port)
{
	return set->all || (set->bits[port >> 6] >> (port & 63)) & 1;
}

#endif

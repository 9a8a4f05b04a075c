// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The options of `run`: one typed table (RUN_OPTIONS), expanded into argp's
 * option table and into the one parser, run_opt_set(); then the pure
 * parsers of single values it calls.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "accel.h"    /* ACCEL_DEFAULT_* */
#include "enforcer.h" /* reset_mech_opts, unread_mech_opts */
#include "guard.h"    /* guard_hooks_names */
#include "k8s.h"      /* K8S_NAMESPACE_MAX */
#include "options.h"
#include "paths.h"    /* PIN_DIR */
#include "target.h"   /* DEFAULT_PID_FILE */

/* ---- the table ---- */

enum {
	OPT_PID_FILE = 1000, OPT_PORTS, OPT_PIN, OPT_NO_FOLLOW, OPT_SHORT_CONN, OPT_XDP,
	OPT_XDP_SAMPLE, OPT_METRICS, OPT_MAX_UNREAD, OPT_UNREAD_BUDGET, OPT_FORCE,
	OPT_ALLOW_ROOT, OPT_ANY_PROCESS, OPT_K8S_SELECTOR, OPT_K8S_NODE, OPT_K8S_API,
	OPT_K8S_NAMESPACE, OPT_UNIT, OPT_NGINX_VARS,
	OPT_GUARD_IDLE, OPT_GUARD_HOOKS, OPT_MAX_FOLLOWED, OPT_RESETS, OPT_UNREAD_SCAN, OPT_MAX_SOCKETS,
};

/* How a value is parsed, and what it sets. */
enum opt_kind {
	K_FLAG,    /* bool field = value */
	K_STR,     /* const char *field = the argument */
	K_LIST,    /* const char *field[RUN_MAX_NAMED], count: repeatable; len: under max */
	K_PIDS,    /* int field[RUN_MAX_NAMED], count: repeatable pids */
	K_PORTS,   /* struct port_set field: a repeated list adds */
	K_SIZE,    /* uint64_t field: 64M, 512K, ...; at least min */
	K_COUNT,   /* unsigned int field: decimal 0..max */
	K_SOCKETS, /* uint32_t field: MAX_SOCKETS_MIN..MAX_SOCKETS_LIMIT */
	K_SAMPLE,  /* unsigned int field: 0 or a power of two */
	K_WORD,    /* int field: the index of one of words */
	K_LISTEN,  /* bool field (off: false), metrics_addr/len: IP:PORT */
};

struct opt_spec {
	int key;
	const char *name;
	enum opt_kind kind;
	size_t off;             /* the field in struct run_opts */
	size_t count_off;       /* K_LIST, K_PIDS: its int count */
	unsigned long min, max; /* K_SIZE: min; K_COUNT: max; K_LIST: length bound (0: none) */
	const char *what;       /* K_COUNT: "a number of seconds"; K_LIST: "interface name" */
	const char *const *words; /* K_WORD */
	int n_words;
	bool value;             /* K_FLAG */
};

/* The field's offset, and a build error unless it has type T. */
#define FIELD(f, T)                                                                  \
	.off = offsetof(struct run_opts, f) +                                        \
	       0 * sizeof(char[__builtin_types_compatible_p(                          \
				__typeof__(((struct run_opts *)0)->f), T) ? 1 : -1])
#define AS_FLAG(f, v) .kind = K_FLAG, FIELD(f, bool), .value = v
#define AS_STR(f) .kind = K_STR, FIELD(f, const char *)
#define AS_LIST(f, n, len, what_)                                                    \
	.kind = K_LIST, FIELD(f, const char *[RUN_MAX_NAMED]),                      \
	.count_off = offsetof(struct run_opts, n), .max = len, .what = what_
#define AS_PIDS(f, n)                                                                \
	.kind = K_PIDS, FIELD(f, int[RUN_MAX_NAMED]), .count_off = offsetof(struct run_opts, n)
#define AS_PORTS(f) .kind = K_PORTS, FIELD(f, struct port_set)
#define AS_SIZE(f, least) .kind = K_SIZE, FIELD(f, uint64_t), .min = least
#define AS_COUNT(f, most, what_) .kind = K_COUNT, FIELD(f, unsigned int), .max = most, .what = what_
#define AS_SECONDS(f, most) AS_COUNT(f, most, "a number of seconds")
#define AS_MESSAGES(f, most) AS_COUNT(f, most, "a count of messages")
#define AS_SOCKETS(f) .kind = K_SOCKETS, FIELD(f, uint32_t)
#define AS_SAMPLE(f) .kind = K_SAMPLE, FIELD(f, unsigned int)
#define AS_WORD(f, list)                                                             \
	.kind = K_WORD, FIELD(f, int), .words = list, .n_words = sizeof(list) / sizeof(list[0])
#define AS_LISTEN(f) .kind = K_LISTEN, FIELD(f, bool)

/* X(name, key, ARG, how, help): every option of `run`, in --help's order. */
#define RUN_OPTIONS(X) \
	X("cgroup", 'c', "PATH", AS_LIST(cgroups, n_cgroups, 0, NULL), \
	  "cgroup v2 directory to attach to (absolute, or relative to the cgroup v2 mount); " \
	  "repeatable") \
	X("unit", OPT_UNIT, "NAME", AS_LIST(units, n_units, 256, "systemd unit name"), \
	  "attach to the cgroup of this systemd unit (nginx, openresty, angie, nginx@blue; " \
	  "'.service' when it names no type), found under its slices; repeatable") \
	X("nginx-pid", 'p', "PID", AS_PIDS(pids, n_pids), \
	  "attach to the cgroup of this process; repeatable") \
	X("nginx-pid-file", OPT_PID_FILE, "FILE", AS_STR(pid_file), \
	  "attach to the cgroup of the pid in FILE (default with no target: " DEFAULT_PID_FILE ")") \
	X("ports", OPT_PORTS, "LIST", AS_PORTS(ports), \
	  "track only connections with a local or remote port in LIST, e.g. 80,8000-8100 " \
	  "(default: all ports)") \
	X("allow-root-cgroup", OPT_ALLOW_ROOT, NULL, AS_FLAG(allow_root_cgroup, true), \
	  "allow a target that is the root cgroup (every process on the host)") \
	X("any-process", OPT_ANY_PROCESS, NULL, AS_FLAG(any_process, true), \
	  "allow --nginx-pid / pid-file targets that are not nginx processes") \
	X("k8s-selector", OPT_K8S_SELECTOR, "LABELS", AS_STR(k8s_selector), \
	  "Kubernetes: attach to the pods on this node that match the label selector, " \
	  "e.g. app.kubernetes.io/name=nginx (listed, then watched: pods are attached and " \
	  "detached as they come and go; the DaemonSet's way)") \
	X("k8s-namespace", OPT_K8S_NAMESPACE, "NS[,NS...]", AS_STR(k8s_namespaces), \
	  "Kubernetes: only pods of these namespaces (default: every namespace; on a " \
	  "cluster shared by tenants, name yours)") \
	X("k8s-node", OPT_K8S_NODE, "NAME", AS_STR(k8s_node), \
	  "this node's name (default: $NODE_NAME)") \
	X("k8s-api", OPT_K8S_API, "URL", AS_STR(k8s_api), \
	  "the API server (default: the in-cluster one, from the pod's environment, " \
	  "with the service account's token and CA)") \
	X("pin", OPT_PIN, NULL, AS_FLAG(pin, true), \
	  "keep the data plane attached after the agent exits (pinned in " PIN_DIR "); " \
	  "a later 'run --pin' adopts it, 'detach' removes it") \
	X("nginx-vars", OPT_NGINX_VARS, NULL, AS_FLAG(nginx_vars, true), \
	  "answer the nginx module's $sockmap and $sockmap_upstream (a cgroup/getsockopt " \
	  "program on each attached cgroup: every getsockopt(2) there pays the kernel's " \
	  "hook, about 0.6 us, one per proxied request; off by default)") \
	X("no-follow", OPT_NO_FOLLOW, NULL, AS_FLAG(follow, false), \
	  "attach only to the named cgroups; by default the cgroups of local processes " \
	  "connected to them (upstreams, local clients) are followed and attached too") \
	X("max-followed", OPT_MAX_FOLLOWED, "N", AS_COUNT(max_followed, MAX_TARGETS, \
	  "a count of cgroups"), \
	  "attach at most N followed cgroups at once (default 32 of the 64 attach slots); " \
	  "named cgroups and pods always take a followed one's slot when none is free, and " \
	  "a followed cgroup no connection used for 30 s is released") \
	X("short-conn", OPT_SHORT_CONN, "MSGS", AS_MESSAGES(short_conn_msgs, 1000000), \
	  "don't track new connections to a server address and port whose connections " \
	  "average fewer than MSGS sends per socket (learned; 1 in 16, at most 60 a second, still sampled). Default 8; " \
	  "0: every connection (bench/run close: one-request connections paired cost more)") \
	X("xdp", OPT_XDP, "IFACE", AS_LIST(xdp_ifaces, n_xdp, 16, "interface name"), \
	  "count packets per source on IFACE with an XDP observer (native mode where the " \
	  "driver has it, else generic; always passes); repeatable") \
	X("xdp-sample", OPT_XDP_SAMPLE, "N", AS_SAMPLE(xdp_sample), \
	  "put 1 frame in N (a power of two; default 64, 0: none) into the event ring " \
	  "that 'ngx-sockmap top' shows") \
	X("max-unread", OPT_MAX_UNREAD, "SIZE", AS_SIZE(max_unread, 65536), \
	  "end a connection (both ends reset) whose reader leaves more than SIZE redirected " \
	  "bytes unread, e.g. 64M (the default), 512K; its port is then not paired again") \
	X("unread-budget", OPT_UNREAD_BUDGET, "SIZE", AS_SIZE(unread_budget, 0), \
	  "host-wide bound on unread redirected bytes: past it the largest are ended " \
	  "(default: half of tcp_mem's pressure threshold)") \
	X("max-sockets", OPT_MAX_SOCKETS, "N", AS_SOCKETS(max_sockets), \
	  "how many sockets can be accelerated at once (two per local connection); past it " \
	  "new connections use plain TCP, counted in fallbacks{no_room}. Default: from the " \
	  "host, the least of 1/16 of RAM at 4 KiB a socket, fs.file-max and twice the " \
	  "open-file limits of the targets' nginx processes (at least 16384)") \
	X("guard-hooks", OPT_GUARD_HOOKS, "HOOKS", AS_WORD(guard_hooks, guard_hooks_names), \
	  "how the guard sees splice(2) readers and MSG_OOB sends: 'fentry' (on the two " \
	  "kernel functions only tracked sockets reach; needs BPF trampolines), " \
	  "'tracepoints' (syscall tracepoints: load everywhere, but slow every syscall on " \
	  "the host while attached), 'none' (no hooks: the agent stays paused, for tests) or " \
	  "'auto' (the default: fentry if the kernel takes it, else tracepoints)") \
	X("resets", OPT_RESETS, "HOW", AS_WORD(resets, reset_mech_opts), \
	  "how the agent ends a connection that can't go on redirected: 'iter' (an iter/tcp " \
	  "program calling bpf_sock_destroy; a tracing program, which some hosts refuse), " \
	  "'sock_diag' (SOCK_DESTROY from user space: no tracing program) or 'auto' (the " \
	  "default: iter where it loads)") \
	X("unread-scan", OPT_UNREAD_SCAN, "HOW", AS_WORD(unread_scan, unread_mech_opts), \
	  "how the agent measures unread redirected bytes (gauges, --unread-budget): 'iter' " \
	  "(an iter/sockmap program), 'watch' (a map the data plane keeps and a syscall " \
	  "program reads: no tracing program) or 'auto' (the default: iter where it loads)") \
	X("guard-idle", OPT_GUARD_IDLE, "SECONDS", AS_SECONDS(guard_idle, 86400), \
	  "with tracepoint hooks: detach them after this long with no tracked socket; the " \
	  "next local connection re-attaches them and stays on TCP itself (default 30; 0: " \
	  "never detach).  fentry hooks stay attached: they cost nothing while idle") \
	X("force", OPT_FORCE, NULL, AS_FLAG(force, true), \
	  "accelerate even where the kernel self-test fails a check that can lose, corrupt " \
	  "or hang connections (for kernel developers; never in production)") \
	X("metrics", OPT_METRICS, "ADDR:PORT", AS_LISTEN(metrics), \
	  "serve Prometheus /metrics and /healthz here (default " DEFAULT_METRICS_ADDR \
	  "; ':PORT' and 'localhost:PORT' are loopback too; 'off' to disable; all " \
	  "interfaces only if you say 0.0.0.0)")

#define ARGP_ENTRY(name, key, arg, how, doc) { name, key, arg, 0, doc, 0 },
const struct argp_option run_argp_options[] = { RUN_OPTIONS(ARGP_ENTRY) { 0 } };

#define SPEC_ENTRY(name_, key_, arg, how, doc) { .key = key_, .name = name_, how },
static const struct opt_spec run_specs[] = { RUN_OPTIONS(SPEC_ENTRY) };

const struct run_opts run_opts_defaults = {
	.ports.all = true,
	.follow = true,
	/* half the slots: a host's local clients and upstreams rarely need
	 * more, and anyone can make cgroups (reconcile.h) */
	.max_followed = 32,
	/* On: with the guard's hooks, the nonce and the unread watch,
	 * pairing one-request connections costs more than TCP
	 * (docs/bench/close-all-paired), although the bare pairing of
	 * bench/breakeven (an older data plane) cost less. */
	.short_conn_msgs = ACCEL_DEFAULT_SHORT_CONN_MSGS,
	.xdp_sample = 64,
	.max_unread = ACCEL_DEFAULT_MAX_UNREAD,
	.guard_idle = 30,
	.metrics = true,
};

void run_opts_init(struct run_opts *o)
{
	char err[256];

	*o = run_opts_defaults;
	/* the default listen address, parsed like a user's (it parses) */
	parse_listen(DEFAULT_METRICS_ADDR, &o->metrics_addr, &o->metrics_addr_len, err,
		     sizeof(err));
}

static int __attribute__((format(printf, 3, 4)))
fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* "a, b, c or d" */
static void join_words(const char *const *words, int n, char *buf, size_t len)
{
	size_t at = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < n && at < len; i++)
		at += snprintf(buf + at, len - at, "%s%s", i == 0 ? "" : i == n - 1 ? " or " : ", ",
			       words[i]);
}

int run_opt_set(struct run_opts *o, int key, const char *arg, char *err, size_t errlen)
{
	const struct opt_spec *s = NULL;
	char why[256]; /* the value parsers' messages, at the length they always had */
	unsigned long long n;
	uint64_t size;
	void *field;
	int *count;
	size_t i;
	long v;

	for (i = 0; i < sizeof(run_specs) / sizeof(run_specs[0]) && !s; i++)
		if (run_specs[i].key == key)
			s = &run_specs[i];
	if (!s)
		return 1;
	field = (char *)o + s->off;
	count = (int *)((char *)o + s->count_off);
	switch (s->kind) {
	case K_FLAG:
		*(bool *)field = s->value;
		break;
	case K_STR:
		*(const char **)field = arg;
		break;
	case K_LIST:
		if (s->max && strlen(arg) >= s->max)
			return fail(err, errlen, "--%s: %s '%.40s' is longer than %lu characters",
				    s->name, s->what, arg, s->max - 1);
		if (*count >= RUN_MAX_NAMED)
			return fail(err, errlen, "too many --%s (max %d)", s->name, RUN_MAX_NAMED);
		((const char **)field)[(*count)++] = arg;
		break;
	case K_PIDS:
		v = parse_pid(arg);
		if (v < 0)
			return fail(err, errlen, "--%s: '%s' is not a process id", s->name, arg);
		if (*count >= RUN_MAX_NAMED)
			return fail(err, errlen, "too many --%s (max %d)", s->name, RUN_MAX_NAMED);
		((int *)field)[(*count)++] = v;
		break;
	case K_PORTS:
		if (parse_ports_add(arg, field, why, sizeof(why)))
			return fail(err, errlen, "--%s: %s", s->name, why);
		break;
	case K_SIZE:
		if (parse_size(arg, &size) || size < s->min)
			return s->min ? fail(err, errlen, "--%s: '%s' is not a size of %lluK or more, "
					     "e.g. 64M, 512K", s->name, arg,
					     (unsigned long long)s->min >> 10)
				      : fail(err, errlen, "--%s: '%s' is not a size, e.g. 64M, 512K",
					     s->name, arg);
		*(uint64_t *)field = size;
		break;
	case K_COUNT:
		if (parse_decimal(arg, 0, s->max, &n))
			return fail(err, errlen, "--%s: '%s' is not %s (0-%lu)", s->name, arg, s->what,
				    s->max);
		*(unsigned int *)field = n;
		break;
	case K_SOCKETS:
		if (parse_max_sockets(arg, field))
			return fail(err, errlen, "--%s: '%s' is not a number of sockets (%u-%u)", s->name,
				    arg, MAX_SOCKETS_MIN, MAX_SOCKETS_LIMIT);
		break;
	case K_SAMPLE:
		v = parse_sample_every(arg);
		if (v < 0)
			return fail(err, errlen, "--%s: '%s' is not 0 or a power of two up to 65536",
				    s->name, arg);
		*(unsigned int *)field = v;
		break;
	case K_WORD:
		v = parse_word(arg, s->words, s->n_words);
		if (v < 0) {
			join_words(s->words, s->n_words, why, sizeof(why));
			return fail(err, errlen, "--%s: '%s' is not %s", s->name, arg, why);
		}
		*(int *)field = v;
		break;
	case K_LISTEN:
		*(bool *)field = strcmp(arg, "off") != 0;
		if (*(bool *)field &&
		    parse_listen(arg, &o->metrics_addr, &o->metrics_addr_len, why, sizeof(why)))
			return fail(err, errlen, "--%s: %s", s->name, why);
		break;
	}
	return 0;
}

/* A namespace name is a DNS-1123 label (Kubernetes validation): 1 to 63
 * of [a-z0-9-], starting and ending with a letter or digit.  It goes into
 * the API's URL path as it is. */
static bool k8s_namespace_ok(const char *s, size_t n)
{
	size_t i;

	if (!n || n > K8S_NAMESPACE_MAX || s[0] == '-' || s[n - 1] == '-')
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return false;
	return true;
}

static int k8s_namespaces_check(const char *list, char *err, size_t errlen)
{
	const char *p = list, *end;
	int n = 0;

	for (;;) {
		end = p + strcspn(p, ",");
		if (!k8s_namespace_ok(p, (size_t)(end - p)))
			return fail(err, errlen,
				    "--k8s-namespace: '%.*s' is not a namespace name (a-z, 0-9 and '-', "
				    "at most %d)", (int)(end - p > 64 ? 64 : end - p), p,
				    K8S_NAMESPACE_MAX);
		if (++n > K8S_NAMESPACES_MAX)
			return fail(err, errlen, "--k8s-namespace: more than %d namespaces",
				    K8S_NAMESPACES_MAX);
		if (!*end)
			return 0;
		p = end + 1;
	}
}

int run_opts_finish(struct run_opts *o, const struct run_env *env, char *err, size_t errlen)
{
	const char *h = env->k8s_host;

	if (!o->k8s_selector)
		return o->k8s_namespaces ? fail(err, errlen, "--k8s-namespace needs --k8s-selector")
					 : 0;
	if (o->k8s_namespaces && k8s_namespaces_check(o->k8s_namespaces, err, errlen))
		return -1;
	if (!o->k8s_node)
		o->k8s_node = env->node_name;
	if (!o->k8s_node || !*o->k8s_node)
		return fail(err, errlen,
			    "--k8s-selector needs this node's name: --k8s-node NAME or $NODE_NAME");
	if (!o->k8s_api && h) {
		snprintf(o->k8s_api_buf, sizeof(o->k8s_api_buf),
			 strchr(h, ':') ? "https://[%s]:%s" : "https://%s:%s", h,
			 env->k8s_port ?: "443");
		o->k8s_api = o->k8s_api_buf;
	}
	if (!o->k8s_api)
		return fail(err, errlen, "--k8s-selector: no API server: --k8s-api URL, or run in a pod");
	return 0;
}

/* ---- values ---- */

int parse_decimal(const char *s, unsigned long long min, unsigned long long max,
		  unsigned long long *v)
{
	char *end;

	/* digits only: strtoull() takes " 30", "+30" and "-1" too */
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end || *v < min || *v > max ? -1 : 0;
}

static int parse_port(const char *s, char **end)
{
	long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtol(s, end, 10);
	if (errno || v < 1 || v > 65535)
		return -1;
	return (int)v;
}

int parse_ports(const char *s, struct port_set *set, char *err, size_t errlen)
{
	const char *p = s;
	char *end;
	int lo, hi, i;

	memset(set, 0, sizeof(*set));
	if (!*s) {
		snprintf(err, errlen, "empty port list");
		return -1;
	}
	while (*p) {
		lo = parse_port(p, &end);
		if (lo < 0)
			goto bad;
		hi = lo;
		if (*end == '-') {
			hi = parse_port(end + 1, &end);
			if (hi < 0 || hi < lo)
				goto bad;
		}
		for (i = lo; i <= hi; i++)
			set->bits[i >> 6] |= 1ULL << (i & 63);
		if (*end == ',' && end[1])
			end++;
		else if (*end)
			goto bad;
		p = end;
	}
	return 0;
bad:
	snprintf(err, errlen,
		 "bad port list '%s': want ports 1-65535 or ranges, e.g. 80,443,8000-8100", s);
	return -1;
}

int parse_ports_add(const char *s, struct port_set *set, char *err, size_t errlen)
{
	struct port_set more;
	size_t i;

	if (parse_ports(s, &more, err, errlen))
		return -1;
	if (set->all)
		memset(set, 0, sizeof(*set));
	for (i = 0; i < sizeof(set->bits) / sizeof(set->bits[0]); i++)
		set->bits[i] |= more.bits[i];
	return 0;
}

int parse_pid(const char *s)
{
	unsigned long long v;

	return parse_decimal(s, 1, INT_MAX, &v) ? -1 : (int)v;
}

int parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *len, char *err,
		 size_t errlen)
{
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	char host[64];
	const char *colon;
	char *end;
	size_t hl;
	int port;

	memset(ss, 0, sizeof(*ss));
	if (s[0] == '[') {
		colon = strstr(s, "]:");
		if (!colon)
			goto bad;
		hl = colon - s - 1;
		colon++;
		if (hl >= sizeof(host))
			goto bad;
		memcpy(host, s + 1, hl);
	} else {
		colon = strrchr(s, ':');
		if (!colon || strchr(s, ':') != colon)
			goto bad;
		hl = colon - s;
		if (hl >= sizeof(host))
			goto bad;
		memcpy(host, s, hl);
	}
	host[hl] = 0;
	/* ":PORT" and "localhost:PORT" as other exporters take them, but to
	 * loopback: all interfaces only when asked by address (0.0.0.0, ::);
	 * no other name is looked up */
	if (!host[0] || !strcmp(host, "localhost"))
		snprintf(host, sizeof(host), "127.0.0.1");
	port = parse_port(colon + 1, &end);
	if (port < 0 || *end)
		goto bad;
	if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons(port);
		*len = sizeof(*a4);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(port);
		*len = sizeof(*a6);
		return 0;
	}
bad:
	snprintf(err, errlen,
		 "bad listen address '%s': want IP:PORT or :PORT, e.g. 127.0.0.1:10435, "
		 "[::1]:10435, :10435", s);
	return -1;
}

long parse_sample_every(const char *s)
{
	unsigned long long v;

	if (parse_decimal(s, 0, 65536, &v) || (v & (v - 1)))
		return -1;
	return (long)v;
}

int parse_size(const char *s, uint64_t *bytes)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case 'K': case 'k': shift = 10; end++; break;
	case 'M': case 'm': shift = 20; end++; break;
	case 'G': case 'g': shift = 30; end++; break;
	}
	if (*end == 'i')
		end++; /* "64Mi" */
	if (*end == 'B')
		end++; /* "64MB", "64MiB": binary all the same */
	if (*end || v > (1ULL << 40) >> shift)
		return -1;
	*bytes = (uint64_t)v << shift;
	return 0;
}

int parse_word(const char *s, const char *const *words, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (words[i] && !strcmp(s, words[i]))
			return i;
	return -1;
}

int parse_max_sockets(const char *s, uint32_t *n)
{
	unsigned long long v;

	if (parse_decimal(s, MAX_SOCKETS_MIN, MAX_SOCKETS_LIMIT, &v))
		return -1;
	*n = (uint32_t)v;
	return 0;
}

/* a at most b, where b is known (not 0) */
static uint64_t bound(uint64_t a, bool known, uint64_t b)
{
	return known && b < a ? b : a;
}

uint32_t max_sockets_default(const struct host_limits *h)
{
	uint64_t n = MAX_SOCKETS_LIMIT, p = 1;

	if (!h->mem_bytes && !h->file_max && !h->nginx_files)
		return MAX_SOCKETS_FLOOR; /* nothing known: not the largest */
	n = bound(n, h->mem_bytes, h->mem_bytes / 16 / SOCKET_COST_BYTES);
	n = bound(n, h->file_max, h->file_max);
	n = bound(n, h->nginx_files, h->nginx_files * 2);
	while (p < n)
		p <<= 1;
	if (p < MAX_SOCKETS_FLOOR)
		p = MAX_SOCKETS_FLOOR;
	return p > MAX_SOCKETS_LIMIT ? MAX_SOCKETS_LIMIT : (uint32_t)p;
}

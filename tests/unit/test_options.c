// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* run's option table (every kind of value, its defaults, its messages),
 * the value parsers, and the cgroup path resolver's refusals. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/stat.h>
#include <errno.h>
#include <unistd.h>
#include "check.h"
#include <string.h>
#include "enforcer.h"
#include "guard.h"
#include "k8s.h"
#include "options.h"
#include "target.h"


static struct port_set set;
static char err[256];

static int ports_ok(const char *s)
{
	return parse_ports(s, &set, err, sizeof(err)) == 0;
}

static void test_ports(void)
{
	CHECK(ports_ok("80"), "80");
	CHECK(port_set_has(&set, 80) && !port_set_has(&set, 81) && !set.all, "only 80");
	CHECK(ports_ok("80,443,8000-8002"), "list and range");
	CHECK(port_set_has(&set, 443) && port_set_has(&set, 8000) && port_set_has(&set, 8002) &&
		      !port_set_has(&set, 8003) && !port_set_has(&set, 7999), "range bounds inclusive");
	CHECK(ports_ok("1,65535"), "extremes");
	CHECK(port_set_has(&set, 1) && port_set_has(&set, 65535), "1 and 65535 set");
	CHECK(ports_ok("0-0") == 0, "0 refused");
	CHECK(!ports_ok("0"), "0 refused");
	CHECK(!ports_ok("65536"), "65536 refused");
	CHECK(!ports_ok("70000"), "70000 refused");
	CHECK(!ports_ok("abc"), "abc refused");
	CHECK(strstr(err, "abc") != NULL, "message names the input: %s", err);
	CHECK(!ports_ok(""), "empty refused");
	CHECK(!ports_ok("80,"), "trailing comma refused");
	CHECK(!ports_ok(",80"), "leading comma refused");
	CHECK(!ports_ok("90-80"), "reversed range refused");
	CHECK(!ports_ok("80-"), "open range refused");
	CHECK(!ports_ok("-5"), "negative refused");
	CHECK(!ports_ok("80 443"), "space refused");
	CHECK(!ports_ok("99999999999999999999"), "overflow refused");
}

static void test_pid(void)
{
	CHECK(parse_pid("1") == 1, "1");
	CHECK(parse_pid("4194304") == 4194304, "pid_max");
	CHECK(parse_pid("0") == -1, "0 refused");
	CHECK(parse_pid("-3") == -1, "negative refused");
	CHECK(parse_pid("12x") == -1, "junk refused");
	CHECK(parse_pid("") == -1, "empty refused");
	CHECK(parse_pid("99999999999") == -1, "overflow refused");
}

static void test_listen(void)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
	socklen_t len;

	CHECK(parse_listen("127.0.0.1:9435", &ss, &len, err, sizeof(err)) == 0, "v4");
	CHECK(a4->sin_family == AF_INET && ntohs(a4->sin_port) == 9435 &&
		      a4->sin_addr.s_addr == htonl(INADDR_LOOPBACK) && len == sizeof(*a4),
	      "v4 fields");
	CHECK(parse_listen("[::1]:80", &ss, &len, err, sizeof(err)) == 0, "v6");
	CHECK(a6->sin6_family == AF_INET6 && ntohs(a6->sin6_port) == 80 &&
		      IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr), "v6 fields");
	CHECK(parse_listen("0.0.0.0:1", &ss, &len, err, sizeof(err)) == 0, "any, when asked");
	CHECK(parse_listen("127.0.0.1", &ss, &len, err, sizeof(err)) < 0, "no port refused");
	CHECK(parse_listen("127.0.0.1:0", &ss, &len, err, sizeof(err)) < 0, "port 0 refused");
	CHECK(parse_listen("127.0.0.1:65536", &ss, &len, err, sizeof(err)) < 0, "65536 refused");
	CHECK(parse_listen("localhost:9435", &ss, &len, err, sizeof(err)) == 0 &&
		      a4->sin_family == AF_INET && a4->sin_addr.s_addr == htonl(INADDR_LOOPBACK) &&
		      ntohs(a4->sin_port) == 9435, "localhost: loopback");
	CHECK(parse_listen(":9436", &ss, &len, err, sizeof(err)) == 0 &&
		      a4->sin_family == AF_INET && a4->sin_addr.s_addr == htonl(INADDR_LOOPBACK) &&
		      ntohs(a4->sin_port) == 9436, ":PORT: loopback, not every interface");
	CHECK(parse_listen("example.test:9435", &ss, &len, err, sizeof(err)) < 0,
	      "other names refused (never looked up)");
	CHECK(parse_listen("::1:9435", &ss, &len, err, sizeof(err)) < 0, "bare v6 refused");
	CHECK(parse_listen("[::1]9435", &ss, &len, err, sizeof(err)) < 0, "missing colon refused");
	CHECK(strstr(err, "[::1]9435") != NULL, "message names the input: %s", err);
}

static void test_resolve_refusals(void)
{
	struct cg_target t;
	char mnt[4096];

	if (cg2_mount(mnt, sizeof(mnt))) {
		printf("no cgroup v2 mount: resolver checks skipped\n");
		return;
	}
	CHECK(cg2_resolve(mnt, ".", &t, err, sizeof(err)) == 0, "mount root resolves: %s", err);
	CHECK(cg2_resolve(mnt, "/tmp", &t, err, sizeof(err)) < 0 && strstr(err, "not a cgroup v2"),
	      "/tmp refused: %s", err);
	CHECK(cg2_resolve(mnt, "/etc/hostname", &t, err, sizeof(err)) < 0 &&
		      strstr(err, "not a directory"), "file refused: %s", err);
	CHECK(cg2_resolve(mnt, "no/such/cgroup", &t, err, sizeof(err)) < 0 && strstr(err, mnt),
	      "missing relative path names the full path: %s", err);
}

static void test_sample_every(void)
{
	CHECK(parse_sample_every("0") == 0, "0: no samples");
	CHECK(parse_sample_every("1") == 1, "1: every frame");
	CHECK(parse_sample_every("64") == 64, "64");
	CHECK(parse_sample_every("65536") == 65536, "65536: the largest");
	CHECK(parse_sample_every("48") == -1, "48 refused: not a power of two");
	CHECK(parse_sample_every("131072") == -1, "131072 refused: too large");
	CHECK(parse_sample_every("-64") == -1, "negative refused");
	CHECK(parse_sample_every("") == -1 && parse_sample_every("64k") == -1, "junk refused");
}

/* --ports given twice: both lists count (it kept only the last) */
static void test_ports_repeated(void)
{
	static struct port_set all = { .all = true };

	CHECK(!parse_ports_add("80", &all, err, sizeof(err)), "first --ports");
	CHECK(!all.all && port_set_has(&all, 80) && !port_set_has(&all, 443), "first list only");
	CHECK(!parse_ports_add("443,8000-8001", &all, err, sizeof(err)), "second --ports");
	CHECK(port_set_has(&all, 80) && port_set_has(&all, 443) && port_set_has(&all, 8001) &&
		      !port_set_has(&all, 81),
	      "both lists count");
	CHECK(parse_ports_add("0", &all, err, sizeof(err)) && port_set_has(&all, 80),
	      "a bad second list is refused and changes nothing");
}

/* Nested named cgroups: the ancestor alone is attached (its program runs
 * for the descendant's sockets too; twice counted every decision twice). */
static void test_nested_targets(void)
{
	const char *names[3];
	struct target_names o = { .cgroups = names, .n_cgroups = 3 };
	struct cg_target list[MAX_TARGETS];
	char mnt[4096], outer[4200], inner[4300];
	int n;

	if (cg2_mount(mnt, sizeof(mnt)))
		return;
	snprintf(outer, sizeof(outer), "%s/ngx-sockmap-unit.%d", mnt, getpid());
	snprintf(inner, sizeof(inner), "%s/inner", outer);
	if (mkdir(outer, 0755) || mkdir(inner, 0755)) {
		CHECK(0, "mkdir %s: %s", inner, strerror(errno));
		rmdir(outer);
		return;
	}
	names[0] = inner;
	names[1] = outer;
	names[2] = inner;
	CHECK(targets_resolve(&o, mnt, list, &n, err, sizeof(err)) == 0, "nested: %s", err);
	CHECK(n == 1 && !strcmp(list[0].path, outer), "nested: only the ancestor: %d, %s", n,
	      n ? list[0].path : "-");
	rmdir(inner);
	rmdir(outer);
}

static void test_sizes(void)
{
	uint64_t v = 0;

	CHECK(!parse_size("64M", &v) && v == 64ULL << 20, "64M: %llu", (unsigned long long)v);
	CHECK(!parse_size("512K", &v) && v == 512ULL << 10, "512K");
	CHECK(!parse_size("1G", &v) && v == 1ULL << 30, "1G");
	CHECK(!parse_size("64MiB", &v) && v == 64ULL << 20, "64MiB");
	CHECK(!parse_size("1048576", &v) && v == 1048576, "plain bytes");
	CHECK(!parse_size("0", &v) && v == 0, "0");
	CHECK(parse_size("", &v), "empty refused");
	CHECK(parse_size("-1M", &v), "negative refused");
	CHECK(parse_size("64X", &v), "unknown unit refused");
	CHECK(parse_size("2048G", &v), "over 1 TiB refused");
	CHECK(parse_size("M", &v), "no number refused");
}

static void test_max_sockets(void)
{
	uint32_t n = 0;

	CHECK(!parse_max_sockets("131072", &n) && n == 131072, "131072: %u", n);
	CHECK(!parse_max_sockets("2", &n) && n == 2, "2: one pair, the least");
	CHECK(!parse_max_sockets("16777216", &n) && n == MAX_SOCKETS_LIMIT, "the limit itself");
	CHECK(parse_max_sockets("16777217", &n), "past the limit refused");
	CHECK(parse_max_sockets("1", &n) && parse_max_sockets("0", &n), "0 and 1 refused");
	CHECK(parse_max_sockets("-5", &n) && parse_max_sockets("", &n), "negative, empty refused");
	CHECK(parse_max_sockets("64k", &n) && parse_max_sockets("1e6", &n), "junk refused");
	CHECK(parse_max_sockets("99999999999999999999999", &n), "overflow refused");
}

/* The default --max-sockets: the least of what the host bounds, a power of
 * two, never below the floor nor past the limit. */
static void test_max_sockets_default(void)
{
	struct host_limits h = {};
	const uint64_t gib = 1ULL << 30;

	CHECK(max_sockets_default(&h) == MAX_SOCKETS_FLOOR, "nothing known: the floor");
	h.mem_bytes = 24 * gib; /* 24 GiB / 16 / 4 KiB = 393216 -> 524288 */
	CHECK(max_sockets_default(&h) == 524288, "memory alone: %u", max_sockets_default(&h));
	h.file_max = 100000;
	CHECK(max_sockets_default(&h) == 131072, "file-max bounds it: %u", max_sockets_default(&h));
	h.nginx_files = 3 * 20000; /* master + 2 workers at 20000: 120000 sockets */
	CHECK(max_sockets_default(&h) == 131072, "nginx: twice its files, rounded up: %u",
	      max_sockets_default(&h));
	h.nginx_files = 3 * 1024;
	CHECK(max_sockets_default(&h) == MAX_SOCKETS_FLOOR, "a small nginx: the floor: %u",
	      max_sockets_default(&h));
	h = (struct host_limits){ .mem_bytes = 512ULL << 20 };
	CHECK(max_sockets_default(&h) == MAX_SOCKETS_FLOOR, "512 MiB of RAM: the floor: %u",
	      max_sockets_default(&h));
	h = (struct host_limits){ .mem_bytes = 1ULL << 50, .file_max = 1ULL << 40 };
	CHECK(max_sockets_default(&h) == MAX_SOCKETS_LIMIT, "a huge host: the limit: %u",
	      max_sockets_default(&h));
	h = (struct host_limits){ .mem_bytes = 1024 };
	CHECK(max_sockets_default(&h) == MAX_SOCKETS_FLOOR, "absurdly little RAM: the floor");
}

/* run's target policy: not the root cgroup, not a process that is not
 * nginx, unless the user says so. */
static void test_target_policy(void)
{
	struct target_names o;
	struct cg_target list[MAX_TARGETS];
	const char *cgroups[1];
	char mnt[4096];
	int n, pids[1];

	if (cg2_mount(mnt, sizeof(mnt)))
		return;
	cgroups[0] = mnt;
	o = (struct target_names){ .cgroups = cgroups, .n_cgroups = 1 };
	CHECK(targets_resolve(&o, mnt, list, &n, err, sizeof(err)) < 0 && strstr(err, "root cgroup") &&
		      strstr(err, "--allow-root-cgroup"),
	      "root cgroup refused: %s", err);
	o.policy.allow_root_cgroup = true;
	CHECK(targets_resolve(&o, mnt, list, &n, err, sizeof(err)) == 0 && n == 1,
	      "root cgroup with --allow-root-cgroup: %s", err);
	/* this test process is not nginx */
	pids[0] = getpid();
	o = (struct target_names){ .pids = pids, .n_pids = 1 };
	o.policy.allow_root_cgroup = true; /* the test may run in the root cgroup */
	CHECK(targets_resolve(&o, mnt, list, &n, err, sizeof(err)) < 0 && strstr(err, "not nginx") &&
		      strstr(err, "--any-process"),
	      "a process that is not nginx refused: %s", err);
	o.policy.any_process = true;
	CHECK(targets_resolve(&o, mnt, list, &n, err, sizeof(err)) == 0,
	      "with --any-process: %s", err);
}

/* ---- the option table ---- */

static const struct argp_option *opt_named(const char *name)
{
	const struct argp_option *a;

	for (a = run_argp_options; a->name || a->key; a++)
		if (a->name && !strcmp(a->name, name))
			return a;
	return NULL;
}

/* --NAME ARG into o, as argp hands it over: 0, -1 (message in err), 1 */
static int opt_set(struct run_opts *o, const char *name, const char *arg)
{
	const struct argp_option *a = opt_named(name);

	err[0] = 0;
	return a ? run_opt_set(o, a->key, arg, err, sizeof(err)) : 99;
}

/* opt_set() refuses with exactly this message */
#define REFUSED(o, name, arg, msg)                                                  \
	CHECK(opt_set(o, name, arg) == -1 && !strcmp(err, msg), "--%s %s: '%s', want '%s'", name, \
	      arg, err, msg)

static void test_table_defaults(void)
{
	static struct run_opts o;
	const struct sockaddr_in *a = (const void *)&o.metrics_addr;
	const struct argp_option *opt;
	int n = 0;

	memset(&o, 0xff, sizeof(o));
	run_opts_init(&o);
	CHECK(o.ports.all && o.follow && o.metrics && !o.pin && !o.force && !o.n_cgroups && !o.n_units &&
		      !o.n_pids && !o.n_xdp && !o.pid_file && !o.k8s_selector,
	      "flags and lists start as the defaults");
	CHECK(o.xdp_sample == 64 && o.max_unread == 64ULL << 20 && o.guard_idle == 30 &&
		      o.short_conn_msgs == 8 && o.max_sockets == 0 && o.unread_budget == 0 &&
		      o.max_followed == 32,
	      "values start as the defaults");
	CHECK(o.guard_hooks == 0 && o.resets == 0 && o.unread_scan == 0, "every choice: auto");
	CHECK(a->sin_family == AF_INET && ntohs(a->sin_port) == 10435 &&
		      a->sin_addr.s_addr == htonl(INADDR_LOOPBACK) && o.metrics_addr_len == sizeof(*a),
	      "metrics on " DEFAULT_METRICS_ADDR);
	for (opt = run_argp_options; opt->name; opt++, n++)
		CHECK(opt_set(&o, opt->name, opt->arg ? "x" : NULL) != 1,
		      "--%s is in argp's table but not the parser's", opt->name);
	CHECK(n == 27, "27 options: %d", n);
	CHECK(run_opt_set(&o, 'v', NULL, err, sizeof(err)) == 1, "-v is not run's own: common");
}

static void test_table_values(void)
{
	static struct run_opts o;
	char many[8];
	int i;

	run_opts_init(&o);
	CHECK(!opt_set(&o, "cgroup", "/a") && !opt_set(&o, "cgroup", "b") && o.n_cgroups == 2 &&
		      !strcmp(o.cgroups[1], "b"), "--cgroup repeats");
	CHECK(!opt_set(&o, "unit", "openresty") && !opt_set(&o, "unit", "nginx@blue") &&
		      o.n_units == 2 && !strcmp(o.units[1], "nginx@blue"), "--unit repeats");
	CHECK(!opt_set(&o, "nginx-pid", "42") && o.n_pids == 1 && o.pids[0] == 42, "--nginx-pid");
	CHECK(!opt_set(&o, "nginx-pid-file", "/run/x.pid") && !strcmp(o.pid_file, "/run/x.pid"),
	      "--nginx-pid-file");
	CHECK(!opt_set(&o, "ports", "80") && !opt_set(&o, "ports", "443") && !o.ports.all &&
		      port_set_has(&o.ports, 80) && port_set_has(&o.ports, 443), "--ports adds");
	CHECK(!opt_set(&o, "pin", NULL) && o.pin, "--pin");
	CHECK(!opt_set(&o, "no-follow", NULL) && !o.follow, "--no-follow clears follow");
	CHECK(!opt_set(&o, "force", NULL) && !opt_set(&o, "allow-root-cgroup", NULL) &&
		      !opt_set(&o, "any-process", NULL) && o.force && o.allow_root_cgroup && o.any_process,
	      "the other flags");
	CHECK(!opt_set(&o, "short-conn", "5") && o.short_conn_msgs == 5, "--short-conn");
	CHECK(!opt_set(&o, "short-conn", "1000000") && o.short_conn_msgs == 1000000,
	      "--short-conn at its bound");
	CHECK(!opt_set(&o, "guard-idle", "0") && o.guard_idle == 0, "--guard-idle 0: never");
	CHECK(!opt_set(&o, "max-followed", "64") && o.max_followed == 64, "--max-followed 64");
	CHECK(!opt_set(&o, "xdp", "eth0") && !opt_set(&o, "xdp", "abcdefghijklmno") && o.n_xdp == 2,
	      "--xdp: up to 15 characters");
	CHECK(!opt_set(&o, "xdp-sample", "0") && o.xdp_sample == 0, "--xdp-sample 0");
	CHECK(!opt_set(&o, "max-unread", "64K") && o.max_unread == 65536, "--max-unread 64K");
	CHECK(!opt_set(&o, "unread-budget", "1K") && o.unread_budget == 1024,
	      "--unread-budget has no least");
	CHECK(!opt_set(&o, "max-sockets", "2") && o.max_sockets == 2, "--max-sockets");
	CHECK(!opt_set(&o, "guard-hooks", "tracepoints") && o.guard_hooks == GUARD_HOOKS_TRACEPOINTS,
	      "--guard-hooks");
	CHECK(!opt_set(&o, "resets", "sock_diag") && o.resets == RESETS_SOCK_DIAG, "--resets");
	CHECK(!opt_set(&o, "unread-scan", "watch") && o.unread_scan == UNREAD_WATCH, "--unread-scan");
	CHECK(!opt_set(&o, "metrics", "[::1]:99") && o.metrics &&
		      o.metrics_addr.ss_family == AF_INET6, "--metrics");
	CHECK(!opt_set(&o, "metrics", "off") && !o.metrics, "--metrics off");
	CHECK(!opt_set(&o, "k8s-selector", "app=x") && !opt_set(&o, "k8s-node", "n") &&
		      !opt_set(&o, "k8s-api", "https://a") && !strcmp(o.k8s_api, "https://a"),
	      "the k8s options");
	run_opts_init(&o);
	for (i = 0; i < RUN_MAX_NAMED; i++) {
		snprintf(many, sizeof(many), "e%d", i);
		opt_set(&o, "xdp", many);
		opt_set(&o, "nginx-pid", "7");
		opt_set(&o, "cgroup", "c");
	}
	CHECK(o.n_pids == RUN_MAX_NAMED && o.n_cgroups == RUN_MAX_NAMED && o.n_xdp == RUN_MAX_NAMED,
	      "64 of each");
	REFUSED(&o, "xdp", "e64", "too many --xdp (max 64)");
	REFUSED(&o, "cgroup", "c", "too many --cgroup (max 64)");
	REFUSED(&o, "nginx-pid", "7", "too many --nginx-pid (max 64)");
	REFUSED(&o, "nginx-pid", "x", "--nginx-pid: 'x' is not a process id");
}

/* The messages cli_bad_input.sh and users see, to the letter. */
static void test_table_refusals(void)
{
	static struct run_opts o;

	run_opts_init(&o);
	REFUSED(&o, "nginx-pid", "abc", "--nginx-pid: 'abc' is not a process id");
	REFUSED(&o, "ports", "0",
		"--ports: bad port list '0': want ports 1-65535 or ranges, e.g. 80,443,8000-8100");
	REFUSED(&o, "xdp", "abcdefghijklmnop",
		"--xdp: interface name 'abcdefghijklmnop' is longer than 15 characters");
	REFUSED(&o, "metrics", "bogus",
		"--metrics: bad listen address 'bogus': want IP:PORT or :PORT, e.g. 127.0.0.1:10435, "
		"[::1]:10435, :10435");
	REFUSED(&o, "max-unread", "1K", "--max-unread: '1K' is not a size of 64K or more, e.g. 64M, 512K");
	REFUSED(&o, "unread-budget", "x", "--unread-budget: 'x' is not a size, e.g. 64M, 512K");
	REFUSED(&o, "max-unread", "32K",
		"--max-unread: '32K' is not a size of 64K or more, e.g. 64M, 512K");
	/* digits only, as a count is written */
	REFUSED(&o, "guard-idle", " 30", "--guard-idle: ' 30' is not a number of seconds (0-86400)");
	REFUSED(&o, "guard-idle", "+30", "--guard-idle: '+30' is not a number of seconds (0-86400)");
	REFUSED(&o, "short-conn", "-1", "--short-conn: '-1' is not a count of messages (0-1000000)");
	REFUSED(&o, "short-conn", "99999999999999999999999",
		"--short-conn: '99999999999999999999999' is not a count of messages (0-1000000)");
	REFUSED(&o, "max-sockets", "1", "--max-sockets: '1' is not a number of sockets (2-16777216)");
	REFUSED(&o, "xdp-sample", "3", "--xdp-sample: '3' is not 0 or a power of two up to 65536");
	REFUSED(&o, "guard-idle", "86401",
		"--guard-idle: '86401' is not a number of seconds (0-86400)");
	REFUSED(&o, "guard-idle", "", "--guard-idle: '' is not a number of seconds (0-86400)");
	REFUSED(&o, "max-followed", "65", "--max-followed: '65' is not a count of cgroups (0-64)");
	REFUSED(&o, "short-conn", "x", "--short-conn: 'x' is not a count of messages (0-1000000)");
	REFUSED(&o, "guard-hooks", "kprobe",
		"--guard-hooks: 'kprobe' is not auto, fentry, tracepoints or none");
	REFUSED(&o, "resets", "bpf", "--resets: 'bpf' is not auto, iter or sock_diag");
	REFUSED(&o, "unread-scan", "poll", "--unread-scan: 'poll' is not auto, iter or watch");
	CHECK(o.max_unread == 64ULL << 20 && o.guard_idle == 30 && o.guard_hooks == 0,
	      "a refused value changes nothing");
}

/* The k8s options' defaults from the environment, and what they need. */
static void test_table_finish(void)
{
	static struct run_opts o;
	struct run_env env = {};

	run_opts_init(&o);
	CHECK(!run_opts_finish(&o, &env, err, sizeof(err)), "no selector: nothing needed");
	opt_set(&o, "k8s-selector", "app=x");
	CHECK(run_opts_finish(&o, &env, err, sizeof(err)) == -1 &&
		      !strcmp(err, "--k8s-selector needs this node's name: --k8s-node NAME or $NODE_NAME"),
	      "no node: %s", err);
	o.k8s_node = NULL;
	env.node_name = "";
	CHECK(run_opts_finish(&o, &env, err, sizeof(err)) == -1, "an empty $NODE_NAME is none");
	o.k8s_node = NULL;
	env.node_name = "node-1";
	CHECK(run_opts_finish(&o, &env, err, sizeof(err)) == -1 &&
		      !strcmp(err, "--k8s-selector: no API server: --k8s-api URL, or run in a pod"),
	      "no API server: %s", err);
	CHECK(!strcmp(o.k8s_node, "node-1"), "$NODE_NAME: %s", o.k8s_node);
	env.k8s_host = "10.0.0.1";
	CHECK(!run_opts_finish(&o, &env, err, sizeof(err)) && !strcmp(o.k8s_api, "https://10.0.0.1:443"),
	      "in a pod: %s", o.k8s_api);
	run_opts_init(&o);
	opt_set(&o, "k8s-selector", "app=x");
	opt_set(&o, "k8s-node", "given");
	env.k8s_host = "fd00::1";
	env.k8s_port = "6443";
	CHECK(!run_opts_finish(&o, &env, err, sizeof(err)) && !strcmp(o.k8s_node, "given") &&
		      !strcmp(o.k8s_api, "https://[fd00::1]:6443"),
	      "IPv6 API server, --k8s-node wins: %s", o.k8s_api);
	opt_set(&o, "k8s-api", "https://api");
	CHECK(!run_opts_finish(&o, &env, err, sizeof(err)) && !strcmp(o.k8s_api, "https://api"),
	      "--k8s-api wins");
}

/* --k8s-namespace: names that go into the API's path as they are, so
 * nothing but a namespace name is taken, and only with a selector. */
static void test_k8s_namespace(void)
{
	static struct run_opts o;
	struct run_env env = { .node_name = "n", .k8s_host = "10.0.0.1" };
	static const char *const bad[] = {
		"", "web,", ",web", "Web", "a/b", "../x", "a b", "-a", "a-", "web,,shop",
		"a%2fb", "x123456789x123456789x123456789x123456789x123456789x123456789x1234",
	};
	char many[200] = "n0";
	size_t i;

	run_opts_init(&o);
	opt_set(&o, "k8s-namespace", "web");
	CHECK(run_opts_finish(&o, &env, err, sizeof(err)) == -1 &&
		      !strcmp(err, "--k8s-namespace needs --k8s-selector"),
	      "no selector: %s", err);
	opt_set(&o, "k8s-selector", "app=x");
	CHECK(!run_opts_finish(&o, &env, err, sizeof(err)), "one namespace: %s", err);
	opt_set(&o, "k8s-namespace", "web,shop-2,a");
	CHECK(!run_opts_finish(&o, &env, err, sizeof(err)), "a list: %s", err);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		opt_set(&o, "k8s-namespace", bad[i]);
		CHECK(run_opts_finish(&o, &env, err, sizeof(err)) == -1 &&
			      !strncmp(err, "--k8s-namespace: '", 18),
		      "'%s' refused: %s", bad[i], err);
	}
	for (i = 1; i <= K8S_NAMESPACES_MAX; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many), ",n%zu", i);
	opt_set(&o, "k8s-namespace", many);
	CHECK(run_opts_finish(&o, &env, err, sizeof(err)) == -1 &&
		      !strcmp(err, "--k8s-namespace: more than 16 namespaces"),
	      "17 namespaces: %s", err);
}

int main(void)
{
	test_sizes();
	test_max_sockets();
	test_max_sockets_default();
	test_nested_targets();
	test_ports_repeated();
	test_target_policy();
	test_table_defaults();
	test_table_values();
	test_table_refusals();
	test_table_finish();
	test_k8s_namespace();
	test_ports();
	test_pid();
	test_sample_every();
	test_listen();
	test_resolve_refusals();
	return CHECK_SUMMARY();
}

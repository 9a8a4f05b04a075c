// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Parsing of --ports and pids, and the cgroup path resolver's refusals. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/stat.h>
#include <errno.h>
#include <unistd.h>
#include "check.h"
#include <string.h>
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
	CHECK(parse_listen("localhost:9435", &ss, &len, err, sizeof(err)) < 0, "names refused");
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
	static struct run_opts o;
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
	memset(&o, 0, sizeof(o));
	o.cgroups[0] = inner;
	o.cgroups[1] = outer;
	o.cgroups[2] = inner;
	o.n_cgroups = 3;
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
	static struct run_opts o;
	struct cg_target list[MAX_TARGETS];
	char mnt[4096];
	int n;

	if (cg2_mount(mnt, sizeof(mnt)))
		return;
	memset(&o, 0, sizeof(o));
	o.cgroups[0] = mnt;
	o.n_cgroups = 1;
	CHECK(targets_resolve(&o, mnt, list, &n, err, sizeof(err)) < 0 && strstr(err, "root cgroup") &&
		      strstr(err, "--allow-root-cgroup"),
	      "root cgroup refused: %s", err);
	o.allow_root_cgroup = true;
	CHECK(targets_resolve(&o, mnt, list, &n, err, sizeof(err)) == 0 && n == 1,
	      "root cgroup with --allow-root-cgroup: %s", err);
	/* this test process is not nginx */
	memset(&o, 0, sizeof(o));
	o.pids[0] = getpid();
	o.n_pids = 1;
	o.allow_root_cgroup = true; /* the test may run in the root cgroup */
	CHECK(targets_resolve(&o, mnt, list, &n, err, sizeof(err)) < 0 && strstr(err, "not nginx") &&
		      strstr(err, "--any-process"),
	      "a process that is not nginx refused: %s", err);
	o.any_process = true;
	CHECK(targets_resolve(&o, mnt, list, &n, err, sizeof(err)) == 0,
	      "with --any-process: %s", err);
}

int main(void)
{
	test_sizes();
	test_max_sockets();
	test_max_sockets_default();
	test_nested_targets();
	test_ports_repeated();
	test_target_policy();
	test_ports();
	test_pid();
	test_sample_every();
	test_listen();
	test_resolve_refusals();
	return CHECK_SUMMARY();
}

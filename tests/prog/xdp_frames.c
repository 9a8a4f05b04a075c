// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp_count through BPF_PROG_TEST_RUN with crafted frames: IPv4, IPv6,
 * VLAN, non-IP, truncated at every header byte, malformed.  Every frame
 * must be passed, counted once under the right kind, and IP sources
 * counted exactly.  Needs root (loads BPF).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include "../unit/check.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "telemetry.h"
#include "telemetry.skel.h"


static struct telemetry_bpf *skel;
static __u64 want_pkts[FK__MAX], want_bytes[FK__MAX];

/* Run one frame `repeat` times; it must come back XDP_PASS. */
static void run(const void *frame, size_t len, int repeat, enum frame_kind kind, const char *what)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = len, .repeat = repeat);
	int err = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.xdp_count), &o);

	if (err && errno == EINVAL && len < 14) {
		/* the kernel refuses XDP test frames shorter than ETH_HLEN
		 * (net/bpf/test_run.c); a NIC can't deliver them either */
		return;
	}
	CHECK(!err, "%s: test run failed: %s", what, strerror(errno));
	CHECK(o.retval == XDP_PASS, "%s: verdict %u, want XDP_PASS", what, o.retval);
	if (!err) {
		want_pkts[kind] += repeat;
		want_bytes[kind] += (__u64)repeat * len;
	}
}

static size_t eth(unsigned char *f, __u16 proto)
{
	memset(f, 0, 14);
	memcpy(f, "\x02\0\0\0\0\x01\x02\0\0\0\0\x02", 12);
	f[12] = proto >> 8;
	f[13] = proto & 0xff;
	return 14;
}

static size_t ipv4(unsigned char *f, const char *src, int ihl, int version)
{
	size_t off = eth(f, 0x0800);
	unsigned char *ip = f + off;

	memset(ip, 0, 60);
	ip[0] = (version << 4) | ihl;
	ip[8] = 64;
	ip[9] = 17;
	inet_pton(AF_INET, src, ip + 12);
	inet_pton(AF_INET, "10.9.9.9", ip + 16);
	return off + ihl * 4 + 8;
}

static size_t ipv6(unsigned char *f, const char *src)
{
	size_t off = eth(f, 0x86DD);
	unsigned char *ip = f + off;

	memset(ip, 0, 48);
	ip[0] = 0x60;
	ip[6] = 17;
	ip[7] = 64;
	inet_pton(AF_INET6, src, ip + 8);
	inet_pton(AF_INET6, "2001:db8::99", ip + 24);
	return off + 40 + 8;
}

static void sum_source(const char *addr, int v6, __u64 *pkts, __u64 *bytes)
{
	int ncpu = libbpf_num_possible_cpus(), i;
	struct src_counters per[ncpu];
	struct src_key k = { 0 };

	*pkts = *bytes = 0;
	if (v6) {
		inet_pton(AF_INET6, addr, k.addr);
	} else {
		k.addr[2] = htonl(0xffff);
		inet_pton(AF_INET, addr, &k.addr[3]);
	}
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.src_stats), &k, per))
		return;
	for (i = 0; i < ncpu; i++) {
		*pkts += per[i].packets;
		*bytes += per[i].bytes;
	}
}

int main(void)
{
	static const char *kinds[FK__MAX] = { "ipv4", "ipv6", "vlan", "non_ip", "truncated",
					      "malformed" };
	unsigned char f[256];
	size_t len, cut;
	__u64 p, b;
	int ncpu, i, k;

	skel = telemetry_bpf__open_and_load();
	if (!skel) {
		printf("loading telemetry.bpf.o failed: %s (root?)\n", strerror(errno));
		return 2;
	}

	len = ipv4(f, "10.1.2.3", 5, 4);
	run(f, len, 5, FK_IPV4, "ipv4 10.1.2.3 x5");
	len = ipv4(f, "10.1.2.4", 6, 4); /* with an option word */
	run(f, len, 2, FK_IPV4, "ipv4 with options x2");
	len = ipv6(f, "2001:db8::7");
	run(f, len, 3, FK_IPV6, "ipv6 2001:db8::7 x3");

	eth(f, 0x8100); /* 802.1Q tag, then IPv4: passed, not parsed */
	memset(f + 14, 0, 50);
	f[16] = 0x08;
	run(f, 64, 1, FK_VLAN, "802.1Q");
	eth(f, 0x88A8);
	run(f, 64, 1, FK_VLAN, "802.1ad");
	eth(f, 0x0806); /* ARP */
	run(f, 42, 1, FK_NON_IP, "arp");

	/* truncated at every byte of the Ethernet and IP headers */
	len = ipv4(f, "10.7.7.7", 5, 4);
	for (cut = 0; cut < 14; cut++)
		run(f, cut, 1, FK_TRUNCATED, "ethernet header cut");
	for (cut = 14; cut < 14 + 20; cut++)
		run(f, cut, 1, FK_TRUNCATED, "ipv4 header cut");
	len = ipv4(f, "10.7.7.8", 7, 4); /* IHL says 28 bytes of header */
	for (cut = 14 + 20; cut < 14 + 28; cut++)
		run(f, cut, 1, FK_TRUNCATED, "ipv4 options cut");
	len = ipv6(f, "2001:db8::8");
	for (cut = 14; cut < 14 + 40; cut++)
		run(f, cut, 1, FK_TRUNCATED, "ipv6 header cut");

	len = ipv4(f, "10.6.6.6", 5, 6); /* version 6 behind 0x0800 */
	run(f, len, 1, FK_MALFORMED, "ipv4 ethertype, version 6");
	len = ipv4(f, "10.6.6.7", 4, 4); /* IHL 4 < 5 */
	run(f, len, 1, FK_MALFORMED, "ihl 4");
	len = ipv6(f, "2001:db8::9");
	f[14] = 0x40; /* version 4 behind 0x86DD */
	run(f, len, 1, FK_MALFORMED, "ipv6 ethertype, version 4");

	/* totals by kind, summed over CPUs */
	ncpu = libbpf_num_possible_cpus();
	{
		struct xdp_totals per[ncpu], sum = { 0 };
		__u32 key, *prev = NULL;
		int fd = bpf_map__fd(skel->maps.xdp_totals), ifaces = 0;

		/* test runs arrive on loopback's rx queue: one interface */
		while (!bpf_map_get_next_key(fd, prev, &key)) {
			prev = &key;
			ifaces++;
			CHECK(!bpf_map_lookup_elem(fd, &key, per), "read totals");
			for (i = 0; i < ncpu; i++)
				for (k = 0; k < FK__MAX; k++) {
					sum.packets[k] += per[i].packets[k];
					sum.bytes[k] += per[i].bytes[k];
				}
		}
		CHECK(ifaces == 1, "totals for %d interfaces, want 1", ifaces);
		for (k = 0; k < FK__MAX; k++) {
			CHECK(sum.packets[k] == want_pkts[k], "%s packets %llu, want %llu", kinds[k],
			      (unsigned long long)sum.packets[k], (unsigned long long)want_pkts[k]);
			CHECK(sum.bytes[k] == want_bytes[k], "%s bytes %llu, want %llu", kinds[k],
			      (unsigned long long)sum.bytes[k], (unsigned long long)want_bytes[k]);
		}
	}
	sum_source("10.1.2.3", 0, &p, &b);
	CHECK(p == 5 && b == 5 * 42, "10.1.2.3: %llu packets %llu bytes, want 5 and 210",
	      (unsigned long long)p, (unsigned long long)b);
	sum_source("10.1.2.4", 0, &p, &b);
	CHECK(p == 2, "10.1.2.4 (options): %llu packets, want 2", (unsigned long long)p);
	sum_source("2001:db8::7", 1, &p, &b);
	CHECK(p == 3 && b == 3 * 62, "2001:db8::7: %llu packets %llu bytes, want 3 and 186",
	      (unsigned long long)p, (unsigned long long)b);
	sum_source("10.7.7.7", 0, &p, &b);
	CHECK(p == 0, "truncated frames counted no source, got %llu", (unsigned long long)p);
	sum_source("10.6.6.6", 0, &p, &b);
	CHECK(p == 0, "malformed frames counted no source, got %llu", (unsigned long long)p);

	telemetry_bpf__destroy(skel);
	return CHECK_SUMMARY();
}

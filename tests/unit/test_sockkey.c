// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The key builder both BPF programs use, compiled for the host: both
 * directions, IPv4, IPv6, v4-mapped, byte order of the context fields. */
#include <arpa/inet.h>
#include <stdio.h>
#include "check.h"
#include <string.h>
#include "sockkey.h"


/* What the kernel puts in the context: remote_port as filter.c does it
 * (network-order skc_dport shifted into the upper half on little endian),
 * local_port in host order. */
static __u32 ctx_remote_port(__u16 port)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return (__u32)htons(port) << 16;
#else
	return port;
#endif
}

static struct sock_addr_view v4(const char *l, __u16 lp, const char *r, __u16 rp)
{
	struct sock_addr_view v = { .family = SK_AF_INET };

	inet_pton(AF_INET, l, &v.local_ip4);
	inet_pton(AF_INET, r, &v.remote_ip4);
	v.local_port = lp;
	v.remote_port = ctx_remote_port(rp);
	return v;
}

static struct sock_addr_view v6(const char *l, __u16 lp, const char *r, __u16 rp)
{
	struct sock_addr_view v = { .family = SK_AF_INET6 };

	inet_pton(AF_INET6, l, v.local_ip6);
	inet_pton(AF_INET6, r, v.remote_ip6);
	v.local_port = lp;
	v.remote_port = ctx_remote_port(rp);
	return v;
}

static void test_ports_host_order(void)
{
	struct sock_addr_view v = v4("10.0.0.1", 40000, "10.0.0.2", 80);
	struct sock_key k;

	CHECK(sock_key_build(&k, &v) == 0, "build v4");
	CHECK(k.local_port == 40000, "local port %u", k.local_port);
	CHECK(k.remote_port == 80, "remote port %u (raw ctx 0x%08x)", k.remote_port, v.remote_port);
	CHECK(sock_key_remote_port(ctx_remote_port(0x1234)) == 0x1234, "asymmetric port bytes");
}

static void test_both_directions_pair(void)
{
	struct sock_addr_view c = v4("127.0.0.1", 41000, "127.0.0.1", 8080);
	struct sock_addr_view s = v4("127.0.0.1", 8080, "127.0.0.1", 41000);
	struct sock_key kc, ks, rev;

	sock_key_build(&kc, &c);
	sock_key_build(&ks, &s);
	sock_key_reverse(&rev, &kc);
	CHECK(memcmp(&rev, &ks, sizeof(ks)) == 0, "reverse(client) == server key");
	sock_key_reverse(&rev, &ks);
	CHECK(memcmp(&rev, &kc, sizeof(kc)) == 0, "reverse(server) == client key");
	CHECK(memcmp(&kc, &ks, sizeof(ks)) != 0, "the two ends' keys differ");
}

static void test_v4_mapped_pairs_with_v4(void)
{
	/* listen [::]:80 accepting an IPv4 client: the server socket is
	 * AF_INET6 with ::ffff: addresses, the client plain AF_INET. */
	struct sock_addr_view c = v4("127.0.0.1", 41000, "127.0.0.1", 80);
	struct sock_addr_view s = v6("::ffff:127.0.0.1", 80, "::ffff:127.0.0.1", 41000);
	struct sock_key kc, ks, rev;

	CHECK(sock_key_build(&kc, &c) == 0 && sock_key_build(&ks, &s) == 0, "build");
	sock_key_reverse(&rev, &kc);
	CHECK(memcmp(&rev, &ks, sizeof(ks)) == 0, "v4 client pairs with v4-mapped server");
}

static void test_v6(void)
{
	struct sock_addr_view c = v6("2001:db8::1", 5000, "2001:db8::2", 443);
	struct sock_addr_view s = v6("2001:db8::2", 443, "2001:db8::1", 5000);
	struct sock_key kc, ks, rev;
	struct in6_addr a;

	sock_key_build(&kc, &c);
	sock_key_build(&ks, &s);
	sock_key_reverse(&rev, &kc);
	CHECK(memcmp(&rev, &ks, sizeof(ks)) == 0, "v6 pair");
	inet_pton(AF_INET6, "2001:db8::1", &a);
	CHECK(memcmp(kc.local_ip, &a, 16) == 0, "v6 address kept in network order");
	CHECK(!sock_key_is_loopback(&kc), "2001:db8:: is not loopback");
}

static void test_v4_stored_mapped(void)
{
	struct sock_addr_view c = v4("192.0.2.7", 1, "192.0.2.8", 2);
	struct in6_addr mapped;
	struct sock_key k;

	sock_key_build(&k, &c);
	inet_pton(AF_INET6, "::ffff:192.0.2.7", &mapped);
	CHECK(memcmp(k.local_ip, &mapped, 16) == 0, "v4 stored as ::ffff:a.b.c.d");
}

static void test_loopback(void)
{
	struct sock_addr_view a = v4("127.0.0.1", 1, "127.0.0.1", 2);
	struct sock_addr_view b = v4("127.1.2.3", 1, "127.1.2.3", 2);
	struct sock_addr_view c = v6("::1", 1, "::1", 2);
	struct sock_addr_view d = v6("::ffff:127.0.0.1", 1, "::ffff:127.0.0.1", 2);
	struct sock_addr_view e = v4("10.0.0.1", 1, "10.0.0.2", 2);
	struct sock_addr_view f = v6("::2", 1, "::2", 2);
	struct sock_addr_view g = v4("128.0.0.1", 1, "128.0.0.1", 2);
	struct sock_key k;

	sock_key_build(&k, &a);
	CHECK(sock_key_is_loopback(&k), "127.0.0.1");
	sock_key_build(&k, &b);
	CHECK(sock_key_is_loopback(&k), "127.1.2.3 (all of 127/8)");
	sock_key_build(&k, &c);
	CHECK(sock_key_is_loopback(&k), "::1");
	sock_key_build(&k, &d);
	CHECK(sock_key_is_loopback(&k), "::ffff:127.0.0.1");
	sock_key_build(&k, &e);
	CHECK(!sock_key_is_loopback(&k), "10.0.0.1 is not loopback");
	sock_key_build(&k, &f);
	CHECK(!sock_key_is_loopback(&k), "::2 is not loopback");
	sock_key_build(&k, &g);
	CHECK(!sock_key_is_loopback(&k), "128.0.0.1 is not loopback");
}

static void test_bad_family_and_padding(void)
{
	struct sock_addr_view v = { .family = 1 /* AF_UNIX */ };
	struct sock_addr_view ok = v4("127.0.0.1", 1, "127.0.0.1", 2);
	struct sock_key k, k2;

	CHECK(sock_key_build(&k, &v) == -1, "AF_UNIX refused");
	/* Keys are hashed bytewise: garbage in the struct must not leak in. */
	memset(&k, 0xa5, sizeof(k));
	memset(&k2, 0x5a, sizeof(k2));
	sock_key_build(&k, &ok);
	sock_key_build(&k2, &ok);
	CHECK(memcmp(&k, &k2, sizeof(k)) == 0, "every byte of the key is written");
	CHECK(sizeof(struct sock_key) == 48, "key is 48 bytes, got %zu", sizeof(struct sock_key));
}

/* Both ends of a pair name the same service endpoint (the passive side's
 * local end, the active side's remote end); the netns cookie is in it
 * only for a loopback address; every byte is written (hashed bytewise). */
static void test_service_key(void)
{
	struct sock_addr_view c = v4("127.0.0.1", 41000, "127.0.0.1", 8080);
	struct sock_addr_view s = v4("127.0.0.1", 8080, "127.0.0.1", 41000);
	struct sock_addr_view pc = v4("10.1.0.7", 41000, "10.1.0.9", 8080);
	struct sock_key kc, ks;
	struct service_key sc, ss, other;

	sock_key_build(&kc, &c);
	sock_key_build(&ks, &s);
	kc.netns = ks.netns = 77;
	memset(&sc, 0xa5, sizeof(sc));
	memset(&ss, 0x5a, sizeof(ss));
	service_key_of(&sc, &kc, 0, SVC_SERVER, 0);
	service_key_of(&ss, &ks, 1, SVC_SERVER, 0);
	CHECK(memcmp(&sc, &ss, sizeof(sc)) == 0, "client and server name one endpoint");
	CHECK(sc.port == 8080 && sc.netns == 77, "the server's port %u, the netns %llu", sc.port,
	      (unsigned long long)sc.netns);
	ks.netns = 78; /* another namespace's 127.0.0.1:8080 */
	service_key_of(&other, &ks, 1, SVC_SERVER, 0);
	CHECK(memcmp(&other, &ss, sizeof(ss)) != 0, "another netns's loopback is another endpoint");
	sock_key_build(&kc, &pc);
	kc.netns = 77; /* not loopback: never in the key */
	service_key_of(&sc, &kc, 0, SVC_SERVER, 0);
	CHECK(sc.netns == 0 && sc.port == 8080, "a pod address needs no netns");
	CHECK(sizeof(struct service_key) == 40, "key is 40 bytes, got %zu", sizeof(struct service_key));
}

/* The client side: the client socket's cgroup, the client's address and
 * the server's port, the same from both ends, and never the server
 * side's key (one client's hazard is not the service's); another cgroup
 * with the same address (every local process is 127.0.0.1) is another
 * client side. */
static void test_client_side_key(void)
{
	struct sock_addr_view c = v4("10.1.0.7", 41000, "10.1.0.9", 8080);
	struct sock_addr_view s = v4("10.1.0.9", 8080, "10.1.0.7", 41000);
	struct sock_addr_view c2 = v4("10.1.0.8", 41001, "10.1.0.9", 8080);
	struct sock_key kc, ks, k2;
	struct service_key cc, cs, srv, other;
	uint32_t client_ip = inet_addr("10.1.0.7");

	sock_key_build(&kc, &c);
	sock_key_build(&ks, &s);
	sock_key_build(&k2, &c2);
	memset(&cc, 0xa5, sizeof(cc));
	memset(&cs, 0x5a, sizeof(cs));
	service_key_of(&cc, &kc, 0, SVC_CLIENT, 4242);
	service_key_of(&cs, &ks, 1, SVC_CLIENT, 4242);
	CHECK(memcmp(&cc, &cs, sizeof(cc)) == 0, "both ends name one client side");
	CHECK(cc.addr[3] == client_ip && cc.port == 8080 && cc.side == SVC_CLIENT &&
	      cc.cgroup == 4242,
	      "the client's address, the server's port %u, side %u, cgroup %llu", cc.port, cc.side,
	      (unsigned long long)cc.cgroup);
	service_key_of(&srv, &kc, 0, SVC_SERVER, 4242);
	CHECK(memcmp(&cc, &srv, sizeof(cc)) != 0, "the client side is not the server side");
	CHECK(srv.cgroup == 0, "the server side has no cgroup, got %llu",
	      (unsigned long long)srv.cgroup);
	service_key_of(&other, &k2, 0, SVC_CLIENT, 4242);
	CHECK(memcmp(&other, &cc, sizeof(cc)) != 0, "another client's side is its own");
	service_key_of(&other, &k2, 0, SVC_SERVER, 7);
	CHECK(memcmp(&other, &srv, sizeof(srv)) == 0, "another client, the same server side");
	service_key_of(&other, &kc, 0, SVC_CLIENT, 4243);
	CHECK(memcmp(&other, &cc, sizeof(cc)) != 0,
	      "another cgroup at the same address is another client side");
}

int main(void)
{
	test_ports_host_order();
	test_both_directions_pair();
	test_v4_mapped_pairs_with_v4();
	test_v6();
	test_v4_stored_mapped();
	test_loopback();
	test_bad_family_and_padding();
	test_service_key();
	test_client_side_key();
	return CHECK_SUMMARY();
}

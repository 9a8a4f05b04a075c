// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include "diag_parse.h"
#include "follow.h"
#include "log.h"
#include "netns.h"
#include "sock_diag.h"
#include "test_knobs.h"

/* New peer cgroups one network namespace may give per scan: whoever owns a
 * namespace (any user, with `unshare -Urn`) decides which sockets are in
 * it, so one namespace must not fill the attach slots (MAX_TARGETS) in one
 * scan. */
#define FOLLOW_NEW_PER_NETNS 8

/* Sockets one scan reads across every namespace: each namespace is capped
 * (DIAG_MAX_SOCKS_PER_NETNS), but any user can make namespaces (`unshare
 * -Urn`), so the scan's memory needs a bound of its own: 4 namespaces'
 * worth, about 40 MB of struct diag_sock, under the DaemonSet's 128 MiB.
 * Past it the scan stops (the namespaces not read this time are read
 * first next time: the walk starts where the last one stopped). */
#define FOLLOW_MAX_SOCKS (4 * (size_t)DIAG_MAX_SOCKS_PER_NETNS)

static bool is_loopback(const uint8_t a[16])
{
	static const uint8_t one[16] = { [15] = 1 };

	return !memcmp(a, one, 16) ||
	       (!memcmp(a, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) && a[12] == 127);
}

/* Enter one namespace and dump it (nothing when it is gone meanwhile),
 * taking what it read from @left, the scan's budget. */
static void dump_netns(const struct netns_ref *ns, struct diag_list *l, size_t *left)
{
	const size_t budget = *left < DIAG_MAX_SOCKS_PER_NETNS ? *left : DIAG_MAX_SOCKS_PER_NETNS;
	struct diag_ctx ctx = { .netns = ns->ino, .budget = budget };
	static const int families[] = { AF_INET, AF_INET6 };
	int ret;
	size_t i;

	if (netns_enter(ns))
		return;
	for (i = 0; i < 2 && !ctx.capped; i++) {
		ret = diag_dump_tcp(families[i], 1 << DIAG_TCP_ESTABLISHED, &ctx, l);
		if (ret)
			pr_debug("follow: netns %llu: %s dump: %s\n", (unsigned long long)ns->ino,
				 families[i] == AF_INET ? "IPv4" : "IPv6", strerror(-ret));
	}
	*left -= budget - ctx.budget;
	if (ctx.capped)
		pr_debug("follow: netns %llu: over %d sockets with a cgroup, the rest not read\n",
			 (unsigned long long)ns->ino, DIAG_MAX_SOCKS_PER_NETNS);
}

static size_t follow_max_socks(void)
{
	const char *v = test_knob(KNOB_FOLLOW_SOCKS);

	return v ? strtoul(v, NULL, 10) : FOLLOW_MAX_SOCKS;
}

static int dump_all(struct diag_list *l)
{
	static size_t start; /* where the last scan stopped */
	static bool said;
	size_t n, i, left = follow_max_socks();
	struct netns_ref *ns;
	int self, ret;

	self = netns_save();
	if (self < 0)
		return self;
	ret = netns_of_all(&ns, &n);
	for (i = 0; ret == 0 && i < n && left; i++)
		dump_netns(&ns[(start + i) % n], l, &left);
	if (!ret && i < n) {
		if (!said)
			pr_warn("follow: a scan read its cap of %zu sockets in %zu of %zu network "
				"namespaces; the rest are read in turn, a scan each (said once)\n",
				follow_max_socks(), i, n);
		said = true;
		start = (start + i) % n;
	}
	netns_restore(self);
	free(ns);
	return ret;
}

/* cgroup id -> path: walk the v2 hierarchy (ids are directory inodes). */
static uint64_t want_id;
static char found_path[PATH_MAX];

static int find_id(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)ftw;
	if (flag == FTW_D && st->st_ino == want_id) {
		snprintf(found_path, sizeof(found_path), "%s", path);
		return 1;
	}
	return 0;
}

static int path_of_cgroup(const char *mnt, uint64_t id, char *out, size_t len)
{
	want_id = id;
	found_path[0] = 0;
	if (nftw(mnt, find_id, 16, FTW_PHYS | FTW_MOUNT) != 1)
		return -ENOENT;
	snprintf(out, len, "%s", found_path);
	return 0;
}

/* Sorted by local endpoint, so a socket's peer is found by binary search
 * on (remote address, remote port): scans stay O(n log n). */
static int cmp_local(const void *a, const void *b)
{
	const struct diag_sock *x = a, *y = b;
	int c = memcmp(x->local, y->local, 16);

	return c ? c : (int)x->lport - (int)y->lport;
}

/* Is the port in the local (ephemeral) range: the client side of a
 * connection?  Only used to word the reason a cgroup was followed. */
static bool ephemeral(uint16_t port)
{
	static unsigned int lo, hi;
	FILE *f;

	if (!hi) {
		f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
		if (!f || fscanf(f, "%u %u", &lo, &hi) != 2) {
			lo = 32768;
			hi = 60999;
		}
		if (f)
			fclose(f);
	}
	return port >= lo && port <= hi;
}

static bool nested(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	if (la <= lb)
		return !strncmp(a, b, la) && (b[la] == '/' || b[la] == 0);
	return !strncmp(a, b, lb) && a[lb] == '/';
}

/* Namespaces a scan said it took no more from (once each, up to 16). */
struct netns_said {
	uint64_t ino[16];
	int n;
};

/* Has netns given FOLLOW_NEW_PER_NETNS of the n candidates already? */
static bool netns_full(const struct follow_candidate *out, int n, uint64_t netns,
		       struct netns_said *said)
{
	int k, from = 0;

	for (k = 0; k < n; k++)
		from += out[k].netns == netns;
	if (from < FOLLOW_NEW_PER_NETNS)
		return false;
	for (k = 0; k < said->n && said->ino[k] != netns; k++)
		;
	if (k == said->n && said->n < (int)(sizeof(said->ino) / sizeof(said->ino[0]))) {
		said->ino[said->n++] = netns;
		pr_debug("follow: netns %llu gave %d new peer cgroups this scan, no more from it\n",
			 (unsigned long long)netns, FOLLOW_NEW_PER_NETNS);
	}
	return true;
}

int follow_scan(const char *cg2_mnt, const struct cg_target *attached, int n_attached,
		const struct port_set *ports, bool *used, struct follow_candidate *out, int max)
{
	struct diag_list l = { 0 };
	struct netns_said said = { 0 };
	int k, n = 0, ret;
	struct stat root;
	size_t i, j;

	if (stat(cg2_mnt, &root))
		return -errno;
	ret = dump_all(&l);
	if (ret)
		goto out;
	/* no socket at all (l.v NULL): qsort's base is declared nonnull */
	if (l.n)
		qsort(l.v, l.n, sizeof(*l.v), cmp_local);
	/* every socket, even once out is full: used[] needs them all */
	for (i = 0; i < l.n; i++) {
		const struct diag_sock *s = &l.v[i];
		bool ours = false;

		for (k = 0; k < n_attached; k++)
			ours |= attached[k].id == s->cgroup;
		if (!ours || (!port_set_has(ports, s->lport) && !port_set_has(ports, s->rport)))
			continue;
		struct diag_sock probe = { .lport = s->rport };
		const struct diag_sock *first;

		memcpy(probe.local, s->remote, 16);
		first = bsearch(&probe, l.v, l.n, sizeof(*l.v), cmp_local);
		if (!first)
			continue;
		while (first > l.v && !cmp_local(first - 1, &probe))
			first--;
		for (j = first - l.v; j < l.n && !cmp_local(&l.v[j], &probe); j++) {
			const struct diag_sock *p = &l.v[j];
			struct follow_candidate *c = &out[n];
			bool skip = p->cgroup == root.st_ino;

			if (p->rport != s->lport || memcmp(p->remote, s->local, 16))
				continue;
			/* loopback ends are in one namespace */
			if (is_loopback(s->local) && p->netns != s->netns)
				continue;
			for (k = 0; k < n_attached; k++) {
				if (attached[k].id != p->cgroup)
					continue;
				used[k] = true;
				skip = true;
			}
			if (skip || n >= max)
				continue;
			for (k = 0; k < n; k++)
				skip |= out[k].target.id == p->cgroup;
			if (skip)
				continue;
			if (netns_full(out, n, p->netns, &said))
				continue;
			memset(c, 0, sizeof(*c));
			if (path_of_cgroup(cg2_mnt, p->cgroup, c->target.path, sizeof(c->target.path)))
				continue;
			for (k = 0; k < n_attached; k++)
				skip |= nested(attached[k].path, c->target.path);
			if (skip) {
				pr_debug("follow: %s is nested with an attached cgroup, not followed\n",
					 c->target.path);
				continue;
			}
			c->target.id = p->cgroup;
			c->target.kind = TK_FOLLOWED;
			c->netns = p->netns;
			for (k = 0; k < n_attached; k++)
				if (attached[k].id == s->cgroup)
					snprintf(c->target.reason, sizeof(c->target.reason),
						 "followed: %s port %u of %.24s",
						 ephemeral(s->lport) && !ephemeral(s->rport)
							 ? "server on" : "client of",
						 ephemeral(s->lport) && !ephemeral(s->rport)
							 ? s->rport : s->lport,
						 strrchr(attached[k].path, '/') + 1);
			n++;
		}
	}
out:
	free(l.v);
	return ret ? ret : n;
}

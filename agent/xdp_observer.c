// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "log.h"
#include "telemetry.h" /* the skeleton's types */
#include "telemetry.skel.h"
#include "xdp_observer.h"

const char *const frame_kind_names[FK__MAX] = {
	[FK_IPV4] = "ipv4", [FK_IPV6] = "ipv6", [FK_VLAN] = "vlan",
	[FK_NON_IP] = "non_ip", [FK_TRUNCATED] = "truncated", [FK_MALFORMED] = "malformed",
};

int telemetry_check_ifaces(const char *const *names, int n, char *err, size_t errlen)
{
	int i;

	for (i = 0; i < n; i++) {
		if (strlen(names[i]) >= IF_NAMESIZE) {
			snprintf(err, errlen, "--xdp: interface name '%.40s%s' is longer than %d characters",
				 names[i], strlen(names[i]) > 40 ? "..." : "", IF_NAMESIZE - 1);
			return -ENAMETOOLONG;
		}
		if (!if_nametoindex(names[i])) {
			snprintf(err, errlen, "--xdp: no interface named '%s' (ip link shows them)",
				 names[i]);
			return -ENODEV;
		}
	}
	if (n > XDP_MAX_IFACES) {
		snprintf(err, errlen, "--xdp: at most %d interfaces", XDP_MAX_IFACES);
		return -E2BIG;
	}
	return 0;
}

int telemetry_start(struct telemetry *t, const char *const *names, int n, unsigned int sample_every,
		    char *err, size_t errlen)
{
	struct xdp_totals zero = { 0 };
	int ncpu = libbpf_num_possible_cpus(), i;
	struct xdp_totals *percpu;
	struct xdp_iface *x;

	t->skel = telemetry_bpf__open();
	if (!t->skel) {
		snprintf(err, errlen, "opening the XDP program failed: %s", strerror(errno));
		return -errno;
	}
	t->skel->rodata->sample_every = sample_every;
	if (telemetry_bpf__load(t->skel)) {
		snprintf(err, errlen, "loading the XDP program failed: %s (run with -v for the verifier log)",
			 strerror(errno));
		return -errno;
	}
	percpu = calloc(ncpu, sizeof(zero));
	if (!percpu)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		x = &t->ifaces[t->n_ifaces];
		snprintf(x->name, sizeof(x->name), "%s", names[i]);
		x->ifindex = if_nametoindex(names[i]);
		/* the packet path only looks its interface up */
		bpf_map_update_elem(bpf_map__fd(t->skel->maps.xdp_totals), &x->ifindex, percpu,
				    BPF_ANY);
		/* A bpf_link: detached by the kernel whenever the agent exits,
		 * SIGKILL included.  With no mode flag the kernel picks native
		 * mode where the driver has XDP, else generic (net/core/dev.c,
		 * dev_xdp_mode); ask which one it took. */
		x->link = bpf_program__attach_xdp(t->skel->progs.xdp_count, x->ifindex);
		if (!x->link) {
			snprintf(err, errlen, "attaching XDP to %s failed: %s%s", x->name,
				 strerror(errno),
				 errno == EBUSY || errno == EEXIST
					 ? " (another XDP program is attached)" : "");
			free(percpu);
			return -errno;
		}
		{
			LIBBPF_OPTS(bpf_xdp_query_opts, q);

			x->mode = !bpf_xdp_query(x->ifindex, 0, &q) &&
						  q.attach_mode == XDP_ATTACHED_DRV
					  ? "native" : "generic";
		}
		t->n_ifaces++;
		pr_info("XDP on %s in %s mode\n", x->name, x->mode);
	}
	free(percpu);
	return 0;
}

void telemetry_stop(struct telemetry *t)
{
	int i;

	for (i = 0; i < t->n_ifaces; i++)
		bpf_link__destroy(t->ifaces[i].link);
	t->n_ifaces = 0;
	telemetry_bpf__destroy(t->skel);
	t->skel = NULL;
}

int telemetry_totals(const struct telemetry *t, unsigned int ifindex, struct xdp_totals *out)
{
	int ncpu = libbpf_num_possible_cpus(), i, k;
	struct xdp_totals *per = calloc(ncpu, sizeof(*per));

	memset(out, 0, sizeof(*out));
	if (!per)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.xdp_totals), &ifindex, per)) {
		free(per);
		return -errno;
	}
	for (i = 0; i < ncpu; i++)
		for (k = 0; k < FK__MAX; k++) {
			out->packets[k] += per[i].packets[k];
			out->bytes[k] += per[i].bytes[k];
		}
	free(per);
	return 0;
}

void src_key_str(const struct src_key *k, char *buf, size_t len)
{
	static const __u32 mapped_prefix[3] = { 0, 0, 0 };

	if (!memcmp(k->addr, mapped_prefix, 8) && k->addr[2] == htonl(0xffff))
		inet_ntop(AF_INET, &k->addr[3], buf, len);
	else
		inet_ntop(AF_INET6, k->addr, buf, len);
}

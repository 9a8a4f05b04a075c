// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "dataplane.h"
#include "stats.h"

/* Same order as enum fallback_reason (bpf/accel.h). */
const char *const accel_fallback_names[FB__MAX] = {
	[FB_NO_PEER] = "no_peer",
	[FB_AMBIGUOUS] = "ambiguous",
	[FB_STICKY_TCP] = "sticky_tcp",
	[FB_SLOW_READER] = "slow_reader",
	[FB_PAUSED] = "paused",
	[FB_POLICY] = "policy",
	[FB_NO_ROOM] = "no_room",
	[FB_SHORT_LIVED] = "short_lived",
};

static long count_entries(int fd, size_t key_size)
{
	unsigned char key[64], next[64];
	void *prev = NULL;
	long n = 0;

	if (fd < 0 || key_size > sizeof(key))
		return -1;
	while (bpf_map_get_next_key(fd, prev, next) == 0) {
		memcpy(key, next, key_size);
		prev = key;
		if (++n > 10 * 1000 * 1000)
			break;
	}
	return n;
}

int stats_read(const struct agent_maps *m, struct stats_snapshot *s)
{
	int ncpu = libbpf_num_possible_cpus(), i, j;
	struct accel_config cfg = {};
	struct accel_stats *per;
	__u32 zero = 0;

	memset(s, 0, sizeof(*s));
	if (ncpu <= 0)
		return ncpu;
	per = calloc(ncpu, sizeof(*per));
	if (!per)
		return -ENOMEM;
	if (bpf_map_lookup_elem(m->stats_fd, &zero, per)) {
		free(per);
		return -errno;
	}
	for (i = 0; i < ncpu; i++) {
		__u64 *dst = (__u64 *)&s->sum, *src = (__u64 *)&per[i];

		for (j = 0; j < (int)(sizeof(s->sum) / sizeof(__u64)); j++)
			dst[j] += src[j];
	}
	free(per);
	if (!bpf_map_lookup_elem(m->config_fd, &zero, &cfg))
		s->paused = cfg.paused;
	s->sock_hash_entries = count_entries(m->sock_hash_fd, sizeof(__u64));
	s->endpoint_entries = count_entries(m->endpoints_fd, sizeof(struct sock_key));
	return 0;
}

int config_set_paused(const struct agent_maps *m, bool paused)
{
	struct accel_config cfg = { .paused = paused };
	__u32 zero = 0;

	return bpf_map_update_elem(m->config_fd, &zero, &cfg, BPF_ANY) ? -errno : 0;
}

int config_pause_fd(int config_fd)
{
	struct agent_maps m = { .config_fd = config_fd };

	return config_set_paused(&m, true);
}

static unsigned long long gauge(__u64 added, __u64 removed)
{
	return added > removed ? added - removed : 0;
}

static void human_bytes(char *buf, size_t len, unsigned long long v)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double d = v;
	int u = 0;

	while (d >= 1024 && u < 4) {
		d /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", d, unit[u]);
}

void stats_print_text(FILE *out, const struct stats_snapshot *s, const struct agent_info *info)
{
	const struct accel_stats *a = &s->sum;
	char rb[32], tb[32];
	int i;

	if (info->pid)
		fprintf(out, "agent       pid %d%s%s\n", info->pid, info->pinned ? ", pinned" : "",
			s->paused ? ", PAUSED" : "");
	else
		fprintf(out, "agent       not running; pinned data plane in %s%s\n", PIN_DIR,
			s->paused ? ", PAUSED" : "");
	for (i = 0; i < info->n_cgroups; i++)
		fprintf(out, "cgroup      %s (%s)\n", info->cgroups[i].path, info->cgroups[i].reason);
	for (i = 0; i < info->n_xdp; i++)
		fprintf(out, "xdp         %s (%s mode)\n", info->xdp[i].name, info->xdp[i].mode);
	if (info->metrics[0])
		fprintf(out, "metrics     http://%s/metrics\n", info->metrics);
	fprintf(out, "sockets     %llu tracked now, %llu since start\n",
		gauge(a->sockets_added, a->sockets_closed), (unsigned long long)a->sockets_added);
	fprintf(out, "pairs       %llu active, %llu since start\n",
		(gauge(2 * a->pairs, a->paired_closed) + 1) / 2, (unsigned long long)a->pairs);
	human_bytes(rb, sizeof(rb), a->redirected_bytes);
	human_bytes(tb, sizeof(tb), a->tcp_bytes);
	fprintf(out, "redirected  %llu msgs, %s (not visible to ss -ti or tcpdump)\n",
		(unsigned long long)a->redirected_msgs, rb);
	fprintf(out, "via TCP     %llu msgs, %s (sends of tracked sockets)\n",
		(unsigned long long)a->tcp_msgs, tb);
	fprintf(out, "fallbacks   (socket directions sent to TCP, by first reason)\n");
	for (i = 0; i < FB__MAX; i++)
		fprintf(out, "  %-12s %llu\n", accel_fallback_names[i], (unsigned long long)a->fallbacks[i]);
	if (s->sock_hash_entries >= 0)
		fprintf(out, "maps        sock_hash %ld, endpoints %ld entries\n", s->sock_hash_entries,
			s->endpoint_entries);
	if (info->n_selftest)
		fprintf(out, "selftest    %s\n", info->selftest_blocked
			? "CRITICAL FAILURE: acceleration disabled (kept paused)" : "run at start-up");
	for (i = 0; i < info->n_selftest; i++)
		fprintf(out, "  %-4s %-18s %s\n", info->selftest[i].result, info->selftest[i].name,
			info->selftest[i].detail);
}

static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(out, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(out, "\\u%04x", *s);
		else
			fputc(*s, out);
	}
	fputc('"', out);
}

void stats_print_json(FILE *out, const struct stats_snapshot *s, const struct agent_info *info)
{
	const struct accel_stats *a = &s->sum;
	int i;

	fprintf(out, "{\"agent\":{\"pid\":%d,\"running\":%s,\"pinned\":%s},", info->pid,
		info->pid ? "true" : "false", info->pinned ? "true" : "false");
	fprintf(out, "\"paused\":%s,", s->paused ? "true" : "false");
	fprintf(out, "\"sockets\":%llu,\"sockets_total\":%llu,",
		gauge(a->sockets_added, a->sockets_closed), (unsigned long long)a->sockets_added);
	fprintf(out, "\"pairs\":%llu,\"pairs_active\":%llu,", (unsigned long long)a->pairs,
		(gauge(2 * a->pairs, a->paired_closed) + 1) / 2);
	fprintf(out, "\"redirected_msgs\":%llu,\"redirected_bytes\":%llu,",
		(unsigned long long)a->redirected_msgs, (unsigned long long)a->redirected_bytes);
	fprintf(out, "\"tcp_msgs\":%llu,\"tcp_bytes\":%llu,", (unsigned long long)a->tcp_msgs,
		(unsigned long long)a->tcp_bytes);
	fprintf(out, "\"fallbacks\":{");
	for (i = 0; i < FB__MAX; i++)
		fprintf(out, "%s\"%s\":%llu", i ? "," : "", accel_fallback_names[i],
			(unsigned long long)a->fallbacks[i]);
	fprintf(out, "},\"maps\":{\"sock_hash\":%ld,\"endpoints\":%ld},", s->sock_hash_entries,
		s->endpoint_entries);
	fprintf(out, "\"selftest\":{\"blocked\":%s,\"checks\":{",
		info->selftest_blocked ? "true" : "false");
	for (i = 0; i < info->n_selftest; i++) {
		fprintf(out, "%s\"%s\":{\"result\":", i ? "," : "", info->selftest[i].name);
		json_str(out, info->selftest[i].result[0] == 'F' ? "fail" : info->selftest[i].result);
		fprintf(out, ",\"detail\":");
		json_str(out, info->selftest[i].detail);
		fputc('}', out);
	}
	fprintf(out, "}},");
	fprintf(out, "\"xdp\":[");
	for (i = 0; i < info->n_xdp; i++)
		fprintf(out, "%s{\"interface\":\"%s\",\"mode\":\"%s\"}", i ? "," : "",
			info->xdp[i].name, info->xdp[i].mode);
	fprintf(out, "],\"metrics\":");
	json_str(out, info->metrics);
	fprintf(out, ",");
	fprintf(out, "\"cgroups\":[");
	for (i = 0; i < info->n_cgroups; i++) {
		fprintf(out, "%s{\"path\":", i ? "," : "");
		json_str(out, info->cgroups[i].path);
		fprintf(out, ",\"id\":%llu,\"reason\":", (unsigned long long)info->cgroups[i].id);
		json_str(out, info->cgroups[i].reason);
		fputc('}', out);
	}
	fprintf(out, "]}\n");
}

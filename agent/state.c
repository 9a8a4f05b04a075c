// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "dataplane.h"
#include "state.h"

const char *run_dir(void)
{
	const char *d = getenv("NGX_SOCKMAP_RUN_DIR");

	return d && *d ? d : RUN_DIR;
}

static const char *state_path(const char *name)
{
	static char buf[2][PATH_MAX];
	static int i;

	i ^= 1;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", run_dir(), name);
	return buf[i];
}

#define STATE_FILE state_path("agent.state")
#define LOCK_FILE  state_path("agent.lock")

static const char *const map_names[AGENT_MAPS_N] = {
	"accel_stats", "accel_config", "sock_hash", "endpoints", "conn_arena", "pkt_arena", "src_stats",
};
/* The data plane's own maps; the rest are telemetry, absent from pins. */
#define DATAPLANE_MAPS_N 4

static int *map_slot(struct agent_maps *m, int i)
{
	int *slots[AGENT_MAPS_N] = { &m->stats_fd, &m->config_fd, &m->sock_hash_fd,
				     &m->endpoints_fd, &m->conn_arena_fd, &m->pkt_arena_fd,
				     &m->src_stats_fd };

	return slots[i];
}

static int read_pid_of_lock(void)
{
	char buf[32] = "";
	FILE *f = fopen(STATE_FILE, "r");
	int pid = 0;

	if (f) {
		if (fgets(buf, sizeof(buf), f))
			sscanf(buf, "pid %d", &pid);
		fclose(f);
	}
	return pid;
}

int state_lock(int *other_pid)
{
	int fd;

	if (mkdir(run_dir(), 0755) && errno != EEXIST)
		return -errno;
	fd = open(LOCK_FILE, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		*other_pid = read_pid_of_lock();
		close(fd);
		return -EBUSY;
	}
	return fd;
}

static __u32 map_id(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return bpf_map_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

int state_write(const struct agent_info *info, const struct agent_maps *m)
{
	struct agent_maps copy = *m;
	FILE *f;
	int i;

	char tmp[PATH_MAX];

	snprintf(tmp, sizeof(tmp), "%s.tmp", STATE_FILE);
	f = fopen(tmp, "w");
	if (!f)
		return -errno;
	fprintf(f, "pid %d\npinned %d\nselftest_blocked %d\n", info->pid, info->pinned,
		info->selftest_blocked);
	for (i = 0; i < info->n_selftest; i++)
		fprintf(f, "selftest %s %s %s\n", info->selftest[i].name, info->selftest[i].result,
			info->selftest[i].detail);
	for (i = 0; i < AGENT_MAPS_N; i++)
		if (*map_slot(&copy, i) >= 0)
			fprintf(f, "map %s %u\n", map_names[i], map_id(*map_slot(&copy, i)));
	fprintf(f, "ring_offsets %lu %lu\n", info->conn_ring_off, info->pkt_ring_off);
	fprintf(f, "arena_addrs %#lx %#lx\n", info->conn_arena_addr, info->pkt_arena_addr);
	for (i = 0; i < info->n_xdp; i++)
		fprintf(f, "xdp %s %s\n", info->xdp[i].name, info->xdp[i].mode);
	if (info->metrics[0])
		fprintf(f, "metrics %s\n", info->metrics);
	for (i = 0; i < info->n_cgroups; i++)
		fprintf(f, "cgroup %llu %s\t%s\n", (unsigned long long)info->cgroups[i].id,
			info->cgroups[i].reason, info->cgroups[i].path);
	if (fclose(f))
		return -errno;
	return rename(tmp, STATE_FILE) ? -errno : 0;
}

void state_remove(int lock_fd)
{
	unlink(STATE_FILE);
	if (lock_fd >= 0)
		close(lock_fd);
}

/* Open a map by id and make sure it is still ours: ids are reused. */
static int map_by_id(__u32 id, const char *name)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int fd;

	fd = bpf_map_get_fd_by_id(id);
	if (fd < 0)
		return -errno;
	if (bpf_map_get_info_by_fd(fd, &info, &len) || strncmp(info.name, name, sizeof(info.name))) {
		close(fd);
		return -ENOENT;
	}
	return fd;
}

static int open_live(struct agent_maps *m, struct agent_info *info)
{
	char line[PATH_MAX + 128], name[32], rest[PATH_MAX + 64];
	unsigned long long cgid;
	unsigned int id;
	FILE *f;
	int i, fd;

	f = fopen(STATE_FILE, "r");
	if (!f)
		return -ENOENT;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (sscanf(line, "pid %d", &info->pid) == 1)
			continue;
		if (sscanf(line, "pinned %d", &i) == 1) {
			info->pinned = i;
			continue;
		}
		if (sscanf(line, "selftest_blocked %d", &i) == 1) {
			info->selftest_blocked = i;
			continue;
		}
		if (!strncmp(line, "xdp ", 4) && info->n_xdp < 16) {
			if (sscanf(line + 4, "%15s %7s", info->xdp[info->n_xdp].name,
				   info->xdp[info->n_xdp].mode) == 2)
				info->n_xdp++;
			continue;
		}
		if (sscanf(line, "metrics %63s", info->metrics) == 1)
			continue;
		if (sscanf(line, "ring_offsets %lu %lu", &info->conn_ring_off,
			   &info->pkt_ring_off) == 2)
			continue;
		if (sscanf(line, "arena_addrs %lx %lx", &info->conn_arena_addr,
			   &info->pkt_arena_addr) == 2)
			continue;
		if (!strncmp(line, "selftest ", 9) && info->n_selftest < 8) {
			struct selftest_line *l = &info->selftest[info->n_selftest];

			l->detail[0] = 0;
			if (sscanf(line + 9, "%23s %7s %95[^\n]", l->name, l->result, l->detail) >= 2)
				info->n_selftest++;
			continue;
		}
		if (sscanf(line, "map %31s %u", name, &id) == 2) {
			for (i = 0; i < AGENT_MAPS_N; i++) {
				if (strcmp(name, map_names[i]))
					continue;
				fd = map_by_id(id, name);
				if (fd >= 0)
					*map_slot(m, i) = fd;
			}
			continue;
		}
		if (sscanf(line, "cgroup %llu %[^\n]", &cgid, rest) == 2 && info->n_cgroups < 64) {
			struct cg_target *t = &info->cgroups[info->n_cgroups++];
			char *tab = strchr(rest, '\t');

			t->id = cgid;
			if (tab)
				*tab++ = 0;
			snprintf(t->reason, sizeof(t->reason), "%.63s", rest);
			snprintf(t->path, sizeof(t->path), "%s", tab ? tab : "?");
		}
	}
	fclose(f);
	if (info->pid <= 0 || (kill(info->pid, 0) && errno == ESRCH))
		return -ESRCH; /* stale file: the agent died */
	return 0;
}

static int open_pinned(struct agent_maps *m, struct agent_info *info)
{
	char path[PATH_MAX];
	int i, fd;

	if (!accel_pinned_exists())
		return -ENOENT;
	for (i = 0; i < DATAPLANE_MAPS_N; i++) {
		snprintf(path, sizeof(path), "%s/%s", PIN_DIR, map_names[i]);
		fd = bpf_obj_get(path);
		if (fd >= 0)
			*map_slot(m, i) = fd;
	}
	info->pid = 0;
	info->pinned = true;
	return 0;
}

int state_open(struct agent_maps *m, struct agent_info *info, char *err, size_t errlen)
{
	int i;

	memset(info, 0, sizeof(*info));
	for (i = 0; i < AGENT_MAPS_N; i++)
		*map_slot(m, i) = -1;
	if (open_live(m, info) == 0 && m->stats_fd >= 0 && m->config_fd >= 0)
		return 0;
	/* A stale agent.state (agent killed) may still name live maps: the
	 * sockets it accelerated hold them.  That is not a running agent. */
	state_close(m);
	memset(info, 0, sizeof(*info));
	if (open_pinned(m, info) == 0 && m->stats_fd >= 0 && m->config_fd >= 0)
		return 0;
	state_close(m);
	snprintf(err, errlen, "no ngx-sockmap agent is running (start one with: ngx-sockmap run)");
	return -ENOENT;
}

void state_close(struct agent_maps *m)
{
	int i;

	for (i = 0; i < AGENT_MAPS_N; i++) {
		if (*map_slot(m, i) >= 0)
			close(*map_slot(m, i));
		*map_slot(m, i) = -1;
	}
}

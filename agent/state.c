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
#include <json-c/json.h>
#include "bpfutil.h"
#include "dataplane.h"
#include "log.h"
#include "paths.h"
#include "state.h"

#define STATE_NAME "agent.state"
#define LOCK_NAME  "agent.lock"

const char *run_dir(void)
{
	const char *d = getenv("NGX_SOCKMAP_RUN_DIR");

	return d && *d ? d : RUN_DIR_DEFAULT;
}

void run_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", run_dir(), name);
}

static int state_pid(void)
{
	char path[PATH_MAX];
	json_object *root, *v;
	int pid = 0;

	run_path(path, sizeof(path), STATE_NAME);
	root = json_object_from_file(path);
	if (root && json_object_object_get_ex(root, "pid", &v))
		pid = json_object_get_int(v);
	json_object_put(root);
	return pid;
}

/* The run directory as the agent makes it: a directory (not a link) of
 * its own user that nobody else may write; else another user could put a
 * link where agent.state is written, or a state of their own. */
static int run_dir_trusted(void)
{
	struct stat st;

	if (lstat(run_dir(), &st))
		return -errno;
	if (S_ISDIR(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 022))
		return 0;
	pr_warn("%s is %s: not made by ngx-sockmap; check it and remove it\n", run_dir(),
		!S_ISDIR(st.st_mode) ? "not a directory"
		: st.st_uid != geteuid() ? "another user's" : "writable by others");
	return -EPERM;
}

int state_lock(int *other_pid)
{
	char path[PATH_MAX];
	int fd;

	if (mkdir(run_dir(), 0700) && errno != EEXIST)
		return -errno;
	fd = run_dir_trusted();
	if (fd)
		return fd;
	run_path(path, sizeof(path), LOCK_NAME);
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		*other_pid = state_pid();
		close(fd);
		return -EBUSY;
	}
	return fd;
}

const char *const hazard_names[HZ__MAX] = { HAZARDS(NAMES_STR) };

/* ---- writing ---- */

void state_set_selftest(struct agent_info *info, const struct selftest_report *r)
{
	const struct selftest_check *ck;
	struct selftest_line *l;
	int i;

	for (i = 0; i < SELFTEST_CHECKS; i++) {
		ck = &r->checks[i];
		l = &info->selftest[i];
		snprintf(l->name, sizeof(l->name), "%s", ck->name);
		snprintf(l->result, sizeof(l->result), "%s", selftest_result_name(ck->result));
		l->critical = ck->critical;
		snprintf(l->detail, sizeof(l->detail), "%s", selftest_summary(ck));
	}
	info->n_selftest = SELFTEST_CHECKS;
}

static void add_str(json_object *o, const char *key, const char *s)
{
	json_object_object_add(o, key, json_object_new_string(s));
}

static void add_int(json_object *o, const char *key, int64_t v)
{
	json_object_object_add(o, key, json_object_new_int64(v));
}

static json_object *info_to_json(const struct agent_info *info, const struct agent_maps *m)
{
	json_object *root = json_object_new_object(), *a, *o;
	int i;

	add_int(root, "pid", info->pid);
	json_object_object_add(root, "pinned", json_object_new_boolean(info->pinned));
	json_object_object_add(root, "selftest_blocked",
			       json_object_new_boolean(info->selftest_blocked));
	add_str(root, "selftest_error", info->selftest_error);
	a = json_object_new_array();
	for (i = 0; i < info->n_selftest; i++) {
		o = json_object_new_object();
		add_str(o, "name", info->selftest[i].name);
		add_str(o, "result", info->selftest[i].result);
		add_str(o, "detail", info->selftest[i].detail);
		json_object_object_add(o, "critical",
				       json_object_new_boolean(info->selftest[i].critical));
		json_object_array_add(a, o);
	}
	json_object_object_add(root, "selftest", a);
	o = json_object_new_object();
	for (i = 0; i < MAP__MAX; i++)
		if (m->fd[i] >= 0)
			add_int(o, agent_map_names[i], map_id(m->fd[i]));
	json_object_object_add(root, "maps", o);
	a = json_object_new_array();
	for (i = 0; i < RING__MAX; i++) {
		o = json_object_new_object();
		add_int(o, "addr", (int64_t)info->rings[i].addr);
		add_int(o, "off", (int64_t)info->rings[i].off);
		add_str(o, "transport", info->rings[i].transport);
		json_object_array_add(a, o);
	}
	json_object_object_add(root, "rings", a);
	a = json_object_new_array();
	for (i = 0; i < info->n_xdp; i++) {
		o = json_object_new_object();
		add_str(o, "interface", info->xdp[i].name);
		add_str(o, "mode", info->xdp[i].mode);
		json_object_array_add(a, o);
	}
	json_object_object_add(root, "xdp", a);
	add_str(root, "metrics", info->metrics);
	add_str(root, "guard_hooks", info->guard_hooks);
	add_str(root, "guard_why", info->guard_why);
	add_str(root, "guard_ia32", info->guard_ia32);
	add_str(root, "netns_scope", info->netns_scope);
	o = json_object_new_object();
	for (i = 0; i < HZ__MAX; i++) {
		json_object *h = json_object_new_object();

		add_str(h, "mechanism", info->guards[i].mech);
		add_str(h, "why", info->guards[i].why);
		json_object_object_add(o, hazard_names[i], h);
	}
	json_object_object_add(root, "guards", o);
	a = json_object_new_array();
	for (i = 0; i < info->n_cgroups; i++) {
		o = json_object_new_object();
		add_int(o, "id", (int64_t)info->cgroups[i].id);
		add_str(o, "path", info->cgroups[i].path);
		add_str(o, "reason", info->cgroups[i].reason);
		json_object_array_add(a, o);
	}
	json_object_object_add(root, "cgroups", a);
	return root;
}

int state_write(const struct agent_info *info, const struct agent_maps *m)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	json_object *root = info_to_json(info, m);
	const char *text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	int fd, ret = 0;
	size_t len = strlen(text);

	run_path(path, sizeof(path), STATE_NAME);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	/* a file of our own, not one a link points at (run_dir_trusted) */
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len || write(fd, "\n", 1) != 1)
		ret = -errno ?: -EIO;
	if (fd >= 0 && close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	json_object_put(root);
	return ret;
}

void state_remove(int lock_fd)
{
	char path[PATH_MAX];

	run_path(path, sizeof(path), STATE_NAME);
	unlink(path);
	if (lock_fd >= 0)
		close(lock_fd);
}

/* ---- reading ---- */

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;

	return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static void copy_str(char *dst, size_t len, json_object *o, const char *key)
{
	snprintf(dst, len, "%s", json_object_get_string(get(o, key)) ?: "");
}

static void info_from_json(json_object *root, struct agent_info *info)
{
	json_object *a, *o;
	size_t i, n;

	info->pid = json_object_get_int(get(root, "pid"));
	info->pinned = json_object_get_boolean(get(root, "pinned"));
	info->selftest_blocked = json_object_get_boolean(get(root, "selftest_blocked"));
	copy_str(info->selftest_error, sizeof(info->selftest_error), root, "selftest_error");
	a = get(root, "selftest");
	n = json_object_array_length(a);
	for (i = 0; i < n && info->n_selftest < SELFTEST_CHECKS; i++) {
		struct selftest_line *l = &info->selftest[info->n_selftest++];

		o = json_object_array_get_idx(a, i);
		copy_str(l->name, sizeof(l->name), o, "name");
		copy_str(l->result, sizeof(l->result), o, "result");
		copy_str(l->detail, sizeof(l->detail), o, "detail");
		l->critical = json_object_get_boolean(get(o, "critical"));
	}
	a = get(root, "rings");
	for (i = 0; i < RING__MAX && i < json_object_array_length(a); i++) {
		o = json_object_array_get_idx(a, i);
		info->rings[i].addr = json_object_get_int64(get(o, "addr"));
		info->rings[i].off = json_object_get_int64(get(o, "off"));
		copy_str(info->rings[i].transport, sizeof(info->rings[i].transport), o, "transport");
	}
	a = get(root, "xdp");
	n = json_object_array_length(a);
	for (i = 0; i < n && info->n_xdp < XDP_MAX_IFACES; i++) {
		o = json_object_array_get_idx(a, i);
		copy_str(info->xdp[info->n_xdp].name, sizeof(info->xdp[0].name), o, "interface");
		copy_str(info->xdp[info->n_xdp].mode, sizeof(info->xdp[0].mode), o, "mode");
		info->n_xdp++;
	}
	copy_str(info->metrics, sizeof(info->metrics), root, "metrics");
	copy_str(info->guard_hooks, sizeof(info->guard_hooks), root, "guard_hooks");
	copy_str(info->guard_why, sizeof(info->guard_why), root, "guard_why");
	copy_str(info->guard_ia32, sizeof(info->guard_ia32), root, "guard_ia32");
	copy_str(info->netns_scope, sizeof(info->netns_scope), root, "netns_scope");
	for (i = 0; i < HZ__MAX; i++) {
		o = get(get(root, "guards"), hazard_names[i]);
		copy_str(info->guards[i].mech, sizeof(info->guards[i].mech), o, "mechanism");
		copy_str(info->guards[i].why, sizeof(info->guards[i].why), o, "why");
	}
	a = get(root, "cgroups");
	n = json_object_array_length(a);
	for (i = 0; i < n && info->n_cgroups < MAX_TARGETS; i++) {
		struct cg_target *t = &info->cgroups[info->n_cgroups++];

		o = json_object_array_get_idx(a, i);
		t->id = json_object_get_int64(get(o, "id"));
		copy_str(t->path, sizeof(t->path), o, "path");
		copy_str(t->reason, sizeof(t->reason), o, "reason");
	}
}

static int open_live(struct agent_maps *m, struct agent_info *info)
{
	char path[PATH_MAX];
	json_object *root, *maps, *id;
	int i, fd;

	run_path(path, sizeof(path), STATE_NAME);
	root = json_object_from_file(path);
	if (!root)
		return -ENOENT;
	info_from_json(root, info);
	maps = get(root, "maps");
	for (i = 0; i < MAP__MAX; i++) {
		if (!json_object_object_get_ex(maps, agent_map_names[i], &id))
			continue;
		fd = map_open_by_id(json_object_get_int64(id), agent_map_names[i]);
		if (fd >= 0)
			m->fd[i] = fd;
	}
	json_object_put(root);
	if (info->pid <= 0 || (kill(info->pid, 0) && errno == ESRCH))
		return -ESRCH; /* stale file: the agent died */
	return 0;
}

int state_open(struct agent_maps *m, struct agent_info *info, char *err, size_t errlen)
{
	memset(info, 0, sizeof(*info));
	agent_maps_init(m);
	if (open_live(m, info) == 0 && m->fd[MAP_STATS] >= 0 && m->fd[MAP_CONFIG] >= 0)
		return 0;
	/* A stale agent.state (agent killed) may still name live maps: the
	 * sockets it accelerated hold them.  That is not a running agent. */
	state_close(m);
	memset(info, 0, sizeof(*info));
	if (dataplane_open_pinned(m) == 0 && m->fd[MAP_STATS] >= 0 && m->fd[MAP_CONFIG] >= 0) {
		info->pinned = true;
		return 0;
	}
	state_close(m);
	snprintf(err, errlen, "no ngx-sockmap agent is running (start one with: ngx-sockmap run)");
	return -ENOENT;
}

void state_close(struct agent_maps *m)
{
	int i;

	for (i = 0; i < MAP__MAX; i++) {
		if (m->fd[i] >= 0)
			close(m->fd[i]);
		m->fd[i] = -1;
	}
}

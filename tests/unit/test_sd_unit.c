// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* --unit, as agent/target.c reads it: a unit's name completed as systemctl
 * completes it, and its cgroup found under the slices systemd puts it in,
 * in a tree laid out as systemd lays out /sys/fs/cgroup (cgroup v2 only)
 * and /sys/fs/cgroup/unified (hybrid): the same tree under either root. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "check.h"
#include "target.h"

static char root[PATH_MAX];

static void mk(const char *rel)
{
	char path[PATH_MAX * 2], *p;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = 0;
		mkdir(path, 0755);
		*p = '/';
	}
	mkdir(path, 0755);
}

/* the directory sd_unit_find gives for unit, relative to root; "" if none */
static const char *find(const char *unit)
{
	static char path[PATH_MAX];

	if (sd_unit_find(root, unit, path, sizeof(path)))
		return "";
	return path + strlen(root) + 1;
}

static const char *name(const char *in)
{
	static char out[300];
	char err[256];

	if (sd_unit_name(in, out, sizeof(out), err, sizeof(err)))
		snprintf(out, sizeof(out), "error: %s", err);
	return out;
}

static void layout(const char *top)
{
	/* the systemd tree below a cgroup v2 mount: under /sys/fs/cgroup, or
	 * under /sys/fs/cgroup/unified on a hybrid host */
	snprintf(root, sizeof(root), "%s", top);
	mk("init.scope");
	mk("system.slice/nginx.service");
	mk("system.slice/openresty.service");
	mk("system.slice/system-nginx.slice/nginx@blue.service");
	mk("system.slice/system-nginx.slice/nginx@green.service");
	mk("system.slice/system-angie.slice/angie@a\\x40b.service");
	/* Slice=web.slice, nested: web.slice/web-eu.slice */
	mk("web.slice/web-eu.slice/angie.service");
	/* a user's manager has an nginx.service of its own, and so does a
	 * container (a scope) and a service's own subtree: not the system's */
	mk("user.slice/user-1000.slice/user@1000.service/app.slice/nginx@red.service");
	mk("machine.slice/docker-1234.scope/system.slice/nginx@red.service");
	mk("system.slice/app.service/nginx@red.service");
}

int main(void)
{
	char tmpl[] = "/tmp/test_sd_unit.XXXXXX", *top = mkdtemp(tmpl), cmd[PATH_MAX + 16];
	char hybrid[PATH_MAX];

	CHECK(top != NULL, "mkdtemp");
	if (!top)
		return CHECK_SUMMARY();

	CHECK(!strcmp(name("nginx"), "nginx.service"), "a bare name is a service: %s", name("nginx"));
	CHECK(!strcmp(name("openresty.service"), "openresty.service"), "typed: %s",
	      name("openresty.service"));
	CHECK(!strcmp(name("nginx@blue"), "nginx@blue.service"), "an instance: %s",
	      name("nginx@blue"));
	CHECK(!strcmp(name("nginx\\x40blue"), "nginx\\x40blue.service"), "escapes kept: %s",
	      name("nginx\\x40blue"));
	CHECK(!strcmp(name("web.slice"), "web.slice"), "a slice: %s", name("web.slice"));
	CHECK(!strcmp(name("nginx.1"), "nginx.1.service"), "a dot is not a type: %s",
	      name("nginx.1"));
	CHECK(!strncmp(name("nginx@my/site"), "error: ", 7) && strstr(name("nginx@my/site"), "\\x2d"),
	      "'/' (%%I of an unescaped '-') refused, saying how to escape: %s",
	      name("nginx@my/site"));
	CHECK(!strncmp(name(""), "error: ", 7), "empty refused");
	CHECK(!strncmp(name("a b"), "error: ", 7), "a space refused");
	CHECK(!strncmp(name("../x"), "error: ", 7), "a path refused");

	snprintf(hybrid, sizeof(hybrid), "%s/unified", top);
	mkdir(hybrid, 0755);
	layout(top);
	layout(hybrid);
	for (int pass = 0; pass < 2; pass++) {
		const char *what = pass ? "hybrid" : "v2 only";

		snprintf(root, sizeof(root), "%s", pass ? hybrid : top);
		CHECK(!strcmp(find("nginx.service"), "system.slice/nginx.service"), "%s: nginx: %s",
		      what, find("nginx.service"));
		CHECK(!strcmp(find("openresty.service"), "system.slice/openresty.service"),
		      "%s: openresty: %s", what, find("openresty.service"));
		CHECK(!strcmp(find("nginx@blue.service"),
			      "system.slice/system-nginx.slice/nginx@blue.service"),
		      "%s: an instance, in its template's slice: %s", what, find("nginx@blue.service"));
		CHECK(!strcmp(find("angie.service"), "web.slice/web-eu.slice/angie.service"),
		      "%s: under nested slices: %s", what, find("angie.service"));
		CHECK(!strcmp(find("nginx@red.service"), ""),
		      "%s: a user's, a container's, a service's nginx@red are not the system's: %s",
		      what, find("nginx@red.service"));
		CHECK(!strcmp(find("nginx@gone.service"), ""), "%s: not running: nothing", what);
	}

	/* cg2_of_unit on a tree that is not cgroup v2 resolves the unit, then
	 * refuses the directory as not cgroup v2: the walk found it */
	{
		struct cg_target t;
		char err[PATH_MAX + 256] = "";

		snprintf(root, sizeof(root), "%s", top);
		CHECK(cg2_of_unit(top, "nginx@blue", &t, err, sizeof(err)) == -EMEDIUMTYPE &&
			      strstr(err, "system-nginx.slice/nginx@blue.service"),
		      "nginx@blue found: %s", err);
		CHECK(cg2_of_unit(top, "angie@a@b", &t, err, sizeof(err)) == -ENOENT,
		      "a unit whose own name is escaped is not found by another spelling: %s", err);
		CHECK(cg2_of_unit(top, "angie@a\\x40b", &t, err, sizeof(err)) == -EMEDIUMTYPE &&
			      strstr(err, "angie@a\\x40b.service"),
		      "a unit whose own name is escaped, named so: %s", err);
		CHECK(cg2_of_unit(top, "nginx\\x40blue", &t, err, sizeof(err)) == -EMEDIUMTYPE &&
			      strstr(err, "system-nginx.slice/nginx@blue.service"),
		      "\\x40 for '@': the unit it spells: %s", err);
		CHECK(cg2_of_unit(top, "nginx@gone", &t, err, sizeof(err)) == -ENOENT &&
			      strstr(err, "systemctl show -p ControlGroup nginx@gone.service"),
		      "not running: says how to find it: %s", err);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	if (system(cmd))
		printf("could not remove %s\n", top);
	return CHECK_SUMMARY();
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* What `status` prints: the agent (state.h), then the counter table. */
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include "paths.h"
#include "status.h"
#include "verdict.h"

/* text from column col on, wrapped at word boundaries to 80 columns */
static void print_wrapped(FILE *out, const char *text, int col)
{
	int width = col < 60 ? 80 - col : 20, len;

	do {
		len = (int)strlen(text);
		if (len > width) {
			len = width;
			while (len > 0 && text[len] != ' ')
				len--;
			if (!len)
				len = width;
		}
		fprintf(out, "%.*s\n", len, text);
		text += len;
		while (*text == ' ')
			text++;
		if (*text)
			fprintf(out, "%*s", col, "");
	} while (*text);
}

/* The verdict in one line: why it is paused, where the agent knows. */
static void verdict_text(const struct counters *c, const struct agent_info *info, char *buf,
			 size_t len)
{
	verdict_line(c, c->verdict, info->selftest_blocked ? info->selftest_error : NULL, buf,
		     len);
}

void status_print_text(FILE *out, const struct counters *c, const struct agent_info *info)
{
	char line[300];
	int i;

	/* first, the answer (exit code: verdict.h) */
	verdict_text(c, info, line, sizeof(line));
	print_wrapped(out, line, 0);
	fputc('\n', out);
	if (info->pid)
		fprintf(out, "agent       pid %d%s%s\n", info->pid, info->pinned ? ", pinned" : "",
			c->paused ? ", PAUSED" : "");
	else
		fprintf(out, "agent       not running; pinned data plane in %s%s\n", PIN_DIR,
			c->paused ? ", PAUSED" : "");
	for (i = 0; i < info->n_cgroups; i++)
		fprintf(out, "cgroup      %s (%s)\n", info->cgroups[i].path, info->cgroups[i].reason);
	for (i = 0; i < info->n_xdp; i++)
		fprintf(out, "xdp         %s (%s mode)\n", info->xdp[i].name, info->xdp[i].mode);
	if (info->metrics[0])
		fprintf(out, "metrics     http://%s/metrics\n", info->metrics);
	if (!strcmp(info->guard_hooks, "tracepoints")) {
		fprintf(out, "guard       tracepoints: every syscall on the host is slower while armed\n"
			"            (%s)\n", info->guard_why);
		/* guard.c guard_ia32() */
		if (!strcmp(info->guard_ia32, "guarded"))
			fprintf(out, "            32-bit (ia32) syscalls: seen on raw_syscalls:sys_enter\n");
		else if (!strcmp(info->guard_ia32, "standby"))
			fprintf(out, "            32-bit (ia32) syscalls: none yet (hooked at a 32-bit exec)\n");
		else if (!strcmp(info->guard_ia32, "unseen"))
			fprintf(out, "            32-bit (ia32) syscalls run here and are not seen\n");
		else if (!strcmp(info->guard_ia32, "off"))
			fprintf(out, "            32-bit (ia32) syscalls: none (ia32 emulation is off)\n");
	} else if (info->guard_hooks[0]) {
		fprintf(out, "guard       %s\n", info->guard_hooks);
	}
	if (info->netns_scope[0])
		fprintf(out, "namespaces  own only: %.56s\n", info->netns_scope);
	/* what guards each hazard here: one line each, 80 columns */
	for (i = 0; i < HZ__MAX && info->guards[HZ_RESETS].mech[0]; i++)
		fprintf(out, "%-12s%-8s%-12s%.48s\n", i ? "" : "hazards", hazard_names[i],
			info->guards[i].mech, info->guards[i].why);
	if (info->rings[RING_CONN].transport[0])
		fprintf(out, "events      %s%s%s\n", info->rings[RING_CONN].transport,
			info->rings[RING_CONN].addr ? " (read in place)" : " (BPF ring buffer: no arena here)",
			info->rings[RING_PKT].transport[0] ? ", XDP samples too" : "");
	fputc('\n', out);
	counters_print_text(out, c);
	if (info->n_selftest || info->selftest_error[0]) {
		char line[200];

		snprintf(line, sizeof(line), "%s%s", info->selftest_blocked
			 ? "NOT accelerating (kept paused): " : "run at start-up",
			 info->selftest_blocked ? info->selftest_error : "");
		fprintf(out, "\nselftest    ");
		print_wrapped(out, line, 12);
	}
	for (i = 0; i < info->n_selftest; i++) {
		fprintf(out, "  %-4s %-18s ", info->selftest[i].result, info->selftest[i].name);
		print_wrapped(out, info->selftest[i].detail, 26);
	}
}

static json_object *json_str(const char *s)
{
	return json_object_new_string(s);
}

json_object *status_cgroups_json(const struct cg_target *t, int n)
{
	json_object *a = json_object_new_array(), *o;
	int i;

	for (i = 0; i < n; i++) {
		o = json_object_new_object();
		json_object_object_add(o, "path", json_str(t[i].path));
		json_object_object_add(o, "id", json_object_new_uint64(t[i].id));
		json_object_object_add(o, "reason", json_str(t[i].reason));
		json_object_array_add(a, o);
	}
	return a;
}

json_object *status_to_json(const struct counters *c, const struct agent_info *info)
{
	json_object *root = json_object_new_object(), *o, *a, *checks;
	char line[300];
	int i;

	o = json_object_new_object();
	json_object_object_add(o, "pid", json_object_new_int(info->pid));
	json_object_object_add(o, "running", json_object_new_boolean(info->pid != 0));
	json_object_object_add(o, "pinned", json_object_new_boolean(info->pinned));
	json_object_object_add(root, "agent", o);
	o = json_object_new_object();
	json_object_object_add(o, "state", json_str(verdict_word(c->verdict)));
	json_object_object_add(o, "exit_code", json_object_new_int(verdict_exit_code(c->verdict)));
	verdict_text(c, info, line, sizeof(line));
	json_object_object_add(o, "line", json_str(line));
	json_object_object_add(root, "verdict", o);
	counters_add_json(root, c);
	o = json_object_new_object();
	json_object_object_add(o, "blocked", json_object_new_boolean(info->selftest_blocked));
	json_object_object_add(o, "error", json_str(info->selftest_error));
	checks = json_object_new_object();
	for (i = 0; i < info->n_selftest; i++) {
		json_object *ck = json_object_new_object();

		json_object_object_add(ck, "result", json_str(info->selftest[i].result[0] == 'F'
								       ? "fail" : info->selftest[i].result));
		json_object_object_add(ck, "detail", json_str(info->selftest[i].detail));
		json_object_object_add(ck, "critical",
				       json_object_new_boolean(info->selftest[i].critical));
		json_object_object_add(checks, info->selftest[i].name, ck);
	}
	json_object_object_add(o, "checks", checks);
	json_object_object_add(root, "selftest", o);
	a = json_object_new_array();
	for (i = 0; i < info->n_xdp; i++) {
		o = json_object_new_object();
		json_object_object_add(o, "interface", json_str(info->xdp[i].name));
		json_object_object_add(o, "mode", json_str(info->xdp[i].mode));
		json_object_array_add(a, o);
	}
	json_object_object_add(root, "xdp", a);
	json_object_object_add(root, "metrics", json_str(info->metrics));
	json_object_object_add(root, "guard_hooks", json_str(info->guard_hooks));
	json_object_object_add(root, "guard_why", json_str(info->guard_why));
	json_object_object_add(root, "guard_ia32", json_str(info->guard_ia32));
	o = json_object_new_object();
	for (i = 0; i < HZ__MAX; i++) {
		json_object *h = json_object_new_object();

		json_object_object_add(h, "mechanism", json_str(info->guards[i].mech));
		json_object_object_add(h, "why", json_str(info->guards[i].why));
		json_object_object_add(o, hazard_names[i], h);
	}
	json_object_object_add(root, "hazards", o);
	json_object_object_add(root, "netns_scope", json_str(info->netns_scope));
	o = json_object_new_object();
	json_object_object_add(o, "connections", json_str(info->rings[RING_CONN].transport));
	json_object_object_add(o, "packets", json_str(info->rings[RING_PKT].transport));
	json_object_object_add(root, "event_transport", o);
	json_object_object_add(root, "cgroups", status_cgroups_json(info->cgroups, info->n_cgroups));
	return root;
}

void status_print_json(FILE *out, const struct counters *c, const struct agent_info *info)
{
	json_object *root = status_to_json(c, info);

	fprintf(out, "%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
}

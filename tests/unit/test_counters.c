// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The counter table (agent/counters.c) and what renders it: every entry is
 * well formed, and status text, status JSON and /metrics all carry every
 * value of the table; JSON strings (cgroup paths, interface names) come
 * out escaped and read back identical.
 */
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "check.h"
#include "counters.h"
#include "status.h"

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

static void test_table_well_formed(void)
{
	unsigned int t, u, i;

	CHECK(counter_table_len > 0, "empty table");
	for (t = 0; t < counter_table_len; t++) {
		const struct counter_def *d = &counter_table[t];

		CHECK(d->key && *d->key, "entry %u has no key", t);
		CHECK(d->help && *d->help && strlen(d->help) <= 50,
		      "%s: help missing or over 50 columns (status prints it beside the value)", d->key);
		CHECK(d->n >= 1, "%s: no values", d->key);
		CHECK(d->off + d->n * sizeof(__u64) <= sizeof(struct counters),
		      "%s: values lie outside struct counters", d->key);
		CHECK(!d->label == (d->n == 1 && !d->label_values), "%s: label and values disagree",
		      d->key);
		for (i = 0; d->label && i < d->n; i++)
			CHECK(d->label_values[i] && *d->label_values[i], "%s: label value %u missing",
			      d->key, i);
		if (d->metric) {
			CHECK(!strncmp(d->metric, "ngx_sockmap_", 12), "%s: metric %s lacks the prefix",
			      d->key, d->metric);
			CHECK(ends_with(d->metric, "_total") == (d->type == CT_COUNTER),
			      "%s: %s: counters and only counters end in _total", d->key, d->metric);
			CHECK(d->unit != CU_BYTES || strstr(d->metric, "_bytes"),
			      "%s: a size's metric says _bytes", d->key);
		}
		for (u = 0; u < t; u++) {
			CHECK(strcmp(d->key, counter_table[u].key), "key %s twice", d->key);
			CHECK(!d->metric || !counter_table[u].metric ||
				      strcmp(d->metric, counter_table[u].metric),
			      "metric %s twice", d->metric);
		}
	}
}

/* Distinct values everywhere: value i of entry t is 1000 * (t + 1) + i. */
static void fill(struct counters *c)
{
	unsigned int t, i;

	memset(c, 0, sizeof(*c));
	for (t = 0; t < counter_table_len; t++) {
		const struct counter_def *d = &counter_table[t];

		for (i = 0; i < d->n; i++)
			((__u64 *)((char *)c + d->off))[i] = d->type == CT_BOOL ? 1 : 1000 * (t + 1) + i;
	}
}

static char *render(void (*fn)(FILE *, const struct counters *), const struct counters *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fn(f, c);
	fclose(f);
	return buf;
}

static void test_prometheus_has_every_value(void)
{
	struct counters c;
	char line[256], *text;
	unsigned int t, i;

	fill(&c);
	text = render(counters_print_prometheus, &c);
	for (t = 0; t < counter_table_len; t++) {
		const struct counter_def *d = &counter_table[t];

		if (!d->metric)
			continue;
		snprintf(line, sizeof(line), "# TYPE %s %s\n", d->metric,
			 d->type == CT_COUNTER ? "counter" : "gauge");
		CHECK(strstr(text, line), "no TYPE line for %s", d->metric);
		for (i = 0; i < d->n; i++) {
			if (d->label)
				snprintf(line, sizeof(line), "%s{%s=\"%s\"} %llu\n", d->metric, d->label,
					 d->label_values[i], (unsigned long long)counter_value(&c, d, i));
			else
				snprintf(line, sizeof(line), "%s %llu\n", d->metric,
					 (unsigned long long)counter_value(&c, d, i));
			CHECK(strstr(text, line), "/metrics lacks '%.*s'", (int)strlen(line) - 1, line);
		}
	}
	free(text);
}

static void test_text_has_every_key(void)
{
	struct counters c;
	unsigned int t, i;
	char *text;

	fill(&c);
	text = render(counters_print_text, &c);
	for (t = 0; t < counter_table_len; t++) {
		const struct counter_def *d = &counter_table[t];

		CHECK(strstr(text, d->key), "status text lacks %s", d->key);
		for (i = 0; d->label && i < d->n; i++)
			CHECK(strstr(text, d->label_values[i]), "status text lacks %s.%s", d->key,
			      d->label_values[i]);
	}
	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n"))
		CHECK(strlen(l) <= 80, "status line over 80 columns: %s", l);
	free(text);
}

static void test_json_has_every_value_and_escapes(void)
{
	static const char nasty[] = "/sys/fs/cgroup/a\"b\\c\n\t\x01end";
	static struct agent_info info;
	json_object *root, *back, *v;
	struct counters c;
	const char *text;
	unsigned int t, i;

	fill(&c);
	info.pid = 42;
	info.n_cgroups = 1;
	snprintf(info.cgroups[0].path, sizeof(info.cgroups[0].path), "%s", nasty);
	snprintf(info.cgroups[0].reason, sizeof(info.cgroups[0].reason), "named: \"x\"");
	info.n_xdp = 1;
	snprintf(info.xdp[0].name, sizeof(info.xdp[0].name), "e\"\\th0");
	snprintf(info.xdp[0].mode, sizeof(info.xdp[0].mode), "generic");
	root = status_to_json(&c, &info);
	text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN);
	CHECK(!strchr(text, '\n') && !strchr(text, '\t') && !strchr(text, '\x01'),
	      "control characters are escaped");
	back = json_tokener_parse(text);
	CHECK(back != NULL, "status JSON parses back: %s", text);
	if (!back)
		goto out;
	for (t = 0; t < counter_table_len; t++) {
		const struct counter_def *d = &counter_table[t];
		const char *dot = strchr(d->key, '.');
		char group[32];

		if (dot) { /* "a.b": b in object a */
			snprintf(group, sizeof(group), "%.*s", (int)(dot - d->key), d->key);
			CHECK(json_object_object_get_ex(back, group, &v) &&
				      json_object_object_get_ex(v, dot + 1, &v),
			      "JSON lacks %s", d->key);
		} else {
			CHECK(json_object_object_get_ex(back, d->key, &v), "JSON lacks %s", d->key);
		}
		for (i = 0; i < d->n; i++) {
			json_object *x = v;

			if (d->label)
				CHECK(json_object_object_get_ex(v, d->label_values[i], &x),
				      "JSON lacks %s.%s", d->key, d->label_values[i]);
			if (d->type == CT_BOOL)
				CHECK(json_object_is_type(x, json_type_boolean), "%s is a boolean", d->key);
			else
				CHECK(json_object_get_uint64(x) == counter_value(&c, d, i),
				      "%s[%u]: %llu", d->key, i,
				      (unsigned long long)json_object_get_uint64(x));
		}
	}
	v = json_object_array_get_idx(json_object_object_get(back, "cgroups"), 0);
	CHECK(!strcmp(json_object_get_string(json_object_object_get(v, "path")), nasty),
	      "cgroup path reads back identical");
	v = json_object_array_get_idx(json_object_object_get(back, "xdp"), 0);
	CHECK(!strcmp(json_object_get_string(json_object_object_get(v, "interface")), "e\"\\th0"),
	      "interface name reads back identical");
	json_object_put(back);
out:
	json_object_put(root);
}

int main(void)
{
	test_table_well_formed();
	test_prometheus_has_every_value();
	test_text_has_every_key();
	test_json_has_every_value_and_escapes();
	return CHECK_SUMMARY();
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * counters-doc: the README's lists of the counter table (agent/counters.c),
 * rendered from the table itself, so they say what `status`, `status
 * --json`, /metrics and `top` show.
 *
 *   build/counters-doc json      the counter fields of `status --json`
 *   build/counters-doc metrics   the /metrics rows of those counters
 *
 * `make counters-doc` writes both into README.md between their markers
 * (scripts/doc-block.py); tests/integration/readme_counters.sh fails when
 * the README holds anything else there.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "counters.h"

#define WIDTH 72

/* The paragraph being built, printed wrapped by para_end(). */
static char para[8192];
static size_t para_len;

/* Append the first n bytes of s. */
static void add_n(const char *s, size_t n)
{
	if (para_len + n >= sizeof(para)) {
		fprintf(stderr, "counters-doc: paragraph over %zu bytes\n", sizeof(para));
		exit(1);
	}
	memcpy(para + para_len, s, n);
	para_len += n;
	para[para_len] = 0;
}

static void add(const char *s)
{
	add_n(s, strlen(s));
}

/* Print the paragraph wrapped at WIDTH columns on its spaces. */
static void para_end(void)
{
	const char *p = para;
	int col = 0, n;

	while (*p) {
		n = strcspn(p, " ");
		if (col && col + 1 + n > WIDTH) {
			putchar('\n');
			col = 0;
		} else if (col) {
			putchar(' ');
			col++;
		}
		fwrite(p, 1, n, stdout);
		col += n;
		p += n;
		p += strspn(p, " ");
	}
	if (col)
		putchar('\n');
	para_len = 0;
	para[0] = 0;
}

/* "a, b, c": the label values of a vector */
static void add_values(const struct counter_def *d)
{
	for (unsigned int i = 0; i < d->n; i++) {
		add(i ? ", " : "");
		add(d->label_values[i]);
	}
}

/* The fields as `status --json` nests them: scalars as they are, "a.b"
 * keys inside object a, vectors as objects of their label values.  A run
 * of scalars shares one code span; each object has its own. */
static void doc_json(void)
{
	const struct counter_def *d;
	const char *dot;
	size_t glen = 0; /* length of the open "a." group's name, 0: none */
	bool scalars = false, first = true;

	for (unsigned int t = 0; t < counter_table_len; t++) {
		d = &counter_table[t];
		dot = d->label ? NULL : strchr(d->key, '.');
		if (glen && (!dot || (size_t)(dot - d->key) != glen ||
			     strncmp(d->key, counter_table[t - 1].key, glen))) {
			add("}`");
			glen = 0;
		}
		if (glen) { /* the next key of the open group */
			add(", ");
			add(dot + 1);
			continue;
		}
		if (scalars && (dot || d->label))
			add("`");
		if (!scalars || dot || d->label)
			add(first ? "`" : ", `");
		else
			add(", ");
		first = false;
		scalars = !dot && !d->label;
		if (dot) {
			glen = dot - d->key;
			add_n(d->key, glen);
			add("{");
			add(dot + 1);
		} else {
			add(d->key);
			if (d->label) {
				add("{");
				add_values(d);
				add("}`");
			}
		}
	}
	add(glen || scalars ? (glen ? "}`" : "`") : "");
	add(". True or false:");
	first = true;
	for (unsigned int t = 0; t < counter_table_len; t++) {
		d = &counter_table[t];
		if (d->type != CT_BOOL)
			continue;
		add(first ? " `" : ", `");
		add(d->key);
		add("`");
		first = false;
	}
	add("; every other field a number.");
	para_end();
}

static void doc_metrics(void)
{
	const struct counter_def *d;
	bool first = true;

	puts("| metric | type | `status` | meaning |");
	puts("|---|---|---|---|");
	for (unsigned int t = 0; t < counter_table_len; t++) {
		d = &counter_table[t];
		if (!d->metric)
			continue;
		printf("| `%s%s%s%s` | %s | `%s` | %s", d->metric, d->label ? "{" : "",
		       d->label ? d->label : "", d->label ? "}" : "",
		       d->type == CT_COUNTER ? "counter" : d->type == CT_BOOL ? "gauge, 1 or 0" : "gauge",
		       d->key, d->help);
		if (d->label) {
			add(": ");
			add_values(d);
			fputs(para, stdout);
			para_len = 0;
			para[0] = 0;
		}
		puts(" |");
	}
	putchar('\n');
	/* what `status` shows that /metrics does not */
	add("`status` and `status --json` only:");
	for (unsigned int t = 0; t < counter_table_len; t++) {
		d = &counter_table[t];
		if (d->metric)
			continue;
		add(first ? " `" : "; `");
		add(d->key);
		if (d->label) {
			add("{");
			add_values(d);
			add("}");
		}
		add("`: ");
		add(d->help);
		first = false;
	}
	add(".");
	para_end();
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "json"))
		doc_json();
	else if (argc == 2 && !strcmp(argv[1], "metrics"))
		doc_metrics();
	else {
		fprintf(stderr, "usage: counters-doc json|metrics\n");
		return 2;
	}
	return 0;
}

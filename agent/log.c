// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <bpf/libbpf.h>
#include "log.h"

int log_verbosity;

/* Is stderr the journal's stream (a systemd unit's)?  systemd sets
 * JOURNAL_STREAM to its device and inode (systemd.exec(5)); a stderr
 * redirected elsewhere by the unit's own command has another. */
static bool stderr_is_journal(void)
{
	unsigned long long dev, ino;
	const char *js = getenv("JOURNAL_STREAM");
	struct stat st;

	return js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 && !fstat(2, &st) &&
	       (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void log_msg(enum log_level lvl, const char *fmt, ...)
{
	/* sd-daemon(3)'s prefixes: the journal files each line at its
	 * priority (SD_WARNING, SD_INFO, SD_DEBUG), not all at info */
	static const char *const prio[] = { [LOG_WARN] = "<4>", [LOG_INFO] = "<6>",
					    [LOG_DEBUG] = "<7>" };
	static int journal = -1;
	va_list ap;

	if ((int)lvl > log_verbosity)
		return;
	if (journal < 0)
		journal = stderr_is_journal();
	va_start(ap, fmt);
	if (journal)
		fputs(prio[lvl], stderr);
	fputs("ngx-sockmap: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* libbpf warnings become our info, its info our debug. */
	int ours = level == LIBBPF_WARN ? LOG_INFO : LOG_DEBUG;

	if (ours > log_verbosity)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void log_setup_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libFuzzer target: iter_read_records (agent/sockiter.c), the records the
 * BPF iterators (reset_doomed, scan_unread) write into their seq file,
 * read back from a pipe.  The first byte chooses the record (reset or
 * unread) and how many fit the caller's array; the rest is the output.
 * Whole records must come out in order, the ones past max handed to the
 * callback, a partial one at the end dropped.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "accel.h"
#include "sockiter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seen {
	const uint8_t *data;
	size_t size, at;
	int calls;
};

static void more(const void *rec, void *ctx)
{
	struct seen *s = ctx;

	if (memcmp(rec, s->data + s->at, s->size))
		abort();
	s->at += s->size;
	s->calls++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[8 * sizeof(struct reset_record) + 8 * sizeof(struct unread_record)];
	size_t rsize, whole;
	struct seen s;
	int p[2], max, n;

	if (!size || size > 60000) /* a pipe holds 64 KiB: the write never blocks */
		return 0;
	rsize = data[0] & 1 ? sizeof(struct reset_record) : sizeof(struct unread_record);
	max = (data[0] >> 1) % 9;
	data++;
	size--;
	if (pipe(p))
		abort();
	if (size && write(p[1], data, size) != (ssize_t)size)
		abort();
	close(p[1]);
	whole = size / rsize;
	s = (struct seen){ .data = data, .size = rsize, .at = (size_t)max * rsize };
	n = iter_read_records(p[0], out, rsize, max, data[-1] & 0x80 ? NULL : more, &s);
	close(p[0]);
	if (n < 0 || n > max || (size_t)n != (whole < (size_t)max ? whole : (size_t)max))
		abort();
	if (memcmp(out, data, n * rsize))
		abort();
	if (!(data[-1] & 0x80) && (size_t)(n + s.calls) != whole)
		abort();
	return 0;
}

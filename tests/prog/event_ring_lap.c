// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The arena event ring with its real writer: xdp_count (one sample per
 * frame here) run through BPF_PROG_TEST_RUN, read by the agent's reader
 * through the skeleton's mapping of the arena.  Checks: events arrive in
 * order and intact; a lapped reader counts exactly the events it lost and
 * reads only whole events; wake-ups are batched: one per RING_WAKE_BATCH
 * events at most, none while one is outstanding.  Needs root.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "../unit/check.h"
#include "ring_reader.h"
#include "telemetry.h"
#include "telemetry.skel.h"

static struct telemetry_bpf *skel;
static unsigned char frame[64];
static int wakeups;

static int count_wakeup(void *ctx, void *data, size_t size)
{
	(void)ctx;
	(void)data;
	CHECK(size == sizeof(__u64), "wake-up record of %zu bytes", size);
	wakeups++;
	return 0;
}

/* n frames from 10.0.0.<src> */
static void send_frames(int n, int src)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = sizeof(frame),
		    .repeat = n);

	frame[14 + 15] = src;
	CHECK(!bpf_prog_test_run_opts(bpf_program__fd(skel->progs.xdp_count), &o),
	      "test run: %s", strerror(errno));
	CHECK(o.retval == XDP_PASS, "verdict %u", o.retval);
}

int main(void)
{
	struct ring_buffer *rb;
	struct ring_reader r;
	struct ring_event ev;
	__u64 total, n;
	int i;

	/* Ethernet + IPv4 from 10.0.0.x */
	memset(frame, 0, sizeof(frame));
	frame[12] = 0x08;
	frame[14] = 0x45;
	frame[14 + 8] = 64;
	frame[14 + 9] = 17;
	frame[14 + 12] = 10;

	skel = telemetry_bpf__open();
	if (!skel) {
		printf("FAIL: open: %s\n", strerror(errno));
		return 1;
	}
	skel->rodata->sample_every = 1;
	if (telemetry_bpf__load(skel)) {
		printf("FAIL: load: %s\n", strerror(errno));
		return 1;
	}
	rb = ring_buffer__new(bpf_map__fd(skel->maps.ring_wakeups), count_wakeup, NULL, NULL);
	CHECK(rb != NULL, "ring_buffer__new: %s", strerror(errno));
	ring_reader_init(&r, &skel->arena->ring);

	/* 1. fewer than a batch: in order, intact, no wake-up */
	send_frames(RING_WAKE_BATCH - 1, 1);
	ring_buffer__consume(rb);
	CHECK(wakeups == 0, "%d wake-ups for %d events (batch is %d)", wakeups,
	      RING_WAKE_BATCH - 1, RING_WAKE_BATCH);
	for (n = 0; ring_reader_next(&r, &ev) > 0; n++) {
		CHECK(ev.kind == EV_PACKET && ev.pkt.len == sizeof(frame) &&
			      ev.pkt.saddr[3] == htonl(0x0a000001) && ev.pkt.frame_kind == FK_IPV4,
		      "event %llu garbled", (unsigned long long)n);
		if (failures)
			break;
	}
	CHECK(n == RING_WAKE_BATCH - 1 && r.gaps == 0, "read %llu events, %llu gaps",
	      (unsigned long long)n, (unsigned long long)r.gaps);
	ring_reader_rearm(&r);

	/* 2. a batch and more while the reader sleeps: exactly one wake-up
	 * (the next ones wait until the reader re-arms) */
	send_frames(3 * RING_WAKE_BATCH, 2);
	ring_buffer__consume(rb);
	CHECK(wakeups == 1, "%d wake-ups for %d events before a re-arm, want 1", wakeups,
	      3 * RING_WAKE_BATCH);
	while (ring_reader_next(&r, &ev) > 0)
		;
	ring_reader_rearm(&r);
	send_frames(RING_WAKE_BATCH, 2);
	ring_buffer__consume(rb);
	CHECK(wakeups == 2, "a re-armed reader got %d wake-ups in all, want 2", wakeups);
	while (ring_reader_next(&r, &ev) > 0)
		;
	ring_reader_rearm(&r);

	/* 3. lapped: 5 rings' worth while the reader does not read */
	total = skel->arena->ring.head;
	send_frames(5 * RING_SLOTS + 7, 3);
	total = skel->arena->ring.head - total;
	CHECK(total == 5 * RING_SLOTS + 7, "head moved by %llu", (unsigned long long)total);
	n = 0;
	{
		__u64 e0 = r.events, g0 = r.gaps;

		__u64 last_ts = 0;

		while (ring_reader_next(&r, &ev) > 0) {
			CHECK(ev.kind == EV_PACKET && ev.pkt.saddr[3] == htonl(0x0a000003) &&
				      ev.pkt.len == sizeof(frame) && ev.pkt.frame_kind == FK_IPV4,
			      "a lapped reader got a garbled event");
			/* one writer on one CPU: positions in order have
			 * non-decreasing timestamps */
			CHECK(ev.ts_ns >= last_ts, "events out of order after the lap");
			last_ts = ev.ts_ns;
			n++;
		}
		CHECK(r.events - e0 == n, "events counter");
		CHECK(n == RING_SLOTS / 2, "after the lap %llu events readable, want %d",
		      (unsigned long long)n, RING_SLOTS / 2);
		CHECK(r.gaps - g0 + n == total, "gaps %llu + read %llu != written %llu",
		      (unsigned long long)(r.gaps - g0), (unsigned long long)n,
		      (unsigned long long)total);
	}
	for (i = 0; i < 3; i++)
		ring_buffer__consume(rb);
	CHECK(wakeups == 3, "%d wake-ups after the lap, want 3 (one per re-arm)", wakeups);

	ring_buffer__free(rb);
	telemetry_bpf__destroy(skel);
	return CHECK_SUMMARY();
}

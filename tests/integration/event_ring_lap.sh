#!/usr/bin/env bash
# timeout: 60
# Proves: the arena event ring with its real BPF writer (xdp_count through
# BPF_PROG_TEST_RUN) delivers events in order and intact, a lapped reader
# counts exactly what it lost and never reads a torn event, and wake-ups
# are batched (tests/prog/event_ring_lap.c).
. "$(dirname "$0")/../lib/common.sh"
arena_refused && skip "this host refuses BPF arena maps: the arena ring does not load here (the ring-buffer transport: event_ringbuf_transport.sh)"
"$TOP/build/prog/event_ring_lap" || fail "event ring checks failed"
ok "ring order, lapping and wake-up batching as specified"

#!/usr/bin/env bash
# timeout: 60
# Proves: the XDP observer passes every frame and counts it exactly once
# under the right kind (IPv4, IPv6, VLAN, non-IP, truncated at every header
# byte, malformed), and counts IP sources exactly (BPF_PROG_TEST_RUN with
# crafted frames; tests/prog/xdp_frames.c).
. "$(dirname "$0")/../lib/common.sh"
arena_refused && skip "this host refuses BPF arena maps: telemetry.bpf.o (its packet arena) does not load here (the ring-buffer transport: event_ringbuf_transport.sh)"
"$TOP/build/prog/xdp_frames" || fail "crafted-frame checks failed"
ok "crafted frames counted exactly"

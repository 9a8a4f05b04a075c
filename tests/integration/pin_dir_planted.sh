#!/usr/bin/env bash
# timeout: 60
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: a pin directory planted by another user is never adopted.  bpffs
# is often mounted 1777, so any user can create /sys/fs/bpf/ngx-sockmap
# before the agent does, and swap pins in it (issue 21, item 6).  With it
# owned by uid 65534, and then root's but mode 0777:
#  - `run --pin` refuses to start, naming the owner or the mode;
#  - a plain `run` starts anyway (a planted directory is no pinned data
#    plane) and says it ignores it; `status` reads no pins from it.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
pin_dir_fresh
cg_new CS srv

for how in owner mode; do
	rm -rf "$PIN"
	mkdir -m 0700 "$PIN"
	if [ $how = owner ]; then
		chown 65534:65534 "$PIN"
		want="belongs to uid 65534"
	else
		chmod 0777 "$PIN"
		want="writable by others"
	fi
	rc=0
	timeout 60 "$AGENT" run --pin -c "$CS" --no-follow --metrics off >"$TMP/pin.out" 2>"$TMP/pin.err" || rc=$?
	log "$how: run --pin: exit $rc: $(head -c 300 "$TMP/pin.err")"
	[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "$how: run --pin did not refuse a planted $PIN (exit $rc)"
	grep -q "$want" "$TMP/pin.err" || fail "$how: run --pin did not say '$want'"
	[ -z "$(ls -A "$PIN")" ] || fail "$how: run --pin pinned into the planted directory: $(ls -A "$PIN")"
	ok "$how: run --pin refuses, saying '$want', and pins nothing there"
	agent_start -c "$CS"
	grep -q "ignoring $PIN" "$TMP/agent.err" || fail "$how: the plain run did not say it ignores $PIN"
	ok "$how: a plain run starts and says it ignores the directory"
	agent_stop || fail "$how: agent did not exit 0"
done

#!/usr/bin/env bash
# timeout: 90
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: a pin directory planted by another user is never adopted.  bpffs
# is often mounted 1777, so any user can create /sys/fs/bpf/ngx-sockmap
# before the agent does, and swap pins in it (issue 21, item 6).  With it
# owned by uid 65534, and then root's but mode 0777:
#  - `run --pin` refuses to start, naming the owner or the mode;
#  - a plain `run` starts anyway (a planted directory is no pinned data
#    plane) and says it ignores it; `status` reads no pins from it.
# And `detach` (which the Debian prerm runs as root) touches nothing
# through a planted directory (issue 37, item 6): not the foreign SOCKHASH
# its sock_hash links to (uid 65534's directory), nor the directory of
# another product that the planted $PIN is a symbolic link to; it exits
# non-zero saying why, and the foreign map keeps its sk_msg program and
# its pins.  A link in a directory of root's is removed, not followed.
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

# Another product's SOCKHASH with its sk_msg program attached
# (tests/bpf/foreign_sockmap.bpf.c), pinned in its own directory F, and
# pinned again as F/d/sock_hash, the name of ours.
# (no dot: bpffs refuses names with one, kernel/bpf/inode.c bpf_lookup)
F=/sys/fs/bpf/nsm-foreign-$RUN_TAG-$$
on_exit "rm -rf '$F'"
mkdir -m 0700 "$F" "$F/maps" "$F/d"
bpftool prog load "$TOP/build/foreign_sockmap.bpf.o" "$F/prog" type sk_msg pinmaps "$F/maps" ||
	fail "loading the foreign sk_msg program"
bpftool map pin pinned "$F/maps/foreign_hash" "$F/d/sock_hash" || fail "pinning the foreign map again"
bpftool prog attach pinned "$F/prog" msg_verdict pinned "$F/maps/foreign_hash" ||
	fail "attaching the foreign sk_msg program"
# foreign_attached LABEL: its program is still attached (detaching it
# succeeds only then; attached again after) and its pins are there
foreign_attached() {
	bpftool prog detach pinned "$F/prog" msg_verdict pinned "$F/maps/foreign_hash" 2>/dev/null ||
		fail "$1: the foreign map lost its sk_msg program"
	bpftool prog attach pinned "$F/prog" msg_verdict pinned "$F/maps/foreign_hash" ||
		fail "$1: attaching the foreign program again"
	[ -e "$F/maps/foreign_hash" ] || fail "$1: the foreign map's pin was removed"
	[ -e "$F/d/sock_hash" ] || fail "$1: the foreign map's second pin was removed"
	ok "$1: the foreign map keeps its sk_msg program and its pins"
}
foreign_attached "before detach"

for how in link dir-link; do
	rm -rf "$PIN"
	if [ $how = link ]; then
		mkdir -m 0755 "$PIN"
		ln -s "$F/maps/foreign_hash" "$PIN/sock_hash"
		chown -h 65534:65534 "$PIN" "$PIN/sock_hash"
		want="belongs to uid 65534"
	else
		ln -s "$F/d" "$PIN"
		chown -h 65534:65534 "$PIN"
		want="is not a directory"
	fi
	rc=0
	"$AGENT" detach >"$TMP/detach.out" 2>&1 || rc=$?
	log "$how: detach: exit $rc: $(head -c 300 "$TMP/detach.out")"
	[ $rc -ne 0 ] || fail "$how: detach of a planted $PIN exited 0: $(cat "$TMP/detach.out")"
	grep -q "$want" "$TMP/detach.out" || fail "$how: detach did not say '$want'"
	ok "$how: detach refuses, saying '$want'"
	foreign_attached "$how"
	rm -rf "$PIN"
done
# A link in a directory of root's own (only root could have made it) is
# removed, not followed.
mkdir -m 0700 "$PIN"
ln -s "$F/maps/foreign_hash" "$PIN/sock_hash"
out=$("$AGENT" detach 2>&1) || fail "detach of root's $PIN holding a link: $out"
log "root's directory, sock_hash a link: detach: $out"
if [ -e "$PIN" ] || [ -L "$PIN" ]; then fail "$PIN still there after detach: $(ls -A "$PIN")"; fi
ok "root's directory holding a link: detach removes the link and the directory"
foreign_attached "a link in root's directory"

#!/usr/bin/env bash
# timeout: 60
# Proves: what nothing uses costs no memory per slot beyond its hash
# buckets.  splice_sessions is bounded like sock_hash (--max-sockets) but
# holds an element only per live splice session: at rest its
# bytes_memlock (charged to the agent's memory cgroup, as every map's)
# is its buckets, 16 bytes a slot, not a preallocated element per slot
# (an LRU hash preallocates them all: ~190 bytes a slot, 100 MiB at
# 524288, which took a 128 MiB container to its limit).  Also prints
# every map's share, for the record.
. "$(dirname "$0")/../lib/common.sh"

CG=$CG2/ngx-sockmap-test.$RUN_TAG.$$.mem # no traffic: an empty cgroup of our own
mkdir "$CG" || fail "mkdir $CG"
on_exit "cg_remove '$CG'"
n=262144
agent_start -c "$CG" --max-sockets $n

# the agent's maps: those of the programs that use its sock_hash
python3 - "${NGX_SOCKMAP_RUN_DIR:-/run/ngx-sockmap}/agent.state" $n >"$TMP/maps.txt" <<'PY' || fail "could not read the agent's maps"
import json, subprocess, sys
st = json.load(open(sys.argv[1]))
sh = st["maps"]["sock_hash"]
progs = json.loads(subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, check=True).stdout)
ids = set()
for p in progs:
    if sh in p.get("map_ids", []):
        ids |= set(p["map_ids"])
maps = [m for m in json.loads(subprocess.run(["bpftool", "-j", "map", "show"], capture_output=True,
                                             check=True).stdout) if m["id"] in ids]
for m in sorted(maps, key=lambda m: -m.get("bytes_memlock", 0)):
    print(m.get("name"), m.get("type"), m.get("max_entries"), m.get("bytes_memlock", 0))
PY
sed 's/^/# /' "$TMP/maps.txt" | head -n 12
line=$(grep '^splice_sessions ' "$TMP/maps.txt") || fail "no splice_sessions map among the agent's"
read -r _ type max bytes <<<"$line"
assert_eq "$max" $n "splice_sessions bounded by --max-sockets"
assert_le "$bytes" $((32 * n)) "splice_sessions at rest: its buckets only ($type, $((bytes / 1048576)) MiB for $n slots)"
total=$(awk '{ s += $4 } END { print s }' "$TMP/maps.txt")
log "every map of the agent's data plane at rest: $((total / 1048576)) MiB for $n sockets"
agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent exited cleanly"

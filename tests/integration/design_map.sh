# timeout: 30
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: docs/DESIGN.md's "Map of the rooms" names every source file of
# the tree (bpf, agent, nginx-module, tests, bench, scripts, docker, dist,
# debian, deploy's scripts; the fuzz targets, not their corpora)
# and no file that is
# gone, so the map a newcomer reads stays true.
. "$(dirname "$0")/../lib/common.sh"

cd "$TOP" || fail "cd $TOP"
# every path in backquotes on a "- `...`" line of the map section (up to
# the next section: the map opens the page)
sed -n '/^## Map of the rooms/,/^## /p' docs/DESIGN.md |
	grep -o '^- `[^`]*`\(, `[^`]*`\)*' | grep -o '`[^`]*`' | tr -d '`' | sort -u >"$TMP/map"
[ -s "$TMP/map" ] || fail "no map found in docs/DESIGN.md"
{
	git ls-files bpf agent nginx-module tests/run tests/lib tests/tools tests/prog tests/bpf tests/unit tests/vm bench scripts docker dist debian |
		grep -v '^tests/vm/known$'
	git ls-files deploy | grep -E '\.(sh|py)$'
	git ls-files tests/fuzz | grep -v '^tests/fuzz/corpus/'
} | sort -u >"$TMP/tree"
missing=$(comm -23 "$TMP/tree" "$TMP/map")
gone=$(comm -13 "$TMP/tree" "$TMP/map")
[ -z "$missing" ] || fail "files the map does not name: $(echo $missing)"
ok "every source file is on the map ($(wc -l <"$TMP/tree") files)"
[ -z "$gone" ] || fail "the map names files that are not in the tree: $(echo $gone)"
ok "the map names no file that is gone"

# timeout: 30
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: README.md's lists of the counter table, the counter fields of
# `status --json` and the /metrics table, are what agent/counters.c's table
# renders (build/counters-doc, which `make counters-doc` writes into the
# README), so the README names every counter status, JSON, /metrics and
# top show, under the names they show it by, and no counter that is gone.
. "$(dirname "$0")/../lib/common.sh"

cd "$TOP" || fail "cd $TOP"
gen=$TOP/build/counters-doc
[ -x "$gen" ] || fail "$gen not built (make tools)"
for block in json metrics; do
	"$gen" $block >"$TMP/$block.want" || fail "counters-doc $block failed"
	scripts/doc-block.py get README.md counters-$block >"$TMP/$block.have" ||
		fail "README.md has no <!-- counters-$block --> block"
	if ! diff -u "$TMP/$block.want" "$TMP/$block.have" >"$TMP/$block.diff"; then
		sed 's/^/#   /' "$TMP/$block.diff"
		fail "README.md's counters-$block block is not what agent/counters.c renders (- the table, + the README): run make counters-doc"
	fi
	ok "README's counters-$block block is agent/counters.c's table ($(wc -l <"$TMP/$block.want") lines)"
done

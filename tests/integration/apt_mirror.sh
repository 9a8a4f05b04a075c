# timeout: 20
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: scripts/apt-mirror.sh derives the Debian mirror only from apt's
# own sources (deb822 .sources, one-line .list) or NGX_SOCKMAP_MIRROR, and
# with neither names what to set in one line and exits 1, printing no
# host it guessed (it used to fall back to a public mirror, unreachable on
# a host that reaches only its own mirror).
. "$(dirname "$0")/../lib/common.sh"
M=$TOP/scripts/apt-mirror.sh
mirror() { NGX_SOCKMAP_APT_ETC=$TMP/$1 "$M" 2>"$TMP/err"; }

mkdir -p "$TMP/deb822/sources.list.d" "$TMP/oneline/sources.list.d" "$TMP/none/sources.list.d"
printf 'Types: deb\nURIs: http://mirror.example.test/debian\nSuites: bookworm\nComponents: main\n' \
	>"$TMP/deb822/sources.list.d/debian.sources"
printf 'deb [arch=amd64] http://mirror2.example.test/debian/ bookworm main\n' >"$TMP/oneline/sources.list"
printf 'deb http://ppa.example.test/ubuntu jammy main\n' >"$TMP/none/sources.list"

assert_eq "$(mirror deb822)" http://mirror.example.test/debian "from a deb822 .sources file"
assert_eq "$(mirror oneline)" http://mirror2.example.test/debian/ "from a one-line sources.list (options skipped)"
out=$(mirror none) && fail "no Debian source, yet exit 0 and '$out'"
assert_eq "$out" "" "no Debian source: nothing on stdout"
assert_eq "$(wc -l <"$TMP/err")" 1 "no Debian source: one line on stderr"
grep -q NGX_SOCKMAP_MIRROR "$TMP/err" || fail "the line does not say what to set: $(cat "$TMP/err")"
ok "it says: $(cat "$TMP/err")"
! grep -q "http" "$TMP/err" || fail "the line names a mirror host: $(cat "$TMP/err")"
ok "and names no mirror host"
assert_eq "$(NGX_SOCKMAP_MIRROR=http://own.test/debian NGX_SOCKMAP_APT_ETC=$TMP/none "$M")" \
	http://own.test/debian "NGX_SOCKMAP_MIRROR wins"

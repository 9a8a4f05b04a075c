#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Print the Debian mirror to use: $NGX_SOCKMAP_MIRROR when set (a user behind
# a company mirror, or a build that wants another one), else the one this
# system's apt already uses for Debian (deb822 .sources or one-line .list
# format: the only archive we may assume is reachable).  No host name is
# guessed: with neither, one line on stderr says what to set, and exit 1.
# Used by deps.sh (bookworm-backports), base-image.sh (debootstrap),
# tests/vm/kernels.sh and the Dockerfiles (both stages).
# NGX_SOCKMAP_APT_ETC: read apt's sources there instead of /etc/apt (tests).
if [ -n "${NGX_SOCKMAP_MIRROR:-}" ]; then
	echo "$NGX_SOCKMAP_MIRROR"
	exit 0
fi
etc=${NGX_SOCKMAP_APT_ETC:-/etc/apt}
m=$(
	{
		grep -hs '^URIs:' "$etc"/sources.list.d/*.sources | awk '{ print $2 }'
		grep -hs '^deb ' "$etc"/sources.list "$etc"/sources.list.d/*.list |
			awk '{ for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; break } }'
	} | grep -E '/debian/?$' | head -n 1
)
if [ -z "$m" ]; then
	echo "apt-mirror.sh: no Debian mirror in $etc/sources.list{,.d}: set NGX_SOCKMAP_MIRROR to the URL of the Debian mirror this host may reach (the one its apt uses)" >&2
	exit 1
fi
echo "$m"

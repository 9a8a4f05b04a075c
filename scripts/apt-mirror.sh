#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Print the Debian mirror to use: $NGX_SOCKMAP_MIRROR when set (a user behind
# a company mirror, or a build that wants another one), else the one this
# system's apt already uses for Debian (deb822 .sources or one-line .list
# format: the only archive we may assume is reachable), else deb.debian.org.
# Used by deps.sh (bookworm-backports), base-image.sh (debootstrap) and the
# Dockerfiles (both stages).
if [ -n "${NGX_SOCKMAP_MIRROR:-}" ]; then
	echo "$NGX_SOCKMAP_MIRROR"
	exit 0
fi
m=$(
	{
		grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{ print $2 }'
		grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list |
			awk '{ for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; break } }'
	} | grep -E '/debian/?$' | head -n 1
)
echo "${m:-http://deb.debian.org/debian}"

#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Build a Debian bookworm base image from Debian packages alone, for hosts
# that reach a Debian mirror but not Docker Hub:
#   debootstrap --variant=minbase bookworm (from this host's apt mirror)
#   -> docker import -> ngx-sockmap/base:bookworm (or $BASE_IMAGE / --tag).
# The compose Dockerfiles take it as BASE_IMAGE.  Does nothing when the
# image exists (--force rebuilds).  Needs root, debootstrap, a daemon
# (scripts/docker-up.sh).
#
# A minbase image is smaller than Docker Hub's debian:bookworm and differs
# in ways the Dockerfiles must not depend on: no /etc/services (so use
# numeric ports everywhere), no ca-certificates, no locales.
set -eu

TAG=${BASE_IMAGE:-ngx-sockmap/base:bookworm}
FORCE=0
while [ $# -gt 0 ]; do
	case $1 in
	--tag) TAG=$2; shift ;;
	--force) FORCE=1 ;;
	-h | --help) sed -n '3,13s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "base-image: unknown option '$1'" >&2; exit 2 ;;
	esac
	shift
done

die() { echo "base-image: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (debootstrap): sudo $0"
command -v debootstrap >/dev/null || die "debootstrap missing: apt-get install debootstrap (or: sudo make deps)"
docker info >/dev/null 2>&1 || die "no Docker daemon answers (scripts/docker-up.sh starts one)"
if [ $FORCE = 0 ] && docker image inspect "$TAG" >/dev/null 2>&1; then
	echo "base-image: $TAG exists"
	exit 0
fi

MIRROR=$("$(dirname "$0")/apt-mirror.sh")

ROOT=$(mktemp -d /var/tmp/ngx-sockmap-rootfs.XXXXXX)
trap 'rm -rf "$ROOT"' EXIT
trap 'exit 130' INT TERM
echo "base-image: debootstrap --variant=minbase bookworm from $MIRROR (about a minute)"
debootstrap --variant=minbase bookworm "$ROOT" "$MIRROR" >"$ROOT.log" 2>&1 || {
	tail -n 5 "$ROOT.log" >&2
	rm -f "$ROOT.log"
	die "debootstrap failed"
}
rm -f "$ROOT.log"
# As Docker Hub's Debian images do: no service starts during `apt-get
# install` in a build (policy-rc.d), no recommends, no apt caches kept.
printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d"
chmod +x "$ROOT/usr/sbin/policy-rc.d"
echo 'APT::Install-Recommends "false";' >"$ROOT/etc/apt/apt.conf.d/90ngx-sockmap"
echo "deb $MIRROR bookworm main" >"$ROOT/etc/apt/sources.list"
rm -rf "$ROOT"/var/cache/apt/archives/*.deb "$ROOT"/var/lib/apt/lists/* "$ROOT"/var/log/*.log
: >"$ROOT/etc/resolv.conf"   # Docker mounts its own
: >"$ROOT/etc/hostname"

tar --numeric-owner -C "$ROOT" -c . |
	docker import --change 'CMD ["/bin/bash"]' --message "debootstrap minbase bookworm ($MIRROR)" - "$TAG" >/dev/null ||
	die "docker import failed"
echo "base-image: $TAG ($(docker image inspect -f '{{.Size}}' "$TAG" | awk '{ printf "%d MB", $1 / 1e6 }'))"

#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Install the toolchain and test tools from Debian.  Idempotent: does nothing
# when everything is present.  libbpf >= 1.4 and a bpftool that knows it come
# from bookworm-backports (bookworm itself has libbpf 1.1).
#   scripts/deps.sh [--build] [--print]
# --build (make build-deps): only what building needs, debian/control's
# Build-Depends (debhelper for its debhelper-compat), dpkg-dev, make and
# gcc: enough for make, make install and make deb.  Without it (make deps,
# make demo, the tests): also the lab the tests and benches run, nginx,
# Docker, PostgreSQL, Redis, php-fpm, Prometheus, debootstrap.
# --print: name the packages and install nothing.
set -eu
cd "$(dirname "$0")/.."
build_only=0 print=0
for a; do
	case $a in
	--build) build_only=1 ;;
	--print) print=1 ;;
	*) echo "deps.sh: unknown option '$a' (--build, --print)" >&2; exit 2 ;;
	esac
done

# debian/control's Build-Depends, names only: one definition of what a
# build needs, which dpkg-checkbuilddeps also holds make deb to
build_depends() {
	sed -n '/^Build-Depends:/,/^[^ ]/{s/^Build-Depends://;/^[^ ]/d;p}' debian/control |
		tr ',' '\n' | sed -e 's/(.*)//' -e 's/\[.*\]//' -e 's/ //g' -e '/^$/d' \
			-e 's/^debhelper-compat$/debhelper/'
}

if [ $build_only = 1 ]; then
	PKGS="$(build_depends | grep -vx -e libbpf-dev -e bpftool) dpkg-dev make gcc"
	BACKPORTS_PKGS="libbpf-dev bpftool"
else
	# libclang-rt-19-dev: libFuzzer and clang's sanitizer runtimes (make
	# fuzz, tests/fuzz/)
	PKGS="clang-19 llvm-19 libclang-rt-19-dev libelf-dev zlib1g-dev libjson-c-dev libmicrohttpd-dev libcurl4-openssl-dev liburing-dev pkg-config make gcc
      nginx wrk curl iproute2 python3 procps util-linux kmod prometheus
      systemd man-db tcpdump"
	BACKPORTS_PKGS="libbpf-dev bpftool linux-libc-dev"
fi
# systemd for systemd-analyze (systemd_unit_verify.sh: the unit, in CI; no
# systemd need run), man-db for install_destdir.sh's rendering of the man
# page.  Not debhelper and lintian: deb_build_purge.sh skips without them
# (its first run, a debootstrap, would take 8 of CI's 20 minutes).
# tcpdump for nonce_pool.sh (the nonce on the wire).
# The compose setup (docker-compose.yml, make compose-bench, its test):
# Debian's Docker engine and docker-compose 1.29 unless an engine / compose
# v2 is already here (docker.io conflicts with docker-ce), and debootstrap
# for the offline base image.  No daemon is started here: whatever needs
# one starts it when none runs, and stops it again (scripts/docker-up.sh).
if [ $build_only = 0 ]; then
	command -v dockerd >/dev/null || PKGS="$PKGS docker.io"
	docker compose version >/dev/null 2>&1 || PKGS="$PKGS docker-compose"
	PKGS="$PKGS debootstrap"
fi
# Real servers behind nginx (tests/integration/real_*.sh, bench/run's
# php, pgbench, redis and grpc profiles): Debian's own, no recommends.
# postgresql-15 has initdb, pg_ctl and pgbench (a test runs its own
# cluster in a temp dir); libnginx-mod-stream is nginx's stream {} module,
# a dynamic module in Debian's nginx; gRPC is driven without generated
# stubs (raw-bytes methods), so no protobuf compiler.
[ $build_only = 1 ] || PKGS="$PKGS php8.2-fpm postgresql-15 redis-server redis-tools libnginx-mod-stream
      python3-websockets python3-grpcio"
# python3-matplotlib: make soak's chart (bench/soak.py draws RSS, fds,
# map entries and host memory over the run; without it, no chart)
[ $build_only = 1 ] || PKGS="$PKGS python3-matplotlib"
# nginx-dev: the headers and configure flags of Debian's nginx, which the
# nginx modules (nginx-module/, `make module`) are built against, as
# Debian builds third-party modules (nginx_module_var.sh loads them);
# with --build it comes from Build-Depends (make deb packages them).
[ $build_only = 1 ] || PKGS="$PKGS nginx-dev"
# gcc -m32 for guard_ia32.sh's 32-bit program (tests/tools/ia32kit.c);
# amd64 only, where ia32 syscalls exist
[ $build_only = 0 ] && [ "$(dpkg --print-architecture)" = amd64 ] && PKGS="$PKGS gcc-multilib"
if [ $print = 1 ]; then
	echo $PKGS $BACKPORTS_PKGS | tr ' ' '\n' | sort -u
	exit 0
fi
[ "$(id -u)" = 0 ] || { echo "make deps installs packages: run it as root (sudo make deps)" >&2; exit 1; }

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
bp_missing=""
if ! pkg-config --atleast-version=1.4 libbpf 2>/dev/null || ! command -v bpftool >/dev/null; then
	bp_missing=$BACKPORTS_PKGS
fi
if [ -z "$missing" ] && [ -z "$bp_missing" ]; then
	echo "deps: everything is installed"
	exit 0
fi

. /etc/os-release
if [ -n "$bp_missing" ] && [ "${VERSION_CODENAME:-}" = bookworm ] &&
   ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
	echo "deps: adding bookworm-backports (libbpf >= 1.4, bpftool)"
	mirror=$("$(dirname "$0")/apt-mirror.sh") || exit 1
	cat >/etc/apt/sources.list.d/ngx-sockmap-backports.sources <<EOS
Types: deb
URIs: $mirror
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOS
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# Installing nginx must not start a system nginx on port 80 here: tests and
# benches start their own.  policy-rc.d is Debian's switch for that.
cleanup_policy=0
if [ ! -e /usr/sbin/policy-rc.d ]; then
	printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
	chmod +x /usr/sbin/policy-rc.d
	cleanup_policy=1
fi
trap '[ $cleanup_policy = 1 ] && rm -f /usr/sbin/policy-rc.d' EXIT
if [ -n "$bp_missing" ]; then
	if [ "${VERSION_CODENAME:-}" = bookworm ]; then
		apt-get install -y -qq --no-install-recommends -t bookworm-backports $bp_missing
	else
		apt-get install -y -qq --no-install-recommends $bp_missing
	fi
fi
[ -n "$missing" ] && apt-get install -y -qq --no-install-recommends $missing
echo "deps: done"

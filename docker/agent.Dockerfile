# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The ngx-sockmap sidecar.  Built from this source tree in a build stage
# (clang-19, libbpf-dev >= 1.4 and bpftool from bookworm-backports, as
# `make deps` installs them on a host); the runtime stage carries the
# binary and its shared libraries only.  libbpf1 >= 1.4 is not in bookworm
# itself (1.1), hence backports in both stages, from the mirror
# scripts/apt-mirror.sh picks (APT_MIRROR, else the base image's own).
ARG BASE_IMAGE=debian:bookworm
ARG APT_MIRROR=

FROM ${BASE_IMAGE} AS build
ARG APT_MIRROR
COPY scripts/apt-mirror.sh /usr/local/bin/
RUN set -e; \
    echo "deb $(NGX_SOCKMAP_MIRROR=$APT_MIRROR apt-mirror.sh) bookworm-backports main" >/etc/apt/sources.list.d/backports.list; \
    apt-get update -qq; \
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        clang-19 llvm-19 libelf-dev zlib1g-dev libjson-c-dev libmicrohttpd-dev libcurl4-openssl-dev pkg-config make gcc libc6-dev; \
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        -t bookworm-backports libbpf-dev bpftool linux-libc-dev
WORKDIR /src
COPY Makefile VERSION ./
COPY scripts/check-tools.sh scripts/version.sh scripts/
COPY bpf bpf/
COPY agent agent/
# vmlinux.h comes from the build host's /sys/kernel/btf/vmlinux (sysfs is
# mounted read-only in build containers); CO-RE relocates at load time, so
# the image runs on other BTF kernels too.  No .git here: the version
# comes in as a build argument (scripts/version.sh on the host), else it
# is VERSION's.
ARG NGX_SOCKMAP_VERSION=
RUN make -j"$(nproc)" ${NGX_SOCKMAP_VERSION:+VERSION="$NGX_SOCKMAP_VERSION"} build/ngx-sockmap

FROM ${BASE_IMAGE}
ARG APT_MIRROR
COPY scripts/apt-mirror.sh /usr/local/bin/
RUN set -e; \
    echo "deb $(NGX_SOCKMAP_MIRROR=$APT_MIRROR apt-mirror.sh) bookworm-backports main" >/etc/apt/sources.list.d/backports.list; \
    apt-get update -qq; \
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        -t bookworm-backports libbpf1 libelf1; \
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        zlib1g libjson-c5 libmicrohttpd12 libcurl4; \
    rm -rf /var/lib/apt/lists/*
COPY --from=build /src/build/ngx-sockmap /usr/local/bin/ngx-sockmap
COPY docker/agent-entrypoint.sh /usr/local/bin/ngx-sockmap-sidecar
# `ngx-sockmap health` passes once the agent has attached and its loop
# turns (`status` exits non-zero while it does not accelerate: not a
# liveness answer).
HEALTHCHECK --interval=2s --timeout=5s --retries=30 CMD ["ngx-sockmap", "health"]
ENTRYPOINT ["/usr/local/bin/ngx-sockmap-sidecar"]

#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Fail with one line per missing build dependency; `make build-deps` installs them.
missing=0
need() { # need TEST PACKAGE WHAT
	if ! eval "$1" >/dev/null 2>&1; then
		echo "missing $3: install package '$2' (or run: sudo make build-deps)" >&2
		missing=1
	fi
}
need "command -v ${CLANG:-clang-19}" clang-19 "clang-19 (BPF compiler)"
need "command -v ${BPFTOOL:-bpftool}" "bpftool (bookworm-backports)" "bpftool"
need "pkg-config --atleast-version=1.4 libbpf" "libbpf-dev (>= 1.4, bookworm-backports)" "libbpf >= 1.4"
need "pkg-config --exists libelf" libelf-dev "libelf"
need "pkg-config --exists zlib" zlib1g-dev "zlib"
need "pkg-config --exists json-c" libjson-c-dev "json-c"
need "pkg-config --exists libcurl" libcurl4-openssl-dev "libcurl"
need "pkg-config --exists libmicrohttpd" libmicrohttpd-dev "libmicrohttpd"
need "test -r /sys/kernel/btf/vmlinux" "a kernel with CONFIG_DEBUG_INFO_BTF=y" "kernel BTF (/sys/kernel/btf/vmlinux)"
exit $missing

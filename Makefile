# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# ngx-sockmap: `make build-deps` once (build only: debian/control's
# Build-Depends), then `make`, `sudo make install` or `make deb`; `make
# deps` adds the lab `sudo make test` and `sudo make demo` run.

.DELETE_ON_ERROR:
.PHONY: FORCE all deps build-deps test tools fuzz fuzzers units demo bench soak bench-maps bench-remote-splice compose-bench clean check-tools \
	vmtest vmtest-quick vmtest-systemd kernels-doc counters-doc alerts-doc man install uninstall deb \
	module

BUILD    := build
CLANG    ?= clang-19
BPFTOOL  ?= bpftool
CC       ?= gcc
ARCH     := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
# One version string (scripts/version.sh: VERSION, +gitN.HASH from a
# checkout); `make deb` and the images pass theirs in.  The commit is the
# one the string names, for build_info's commit label.
VERSION  := $(shell ./scripts/version.sh)
COMMIT   := $(or $(shell echo '$(VERSION)' | sed -n 's/.*+git[0-9]*\.\([0-9a-f]*\).*/\1/p'),$(shell ./scripts/version.sh --commit),unknown)

ifeq ($(V),1)
Q :=
else
Q := @
endif

BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
	      -I$(BUILD) -Ibpf
CFLAGS     ?= -O2 -g
# make SANITIZE=address,undefined: the agent, the tools, the units and the
# test programs built with those sanitizers (-fsanitize=...), a run that
# trips one stops there (no recovery).  The flags are recorded in
# $(BUILD)/cflags: changing them rebuilds every object, so a sanitized and
# a plain object never end up in one binary.
SANITIZE   ?=
ifneq ($(SANITIZE),)
SAN_FLAGS  := -fsanitize=$(SANITIZE) -fno-sanitize-recover=all -fno-omit-frame-pointer
CFLAGS     += $(SAN_FLAGS)
LDFLAGS    += $(SAN_FLAGS)
endif
CFLAGS     += -std=gnu11 -Wall -Wextra -Werror -I$(BUILD) -Ibpf -Iagent \

LDLIBS     := -lbpf -lelf -lz -ljson-c -lmicrohttpd -lcurl

BPF_OBJS   := $(BUILD)/accel.bpf.o $(BUILD)/guard.bpf.o $(BUILD)/sockiter.bpf.o \
	      $(BUILD)/syscall_ops.bpf.o $(BUILD)/telemetry.bpf.o
SKELS      := $(BPF_OBJS:.bpf.o=.skel.h)
# keep the objects: bench/maps and tests load them too
.SECONDARY: $(BPF_OBJS) $(SKELS)
AGENT_SRCS := $(wildcard agent/*.c)
AGENT_OBJS := $(patsubst agent/%.c,$(BUILD)/agent/%.o,$(AGENT_SRCS))

all: $(BUILD)/ngx-sockmap

# One line per missing tool, naming the package; `make deps` installs all.
check-tools:
	$(Q)./scripts/check-tools.sh

# vmlinux.h is generated from the running kernel's BTF, not checked in: the
# programs only run on a kernel with BTF anyway (sk_storage, CO-RE), and a
# checked-in copy would silently drift from the kernel under test.  Written
# through a temporary file and cmp so an unchanged kernel rebuilds nothing.
$(BUILD)/vmlinux.h: | $(BUILD) check-tools
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp
	$(Q)cmp -s $@.tmp $@ 2>/dev/null && rm -f $@.tmp || mv $@.tmp $@

$(BUILD)/%.bpf.o: bpf/%.bpf.c bpf/*.h $(BUILD)/vmlinux.h | $(BUILD)
	@echo "  BPF     $@"
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	@echo "  SKEL    $@"
	$(Q)$(BPFTOOL) gen skeleton $< name $(notdir $*)_bpf > $@

# The version, rewritten only when it changes (temp file + cmp): a commit
# rebuilds the two objects that print it, and --version never goes stale.
$(BUILD)/version.h: FORCE | $(BUILD)
	$(Q)printf '#define NGX_SOCKMAP_VERSION "%s"\n#define NGX_SOCKMAP_COMMIT "%s"\n' \
		'$(VERSION)' '$(COMMIT)' >$@.tmp
	$(Q)cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
$(BUILD)/agent/main.o $(BUILD)/agent/metrics.o: $(BUILD)/version.h

# The compiler and flags the objects were built with: rewritten (and so
# newer than every object) only when they change.  Not the version: a new
# commit alone rebuilds nothing, as before.
$(BUILD)/cflags: FORCE | $(BUILD)
	$(Q)echo '$(CC) $(CPPFLAGS) $(filter-out -DNGX_SOCKMAP_VERSION=%,$(CFLAGS)) $(LDFLAGS)' >$@.tmp
	$(Q)cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
$(BUILD)/agent/%.o: agent/%.c agent/*.h bpf/*.h $(SKELS) $(BUILD)/cflags | $(BUILD)/agent
	@echo "  CC      $@"
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

# CPPFLAGS and LDFLAGS as make and dpkg-buildflags pass them: the Debian
# package's hardening (_FORTIFY_SOURCE, relro, bindnow) reaches the agent.
$(BUILD)/ngx-sockmap: $(AGENT_OBJS)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD) $(BUILD)/agent:
	$(Q)mkdir -p $@

# Test helpers: small C programs the integration tests drive.
# (ia32kit is a 32-bit program: guard_ia32.sh builds it with gcc -m32, where
# gcc-multilib is installed)
TOOLS := $(patsubst tests/tools/%.c,$(BUILD)/tools/%,$(filter-out tests/tools/ia32kit.c,$(wildcard tests/tools/*.c)))
# splicekit --io-uring and uringkit: liburing (scripts/deps.sh)
$(BUILD)/tools/splicekit $(BUILD)/tools/uringkit: TOOL_LIBS = -luring
$(BUILD)/tools/%: tests/tools/%.c tests/tools/toolkit.h $(BUILD)/cflags
	$(Q)mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror $(SAN_FLAGS) $< -o $@ -lpthread $(TOOL_LIBS)

UNITS := $(patsubst tests/unit/%.c,$(BUILD)/unit/%,$(wildcard tests/unit/*.c))
$(BUILD)/unit/%: tests/unit/%.c tests/unit/check.h bpf/*.h agent/*.h $(AGENT_OBJS)
	$(Q)mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $< $(filter-out $(BUILD)/agent/main.o,$(AGENT_OBJS)) -o $@ $(LDLIBS)

# The sock_diag reply parser reads bytes that any user who owns a network
# namespace can shape: its harness (with a fuzz loop) is built from
# agent/diag_parse.c alone, under ASan and UBSan, and runs with the units.
DIAG_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
$(BUILD)/unit/test_diag_parse: tests/unit/test_diag_parse.c agent/diag_parse.c agent/diag_parse.h \
			      tests/unit/check.h
	$(Q)mkdir -p $(dir $@)
	@echo "  CC      $@ (ASan, UBSan)"
	$(Q)$(CC) -std=gnu11 -O1 -g -Wall -Wextra -Werror -Iagent $(DIAG_SAN) \
		tests/unit/test_diag_parse.c agent/diag_parse.c -o $@

# BPF objects of the tests alone (tests/bpf: the matrix's host policies).
TEST_SKELS := $(patsubst tests/bpf/%.bpf.c,$(BUILD)/%.skel.h,$(wildcard tests/bpf/*.bpf.c))
.SECONDARY: $(TEST_SKELS) $(TEST_SKELS:.skel.h=.bpf.o)
$(BUILD)/%.bpf.o: tests/bpf/%.bpf.c $(BUILD)/vmlinux.h | $(BUILD)
	@echo "  BPF     $@"
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# Tests that load BPF objects (need root): tests/prog/*.c, run by the
# integration scripts.
PROGS := $(patsubst tests/prog/%.c,$(BUILD)/prog/%,$(wildcard tests/prog/*.c))
$(BUILD)/prog/%: tests/prog/%.c tests/unit/check.h bpf/*.h agent/*.h $(SKELS) $(TEST_SKELS) $(AGENT_OBJS)
	$(Q)mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(CFLAGS) $< $(filter-out $(BUILD)/agent/main.o,$(AGENT_OBJS)) -o $@ $(LDLIBS)

# README's lists of the counter table, from the table (make counters-doc)
$(BUILD)/counters-doc: scripts/counters_doc.c agent/*.h bpf/*.h $(AGENT_OBJS)
	@echo "  CC      $@"
	$(Q)$(CC) $(CFLAGS) $< $(filter-out $(BUILD)/agent/main.o,$(AGENT_OBJS)) -o $@ $(LDLIBS)

# the fuzz targets (tests/fuzz, their rule below)
FUZZERS := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))
tools: $(TOOLS) $(UNITS) $(PROGS) $(BUILD)/counters-doc $(FUZZERS)

# libFuzzer targets (tests/fuzz/fuzz_*.c), one per parser of outside
# input.  The parser's own source files (FUZZ_SRC_<target>, the rest of
# the agent's objects as built) are compiled with clang's coverage and
# ASan/UBSan; `make fuzz SECS=N` runs each target for N seconds
# (tests/fuzz/run), tests/run runs each for a few.
FUZZ_FLAGS := -std=gnu11 -g -O1 -Wall -Wextra -Werror -I$(BUILD) -Ibpf -Iagent \
	      -DNGX_SOCKMAP_VERSION='"$(VERSION)"' \
	      -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_SRC_fuzz_diag_parse := agent/diag_parse.c
FUZZ_SRC_fuzz_options    := agent/options.c
FUZZ_SRC_fuzz_procfs     := agent/target.c
FUZZ_SRC_fuzz_k8s        := agent/k8s.c
FUZZ_SRC_fuzz_ring       := agent/ring_reader.c
FUZZ_SRC_fuzz_iter       := agent/sockiter.c
FUZZ_SRC_fuzz_metrics    := agent/metrics.c
FUZZ_SRC_fuzz_notify     := agent/notify.c
.SECONDEXPANSION:
$(BUILD)/fuzz/%: tests/fuzz/%.c $$(FUZZ_SRC_$$*) agent/*.h bpf/*.h $(AGENT_OBJS)
	$(Q)mkdir -p $(dir $@)
	@# libFuzzer is the test lab's (make deps), not the agent's build
	@# (check-tools, the images, the package): asked for here only
	$(Q)test -e "$$($(CLANG) -print-file-name=libclang_rt.fuzzer-$$(uname -m).a)" || \
		{ echo "missing libFuzzer (the fuzz targets, tests/fuzz): install package 'libclang-rt-19-dev' (or run: sudo make deps)" >&2; exit 1; }
	@echo "  FUZZ    $@"
	$(Q)$(CLANG) $(FUZZ_FLAGS) $< $(FUZZ_SRC_$*) \
		$(filter-out $(BUILD)/agent/main.o $(patsubst agent/%.c,$(BUILD)/agent/%.o,$(FUZZ_SRC_$*)),$(AGENT_OBJS)) \
		-o $@ $(LDLIBS)

fuzzers: $(FUZZERS)

# the unit tests alone (.ci/run builds them with SANITIZE)
units: $(UNITS)

# make fuzz [SECS=N]: each target N seconds (default 60), one after the
# other, from its seed corpus (tests/fuzz/corpus/TARGET) and what earlier
# runs found (build/fuzz/corpus/TARGET); prints each target's executions.
SECS ?= 60
fuzz: $(FUZZERS)
	./tests/fuzz/run --secs $(SECS)


# The nginx modules ($sockmap, $sockmap_upstream: nginx-module/), built
# against the headers of the nginx they load into: Debian's nginx-dev
# (NGINX_SRC, its configure flags with --with-compat, as dh_nginx builds
# third-party modules), configured once in a copy under build/nginx.
# stream{} is a dynamic module in Debian (libnginx-mod-stream), hence
# --with-stream=dynamic: its headers, not its build.
NGINX_SRC ?= /usr/share/nginx/src
# debian/rules passes dpkg-buildflags here (hardening), as dh_nginx's
# nginx_mod build system does for Debian's own libnginx-mod-* packages
NGINX_CC_OPT ?=
NGINX_LD_OPT ?=
MODULES   := $(BUILD)/ngx_http_sockmap_module.so $(BUILD)/ngx_stream_sockmap_module.so

module: $(MODULES)

# configure without the agent's CFLAGS (make exports them when they came
# from the environment, as under dh): nginx's configure takes an exported
# CFLAGS instead of its own warning flags (auto/cc/conf), and the
# modules' unused-parameter warnings fail the build under -Werror
$(BUILD)/nginx/objs/Makefile: nginx-module/config | $(BUILD)
	@test -x $(NGINX_SRC)/configure || { echo "no $(NGINX_SRC): apt-get install nginx-dev (make deps)"; exit 1; }
	@echo "  NGINX   configure (build/nginx/configure.log)"
	$(Q)rm -rf $(BUILD)/nginx && mkdir -p $(BUILD)/nginx
	$(Q)cp -a $(NGINX_SRC)/. $(BUILD)/nginx/
	$(Q)cd $(BUILD)/nginx && env -u CFLAGS -u CPPFLAGS -u LDFLAGS bash -c '. ./conf_flags && ./configure "$${NGX_CONF_FLAGS[@]}" \
		--with-cc-opt="$(NGINX_CC_OPT)" --with-ld-opt="$(NGINX_LD_OPT)" \
		--with-stream=dynamic --add-dynamic-module=$(CURDIR)/nginx-module' >configure.log 2>&1 || \
		{ tail -20 configure.log; exit 1; }

$(MODULES): $(BUILD)/nginx/objs/Makefile nginx-module/*.c nginx-module/*.h bpf/*.h
	@echo "  NGINX   $(notdir $@)"
	$(Q)$(MAKE) -s -C $(BUILD)/nginx -f objs/Makefile objs/$(notdir $@) >$(BUILD)/nginx/make.log 2>&1 || \
		{ tail -30 $(BUILD)/nginx/make.log; exit 1; }
	$(Q)cp $(BUILD)/nginx/objs/$(notdir $@) $@

deps:
	./scripts/deps.sh

# what make, make install and make deb need, nothing the tests run
build-deps:
	./scripts/deps.sh --build

# the nginx modules too where nginx-dev is installed (nginx_module_var.sh
# skips without it)
test: all tools
	if [ -x $(NGINX_SRC)/configure ]; then $(MAKE) module; fi
	./tests/run

# The kernel matrix (tests/vm/run): Debian's kernels (bookworm's 6.1 and
# 6.12, trixie's 6.12, trixie-backports' 6.18 and newest, forky's) booted
# under QEMU with the host's root shared read-only, selftest and the core
# tests in each, plus the running kernel; build/vmtest/matrix.{md,json}.
# QEMU, busybox-static and cpio are installed here, not by `make deps`.
# VMTEST_ARGS: e.g. --kernels 6.1,forky --tests redirect.  vmtest-quick is
# the CI subset (QUICK_KERNELS in tests/vm/run, selftest + 3 tests each, no
# host column), two 1-vCPU VMs at a time: half the wall time of one 2-vCPU
# VM after the other on a 2-CPU host.
vmtest: all tools
	./scripts/vm-deps.sh
	./tests/vm/run $(VMTEST_ARGS)

vmtest-quick: all tools
	./scripts/vm-deps.sh
	NGX_SOCKMAP_VM_SMP=1 ./tests/vm/run --quick --jobs 2 $(VMTEST_ARGS)

# The Debian package under a real systemd in a QEMU guest (tests/vm/systemd.sh):
# install, follow nginx.service through start, restart and stop, purge.
# Opt-in: minutes under TCG; needs debhelper (make deb) besides vm-deps.
vmtest-systemd: all
	./scripts/vm-deps.sh
	./tests/vm/systemd.sh $(VMTEST_ARGS)

# docs/kernels.md: the hand-written part up to its "<!-- matrix -->" line,
# then the matrix of the last `make vmtest` (build/vmtest/matrix.md); the
# README's table between "<!-- kernels -->" and "<!-- /kernels -->" from
# its summary (build/vmtest/summary.md).
kernels-doc:
	@test -s build/vmtest/matrix.md || { echo "no build/vmtest/matrix.md: run 'sudo make vmtest' first"; exit 1; }
	sed '/^<!-- matrix -->$$/q' docs/kernels.md >docs/kernels.md.new
	sed '1,2d' build/vmtest/matrix.md >>docs/kernels.md.new
	mv docs/kernels.md.new docs/kernels.md
	./scripts/doc-block.py set README.md kernels <build/vmtest/summary.md

# README's counter fields of `status --json` and its /metrics table of the
# counters, between "<!-- counters-json -->" and "<!-- counters-metrics -->"
# and their closing marks, from agent/counters.c's table itself
# (scripts/counters_doc.c); tests/integration/readme_counters.sh fails when
# they drift.
counters-doc: $(BUILD)/counters-doc
	$(BUILD)/counters-doc json >$(BUILD)/counters-json.md
	$(BUILD)/counters-doc metrics >$(BUILD)/counters-metrics.md
	./scripts/doc-block.py set README.md counters-json <$(BUILD)/counters-json.md
	./scripts/doc-block.py set README.md counters-metrics <$(BUILD)/counters-metrics.md

# README's table of alerts, from deploy/prometheus/alerts.yml
# (deploy/prometheus/alerts-doc.py; deploy_rules.sh fails when they drift)
alerts-doc:
	./deploy/prometheus/alerts-doc.py >$(BUILD)/alerts.md
	./scripts/doc-block.py set README.md alerts <$(BUILD)/alerts.md

demo: deps
	$(MAKE) all tools
	./scripts/demo.sh

# BENCH_ARGS: options for bench/run, e.g. BENCH_ARGS="--profiles remote_close --rounds 5"
bench: all tools
	./bench/run $(BENCH_ARGS)

# bench/soak: real traffic through nginx, byte-checked, under faults on a
# schedule, for DURATION seconds (README, "Reliability"); a measurement
# like bench, not a test: tests/integration/soak_short.sh runs 60 s of it.
DURATION ?= 1800
soak: all tools
	./bench/soak --duration $(DURATION) $(SOAK_ARGS)

# The same before/after bench in containers (docker-compose.yml): builds
# its own images, agent included, so it needs no host build; a Docker
# daemon is started (and stopped again) only when none runs.
compose-bench:
	./bench/compose

# bench/maps: the per-packet cost of the telemetry's map choices
# (bench/mapcost/, BPF_PROG_TEST_RUN).  Its own rules: the sources live
# under bench/, and it is not part of `all` (a benchmark, not the agent).
# It also loads build/telemetry.bpf.o at run time (xdp_count as built);
# bench/maps builds both and measures without xdp_count if that fails.
MAPCOST := $(BUILD)/mapcost/cost
$(BUILD)/mapcost/cost.bpf.o: bench/mapcost/cost.bpf.c bpf/*.h $(BUILD)/vmlinux.h
	$(Q)mkdir -p $(dir $@)
	@echo "  BPF     $@"
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/mapcost/cost.skel.h: $(BUILD)/mapcost/cost.bpf.o
	@echo "  SKEL    $@"
	$(Q)$(BPFTOOL) gen skeleton $< name cost_bpf > $@

$(MAPCOST): bench/mapcost/cost.c $(BUILD)/mapcost/cost.skel.h bpf/*.h
	@echo "  CC      $@"
	$(Q)$(CC) $(CFLAGS) -I$(BUILD)/mapcost $< -o $@ -lbpf -lelf -lz -lpthread

bench-maps:
	./bench/maps

# bench/remote-splice: a remote client's session spliced past a relay in
# the kernel (sk_skb + sk_msg), measured against nginx's relay before the
# product offers it.  The prototype relay and its BPF side live under
# bench/skbsplice/; not part of `all`.
SKBSPLICE := $(BUILD)/skbsplice/skbsplice
$(BUILD)/skbsplice/skbsplice.bpf.o: bench/skbsplice/skbsplice.bpf.c bench/skbsplice/skbsplice.h $(BUILD)/vmlinux.h
	$(Q)mkdir -p $(dir $@)
	@echo "  BPF     $@"
	$(Q)$(CLANG) $(BPF_CFLAGS) -Ibench/skbsplice -c $< -o $@

$(BUILD)/skbsplice/skbsplice.skel.h: $(BUILD)/skbsplice/skbsplice.bpf.o
	@echo "  SKEL    $@"
	$(Q)$(BPFTOOL) gen skeleton $< name skbsplice_bpf > $@

$(SKBSPLICE): bench/skbsplice/skbsplice.c bench/skbsplice/skbsplice.h $(BUILD)/skbsplice/skbsplice.skel.h
	@echo "  CC      $@"
	$(Q)$(CC) $(CFLAGS) -Ibench/skbsplice -I$(BUILD)/skbsplice $< -o $@ -lbpf -lelf -lz

bench-remote-splice: all
	./bench/remote-splice $(BENCH_ARGS)

# ngx-sockmap(8), from the binary's own --help texts (scripts/manpage.py).
$(BUILD)/ngx-sockmap.8: $(BUILD)/ngx-sockmap scripts/manpage.py
	@echo "  MAN     $@"
	$(Q)python3 scripts/manpage.py $< >$@

man: $(BUILD)/ngx-sockmap.8

# make install [PREFIX=/usr/local] [DESTDIR=]: the agent in sbin, the
# systemd units (ngx-sockmap.service for nginx.service, the template
# ngx-sockmap@.service for other nginx-like units), ngx-sockmap(8), the
# options file the unit reads (/etc/default/ngx-sockmap, never
# overwritten), the README, the runbook and nginx-conf examples under
# share/doc, and the Grafana dashboard and Prometheus rules (with the
# example scrape configuration they expect) under share/ngx-sockmap,
# where a package's data goes.  systemd reads units from
# /usr/local/lib/systemd/system too; with PREFIX=/usr the unit goes where
# Debian's systemd packages put theirs (/lib/systemd/system).  `make
# uninstall` with the same variables removes every file install wrote,
# the options file only while it is as shipped.
PREFIX     ?= /usr/local
SBINDIR    ?= $(PREFIX)/sbin
MANDIR     ?= $(PREFIX)/share/man
DOCDIR     ?= $(PREFIX)/share/doc/ngx-sockmap
DATADIR    ?= $(PREFIX)/share/ngx-sockmap
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
UNITDIR    ?= $(if $(filter /usr,$(PREFIX)),/lib/systemd/system,$(PREFIX)/lib/systemd/system)
INSTALL    ?= install
DOCS       := README.md docs/DESIGN.md docs/runbook.md
EXAMPLES   := $(wildcard nginx-conf/*.conf)
GRAFANA    := deploy/grafana/ngx-sockmap.json
PROMETHEUS := deploy/prometheus/alerts.yml deploy/prometheus/prometheus.yml

# the unit is written here, not in build/: it depends on SBINDIR and
# SYSCONFDIR, which make would not see change
install: $(BUILD)/ngx-sockmap $(BUILD)/ngx-sockmap.8
	$(INSTALL) -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(MANDIR)/man8 \
		$(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(SYSCONFDIR)/default \
		$(DESTDIR)$(DATADIR)/grafana $(DESTDIR)$(DATADIR)/prometheus
	$(INSTALL) -m 0755 $(BUILD)/ngx-sockmap $(DESTDIR)$(SBINDIR)/ngx-sockmap
	sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|/etc/default/ngx-sockmap|$(SYSCONFDIR)/default/ngx-sockmap|g' \
		dist/ngx-sockmap.service.in >$(DESTDIR)$(UNITDIR)/ngx-sockmap.service
	sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|/etc/default/ngx-sockmap|$(SYSCONFDIR)/default/ngx-sockmap|g' \
		dist/ngx-sockmap@.service.in >$(DESTDIR)$(UNITDIR)/ngx-sockmap@.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/ngx-sockmap.service $(DESTDIR)$(UNITDIR)/ngx-sockmap@.service
	$(INSTALL) -m 0644 $(BUILD)/ngx-sockmap.8 $(DESTDIR)$(MANDIR)/man8/ngx-sockmap.8
	$(INSTALL) -m 0644 $(DOCS) $(DESTDIR)$(DOCDIR)/
	$(INSTALL) -m 0644 $(EXAMPLES) $(DESTDIR)$(DOCDIR)/examples/
	$(INSTALL) -m 0644 $(GRAFANA) $(DESTDIR)$(DATADIR)/grafana/
	$(INSTALL) -m 0644 $(PROMETHEUS) $(DESTDIR)$(DATADIR)/prometheus/
	[ -e $(DESTDIR)$(SYSCONFDIR)/default/ngx-sockmap ] || \
		$(INSTALL) -m 0644 dist/ngx-sockmap.default $(DESTDIR)$(SYSCONFDIR)/default/ngx-sockmap
	@[ -n "$(DESTDIR)" ] || echo "installed; then: systemctl daemon-reload && systemctl enable --now ngx-sockmap"

# Of the directories only share/doc/ngx-sockmap and share/ngx-sockmap are ours: sbin, man8, the
# unit directory and /etc/default stay, empty or not, as in a package.
uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/ngx-sockmap $(DESTDIR)$(UNITDIR)/ngx-sockmap.service \
		$(DESTDIR)$(UNITDIR)/ngx-sockmap@.service $(DESTDIR)$(MANDIR)/man8/ngx-sockmap.8
	rm -f $(addprefix $(DESTDIR)$(DOCDIR)/,$(notdir $(DOCS))) \
		$(addprefix $(DESTDIR)$(DOCDIR)/examples/,$(notdir $(EXAMPLES)))
	rm -f $(addprefix $(DESTDIR)$(DATADIR)/grafana/,$(notdir $(GRAFANA))) \
		$(addprefix $(DESTDIR)$(DATADIR)/prometheus/,$(notdir $(PROMETHEUS)))
	-rmdir $(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(DOCDIR) $(DESTDIR)$(DATADIR)/grafana \
		$(DESTDIR)$(DATADIR)/prometheus $(DESTDIR)$(DATADIR) 2>/dev/null
	@if cmp -s dist/ngx-sockmap.default $(DESTDIR)$(SYSCONFDIR)/default/ngx-sockmap; then \
		rm -f $(DESTDIR)$(SYSCONFDIR)/default/ngx-sockmap; \
	elif [ -e $(DESTDIR)$(SYSCONFDIR)/default/ngx-sockmap ]; then \
		echo "kept $(DESTDIR)$(SYSCONFDIR)/default/ngx-sockmap: it was changed"; fi

# make deb: the Debian package (debian/, debhelper) in build/deb/, built in
# a copy of the tree by scripts/deb.sh; the agent keeps this tree's version.
deb:
	./scripts/deb.sh $(VERSION)

clean:
	rm -rf $(BUILD)

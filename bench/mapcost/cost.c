// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * bench/maps: the per-packet cost of the XDP telemetry's map choices,
 * measured with BPF_PROG_TEST_RUN and `repeat` (no NIC, no traffic): the
 * programs of cost.bpf.c, plus xdp_count as built (build/telemetry.bpf.o).
 * Prints a Markdown table; --json FILE writes every run.  Needs root.
 */
#define _GNU_SOURCE
#include <argp.h>
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "telemetry.h"
#include "event_ring.h"
#include "cost.skel.h"

#define MAX_RUNS    101
#define MAX_SPANS   8
#define FRAME_LEN   64 /* Ethernet + IPv4 + UDP + 22 bytes: a small packet */
#define FRAME6_LEN  (FRAME_LEN + 20)

enum prog_id {
	P_BASELINE,
	P_CLOCK,
	P_HASH,
	P_PERCPU,
	P_LRU,
	P_LRU_NC,
	P_ARENA,
	P_RINGBUF,
	P_XDP_COUNT,
	P__MAX
};

static const struct {
	const char *name;  /* for --programs and JSON */
	const char *label; /* for the table */
	bool per_source;   /* cost depends on the working set */
} progs[P__MAX] = {
	[P_BASELINE] = { "baseline", "baseline (parse only)", false },
	[P_CLOCK] = { "clock", "bpf_ktime_get_ns only", false },
	[P_HASH] = { "hash", "HASH + atomic add", true },
	[P_PERCPU] = { "percpu_hash", "PERCPU_HASH", true },
	[P_LRU] = { "lru_percpu_hash", "LRU_PERCPU_HASH", true },
	[P_LRU_NC] = { "lru_percpu_nocommon", "LRU_PERCPU_HASH, NO_COMMON_LRU", true },
	[P_ARENA] = { "arena_ring", "arena ring, event/packet", false },
	[P_RINGBUF] = { "ringbuf", "ring buffer, record/packet", false },
	[P_XDP_COUNT] = { "xdp_count", "xdp_count as built", false },
};

static struct {
	int runs, repeat, cpus[2], entries, ringbuf_kb;
	bool contended, ipv6, verbose;
	unsigned spans[MAX_SPANS];
	int n_spans;
	bool want[P__MAX];
	const char *json, *telemetry_obj;
} opt = {
	.runs = 11,
	.repeat = 1000000,
	.cpus = { 0, 1 },
	.entries = SRC_STATS_MAX,
	.ringbuf_kb = 512,
	.contended = true,
	.spans = { 1, 1000, 100000 },
	.n_spans = 3,
};

/* One cell of the table: a program, a working set, 1 or 2 CPUs. */
struct cell {
	double ns[MAX_RUNS];
	int n;
	double median, min, max;
	bool done;
	long entries;   /* entries in the program's map after the runs, -1: none */
	__u64 drops;    /* ring buffer reservations that failed */
	char note[96];
};
static struct cell cells[MAX_SPANS][P__MAX][2];

static unsigned char frame[FRAME6_LEN];
static int ringbuf_batch; /* packets between two drains of the ring buffer */
static size_t frame_len;

/* ------------------------------------------------------------ options -- */

const char *argp_program_version = "bench/maps (ngx-sockmap)";
static const char doc[] =
	"Per-packet cost of the XDP telemetry's map choices, with BPF_PROG_TEST_RUN.\n"
	"\n"
	"Each program parses the same crafted frame with the parser xdp_count uses\n"
	"(bpf/pkt_parse.h), gives it one of N sources (a random index below N: the\n"
	"kernel repeats the same frame, so the working set is made in the program,\n"
	"at the same cost in every program), then:\n"
	"  baseline         nothing more\n"
	"  clock            bpf_ktime_get_ns() (both rings' events carry a time)\n"
	"  hash             BPF_MAP_TYPE_HASH, __sync_fetch_and_add on the counters\n"
	"  percpu_hash      BPF_MAP_TYPE_PERCPU_HASH, plain adds\n"
	"  lru_percpu_hash  BPF_MAP_TYPE_LRU_PERCPU_HASH, plain adds (what xdp_count\n"
	"                   uses)\n"
	"  lru_percpu_nocommon  the same with BPF_F_NO_COMMON_LRU (an LRU list\n"
	"                   per CPU, no shared lock on a miss)\n"
	"  arena_ring       one event per packet into the bpf/event_ring.h arena ring\n"
	"  ringbuf          one bpf_ringbuf_reserve/submit record per packet (same\n"
	"                   event) into a --ringbuf-kb ring, drained whenever both\n"
	"                   CPUs could fill it (so reservations never fail)\n"
	"  xdp_count        bpf/telemetry.bpf.c as built, one source only (it has\n"
	"                   no source spreading): the real program, for reference\n"
	"The maps hold --entries sources (default SRC_STATS_MAX, as src_stats): with\n"
	"more sources than that, HASH and PERCPU_HASH stop taking new ones (the\n"
	"entries column shows it) and LRU evicts.\n"
	"\n"
	"A run is --repeat packets through test_run on one CPU, the kernel's average\n"
	"(whole ns, time it gave to other tasks left out);\n"
	"a cell is the median of --runs runs, programs interleaved within each run\n"
	"round.  '2 CPUs': two threads, pinned to the two --cpus, run the same\n"
	"program on the same maps at once (cache-line bouncing on shared counters,\n"
	"bucket and ring locks); the value is the per-packet time on each CPU.\n"
	"net = program - baseline, same working set and CPUs.\n"
	"\n"
	"EXAMPLES:\n"
	"  sudo bench/maps                      the full table (about 2 minutes)\n"
	"  sudo bench/maps -s 1 -n 5 -r 200000  a quick look\n"
	"  sudo bench/maps -p baseline,lru_percpu_hash --no-contended\n"
	"  sudo bench/maps --json maps.json > maps.md\n"
	"\n"
	"OPTIONS:";

enum { OPT_NO_CONTENDED = 1000, OPT_JSON, OPT_TELEMETRY_OBJ, OPT_ENTRIES, OPT_RINGBUF_KB };
static const struct argp_option options[] = {
	{ "runs", 'n', "N", 0, "runs per cell, the median is reported (default 11)", 0 },
	{ "repeat", 'r', "N", 0, "packets per run (default 1000000)", 0 },
	{ "sources", 's', "LIST", 0, "working sets, comma separated (default 1,1000,100000)", 0 },
	{ "programs", 'p', "LIST", 0, "programs to measure (default all, see above)", 0 },
	{ "cpus", 'c', "A,B", 0, "CPUs: 1-CPU runs on A, 2-CPU runs on A and B (default 0,1)", 0 },
	{ "no-contended", OPT_NO_CONTENDED, NULL, 0, "skip the 2-CPU runs", 0 },
	{ "entries", OPT_ENTRIES, "N", 0, "max_entries of the per-source maps (default 16384)", 0 },
	{ "ringbuf-kb", OPT_RINGBUF_KB, "KB", 0, "ring buffer size, a power of two >= 4 (default "
	  "512); drained every time it is 45% full", 0 },
	{ "ipv6", '6', NULL, 0, "an IPv6 frame instead of IPv4", 0 },
	{ "json", OPT_JSON, "FILE", 0, "also write all runs as JSON to FILE ('-': stdout, "
	  "then no table)", 0 },
	{ "telemetry-obj", OPT_TELEMETRY_OBJ, "PATH", 0,
	  "xdp_count's object (default: telemetry.bpf.o next to this binary's build dir)", 0 },
	{ "verbose", 'v', NULL, 0, "libbpf's messages", 0 },
	{ 0 },
};

static int parse_int(const char *s, long lo, long hi, long *out)
{
	char *e;
	long v;

	errno = 0;
	v = strtol(s, &e, 10);
	if (errno || e == s || *e || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static error_t parse_opt(int key, char *arg, struct argp_state *st)
{
	char *tok, *save, buf[256];
	long v;
	int i, n;

	switch (key) {
	case 'n':
		if (parse_int(arg, 1, MAX_RUNS, &v))
			argp_error(st, "--runs: want 1..%d, got '%s'", MAX_RUNS, arg);
		opt.runs = v;
		break;
	case 'r':
		if (parse_int(arg, 1000, 100000000, &v))
			argp_error(st, "--repeat: want 1000..100000000, got '%s'", arg);
		opt.repeat = v;
		break;
	case 's':
		snprintf(buf, sizeof(buf), "%s", arg);
		opt.n_spans = 0;
		for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			if (opt.n_spans == MAX_SPANS || parse_int(tok, 1, 1 << 24, &v))
				argp_error(st, "--sources: up to %d numbers in 1..%d, got '%s'",
					   MAX_SPANS, 1 << 24, arg);
			opt.spans[opt.n_spans++] = v;
		}
		if (!opt.n_spans)
			argp_error(st, "--sources: empty list");
		break;
	case 'p':
		snprintf(buf, sizeof(buf), "%s", arg);
		memset(opt.want, 0, sizeof(opt.want));
		n = 0;
		for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), n++) {
			for (i = 0; i < P__MAX && strcmp(tok, progs[i].name); i++)
				;
			if (i == P__MAX)
				argp_error(st, "--programs: unknown program '%s'", tok);
			opt.want[i] = true;
		}
		if (!n)
			argp_error(st, "--programs: empty list");
		break;
	case 'c':
		if (sscanf(arg, "%d,%d%n", &opt.cpus[0], &opt.cpus[1], &n) != 2 || arg[n] ||
		    opt.cpus[0] < 0 || opt.cpus[1] < 0 || opt.cpus[0] == opt.cpus[1])
			argp_error(st, "--cpus: want two different CPU numbers A,B, got '%s'", arg);
		break;
	case OPT_NO_CONTENDED:
		opt.contended = false;
		break;
	case OPT_ENTRIES:
		if (parse_int(arg, 1, 1 << 24, &v))
			argp_error(st, "--entries: want 1..%d, got '%s'", 1 << 24, arg);
		opt.entries = v;
		break;
	case OPT_RINGBUF_KB:
		if (parse_int(arg, 4, 1 << 20, &v) || (v & (v - 1)))
			argp_error(st, "--ringbuf-kb: want a power of two in 4..%d, got '%s'", 1 << 20,
				   arg);
		opt.ringbuf_kb = v;
		break;
	case '6':
		opt.ipv6 = true;
		break;
	case OPT_JSON:
		opt.json = arg;
		break;
	case OPT_TELEMETRY_OBJ:
		opt.telemetry_obj = arg;
		break;
	case 'v':
		opt.verbose = true;
		break;
	case ARGP_KEY_ARG:
		argp_error(st, "unexpected argument '%s'", arg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* -------------------------------------------------------------- runs -- */

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && !opt.verbose)
		return 0;
	if (level == LIBBPF_INFO && !opt.verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static void build_frame(void)
{
	unsigned char *p = frame;

	memset(frame, 0, sizeof(frame));
	memcpy(p, "\x02\0\0\0\0\x01\x02\0\0\0\0\x02", 12);
	if (!opt.ipv6) {
		p[12] = 0x08;
		p += 14;
		p[0] = 0x45;
		p[3] = FRAME_LEN - 14; /* total length */
		p[8] = 64;
		p[9] = 17; /* UDP */
		inet_pton(AF_INET, "10.0.0.0", p + 12); /* the program picks the low bits */
		inet_pton(AF_INET, "10.255.0.1", p + 16);
		p += 20;
		frame_len = FRAME_LEN;
	} else {
		p[12] = 0x86;
		p[13] = 0xdd;
		p += 14;
		p[0] = 0x60;
		p[5] = FRAME6_LEN - 14 - 40; /* payload length */
		p[6] = 17;
		p[7] = 64;
		inet_pton(AF_INET6, "2001:db8::", p + 8);
		inet_pton(AF_INET6, "2001:db8:ffff::1", p + 24);
		p += 40;
		frame_len = FRAME6_LEN;
	}
	p[1] = 0x35; /* UDP 53 -> 53, the rest zero */
	p[3] = 0x35;
	p[5] = frame_len - (p - frame);
}

static int pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/* What one run runs: a program, and for the ring buffer the ring to
 * drain every `batch` packets (0: no draining, one test_run). */
struct runspec {
	int fd;
	int batch;
	struct ring_buffer *rb;
};

static int drain_cb(void *ctx, void *data, size_t size)
{
	(void)ctx, (void)data, (void)size;
	return 0;
}

/*
 * One run: --repeat packets on the calling thread's CPU, ns per packet
 * into *ns.  The figure is the kernel's (net/bpf/test_run.c,
 * bpf_test_timer_continue: time_spent / repeat, whole ns, leaving out the
 * time it yielded the CPU).  A clock around the syscall is no use: each
 * XDP test_run with repeat > 1 swaps the XDP dispatcher (test_run.c,
 * bpf_prog_change_xdp), about a millisecond here.
 *
 * The ring buffer is run in batches with a drain in between, so that
 * every reservation succeeds and the ring stays as small as a ring an
 * agent drains: one big ring holding a whole run would measure writes
 * streaming to DRAM instead.  With two threads (sync set), both finish a
 * batch, the drainer drains, both go on.  A failed test_run ends the
 * program: the other thread may be waiting on the barrier, and the kernel
 * frees everything we loaded when we exit (nothing is attached or pinned).
 */
static void run_once(const struct runspec *rs, pthread_barrier_t *sync, bool drainer, double *ns)
{
	double sum = 0;
	long done = 0;

	while (done < opt.repeat) {
		int n = rs->batch && rs->batch < opt.repeat - done ? rs->batch : opt.repeat - done;
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = frame_len,
			    .repeat = n);

		if (bpf_prog_test_run_opts(rs->fd, &o) || o.retval != 2 /* XDP_PASS */) {
			fprintf(stderr, "\nbench/maps: test run failed: %s (verdict %u)\n",
				strerror(errno), o.retval);
			exit(1);
		}
		sum += (double)o.duration * n;
		done += n;
		if (rs->rb) {
			if (sync)
				pthread_barrier_wait(sync);
			if (drainer)
				ring_buffer__consume(rs->rb);
			if (sync)
				pthread_barrier_wait(sync);
		}
	}
	*ns = sum / done;
}

struct worker {
	int cpu;
	const struct runspec *rs;
	double ns;
	pthread_barrier_t *sync;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	if (pin_self(w->cpu)) {
		fprintf(stderr, "\nbench/maps: cannot pin a thread to CPU %d: %s\n", w->cpu,
			strerror(errno));
		exit(1);
	}
	pthread_barrier_wait(w->sync); /* both pinned before either starts */
	run_once(w->rs, w->sync, w->cpu == opt.cpus[0], &w->ns);
	return NULL;
}

/* Two threads, one per CPU, the same program at the same time: ns per
 * packet is the mean of the two (each CPU's own per-packet time). */
static void run_pair(const struct runspec *rs, double *ns)
{
	pthread_barrier_t sync;
	struct worker w[2];
	pthread_t t[2];
	int i;

	pthread_barrier_init(&sync, NULL, 2);
	for (i = 0; i < 2; i++) {
		w[i] = (struct worker){ .cpu = opt.cpus[i], .rs = rs, .sync = &sync };
		if (pthread_create(&t[i], NULL, worker_main, &w[i])) {
			fprintf(stderr, "bench/maps: pthread_create failed\n");
			exit(1);
		}
	}
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&sync);
	*ns = (w[0].ns + w[1].ns) / 2;
}

static void run(const struct runspec *rs, bool pair, double *ns)
{
	if (pair)
		run_pair(rs, ns);
	else
		run_once(rs, NULL, true, ns);
}

/* Entries in a hash map (its keys, walked): how many sources it holds. */
static long map_entries(int fd)
{
	struct src_key k, *prev = NULL;
	long n = 0;

	while (!bpf_map_get_next_key(fd, prev, &k)) {
		prev = &k;
		n++;
	}
	return n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void finish(struct cell *c)
{
	double s[MAX_RUNS];

	if (!c->n)
		return;
	memcpy(s, c->ns, c->n * sizeof(double));
	qsort(s, c->n, sizeof(double), cmp_double);
	c->min = s[0];
	c->max = s[c->n - 1];
	c->median = c->n % 2 ? s[c->n / 2] : (s[c->n / 2 - 1] + s[c->n / 2]) / 2;
	c->done = true;
}

static void progress(const char *what, int span, int r)
{
	fprintf(stderr, "\rbench/maps: %u sources, %s, round %d/%d   ", span, what, r + 1, opt.runs);
	fflush(stderr);
}

/* The programs of cost.bpf.c, for one working set. */
static int measure_span(int si)
{
	unsigned span = opt.spans[si];
	struct runspec rs[P__MAX];
	struct ring_buffer *rb = NULL;
	struct cost_bpf *skel;
	int ids[P__MAX], n = 0, i, r, m, err;
	size_t rec, rb_size = (size_t)opt.ringbuf_kb * 1024;

	skel = cost_bpf__open();
	if (!skel) {
		fprintf(stderr, "bench/maps: opening cost.bpf.o failed: %s\n", strerror(errno));
		return -1;
	}
	skel->rodata->src_span = span;
	bpf_map__set_max_entries(skel->maps.hash_stats, opt.entries);
	bpf_map__set_max_entries(skel->maps.percpu_stats, opt.entries);
	bpf_map__set_max_entries(skel->maps.lru_stats, opt.entries);
	bpf_map__set_max_entries(skel->maps.lru_nc_stats, opt.entries);
	bpf_map__set_max_entries(skel->maps.sample_rb, rb_size);
	err = cost_bpf__load(skel);
	if (err) {
		fprintf(stderr, "bench/maps: loading cost.bpf.o failed: %s (-v shows the "
				"verifier's log)\n", strerror(-err));
		cost_bpf__destroy(skel);
		return -1;
	}
	rb = ring_buffer__new(bpf_map__fd(skel->maps.sample_rb), drain_cb, NULL, NULL);
	if (!rb) {
		fprintf(stderr, "bench/maps: ring_buffer__new: %s\n", strerror(errno));
		cost_bpf__destroy(skel);
		return -1;
	}
	/* a record is the event plus an 8-byte header (kernel/bpf/ringbuf.c);
	 * a batch of each of two CPUs fits with 10% to spare */
	rec = 8 + ((sizeof(struct ring_event) + 7) & ~7ul);
	ringbuf_batch = rb_size / rec * 9 / 10 / 2;

#define ADD(id, prog)                                                              \
	if (opt.want[id]) {                                                        \
		ids[n] = id;                                                       \
		rs[n++] = (struct runspec){ .fd = bpf_program__fd(skel->progs.prog) }; \
	}
	ADD(P_BASELINE, xdp_baseline);
	ADD(P_CLOCK, xdp_clock);
	ADD(P_HASH, xdp_hash_atomic);
	ADD(P_PERCPU, xdp_percpu_hash);
	ADD(P_LRU, xdp_lru_percpu_hash);
	ADD(P_LRU_NC, xdp_lru_percpu_nocommon);
	ADD(P_ARENA, xdp_arena_ring);
	if (opt.want[P_RINGBUF]) {
		ids[n] = P_RINGBUF;
		rs[n++] = (struct runspec){ .fd = bpf_program__fd(skel->progs.xdp_ringbuf),
					    .batch = ringbuf_batch, .rb = rb };
	}
#undef ADD

	/* Warm-up: fills the maps (the steady state is what we measure: a
	 * source seen before, or evicting one), wakes the CPU up. */
	for (i = 0; i < n; i++) {
		double ns;

		run(&rs[i], false, &ns);
	}
	for (m = 0; m < (opt.contended ? 2 : 1); m++) {
		for (r = 0; r < opt.runs; r++) {
			progress(m ? "2 CPUs" : "1 CPU ", span, r);
			/* rotate the order each round: drift hits all alike */
			for (i = 0; i < n; i++) {
				int k = (i + r) % n;
				struct cell *c = &cells[si][ids[k]][m];

				run(&rs[k], m, &c->ns[c->n++]);
			}
		}
	}
	for (i = 0; i < n; i++) {
		struct bpf_map *map = ids[i] == P_HASH	 ? skel->maps.hash_stats :
				      ids[i] == P_PERCPU ? skel->maps.percpu_stats :
				      ids[i] == P_LRU	 ? skel->maps.lru_stats :
				      ids[i] == P_LRU_NC ? skel->maps.lru_nc_stats :
							   NULL;

		for (m = 0; m < 2; m++) {
			struct cell *c = &cells[si][ids[i]][m];

			c->entries = map ? map_entries(bpf_map__fd(map)) : -1;
			if (ids[i] == P_RINGBUF)
				c->drops = skel->bss->rb_drops;
			finish(c);
		}
	}
	ring_buffer__free(rb);
	cost_bpf__destroy(skel);
	return 0;
}

/* xdp_count as built: one source (the frame's), 1 and 2 CPUs. */
static void measure_xdp_count(int si)
{
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct runspec rs = { 0 };
	int r, m, err;
	char path[PATH_MAX];
	double ns;

	if (opt.telemetry_obj) {
		snprintf(path, sizeof(path), "%s", opt.telemetry_obj);
	} else {
		/* build/mapcost/cost -> build/telemetry.bpf.o */
		ssize_t l = readlink("/proc/self/exe", path, sizeof(path) - 40);

		if (l < 0)
			l = 0;
		path[l] = 0;
		if (strrchr(path, '/'))
			*strrchr(path, '/') = 0;
		strcat(path, "/../telemetry.bpf.o");
	}
	obj = bpf_object__open_file(path, NULL);
	if (!obj) {
		snprintf(cells[si][P_XDP_COUNT][0].note, sizeof(cells[0][0][0].note),
			 "not measured: open %s: %s", path, strerror(errno));
		return;
	}
	err = bpf_object__load(obj);
	prog = bpf_object__find_program_by_name(obj, "xdp_count");
	if (err || !prog) {
		snprintf(cells[si][P_XDP_COUNT][0].note, sizeof(cells[0][0][0].note),
			 "not measured: load: %s", err ? strerror(-err) : "no xdp_count");
		bpf_object__close(obj);
		return;
	}
	rs.fd = bpf_program__fd(prog);
	run(&rs, false, &ns); /* warm-up */
	for (m = 0; m < (opt.contended ? 2 : 1); m++) {
		struct cell *c = &cells[si][P_XDP_COUNT][m];

		for (r = 0; r < opt.runs; r++) {
			progress(m ? "xdp_count, 2 CPUs" : "xdp_count, 1 CPU ", 1, r);
			run(&rs, m, &c->ns[c->n++]);
		}
		c->entries = -1;
		finish(c);
	}
	bpf_object__close(obj);
}

/* ------------------------------------------------------------ report -- */

static void read_line(const char *path, const char *prefix, char *out, size_t len)
{
	FILE *f = fopen(path, "r");
	char line[512];

	snprintf(out, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, prefix, strlen(prefix))) {
			char *v = strchr(line, ':');

			v = v ? v + 1 : line + strlen(prefix);
			while (*v == ' ' || *v == '\t')
				v++;
			v[strcspn(v, "\n")] = 0;
			snprintf(out, len, "%s", v);
			break;
		}
	}
	fclose(f);
}

static char cpu_model[256], stats_enabled[16], date[64], kernel[160], cmdline[1024];

static void meta(int argc, char **argv)
{
	struct utsname u;
	time_t t = time(NULL);
	int i;

	read_line("/proc/cpuinfo", "model name", cpu_model, sizeof(cpu_model));
	read_line("/proc/sys/kernel/bpf_stats_enabled", "", stats_enabled, sizeof(stats_enabled));
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M %Z", localtime(&t));
	uname(&u);
	snprintf(kernel, sizeof(kernel), "%s %s", u.release, u.machine);
	snprintf(cmdline, sizeof(cmdline), "sudo bench/maps");
	for (i = 1; i < argc; i++) {
		strncat(cmdline, " ", sizeof(cmdline) - strlen(cmdline) - 1);
		strncat(cmdline, argv[i], sizeof(cmdline) - strlen(cmdline) - 1);
	}
}

static void fmt_cell(char *out, size_t len, const struct cell *c)
{
	if (!c->done)
		snprintf(out, len, "-");
	else
		snprintf(out, len, "%.1f [%.1f-%.1f]", c->median, c->min, c->max);
}

static void fmt_net(char *out, size_t len, const struct cell *c, const struct cell *base, int id)
{
	if (!c->done || !base->done || id == P_BASELINE)
		snprintf(out, len, id == P_BASELINE && c->done ? "0" : "-");
	else
		snprintf(out, len, "%+.1f", c->median - base->median);
}

static void print_table(void)
{
	int si, p;
	char a[64], b[32], cc[64], d[32], e[96];

	printf("# bench/maps: per-packet cost of the telemetry map choices\n\n");
	printf("- %s, kernel %s, %ld CPUs online (%s)\n", date, kernel, sysconf(_SC_NPROCESSORS_ONLN),
	       cpu_model);
	printf("- `%s`\n", cmdline);
	printf("- BPF_PROG_TEST_RUN, %d packets per run, median [min-max] of %d runs, ns/packet; "
	       "%zu-byte %s frame; maps of %d entries; 1 CPU: CPU %d, 2 CPUs: %d and %d at once; "
	       "ring buffer of %d KB drained every %d packets per CPU; "
	       "kernel.bpf_stats_enabled=%s\n\n",
	       opt.repeat, opt.runs, frame_len, opt.ipv6 ? "IPv6/UDP" : "IPv4/UDP", opt.entries,
	       opt.cpus[0], opt.cpus[0], opt.cpus[1], opt.ringbuf_kb, ringbuf_batch, stats_enabled);
	printf("| program | sources | 1 CPU ns/pkt | net | 2 CPUs ns/pkt | net | map entries |\n");
	printf("|---|---:|---:|---:|---:|---:|---:|\n");
	for (si = 0; si < opt.n_spans; si++) {
		for (p = 0; p < P__MAX; p++) {
			struct cell *c1 = &cells[si][p][0], *c2 = &cells[si][p][1];

			if (!opt.want[p] || (p == P_XDP_COUNT && opt.spans[si] != 1))
				continue;
			if (c1->note[0]) {
				printf("| %s | %u | %s | | | | |\n", progs[p].label, opt.spans[si],
				       c1->note);
				continue;
			}
			fmt_cell(a, sizeof(a), c1);
			fmt_net(b, sizeof(b), c1, &cells[si][P_BASELINE][0], p);
			fmt_cell(cc, sizeof(cc), c2);
			fmt_net(d, sizeof(d), c2, &cells[si][P_BASELINE][1], p);
			if (c1->entries >= 0)
				snprintf(e, sizeof(e), "%ld", c1->entries);
			else if (p == P_RINGBUF)
				snprintf(e, sizeof(e), c1->drops ? "%llu drops (!)" : "no drops",
					 (unsigned long long)c1->drops);
			else
				snprintf(e, sizeof(e), " ");
			printf("| %s | %u | %s | %s | %s | %s | %s |\n", progs[p].label, opt.spans[si],
			       a, b, cc, d, e);
		}
	}
	printf("\nnet: minus the baseline of the same working set and CPUs. xdp_count (as "
	       "built) also counts per frame kind and samples 1 frame in 64 into its "
	       "arena ring; it sees one source only.\n");
}

static void json_cell(FILE *f, const struct cell *c, int p, unsigned span, int m, bool *first)
{
	int i;

	if (!c->done)
		return;
	fprintf(f, "%s\n    {\"program\": \"%s\", \"sources\": %u, \"cpus\": %d, "
		   "\"median_ns\": %.3f, \"min_ns\": %.3f, \"max_ns\": %.3f, "
		   "\"map_entries\": %ld, \"ringbuf_drops\": %llu, \"runs_ns\": [",
		*first ? "" : ",", progs[p].name, span, m + 1, c->median, c->min, c->max,
		c->entries, (unsigned long long)c->drops);
	for (i = 0; i < c->n; i++)
		fprintf(f, "%s%.3f", i ? ", " : "", c->ns[i]);
	fprintf(f, "]}");
	*first = false;
}

static int write_json(void)
{
	FILE *f = strcmp(opt.json, "-") ? fopen(opt.json, "w") : stdout;
	bool first = true;
	int si, p, m;

	if (!f) {
		fprintf(stderr, "bench/maps: %s: %s\n", opt.json, strerror(errno));
		return -1;
	}
	fprintf(f, "{\n  \"date\": \"%s\", \"kernel\": \"%s\", \"cpu_model\": \"%s\", "
		   "\"cpus_online\": %ld,\n  \"command\": \"%s\", \"repeat\": %d, \"runs\": %d, "
		   "\"frame_bytes\": %zu, \"ipv6\": %s, \"map_entries\": %d, \"cpu_ids\": [%d, %d], "
		   "\"bpf_stats_enabled\": \"%s\", \"ringbuf_bytes\": %d, \"ringbuf_batch\": %d,\n  \"results\": [",
		date, kernel, cpu_model, sysconf(_SC_NPROCESSORS_ONLN), cmdline, opt.repeat, opt.runs,
		frame_len, opt.ipv6 ? "true" : "false", opt.entries, opt.cpus[0], opt.cpus[1],
		stats_enabled, opt.ringbuf_kb * 1024, ringbuf_batch);
	for (si = 0; si < opt.n_spans; si++)
		for (p = 0; p < P__MAX; p++)
			for (m = 0; m < 2; m++)
				json_cell(f, &cells[si][p][m], p, opt.spans[si], m, &first);
	fprintf(f, "\n  ]\n}\n");
	if (f != stdout)
		fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct argp argp = { options, parse_opt, NULL, doc, NULL, NULL, NULL };
	int si, i;

	/* argp names us in --help and errors: the command people type */
	program_invocation_name = program_invocation_short_name = argv[0] = "bench/maps";
	argp_err_exit_status = 2; /* usage errors: 2, as the agent */
	for (i = 0; i < P__MAX; i++)
		opt.want[i] = true;
	argp_parse(&argp, argc, argv, 0, NULL, NULL);
	if (geteuid() != 0) {
		fprintf(stderr, "bench/maps: needs root (loads BPF programs and runs them with "
				"BPF_PROG_TEST_RUN): sudo bench/maps\n");
		return 1;
	}
	for (i = 0; i < 2; i++) {
		if (opt.cpus[i] >= sysconf(_SC_NPROCESSORS_ONLN) && (i == 0 || opt.contended)) {
			fprintf(stderr, "bench/maps: CPU %d is not online (%ld CPUs); see --cpus\n",
				opt.cpus[i], sysconf(_SC_NPROCESSORS_ONLN));
			return 1;
		}
	}
	libbpf_set_print(libbpf_print);
	meta(argc, argv);
	build_frame();
	if (pin_self(opt.cpus[0])) {
		fprintf(stderr, "bench/maps: cannot pin to CPU %d: %s\n", opt.cpus[0], strerror(errno));
		return 1;
	}
	for (si = 0; si < opt.n_spans; si++) {
		if (measure_span(si))
			return 1;
		if (opt.want[P_XDP_COUNT] && opt.spans[si] == 1)
			measure_xdp_count(si);
	}
	fprintf(stderr, "\r%-60s\r", "");
	if (!opt.json || strcmp(opt.json, "-"))
		print_table();
	if (opt.json && write_json())
		return 1;
	return 0;
}

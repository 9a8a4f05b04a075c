// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * `ngx-sockmap top`: a live view of the running agent in 80 columns.  It
 * reads what the agent publishes in agent.state: the counters by map id,
 * the per-source map for its own sliding window, and the two arena event
 * rings, mapped read-only and read in place (no copy through the agent).
 */
#define _GNU_SOURCE /* ppoll */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "counters.h"
#include "log.h"
#include "netaddr.h"
#include "ring_reader.h"
#include "state.h"
#include "topk.h"
#include "whynot.h"

#define TOP_SOURCES 5
#define TOP_SERVICES 5
#define TOP_CONN_EVENTS 5 /* newest connection events ... */
#define TOP_PKT_EVENTS  3 /* ... and packet samples, which would crowd them out */
#define WIDTH       80

static volatile sig_atomic_t quit, resumed;

/* Delivered only inside ppoll() (blocked elsewhere): no lost wake-up. */
static void on_signal(int sig)
{
	if (sig == SIGCONT)
		resumed = 1; /* back from Ctrl-Z: the shell reset the terminal */
	else
		quit = 1;
}

static struct termios saved_tty;
static bool raw_on;

static void raw_mode(bool on)
{
	struct termios raw = saved_tty;

	if (on) {
		raw.c_lflag &= ~(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
	}
	tcsetattr(STDIN_FILENO, TCSANOW, on ? &raw : &saved_tty);
	fputs(on ? "\033[?25l" : "\033[?25h\n", stdout); /* cursor off / on */
	fflush(stdout);
	raw_on = on;
}

/* Whatever way we leave (exit(), a libbpf abort...), give the terminal back. */
static void restore_tty(void)
{
	if (raw_on)
		raw_mode(false);
}

struct top_view {
	struct agent_maps m;
	struct agent_info info;
	const struct event_ring *ring[2]; /* connections, packets; NULL: none */
	void *map_base[2];
	size_t map_len;
	struct topk_window topk;  /* one tick per refresh */
	unsigned int delay_ms;
	struct counters prev, now;
	double prev_t, now_t;
};

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Map an arena read-only.  Every process must map an arena at the address
 * and size of its first mapping, the agent's (kernel/bpf/arena.c,
 * arena_map_mmap): arena pointers are user addresses. */
static const struct event_ring *map_ring(struct top_view *v, int i, int fd,
					 const struct ring_place *at)
{
	void *p;

	if (fd < 0 || !at->addr || at->off + sizeof(struct event_ring) > v->map_len)
		return NULL;
	p = mmap((void *)at->addr, v->map_len, PROT_READ, MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
	if (p == MAP_FAILED) {
		pr_debug("mmap of arena %d: %s\n", i, strerror(errno));
		return NULL;
	}
	v->map_base[i] = p;
	return (const struct event_ring *)((char *)p + at->off);
}

static int cmp_ts(const void *a, const void *b)
{
	const struct ring_event *x = a, *y = b;

	return x->ts_ns < y->ts_ns ? -1 : x->ts_ns > y->ts_ns;
}

static void frame(FILE *o, struct top_view *v)
{
	struct ring_event ev[TOP_CONN_EVENTS + TOP_PKT_EVENTS];
	struct src_rank top[TOP_SOURCES];
	struct whynot why;
	char b1[32], b2[32], line[160], addr[64];
	time_t wall = time(NULL);
	struct timespec mono;
	int i, n;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	strftime(b1, sizeof(b1), "%H:%M:%S", localtime(&wall));
	snprintf(line, sizeof(line), "ngx-sockmap top - agent pid %d, %d cgroup%s%s%s",
		 v->info.pid, v->info.n_cgroups, v->info.n_cgroups == 1 ? "" : "s",
		 v->now.paused ? ", PAUSED" : "",
		 v->info.selftest_blocked ? ", NOT accelerating (selftest)" : "");
	fprintf(o, "%-*.*s%s\n", WIDTH - 9, WIDTH - 9, line, b1);
	/* How full the SOCKHASH is (--max-sockets): full, new connections
	 * stay on TCP (fallbacks no_room); NgxSockmapMapFilling warns past
	 * 80%.  A line of its own: the title may already be cut at 71. */
	if (v->now.sockets_max)
		fprintf(o, "sockets %llu of %llu (%llu%% full%s)\n",
			(unsigned long long)v->now.sockets_now,
			(unsigned long long)v->now.sockets_max,
			(unsigned long long)v->now.sockets_fill,
			v->now.sockets_now >= v->now.sockets_max
				? ": new connections use TCP, no_room"
				: "");
	counters_print_top(o, &v->now, &v->prev, v->now_t - v->prev_t, WIDTH - 1);
	fputs("\n", o);
	/* why not, per service endpoint: nginx's connections now */
	if (!whynot_scan(&v->m, &v->info, &v->now, &why)) {
		whynot_print_services(o, &why, TOP_SERVICES, WIDTH - 1);
		whynot_free(&why);
		fputs("\n", o);
	}

	if (v->m.fd[MAP_SRC_STATS] >= 0) {
		snprintf(b1, sizeof(b1), "top sources, last %.0f s",
			 topk_span(&v->topk) * v->delay_ms / 1000.0);
		fprintf(o, "%-31s %14s %14s\n", b1, "packets", "bytes");
		n = topk_top(&v->topk, false, top, TOP_SOURCES);
		for (i = 0; i < n; i++) {
			addr16_str(top[i].key.addr, addr, sizeof(addr));
			human_bytes(b2, sizeof(b2), top[i].bytes);
			fprintf(o, "  %-28.28s %14llu %14s\n", addr, (unsigned long long)top[i].packets,
				b2);
		}
		if (!n)
			fputs("  (no traffic yet)\n", o);
	} else {
		fputs("top sources: no XDP observer (run the agent with --xdp IFACE)\n", o);
	}
	fputs("\nrecent events\n", o);
	n = 0;
	if (v->ring[0])
		n += ring_peek_recent(v->ring[0], ev, TOP_CONN_EVENTS);
	if (v->ring[1])
		n += ring_peek_recent(v->ring[1], ev + n, TOP_PKT_EVENTS);
	qsort(ev, n, sizeof(ev[0]), cmp_ts);
	for (i = 0; i < n; i++) {
		double ago = mono.tv_sec + mono.tv_nsec / 1e9 - ev[i].ts_ns / 1e9;

		ring_event_str(&ev[i], line, sizeof(line));
		fprintf(o, "  %6.1fs ago  %-.*s\n", ago < 0 ? 0 : ago, WIDTH - 15, line);
	}
	if (!n)
		fputs(v->ring[0] ? "  (none yet)\n"
		      : !strcmp(v->info.rings[RING_CONN].transport, "ringbuf")
			      ? "  (no BPF arena on this kernel: events reach the agent through a ring\n"
				"   buffer, which only it reads; run it with -vv to log them)\n"
			      : "  (event rings not readable)\n", o);
}

static void sample(struct top_view *v)
{
	v->prev = v->now;
	v->prev_t = v->now_t;
	counters_read(&v->m, &v->now);
	v->now_t = mono_now();
	if (v->m.fd[MAP_SRC_STATS] >= 0)
		topk_tick(&v->topk, v->m.fd[MAP_SRC_STATS]);
}

struct top_opts {
	unsigned int delay_ms; /* refresh period */
	bool once;             /* one frame, no terminal control */
};

static int do_top(void *opts)
{
	const struct top_opts *o = opts;
	unsigned int delay_ms = o->delay_ms;
	bool once = o->once;
	bool tty = !once && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
	struct sigaction sa = { .sa_handler = on_signal };
	const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCONT };
	struct timespec wait = { delay_ms / 1000, (delay_ms % 1000) * 1000000L };
	sigset_t block, during_poll;
	static struct top_view v;
	char err[256], c;
	int i, window;

	if (need_root("top"))
		return EXIT_RUNTIME;
	if (state_open(&v.m, &v.info, err, sizeof(err))) {
		pr_warn("%s\n", err);
		return EXIT_RUNTIME;
	}
	if (!v.info.pid) {
		pr_warn("no agent is running (only a pinned data plane): top needs a live agent\n");
		state_close(&v.m);
		return EXIT_RUNTIME;
	}
	v.delay_ms = delay_ms;
	v.map_len = (size_t)RING_ARENA_PAGES * sysconf(_SC_PAGESIZE);
	v.ring[0] = map_ring(&v, 0, v.m.fd[MAP_CONN_ARENA], &v.info.rings[RING_CONN]);
	v.ring[1] = map_ring(&v, 1, v.m.fd[MAP_PKT_ARENA], &v.info.rings[RING_PKT]);
	/* the window covers TOPK_WINDOW_SEC whatever the refresh period */
	window = TOPK_WINDOW_SEC * 1000 / delay_ms;
	topk_init(&v.topk, window < 1 ? 1 : window > TOPK_WINDOW_MAX ? TOPK_WINDOW_MAX : window);

	sigemptyset(&block);
	for (i = 0; i < (int)(sizeof(sigs) / sizeof(sigs[0])); i++) {
		sigaddset(&block, sigs[i]);
		sigaction(sigs[i], &sa, NULL);
	}
	sigprocmask(SIG_BLOCK, &block, &during_poll);
	if (tty && !tcgetattr(STDIN_FILENO, &saved_tty)) {
		atexit(restore_tty);
		raw_mode(true);
	} else {
		tty = false;
	}
	sample(&v);
	while (!quit) {
		if (ppoll(tty ? &pfd : NULL, tty ? 1 : 0, &wait, &during_poll) > 0 &&
		    read(STDIN_FILENO, &c, 1) == 1 && (c == 'q' || c == 'Q'))
			break;
		if (quit)
			break;
		if (resumed && tty) {
			resumed = 0;
			raw_mode(true);
		}
		if (v.info.pid && kill(v.info.pid, 0) && errno == ESRCH) {
			if (tty)
				fputs("\033[H\033[2J", stdout);
			printf("the agent (pid %d) has exited\n", v.info.pid);
			break;
		}
		sample(&v);
		if (tty)
			fputs("\033[H\033[2J", stdout);
		frame(stdout, &v);
		if (tty)
			fputs("\nq: quit", stdout);
		fflush(stdout);
		if (once)
			break;
	}
	restore_tty();
	sigprocmask(SIG_SETMASK, &during_poll, NULL);
	for (i = 0; i < 2; i++)
		if (v.map_base[i])
			munmap(v.map_base[i], v.map_len);
	topk_free(&v.topk);
	state_close(&v.m);
	return 0;
}

static error_t top_parse(int key, char *arg, struct argp_state *state)
{
	struct top_opts *o = state->input;
	char *end;
	double d;

	switch (key) {
	case '1':
		o->once = true;
		return 0;
	case 'd':
		d = strtod(arg, &end);
		if (!*arg || *end || !(d >= 0.2 && d <= 60))
			usage_error(state, "--delay: '%s' is not a number of seconds from 0.2 to 60", arg);
		o->delay_ms = (unsigned int)(d * 1000);
		return 0;
	default:
		return cli_parse_common(key, arg, state);
	}
}

static const struct argp_option top_options[] = {
	{ "delay", 'd', "SECS", 0, "refresh every SECS seconds (default 1; 0.2 to 60)", 0 },
	{ "once", '1', NULL, 0,
	  "print one frame (rates over one refresh period) and exit; for scripts and logs", 0 },
	{ 0 },
};

static struct top_opts top_opts = { .delay_ms = 1000 };

const struct command cmd_top = {
	.name = "top",
	.summary = "live view: redirects, fallbacks, why not per service, sources, events",
	.doc = "Live view of the running agent, refreshed every second, 80 columns: the "
	       "data plane's counters (rates of the ones that only grow), nginx's "
	       "connections per service endpoint (server address:port) with how many are "
	       "redirected and why the others are on TCP, the top "
	       "sources of the last 10 s (with --xdp), and the newest events of the arena "
	       "rings (pairs, fallbacks, closes with the bytes each socket redirected; sampled "
	       "packets), read in place from the agent's maps. q or Ctrl-C quits.\n"
	       "\n"
	       "EXAMPLES:\n"
	       "  sudo ngx-sockmap top\n"
	       "  sudo ngx-sockmap top --once -d 5 > snapshot.txt",
	.options = top_options,
	.parse = top_parse,
	.opts = &top_opts,
	.handler = do_top,
};

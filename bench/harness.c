/* SPDX-License-Identifier: MIT */
/* hotlock-bench: the shared harness (see harness.h): command line, one
 * measured run of T threads, a suite of runs with its tables, progress line
 * and JSON. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* the build defines it; also when compiled alone */
#endif
#include "harness.h"
#include "locks.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <hotlock/hotlock.h>

/* ---- progress line ----------------------------------------------------- */

/* One line on stderr per run.  On a terminal each line overwrites the last
 * ("\r" and erase-to-end), and is erased before a table goes to stdout; into
 * a file or pipe every line is written whole, once the run has finished. */
static struct {
	unsigned done, total;
	int tty;                /* -1: not yet known */
	bool open;              /* a line is on the terminal, unterminated */
	char line[256];
} progress = { .tty = -1 };

static bool progress_tty(void)
{
	if (progress.tty < 0)
		progress.tty = isatty(STDERR_FILENO);
	return progress.tty;
}

void bench_progress_clear(void)
{
	if (progress.open)
		fputs("\r\033[K", stderr);
	progress.open = false;
}

/* Keeps the line of the run that failed on the screen. */
static void progress_keep(void)
{
	if (progress.open)
		fputc('\n', stderr);
	progress.open = false;
}

void bench_progress_start(unsigned total)
{
	progress.total = total;
	progress.done = 0;
}

void bench_progress_begin(const char *fmt, ...)
{
	int width = snprintf(NULL, 0, "%u", progress.total);
	int n = snprintf(progress.line, sizeof progress.line, "[%*u/%u] ",
			 width, ++progress.done, progress.total);
	va_list ap;

	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof progress.line)
		vsnprintf(progress.line + n, sizeof progress.line - n, fmt, ap);
	va_end(ap);
	if (progress_tty()) {
		fprintf(stderr, "\r\033[K%s ...", progress.line);
		progress.open = true;
	}
}

/* Other load worth a mention, in CPUs (see bench_sample.other_cpus). */
#define OTHER_CPUS_NOTE 0.1

void bench_progress_end(const char *result, double others)
{
	char note[64] = "";

	if (others >= OTHER_CPUS_NOTE)
		snprintf(note, sizeof note, " (other load %.1f CPUs)", others);
	if (progress_tty()) {
		fprintf(stderr, "\r\033[K%s ... %s%s", progress.line, result, note);
		progress.open = true;
	} else {
		fprintf(stderr, "%s ... %s%s\n", progress.line, result, note);
	}
}

/* ---- errors -------------------------------------------------------------- */

static _Noreturn void bench_exit(int status)
{
	bench_json_discard();
	exit(status);
}

void bench_usage_error(const char *scenario, const char *fmt, ...)
{
	const char *sep = scenario ? " " : "";
	va_list ap;

	progress_keep();
	fprintf(stderr, "hotlock-bench%s%s: error: ", sep, scenario ? scenario : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'hotlock-bench%s%s --help'.\n", sep,
		scenario ? scenario : "");
	bench_exit(2);
}

void bench_fatal(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	progress_keep();
	fputs("hotlock-bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	bench_exit(1);
}

void bench_check(int err, const char *what)
{
	if (err)
		bench_fatal("%s: %s", what, strerror(err));
}

void *bench_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		bench_fatal("out of memory");
	return p;
}

void *bench_alloc_lines(size_t size)
{
	size_t rounded = (size + BENCH_CACHELINE - 1) / BENCH_CACHELINE * BENCH_CACHELINE;
	void *p = aligned_alloc(BENCH_CACHELINE, rounded ? rounded : BENCH_CACHELINE);

	if (!p)
		bench_fatal("out of memory");
	memset(p, 0, rounded ? rounded : BENCH_CACHELINE);
	return p;
}

/* ---- command line -------------------------------------------------------- */

const char *bench_opt_value(const char *scenario, int argc, char **argv,
			    int *i, const char *name)
{
	const char *arg = argv[*i];
	size_t n = strlen(name);

	if (strncmp(arg, name, n) != 0)
		return NULL;
	if (arg[n] == '=')
		return arg + n + 1;
	if (arg[n] != '\0')
		return NULL;
	if (*i + 1 >= argc)
		bench_usage_error(scenario, "option '%s' needs a value", name);
	return argv[++*i];
}

unsigned long bench_parse_ulong(const char *scenario, const char *opt,
				const char *s, unsigned long min,
				unsigned long max)
{
	unsigned long v;
	char *end;

	if (s[0] == '-' && s[1] >= '0' && s[1] <= '9')
		bench_usage_error(scenario, "%s: '%s' is negative; it must be %lu to %lu",
				  opt, s, min, max);
	if (s[0] < '0' || s[0] > '9')
		bench_usage_error(scenario, "%s: '%s' is not a whole number", opt, s);
	errno = 0;
	v = strtoul(s, &end, 10);
	if (*end != '\0')
		bench_usage_error(scenario, "%s: '%s' is not a whole number", opt, s);
	if (errno == ERANGE || v < min || v > max)
		bench_usage_error(scenario, "%s: %s is out of range; it must be %lu to %lu",
				  opt, s, min, max);
	return v;
}

double bench_parse_seconds(const char *scenario, const char *opt,
			   const char *s, double max)
{
	double v;
	char *end;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end != '\0' || !isfinite(v))
		bench_usage_error(scenario, "%s: '%s' is not a number of seconds", opt, s);
	if (v <= 0 || v > max || errno == ERANGE)
		bench_usage_error(scenario, "%s: %s is out of range; it must be more than 0 and at most %g",
				  opt, s, max);
	return v;
}

void bench_list_each(const char *scenario, const char *opt, const char *list,
		     void (*item)(void *ctx, const char *entry), void *ctx)
{
	char buf[64];
	const char *p = list;

	for (;;) {
		size_t len = strcspn(p, ",");

		if (len == 0)
			bench_usage_error(scenario, "%s: empty entry in '%s'", opt, list);
		if (len >= sizeof buf)
			bench_usage_error(scenario, "%s: entry '%.*s' is too long", opt,
					  (int)len, p);
		memcpy(buf, p, len);
		buf[len] = '\0';
		item(ctx, buf);
		if (p[len] == '\0')
			return;
		p += len + 1;
	}
}

struct threads_parse {
	struct bench_common *c;
	const char *scenario;
	size_t n;
};

static void threads_item(void *ctx, const char *entry)
{
	struct threads_parse *tp = ctx;

	if (tp->n == BENCH_MAX_THREAD_COUNTS)
		bench_usage_error(tp->scenario, "--threads: more than %u entries",
				  BENCH_MAX_THREAD_COUNTS);
	tp->c->threads[tp->n++] = bench_parse_ulong(tp->scenario, "--threads", entry,
						    1, BENCH_MAX_THREADS);
}

void bench_common_threads(struct bench_common *c, const char *scenario,
			  const char *list)
{
	struct threads_parse tp = { .c = c, .scenario = scenario };

	bench_list_each(scenario, "--threads", list, threads_item, &tp);
	qsort(c->threads, tp.n, sizeof c->threads[0], bench_cmp_unsigned);
	c->nthreads = 0;
	for (size_t i = 0; i < tp.n; i++)
		if (i == 0 || c->threads[i] != c->threads[i - 1])
			c->threads[c->nthreads++] = c->threads[i];
	c->threads_given = true;
}

void bench_common_topology(struct bench_common *c, const char *scenario,
			   const char *spec)
{
	int err = hl_topology_set(spec);

	if (err == EINVAL)
		bench_usage_error(scenario, "--topology: '%s' is not a topology; valid: "
				  "numa, llc, virtual:N (N = 1 to %d)", spec,
				  HL_TOPOLOGY_MAX_NODES);
	if (err == ENOENT)
		bench_fatal("--topology %s: this machine does not provide that "
			    "topology (%s); numa or virtual:N may do", spec,
			    strerror(err));
	bench_check(err, "hl_topology_set");
	c->topology = spec;
}

void bench_common_defaults(struct bench_common *c, const char *locks)
{
	static const unsigned threads[] = { 1, 2, 4, 8 };

	memset(c, 0, sizeof *c);
	c->locks = locks;
	memcpy(c->threads, threads, sizeof threads);
	c->nthreads = sizeof threads / sizeof threads[0];
	c->duration_s = 2;
	c->repeat = 1;
}

/* ---- where a run comes from ------------------------------------------ */

static char command_line[4096];

/* Appends c to command_line at *n, keeping room for the NUL (a command
 * line longer than the buffer is cut short). */
static void command_put(size_t *n, char c)
{
	if (*n + 1 < sizeof command_line)
		command_line[(*n)++] = c;
	command_line[*n] = '\0';
}

/* The command line as a shell would take it back: the program as
 * "hotlock-bench" (the path it was run by says nothing about the run), each
 * argument the shell would split or expand in single quotes, a quote in it
 * as '\''. */
void bench_set_command(int argc, char **argv)
{
	static const char prefix[] = "hotlock-bench-";
	const char *base = argc > 0 ? strrchr(argv[0], '/') : NULL;
	size_t n = 0;

	base = base ? base + 1 : argc > 0 ? argv[0] : "";
	for (const char *c = "hotlock-bench"; *c; c++)
		command_put(&n, *c);
	/* A program of its own, hotlock-bench-NAME, is what
	 * 'hotlock-bench NAME' runs: recorded so. */
	if (strncmp(base, prefix, sizeof prefix - 1) == 0) {
		command_put(&n, ' ');
		for (const char *c = base + sizeof prefix - 1; *c; c++)
			command_put(&n, *c);
	}
	for (int i = 1; i < argc; i++) {
		const bool quote = argv[i][0] == '\0' ||
				   strpbrk(argv[i], " \t\n'\"\\$`*?[]{}()<>|&;~#!") != NULL;

		command_put(&n, ' ');
		if (quote)
			command_put(&n, '\'');
		for (const char *c = argv[i]; *c; c++) {
			if (*c == '\'' && quote) {
				for (const char *e = "'\\''"; *e; e++)
					command_put(&n, *e);
			} else {
				command_put(&n, *c);
			}
		}
		if (quote)
			command_put(&n, '\'');
	}
}

/* The "model name" line of /proc/cpuinfo, or "unknown". */
static void cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof line, f)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) == 0 && colon) {
			colon += 1 + (colon[1] == ' ');
			colon[strcspn(colon, "\n")] = '\0';
			snprintf(buf, len, "%s", colon);
			break;
		}
	}
	fclose(f);
}

void bench_json_run_info(struct bench_json *j)
{
	struct utsname u;
	char cpu[256], date[32];
	time_t now = time(NULL);
	struct tm tm;

	bench_json_string(j, "command", command_line);
	bench_json_object(j, "machine");
	cpu_model(cpu, sizeof cpu);
	bench_json_string(j, "cpu", cpu);
	bench_json_string(j, "kernel", uname(&u) == 0 ? u.release : "unknown");
	bench_json_uint(j, "cpus_online", (uint64_t)sysconf(_SC_NPROCESSORS_ONLN));
	bench_json_end(j);
	gmtime_r(&now, &tm);
	strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
	bench_json_string(j, "date", date);
}

int bench_pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

unsigned bench_cores(void)
{
	for (size_t ncpu = 1024; ncpu <= (1u << 20); ncpu *= 2) {
		cpu_set_t *set = CPU_ALLOC(ncpu);
		size_t size = CPU_ALLOC_SIZE(ncpu);
		int err;

		if (!set)
			bench_fatal("out of memory");
		if (sched_getaffinity(0, size, set) == 0) {
			unsigned n = CPU_COUNT_S(size, set);

			CPU_FREE(set);
			return n ? n : 1;
		}
		err = errno;
		CPU_FREE(set);
		if (err != EINVAL)
			bench_check(err, "sched_getaffinity");
	}
	bench_fatal("sched_getaffinity: more than 2^20 CPUs?");
}

static double ts_to_s(const struct timespec *ts)
{
	return (double)ts->tv_sec + ts->tv_nsec * 1e-9;
}

static struct timespec s_to_ts(double s)
{
	struct timespec ts;

	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

static double clock_s(clockid_t clock, const char *what)
{
	struct timespec ts;

	if (clock_gettime(clock, &ts) != 0)
		bench_check(errno, what);
	return ts_to_s(&ts);
}

double bench_now(void)
{
	return clock_s(CLOCK_MONOTONIC, "clock_gettime(CLOCK_MONOTONIC)");
}

/* The calling thread's CPU time so far, seconds. */
double bench_thread_cpu_s(void)
{
	return clock_s(CLOCK_THREAD_CPUTIME_ID, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
}

double bench_machine_busy_s(void)
{
	unsigned long long v[8];
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (!f)
		return NAN;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu",
		   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n != 8 || hz <= 0)
		return NAN;
	/* v[3] idle and v[4] iowait are the idle ones. */
	return (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / (double)hz;
}

/* Where the rest of the machine stands: busy CPU seconds, ours, those of
 * the --busy processes (0 without), and when. */
void bench_machine_mark(struct bench_machine_mark *m)
{
	m->busy_s = bench_machine_busy_s();
	m->self_s = clock_s(CLOCK_PROCESS_CPUTIME_ID, "clock_gettime(CLOCK_PROCESS_CPUTIME_ID)");
	m->load_s = bench_busy_cpu_s();
	m->at_s = bench_now();
}

double bench_other_cpus(const struct bench_machine_mark *a, const struct bench_machine_mark *b,
			double children_s)
{
	double others = (b->busy_s - a->busy_s) - (b->self_s - a->self_s) - children_s -
			(b->load_s - a->load_s);

	if (isnan(others) || b->at_s <= a->at_s)
		return NAN;
	return fmax(others, 0) / (b->at_s - a->at_s);
}

double bench_busy_cpus(const struct bench_machine_mark *a, const struct bench_machine_mark *b)
{
	if (bench_busy_count() == 0 || isnan(b->load_s - a->load_s) || b->at_s <= a->at_s)
		return NAN;
	return (b->load_s - a->load_s) / (b->at_s - a->at_s);
}

/* ---- one run ------------------------------------------------------------- */

struct run_state {
	const struct bench_run_spec *spec;
	pthread_barrier_t start;
	atomic_bool stop;
};

struct worker {
	struct bench_thread t;  /* first: its own cache line(s) */
	struct run_state *rs;
	pthread_t tid;
	int node;               /* the node it is placed on; -1: its CPU's */
	bool joined;
};

void bench_thread_fail(struct bench_thread *t, const char *what, int err)
{
	if (!t->err) {
		t->err = err;
		t->err_what = what;
	}
	/* relaxed: as bench_should_stop; the error itself is read after join. */
	atomic_store_explicit(t->stop, true, memory_order_relaxed);
}

uint64_t bench_thread_csw(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru) != 0)
		bench_check(errno, "getrusage(RUSAGE_THREAD)");
	return (uint64_t)ru.ru_nvcsw;
}

static void barrier_wait(pthread_barrier_t *b)
{
	int err = pthread_barrier_wait(b);

	if (err != PTHREAD_BARRIER_SERIAL_THREAD)
		bench_check(err, "pthread_barrier_wait");
}

static void *worker_main(void *p)
{
	struct worker *w = p;
	struct bench_thread *t = &w->t;
	const struct bench_run_spec *spec = w->rs->spec;
	hl_futex_stats_t f0, f1;
	uint64_t csw0;
	double cpu0;

	if (w->node >= 0)
		bench_check(hl_topology_set_thread_node(w->node),
			    "hl_topology_set_thread_node");
	barrier_wait(&w->rs->start);
	hl_futex_stats_thread(&f0);
	csw0 = bench_thread_csw();
	cpu0 = bench_thread_cpu_s();
	t->start_s = bench_now();

	t->ops = spec->body(t, spec->arg);

	t->end_s = bench_now();
	t->cpu_s = bench_thread_cpu_s() - cpu0;
	t->csw = bench_thread_csw() - csw0;
	hl_futex_stats_thread(&f1);
	t->futex_calls = hl_futex_stats_calls(&f1) - hl_futex_stats_calls(&f0);
	return NULL;
}

uint64_t bench_thread_futex_calls(void)
{
	return hl_futex_calls_thread();
}

static void sleep_until(double when)
{
	struct timespec ts = s_to_ts(when);
	int err;

	while ((err = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL)) == EINTR)
		;
	bench_check(err, "clock_nanosleep");
}

/* Joins every worker by the deadline; on a timeout says how many threads are
 * still running, lets the scenario print the lock's state, and exits 1. */
static void join_all(const struct bench_run_spec *spec, struct worker *w,
		     double deadline, double allowed_s)
{
	struct timespec ts = s_to_ts(deadline);
	unsigned left = 0;
	int err;

	for (unsigned i = 0; i < spec->threads; i++) {
		err = pthread_clockjoin_np(w[i].tid, NULL, CLOCK_MONOTONIC, &ts);
		if (err == ETIMEDOUT)
			break;
		bench_check(err, "pthread_clockjoin_np");
		w[i].joined = true;
	}
	for (unsigned i = 0; i < spec->threads; i++) {
		if (w[i].joined)
			continue;
		err = pthread_tryjoin_np(w[i].tid, NULL);
		if (err == EBUSY)
			left++;
		else
			bench_check(err, "pthread_tryjoin_np");
	}
	if (left == 0)
		return;
	fflush(stdout);
	progress_keep();
	fprintf(stderr, "hotlock-bench: %s: %u of %u threads did not stop within %.1f s; "
		"the lock hangs or starves them\n", spec->label, left, spec->threads,
		allowed_s);
	if (spec->on_hang)
		spec->on_hang(spec->arg);
	bench_exit(1);
}

void bench_print_lock_state(const char *name,
			    int (*describe)(const void *l, char *buf, size_t len),
			    const void *l)
{
	char buf[512];

	if (!describe)
		return;
	describe(l, buf, sizeof buf);
	fprintf(stderr, "hotlock-bench: %s lock state: %s\n", name, buf);
}

/* N for a virtual:N topology in effect, whose nodes the harness assigns to
 * the workers; 0 for numa and llc, whose nodes are the CPUs'. */
static int virtual_nodes(void)
{
	static const char prefix[] = "virtual:";
	char spec[64];

	hl_topology_get(spec, sizeof spec);
	if (strncmp(spec, prefix, sizeof prefix - 1) != 0)
		return 0;
	return hl_topology_nodes();
}

void bench_run(const struct bench_run_spec *spec, struct bench_sample *out)
{
	const unsigned n = spec->threads;
	const int place = virtual_nodes();
	/* Only where a handoff can cross nodes; the same for every lock. */
	const bool handoffs = spec->notes_handoffs && hl_topology_nodes() > 1;
	struct run_state rs = { .spec = spec };
	struct worker *w;
	pthread_attr_t attr;
	struct bench_machine_mark before, after;
	double t0, first = INFINITY, last = -INFINITY;

	bench_machine_mark(&before);
	w = aligned_alloc(BENCH_CACHELINE, n * sizeof *w);
	if (!w)
		bench_fatal("out of memory");
	memset(w, 0, n * sizeof *w);
	atomic_init(&rs.stop, false);
	bench_check(pthread_barrier_init(&rs.start, NULL, n + 1), "pthread_barrier_init");
	bench_check(pthread_attr_init(&attr), "pthread_attr_init");
	/* Small stacks, so that 1024 threads are cheap. */
	bench_check(pthread_attr_setstacksize(&attr, 256 * 1024), "pthread_attr_setstacksize");
	if (spec->fifo_priority > 0) {
		struct sched_param sp = { .sched_priority = spec->fifo_priority };

		bench_check(pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED),
			    "pthread_attr_setinheritsched");
		bench_check(pthread_attr_setschedpolicy(&attr, SCHED_FIFO),
			    "pthread_attr_setschedpolicy");
		bench_check(pthread_attr_setschedparam(&attr, &sp),
			    "pthread_attr_setschedparam");
	}
	for (unsigned i = 0; i < n; i++) {
		int err;

		w[i].t.stop = &rs.stop;
		w[i].t.id = i;
		w[i].t.arg = spec->arg;
		w[i].t.count_handoffs = handoffs;
		w[i].rs = &rs;
		/* Worker i on node i mod N, so that every node has workers
		 * whatever CPUs the threads run on. */
		w[i].node = place > 0 ? (int)(i % (unsigned)place) : -1;
		err = pthread_create(&w[i].tid, &attr, worker_main, &w[i]);
		if (err)
			bench_fatal("%s: pthread_create (thread %u of %u): %s",
				    spec->label, i + 1, n, strerror(err));
	}
	bench_check(pthread_attr_destroy(&attr), "pthread_attr_destroy");

	barrier_wait(&rs.start);
	t0 = bench_now();
	sleep_until(t0 + spec->duration_s);
	/* relaxed: see bench_should_stop. */
	atomic_store_explicit(&rs.stop, true, memory_order_relaxed);
	if (spec->on_stop)
		spec->on_stop(spec->arg);
	join_all(spec, w, t0 + spec->duration_s + 30, spec->duration_s + 30);
	bench_check(pthread_barrier_destroy(&rs.start), "pthread_barrier_destroy");
	bench_machine_mark(&after);

	memset(out, 0, sizeof *out);
	out->other_cpus = bench_other_cpus(&before, &after, 0);
	out->busy_cpus = bench_busy_cpus(&before, &after);
	out->threads = n;
	out->thread_ops = bench_xcalloc(n, sizeof *out->thread_ops);
	out->futex_counted = spec->futex_counted;
	out->handoffs_counted = handoffs;
	for (unsigned i = 0; i < n; i++) {
		const struct bench_thread *t = &w[i].t;

		if (t->err)
			bench_fatal("%s: thread %u: %s: %s", spec->label, i,
				    t->err_what, strerror(t->err));
		out->thread_ops[i] = t->ops;
		out->total_ops += t->ops;
		out->futex_calls += t->futex_calls;
		out->csw += t->csw;
		out->cpu_s += t->cpu_s;
		out->handoffs += t->handoffs;
		out->cross_handoffs += t->cross_handoffs;
		first = fmin(first, t->start_s);
		last = fmax(last, t->end_s);
	}
	if (!spec->futex_counted)
		out->futex_calls = 0;
	/* Every op counted lies in [first start, last end]. */
	out->wall_s = last - first;
	out->ops_per_sec = out->wall_s > 0 ? (double)out->total_ops / out->wall_s : 0;
	out->cross_node_share = handoffs && out->handoffs ?
		(double)out->cross_handoffs / (double)out->handoffs : NAN;
	free(w);
}

void bench_sample_free(struct bench_sample *s)
{
	free(s->thread_ops);
	free(s->extra);
	s->thread_ops = NULL;
	s->extra = NULL;
}

/* ---- derived figures ------------------------------------------------------ */

struct sample_view {
	uint64_t min, max;
	double avg;
	double futex_per_kop;   /* NAN: not counted or no ops */
	double csw_per_kop;
	double cpu_per_mop;
};

/* x per `unit` ops, NAN when there were no ops. */
static double per_ops(double x, uint64_t ops, double unit)
{
	return ops ? x * unit / (double)ops : NAN;
}

static void sample_view(const struct bench_sample *s, struct sample_view *v)
{
	uint64_t sum = 0;

	v->min = UINT64_MAX;
	v->max = 0;
	for (unsigned i = 0; i < s->threads; i++) {
		if (s->thread_ops[i] < v->min)
			v->min = s->thread_ops[i];
		if (s->thread_ops[i] > v->max)
			v->max = s->thread_ops[i];
		sum += s->thread_ops[i];
	}
	/* Not total_ops, which a scenario may count in its own unit (cond:
	 * items consumed, while its producers' ops are items produced). */
	v->avg = (double)sum / s->threads;
	v->futex_per_kop = s->futex_counted ?
		per_ops((double)s->futex_calls, s->total_ops, 1e3) : NAN;
	v->csw_per_kop = per_ops((double)s->csw, s->total_ops, 1e3);
	v->cpu_per_mop = per_ops(s->cpu_s, s->total_ops, 1e6);
}

double bench_per_wall(const struct bench_sample *s, double x)
{
	return s->wall_s > 0 ? x / s->wall_s : NAN;
}

double bench_sample_ops_per_sec(const struct bench_sample *s)
{
	return s->ops_per_sec;
}

/* ---- tables -------------------------------------------------------------- */

/* One table cell, "-" for NAN; prec < 0: -prec significant digits, no
 * exponent (see bench_column). */
void bench_print_cell(double v, int width, int prec)
{
	if (isnan(v)) {
		printf(" %*s", width, "-");
		return;
	}
	if (prec < 0) {
		int digits = -prec;

		prec = v == 0 || !isfinite(v) ? 0 :
			digits - 1 - (int)floor(log10(fabs(v)));
		if (prec < 0)
			prec = 0;
	}
	printf(" %*.*f", width, prec, v);
}

/* The most CPUs other load kept busy during any of these runs. */
static double most_other_cpus(const struct bench_sample *runs, unsigned n, double others)
{
	for (unsigned k = 0; k < n; k++)
		if (runs[k].other_cpus > others)
			others = runs[k].other_cpus;
	return others;
}

static void other_load_note(double others)
{
	const unsigned busy = bench_busy_count();

	if (others < OTHER_CPUS_NOTE)
		return;
	if (busy > 0)
		printf("note: other processes, beyond the %u started by --busy, kept up to "
		       "%.1f CPUs busy during these runs; expect noise (--repeat helps)\n",
		       busy, others);
	else
		printf("note: other processes kept up to %.1f CPUs busy during these runs; "
		       "expect noise (--repeat helps)\n", others);
}

/* ---- the standard columns ------------------------------------------------ */

static double col_mops(const struct bench_result *r)
{
	return bench_result_sample(r)->ops_per_sec / 1e6;
}

/* Which of a run's per-thread figures a column shows. */
enum thread_figure { THR_MIN, THR_AVG, THR_MAX };

static double thread_mops(const struct bench_result *r, enum thread_figure f)
{
	const struct bench_sample *m = bench_result_sample(r);
	struct sample_view v;

	sample_view(m, &v);
	return bench_per_wall(m, f == THR_MIN ? (double)v.min :
			      f == THR_MAX ? (double)v.max : v.avg) / 1e6;
}

static double col_thr_min(const struct bench_result *r) { return thread_mops(r, THR_MIN); }
static double col_thr_avg(const struct bench_result *r) { return thread_mops(r, THR_AVG); }
static double col_thr_max(const struct bench_result *r) { return thread_mops(r, THR_MAX); }

static double col_fairness(const struct bench_result *r)
{
	struct sample_view v;

	sample_view(bench_result_sample(r), &v);
	return v.max ? (double)v.min / (double)v.max : NAN;
}

static double col_futex(const struct bench_result *r)
{
	struct sample_view v;

	sample_view(bench_result_sample(r), &v);
	return v.futex_per_kop;
}

static double col_csw(const struct bench_result *r)
{
	struct sample_view v;

	sample_view(bench_result_sample(r), &v);
	return v.csw_per_kop;
}

static double col_cpu(const struct bench_result *r)
{
	struct sample_view v;

	sample_view(bench_result_sample(r), &v);
	return v.cpu_per_mop;
}

static double col_ratio(const struct bench_result *r)
{
	return r->ratio;
}

static double col_limit(const struct bench_result *r)
{
	return r->limit_share * 100;
}

static double col_xnode(const struct bench_result *r)
{
	return bench_result_sample(r)->cross_node_share * 100;
}

const struct bench_column bench_col_mops = { "Mops/s", "total rate, Mops/s", 8, 3, col_mops,
	"all threads' lock/unlock pairs per second of wall time" };
const struct bench_column bench_col_thr_min = { "thr-min", "per-thread minimum, Mops/s", 8, 3,
	col_thr_min, "per-thread rates, Mops/s: the slowest thread's, the average, the fastest's" };
const struct bench_column bench_col_thr_avg = { "thr-avg", "per-thread average, Mops/s", 8, 3,
	col_thr_avg, NULL };
const struct bench_column bench_col_thr_max = { "thr-max", "per-thread maximum, Mops/s", 8, 3,
	col_thr_max, NULL };
const struct bench_column bench_col_fairness = { "min/max", "per-thread min/max", 7, 2,
	col_fairness, "thr-min over thr-max: fairness (1 = fair)" };
const struct bench_column bench_col_futex = { "futex/kop", "futex calls per 1000 ops", 9, 2,
	col_futex, "futex syscalls per 1000 ops, summed over the threads' own hl_futex_stats; "
	"'-' for locks whose futex calls are their own and cannot be counted (JSON: null)" };
const struct bench_column bench_col_csw = { "csw/kop", "context switches per 1000 ops", 8, 2,
	col_csw, "voluntary context switches per 1000 ops (getrusage)" };
const struct bench_column bench_col_cpu = { "cpu-s/Mop", "CPU seconds per million ops", 9, 3,
	col_cpu, "CPU seconds (all threads) per million ops: spinning shows here" };
const struct bench_column bench_col_ratio = { "ratio", "ops/s over the first lock's", 6, 2,
	col_ratio, "ops/s over the first lock's at the same thread count" };
const struct bench_column bench_col_limit = { "limit%", "ops/s over the limit, %", 6, 1,
	col_limit, "ops/s over the limit, the best a perfect lock could do (the header "
	"gives its formula); without 1 in --threads a short 1-thread calibration run "
	"of the first lock gives the 1-thread rate it starts from" };
const struct bench_column bench_col_xnode = { "xnode%", "cross-node handoffs, %", 6, 1,
	col_xnode, "only when the topology has more than one node: of the handoffs "
	"(acquisitions by another thread than the previous holder), the share whose "
	"previous holder was on another node (JSON cross_node_share, a fraction 0-1; "
	"'-' and null when a run had no handoff, as with 1 thread).  Counted alike for "
	"every lock: inside the critical section each thread compares its index and "
	"hl_topology_node() with the previous holder's" };

void bench_columns_help(FILE *f, const struct bench_column *const *cols, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char name[128];
		size_t len = (size_t)snprintf(name, sizeof name, "%s", cols[i]->head);
		const char *help = cols[i]->help;

		while (i + 1 < n && !cols[i + 1]->help && len < sizeof name)
			len += (size_t)snprintf(name + len, sizeof name - len, " %s",
						cols[++i]->head);
		if (help)
			bench_help_item(f, name, help);
	}
}

static const struct bench_column *const mutex_columns[] = {
	&bench_col_mops, &bench_col_thr_min, &bench_col_thr_avg, &bench_col_thr_max,
	&bench_col_fairness, &bench_col_futex, &bench_col_csw, &bench_col_cpu,
	&bench_col_ratio, &bench_col_limit,
};

void bench_table_print(const char *title, const char *const *names,
		       const struct bench_result *row, size_t n,
		       const struct bench_column *const *cols, size_t ncols)
{
	int namew = 14;
	double others = 0;

	for (size_t l = 0; l < n; l++)
		if ((int)strlen(names[l]) > namew)
			namew = (int)strlen(names[l]);
	printf("%s\n", title);
	printf("%-*s", namew, "lock");
	for (size_t k = 0; k < ncols; k++)
		printf(" %*s", cols[k]->width, cols[k]->head);
	putchar('\n');
	for (size_t l = 0; l < n; l++) {
		const struct bench_result *r = &row[l];

		printf("%-*s", namew, names[l]);
		for (size_t k = 0; k < ncols; k++)
			bench_print_cell(cols[k]->value(r), cols[k]->width, cols[k]->prec);
		putchar('\n');
		others = most_other_cpus(bench_result_sample(r), 1, others);
	}
	other_load_note(others);
}

#define MAX_COLUMNS 32  /* of a suite's table */

static void print_table(const struct bench_suite *s, const struct bench_result *row,
			unsigned threads)
{
	const struct bench_column *cols[MAX_COLUMNS + 1];
	size_t ncols = s->columns ? s->ncolumns :
		sizeof mutex_columns / sizeof mutex_columns[0];
	char title[32];

	if (ncols > MAX_COLUMNS)
		bench_fatal("%s: %zu table columns, at most %d (internal error)",
			    s->scenario, ncols, MAX_COLUMNS);
	memcpy(cols, s->columns ? s->columns : mutex_columns, ncols * sizeof cols[0]);
	/* The same for every run of a suite: the topology does not change. */
	if (bench_result_sample(&row[0])->handoffs_counted)
		cols[ncols++] = &bench_col_xnode;
	snprintf(title, sizeof title, "threads=%u", threads);
	bench_table_print(title, s->lock_names, row, s->nlocks, cols, ncols);
}

/* A summary table: a row per thread count, a column per lock, the cells
 * col's value for each (lock, threads).  A lock named GROUP/NAME is headed
 * NAME, under a heading GROUP over the neighbouring columns of its group
 * (rwsem's LOCK/MODE entries). */
static size_t group_len(const char *name)
{
	const char *slash = strchr(name, '/');

	return slash ? (size_t)(slash - name) : 0;
}

static const char *leaf_name(const char *name)
{
	const char *slash = strchr(name, '/');

	return slash ? slash + 1 : name;
}

static void print_summary(const struct bench_suite *s, const struct bench_result *results,
			  const struct bench_column *col)
{
	const struct bench_common *c = s->common;
	const char *const *names = s->lock_names;
	int w[BENCH_MAX_LOCKS];
	bool grouped = false;
	double others = 0;

	for (size_t l = 0; l < s->nlocks; l++) {
		int leaf = (int)strlen(leaf_name(names[l]));

		w[l] = leaf > col->width ? leaf : col->width;
		grouped |= group_len(names[l]) > 0;
	}
	printf("%s\n", col->title ? col->title : col->head);
	if (grouped) {
		printf("%-7s", "");
		for (size_t l0 = 0, l1; l0 < s->nlocks; l0 = l1) {
			const size_t g = group_len(names[l0]);
			int span = -1;

			for (l1 = l0; l1 < s->nlocks && group_len(names[l1]) == g &&
			     strncmp(names[l1], names[l0], g) == 0; l1++)
				span += w[l1] + 1;
			if ((int)g > span) {    /* widen the group to fit its name */
				w[l1 - 1] += (int)g - span;
				span = (int)g;
			}
			printf(" %*.*s", span, (int)g, names[l0]);
		}
		putchar('\n');
	}
	printf("%-7s", "threads");
	for (size_t l = 0; l < s->nlocks; l++)
		printf(" %*s", w[l], leaf_name(names[l]));
	putchar('\n');
	for (size_t ti = 0; ti < c->nthreads; ti++) {
		printf("%-7u", c->threads[ti]);
		for (size_t l = 0; l < s->nlocks; l++) {
			const struct bench_result *r = &results[ti * s->nlocks + l];

			bench_print_cell(col->value(r), w[l], col->prec);
			others = most_other_cpus(bench_result_sample(r), 1, others);
		}
		putchar('\n');
	}
	other_load_note(others);
}

/* ---- the locktorture table ------------------------------------------------ */

/* "2.707 (0.127)", and " / 1.004" after it for a lock compared with the
 * first; "-" for what is unknown (one run has no deviation). */
static void torture_cell(char *buf, size_t len, const struct bench_result *r,
			 bool speedup)
{
	int n;

	if (isnan(r->mops_sd))
		n = snprintf(buf, len, "%.3f (-)", r->mops_mean);
	else
		n = snprintf(buf, len, "%.3f (%.3f)", r->mops_mean, r->mops_sd);
	if (!speedup || n < 0 || (size_t)n >= len)
		return;
	if (isnan(r->speedup))
		snprintf(buf + n, len - (size_t)n, " / -");
	else
		snprintf(buf + n, len - (size_t)n, " / %.3f", r->speedup);
}

/* Width of lock l's column: its heading, or room for a wide cell. */
static int torture_width(const struct bench_suite *s, size_t l, char *head, size_t len)
{
	int n = snprintf(head, len, l ? "%s / speedup" : "%s", s->lock_names[l]);

	return n > 26 ? n : l ? 26 : 16;
}

static void torture_heading(const struct bench_suite *s)
{
	char head[96];

	printf("%-5s", "#thr");
	for (size_t l = 0; l < s->nlocks; l++) {
		int w = torture_width(s, l, head, sizeof head);

		printf(" %*s", w, head);
	}
	putchar('\n');
}

/* Returns the most CPUs other load kept busy during the row's runs. */
static double torture_row(const struct bench_suite *s, const struct bench_result *row)
{
	char head[96], buf[96];
	double others = 0;

	printf("%-5u", row[0].threads);
	for (size_t l = 0; l < s->nlocks; l++) {
		int w = torture_width(s, l, head, sizeof head);

		torture_cell(buf, sizeof buf, &row[l], l > 0);
		printf(" %*s", w, buf);
		others = most_other_cpus(row[l].runs, s->common->repeat, others);
	}
	putchar('\n');
	return others;
}

/* Mean and sample standard deviation of the runs' total ops, in millions. */
static void mops_stats(struct bench_result *r, unsigned n)
{
	double sum = 0, sq = 0;

	for (unsigned k = 0; k < n; k++)
		sum += (double)r->runs[k].total_ops / 1e6;
	r->mops_mean = sum / n;
	for (unsigned k = 0; k < n; k++) {
		double d = (double)r->runs[k].total_ops / 1e6 - r->mops_mean;

		sq += d * d;
	}
	r->mops_sd = n > 1 ? sqrt(sq / (n - 1)) : NAN;
}

/* ---- JSON ---------------------------------------------------------------- */

void bench_json_sample(struct bench_json *j, const struct bench_sample *s)
{
	struct sample_view v;

	sample_view(s, &v);
	bench_json_number(j, "ops_per_sec", s->ops_per_sec);
	bench_json_uint(j, "total_ops", s->total_ops);
	bench_json_array(j, "thread_ops");
	for (unsigned i = 0; i < s->threads; i++)
		bench_json_uint(j, NULL, s->thread_ops[i]);
	bench_json_end(j);
	bench_json_uint(j, "thread_ops_min", v.min);
	bench_json_number(j, "thread_ops_avg", v.avg);
	bench_json_uint(j, "thread_ops_max", v.max);
	bench_json_number(j, "thread_ops_per_sec_min", bench_per_wall(s, (double)v.min));
	bench_json_number(j, "thread_ops_per_sec_avg", bench_per_wall(s, v.avg));
	bench_json_number(j, "thread_ops_per_sec_max", bench_per_wall(s, (double)v.max));
	if (s->futex_counted)
		bench_json_uint(j, "futex_calls", s->futex_calls);
	else
		bench_json_null(j, "futex_calls");
	bench_json_number(j, "futex_calls_per_kop", v.futex_per_kop);
	bench_json_uint(j, "csw", s->csw);
	bench_json_number(j, "csw_per_kop", v.csw_per_kop);
	bench_json_number(j, "cpu_s", s->cpu_s);
	bench_json_number(j, "cpu_s_per_mop", v.cpu_per_mop);
	bench_json_number(j, "wall_s", s->wall_s);
	bench_json_number(j, "other_cpus", s->other_cpus);
	if (bench_busy_count() > 0)
		bench_json_number(j, "busy_cpus", s->busy_cpus);
	/* Only where a handoff can cross nodes (see bench_handoff_note). */
	if (s->handoffs_counted) {
		bench_json_uint(j, "handoffs", s->handoffs);
		bench_json_uint(j, "cross_node_handoffs", s->cross_handoffs);
		bench_json_number(j, "cross_node_share", s->cross_node_share);
	}
}

/* The measured members of one run (also of a result, for its median run);
 * ctx is the suite. */
static void json_sample(const void *ctx, struct bench_json *j, const struct bench_sample *s)
{
	const struct bench_suite *suite = ctx;

	bench_json_sample(j, s);
	if (suite->json_sample)
		suite->json_sample(suite->ctx, j, s);
}

void bench_json_runs(struct bench_json *j, const struct bench_sample *runs, unsigned n,
		     void (*members)(const void *ctx, struct bench_json *j,
				     const struct bench_sample *s),
		     const void *ctx)
{
	bench_json_array(j, "runs");
	for (unsigned k = 0; k < n; k++) {
		bench_json_object(j, NULL);
		members(ctx, j, &runs[k]);
		bench_json_end(j);
	}
	bench_json_end(j);
}

void bench_json_environment(struct bench_json *j)
{
	char topology[64];
	hl_config_t cfg;

	hl_config_get(&cfg);
	hl_topology_get(topology, sizeof topology);
	bench_json_string(j, "futex_interface", hl_futex_interface());
	bench_json_string(j, "topology", topology);
	bench_json_uint(j, "topology_nodes", (uint64_t)hl_topology_nodes());
	bench_json_busy(j);
	bench_json_run_info(j);
	bench_json_object(j, "hotlock_config");
	bench_json_uint(j, "spin_ns", cfg.spin_ns);
	bench_json_uint(j, "handoff_ns", cfg.handoff_ns);
	bench_json_uint(j, "cna_threshold_ns", cfg.cna_threshold_ns);
	bench_json_end(j);
}

struct suite_out {
	struct bench_result *results;   /* [nthreads][nlocks] */
	unsigned cores;
	double base;                    /* first lock's 1-thread ops/s */
	double limit;                   /* NAN when none */
	double calibration_s;           /* 0: no calibration run */
	char topology[64];              /* hl_topology_get */
	int nodes;                      /* hl_topology_nodes */
};

static void write_suite_json(const struct bench_suite *s, const struct suite_out *o,
			     struct bench_json *j)
{
	static const char *const suite_key[] = { "lock", "threads" };
	const struct bench_common *c = s->common;

	bench_json_object(j, NULL);
	bench_json_string(j, "bench", s->scenario);
	bench_json_object(j, "config");
	if (s->json_config)
		s->json_config(s->ctx, j);
	bench_json_number(j, "duration_s", c->duration_s);
	bench_json_uint(j, "cores", o->cores);
	bench_json_uint_array(j, "threads", c->threads, c->nthreads);
	bench_json_string_array(j, "locks", s->lock_names, s->nlocks);
	bench_json_object(j, "lock_roles");
	for (size_t l = 0; l < s->nlocks; l++)
		bench_json_string(j, s->lock_names[l], s->lock_role(s->lock_names[l]));
	bench_json_end(j);
	bench_json_uint(j, "repeat", c->repeat);
	bench_json_string(j, "table", s->locktorture_table ? "locktorture" : "median");
	bench_json_environment(j);
	if (o->calibration_s > 0)
		bench_json_number(j, "limit_calibration_s", o->calibration_s);
	else
		bench_json_null(j, "limit_calibration_s");
	bench_json_end(j);
	bench_json_number(j, "limit_ops_per_sec", o->limit);
	bench_json_layout(j, suite_key, 2, "ops_per_sec", false);
	bench_json_array(j, "results");
	for (size_t i = 0; i < c->nthreads * s->nlocks; i++) {
		const struct bench_result *r = &o->results[i];

		bench_json_object(j, NULL);
		bench_json_string(j, "lock", s->lock_names[r->lock]);
		bench_json_uint(j, "threads", r->threads);
		json_sample(s, j, bench_result_sample(r));
		bench_json_number(j, "ratio", r->ratio);
		bench_json_number(j, "limit_share", r->limit_share);
		bench_json_uint(j, "median_run", r->median);
		if (s->locktorture_table) {
			bench_json_number(j, "total_mops_mean", r->mops_mean);
			bench_json_number(j, "total_mops_sd", r->mops_sd);
			bench_json_number(j, "speedup", r->speedup);
		}
		if (s->json_result)
			s->json_result(s->ctx, j, r);
		bench_json_runs(j, r->runs, c->repeat, json_sample, s);
		bench_json_end(j);
	}
	bench_json_end(j);
	bench_json_end(j);
	bench_json_close(j);
}

/* ---- a suite ------------------------------------------------------------- */

static void print_header(const struct bench_suite *s, const struct suite_out *o)
{
	const struct bench_common *c = s->common;

	printf("%s: %s duration=%gs", s->scenario, s->params, c->duration_s);
	if (c->repeat > 1 && !s->locktorture_table)
		printf(" repeat=%u (median run shown)", c->repeat);
	else if (c->repeat > 1)
		printf(" repeat=%u", c->repeat);
	printf(" cores=%u topology=%s nodes=%d", o->cores, o->topology, o->nodes);
	if (!isnan(o->limit)) {
		printf("  (limit %.2f Mops/s = 1-thread %s rate %.2f", o->limit / 1e6,
		       s->lock_names[0], o->base / 1e6);
		if (o->calibration_s > 0)
			printf(" from a %gs calibration run", o->calibration_s);
		printf(" x %s)", s->limit_formula);
	}
	putchar('\n');
	bench_busy_note(stdout);
	if (s->locktorture_table) {
		printf("Each cell: total ops of one run (x10^6), the mean over %u run%s "
		       "(standard deviation);\nspeedup: that mean over %s's.\n",
		       c->repeat, c->repeat > 1 ? "s" : "", s->lock_names[0]);
		if (o->nodes > 1)
			printf("The JSON has each run's cross_node_share.\n");
		putchar('\n');
		torture_heading(s);
	} else {
		putchar('\n');
	}
}

/* Runs lock l at `threads` threads, with a progress line. */
static void suite_run_one(const struct bench_suite *s, size_t l, unsigned threads,
			  double duration_s, const char *what, struct bench_sample *out)
{
	char rate[32];

	bench_progress_begin("%s %s threads=%u %s", s->scenario, s->lock_names[l], threads, what);
	s->run(s->ctx, l, threads, duration_s, out);
	snprintf(rate, sizeof rate, "%.3f Mops/s", out->ops_per_sec / 1e6);
	bench_progress_end(rate, out->other_cpus);
}

int bench_suite_run(const struct bench_suite *s)
{
	const struct bench_common *c = s->common;
	const size_t nl = s->nlocks;
	struct suite_out o = { .cores = bench_cores(), .base = NAN, .limit = NAN };
	bool calibrate = s->limit_factor > 0 && c->threads[0] != 1;
	/* Opened first, so that an unwritable path fails before the runs. */
	struct bench_json *json = c->json ? bench_json_open(c->json) : NULL;
	char what[64];
	double torture_others = 0;

	hl_topology_get(o.topology, sizeof o.topology);
	o.nodes = hl_topology_nodes();
	o.results = bench_xcalloc(c->nthreads * nl, sizeof *o.results);
	/* Running before the first run (the calibration's included). */
	bench_busy_start(c->busy);
	bench_progress_start((unsigned)(c->nthreads * nl * c->repeat) + calibrate);

	if (calibrate) {
		struct bench_sample cal;

		o.calibration_s = fmin(c->duration_s, 0.5);
		suite_run_one(s, 0, 1, o.calibration_s, "calibration", &cal);
		o.base = cal.ops_per_sec;
		bench_sample_free(&cal);
	}
	for (size_t ti = 0; ti < c->nthreads; ti++) {
		struct bench_result *row = &o.results[ti * nl];
		const unsigned threads = c->threads[ti];

		for (size_t l = 0; l < nl; l++) {
			row[l].lock = l;
			row[l].threads = threads;
			row[l].runs = bench_xcalloc(c->repeat, sizeof *row[l].runs);
		}
		/* Round-robin over the locks inside each repeat, so that noise
		 * (another tenant, a frequency change) hits every lock alike. */
		for (unsigned k = 0; k < c->repeat; k++)
			for (size_t l = 0; l < nl; l++) {
				snprintf(what, sizeof what, "run %u/%u", k + 1, c->repeat);
				suite_run_one(s, l, threads, c->duration_s, what,
					      &row[l].runs[k]);
			}
		for (size_t l = 0; l < nl; l++) {
			row[l].median = bench_median_run(row[l].runs, c->repeat,
							 bench_sample_ops_per_sec);
			mops_stats(&row[l], c->repeat);
		}
		if (ti == 0) {
			if (!calibrate && s->limit_factor > 0)
				o.base = row[0].runs[row[0].median].ops_per_sec;
			if (s->limit_factor > 0)
				o.limit = o.base * s->limit_factor;
			bench_progress_clear();
			print_header(s, &o);
		}
		for (size_t l = 0; l < nl; l++) {
			double ops = row[l].runs[row[l].median].ops_per_sec;
			double first = row[0].runs[row[0].median].ops_per_sec;

			row[l].ratio = first > 0 ? ops / first : NAN;
			row[l].limit_share = o.limit > 0 ? ops / o.limit : NAN;
			row[l].speedup = row[0].mops_mean > 0 ?
				row[l].mops_mean / row[0].mops_mean : NAN;
		}
		bench_progress_clear();
		if (s->locktorture_table) {
			torture_others = fmax(torture_others, torture_row(s, row));
		} else if (!s->summary_only) {
			if (ti > 0)
				putchar('\n');
			print_table(s, row, threads);
		}
		fflush(stdout);
	}
	/* The runs are over: the load with them. */
	bench_busy_stop();
	bench_progress_clear();
	if (s->locktorture_table)
		other_load_note(torture_others);
	for (size_t k = 0; k < s->nsummary; k++) {
		if (k > 0 || !s->summary_only)
			putchar('\n');
		print_summary(s, o.results, s->summary[k]);
	}
	if (json)
		write_suite_json(s, &o, json);
	for (size_t i = 0; i < c->nthreads * nl; i++) {
		for (unsigned k = 0; k < c->repeat; k++)
			bench_sample_free(&o.results[i].runs[k]);
		free(o.results[i].runs);
	}
	free(o.results);
	return 0;
}

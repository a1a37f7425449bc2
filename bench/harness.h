/* SPDX-License-Identifier: MIT */
/* hotlock-bench: the harness every scenario shares.
 *
 * - command line: number and list parsing and usage errors (exit 2) for the
 *   declared options of options.h, which parses the options all scenarios
 *   share (--locks, --threads, --duration, --repeat, --json, --topology,
 *   --busy) into struct bench_common;
 * - one run: T threads released together from a barrier, each running the
 *   scenario's body until the main thread sets the stop flag, each measuring
 *   its own ops, futex syscalls, voluntary context switches and CPU time, and
 *   (topologies of more than one node) the lock handoffs that crossed nodes;
 *   worker i placed on node i mod N under a virtual:N topology; a hook
 *   (on_stop) to wake threads that sleep on something else than the stop
 *   flag; a watchdog that exits 1 if the threads do not stop;
 * - a suite: every (lock, threads) pair run R times, interleaved across locks,
 *   the median run reported, ratios against the first lock, the limit, the
 *   progress line on stderr, a table per thread count on stdout (the mutex
 *   columns, or the scenario's own), summary tables (a row per thread
 *   count, a column per lock), JSON out (with the scenario's own members
 *   per run, from the run's extra figures); or, for a locktorture-style
 *   suite, one table of each lock's mean total ops (standard deviation) and
 *   speedup over the first lock;
 * - optionally, the workers under SCHED_FIFO (bench_run_spec.fifo_priority);
 * - --busy N: N CPU-bound processes beside the runs (busy.c), stated in the
 *   output and the JSON and left out of the other load the runs report.
 *
 * A scenario supplies the body of one thread and a function that runs one
 * (lock, threads) measurement; see scenario_mutex.c.  One whose runs are not
 * (lock, threads) pairs drives bench_run itself and uses the pieces a suite
 * is made of (progress line, median run, table, JSON members); see
 * cond/suite.c. */
#ifndef HOTLOCK_BENCH_HARNESS_H
#define HOTLOCK_BENCH_HARNESS_H

#include <stdatomic.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <hotlock/topology.h>

#define BENCH_MAX_THREADS       1024u /* per run */
#define BENCH_MAX_THREAD_COUNTS 64u   /* entries in --threads */
#define BENCH_MAX_LOCKS         32u   /* entries in --locks */
#define BENCH_CACHELINE         64u
#define BENCH_MAX_BUSY          1024u /* --busy */

struct bench_json;

/* A spin-wait hint: pause on x86 (lets the sibling hyperthread run and
 * leaves the spin loop without a memory-order mis-speculation), a compiler
 * barrier elsewhere so the loop is not optimised away. */
static inline void bench_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	atomic_signal_fence(memory_order_seq_cst);
#endif
}

/* xorshift64* (Vigna): a few cycles per draw, for thread-private state that
 * is never 0.  Seed it from the thread's index, so that thread i draws the
 * same sequence under every lock. */
static inline uint64_t bench_random(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545F4914F6CDD1Dull;
}

/* ---- errors ---------------------------------------------------------- */

/* "hotlock-bench SCENARIO: error: ..." and a usage hint on stderr; exit 2. */
_Noreturn void bench_usage_error(const char *scenario, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "hotlock-bench: ..." on stderr; exit 1. */
_Noreturn void bench_fatal(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
/* bench_fatal with "what: strerror(err)" when err != 0. */
void bench_check(int err, const char *what);
/* calloc that exits 1 when out of memory (and never returns NULL for 0). */
void *bench_xcalloc(size_t n, size_t size);
/* size bytes (at least one line) on cache lines of their own, zeroed:
 * what a static initialiser gives a lock object.  free() releases it;
 * exits 1 when out of memory. */
void *bench_alloc_lines(size_t size);

/* ---- command line ---------------------------------------------------- */

struct bench_common {
	const char *locks;      /* --locks as given; the scenario parses it */
	unsigned threads[BENCH_MAX_THREAD_COUNTS]; /* ascending, distinct */
	size_t nthreads;
	double duration_s;
	unsigned repeat;
	const char *json;       /* NULL: no JSON */
	/* --topology as given, already in effect (hl_topology_set); NULL: the
	 * library's own choice (HOTLOCK_TOPOLOGY, else numa). */
	const char *topology;
	bool threads_given;     /* --threads was on the command line */
	/* --busy N: CPU-bound processes beside the runs (bench_busy_start);
	 * 0: none. */
	unsigned busy;
};

/* If argv[*i] is option name ("--name VALUE" or "--name=VALUE"), returns its
 * value and advances *i past it; NULL when argv[*i] is another option. */
const char *bench_opt_value(const char *scenario, int argc, char **argv,
			    int *i, const char *name);
/* Parses an integer in [min, max]; exits 2 naming the option otherwise. */
unsigned long bench_parse_ulong(const char *scenario, const char *opt,
				const char *s, unsigned long min,
				unsigned long max);
/* Parses a positive finite number of seconds, at most max. */
double bench_parse_seconds(const char *scenario, const char *opt,
			   const char *s, double max);

/* Calls item for each entry of a comma-separated list (a NUL-terminated
 * copy); exits 2 naming opt on an empty or overlong entry. */
void bench_list_each(const char *scenario, const char *opt, const char *list,
		     void (*item)(void *ctx, const char *entry), void *ctx);

/* --threads "1,2,4,8": each 1 to BENCH_MAX_THREADS, sorted ascending,
 * duplicates dropped (the 1-thread runs then come first, and give the
 * limit); exits 2 on a bad list. */
void bench_common_threads(struct bench_common *c, const char *scenario,
			  const char *list);
/* --topology SPEC: in effect from here on, for every run (hl_topology_set);
 * a spec it rejects exits 2, one this machine cannot provide exits 1. */
void bench_common_topology(struct bench_common *c, const char *scenario,
			   const char *spec);
/* Fills the defaults: threads 1,2,4,8, duration 2 s, repeat 1. */
void bench_common_defaults(struct bench_common *c, const char *locks);
/* CPUs in the calling thread's affinity mask. */
unsigned bench_cores(void);
/* Pins the calling thread to one CPU: 0 or pthread_setaffinity_np's errno. */
int bench_pin_self(int cpu);
double bench_now(void); /* CLOCK_MONOTONIC, seconds */
double bench_thread_cpu_s(void); /* CLOCK_THREAD_CPUTIME_ID, seconds */

/* ---- one run --------------------------------------------------------- */

/* One measuring thread.  The body reads stop through bench_should_stop and
 * returns its op count; the harness fills in the rest. */
struct bench_thread {
	atomic_bool *stop;
	unsigned id;            /* 0 .. threads-1 */
	void *arg;              /* the run's arg */
	int err;                /* set by bench_thread_fail */
	const char *err_what;
	uint64_t ops;
	uint64_t futex_calls;   /* hl_futex_stats_thread delta */
	uint64_t csw;           /* voluntary context switches (RUSAGE_THREAD) */
	double cpu_s;           /* CLOCK_THREAD_CPUTIME_ID delta */
	double start_s, end_s;  /* CLOCK_MONOTONIC around the body */
	/* Set by the harness: bench_handoff_note counts (the topology has more
	 * than one node and the scenario asked for it). */
	bool count_handoffs;
	uint64_t handoffs;      /* acquisitions that followed another thread's */
	uint64_t cross_handoffs; /* ... whose previous holder was on another node */
} __attribute__((aligned(BENCH_CACHELINE)));

static inline bool bench_should_stop(const struct bench_thread *t)
{
	/* relaxed: the flag only ends the loop; the ops counts are read by the
	 * main thread after pthread_join, which orders them. */
	return atomic_load_explicit(t->stop, memory_order_relaxed);
}

/* The calling thread's futex syscalls so far (hl_futex_stats_thread: those
 * hotlock's futex layer made), and its voluntary context switches
 * (getrusage), for a body that counts them around some of its calls. */
uint64_t bench_thread_futex_calls(void);
uint64_t bench_thread_csw(void);

/* Records an error in a body (err from a lock function) and stops the run;
 * the harness reports it and exits 1 once the threads are joined. */
void bench_thread_fail(struct bench_thread *t, const char *what, int err);

/* Who held the lock under test last: plain variables, protected by that
 * lock (read and written only inside its critical section).  All-zero bytes
 * are the initial state (no holder yet). */
struct bench_handoff {
	unsigned holder;        /* the last holder's id + 1; 0: none yet */
	int node;               /* its hl_topology_node() when it acquired */
};

/* Called by a body inside every critical section, with the lock held: counts
 * the acquisition as a handoff if the previous holder was another thread, and
 * as a cross-node one if that thread was on another node.  Does nothing when
 * the harness does not count handoffs (one node), so every lock of a run
 * pays the same: one load of a thread-private flag, and with counting on,
 * hl_topology_node() and a read and write of the shared record. */
static inline void bench_handoff_note(struct bench_thread *t, struct bench_handoff *h)
{
	int node;

	if (!t->count_handoffs)
		return;
	node = hl_topology_node();
	if (h->holder != t->id + 1) {
		if (h->holder != 0) {
			t->handoffs++;
			t->cross_handoffs += h->node != node;
		}
		h->holder = t->id + 1;
	}
	h->node = node;
}

typedef uint64_t (*bench_body_fn)(struct bench_thread *t, void *arg);

struct bench_run_spec {
	const char *label;      /* "mutex hotlock threads=8", for messages */
	unsigned threads;
	double duration_s;
	bench_body_fn body;
	void *arg;
	bool futex_counted;     /* false: futex_calls is unknown */
	/* The body calls bench_handoff_note in its critical section; the harness
	 * turns the counting on when the topology has more than one node. */
	bool notes_handoffs;
	/* Optional: called before exiting when the threads do not stop, to
	 * print the lock's state. */
	void (*on_hang)(void *arg);
	/* Optional: called by the main thread right after it sets the stop
	 * flag, to wake the threads that sleep on something else than the flag
	 * (a condition variable) so that they see it. */
	void (*on_stop)(void *arg);
	/* > 0: the workers run under SCHED_FIFO at this priority (the caller
	 * has made sure the process may); 0: they inherit the caller's
	 * policy. */
	int fifo_priority;
};

/* What one run measured. */
struct bench_sample {
	unsigned threads;
	uint64_t total_ops;
	uint64_t *thread_ops;   /* [threads], owned */
	bool futex_counted;
	uint64_t futex_calls;   /* sum over threads, when futex_counted */
	uint64_t csw;           /* sum over threads */
	double cpu_s;           /* sum over threads */
	double wall_s;          /* first thread's start to last thread's end */
	double ops_per_sec;     /* total_ops / wall_s */
	/* Handoffs (see bench_handoff_note), summed over the threads; counted
	 * only when handoffs_counted. */
	bool handoffs_counted;
	uint64_t handoffs, cross_handoffs;
	double cross_node_share; /* cross_handoffs / handoffs; NAN if not counted or none */
	/* CPUs kept busy by everything else on the machine (other processes,
	 * the hypervisor's steal), averaged over the run: /proc/stat's busy
	 * time less this process's CPU time and that of the --busy processes.
	 * NAN when unknown.  On a shared machine this tells a disturbed run
	 * from a slow lock. */
	double other_cpus;
	/* CPUs the --busy processes kept busy, averaged over the run; NAN
	 * without --busy (or when their CPU clocks cannot be read). */
	double busy_cpus;
	/* The scenario's own figures for this run, set by its run function
	 * after bench_run; released with free() by bench_sample_free. */
	void *extra;
};

/* For an on_hang: "hotlock-bench: NAME lock state: ..." on stderr, from
 * the adapter's describe (nothing when it has none). */
void bench_print_lock_state(const char *name,
			    int (*describe)(const void *l, char *buf, size_t len),
			    const void *l);

/* Runs spec and fills out; on any failure prints why and exits 1.  Never
 * waits more than duration + 30 s for the threads to stop. */
void bench_run(const struct bench_run_spec *spec, struct bench_sample *out);
void bench_sample_free(struct bench_sample *s);

/* ---- statistics (stats.c) --------------------------------------------- */

/* qsort orders, ascending. */
int bench_cmp_double(const void *a, const void *b);
int bench_cmp_unsigned(const void *a, const void *b);
/* Sorts v[0..n) in place and returns its lower median (for an even count
 * the lower of the middle two: a value that happened); NAN for n = 0. */
double bench_lower_median(double *v, size_t n);
/* The first index of v[0..n) holding its lower median; 0 when none does
 * (a NAN among the values).  v is left as it was. */
unsigned bench_median_index(const double *v, unsigned n);
/* The index of the run with the median key (the lower median for an even
 * count, so that the run shown is one that happened); the suites' key is
 * bench_sample_ops_per_sec. */
unsigned bench_median_run(const struct bench_sample *runs, unsigned n,
			  double (*key)(const struct bench_sample *s));
double bench_sample_ops_per_sec(const struct bench_sample *s);

/* ---- progress line, for a scenario that drives its own runs ----------- */

/* One line on stderr per run, "[k/total] WHAT ... RESULT": on a terminal
 * each overwrites the last and is erased before a table; into a file or a
 * pipe each is written whole when its run ends.  The suites use it too. */
void bench_progress_start(unsigned total);      /* runs to come */
void bench_progress_begin(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Seconds of CPU time the whole machine has spent busy (user, nice, system,
 * irq, softirq, steal) since boot, from /proc/stat; NAN if unreadable.
 * Tick-based, so good to about a tick per CPU. */
double bench_machine_busy_s(void);

/* The machine's CPU time at a moment, for the load beside a run: its busy
 * time, this process's, the --busy processes', and the time. */
struct bench_machine_mark {
	double busy_s, self_s, load_s, at_s;
};
void bench_machine_mark(struct bench_machine_mark *m);
/* CPUs the rest of the machine kept busy from a to b, on average: neither
 * this process, nor its children's children_s seconds of CPU time, nor the
 * --busy processes; NAN when unknown. */
double bench_other_cpus(const struct bench_machine_mark *a, const struct bench_machine_mark *b,
			double children_s);
/* CPUs the --busy processes kept busy from a to b; NAN without them. */
double bench_busy_cpus(const struct bench_machine_mark *a, const struct bench_machine_mark *b);

/* result: "1.234 Mops/s"; other_cpus: the run's, noted when high. */
void bench_progress_end(const char *result, double other_cpus);
/* Erases the line on a terminal: before writing to stdout. */
void bench_progress_clear(void);

/* ---- a suite: locks x thread counts x repeats ------------------------ */

/* All runs of one (lock, threads) pair. */
struct bench_result {
	size_t lock;
	unsigned threads;
	struct bench_sample *runs;      /* [repeat] */
	unsigned median;                /* index of the run reported */
	double ratio;                   /* ops/s over the first lock's */
	double limit_share;             /* ops/s over the limit; NAN if none */
	/* Total ops per run, in millions, over the runs: mean and sample
	 * standard deviation (NAN for one run); the mean over the first lock's
	 * (locktorture_table). */
	double mops_mean, mops_sd;
	double speedup;
};

/* The run a table shows for a result. */
static inline const struct bench_sample *bench_result_sample(const struct bench_result *r)
{
	return &r->runs[r->median];
}

/* One column of a suite's tables. */
struct bench_column {
	const char *head;       /* heading, right-aligned over the cells */
	/* What the column shows, as the heading of a summary table
	 * ("per-thread average, Mops/s"); NULL: head. */
	const char *title;
	/* printf field width and precision of a cell; a precision below 0
	 * asks for -prec significant digits, for figures that span decades
	 * (0.0512, 2.71, 48.2, 1520). */
	int width, prec;
	/* The cell of one (lock, threads) result; NAN prints "-". */
	double (*value)(const struct bench_result *r);
	/* What --help says of it (bench_columns_help); NULL: described with
	 * the column before it, whose help names both. */
	const char *help;
};

/* --help's list of columns: a line per column (or run of columns that
 * share a description), its heading and help. */
void bench_columns_help(FILE *f, const struct bench_column *const *cols, size_t n);

/* The mutex table's columns (see scenario_mutex.c's --help), for a scenario
 * that composes its own list. */
extern const struct bench_column bench_col_mops;        /* Mops/s */
extern const struct bench_column bench_col_thr_min;     /* per-thread Mops/s */
extern const struct bench_column bench_col_thr_avg;
extern const struct bench_column bench_col_thr_max;
extern const struct bench_column bench_col_fairness;    /* min/max */
extern const struct bench_column bench_col_futex;       /* futex/kop */
extern const struct bench_column bench_col_csw;         /* csw/kop */
extern const struct bench_column bench_col_cpu;         /* cpu-s/Mop */
extern const struct bench_column bench_col_ratio;
extern const struct bench_column bench_col_limit;       /* limit% */
/* xnode%: the harness adds it where handoffs are counted. */
extern const struct bench_column bench_col_xnode;

/* x per second of the run's wall time (a rate), NAN when it had none. */
double bench_per_wall(const struct bench_sample *s, double x);

/* One table cell on stdout: a space, then v right-aligned in width with prec
 * decimals (prec < 0: -prec significant digits, as in bench_column); NAN
 * prints "-". */
void bench_print_cell(double v, int width, int prec);

/* A table: the title line, a heading "lock" and each column's head, then
 * row[l] as names[l] and its cells (NAN prints "-"), and a note under it
 * when other load was high during the runs shown.  The suites' table per
 * thread count is one. */
void bench_table_print(const char *title, const char *const *names,
		       const struct bench_result *row, size_t n,
		       const struct bench_column *const *cols, size_t ncols);

struct bench_suite {
	const char *scenario;           /* "mutex" */
	const struct bench_common *common;
	size_t nlocks;
	const char *lock_names[BENCH_MAX_LOCKS]; /* [0] is the baseline */
	/* A lock's role for the JSON's lock_roles (bench_lock_role: the core
	 * knows no adapter). */
	const char *(*lock_role)(const char *name);
	/* Scenario parameters for the header line and its JSON config. */
	const char *params;             /* "cs=100 ncs=10" */
	/* The limit is the first lock's 1-thread ops/s times limit_factor;
	 * limit_formula explains the factor ("min(2, 110/100)").  A factor of
	 * 0 means the scenario has no limit. */
	double limit_factor;
	const char *limit_formula;
	/* Runs one measurement (exits 1 on failure, e.g. broken exclusion). */
	/* false: a table per thread count showing the median run of each lock.
	 * true (locktorture style, as in the CNA patches' cover letter): one
	 * table, a row per thread count, each lock's total ops per run as mean
	 * (standard deviation) over the runs, and each further lock's speedup,
	 * its mean over the first lock's. */
	bool locktorture_table;
	void (*run)(void *ctx, size_t lock, unsigned threads,
		    double duration_s, struct bench_sample *out);
	/* Writes the scenario's own members of the JSON "config" object. */
	void (*json_config)(void *ctx, struct bench_json *j);
	/* Optional: writes the scenario's own members of one run's JSON
	 * object (from s->extra), after the harness's. */
	void (*json_sample)(void *ctx, struct bench_json *j,
			    const struct bench_sample *s);
	/* Optional: writes the scenario's own members of one result's JSON
	 * object, figures over all its runs (the median run's members are
	 * json_sample's), after the harness's and before "runs". */
	void (*json_result)(void *ctx, struct bench_json *j,
			    const struct bench_result *r);
	/* The columns of the table per thread count; NULL: the mutex table's
	 * (Mops/s, thr-min, thr-avg, thr-max, min/max, futex/kop, csw/kop,
	 * cpu-s/Mop, ratio, limit%).  xnode% follows where handoffs are
	 * counted. */
	const struct bench_column *const *columns;
	size_t ncolumns;
	/* Optional: after the last table, one summary table per column here,
	 * a row per thread count and a column per lock (the shape of the
	 * seeds' scaling tables). */
	const struct bench_column *const *summary;
	size_t nsummary;
	/* true: the summary tables only, no table per thread count. */
	bool summary_only;
	void *ctx;
};

/* Runs the whole suite: progress on stderr, the header and one table per
 * thread count on stdout, JSON if asked.  Returns 0 (errors exit). */
int bench_suite_run(const struct bench_suite *s);

/* ---- JSON ------------------------------------------------------------ */

/* A writer on jansson: the calls build the document in memory, keys NULL
 * inside arrays; close writes it to FILE.tmp (created by open) and renames
 * that to FILE, so FILE is always whole. */
struct bench_json *bench_json_open(const char *path);
void bench_json_object(struct bench_json *j, const char *key);
void bench_json_array(struct bench_json *j, const char *key);
void bench_json_end(struct bench_json *j);
void bench_json_string(struct bench_json *j, const char *key, const char *v);
void bench_json_number(struct bench_json *j, const char *key, double v);
void bench_json_uint(struct bench_json *j, const char *key, uint64_t v);
void bench_json_bool(struct bench_json *j, const char *key, bool v);
void bench_json_null(struct bench_json *j, const char *key);
/* An array of v[0..n) under key. */
void bench_json_uint_array(struct bench_json *j, const char *key, const unsigned *v, size_t n);
void bench_json_string_array(struct bench_json *j, const char *key, const char *const *v,
			     size_t n);
void bench_json_close(struct bench_json *j); /* exits 1 on I/O errors */
/* Writes "layout" into the current JSON object (a result file's top level):
 * how any reader, hotlock-bench compare first, reads the file's results:
 * {"key": [the members that name a result], "metric": the member of each
 * run that judges it, "better": "higher" or "lower"}.  Every result file
 * has one (docs/benchmarks.md, "The result files"). */
void bench_json_layout(struct bench_json *j, const char *const *key, size_t nkey,
		       const char *metric, bool lower_better);
/* Remembers the command line (main does, first thing), for the JSON. */
void bench_set_command(int argc, char **argv);
/* Writes, into the current JSON object, what a report needs to say where a
 * run comes from: "command" (the command line, as a shell would take it),
 * "machine" {"cpu", "kernel", "cpus_online"} and "date" (UTC, ISO 8601). */
void bench_json_run_info(struct bench_json *j);
/* Removes the FILE.tmp of a writer still open (on an early exit). */
void bench_json_discard(void);
/* Writes, into the current JSON object (a "config"), where and under what
 * the runs were made: "futex_interface", "topology", "topology_nodes",
 * bench_json_busy's members, bench_json_run_info's and "hotlock_config". */
void bench_json_environment(struct bench_json *j);
/* Writes, into the current JSON object, the measured members of one run
 * that every suite writes: ops_per_sec, total_ops, thread_ops (and their
 * min, avg, max, per second too), futex_calls (null when not counted) and
 * per 1000 ops, csw and per 1000 ops, cpu_s and per million ops, wall_s,
 * other_cpus, busy_cpus under --busy, and the handoffs where counted. */
void bench_json_sample(struct bench_json *j, const struct bench_sample *s);
/* Writes "runs": an array of an object per run, its members written by
 * members(ctx, j, &runs[k]). */
void bench_json_runs(struct bench_json *j, const struct bench_sample *runs, unsigned n,
		     void (*members)(const void *ctx, struct bench_json *j,
				     const struct bench_sample *s),
		     const void *ctx);

/* ---- the signals that end a bench early (busy.c) ---------------------- */

/* SIGINT, SIGTERM and SIGHUP: --busy and apps --stats-cost clean up on them,
 * then let them act as before. */
#define BENCH_END_SIGNALS 3
extern const int bench_end_signals[BENCH_END_SIGNALS];
/* Installs handler (SA_RESTART) for each of them, except one the bench was
 * started to ignore (nohup), which stays ignored; old (NULL, or
 * BENCH_END_SIGNALS entries) gets each one's disposition before. */
void bench_catch_end_signals(void (*handler)(int), struct sigaction *old);

/* ---- --busy: CPU-bound processes beside the runs (busy.c) ------------- */

/* Starts n processes (none for 0; once per run of the bench: a second call
 * does nothing), each a fork of the bench that spins on arithmetic until it
 * is killed, at nice 0 under SCHED_OTHER, with no affinity of its own,
 * named hotlock-busy; returns once every one of them is spinning.  Call it
 * from the main thread, before the runs: a busy process is killed when the
 * thread that forked it dies (PR_SET_PDEATHSIG), and bench_busy_stop runs
 * at exit and on SIGINT, SIGTERM and SIGHUP (which then end the bench as
 * before).  Exits 1 if one cannot be started. */
void bench_busy_start(unsigned n);
/* Kills (SIGKILL) and reaps them; the count stays what was asked for (the
 * JSON states it).  Nothing to do when none runs. */
void bench_busy_stop(void);
/* How many were started (0 without --busy). */
unsigned bench_busy_count(void);
/* Their CPU seconds so far, summed (0 when none runs); NAN if unreadable. */
double bench_busy_cpu_s(void);
/* "load: N CPU-bound processes beside the runs (--busy N)" and a newline on
 * f; nothing without --busy. */
void bench_busy_note(FILE *f);
/* Writes "busy": N into the current JSON object (a "config"), and with N > 0
 * "busy_nice": the nice value they ran at. */
void bench_json_busy(struct bench_json *j);

/* ---- scenarios (options.h) -------------------------------------------- */

#include "options.h"

extern const struct bench_scenario bench_scenario_mutex;
extern const struct bench_scenario bench_scenario_wake;
extern const struct bench_scenario bench_scenario_rwlock;
extern const struct bench_scenario bench_scenario_rwsem;
extern const struct bench_scenario bench_scenario_cond;
/* scenario_swap.c: hl_swap (seed 003). */
extern const struct bench_scenario bench_scenario_swap;

#endif

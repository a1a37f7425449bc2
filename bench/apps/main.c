/* SPDX-License-Identifier: MIT */
/* hotlock-bench-apps (hotlock-bench apps): real programs on glibc's locks
 * and on hotlock's, through the pthread shim (hotlock-run,
 * libhotlock-preload.so), and what the shim itself costs.
 *
 * Workloads (Debian's programs; one missing is skipped with a line naming
 * the package):
 *   sysbench-mutex    sysbench mutex: T threads each take one of a few
 *                     mutexes (--mutex-num 4) a fixed number of times; the
 *                     total is fixed (it does not grow with T); measure: lock
 *                     acquisitions per second of sysbench's total time.
 *   sysbench-threads  sysbench threads: T threads lock one mutex, sched_yield
 *                     with it held and unlock, 100 times an event, for
 *                     --duration seconds; measure: events per second.
 *   memcached         memcached -t T on a free port of 127.0.0.1 (UDP off),
 *                     driven by libmemcached-tools' memaslap (memcaslap on
 *                     Debian 12): 2T connections, 90% get and 10% set, for
 *                     --duration seconds; measure: its operations per second.
 *                     The server is stopped with SIGTERM and reaped.
 *   stress-ng-mutex   stress-ng --mutex 1 --mutex-procs T: one worker
 *                     process whose T threads (2 to 64) each loop { take a
 *                     random SCHED_FIFO priority (EPERM unless root); lock
 *                     the one mutex; drop to the lowest; sched_yield;
 *                     unlock } for --duration seconds; measure: bogo ops
 *                     (loops) per second of real time, as stress-ng reports
 *                     it (--metrics-brief).  stress-ng 0.15 (Debian 12's)
 *                     runs 2 threads whatever --mutex-procs says: the
 *                     threads the worker ran are looked at in /proc and a
 *                     row says so when they are not T.  Opt-in; skipped
 *                     where stress-ng is not installed.
 *   the -x2 forms     sysbench-mutex-x2, sysbench-threads-x2,
 *                     stress-ng-mutex-x2: two instances of the program, each
 *                     with T threads, started together (both on glibc, or
 *                     both under hotlock-run); measure: the sum of the two
 *                     instances' rates, each over its own time.  Opt-in
 *                     (--workloads).
 * Each (workload, T) runs on glibc and under hotlock-run alternately, glibc
 * first, --repeat times; a row shows each side's median, its range over the
 * repeats, shim ÷ glibc (> 1: the shim is faster) and each side's CPU time
 * per run (user + sys of the program, from wait4: memcached's own for the
 * memcached rows, the load generator's apart in the JSON; the -x2 rows' both
 * instances together, each apart in the JSON).
 *
 * --busy N: N CPU-bound processes (the harness's, busy.c) run from before
 * the first run to after the last, beside the glibc and the shim runs alike.
 *
 * The shim's own cost: hotlock-shim-pair (bench/shim_pair.c, not linked with
 * hotlock) times uncontended pthread_mutex_lock + unlock pairs, best of 5
 * trials a run, in a single-threaded process and with a second, idle thread
 * alive (glibc's lock skips its atomic instruction while a process has one
 * thread), on glibc and under hotlock-run alternately, --repeat times.
 *
 * Every run sets HOTLOCK_SHIM_STATS=1: the shim, where loaded, prints its
 * futex calls at exit, which tells that it was (a shim run without that line,
 * or a glibc run with it, is an error), and how contended its locks were.
 * The old report variables (HOTLOCK_STATS, HOTLOCK_STATS_JSON,
 * HOTLOCK_STATS_TOP) are unset in every child, whatever the bench was given.
 *
 * --cost=OPTION: what one of hotlock-run's report options costs.  Both
 * sides run under hotlock-run: the baseline ("shim") as above, the other
 * ("shim+OPTION") with the option, its output into DIR, a directory made
 * for the run (mkdtemp) and removed at exit, on an error and on SIGINT,
 * SIGTERM and SIGHUP.  Same workloads, same alternation (shim first), same
 * table; the ratio is shim+OPTION over shim.
 *   stats       the contention report (src/preload/shim_stats.c and the
 *               collector, tools/collector.c): --stats-json
 *               DIR/stats-%p.json.  After each shim+stats run its programs
 *               must have left as many non-empty report files as it
 *               started programs, whose lines are reports (hotlock_stats
 *               1), else the bench exits 1: a run without its report
 *               measured the baseline twice.  The files are read (their
 *               locks_tracked and the listed locks' acquisitions summed
 *               into the run's JSON), then removed.  --stats-cost is
 *               --cost=stats, as it was named first.
 *   deadlocks   deadlock and hang detection (issue 40):
 *               --deadlocks --deadlocks-file=DIR/deadlocks-%p.txt.
 *   lock-order  lock-order inversions: --lock-order
 *               --deadlocks-file=DIR/lock-order-%p.txt.
 * A real program makes no deadlock or inversion report: after each run
 * its files must be empty, or absent; one that is not is a warning (on
 * stderr, under the row, in the JSON), not an error: the bench measures,
 * the tests judge the reports.
 *
 * The files: main.c the options and --help, rows.c the run loop, runs.c
 * what every run shares and the pair, sysbench.c, stress.c and memcached.c
 * a run of each program, children.c their processes, reports.c the shim's
 * line at exit and the reports of --cost, programs.c finding the
 * programs, figures.c a row's medians and interval, table.c the tables,
 * json.c the JSON; the table of --cost's options is runs.c's. */
#include <stdlib.h>
#include <string.h>

#include "apps.h"

#define DEFAULT_THREADS "2,4,8"
#define QUICK_THREADS   "2,4"

/* --threads' help names this limit. */
_Static_assert(BENCH_MAX_THREADS == 1024, "--threads' help says 1 to 1024");

static void workload_item(void *ctx, const char *entry)
{
	bool *want = ctx;

	for (int k = 0; k <= APP_NPROGRAMS; k++)
		if (strcmp(entry, k < APP_NPROGRAMS ? app_info[k].name : "pair") == 0) {
			want[k] = true;
			return;
		}
	bench_usage_error("apps", "--workloads: unknown workload '%s' (valid: sysbench-mutex, "
			  "sysbench-threads, memcached, pair, stress-ng-mutex, sysbench-mutex-x2, "
			  "sysbench-threads-x2, stress-ng-mutex-x2)", entry);
}

/* --workloads W,...: at is the context's want[]. */
static void parse_workloads(void *at, const char *scenario, const char *v)
{
	memset(at, 0, sizeof ((struct apps *)NULL)->want);
	bench_list_each(scenario, "--workloads", v, workload_item, at);
}

/* --cost OPTION, and --stats-cost (v NULL: --cost=stats); at is the
 * context's cost.  Two that differ are refused: a run measures one. */
static void parse_cost(void *at, const char *scenario, const char *v)
{
	enum cost *cost = at, want = v ? COST_NONE : COST_STATS;

	for (int k = COST_STATS; v && k < COST_N; k++)
		if (strcmp(v, cost_info[k].name) == 0)
			want = (enum cost)k;
	if (want == COST_NONE)
		bench_usage_error(scenario, "--cost: '%s' is not stats, deadlocks or lock-order",
				  v);
	if (*cost != COST_NONE && *cost != want)
		bench_usage_error(scenario, "--cost=%s and --cost=%s (--stats-cost is "
				  "--cost=stats): one option a run", cost_info[*cost].name,
				  cost_info[want].name);
	*cost = want;
}

static void parse_queue(void *at, const char *scenario, const char *v)
{
	if (strcmp(v, "fifo") != 0 && strcmp(v, "cna") != 0)
		bench_usage_error(scenario, "--queue: '%s' is not fifo or cna", v);
	*(const char **)at = v;
}

/* What the options left to the run: --quick's defaults for what was not
 * given, the shared options, then the runs. */
static int apps_main(void *ctx, struct bench_common *c)
{
	struct apps *a = ctx;

	/* Ascending and distinct, as in every scenario. */
	bench_common_threads(c, "apps", a->threads_list ? a->threads_list :
			     a->quick ? QUICK_THREADS : DEFAULT_THREADS);
	a->threads = c->threads;
	a->nthreads = c->nthreads;
	if (!bench_option_given("--duration"))
		a->duration = a->quick ? 1 : 2;
	if (!bench_option_given("--pairs"))
		a->pairs = a->quick ? 4000000 : 10000000;
	if (!bench_option_given("--workloads")) {
		for (int k = 0; k < APP_NPROGRAMS; k++)
			a->want[k] = app_info[k].by_default;
		a->want[APP_NPROGRAMS] = true;  /* the pair */
	}
	if (bench_option_given("--spin-ns")) {
		snprintf(a->spin_ns_buf, sizeof a->spin_ns_buf, "%lu", a->spin_ns);
		a->spin_ns_text = a->spin_ns_buf;
	}
	a->repeat = c->repeat;
	a->json = c->json;
	a->busy = c->busy;
	a->loadgen_threads = bench_cores() < 2 ? 1 : bench_cores();
	return apps_run(a);
}

static void apps_help_more(FILE *f)
{
	fprintf(f,
		"Workloads (a workload whose program is missing is skipped with a line\n"
		"naming the Debian package: sysbench, memcached, libmemcached-tools,\n"
		"stress-ng):\n"
		"  sysbench-mutex    sysbench mutex --mutex-num=%d --mutex-loops=%d, %lu lock\n"
		"                    acquisitions per second of --duration in all, shared\n"
		"                    out among the T threads; Mlock/s of sysbench's total time\n"
		"  sysbench-threads  sysbench threads --thread-locks=%d --thread-yields=%d\n"
		"                    (lock, sched_yield, unlock) for --duration s; kevent/s\n"
		"  memcached         memcached -t T -U 0 on a free port of 127.0.0.1, driven by\n"
		"                    memaslap (memcaslap): 2T connections, 90%% get, for\n"
		"                    --duration s; kop/s (thousand operations per second)\n"
		"  pair              an uncontended pthread_mutex_lock + unlock in\n"
		"                    hotlock-shim-pair (not linked with hotlock), best of %d\n"
		"                    trials a run, single-threaded and with an idle second\n"
		"                    thread; ns per pair\n"
		"Only when named in --workloads:\n"
		"  stress-ng-mutex   stress-ng --mutex 1 --mutex-procs T --timeout S\n"
		"                    --metrics-brief: one worker whose T threads (2 to 64)\n"
		"                    each loop { take a random SCHED_FIFO priority (refused\n"
		"                    unless root); lock the one mutex; drop to the lowest;\n"
		"                    sched_yield; unlock }; kbogo/s, stress-ng's bogo ops\n"
		"                    per second of real time.  stress-ng 0.15 runs 2 threads\n"
		"                    whatever T: a note under the row says so\n"
		"  sysbench-mutex-x2, sysbench-threads-x2, stress-ng-mutex-x2\n"
		"                    two instances of that program at once, T threads each,\n"
		"                    both on glibc or both under hotlock-run: the sum of the\n"
		"                    two instances' rates (each over its own time), and\n"
		"                    their CPU seconds summed (each apart in the JSON)\n"
		"\n"
		"--busy's processes run beside every run, glibc's and the shim's alike.\n"
		"Progress on stderr, one line per run.  JSON: \"results\" has a member per\n"
		"(side, workload, T) named SIDE/WORKLOAD (glibc/memcached, shim/sysbench-mutex,\n"
		"glibc/mutex-pair-1thread), its ops_per_sec the median (pairs per second for\n"
		"the pair), every run under \"runs\" (an -x2 run's two instances under its\n"
		"\"instances\"), so that 'hotlock-bench compare' can compare two runs;\n"
		"\"skipped\" names what could not run and why.  With --cost=OPTION the sides\n"
		"are shim and shim+OPTION (shim+stats/memcached, shim+deadlocks/memcached),\n"
		"the ratio is ratio_stats_over_shim, ratio_deadlocks_over_shim or\n"
		"ratio_lock_order_over_shim, config's \"cost\" names OPTION and\n"
		"\"cost_options\" gives hotlock-run's words for it; each shim+stats run has a\n"
		"\"stats_report\" (reports, bytes, locks_tracked, acquisitions_listed), each\n"
		"shim+deadlocks or shim+lock-order run a \"deadlocks_report\" (reports,\n"
		"bytes, files, first_lines: 0, 0, 0, null on a good program).\n"
		"\n"
		"Exit status: 0 ok (skipped workloads included), 1 a run failed or\n"
		"hotlock-run was not found, 2 bad command line.\n",
		MUTEX_NUM, MUTEX_LOOPS, MUTEX_LOCKS_PER_S, THREAD_LOCKS, THREAD_YIELDS,
		PAIR_TRIALS);
}

#define OPT(field) offsetof(struct apps, field)

static const struct bench_option apps_options[] = {
	{ "--quick", NULL, BENCH_OPT_FLAG, OPT(quick), .help =
	  "T = " QUICK_THREADS ", runs of 1 s, 4000000 pairs (about a minute on 2 "
	  "cores); options given override it" },
	{ "--threads", "T,...", BENCH_OPT_STRING, OPT(threads_list), .help =
	  "thread counts, 1 to 1024 each, run in ascending order",
	  .default_text = DEFAULT_THREADS "; " QUICK_THREADS " with --quick" },
	{ "--duration", "S", BENCH_OPT_UINT, OPT(duration), 1, 600, .help =
	  "whole seconds per run", .default_text = "2; 1 with --quick" },
	{ "--workloads", "W,...", BENCH_OPT_CALL, OPT(want), .parse = parse_workloads,
	  .help = "the workloads to run (Workloads below), of sysbench-mutex, "
	  "sysbench-threads, memcached, pair, stress-ng-mutex, sysbench-mutex-x2, "
	  "sysbench-threads-x2, stress-ng-mutex-x2",
	  .default_text = "the first four" },
	{ "--pairs", "N", BENCH_OPT_ULONG, OPT(pairs), 1, 1e12, .help =
	  "pairs per trial of the pair", .default_text = "10000000; 4000000 with --quick" },
	{ "--hotlock-run", "PATH", BENCH_OPT_STRING, OPT(hotlock_run_opt), .help =
	  "hotlock-run", .default_text =
	  "../bin/hotlock-run, then ./hotlock-run, beside this executable" },
	{ "--shim-pair", "PATH", BENCH_OPT_STRING, OPT(shim_pair_opt), .help =
	  "hotlock-shim-pair", .default_text = "beside this executable" },
	{ "--queue", "fifo|cna", BENCH_OPT_CALL, OPT(queue), .parse = parse_queue, .help =
	  "passed to hotlock-run", .default_text = "hotlock-run's" },
	{ "--spin-ns", "N", BENCH_OPT_ULONG, OPT(spin_ns), 0, 10000000, .help =
	  "passed to hotlock-run", .default_text = "hotlock-run's" },
	{ "--cost", "OPTION", BENCH_OPT_CALL, OPT(cost), .parse = parse_cost, .help =
	  "what one of hotlock-run's report options costs: instead of glibc "
	  "against the shim, the shim alone (side 'shim') against the shim with "
	  "OPTION (side 'shim+OPTION'), its output into a file per pid in a "
	  "directory made for the run and removed after it, alternately, R times, "
	  "every workload and the pair alike; ratio = shim+OPTION / shim (pair: "
	  "shim / shim+OPTION), > 1: the OPTION side is faster.  OPTION is one of:\n"
	  "stats: --stats-json FILE (the text report off); a column 'locks' gives "
	  "the locks the report recorded; each program of a run must have "
	  "written its report (a JSON line per process, checked and removed "
	  "after the run), else exit 1\n"
	  "deadlocks: --deadlocks --deadlocks-file=FILE, deadlock and hang "
	  "detection\n"
	  "lock-order: --lock-order --deadlocks-file=FILE, lock-order inversions\n"
	  "A real program should make no deadlock or inversion report: a FILE "
	  "left not empty is a warning (on stderr, its first lines under the "
	  "row, in the JSON), not an error",
	  .default_text = "glibc against the shim" },
	{ "--stats-cost", NULL, BENCH_OPT_CALL, OPT(cost), .parse = parse_cost, .help =
	  "the same as --cost=stats" },
	{ 0 },
};

static const struct bench_scenario apps_scenario = {
	.name = "apps",
	.summary = "real programs (sysbench, memcached, stress-ng) on glibc and under "
		   "hotlock-run, and the shim's own cost",
	.about =
	"Real programs on glibc's locks and on hotlock's through the pthread shim\n"
	"(hotlock-run, libhotlock-preload.so), and the shim's own cost (Workloads\n"
	"below).  Every (workload, T) runs on glibc and under hotlock-run\n"
	"alternately, glibc first, R times; the table shows the median and\n"
	"[min-max] of each side, the ratio (> 1: the shim is faster), its 95%\n"
	"interval by the bootstrap (one that holds 1: the runs do not tell the\n"
	"sides apart) and each side's CPU seconds per run (user + sys of the\n"
	"program, wait4).",
	.options = apps_options,
	.common = BENCH_COMMON_REPEAT | BENCH_COMMON_JSON | BENCH_COMMON_BUSY,
	.default_repeat = 3,
	.max_repeat = 100,
	.ctx_size = sizeof(struct apps),
	.help_more = apps_help_more,
	.run = apps_main,
};

int main(int argc, char **argv)
{
	bench_set_command(argc, argv);
	return bench_scenario_main(&apps_scenario, argc, argv);
}

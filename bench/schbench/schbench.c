/* SPDX-License-Identifier: MIT */
/* hotlock-bench-schbench (`hotlock-bench schbench`): Chris Mason's schbench
 * (v1.0, as of 2016-2020), the wake-up latency benchmark of seed 003, where
 * Aaron Lu replaced the worker's "wake the message thread, then wait" with
 * one FUTEX_SWAP.  Here FUTEX_SWAP is hl_swap, hotlock's user-space swap.
 *
 * The model (facts of schbench 2020-06, masoncl/schbench 99faedc; the
 * code is our own):
 *
 *   M message threads, each with T workers of its own.  The threads and
 *   what they own:
 *
 *   object                   written by             read by
 *   -----------------------  ---------------------  ----------------------
 *   msg list head (LIFO)     workers push (CAS),    -
 *                            its msg thread takes
 *                            it all (exchange)
 *   msg wait word / point    its workers wake it    the msg thread waits
 *   worker wake_ns           the worker (its own    the worker, after its
 *                            time, before posting), wait returns
 *                            the msg thread (the
 *                            time of the wake-up)
 *   worker wait word / point the msg thread wakes   the worker waits
 *   worker histogram         the worker only        the main thread, joined
 *
 *   A worker loops:
 *    1. stop if the run is over;
 *    2. "think": spin -c usec of wall-clock time (schbench's usec_spin);
 *    3. note the time in its wake_ns, push itself on its msg thread's list,
 *       wake the msg thread, and wait (unless the run is over);
 *    4. once woken, record now - wake_ns in its latency histogram: wake_ns
 *       is then the time the msg thread woke it, so this is the scheduler
 *       latency from the wake-up to the worker running again.
 *   A msg thread loops:
 *    1. take its whole list; read the clock once (schbench stamps every
 *       worker woken in one pass with the pass's start, so that a waker
 *       preempted in mid-pass shows up in the latencies);
 *    2. for each worker taken: store that time in its wake_ns, wake it;
 *    3. if the run is over: wake the list once more and leave the loop;
 *    4. wait until a worker wakes it;
 *    5. sleep -s usec plus a jitter drawn in [0, s/4) ("messages shouldn't
 *       be instant"), then loop.
 *   At the end each msg thread wakes all of its workers.
 *
 * Modes (--modes):
 *   wake+wait  schbench as it is: each thread's futex word is BLOCKED (0)
 *              or RUNNING (1).  Post: CAS BLOCKED->RUNNING and, if it
 *              succeeded, hl_futex_wake (fpost).  Wait: loop { CAS
 *              RUNNING->BLOCKED, done if it succeeds; hl_futex_wait(word,
 *              BLOCKED) } (fwait).  A worker stores BLOCKED in its own word
 *              before it posts (step 3), a msg thread in its own at the top
 *              of each pass, dropping the posts that came in during its sleep
 *              (the workers behind them are on the list it is about to take).
 *   hl_swap    each thread has an hl_swap_point_t.  Worker step 3 is
 *              hl_swap(msg thread's point, own point): Aaron Lu's change.
 *              The msg thread wakes with hl_wake and waits with
 *              hl_wait_self; but the last worker of a pass (the only one
 *              with -t 1) it wakes with hl_swap(worker's point, own point),
 *              since its step 4 follows that wake at once: with -t 1 the
 *              pair is a flipcall, as in Aaron's run.  Not when the run is
 *              over (step 3 returns without waiting).
 *
 * Where this differs from schbench, and why:
 *  - A wait that returns to a msg thread whose list is empty waits again
 *    (both modes).  A post that arrives after the list was taken but for a
 *    worker that was on it leaves a wake behind: schbench then sleeps a
 *    whole -s cycle for nothing; an hl_swap point, which keeps such a wake
 *    and has no way to drop it, would do it after every pass with T > 1.
 *  - Latencies of 0 usec are recorded; schbench drops them ("if (delta >
 *    0)"), which would drop exactly the fastest wake-ups of a spinning
 *    hl_swap.  The clock is CLOCK_MONOTONIC; the latency is the difference
 *    of the two times truncated to usec, as gettimeofday's would be.
 *  - min is the smallest latency recorded; schbench's min is always 0 (its
 *    stats start zeroed, and min only goes down).
 *  - A wait that returns because the run ends records nothing (schbench
 *    records the time since the worker's own post: a large bogus sample).
 *  - -s below 4 gets no jitter (schbench divides by s/4 = 0 there).
 *  - Percentiles: fio's histogram as in schbench (exact to 511 usec, then
 *    256 buckets per power of two, each reported as its middle), and the
 *    same walk: the p-th percentile is the first bucket where the running
 *    count reaches p/100 of the samples.
 *
 * Defaults are schbench's (its code: -m 2, -t 16, -r 30, -c 30000,
 * -s 30000; its --help says 10000 for -c and -s, its code has said 30000
 * since 2016), so a run takes repeat x modes x r seconds: 3 minutes.  On
 * this 2-CPU machine the default load is heavy: each worker wants about
 * c / (c + s + s/8) = 0.47 CPU, so -m 2 -t 16 asks for 15 CPUs, and -m 8
 * -t 1 for 3.8 (overloaded); -m 1 -t 1 for half of one (not overloaded).
 * With -c 0 -s 0 the msg thread replies at once: a ping-pong, where hl_swap
 * may spin.
 *
 * Besides the latencies, each run reports wake-ups (latency samples), CPU
 * time per wake-up (all threads' CPU time over the run / wake-ups), and the
 * part of it that is not the workers' think time (the synchronisation: the
 * wakes, the waits, any spinning in them), futex syscalls per wake-up
 * (hl_futex_stats_total), voluntary context switches per wake-up, and the
 * workers' wake-ups min/avg/max (fairness).
 *
 * Ending: the harness's stop hook sets the run's stopping flag (seq_cst;
 * every thread reads it seq_cst after its last post and before waiting, as
 * schbench does behind its full barriers) and wakes every msg thread and
 * every worker; a msg thread that sees it wakes its list and then all its
 * workers.  A wake is never lost: an hl_swap point keeps one; a futex word
 * that a worker sets BLOCKED after a post was missed is followed by its
 * read of the flag.  The harness's watchdog exits 1 (after printing what
 * each thread was doing) if the threads have not stopped 30 s later.
 *
 * Files: this one, the command line and the runs of the modes, interleaved;
 * threads.c the threads' loops, wake.c the two wake modes, run.c one run,
 * hist.c fio's histogram, figures.c the figures over the repeats,
 * report.c the tables and the JSON. */
#include <stdlib.h>
#include <string.h>

#include <hotlock/futex.h>

#include "schbench.h"

static const char *const me = "schbench";

const char *const sb_mode_names[NMODES] = { "wake+wait", "hl_swap" };

#define SB_MAX_USEC 10000000ul          /* -c, -s: at most 10 s */

/* ---- the runs of the modes, interleaved ------------------------------------ */

static void mode_item(void *ctx, const char *entry)
{
	struct sb_opts *o = ctx;
	int m = -1;

	for (int k = 0; k < NMODES; k++)
		if (strcmp(entry, sb_mode_names[k]) == 0)
			m = k;
	if (m < 0)
		bench_usage_error(me, "--modes: unknown mode '%s' (wake+wait, hl_swap)", entry);
	for (unsigned k = 0; k < o->nmodes; k++)
		if (o->modes[k] == (enum sb_mode)m)
			bench_usage_error(me, "--modes: '%s' given twice", entry);
	o->modes[o->nmodes++] = (enum sb_mode)m;
}

static int sb_main(void *ctx, struct bench_common *c)
{
	struct sb_opts *o = ctx;
	struct sb_result *runs[NMODES];
	char result[96];

	o->json = c->json;
	if ((unsigned long)o->m * (o->t + 1ul) > BENCH_MAX_THREADS)
		bench_usage_error(me, "-m %u -t %u makes %lu threads; at most %u", o->m, o->t,
				  (unsigned long)o->m * (o->t + 1ul), BENCH_MAX_THREADS);
	bench_list_each(me, "--modes", o->modes_list, mode_item, o);
	for (unsigned k = 0; k < o->nmodes; k++)
		runs[k] = bench_xcalloc(o->repeat, sizeof *runs[k]);

	printf("schbench: -m %u -t %u -r %g -c %lu -s %lu: %u message threads, %u workers, "
	       "%u run%s per mode, interleaved (futex interface %s)\n",
	       o->m, o->t, o->runtime_s, o->cputime_us, o->sleeptime_us, o->m, o->m * o->t,
	       o->repeat, o->repeat == 1 ? "" : "s", hl_futex_interface());
	fflush(stdout);
	bench_progress_start(o->repeat * o->nmodes);
	for (unsigned i = 0; i < o->repeat; i++) {
		for (unsigned k = 0; k < o->nmodes; k++) {
			struct sb_result *r = &runs[k][i];

			bench_progress_begin("schbench %s -m %u -t %u, run %u/%u (%g s)",
					     sb_mode_names[o->modes[k]], o->m, o->t, i + 1,
					     o->repeat, o->runtime_s);
			sb_run_once(o, o->modes[k], r);
			snprintf(result, sizeof result, "p50 %llu p99 %llu max %llu usec, %llu wake-ups",
				 (unsigned long long)r->lat.pct[0],
				 (unsigned long long)r->lat.pct[PCT_P99],
				 (unsigned long long)r->lat.max, (unsigned long long)r->lat.n);
			bench_progress_end(result, r->other_cpus);
		}
	}
	bench_progress_clear();

	for (unsigned k = 0; k < o->nmodes; k++) {
		printf("\n%s (median of %u run%s)\n", sb_mode_names[o->modes[k]], o->repeat,
		       o->repeat == 1 ? "" : "s");
		sb_print_latencies(runs[k], o->repeat);
	}
	sb_print_tables(o, runs);
	if (o->json)
		sb_write_json(o, runs);
	for (unsigned k = 0; k < o->nmodes; k++)
		free(runs[k]);
	return 0;
}

/* ---- the command line ------------------------------------------------------ */

#define OPT(field) offsetof(struct sb_opts, field)

static const struct bench_option sb_options[] = {
	{ "--message-threads", "N", BENCH_OPT_UINT, OPT(m), 1, BENCH_MAX_THREADS / 2,
	  .alias = "-m", .help = "message threads; with their workers at most 1024 "
	  "threads in all: -m x (-t + 1)" },
	{ "--threads", "N", BENCH_OPT_UINT, OPT(t), 1, BENCH_MAX_THREADS - 1,
	  .alias = "-t", .help = "workers per message thread" },
	{ "--runtime", "S", BENCH_OPT_SECONDS, OPT(runtime_s), 0, 86400,
	  .alias = "-r", .help = "seconds per run, may be fractional" },
	{ "--cputime", "US", BENCH_OPT_ULONG, OPT(cputime_us), 0, SB_MAX_USEC,
	  .alias = "-c", .help = "worker think time per loop, usec: a spin on the "
	  "wall clock, as schbench's" },
	{ "--sleeptime", "US", BENCH_OPT_ULONG, OPT(sleeptime_us), 0, SB_MAX_USEC,
	  .alias = "-s", .help = "message thread sleep per pass, usec, plus a jitter "
	  "below a quarter of it" },
	{ "--modes", "LIST", BENCH_OPT_STRING, OPT(modes_list), .help =
	  "the modes to run, in this order: wake+wait and hl_swap, as above" },
	{ "--repeat", "R", BENCH_OPT_UINT, OPT(repeat), 1, 100, .help =
	  "runs per mode, interleaved across the modes; each figure is the median "
	  "of the runs with their range, the JSON keeps every run" },
	{ 0 },
};

static const struct sb_opts sb_defaults = {
	.m = 2, .t = 16, .runtime_s = 30, .cputime_us = 30000, .sleeptime_us = 30000,
	.modes_list = "wake+wait,hl_swap", .repeat = 3,
};

static void sb_help_more(FILE *f)
{
	fprintf(f, "Tables: each mode's latency percentiles in the seed's shape (usec, the\n"
		"medians of the runs); a table of those with min and max (*99.0th is the\n"
		"seed's figure), a column per mode: median of the runs [min-max over the\n"
		"runs], and wake+wait/hl_swap, the ratio of the medians, where both ran;\n"
		"then the cost and fairness per wake-up, the same way:\n");
	for (unsigned i = 0; i < SB_NLEGEND; i++)
		bench_help_item(f, sb_legend[i][0], sb_legend[i][1]);
	fprintf(f, "\nJSON: config (the options, the modes, where the runs were made), and a\n"
		"result per mode: latency_usec (50.0th to 99.9th, min, max) and the\n"
		"figures, each {median, min, max}, and runs, each run's values, with\n"
		"zero_usec_samples, wall_s, cpu_s, think_cpu_s, futex_calls and csw.\n"
		"The figures:");
	for (unsigned i = 0; i < sb_nfigs; i++)
		fprintf(f, "%s%s", i % 3 ? ", " : i ? ",\n  " : "\n  ", sb_figs[i].json);
	fprintf(f, ".\n\nExit status: 0 ok, 1 a run failed (a wait or wake error, threads "
		"that did\nnot stop within -r + 30 s), 2 bad command line.\n");
}

static const struct bench_scenario sb_scenario = {
	.name = "schbench",
	.about =
	"Chris Mason's schbench (seed 003): M message threads, each with T workers.\n"
	"A worker spins -c usec, then wakes its message thread and waits; the\n"
	"message thread sleeps -s usec (+ up to 25% jitter), then wakes the\n"
	"workers that wait, stamping the time.  The latency is from that wake-up\n"
	"to the worker running again, printed as schbench does (usec percentiles\n"
	"of fio's histogram).  Modes:\n"
	"  wake+wait   futex words: hl_futex_wake, then hl_futex_wait (schbench)\n"
	"  hl_swap     the worker's wake-and-wait is one hl_swap (Aaron Lu's\n"
	"              FUTEX_SWAP change); the message thread wakes with hl_wake\n"
	"              and waits with hl_wait_self, its last wake of a pass (-t 1:\n"
	"              its only one) and wait being one hl_swap\n"
	"The runs of the modes are interleaved; each figure is the median of the\n"
	"repeats with their range; then the ratio wake+wait / hl_swap.  The\n"
	"defaults are schbench's.  On 2 CPUs: -m 8 -t 1 (16 threads) is\n"
	"overloaded, -m 1 -t 1 is not.",
	.options = sb_options,
	.common = BENCH_COMMON_JSON,
	.ctx_size = sizeof(struct sb_opts),
	.ctx_init = &sb_defaults,
	.help_more = sb_help_more,
	.run = sb_main,
};

int main(int argc, char **argv)
{
	bench_set_command(argc, argv);
	return bench_scenario_main(&sb_scenario, argc, argv);
}

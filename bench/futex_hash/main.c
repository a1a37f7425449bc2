/* SPDX-License-Identifier: MIT */
/* hotlock-bench-futex-hash (`hotlock-bench futex-hash`): the size of the
 * kernel's futex hash (seed 002, PR_FUTEX_HASH in Linux 6.16+), for perf's
 * benchmark and for hotlock's parked waiters.
 *
 * Two experiments (--scenario):
 *
 *   hash    the seed's benchmark, as `perf bench futex hash` does it: T
 *           threads, each with N private 32-bit futex words of its own (one
 *           calloc'd array, as perf's), each looping FUTEX_WAIT|PRIVATE on
 *           its words in turn with a value that never matches (1234 against
 *           0), so that every call hashes the address, takes the bucket's
 *           lock and returns EAGAIN.  One op is one syscall.  Thread i is
 *           pinned to the i-th CPU of the affinity mask, modulo their
 *           number, as perf pins its threads (--no-pin leaves them free).
 *           Reported as perf and the seed do: ops/s per thread, averaged
 *           over the threads ("Averaged N operations/sec").
 *
 *   parked  the lock-level question: P threads parked in hl_mutex_lock on
 *           ceil(P/4) hotlock mutexes that the child's main thread holds
 *           (4 waiters a mutex; hotlock parks each waiter on a futex word of
 *           its own, so P words sit in the hash), while H hot threads hand
 *           one hotlock mutex back and forth with spinning off (spin_ns 0:
 *           every handover parks the loser and the unlock wakes it with a
 *           FUTEX_WAKE).  Every 64th iteration a hot thread times one
 *           FUTEX_WAKE on a word of its own that nobody waits on (the next
 *           of 64 such words in turn, so that the probes see many buckets,
 *           not one): the kernel looks the bucket up, and where parked
 *           waiters hash there it takes the bucket lock and walks their
 *           chain.  The time is two clock_gettime(CLOCK_MONOTONIC) around
 *           the raw syscall, so it includes one clock read (about 20 ns).
 *
 * The hash sizes (--hash): global (hl_futex_hash_set(0): the kernel's one
 * table for the whole machine), default (nothing set: the kernel gives the
 * process a private table at its first thread, and hotlock's own policy,
 * HOTLOCK_FUTEX_HASH, unset = auto, may grow it with the threads hotlock
 * knows of; the slots before and after the run are printed), and N, a
 * power of two from 2 to 2^20 (hl_futex_hash_set(N), which also stops
 * hotlock's auto policy).
 *
 * Each (size, threads) run is made in a fresh child process: the switch to
 * the global table is one-way and a private table once made stays, so a
 * process cannot try two sizes honestly.  The parent never creates a thread
 * (it forks, collects, prints); the child sets the size before it has any
 * thread, creates and joins one thread (the point where the kernel makes
 * its default private table), reads the size back with hl_futex_hash_get
 * and refuses a mismatch (a line on stdout, and that size is skipped from
 * then on), runs, reads the size again, and writes its result into a pipe.
 * A child that does not answer within duration + 60 s (parked: + 120 s) is
 * killed (exit 1).
 *
 * Repeats: for each threads (hash) or parked count (parked), the sizes are
 * interleaved within each repeat; the median run is shown (by ops/s, by
 * handovers/s), the JSON keeps them all.
 *
 * The files: main.c the run loop, options.c the command line and --help,
 * child.c the child process and its answer, hash.c and parked.c the two
 * workloads in the child, tables.c and json.c what the parent writes. */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "fh.h"

/* The counts to run, ascending: hash, --threads and the full run's (the
 * CPUs online, full); parked, --parked.  Returns how many. */
static size_t run_counts(const struct fh_opts *o, unsigned full, unsigned *counts)
{
	size_t n = 0;
	bool have = false;

	if (o->scenario == FH_PARKED) {
		for (size_t p = 0; p < o->parked.n; p++)
			counts[n++] = o->parked.v[p];
		return n;
	}
	for (size_t t = 0; t < o->threads.n; t++) {
		counts[n++] = o->threads.v[t];
		have |= o->threads.v[t] == full;
	}
	if (!have && full >= 1 && full <= BENCH_MAX_THREADS) {
		counts[n++] = full;
		qsort(counts, n, sizeof counts[0], bench_cmp_unsigned);
	}
	return n;
}

static void print_header(const struct fh_opts *o, unsigned full)
{
	const char *env = getenv("HOTLOCK_FUTEX_HASH");

	if (o->scenario == FH_HASH)
		printf("futex-hash hash: perf bench futex hash's loop (FUTEX_WAIT|PRIVATE, never"
		       " matching) on %u futexes per thread, %g s per run, median of %u, sizes"
		       " interleaved, threads %s, a fresh process per run (%u CPUs online,"
		       " HOTLOCK_FUTEX_HASH %s)\n", o->futexes, o->duration_s, o->repeat,
		       o->pin ? "pinned as perf's" : "not pinned", full, env ? env : "unset");
	else
		printf("futex-hash parked: P threads parked in hl_mutex_lock, %u hot threads"
		       " handing one hl_mutex over (spin_ns 0, handoff_ns 0, pinned), a FUTEX_WAKE"
		       " probe every %u iterations, %g s per run, median of %u, sizes interleaved,"
		       " a fresh process per run (%u CPUs online, HOTLOCK_FUTEX_HASH %s)\n", o->hot,
		       FH_PROBE_EVERY, o->duration_s, o->repeat, full, env ? env : "unset");
	fflush(stdout);
}

/* One run of size z at count, into cell c, with its progress line. */
static void run_one(struct fh_opts *o, struct fh_size *z, unsigned count, unsigned rep,
		    struct fh_cell *c)
{
	struct bench_sample *s = &c->runs[c->n];
	char result[96];

	bench_progress_begin("%s hash=%s %s=%u run %u/%u",
			     o->scenario == FH_HASH ? "hash" : "parked", z->name,
			     fh_count_name(o), count, rep + 1, o->repeat);
	if (z->skipped) {
		bench_progress_end("skipped", NAN);
		return;
	}
	if (!fh_run_child(o, z, count, s)) {
		bench_progress_end("skipped", NAN);
		bench_progress_clear();
		printf("hash %s: skipped from now on: %s\n", z->name, z->why);
		fflush(stdout);
		return;
	}
	c->n++;
	if (o->scenario == FH_HASH)
		snprintf(result, sizeof result, "%.3f Mops/s (%.0f per thread), slots %d",
			 s->ops_per_sec / 1e6, fh_per_thread_avg(s), fh_run_of(s)->slots_first);
	else
		snprintf(result, sizeof result, "%.0f handovers/s, probe %.0f ns, slots %d->%d",
			 fh_handovers_per_s(s), fh_run_of(s)->parked.probe_mean_ns,
			 fh_run_of(s)->slots_first, fh_run_of(s)->slots_after);
	bench_progress_end(result, s->other_cpus);
}

static int fh_run_all(void *ctx, struct bench_common *common)
{
	struct fh_opts *o = ctx;
	unsigned counts[BENCH_MAX_THREAD_COUNTS + 1];
	unsigned full = (unsigned)sysconf(_SC_NPROCESSORS_ONLN);

	if (o->scenario == FH_HASH && (bench_option_given("--parked") ||
				       bench_option_given("--hot")))
		bench_usage_error(FH_ME, "--parked and --hot are options of --scenario parked");
	if (o->scenario == FH_PARKED && (bench_option_given("--threads") ||
					 bench_option_given("--futexes") || !o->pin))
		bench_usage_error(FH_ME, "--threads, --futexes and --no-pin are options of "
				  "--scenario hash");
	o->duration_s = common->duration_s;
	o->repeat = common->repeat;
	o->json = common->json;
	fh_parse_hash(o);
	if (!o->threads.n)
		o->threads = (struct fh_list){ { 1, 2, 4, 8, 16 }, 5 };
	if (!o->parked.n)
		o->parked = (struct fh_list){ { 256, 1024 }, 2 };

	const size_t ncounts = run_counts(o, full, counts), nz = o->nsizes;
	struct fh_cell *cells = bench_xcalloc(ncounts * nz, sizeof *cells);

	for (size_t i = 0; i < ncounts * nz; i++)
		cells[i].runs = bench_xcalloc(o->repeat, sizeof *cells[i].runs);
	print_header(o, full);
	bench_progress_start((unsigned)(ncounts * nz * o->repeat));
	for (size_t t = 0; t < ncounts; t++)
		for (unsigned rep = 0; rep < o->repeat; rep++)
			for (size_t z = 0; z < nz; z++)
				run_one(o, &o->sizes[z], counts[t], rep, &cells[t * nz + z]);
	bench_progress_clear();
	for (size_t i = 0; i < ncounts * nz; i++)
		if (cells[i].n)
			cells[i].median = bench_median_run(cells[i].runs, cells[i].n,
							   o->scenario == FH_HASH ?
							   bench_sample_ops_per_sec :
							   fh_handovers_per_s);
	for (size_t z = 0; z < nz; z++)
		if (o->sizes[z].skipped)
			printf("hash %s: skipped: %s\n", o->sizes[z].name, o->sizes[z].why);
	if (o->scenario == FH_HASH)
		fh_hash_tables(o, counts, ncounts, cells, full);
	else
		fh_parked_tables(o, cells);
	fflush(stdout);
	if (o->json)
		fh_write_json(o, counts, ncounts, cells);
	for (size_t i = 0; i < ncounts * nz; i++) {
		for (unsigned k = 0; k < cells[i].n; k++)
			bench_sample_free(&cells[i].runs[k]);
		free(cells[i].runs);
	}
	free(cells);
	return 0;
}

static const struct bench_scenario fh_scenario = {
	.name = FH_ME,
	.about = fh_about,
	.options = fh_options,
	.common = BENCH_COMMON_RUNS,
	.default_duration_s = 1, .max_duration_s = 3600,
	.default_repeat = 3, .max_repeat = 100,
	.ctx_size = sizeof(struct fh_opts),
	.ctx_init = &fh_defaults,
	.help_more = fh_help_more,
	.run = fh_run_all,
};

int main(int argc, char **argv)
{
	bench_set_command(argc, argv);
	return bench_scenario_main(&fh_scenario, argc, argv);
}

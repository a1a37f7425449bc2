/* SPDX-License-Identifier: MIT */
/* hotlock-bench-futex-hash: the tables, from the median run of each (size,
 * count): for hash, the seed's ops/s per thread by threads x size, its
 * ratio to the global table and the full run, then a table per threads;
 * for parked, a table per parked count.  The notes under the tables are
 * --help's too. */
#include <math.h>
#include <stdio.h>

#include "fh.h"

const char fh_hash_note[] =
	"slots(kern): hl_futex_hash_get after the first thread (0 = global), -> after "
	"the run where it changed.  Mops/s: all threads; thr-*: per thread, Mops/s.  "
	"cpu-ns/op: CPU time of all threads per op.  ratio: Mops/s over G.  other: CPUs "
	"kept busy by other processes during the run.";
const char fh_parked_note[] =
	"handover/s: acquisitions of the hot mutex that followed the other hot thread's.  "
	"futex/ho: futex syscalls of the whole process (hl_futex_stats_total; the probes "
	"are not counted) per handover.  probe-ns: mean, median, p99 of a FUTEX_WAKE on a "
	"word nobody waits on, one clock read included.  cpu-us/ho: the hot threads' CPU "
	"time per handover.  thr-min/max: the hot threads' handovers, fewest over most.  "
	"park-s: time for the parked threads to park.";

double fh_per_thread_avg(const struct bench_sample *s)
{
	return s->threads && s->wall_s > 0 ? (double)s->total_ops / s->threads / s->wall_s : NAN;
}

double fh_handovers_per_s(const struct bench_sample *s)
{
	return s->wall_s > 0 ? (double)fh_run_of(s)->parked.handovers / s->wall_s : NAN;
}

/* ---- the table per count: a row per size -------------------------------- */

/* A column of the table per count. */
struct fh_column {
	const char *head;
	int width, prec;        /* of a cell, as bench_print_cell's */
	/* The cell of run s; g is the global table's run of the same count,
	 * NULL where there is none. */
	double (*value)(const struct bench_sample *s, const struct bench_sample *g);
};

static double thread_min(const struct bench_sample *s)
{
	uint64_t mn = UINT64_MAX;

	for (unsigned i = 0; i < s->threads; i++)
		mn = s->thread_ops[i] < mn ? s->thread_ops[i] : mn;
	return (double)mn;
}

static double thread_max(const struct bench_sample *s)
{
	uint64_t mx = 0;

	for (unsigned i = 0; i < s->threads; i++)
		mx = s->thread_ops[i] > mx ? s->thread_ops[i] : mx;
	return (double)mx;
}

static double per_op(const struct bench_sample *s, double x)
{
	return s->total_ops ? x / (double)s->total_ops : NAN;
}

static double per_handover(const struct bench_sample *s, double x)
{
	const struct fh_parked *p = &fh_run_of(s)->parked;

	return p->handovers ? x / (double)p->handovers : NAN;
}

#define FH_CELL(name, expr) \
	static double name(const struct bench_sample *s, const struct bench_sample *g) \
	{ (void)g; return (expr); }

FH_CELL(c_mops, s->ops_per_sec / 1e6)
FH_CELL(c_thr_min, thread_min(s) / s->wall_s / 1e6)
FH_CELL(c_thr_avg, fh_per_thread_avg(s) / 1e6)
FH_CELL(c_thr_max, thread_max(s) / s->wall_s / 1e6)
FH_CELL(c_fairness, thread_max(s) > 0 ? thread_min(s) / thread_max(s) : NAN)
FH_CELL(c_cpu_ns, per_op(s, s->cpu_s * 1e9))
FH_CELL(c_csw, per_op(s, (double)s->csw * 1e3))
FH_CELL(c_ratio, g ? s->ops_per_sec / g->ops_per_sec : NAN)
FH_CELL(c_other, s->other_cpus)
FH_CELL(c_handovers, fh_handovers_per_s(s))
FH_CELL(c_ho_ratio, g ? fh_handovers_per_s(s) / fh_handovers_per_s(g) : NAN)
FH_CELL(c_futex_ho, per_handover(s, (double)fh_run_of(s)->parked.futex_calls))
FH_CELL(c_probe, fh_run_of(s)->parked.probe_mean_ns)
FH_CELL(c_p50, fh_run_of(s)->parked.probe_p50_ns)
FH_CELL(c_p99, fh_run_of(s)->parked.probe_p99_ns)
FH_CELL(c_cpu_ho, per_handover(s, s->cpu_s * 1e6))
FH_CELL(c_thr_ho, fh_run_of(s)->parked.thr_handovers_max ?
	(double)fh_run_of(s)->parked.thr_handovers_min /
	(double)fh_run_of(s)->parked.thr_handovers_max : NAN)
FH_CELL(c_park_s, fh_run_of(s)->parked.park_s)

static const struct fh_column hash_columns[] = {
	{ "Mops/s", 9, 3, c_mops }, { "thr-min", 9, 3, c_thr_min },
	{ "thr-avg", 9, 3, c_thr_avg }, { "thr-max", 9, 3, c_thr_max },
	{ "min/max", 7, 2, c_fairness }, { "cpu-ns/op", 9, 0, c_cpu_ns },
	{ "csw/kop", 8, 3, c_csw }, { "ratio", 7, 2, c_ratio }, { "other", 6, 2, c_other },
	{ 0 },
};

static const struct fh_column parked_columns[] = {
	{ "handover/s", 10, 0, c_handovers }, { "ratio", 6, 2, c_ho_ratio },
	{ "futex/ho", 9, 2, c_futex_ho }, { "probe-ns", 8, 0, c_probe },
	{ "p50-ns", 8, 0, c_p50 }, { "p99-ns", 8, 0, c_p99 },
	{ "cpu-us/ho", 10, 2, c_cpu_ho }, { "thr-min/max", 11, 2, c_thr_ho },
	{ "park-s", 7, 2, c_park_s }, { "other", 6, 2, c_other },
	{ 0 },
};

/* The index of the global table's size where it was measured, else nsizes. */
static size_t global_size(const struct fh_opts *o)
{
	size_t g = o->nsizes;

	for (size_t z = 0; z < o->nsizes; z++)
		if (o->sizes[z].slots == FH_SIZE_GLOBAL && !o->sizes[z].skipped)
			g = z;
	return g;
}

/* The table of one count (row: its cell per size): a line per size run. */
static void count_table(const struct fh_opts *o, const struct fh_cell *row,
			const struct fh_column *cols)
{
	const size_t g = global_size(o);
	const struct bench_sample *sg = g < o->nsizes ? fh_cell_run(&row[g]) : NULL;

	printf("%-8s %11s", "hash", "slots(kern)");
	for (const struct fh_column *c = cols; c->head; c++)
		printf(" %*s", c->width, c->head);
	printf("\n");
	for (size_t z = 0; z < o->nsizes; z++) {
		const struct bench_sample *s = fh_cell_run(&row[z]);
		const struct fh_run *r;
		char slots[32];

		if (!s)
			continue;
		r = fh_run_of(s);
		if (r->slots_first == r->slots_after)
			snprintf(slots, sizeof slots, "%d", r->slots_first);
		else
			snprintf(slots, sizeof slots, "%d->%d", r->slots_first, r->slots_after);
		printf("%-8s %11s", o->sizes[z].name, slots);
		for (const struct fh_column *c = cols; c->head; c++)
			bench_print_cell(c->value(s, sg), c->width, c->prec);
		printf("\n");
	}
}

/* ---- hash: the seed's tables --------------------------------------------- */

/* The column heading of a size, as the seed writes them (G, P 16), with the
 * kernel's size for default. */
static void size_head(char *buf, size_t len, const struct fh_size *z, const struct fh_cell *c)
{
	const struct bench_sample *s = fh_cell_run(c);

	if (z->slots == FH_SIZE_GLOBAL)
		snprintf(buf, len, "G");
	else if (z->slots > 0)
		snprintf(buf, len, "P %ld", z->slots);
	else if (s && fh_run_of(s)->slots_first == fh_run_of(s)->slots_after)
		snprintf(buf, len, "def(%d)", fh_run_of(s)->slots_first);
	else
		snprintf(buf, len, "default");
}

/* Whether count is one of --threads (the counts run also hold the full run's). */
static bool threads_listed(const struct fh_opts *o, unsigned count)
{
	for (size_t k = 0; k < o->threads.n; k++)
		if (o->threads.v[k] == count)
			return true;
	return false;
}

/* The heads of the sizes measured, " %10s" each, and a newline. */
static void print_size_heads(const struct fh_opts *o, const struct fh_cell *cells)
{
	char head[32];

	for (size_t z = 0; z < o->nsizes; z++) {
		if (o->sizes[z].skipped)
			continue;
		size_head(head, sizeof head, &o->sizes[z], &cells[z]);
		printf(" %10s", head);
	}
	printf("\n");
}

/* The cells of one thread count (row: its cell per size): each measured
 * size's ops/s per thread, or with base (a cell of row) its ratio to base's. */
static void print_avg_cells(const struct fh_opts *o, const struct fh_cell *row,
			    const struct fh_cell *base)
{
	const struct bench_sample *sg = base ? fh_cell_run(base) : NULL;

	for (size_t z = 0; z < o->nsizes; z++) {
		const struct bench_sample *s = fh_cell_run(&row[z]);

		if (o->sizes[z].skipped)
			continue;
		if (base)
			bench_print_cell(s && sg ? fh_per_thread_avg(s) / fh_per_thread_avg(sg)
					 : NAN, 10, 2);
		else
			bench_print_cell(s ? fh_per_thread_avg(s) : NAN, 10, 0);
	}
}

/* The ops/s per thread by --threads count (rows) and size measured (columns);
 * with g < nsizes, each over the same count's at size g (the global table). */
static void print_avg_table(const struct fh_opts *o, const unsigned *counts, size_t ncounts,
			    const struct fh_cell *cells, size_t g)
{
	const size_t nz = o->nsizes;

	printf("%7s", "Threads");
	print_size_heads(o, cells);
	for (size_t t = 0; t < ncounts; t++) {
		if (!threads_listed(o, counts[t]))
			continue;
		printf("%7u", counts[t]);
		print_avg_cells(o, &cells[t * nz], g < nz ? &cells[t * nz + g] : NULL);
		printf("\n");
	}
}

void fh_hash_tables(const struct fh_opts *o, const unsigned *counts, size_t ncounts,
		    const struct fh_cell *cells, unsigned full)
{
	const size_t nz = o->nsizes;
	const size_t g = global_size(o);        /* the global column, if measured */

	printf("\nops/s per thread (perf's 'Averaged'), %u futexes per thread, median of %u runs\n",
	       o->futexes, o->repeat);
	print_avg_table(o, counts, ncounts, cells, nz);
	if (g < nz) {
		printf("\nratio to G (the same threads)\n");
		print_avg_table(o, counts, ncounts, cells, g);
	}

	/* The full run: threads = CPUs online. */
	for (size_t t = 0; t < ncounts; t++) {
		if (counts[t] != full)
			continue;
		printf("\nthe full run: %u threads (the CPUs online, perf's default; the seed ran "
		       "one such process per node, this machine has one), %u futexes per thread\n",
		       full, o->futexes);
		print_size_heads(o, cells);
		print_avg_cells(o, &cells[t * nz], NULL);
		printf("\n");
		if (g < nz) {
			print_avg_cells(o, &cells[t * nz], &cells[t * nz + g]);
			printf("   (ratio to G)\n");
		}
	}

	for (size_t t = 0; t < ncounts; t++) {
		printf("\nthreads=%u, %u futexes per thread: median run of %u\n", counts[t],
		       o->futexes, o->repeat);
		count_table(o, &cells[t * nz], hash_columns);
	}
	printf("\n%s\n", fh_hash_note);
}

/* ---- parked: a table per parked count ------------------------------------ */

void fh_parked_tables(const struct fh_opts *o, const struct fh_cell *cells)
{
	for (size_t p = 0; p < o->parked.n; p++) {
		printf("\nparked=%u (on %u hl_mutexes), hot=%u, spin_ns 0, handoff_ns 0: median run of %u "
		       "(by handovers/s)\n", o->parked.v[p],
		       (o->parked.v[p] + FH_WAITERS_PER_MUTEX - 1) / FH_WAITERS_PER_MUTEX, o->hot,
		       o->repeat);
		count_table(o, &cells[p * o->nsizes], parked_columns);
	}
	printf("\n%s\n", fh_parked_note);
}

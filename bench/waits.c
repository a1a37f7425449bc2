/* SPDX-License-Identifier: MIT */
/* hotlock-bench: sampled wait times of lock acquisitions (see waits.h). */
#include "waits.h"

#include <math.h>
#include <stdlib.h>

struct bench_waits *bench_waits_alloc(unsigned n)
{
	/* bench_alloc_lines zeroes them: every page is touched here, before
	 * the run, and not by the first sample in the timed loop. */
	return bench_alloc_lines((size_t)(n ? n : 1) * sizeof(struct bench_waits));
}

/* The value a bucket stands for, in ns: its midpoint (exact below 2^7). */
static double bucket_value(unsigned b)
{
	unsigned shift;
	uint64_t lower, width;

	if (b < 2 * BENCH_WAIT_HALF)
		return b;
	shift = b / BENCH_WAIT_HALF - 1;
	lower = (uint64_t)(b % BENCH_WAIT_HALF + BENCH_WAIT_HALF) << shift;
	width = (uint64_t)1 << shift;
	return (double)lower + (double)(width - 1) / 2;
}

/* The smallest bucket value with at least ceil(n x permille / 1000) of the
 * n samples at or below it (the nearest rank), no more than the exact
 * maximum, in microseconds. */
static double percentile_us(const uint64_t *count, uint64_t n, uint64_t max_ns,
			    unsigned permille)
{
	uint64_t rank = (n * permille + 999) / 1000, seen = 0;

	if (rank == 0)
		rank = 1;
	for (unsigned b = 0; b < BENCH_WAIT_BUCKETS; b++) {
		seen += count[b];
		if (seen >= rank)
			return fmin(bucket_value(b), (double)max_ns) / 1e3;
	}
	return (double)max_ns / 1e3;    /* not reached: the counts sum to n */
}

void bench_waits_stats(const struct bench_waits *w, unsigned n,
		       struct bench_wait_stats *out)
{
	uint64_t *count = bench_xcalloc(BENCH_WAIT_BUCKETS, sizeof *count);
	uint64_t samples = 0, max_ns = 0;

	for (unsigned i = 0; i < n; i++) {
		for (unsigned b = 0; b < BENCH_WAIT_BUCKETS; b++)
			count[b] += w[i].count[b];
		samples += w[i].samples;
		if (w[i].max_ns > max_ns)
			max_ns = w[i].max_ns;
	}
	out->samples = samples;
	if (samples == 0) {
		out->p50_us = out->p99_us = out->p999_us = out->max_us = NAN;
	} else {
		out->p50_us = percentile_us(count, samples, max_ns, 500);
		out->p99_us = percentile_us(count, samples, max_ns, 990);
		out->p999_us = percentile_us(count, samples, max_ns, 999);
		out->max_us = (double)max_ns / 1e3;
	}
	free(count);
}

uint64_t bench_wait_clock_floor_ns(void)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 4096; i++) {
		uint64_t t0 = bench_now_ns(), t1 = bench_now_ns();

		if (t1 - t0 < best)
			best = t1 - t0;
	}
	return best;
}

/* ---- the wait columns and JSON ------------------------------------------- */

static const struct bench_wait_stats *waits_of(const struct bench_result *r)
{
	const struct bench_wait_run *w = bench_result_sample(r)->extra;

	return w && w->timed ? &w->stats : NULL;
}

static double col_samples(const struct bench_result *r)
{
	const struct bench_wait_stats *w = waits_of(r);

	return w ? (double)w->samples : NAN;
}

/* The median run's figure at offset off of its stats, in microseconds;
 * NAN ("-") without a sample. */
static double wait_us(const struct bench_result *r, size_t off)
{
	const struct bench_wait_stats *w = waits_of(r);

	return w && w->samples ? *(const double *)(const void *)((const char *)w + off) : NAN;
}

#define WAIT_US(member) \
	static double col_##member(const struct bench_result *r) \
	{ return wait_us(r, offsetof(struct bench_wait_stats, member)); }
WAIT_US(p50_us)
WAIT_US(p99_us)
WAIT_US(p999_us)
WAIT_US(max_us)

/* The waits with 3 significant digits: they span from tens of ns to seconds. */
const struct bench_column bench_col_wait[BENCH_WAIT_NCOLUMNS] = {
	{ "samples", "sampled acquisitions (timed)", 7, 0, col_samples,
	  "the wait columns' sample count: acquisitions timed (all threads; JSON "
	  "wait_samples)" },
	{ "p50-us", "sampled wait per acquisition, p50, us", 7, -3, col_p50_us,
	  "wait per acquisition, microseconds, 3 significant digits: from just "
	  "before lock to just after it returns (CLOCK_MONOTONIC through the vDSO; "
	  "every sample includes one clock read, JSON wait_clock_floor_ns).  "
	  "SAMPLED: each thread times about one acquisition in --wait-sample, the "
	  "gaps drawn at random (uniform 1..2N-1, a phase of its own per thread), "
	  "into its own histogram (percentiles within 0.8%).  The percentiles AND "
	  "max are over the sampled acquisitions only: max is the longest sampled "
	  "wait, exact, not the longest of every acquisition (--wait-sample 1 times "
	  "them all, at two clock reads each).  A timed acquisition's critical "
	  "section is one clock read longer.  JSON per run wait_us_p50, wait_us_p99, "
	  "wait_us_p999, wait_us_max, and per result wait_us_max_all_runs (the "
	  "longest over the --repeat runs)" },
	{ "p99-us", "sampled wait per acquisition, p99, us", 7, -3, col_p99_us, NULL },
	{ "p99.9-us", "sampled wait per acquisition, p99.9, us", 8, -3, col_p999_us, NULL },
	{ "max-us", "longest sampled wait per acquisition, us", 7, -3, col_max_us, NULL },
};

void bench_wait_json_run(struct bench_json *j, const struct bench_wait_run *w)
{
	if (!w || !w->timed) {
		bench_json_null(j, "wait_samples");
		bench_json_null(j, "wait_us_p50");
		bench_json_null(j, "wait_us_p99");
		bench_json_null(j, "wait_us_p999");
		bench_json_null(j, "wait_us_max");
		return;
	}
	bench_json_uint(j, "wait_samples", w->stats.samples);
	bench_json_number(j, "wait_us_p50", w->stats.p50_us);
	bench_json_number(j, "wait_us_p99", w->stats.p99_us);
	bench_json_number(j, "wait_us_p999", w->stats.p999_us);
	bench_json_number(j, "wait_us_max", w->stats.max_us);
}

void bench_wait_json_longest(struct bench_json *j, const struct bench_sample *runs,
			     unsigned n)
{
	double max = NAN;

	for (unsigned k = 0; runs && k < n; k++) {
		const struct bench_wait_run *w = runs[k].extra;

		if (w && w->stats.samples > 0 && !(w->stats.max_us <= max))
			max = w->stats.max_us;
	}
	bench_json_number(j, "wait_us_max_all_runs", max);
}

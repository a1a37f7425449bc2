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

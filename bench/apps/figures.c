/* SPDX-License-Identifier: MIT */
/* hotlock-bench-apps: a row's figures from its runs: each side's median
 * (stats.c's lower median: a run that happened), range and CPU time, the
 * ratio of the medians and its 95% interval by the bootstrap, and the
 * threads stress-ng's workers really ran. */
#include <math.h>
#include <stdlib.h>

#include "apps.h"

/* The lower median of the runs' double at offset off; *idx (unless NULL): the
 * run that has it. */
static double median_of(const struct app_run *runs, unsigned n, size_t off, unsigned *idx)
{
	double *v = bench_xcalloc(n, sizeof *v), med;

	for (unsigned i = 0; i < n; i++)
		v[i] = *(const double *)((const char *)&runs[i] + off);
	if (idx)
		*idx = bench_median_index(v, n);
	med = bench_lower_median(v, n);
	free(v);
	return med;
}

/* The ratio of a row's medians as `ratio` orients it (the pair's inverted). */
static double oriented(enum app_kind k, double base, double trial)
{
	return k >= PAIR_SINGLE ? base / trial : trial / base;
}

/* The lower median of n values drawn, with replacement, from runs' values,
 * by the generator *x (xorshift64). */
static double resampled_median(const struct app_run *runs, unsigned n, double *v, uint64_t *x)
{
	for (unsigned i = 0; i < n; i++) {
		*x ^= *x << 13;
		*x ^= *x >> 7;
		*x ^= *x << 17;
		v[i] = runs[*x % n].value;
	}
	return bench_lower_median(v, n);
}

/* The ratio's 95% interval by the bootstrap: each side's runs resampled
 * apart, RESAMPLES times, the ratio of the two medians each time; the
 * 2.5th and 97.5th percentiles.  On this noisy VM a ratio's runs spread
 * far (stress-ng's twofold): an interval that holds 1 says these runs do
 * not tell the sides apart.  A fixed seed: the same runs give the same
 * interval. */
static void ratio_interval(struct app_row *row, unsigned repeat)
{
	double *v = bench_xcalloc(repeat, sizeof *v);
	double *r = bench_xcalloc(RESAMPLES, sizeof *r);
	uint64_t x = 0x9e3779b97f4a7c15ull;

	for (unsigned i = 0; i < RESAMPLES; i++) {
		double base = resampled_median(row->runs[BASE], repeat, v, &x);
		double trial = resampled_median(row->runs[TRIAL], repeat, v, &x);

		r[i] = oriented(row->kind, base, trial);
	}
	qsort(r, RESAMPLES, sizeof *r, bench_cmp_double);
	row->ci_lo = r[RESAMPLES / 40];
	row->ci_hi = r[RESAMPLES - 1 - RESAMPLES / 40];
	free(r);
	free(v);
}

/* The fewest and most threads the row's stress-ng workers were seen to
 * run (0: none seen). */
static void threads_seen(struct app_row *row, unsigned repeat)
{
	for (int s = 0; s < 2; s++)
		for (unsigned i = 0; i < repeat; i++)
			for (unsigned k = 0; k < row->runs[s][i].ninst; k++) {
				const unsigned seen = row->runs[s][i].inst[k].threads_seen;

				if (seen && (!row->seen_min || seen < row->seen_min))
					row->seen_min = seen;
				if (seen > row->seen_max)
					row->seen_max = seen;
			}
}

void row_figures(struct app_row *row, unsigned repeat)
{
	for (int s = 0; s < 2; s++) {
		const struct app_run *r = row->runs[s];

		row->med[s] = median_of(r, repeat, offsetof(struct app_run, value), &row->median[s]);
		row->cpu[s] = median_of(r, repeat, offsetof(struct app_run, cpu_s), NULL);
		row->min[s] = row->max[s] = r[0].value;
		for (unsigned i = 1; i < repeat; i++) {
			row->min[s] = fmin(row->min[s], r[i].value);
			row->max[s] = fmax(row->max[s], r[i].value);
		}
	}
	threads_seen(row, repeat);
	/* > 1: TRIAL (the shim; with --cost the shim with the option) is
	 * faster. */
	row->ratio = oriented(row->kind, row->med[BASE], row->med[TRIAL]);
	ratio_interval(row, repeat);
	row->locks = median_of(row->runs[TRIAL], repeat, offsetof(struct app_run, locks_d), NULL);
}

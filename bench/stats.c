/* SPDX-License-Identifier: MIT */
/* hotlock-bench: the statistics every scenario shares (see harness.h): the
 * qsort orders, the lower median of a set of values (a value that happened,
 * so that the run shown is one that was made), and the run it belongs to. */
#include <math.h>
#include <stdlib.h>

#include "harness.h"

/* qsort order of doubles, ascending. */
int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* qsort order of unsigned ints, ascending. */
int bench_cmp_unsigned(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return (x > y) - (x < y);
}

/* Sorts v[0..n) and returns its lower median; NAN when n is 0. */
double bench_lower_median(double *v, size_t n)
{
	if (n == 0)
		return NAN;
	qsort(v, n, sizeof *v, bench_cmp_double);
	return v[(n - 1) / 2];
}

/* The first index of v[0..n) that holds its lower median; 0 when none does
 * (a NAN median). */
unsigned bench_median_index(const double *v, unsigned n)
{
	double *s = bench_xcalloc(n, sizeof *s);
	double m;
	unsigned i;

	for (i = 0; i < n; i++)
		s[i] = v[i];
	m = bench_lower_median(s, n);
	free(s);
	for (i = 0; i < n && v[i] != m; i++)
		;
	return i < n ? i : 0;
}

/* The index of the run with the median key (see bench_median_index). */
unsigned bench_median_run(const struct bench_sample *runs, unsigned n,
			  double (*key)(const struct bench_sample *s))
{
	double *v = bench_xcalloc(n, sizeof *v);
	unsigned i;

	for (i = 0; i < n; i++)
		v[i] = key(&runs[i]);
	i = bench_median_index(v, n);
	free(v);
	return i;
}

/* SPDX-License-Identifier: MIT */
/* hotlock-bench-schbench: fio's latency histogram, as schbench keeps it: a
 * bucket per usec up to 511, then PLAT_VAL buckets per power of two, each
 * standing for its middle; and schbench's walk to the percentiles. */
#include <string.h>

#include "schbench.h"

const double sb_pct_list[NPCT] = { 50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9 };

/* Values below 2 << PLAT_BITS have a bucket each; above, each power of two
 * is cut into PLAT_VAL buckets. */
static unsigned plat_idx(uint64_t us)
{
	unsigned msb, err_bits, idx;

	if (us < (2u << PLAT_BITS))
		return (unsigned)us;
	msb = 63u - (unsigned)__builtin_clzll(us);
	err_bits = msb - PLAT_BITS;
	idx = ((err_bits + 1) << PLAT_BITS) + (unsigned)((us >> err_bits) & (PLAT_VAL - 1));
	return idx < PLAT_NR - 1 ? idx : PLAT_NR - 1;
}

/* The value a bucket stands for: itself, or the middle of its range. */
static uint64_t plat_val(unsigned idx)
{
	unsigned err_bits;

	if (idx < (2u << PLAT_BITS))
		return idx;
	err_bits = (idx >> PLAT_BITS) - 1;
	return (1ull << (err_bits + PLAT_BITS)) +
	       (uint64_t)(((double)(idx % PLAT_VAL) + 0.5) * (double)(1ull << err_bits));
}

void sb_hist_add(struct sb_hist *h, uint64_t us)
{
	struct sb_latency *l = &h->lat;

	if (!l->n || us < l->min)
		l->min = us;
	if (us > l->max)
		l->max = us;
	l->zeros += us == 0;
	h->plat[plat_idx(us)]++;
	l->n++;
}

void sb_hist_merge(struct sb_hist *d, const struct sb_hist *s)
{
	struct sb_latency *l = &d->lat;

	if (!s->lat.n)
		return;
	for (unsigned i = 0; i < PLAT_NR; i++)
		d->plat[i] += s->plat[i];
	if (!l->n || s->lat.min < l->min)
		l->min = s->lat.min;
	if (s->lat.max > l->max)
		l->max = s->lat.max;
	l->n += s->lat.n;
	l->zeros += s->lat.zeros;
}

void sb_hist_percentiles(struct sb_hist *h)
{
	uint64_t sum = 0, *out = h->lat.pct;
	unsigned j = 0;

	memset(out, 0, sizeof h->lat.pct);
	if (!h->lat.n)
		return;
	for (unsigned i = 0; i < PLAT_NR && j < NPCT; i++) {
		sum += h->plat[i];
		while (j < NPCT && (double)sum >= sb_pct_list[j] / 100.0 * (double)h->lat.n)
			out[j++] = plat_val(i);
	}
}

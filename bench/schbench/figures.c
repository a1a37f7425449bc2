/* SPDX-License-Identifier: MIT */
/* hotlock-bench-schbench: the figures of a run (the latency rows, and the
 * cost and fairness per wake-up), and each one's median and range over the
 * repeats, which the tables and the JSON report. */
#include <math.h>
#include <stdlib.h>

#include "schbench.h"

static double per_wakeup(double x, uint64_t wakeups)
{
	return wakeups ? x / (double)wakeups : NAN;
}

static double fig_wakeups(const struct sb_result *r) { return (double)r->lat.n; }
static double fig_rate(const struct sb_result *r)
{
	return r->wall_s > 0 ? (double)r->lat.n / r->wall_s : NAN;
}
static double fig_cpu_us(const struct sb_result *r)
{
	return per_wakeup(r->cpu_s * 1e6, r->lat.n);
}
static double fig_sync_cpu_us(const struct sb_result *r)
{
	return per_wakeup((r->cpu_s - r->think_cpu_s) * 1e6, r->lat.n);
}
static double fig_futex(const struct sb_result *r)
{
	return per_wakeup((double)r->futex_calls, r->lat.n);
}
static double fig_csw(const struct sb_result *r)
{
	return per_wakeup((double)r->csw, r->lat.n);
}
static double fig_wk_min(const struct sb_result *r) { return (double)r->wk_min; }
static double fig_wk_avg(const struct sb_result *r) { return r->wk_avg; }
static double fig_wk_max(const struct sb_result *r) { return (double)r->wk_max; }
static double fig_fair(const struct sb_result *r)
{
	return r->wk_max ? (double)r->wk_min / (double)r->wk_max : NAN;
}
static double fig_other(const struct sb_result *r) { return r->other_cpus; }

const struct sb_fig sb_figs[] = {
	{ "wakeups", "wakeups", 9, 0, fig_wakeups },
	{ "wakeups/s", "wakeups_per_sec", 10, 0, fig_rate },
	{ "cpu-us/wk", "cpu_us_per_wakeup", 10, 1, fig_cpu_us },
	{ "sync-us/wk", "sync_cpu_us_per_wakeup", 10, 2, fig_sync_cpu_us },
	{ "futex/wk", "futex_calls_per_wakeup", 9, 2, fig_futex },
	{ "csw/wk", "csw_per_wakeup", 7, 2, fig_csw },
	{ "thr-min", "worker_wakeups_min", 8, 0, fig_wk_min },
	{ "thr-avg", "worker_wakeups_avg", 8, 0, fig_wk_avg },
	{ "thr-max", "worker_wakeups_max", 8, 0, fig_wk_max },
	{ "min/max", "worker_fairness", 7, 2, fig_fair },
	{ "other", "other_cpus", 6, 2, fig_other },
};
const unsigned sb_nfigs = sizeof sb_figs / sizeof sb_figs[0];

double sb_row_value(const struct sb_result *r, unsigned row)
{
	if (row < NPCT)
		return (double)r->lat.pct[row];
	return (double)(row == NPCT ? r->lat.min : r->lat.max);
}

void sb_row_name(unsigned row, char *buf, size_t len)
{
	if (row < NPCT)
		snprintf(buf, len, "%s%.1fth", row == PCT_P99 ? "*" : "", sb_pct_list[row]);
	else
		snprintf(buf, len, "%s", row == NPCT ? "min" : "max");
}

struct spread sb_spread(const struct sb_result *runs, unsigned n, const struct sb_fig *f,
			unsigned row)
{
	double *v = bench_xcalloc(n, sizeof *v);
	unsigned k = 0;
	struct spread out = { NAN, NAN, NAN };

	for (unsigned i = 0; i < n; i++) {
		double x = f ? f->value(&runs[i]) :
			   runs[i].lat.n ? sb_row_value(&runs[i], row) : NAN;

		if (!isnan(x))
			v[k++] = x;
	}
	if (k) {
		out.med = bench_lower_median(v, k); /* sorts v */
		out.lo = v[0];
		out.hi = v[k - 1];
	}
	free(v);
	return out;
}

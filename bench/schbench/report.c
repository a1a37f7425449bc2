/* SPDX-License-Identifier: MIT */
/* hotlock-bench-schbench: the report: each mode's latencies in the seed's
 * shape, the tables over the modes (median of the repeats [min-max], and
 * the ratio wake+wait / hl_swap where both ran), and the JSON. */
#include <math.h>

#include "schbench.h"

const char *const sb_legend[SB_NLEGEND][2] = {
	{ "wakeups", "latency samples (worker wake-ups), wakeups/s over the run's wall time" },
	{ "cpu-us/wk", "all threads' CPU time / wake-ups, the workers' -c think time included" },
	{ "sync-us/wk", "the same less the think time: waking, waiting, spinning" },
	{ "futex/wk", "futex syscalls (hl_futex_stats_total) / wake-ups" },
	{ "csw/wk", "voluntary context switches / wake-ups" },
	{ "thr-*", "wake-ups per worker: min, avg, max; min/max their ratio" },
	{ "other", "CPUs kept busy by other processes during the run" },
};

void sb_print_latencies(const struct sb_result *runs, unsigned n)
{
	printf("Latency percentiles (usec)\n");
	for (unsigned row = 0; row < NPCT; row++)
		printf("\t%s%.1fth: %.0f\n", row == PCT_P99 ? "*" : "", sb_pct_list[row],
		       sb_spread(runs, n, NULL, row).med);
	printf("\tmin=%.0f, max=%.0f\n", sb_spread(runs, n, NULL, NPCT).med,
	       sb_spread(runs, n, NULL, NPCT + 1).med);
}

static void fmt_spread(char *buf, size_t len, struct spread s, int prec)
{
	if (isnan(s.med))
		snprintf(buf, len, "-");
	else if (s.lo == s.hi)
		snprintf(buf, len, "%.*f", prec, s.med);
	else
		snprintf(buf, len, "%.*f [%.*f-%.*f]", prec, s.med, prec, s.lo, prec, s.hi);
}

/* The cells of one row (figure f, or with f NULL latency row row): a
 * spread per mode, then the ratio of modes ww to sw (-1: not run). */
static void print_row(const struct sb_opts *o, struct sb_result *const *runs,
		      const struct sb_fig *f, unsigned row, int ww, int sw)
{
	char cell[64];

	for (unsigned k = 0; k < o->nmodes; k++) {
		fmt_spread(cell, sizeof cell, sb_spread(runs[k], o->repeat, f, row),
			   f ? f->prec : 0);
		printf(" %24s", cell);
	}
	if (ww >= 0 && sw >= 0) {
		double a = sb_spread(runs[ww], o->repeat, f, row).med;
		double b = sb_spread(runs[sw], o->repeat, f, row).med;

		bench_print_cell(b != 0 ? a / b : NAN, 19, 2);
	}
	printf("\n");
}

void sb_print_tables(const struct sb_opts *o, struct sb_result *const *runs)
{
	int ww = -1, sw = -1;
	char name[16];

	for (unsigned k = 0; k < o->nmodes; k++) {
		if (o->modes[k] == MODE_WAKE_WAIT)
			ww = (int)k;
		else
			sw = (int)k;
	}

	printf("\nlatency (usec): median of %u run%s [min-max over the runs]\n", o->repeat,
	       o->repeat == 1 ? "" : "s");
	printf("%-10s", "");
	for (unsigned k = 0; k < o->nmodes; k++)
		printf(" %24s", sb_mode_names[o->modes[k]]);
	if (ww >= 0 && sw >= 0)
		printf(" %19s", "wake+wait/hl_swap");
	printf("\n");
	for (unsigned row = 0; row < NROWS; row++) {
		sb_row_name(row, name, sizeof name);
		printf("%-10s", name);
		print_row(o, runs, NULL, row, ww, sw);
	}

	printf("\ncost and fairness per wake-up: median of %u run%s [min-max]\n", o->repeat,
	       o->repeat == 1 ? "" : "s");
	for (unsigned i = 0; i < SB_NLEGEND; i++)
		printf("  %-11s %s\n", sb_legend[i][0], sb_legend[i][1]);
	for (unsigned f = 0; f < sb_nfigs; f++) {
		printf("%-11s", sb_figs[f].head);
		print_row(o, runs, &sb_figs[f], 0, ww, sw);
	}
	for (unsigned k = 0; k < o->nmodes; k++) {
		uint64_t zeros = 0, n = 0;

		for (unsigned i = 0; i < o->repeat; i++) {
			zeros += runs[k][i].lat.zeros;
			n += runs[k][i].lat.n;
		}
		if (zeros)
			printf("%s: %llu of %llu latencies were 0 usec (recorded; schbench drops them)\n",
			       sb_mode_names[o->modes[k]], (unsigned long long)zeros,
			       (unsigned long long)n);
	}
}

/* {"median", "min", "max"} of a spread (null where NAN). */
static void json_spread(struct bench_json *j, const char *key, struct spread s)
{
	bench_json_object(j, key);
	bench_json_number(j, "median", s.med);
	bench_json_number(j, "min", s.lo);
	bench_json_number(j, "max", s.hi);
	bench_json_end(j);
}

/* "latency_usec": each row, named without the star, as a spread over runs
 * [0..n) or with n 0 the value of runs[0]. */
static void json_latencies(struct bench_json *j, const struct sb_result *runs, unsigned n)
{
	char name[16];

	bench_json_object(j, "latency_usec");
	for (unsigned row = 0; row < NROWS; row++) {
		const char *key = name;

		sb_row_name(row, name, sizeof name);
		key += name[0] == '*';
		if (n)
			json_spread(j, key, sb_spread(runs, n, NULL, row));
		else
			bench_json_number(j, key, sb_row_value(runs, row));
	}
	bench_json_end(j);
}

/* One run's object: its latencies, what it measured, its figures. */
static void json_run(struct bench_json *j, const struct sb_result *r)
{
	bench_json_object(j, NULL);
	json_latencies(j, r, 0);
	/* schbench's starred row, flat: the layout's metric. */
	bench_json_number(j, "p99_usec", sb_row_value(r, PCT_P99));
	bench_json_uint(j, "zero_usec_samples", r->lat.zeros);
	bench_json_number(j, "wall_s", r->wall_s);
	bench_json_number(j, "cpu_s", r->cpu_s);
	bench_json_number(j, "think_cpu_s", r->think_cpu_s);
	bench_json_uint(j, "futex_calls", r->futex_calls);
	bench_json_uint(j, "csw", r->csw);
	for (unsigned f = 0; f < sb_nfigs; f++)
		bench_json_number(j, sb_figs[f].json, sb_figs[f].value(r));
	bench_json_end(j);
}

void sb_write_json(const struct sb_opts *o, struct sb_result *const *runs)
{
	struct bench_json *j = bench_json_open(o->json);
	const char *modes[NMODES];

	for (unsigned k = 0; k < o->nmodes; k++)
		modes[k] = sb_mode_names[o->modes[k]];
	bench_json_object(j, NULL);
	bench_json_string(j, "bench", "schbench");
	bench_json_object(j, "config");
	bench_json_uint(j, "message_threads", o->m);
	bench_json_uint(j, "workers_per_message_thread", o->t);
	bench_json_number(j, "runtime_s", o->runtime_s);
	bench_json_uint(j, "cputime_us", o->cputime_us);
	bench_json_uint(j, "sleeptime_us", o->sleeptime_us);
	bench_json_uint(j, "repeat", o->repeat);
	bench_json_string_array(j, "modes", modes, o->nmodes);
	bench_json_environment(j);
	bench_json_end(j);              /* config */
	bench_json_layout(j, (const char *const[]){ "mode" }, 1, "p99_usec", true);

	bench_json_array(j, "results");
	for (unsigned k = 0; k < o->nmodes; k++) {
		bench_json_object(j, NULL);
		bench_json_string(j, "mode", modes[k]);
		json_latencies(j, runs[k], o->repeat);
		for (unsigned f = 0; f < sb_nfigs; f++)
			json_spread(j, sb_figs[f].json,
				    sb_spread(runs[k], o->repeat, &sb_figs[f], 0));
		bench_json_array(j, "runs");
		for (unsigned i = 0; i < o->repeat; i++)
			json_run(j, &runs[k][i]);
		bench_json_end(j);      /* runs */
		bench_json_end(j);
	}
	bench_json_end(j);              /* results */
	bench_json_end(j);              /* the top-level object */
	bench_json_close(j);
}

/* SPDX-License-Identifier: MIT */
/* hotlock-bench-apps: the tables on stdout: the pair's (the shim's own
 * cost, or that of the option --cost names) and the programs', each under
 * a header that says what the rows are; a row per (workload, T) with each
 * side's median [min-max], the ratio, its 95% interval and the CPU time
 * per run, and under it the notes: a stress-ng that ran other than T
 * threads, the reports --deadlocks or --lock-order made. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "apps.h"

/* 3 significant digits or so. */
static const char *num(char *buf, size_t len, double v)
{
	snprintf(buf, len, fabs(v) >= 100 ? "%.0f" : fabs(v) >= 10 ? "%.1f" : "%.2f", v);
	return buf;
}

static const char *cell(char *buf, size_t len, const struct app_row *row, int s)
{
	const double sc = app_info[row->kind].scale;
	char a[24], b[24], c[24];

	snprintf(buf, len, "%s [%s-%s]", num(a, sizeof a, row->med[s] / sc),
		 num(b, sizeof b, row->min[s] / sc), num(c, sizeof c, row->max[s] / sc));
	return buf;
}

/* A row's 95% interval of the ratio (ratio_interval), as "[lo-hi]". */
static const char *interval(char *buf, size_t len, const struct app_row *row)
{
	snprintf(buf, len, "[%.2f-%.2f]", row->ci_lo, row->ci_hi);
	return buf;
}

/* What the interval column means, under each table's header. */
static void print_interval_note(void)
{
	printf("95%% CI: the ratio's interval by the bootstrap (each side's runs resampled\n"
	       "apart, %d times); one that holds 1 means these runs do not tell the\n"
	       "sides apart\n", RESAMPLES);
}

void print_pair_header(const struct apps *a)
{
	const struct cost_info *ci = &cost_info[a->cost];
	char b[48], t[48];

	if (a->cost != COST_NONE)
		printf("The cost of hotlock-run %s (%s) on\n"
		       "the shim's fast path: an uncontended pthread_mutex_lock + unlock pair in\n"
		       "hotlock-shim-pair under hotlock-run without and with it (%lu pairs, best\n"
		       "of %d trials a run; median [min-max] of %u runs; ratio = shim / %s,\n"
		       "> 1: the %s side is faster%s)\n", ci->option, ci->what, a->pairs,
		       PAIR_TRIALS, a->repeat, ci->side, ci->side, a->cost == COST_STATS ?
		       "; locks: the locks its report\nrecorded, median" : "");
	else
		printf("The shim's own cost: an uncontended pthread_mutex_lock + unlock pair in a\n"
		       "program not linked with hotlock (hotlock-shim-pair, %lu pairs, best of %d\n"
		       "trials a run; median [min-max] of %u runs; ratio = glibc / shim, > 1: the\n"
		       "shim is faster)\n", a->pairs, PAIR_TRIALS, a->repeat);
	print_interval_note();
	snprintf(b, sizeof b, "%s ns/pair", side_name(a, BASE));
	snprintf(t, sizeof t, "%s ns/pair", side_name(a, TRIAL));
	printf("%-17s %-26s %-26s %6s %-11s%s\n", "form", b, t, "ratio", "95% CI",
	       a->cost == COST_STATS ? "  locks" : "");
}

/* Under a row of --deadlocks or --lock-order: the runs that made a report
 * (a real program should make none; each run's warning was on stderr),
 * and the first lines of the first. */
static void print_report_note(const struct apps *a, const struct app_row *row)
{
	unsigned runs = 0, reports = 0;
	const char *head = NULL;

	if (!cost_info[a->cost].warns)
		return;
	for (unsigned i = 0; i < a->repeat; i++) {
		const struct app_run *r = &row->runs[TRIAL][i];

		if (r->report_bytes == 0)
			continue;
		runs++;
		reports += r->reports;
		head = head ? head : r->report_head;
	}
	if (runs == 0)
		return;
	printf("  warning: hotlock-run %s reported in %u of %u runs (%u report%s); the "
	       "first:\n", cost_info[a->cost].option, runs, a->repeat, reports,
	       reports == 1 ? "" : "s");
	for (const char *p = head; *p; ) {
		const size_t n = strcspn(p, "\n");

		printf("    %.*s\n", (int)n, p);
		p += n + (p[n] == '\n');
	}
}

void print_pair_row(const struct apps *a, const struct app_row *row)
{
	char g[96], h[96], ci[32];

	printf("%-17s %-26s %-26s %6.2f %-11s", app_info[row->kind].name,
	       cell(g, sizeof g, row, BASE), cell(h, sizeof h, row, TRIAL), row->ratio,
	       interval(ci, sizeof ci, row));
	if (a->cost == COST_STATS)
		printf(" %6.0f", row->locks);
	putchar('\n');
	print_report_note(a, row);
}

void print_app_header(const struct apps *a, const struct app_row *rows, size_t nrows)
{
	const struct cost_info *ci = &cost_info[a->cost];
	bool x2 = false, stress = false;

	for (size_t i = 0; i < nrows; i++) {
		x2 |= app_info[rows[i].kind].instances > 1;
		stress |= app_info[rows[i].kind].program == PROG_STRESS_NG;
	}
	if (a->cost != COST_NONE)
		printf("Programs under hotlock-run without and with %s\n"
		       "(%s), alternately (without first), median [min-max] of %u runs of\n"
		       "about %u s; ratio = %s / shim, > 1: the %s side\n"
		       "is faster; cpu-s, %s = user + sys seconds of the program per run (median;\n"
		       "memcached: the server's; hotlock-run's collector's included)%s\n",
		       ci->what, ci->option, a->repeat, a->duration, ci->side, ci->side,
		       ci->cpu_col, a->cost == COST_STATS ? ";\nlocks: the locks the "
		       "report recorded (locks_tracked, median)" : "");
	else
		printf("Programs on glibc and under hotlock-run, alternately (glibc first), median\n"
		       "[min-max] of %u runs of about %u s; ratio = shim / glibc, > 1: the shim is\n"
		       "faster; cpu-s = user + sys seconds of the program per run (median;\n"
		       "memcached: the server's)\n", a->repeat, a->duration);
	if (x2)
		printf("-x2: two instances of the program at once, T threads each, both on\n"
		       "%s; their rates and CPU seconds summed\n", a->cost != COST_NONE ?
		       "the same side" : "glibc or both under hotlock-run");
	if (stress)
		printf("stress-ng: bogo ops per second of real time, as stress-ng reports it\n");
	print_interval_note();
	printf("%-*s %3s %-8s %-24s %-24s %6s %-11s %6s %6s%s\n", a->namew, "workload", "T", "unit",
	       side_name(a, BASE), side_name(a, TRIAL), "ratio", "95% CI",
	       a->cost != COST_NONE ? "cpu-s" : "cpu-g", ci->cpu_col,
	       a->cost == COST_STATS ? "  locks" : "");
}

void print_app_row(const struct apps *a, const struct app_row *row)
{
	char g[96], h[96], ci[32];

	printf("%-*s %3u %-8s %-24s %-24s %6.2f %-11s %6.2f %6.2f", a->namew,
	       app_info[row->kind].name, row->threads, app_info[row->kind].unit,
	       cell(g, sizeof g, row, BASE), cell(h, sizeof h, row, TRIAL), row->ratio,
	       interval(ci, sizeof ci, row), row->cpu[BASE], row->cpu[TRIAL]);
	if (a->cost == COST_STATS)
		printf(" %6.0f", row->locks);
	putchar('\n');
	/* A stress-ng that ignores --mutex-procs (0.15 runs 2 threads). */
	if (row->seen_max && (row->seen_min != row->threads || row->seen_max != row->threads)) {
		printf("  note: stress-ng's worker ran %u", row->seen_min);
		if (row->seen_max != row->seen_min)
			printf("-%u", row->seen_max);
		printf(" threads, not %u: this stress-ng ignores --mutex-procs\n", row->threads);
	}
	print_report_note(a, row);
}

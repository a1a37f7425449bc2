/* SPDX-License-Identifier: MIT */
/* hotlock-bench-apps: the run loop.  The rows (the pair's two forms, then
 * each workload at each T), the lines above the tables (hotlock-run, what
 * is skipped, --busy, --cost), then each row's runs, both sides
 * alternately, BASE first, --repeat times, a progress line each (and a
 * warning after it where --deadlocks or --lock-order reported), and the
 * row printed as soon as it is done; the JSON at the end. */
#include <stdlib.h>
#include <string.h>

#include "apps.h"

/* The rows, in order: the pair's two forms, then each workload's T; the
 * (workload, T) that cannot run into a->tskip.  Returns their count, and
 * in *npair the pair's. */
static size_t plan_rows(struct apps *a, struct app_row *rows, size_t *npair)
{
	size_t nrows = 0;

	if (a->want[APP_NPROGRAMS] && !a->skip[APP_NPROGRAMS][0])
		for (int k = PAIR_SINGLE; k <= PAIR_IDLE; k++)
			rows[nrows++] = (struct app_row){ .kind = (enum app_kind)k, .threads = 1 };
	*npair = nrows;
	a->namew = 16;
	for (int k = 0; k < APP_NPROGRAMS; k++)
		if (a->want[k] && !a->skip[k][0])
			for (size_t i = 0; i < a->nthreads; i++) {
				const unsigned t = a->threads[i];

				if (app_info[k].program == PROG_STRESS_NG &&
				    (t < STRESS_MIN_THREADS || t > STRESS_MAX_THREADS)) {
					a->tskip[a->ntskip].kind = (enum app_kind)k;
					a->tskip[a->ntskip++].threads = t;
					continue;
				}
				rows[nrows++] = (struct app_row){ .kind = (enum app_kind)k,
								  .threads = t };
				if ((int)strlen(app_info[k].name) > a->namew)
					a->namew = (int)strlen(app_info[k].name);
			}
	return nrows;
}

/* The lines above the tables: hotlock-run and its options, the cores, and
 * what is skipped. */
static void print_preamble(const struct apps *a)
{
	printf("apps: hotlock-run %s%s%s%s%s, %u cores\n", a->hotlock_run,
	       a->queue ? " --queue " : "", a->queue ? a->queue : "",
	       a->spin_ns_text ? " --spin-ns " : "", a->spin_ns_text ? a->spin_ns_text : "",
	       bench_cores());
	for (int k = 0; k <= APP_NPROGRAMS; k++)
		if (a->want[k] && a->skip[k][0])
			printf("%s: skipped: %s\n", k < APP_NPROGRAMS ? app_info[k].name : "pair",
			       a->skip[k]);
	for (size_t i = 0; i < a->ntskip; i++)
		printf("%s T=%u: skipped: %s\n", app_info[a->tskip[i].kind].name,
		       a->tskip[i].threads, STRESS_T_WHY);
}

/* A row's runs, both sides alternately, a progress line each. */
static void run_row(const struct apps *a, struct app_row *row)
{
	for (int s = 0; s < 2; s++)
		row->runs[s] = bench_xcalloc(a->repeat, sizeof *row->runs[s]);
	for (unsigned rep = 0; rep < a->repeat; rep++)
		for (int s = 0; s < 2; s++) {
			struct app_run *r = &row->runs[s][rep];
			char what[112], result[160], cpu[96];

			run_what(a, what, sizeof what, row->kind, row->threads, (enum side)s);
			bench_progress_begin("%s, run %u/%u", what, rep + 1, a->repeat);
			run_one(a, row->kind, row->threads, (enum side)s, r);
			if (side_report(a, (enum side)s) && a->cost == COST_STATS)
				snprintf(cpu, sizeof cpu, ", cpu %.2f s, %llu locks recorded",
					 r->cpu_s, (unsigned long long)r->locks_tracked);
			else if (side_report(a, (enum side)s))
				snprintf(cpu, sizeof cpu, ", cpu %.2f s, %u report%s", r->cpu_s,
					 r->reports, r->reports == 1 ? "" : "s");
			else
				snprintf(cpu, sizeof cpu, ", cpu %.2f s", r->cpu_s);
			snprintf(result, sizeof result, "%.3g %s%s",
				 r->value / app_info[row->kind].scale,
				 app_info[row->kind].unit, cpu);
			bench_progress_end(result, r->other_cpus);
			reports_warn(a, what, r);
		}
	row_figures(row, a->repeat);
}

int apps_run(struct apps *a)
{
	struct app_row *rows;
	struct bench_json *json;
	size_t nrows, npair;

	atexit(kill_live);
	find_programs(a);
	rows = bench_xcalloc(2 + APP_NPROGRAMS * a->nthreads, sizeof *rows);
	nrows = plan_rows(a, rows, &npair);

	/* Opened first, so that an unwritable path fails before the runs. */
	json = a->json ? bench_json_open(a->json) : NULL;
	print_preamble(a);
	/* Beside every run, glibc's and the shim's alike. */
	bench_busy_start(a->busy);
	bench_busy_note(stdout);
	/* After --busy's handlers, so that a signal removes the reports, then
	 * goes on to them. */
	if (a->cost != COST_NONE) {
		reports_start(a);
		printf("--cost=%s: the shim without %s, then with it (hotlock-run",
		       cost_info[a->cost].name, cost_info[a->cost].what);
		for (size_t i = 0; a->report_argv[i]; i++)
			printf(" %s", a->report_argv[i]);
		printf(")\n");
	}
	fflush(stdout);

	bench_progress_start((unsigned)nrows * 2 * a->repeat);
	for (size_t i = 0; i < nrows; i++) {
		run_row(a, &rows[i]);
		bench_progress_clear();
		if (i == 0 && npair > 0) {
			putchar('\n');
			print_pair_header(a);
		}
		if (i == npair) {
			putchar('\n');
			print_app_header(a, rows + npair, nrows - npair);
		}
		if (rows[i].kind >= PAIR_SINGLE)
			print_pair_row(a, &rows[i]);
		else
			print_app_row(a, &rows[i]);
		fflush(stdout);
	}
	bench_busy_stop();
	bench_progress_clear();
	if (json)
		write_json(a, rows, nrows, json);
	for (size_t i = 0; i < nrows; i++)
		for (int s = 0; s < 2; s++) {
			for (unsigned rep = 0; rep < a->repeat; rep++)
				free(rows[i].runs[s][rep].report_head);
			free(rows[i].runs[s]);
		}
	free(rows);
	return 0;
}

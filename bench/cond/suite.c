/* SPDX-License-Identifier: MIT */
/* hotlock-bench cond: the configurations' runs, each condvar --repeat times
 * interleaved across them; their tables, a header over each workload's
 * first; the JSON, a result per (configuration, condvar), each written as
 * soon as its runs are in. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <hotlock/futex.h>

#include "cond.h"

/* Runs every condvar in configuration k into row[nconds]; sets each one's
 * median run, its spread and its ratio. */
static void run_config(const struct cond_suite *c, const struct cond_shape *k,
		       struct bench_result *row)
{
	const struct cond_workload *w = cond_workloads[k->kind];
	const unsigned repeat = c->common->repeat;
	char what[64], result[64];

	w->title(what, sizeof what, k);
	for (size_t l = 0; l < c->nconds; l++) {
		row[l].lock = l;
		row[l].threads = w->threads(k);
		row[l].runs = bench_xcalloc(repeat, sizeof *row[l].runs);
	}
	for (unsigned rep = 0; rep < repeat; rep++)
		for (size_t l = 0; l < c->nconds; l++) {
			struct cond_run r = { .cv = c->conds[l], .k = *k };
			struct bench_sample *s = &row[l].runs[rep];

			snprintf(r.label, sizeof r.label, "cond %s %s %s", w->name,
				 c->names[l], what);
			bench_progress_begin("%s run %u/%u", r.label, rep + 1, repeat);
			cond_measure(&r, c->common->duration_s, s);
			snprintf(result, sizeof result, w->result_format,
				 cond_measure_of(s) * w->result_scale);
			bench_progress_end(result, s->other_cpus);
		}
	for (size_t l = 0; l < c->nconds; l++) {
		struct bench_result *res = &row[l];
		double lo = INFINITY, hi = -INFINITY, median;

		res->median = bench_median_run(res->runs, repeat, cond_measure_of);
		for (unsigned rep = 0; rep < repeat; rep++) {
			lo = fmin(lo, cond_measure_of(&res->runs[rep]));
			hi = fmax(hi, cond_measure_of(&res->runs[rep]));
		}
		median = cond_measure_of(bench_result_sample(res));
		((struct cond_extra *)bench_result_sample(res)->extra)->spread =
			repeat > 1 ? (hi - lo) / median : NAN;
	}
	for (size_t l = 0; l < c->nconds; l++) {
		const double v = cond_measure_of(bench_result_sample(&row[l]));
		const double b = cond_measure_of(bench_result_sample(&row[c->base]));

		/* > 1: faster than the baseline (a shorter latency, a higher rate). */
		row[l].ratio = w->by_latency ? b / v : v / b;
	}
}

/* The lines over a workload's first table. */
static void print_header(const struct cond_suite *c, const struct cond_shape *k)
{
	printf("cond %s: ", cond_workloads[k->kind]->name);
	cond_workloads[k->kind]->header(k, c->names[c->base]);
	printf("duration=%gs", c->common->duration_s);
	if (c->common->repeat > 1)
		printf(" repeat=%u (median run shown; spread = (max - min) / median over "
		       "the runs)", c->common->repeat);
	printf(" cores=%u futex=%s\n\n", bench_cores(), hl_futex_interface());
}

/* The first configuration of workload kind; NULL: --scenario left it out. */
static const struct cond_shape *first_of(const struct cond_suite *c, enum cond_kind kind)
{
	for (size_t i = 0; i < c->nshapes; i++)
		if (c->shapes[i].kind == kind)
			return &c->shapes[i];
	return NULL;
}

/* The document up to its "results" array, which stays open.  The
 * workloads' parameters are their configurations'. */
static void json_config(const struct cond_suite *c, struct bench_json *j)
{
	const struct cond_shape *queue = first_of(c, COND_QUEUE);
	const struct cond_shape *broadcast = first_of(c, COND_BROADCAST);

	bench_json_object(j, NULL);
	bench_json_string(j, "bench", "cond");
	bench_json_object(j, "config");
	bench_json_array(j, "scenarios");
	for (int kind = 0; kind < COND_NKINDS; kind++)
		if (first_of(c, kind))
			bench_json_string(j, NULL, cond_workloads[kind]->name);
	bench_json_end(j);
	if (queue) {
		bench_json_array(j, "queue_threads");
		for (size_t i = 0; i < c->nshapes; i++)
			if (c->shapes[i].kind == COND_QUEUE) {
				bench_json_object(j, NULL);
				bench_json_uint(j, "producers", c->shapes[i].producers);
				bench_json_uint(j, "consumers", c->shapes[i].consumers);
				bench_json_end(j);
			}
		bench_json_end(j);
		bench_json_uint(j, "capacity", queue->capacity);
	}
	if (broadcast) {
		bench_json_array(j, "waiters");
		for (size_t i = 0; i < c->nshapes; i++)
			if (c->shapes[i].kind == COND_BROADCAST)
				bench_json_uint(j, NULL, c->shapes[i].waiters);
		bench_json_end(j);
		bench_json_uint(j, "cs", broadcast->cs);
	}
	bench_json_number(j, "duration_s", c->common->duration_s);
	bench_json_uint(j, "cores", bench_cores());
	bench_json_string_array(j, "locks", c->names, c->nconds);
	bench_json_object(j, "lock_roles");
	for (size_t l = 0; l < c->nconds; l++)
		bench_json_string(j, c->names[l], bench_registry_role(
			&bench_cond_registry, bench_registry_find(&bench_cond_registry,
								  c->names[l])));
	bench_json_end(j);
	bench_json_string(j, "ratio_baseline", c->names[c->base]);
	bench_json_uint(j, "repeat", c->common->repeat);
	bench_json_string(j, "table", "median");
	bench_json_environment(j);
	bench_json_end(j);
	/* "lock" is CONDVAR/WORKLOAD-CONFIG: with threads, it names a result. */
	bench_json_layout(j, (const char *const[]){ "lock", "threads" }, 2, "ops_per_sec",
			  false);
	bench_json_array(j, "results");
}

/* A result per condvar of configuration k. */
static void json_results(const struct cond_suite *c, const struct cond_shape *k,
			 const struct bench_result *row, struct bench_json *j)
{
	const struct cond_workload *w = cond_workloads[k->kind];
	char name[96], entry[64];

	w->entry(entry, sizeof entry, k);
	for (size_t l = 0; l < c->nconds; l++) {
		const struct bench_sample *s = bench_result_sample(&row[l]);

		snprintf(name, sizeof name, "%s/%s", c->names[l], entry);
		bench_json_object(j, NULL);
		bench_json_string(j, "lock", name);
		bench_json_string(j, "cond", c->names[l]);
		bench_json_string(j, "scenario", w->name);
		bench_json_uint(j, "threads", row[l].threads);
		if (w->json_shape)
			w->json_shape(j, k);
		cond_json_run(NULL, j, s);
		bench_json_number(j, "spread",
				  ((const struct cond_extra *)s->extra)->spread);
		bench_json_number(j, "ratio", row[l].ratio);
		bench_json_uint(j, "median_run", row[l].median);
		bench_json_runs(j, row[l].runs, c->common->repeat, cond_json_run, NULL);
		bench_json_end(j);
	}
}

/* Runs configuration k and reports it: the header if it is its workload's
 * first (prev: the configuration before, NULL for the first), its table,
 * its JSON results (json NULL: none). */
static void report_config(const struct cond_suite *c, const struct cond_shape *k,
			  const struct cond_shape *prev, struct bench_json *json)
{
	const struct cond_workload *w = cond_workloads[k->kind];
	struct bench_result *row = bench_xcalloc(c->nconds, sizeof *row);
	char title[64];
	size_t ncols = 0;

	while (w->columns[ncols])
		ncols++;
	run_config(c, k, row);
	bench_progress_clear();
	if (!prev)
		bench_busy_note(stdout);
	else
		putchar('\n');
	if (!prev || k->kind != prev->kind)
		print_header(c, k);
	w->title(title, sizeof title, k);
	bench_table_print(title, c->names, row, c->nconds, w->columns, ncols);
	fflush(stdout);
	if (json)
		json_results(c, k, row, json);
	for (size_t l = 0; l < c->nconds; l++) {
		for (unsigned rep = 0; rep < c->common->repeat; rep++)
			bench_sample_free(&row[l].runs[rep]);
		free(row[l].runs);
	}
	free(row);
}

int cond_suite_run(const struct cond_suite *c)
{
	const struct bench_common *common = c->common;
	/* Opened first, so that an unwritable path fails before the runs. */
	struct bench_json *json = common->json ? bench_json_open(common->json) : NULL;

	/* The JSON's config states the --busy processes: after they start. */
	bench_busy_start(common->busy);
	if (json)
		json_config(c, json);
	bench_progress_start((unsigned)(c->nshapes * c->nconds * common->repeat));
	for (size_t i = 0; i < c->nshapes; i++)
		report_config(c, &c->shapes[i], i ? &c->shapes[i - 1] : NULL, json);
	bench_busy_stop();
	bench_progress_clear();
	if (json) {
		bench_json_end(json);   /* results */
		bench_json_end(json);
		bench_json_close(json);
	}
	return 0;
}

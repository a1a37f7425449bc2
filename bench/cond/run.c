/* SPDX-License-Identifier: MIT */
/* hotlock-bench cond: one measurement of a condvar in a workload (a
 * bench_run of the workload's body, its stop and its checks), the figures
 * and columns every workload's table has, and a run's JSON members. */
#include <math.h>
#include <stdlib.h>

#include "cond.h"

uint64_t cond_fail_held(struct bench_thread *t, const struct cond_run *r,
			const char *what, int err, uint64_t ops)
{
	bench_thread_fail(t, what, err);
	(void)cond_unlock(r);
	return ops;
}

static uint64_t cond_body(struct bench_thread *t, void *arg)
{
	struct cond_run *r = arg;

	return cond_workloads[r->k.kind]->body(t, r);
}

/* The end of a run: every thread sees stopping, wherever it waits. */
static void cond_on_stop(void *arg)
{
	const struct cond_run *r = arg;

	bench_check(cond_lock(r), r->label);
	r->sh->stopping = true;
	for (int k = 0; k < 2; k++)
		bench_check(r->cv->broadcast(r->c[k]), r->label);
	bench_check(cond_unlock(r), r->label);
}

static void cond_on_hang(void *arg)
{
	const struct cond_run *r = arg;

	bench_print_lock_state(r->cv->mutex->name, r->cv->mutex->describe, r->m);
}

void cond_measure(struct cond_run *r, double duration_s, struct bench_sample *out)
{
	const struct cond_workload *w = cond_workloads[r->k.kind];
	const struct bench_lock *mx = r->cv->mutex;
	const unsigned threads = w->threads(&r->k);
	struct bench_run_spec spec = {
		.label = r->label, .threads = threads, .duration_s = duration_s,
		.body = cond_body, .arg = r, .futex_counted = r->cv->futex_counted,
		.on_hang = cond_on_hang, .on_stop = cond_on_stop,
	};
	struct cond_extra *x = bench_xcalloc(1, sizeof *x);

	/* All-zero bytes: what a static initialiser gives; init runs anyway. */
	r->m = bench_alloc_lines(mx->size);
	bench_check(mx->init(r->m), r->label);
	for (int k = 0; k < 2; k++) {
		r->c[k] = bench_alloc_lines(r->cv->size);
		bench_check(r->cv->init(r->c[k]), r->label);
	}
	/* The queue's ring: capacity is 0 in the other workloads. */
	r->sh = bench_alloc_lines(sizeof *r->sh + r->k.capacity * sizeof r->sh->ring[0]);
	r->per = bench_alloc_lines(threads * sizeof *r->per);

	bench_run(&spec, out);

	for (unsigned i = 0; i < threads; i++)
		if (r->per[i].broken)
			bench_fatal("%s: thread %u: %s", r->label, i, r->per[i].broken);
	x->k = r->k;
	x->futex_counted = r->cv->futex_counted;
	x->spread = NAN;
	w->collect(r, out, x);
	out->ops_per_sec = bench_per_wall(out, (double)out->total_ops);
	out->extra = x;

	for (int k = 0; k < 2; k++) {
		bench_check(r->cv->destroy(r->c[k]), r->label);
		free(r->c[k]);
	}
	bench_check(mx->destroy(r->m), r->label);
	free(r->m);
	free(r->sh);
	free(r->per);
}

double cond_measure_of(const struct bench_sample *s)
{
	const struct cond_extra *x = s->extra;

	return cond_workloads[x->k.kind]->by_latency ? x->lat_median_s : s->ops_per_sec;
}

void cond_json_run(const void *ctx, struct bench_json *j, const struct bench_sample *s)
{
	const struct cond_workload *w =
		cond_workloads[((const struct cond_extra *)s->extra)->k.kind];

	bench_json_sample(j, s);
	bench_json_string(j, "unit", w->unit);
	w->json_sample(j, s);
}

/* ---- figures and columns ------------------------------------------------- */

const struct cond_extra *cond_extra_of(const struct bench_result *r)
{
	return bench_result_sample(r)->extra;
}

double cond_per_op(const struct bench_result *r, double x)
{
	const struct bench_sample *s = bench_result_sample(r);

	return s->total_ops ? x / (double)s->total_ops : NAN;
}

double cond_rate_k(const struct bench_result *r)
{
	return bench_result_sample(r)->ops_per_sec / 1e3;
}

double cond_futex_per_op(const struct bench_result *r)
{
	const struct bench_sample *s = bench_result_sample(r);

	return s->futex_counted ? cond_per_op(r, (double)s->futex_calls) : NAN;
}

double cond_csw_per_op(const struct bench_result *r)
{
	return cond_per_op(r, (double)bench_result_sample(r)->csw);
}

/* Also CPU s per million ops. */
double cond_cpu_us_per_op(const struct bench_result *r)
{
	return cond_per_op(r, bench_result_sample(r)->cpu_s) * 1e6;
}

static double col_spread(const struct bench_result *r)
{
	return cond_extra_of(r)->spread * 100;
}

static double col_ratio(const struct bench_result *r)
{
	return r->ratio;
}

const struct bench_column cond_col_spread = { "spread%", NULL, 7, 1, col_spread,
	"(max - min) / median of the table's measure (items/s, median latency, round "
	"trips/s) over the --repeat runs; '-' for one run" };
const struct bench_column cond_col_ratio = { "ratio", NULL, 6, 2, col_ratio,
	"the measure against the baseline's (glibc when --locks lists it, else the "
	"first condvar), > 1 faster" };

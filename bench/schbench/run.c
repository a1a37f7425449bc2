/* SPDX-License-Identifier: MIT */
/* hotlock-bench-schbench: one run of one mode: the msg threads and workers
 * set up, run by the harness (bench_run) for -r seconds, and what they
 * measured gathered into a struct sb_result: the workers' histograms
 * merged into the latencies, the harness's CPU time, context switches and
 * other load, the process's futex syscalls, the wake-ups per worker. */
#include <stdlib.h>
#include <string.h>

#include <hotlock/futex.h>

#include "schbench.h"

/* Every swap point of the run, initialised (init) or destroyed. */
static void points(struct sb_run *r, unsigned nw, bool init)
{
	for (unsigned i = 0; i < r->o->m + nw; i++) {
		hl_swap_point_t *p = i < r->o->m ? &r->msgs[i].point :
				     &r->workers[i - r->o->m].point;

		if (init)
			bench_check(hl_swap_point_init(p), "hl_swap_point_init");
		else
			bench_check(hl_swap_point_destroy(p), "hl_swap_point_destroy");
	}
}

/* The figures of res from the run's sample and its workers. */
static void gather(const struct sb_run *r, const struct bench_sample *s,
		   struct sb_result *res)
{
	const struct sb_opts *o = r->o;
	unsigned nw = o->m * o->t;
	struct sb_hist *all = bench_xcalloc(1, sizeof *all);

	memset(res, 0, sizeof *res);
	res->wk_min = UINT64_MAX;
	for (unsigned i = 0; i < nw; i++) {
		uint64_t n = s->thread_ops[o->m + i];

		sb_hist_merge(all, &r->workers[i].hist);
		res->think_cpu_s += r->workers[i].think_cpu_s;
		res->wk_min = n < res->wk_min ? n : res->wk_min;
		res->wk_max = n > res->wk_max ? n : res->wk_max;
		res->wk_avg += (double)n / nw;
	}
	sb_hist_percentiles(all);
	res->lat = all->lat;
	res->wall_s = s->wall_s;
	res->cpu_s = s->cpu_s;
	res->csw = s->csw;
	res->other_cpus = s->other_cpus;
	free(all);
}

void sb_run_once(const struct sb_opts *o, enum sb_mode mode, struct sb_result *res)
{
	unsigned nw = o->m * o->t;
	struct sb_run r = { .mode = mode, .o = o };
	struct bench_sample s;
	hl_futex_stats_t f0, f1;
	char label[96];

	r.msgs = bench_alloc_lines(o->m * sizeof *r.msgs);
	r.workers = bench_alloc_lines(nw * sizeof *r.workers);
	atomic_init(&r.stopping, false);
	for (unsigned i = 0; i < o->m; i++) {
		r.msgs[i].workers = &r.workers[i * o->t];
		r.msgs[i].seed = i + 1;
	}
	for (unsigned i = 0; i < nw; i++)
		r.workers[i].msg = &r.msgs[i / o->t];
	points(&r, nw, true);
	snprintf(label, sizeof label, "schbench %s -m %u -t %u", sb_mode_names[mode], o->m,
		 o->t);
	/* The futex syscalls of the whole process: the main thread's wakes
	 * that end the run too. */
	hl_futex_stats_total(&f0);
	bench_run(&(struct bench_run_spec){
		.label = label, .threads = o->m + nw, .duration_s = o->runtime_s,
		.body = sb_body, .arg = &r, .futex_counted = true,
		.on_hang = sb_on_hang, .on_stop = sb_on_stop,
	}, &s);
	hl_futex_stats_total(&f1);

	gather(&r, &s, res);
	res->futex_calls = hl_futex_stats_calls(&f1) - hl_futex_stats_calls(&f0);
	points(&r, nw, false);
	free(r.msgs);
	free(r.workers);
	bench_sample_free(&s);
}

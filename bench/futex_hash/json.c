/* SPDX-License-Identifier: MIT */
/* hotlock-bench-futex-hash: the JSON.  "config" (the command line as run,
 * HOTLOCK_FUTEX_HASH, the environment), "skipped" (the sizes the kernel
 * refused, and why), "layout" (docs/benchmarks.md) and "results": an object per (size, count) with each
 * run's measured members (bench_json_sample) and the scenario's own. */
#include <math.h>
#include <stdlib.h>

#include "fh.h"

/* One run's members; ctx is the options. */
static void json_run(const void *ctx, struct bench_json *j, const struct bench_sample *s)
{
	const struct fh_opts *o = ctx;
	const struct fh_run *r = fh_run_of(s);
	const struct fh_parked *x = &r->parked;

	bench_json_sample(j, s);
	bench_json_number(j, "kernel_slots", r->slots_first);
	bench_json_number(j, "kernel_slots_after", r->slots_after);
	bench_json_number(j, "ops_per_sec_per_thread", fh_per_thread_avg(s));
	if (o->scenario != FH_PARKED)
		return;
	bench_json_uint(j, "parked", x->parked);
	bench_json_uint(j, "mutexes", x->mutexes);
	bench_json_uint(j, "handovers", x->handovers);
	bench_json_number(j, "handovers_per_sec", fh_handovers_per_s(s));
	bench_json_uint(j, "futex_calls_total", x->futex_calls);
	bench_json_number(j, "futex_calls_per_handover", x->handovers ?
			  (double)x->futex_calls / (double)x->handovers : NAN);
	bench_json_uint(j, "probes", x->probes);
	bench_json_number(j, "probe_mean_ns", x->probe_mean_ns);
	bench_json_number(j, "probe_p50_ns", x->probe_p50_ns);
	bench_json_number(j, "probe_p99_ns", x->probe_p99_ns);
	bench_json_number(j, "probe_max_ns", x->probe_max_ns);
	bench_json_number(j, "park_s", x->park_s);
	bench_json_number(j, "release_s", x->release_s);
}

static void json_config(const struct fh_opts *o, struct bench_json *j,
			const unsigned *counts, size_t ncounts)
{
	const char *env = getenv("HOTLOCK_FUTEX_HASH");

	bench_json_object(j, "config");
	bench_json_string(j, "scenario", o->scenario == FH_HASH ? "hash" : "parked");
	bench_json_array(j, "hash");
	for (size_t z = 0; z < o->nsizes; z++)
		bench_json_string(j, NULL, o->sizes[z].name);
	bench_json_end(j);
	bench_json_uint_array(j, fh_count_name(o), counts, ncounts);
	if (o->scenario == FH_HASH) {
		bench_json_uint(j, "futexes", o->futexes);
		bench_json_bool(j, "pinned", o->pin);
	} else {
		bench_json_uint(j, "hot", o->hot);
		bench_json_uint(j, "probe_every", FH_PROBE_EVERY);
		bench_json_uint(j, "waiters_per_mutex", FH_WAITERS_PER_MUTEX);
	}
	bench_json_number(j, "duration_s", o->duration_s);
	bench_json_uint(j, "repeat", o->repeat);
	if (env)
		bench_json_string(j, "HOTLOCK_FUTEX_HASH", env);
	else
		bench_json_null(j, "HOTLOCK_FUTEX_HASH");
	bench_json_environment(j);
	bench_json_end(j);
}

void fh_write_json(const struct fh_opts *o, const unsigned *counts, size_t ncounts,
		   const struct fh_cell *cells)
{
	struct bench_json *j = bench_json_open(o->json);
	const size_t nz = o->nsizes;

	bench_json_object(j, NULL);
	bench_json_string(j, "bench", FH_ME);
	json_config(o, j, counts, ncounts);
	bench_json_array(j, "skipped");
	for (size_t z = 0; z < nz; z++)
		if (o->sizes[z].skipped) {
			bench_json_object(j, NULL);
			bench_json_string(j, "hash", o->sizes[z].name);
			bench_json_string(j, "why", o->sizes[z].why);
			bench_json_end(j);
		}
	bench_json_end(j);
	bench_json_layout(j, (const char *const[]){ "hash", fh_count_name(o) }, 2,
			  o->scenario == FH_HASH ? "ops_per_sec" : "handovers_per_sec", false);
	bench_json_array(j, "results");
	for (size_t t = 0; t < ncounts; t++)
		for (size_t z = 0; z < nz; z++) {
			const struct fh_cell *c = &cells[t * nz + z];

			if (!c->n)
				continue;
			bench_json_object(j, NULL);
			bench_json_string(j, "hash", o->sizes[z].name);
			if (o->sizes[z].slots > 0)
				bench_json_uint(j, "slots", (uint64_t)o->sizes[z].slots);
			else
				bench_json_null(j, "slots");
			bench_json_uint(j, fh_count_name(o), counts[t]);
			bench_json_uint(j, "median_run", c->median);
			bench_json_runs(j, c->runs, c->n, json_run, o);
			bench_json_end(j);
		}
	bench_json_end(j);
	bench_json_end(j);
	bench_json_close(j);
}

/* SPDX-License-Identifier: MIT */
/* hotlock-bench cond, the broadcast workload: one thread broadcasts to N
 * waiters, which each run a short critical section, the last of them
 * replying on a second condvar (see scenario_cond.c); its bodies, its
 * checks, its latencies, its columns and its JSON. */
#include <math.h>
#include <stdlib.h>

#include "cond.h"

/* Latencies kept per run; later rounds are still run and counted. */
#define COND_MAX_LATENCIES ((size_t)1 << 22)

/* Which condvar of cond_run.c[] is which. */
enum { ROUND = 0, REPLY = 1 };

/* Keeps a round's latency (up to COND_MAX_LATENCIES). */
static void note_latency(struct cond_thread *me, double s)
{
	if (me->nlat == me->cap) {
		size_t cap = me->cap ? 2 * me->cap : 4096;
		double *lat;

		if (cap > COND_MAX_LATENCIES)
			return;
		lat = realloc(me->lat, cap * sizeof *lat);
		if (!lat)
			bench_fatal("out of memory");
		me->lat = lat;
		me->cap = cap;
	}
	me->lat[me->nlat++] = s;
}

/* Waits for the reply until the N waiters are through (or the run stops). */
static int await_waiters(const struct cond_run *r)
{
	int err = 0;

	while (r->sh->done < r->k.waiters && !r->sh->stopping && !err)
		err = cond_wait(r, REPLY);
	return err;
}

static uint64_t broadcaster(struct bench_thread *t, struct cond_run *r)
{
	struct cond_shared *sh = r->sh;
	struct cond_thread *me = &r->per[t->id];
	const uint64_t csw0 = bench_thread_csw();
	uint64_t rounds = 0;
	int err;

	if ((err = cond_lock(r))) {
		bench_thread_fail(t, "lock", err);
		return 0;
	}
	/* Round 0: every waiter is waiting. */
	if ((err = await_waiters(r)))
		return cond_fail_held(t, r, "wait (reply)", err, 0);
	while (!sh->stopping) {
		uint64_t fx0, fx1;
		double t0;

		sh->done = 0;
		sh->gen++;
		fx0 = bench_thread_futex_calls();
		t0 = bench_now();
		err = r->cv->broadcast(r->c[ROUND]);
		fx1 = bench_thread_futex_calls();
		if (err)
			return cond_fail_held(t, r, "broadcast", err, rounds);
		me->bc_futex += fx1 - fx0;
		if ((err = await_waiters(r)))
			return cond_fail_held(t, r, "wait (reply)", err, rounds);
		if (sh->done < r->k.waiters)
			break;          /* stopped in the middle of the round */
		note_latency(me, sh->last_end - t0);
		rounds++;
	}
	(void)cond_unlock(r);
	me->csw = bench_thread_csw() - csw0;
	return rounds;
}

static uint64_t broadcast_waiter(struct bench_thread *t, struct cond_run *r)
{
	struct cond_shared *sh = r->sh;
	uint64_t ops = 0, gen;
	int err;

	if ((err = cond_lock(r))) {
		bench_thread_fail(t, "lock", err);
		return 0;
	}
	gen = sh->gen;
	if (++sh->done == r->k.waiters && (err = cond_signal(r, REPLY)))
		return cond_fail_held(t, r, "signal (reply)", err, 0);
	for (;;) {
		while (sh->gen == gen && !sh->stopping)
			if ((err = cond_wait(r, ROUND)))
				return cond_fail_held(t, r, "wait (broadcast)", err, ops);
		if (sh->stopping)
			break;
		if (sh->gen != gen + 1) {
			r->per[t->id].broken = "a waiter missed a broadcast";
			/* relaxed: as bench_thread_fail; read after join. */
			atomic_store_explicit(t->stop, true, memory_order_relaxed);
			break;
		}
		gen = sh->gen;
		for (unsigned long i = 0; i < r->k.cs; i++)
			bench_pause();
		sh->sections++;
		ops++;
		if (++sh->done == r->k.waiters) {
			sh->last_end = bench_now();
			if ((err = cond_signal(r, REPLY)))
				return cond_fail_held(t, r, "signal (reply)", err, ops);
		}
	}
	(void)cond_unlock(r);
	return ops;
}

/* Thread 0 broadcasts, the others wait. */
static uint64_t broadcast_body(struct bench_thread *t, struct cond_run *r)
{
	return t->id == 0 ? broadcaster(t, r) : broadcast_waiter(t, r);
}

/* The counter equals the critical sections run (the waiters' checks of
 * the generations are theirs).  total_ops: the rounds. */
static void broadcast_collect(const struct cond_run *r, struct bench_sample *s,
			      struct cond_extra *x)
{
	struct cond_thread *b = &r->per[0];
	uint64_t sections = 0;

	for (unsigned i = 1; i < s->threads; i++)
		sections += s->thread_ops[i];
	if (sections != r->sh->sections)
		bench_fatal("%s: MUTUAL EXCLUSION BROKEN: the waiters ran %llu critical "
			    "sections, but the shared counter reads %llu", r->label,
			    (unsigned long long)sections, (unsigned long long)r->sh->sections);
	x->bc_futex = b->bc_futex;
	x->bc_csw = b->csw;
	x->lat_median_s = x->lat_p90_s = NAN;
	if (b->nlat) {
		x->lat_median_s = bench_lower_median(b->lat, b->nlat); /* sorts b->lat */
		x->lat_p90_s = b->lat[(b->nlat - 1) * 9 / 10];
	}
	free(b->lat);
	s->total_ops = s->thread_ops[0];
}

/* ---- columns ------------------------------------------------------------- */

static double col_lat(const struct bench_result *r)
{
	return cond_extra_of(r)->lat_median_s * 1e6;
}

static double col_p90(const struct bench_result *r)
{
	return cond_extra_of(r)->lat_p90_s * 1e6;
}

static double col_bc_futex(const struct bench_result *r)
{
	const struct cond_extra *x = cond_extra_of(r);

	return x->futex_counted ? cond_per_op(r, (double)x->bc_futex) : NAN;
}

static const struct bench_column col_futex = { "futex/rnd", NULL, 9, 2, cond_futex_per_op,
	"futex calls, context switches and CPU us per round, the reply to the "
	"broadcaster included" };
static const struct bench_column col_csw = { "csw/rnd", NULL, 8, 2, cond_csw_per_op, NULL };
static const struct bench_column col_cpu = { "cpu-us/rnd", NULL, 10, 1, cond_cpu_us_per_op,
	NULL };
static const struct bench_column col_lat_def = { "lat-us", NULL, 8, 1, col_lat,
	"median and 90th percentile latency over the run's rounds, us: from just "
	"before the broadcast call to the end of the last waiter's critical section" };
static const struct bench_column col_p90_def = { "p90-us", NULL, 8, 1, col_p90, NULL };
static const struct bench_column col_rounds = { "krnd/s", NULL, 8, 2, cond_rate_k,
	"rounds per second (thousands)" };
static const struct bench_column col_bc_futex_def = { "bc-futex", NULL, 8, 2, col_bc_futex,
	"futex calls inside the broadcaster's broadcast call, per round" };

static const struct bench_column *const broadcast_columns[] = {
	&col_lat_def, &col_p90_def, &cond_col_spread, &col_rounds, &col_bc_futex_def,
	&col_futex, &col_csw, &col_cpu, &cond_col_ratio, NULL,
};

/* ---- words and JSON ------------------------------------------------------ */

static unsigned broadcast_threads(const struct cond_shape *k)
{
	return k->waiters + 1;
}

static void broadcast_title(char *buf, size_t len, const struct cond_shape *k)
{
	snprintf(buf, len, "waiters=%u", k->waiters);
}

static void broadcast_entry(char *buf, size_t len, const struct cond_shape *k)
{
	snprintf(buf, len, "broadcast-%uw", k->waiters);
}

static void broadcast_header(const struct cond_shape *k, const char *base)
{
	printf("one thread broadcasts to N waiters, each then runs a critical "
	       "section of %lu pauses; latency = broadcast to the end of the last "
	       "waiter's section, median (p90) over the rounds of a run; ratio = "
	       "%s's latency over this one's\n", k->cs, base);
}

static void broadcast_json_shape(struct bench_json *j, const struct cond_shape *k)
{
	bench_json_uint(j, "waiters", k->waiters);
}

static void broadcast_json_sample(struct bench_json *j, const struct bench_sample *s)
{
	const struct cond_extra *x = s->extra;
	const double ops = (double)s->total_ops;

	bench_json_number(j, "latency_us_median", x->lat_median_s * 1e6);
	bench_json_number(j, "latency_us_p90", x->lat_p90_s * 1e6);
	if (x->futex_counted)
		bench_json_number(j, "broadcast_call_futex_calls_per_round",
				  ops ? (double)x->bc_futex / ops : NAN);
	else
		bench_json_null(j, "broadcast_call_futex_calls_per_round");
	bench_json_number(j, "broadcaster_csw_per_round", ops ? (double)x->bc_csw / ops : NAN);
}

const struct cond_workload cond_broadcast = {
	.name = "broadcast", .unit = "broadcast rounds",
	.by_latency = true, .result_format = "%.1f us median latency", .result_scale = 1e6,
	.threads = broadcast_threads, .body = broadcast_body, .collect = broadcast_collect,
	.title = broadcast_title, .entry = broadcast_entry, .header = broadcast_header,
	.json_shape = broadcast_json_shape, .json_sample = broadcast_json_sample,
	.columns = broadcast_columns,
};

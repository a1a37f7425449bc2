/* SPDX-License-Identifier: MIT */
/* hotlock-bench cond, the pingpong workload: two threads hand a turn back
 * and forth through one mutex and two condvars, condvar i thread i's (see
 * scenario_cond.c); its body, its check, its columns and its JSON. */
#include <math.h>

#include "cond.h"

static uint64_t pingpong_player(struct bench_thread *t, struct cond_run *r)
{
	struct cond_shared *sh = r->sh;
	const unsigned me = t->id, other = !t->id;
	uint64_t passes = 0;
	int err;

	if ((err = cond_lock(r))) {
		bench_thread_fail(t, "lock", err);
		return 0;
	}
	for (;;) {
		while (sh->turn != me && !sh->stopping)
			if ((err = cond_wait(r, (int)me)))
				return cond_fail_held(t, r, "wait", err, passes);
		if (sh->stopping)
			break;
		sh->turn = other;
		sh->passes++;
		passes++;
		if ((err = cond_signal(r, (int)other)))
			return cond_fail_held(t, r, "signal", err, passes);
	}
	(void)cond_unlock(r);
	return passes;
}

/* The turns alternate and the shared count is their sum.  total_ops: the
 * round trips. */
static void pingpong_collect(const struct cond_run *r, struct bench_sample *s,
			     struct cond_extra *x)
{
	if (s->thread_ops[0] + s->thread_ops[1] != r->sh->passes ||
	    s->thread_ops[0] - s->thread_ops[1] > 1)
		bench_fatal("%s: TURNS BROKEN: the threads passed the turn %llu and "
			    "%llu times, the shared count reads %llu", r->label,
			    (unsigned long long)s->thread_ops[0],
			    (unsigned long long)s->thread_ops[1],
			    (unsigned long long)r->sh->passes);
	x->signals = r->sh->passes;
	s->total_ops = r->sh->passes / 2;
}

/* Wall time per signal, ns; NAN without one. */
static double ns_per_signal(const struct bench_sample *s)
{
	const uint64_t n = ((const struct cond_extra *)s->extra)->signals;

	return n ? s->wall_s * 1e9 / (double)n : NAN;
}

static double col_ns_signal(const struct bench_result *r)
{
	return ns_per_signal(bench_result_sample(r));
}

static const struct bench_column col_rt = { "kRT/s", NULL, 8, 1, cond_rate_k,
	"round trips per second (thousands)" };
static const struct bench_column col_ns_signal_def = { "ns/signal", NULL, 9, 0,
	col_ns_signal, "wall time per signal (a round trip is two)" };

static const struct bench_column col_futex = { "futex/RT", NULL, 8, 2, cond_futex_per_op,
	"futex calls, context switches and CPU us per round trip" };
static const struct bench_column col_csw = { "csw/RT", NULL, 7, 2, cond_csw_per_op, NULL };
static const struct bench_column col_cpu = { "cpu-us/RT", NULL, 9, 2, cond_cpu_us_per_op, NULL };

static const struct bench_column *const pingpong_columns[] = {
	&col_rt, &col_ns_signal_def, &cond_col_spread, &col_futex, &col_csw, &col_cpu,
	&cond_col_ratio, NULL,
};

static unsigned pingpong_threads(const struct cond_shape *k)
{
	return 2;
}

static void pingpong_title(char *buf, size_t len, const struct cond_shape *k)
{
	snprintf(buf, len, "threads=2");
}

static void pingpong_entry(char *buf, size_t len, const struct cond_shape *k)
{
	snprintf(buf, len, "pingpong");
}

static void pingpong_header(const struct cond_shape *k, const char *base)
{
	printf("two threads pass a turn through one mutex and two condvars; "
	       "RT = round trip (two signals); ratio = round trips/s over %s's\n", base);
}

static void pingpong_json_sample(struct bench_json *j, const struct bench_sample *s)
{
	bench_json_uint(j, "signals", ((const struct cond_extra *)s->extra)->signals);
	bench_json_number(j, "ns_per_signal", ns_per_signal(s));
}

const struct cond_workload cond_pingpong = {
	.name = "pingpong", .unit = "round trips",
	.result_format = "%.1f k round trips/s", .result_scale = 1e-3,
	.threads = pingpong_threads, .body = pingpong_player, .collect = pingpong_collect,
	.title = pingpong_title, .entry = pingpong_entry, .header = pingpong_header,
	.json_sample = pingpong_json_sample,
	.columns = pingpong_columns,
};

/* SPDX-License-Identifier: MIT */
/* hotlock-bench cond, the queue workload: P producers and C consumers pass
 * items through a bounded ring under one mutex, with two condvars (see
 * scenario_cond.c); its body, its checks, its columns and its JSON. */
#include <math.h>

#include "cond.h"

/* Which condvar of cond_run.c[] is which. */
enum { NOT_EMPTY = 0, NOT_FULL = 1 };

/* A producer (the first r->k.producers threads) or a consumer. */
static uint64_t queue_worker(struct bench_thread *t, struct cond_run *r)
{
	struct cond_shared *sh = r->sh;
	const bool producer = t->id < r->k.producers;
	/* A producer waits while the ring is full and then makes it not
	 * empty; a consumer the other way round. */
	const uint64_t blocked = producer ? r->k.capacity : 0;
	const int wait_on = producer ? NOT_FULL : NOT_EMPTY;
	/* Items name their producer and number: a lost or doubled one changes
	 * the sums. */
	const uint64_t tag = (uint64_t)(t->id + 1) << 40;
	uint64_t ops = 0, sum = 0, item;
	int err;

	for (;;) {
		if ((err = cond_lock(r))) {
			bench_thread_fail(t, "lock", err);
			break;
		}
		while (sh->count == blocked && !sh->stopping)
			if ((err = cond_wait(r, wait_on)))
				return cond_fail_held(t, r, "wait", err, ops);
		if (sh->stopping) {
			(void)cond_unlock(r);
			break;
		}
		if (producer) {
			item = tag | ops;
			sh->ring[(sh->head + sh->count++) % r->k.capacity] = item;
		} else {
			item = sh->ring[sh->head];
			sh->head = (sh->head + 1) % r->k.capacity;
			sh->count--;
		}
		sum += item;
		ops++;
		if ((err = cond_signal(r, !wait_on)))
			return cond_fail_held(t, r, "signal", err, ops);
		if ((err = cond_unlock(r))) {
			bench_thread_fail(t, "unlock", err);
			break;
		}
	}
	r->per[t->id].sum = sum;
	return ops;
}

/* Every item produced was consumed or is still in the ring: the counts and
 * the sums agree.  total_ops: the items consumed. */
static void queue_collect(const struct cond_run *r, struct bench_sample *s,
			  struct cond_extra *x)
{
	uint64_t produced = 0, consumed = 0, in_ring = 0;

	for (int side = 0; side < 2; side++) {
		x->side_min[side] = UINT64_MAX;
		x->side_max[side] = 0;
	}
	for (unsigned i = 0; i < s->threads; i++) {
		const int side = i >= r->k.producers;
		const uint64_t ops = s->thread_ops[i];

		x->side_sum[side] += ops;
		x->side_min[side] = ops < x->side_min[side] ? ops : x->side_min[side];
		x->side_max[side] = ops > x->side_max[side] ? ops : x->side_max[side];
		if (side)
			consumed += r->per[i].sum;
		else
			produced += r->per[i].sum;
	}
	for (uint64_t k = 0; k < r->sh->count; k++)
		in_ring += r->sh->ring[(r->sh->head + k) % r->k.capacity];
	x->left = r->sh->count;
	if (x->side_sum[0] != x->side_sum[1] + x->left || produced != consumed + in_ring)
		bench_fatal("%s: ITEMS LOST OR DOUBLED: %llu produced, %llu consumed, %llu "
			    "left in the ring (item sums %llu, %llu, %llu)", r->label,
			    (unsigned long long)x->side_sum[0], (unsigned long long)x->side_sum[1],
			    (unsigned long long)x->left, (unsigned long long)produced,
			    (unsigned long long)consumed, (unsigned long long)in_ring);
	s->total_ops = x->side_sum[1];
}

/* ---- columns ------------------------------------------------------------- */

/* The per-thread rates, items/s, of the producers (side 0) or consumers
 * (1), and their min over max. */
enum side_figure { SIDE_MIN, SIDE_AVG, SIDE_MAX, SIDE_FAIR };

static double side_figure(const struct bench_sample *s, int side, enum side_figure f)
{
	const struct cond_extra *x = s->extra;
	const unsigned n = side ? x->k.consumers : x->k.producers;

	switch (f) {
	case SIDE_MIN: return bench_per_wall(s, (double)x->side_min[side]);
	case SIDE_MAX: return bench_per_wall(s, (double)x->side_max[side]);
	case SIDE_AVG: return bench_per_wall(s, (double)x->side_sum[side] / n);
	default:
		return x->side_max[side] ? (double)x->side_min[side] / (double)x->side_max[side] : NAN;
	}
}

/* A table cell: the rates in kitems/s. */
static double side_cell(const struct bench_result *r, int side, enum side_figure f)
{
	const double v = side_figure(bench_result_sample(r), side, f);

	return f == SIDE_FAIR ? v : v / 1e3;
}

static double col_rate_m(const struct bench_result *r)
{
	return bench_result_sample(r)->ops_per_sec / 1e6;
}

static double col_p_min(const struct bench_result *r) { return side_cell(r, 0, SIDE_MIN); }
static double col_p_avg(const struct bench_result *r) { return side_cell(r, 0, SIDE_AVG); }
static double col_p_max(const struct bench_result *r) { return side_cell(r, 0, SIDE_MAX); }
static double col_p_fair(const struct bench_result *r) { return side_cell(r, 0, SIDE_FAIR); }
static double col_c_min(const struct bench_result *r) { return side_cell(r, 1, SIDE_MIN); }
static double col_c_avg(const struct bench_result *r) { return side_cell(r, 1, SIDE_AVG); }
static double col_c_max(const struct bench_result *r) { return side_cell(r, 1, SIDE_MAX); }
static double col_c_fair(const struct bench_result *r) { return side_cell(r, 1, SIDE_FAIR); }

static const struct bench_column col_items = { "Mitem/s", NULL, 8, 3, col_rate_m,
	"items consumed per second of wall time" };
static const struct bench_column col_p[4] = {
	{ "p-min", NULL, 7, 1, col_p_min, "per producer thread, kitems/s: the slowest, "
	  "the average, the fastest" },
	{ "p-avg", NULL, 7, 1, col_p_avg, NULL }, { "p-max", NULL, 7, 1, col_p_max, NULL },
	{ "p-fair", NULL, 6, 2, col_p_fair, "p-min / p-max (1 = fair)" },
};
static const struct bench_column col_c[4] = {
	{ "c-min", NULL, 7, 1, col_c_min, "the same for the consumer threads" },
	{ "c-avg", NULL, 7, 1, col_c_avg, NULL }, { "c-max", NULL, 7, 1, col_c_max, NULL },
	{ "c-fair", NULL, 6, 2, col_c_fair, "c-min / c-max" },
};

static const struct bench_column col_futex = { "futex/item", NULL, 10, 3, cond_futex_per_op,
	"futex calls per item consumed" };
static const struct bench_column col_csw = { "csw/item", NULL, 8, 3, cond_csw_per_op,
	"context switches per item consumed" };
static const struct bench_column col_cpu = { "cpu-s/Mitem", NULL, 11, 3, cond_cpu_us_per_op,
	"CPU seconds per million items" };

static const struct bench_column *const queue_columns[] = {
	&col_items, &cond_col_spread, &col_p[0], &col_p[1], &col_p[2], &col_p[3],
	&col_c[0], &col_c[1], &col_c[2], &col_c[3], &col_futex, &col_csw, &col_cpu,
	&cond_col_ratio, NULL,
};

/* ---- words and JSON ------------------------------------------------------ */

static unsigned queue_threads(const struct cond_shape *k)
{
	return k->producers + k->consumers;
}

static void queue_title(char *buf, size_t len, const struct cond_shape *k)
{
	snprintf(buf, len, "producers=%u consumers=%u", k->producers, k->consumers);
}

static void queue_entry(char *buf, size_t len, const struct cond_shape *k)
{
	snprintf(buf, len, "queue-%up%uc", k->producers, k->consumers);
}

static void queue_header(const struct cond_shape *k, const char *base)
{
	printf("producers and consumers through a ring of %lu items, one mutex, "
	       "condvars not_empty and not_full; p- and c- columns: per producer and "
	       "per consumer thread, kitems/s; ratio = items/s over %s's\n",
	       k->capacity, base);
}

static void queue_json_shape(struct bench_json *j, const struct cond_shape *k)
{
	bench_json_uint(j, "producers", k->producers);
	bench_json_uint(j, "consumers", k->consumers);
}

static void queue_json_sample(struct bench_json *j, const struct bench_sample *s)
{
	static const char *const side[2] = { "producer", "consumer" };
	static const char *const figure[] = {
		[SIDE_MIN] = "items_per_sec_min", [SIDE_AVG] = "items_per_sec_avg",
		[SIDE_MAX] = "items_per_sec_max", [SIDE_FAIR] = "min_over_max",
	};
	const struct cond_extra *x = s->extra;
	char key[64];

	for (int k = 0; k < 2; k++) {
		snprintf(key, sizeof key, "%s_items", side[k]);
		bench_json_uint(j, key, x->side_sum[k]);
		for (int f = SIDE_MIN; f <= SIDE_FAIR; f++) {
			snprintf(key, sizeof key, "%s_%s", side[k], figure[f]);
			bench_json_number(j, key, side_figure(s, k, f));
		}
	}
	bench_json_uint(j, "items_left", x->left);
}

const struct cond_workload cond_queue = {
	.name = "queue", .unit = "items consumed",
	.result_format = "%.3f Mitems/s", .result_scale = 1e-6,
	.threads = queue_threads, .body = queue_worker, .collect = queue_collect,
	.title = queue_title, .entry = queue_entry, .header = queue_header,
	.json_shape = queue_json_shape, .json_sample = queue_json_sample,
	.columns = queue_columns,
};

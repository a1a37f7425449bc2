/* SPDX-License-Identifier: MIT */
/* hotlock-bench: what the rwlock and rwsem scenarios show of a measurement
 * (rwbench.c): their columns, the workload options' parsing and help, and
 * the JSON members of a run. */
#include "rwbench.h"

#include <math.h>
#include <string.h>

/* ---- columns ------------------------------------------------------------- */

static const struct rw_extra *extra_of(const struct bench_result *r)
{
	return bench_result_sample(r)->extra;
}

static double side_mops(const struct bench_result *r, enum rw_side side)
{
	return bench_per_wall(bench_result_sample(r), (double)extra_of(r)->ops[side]) / 1e6;
}

static double col_rd_mops(const struct bench_result *r) { return side_mops(r, RW_READ); }
static double col_wr_mops(const struct bench_result *r) { return side_mops(r, RW_WRITE); }

const struct bench_column rw_col_rd_mops = { "rd-Mops", "read ops, Mops/s", 8, 3, col_rd_mops,
	"the read and the write ops among Mops/s" };
const struct bench_column rw_col_wr_mops = { "wr-Mops", "write ops, Mops/s", 8, 3, col_wr_mops, NULL };

static double futex_per_kop(const struct bench_result *r, enum rw_op op)
{
	const struct rw_extra *x = extra_of(r);
	uint64_t ops = x->ops[RW_READ] + x->ops[RW_WRITE];

	return x->futex_counted && ops ? (double)x->futex[op] * 1e3 / (double)ops : NAN;
}

static double col_fx_wl(const struct bench_result *r) { return futex_per_kop(r, RW_WRLOCK); }
static double col_fx_wu(const struct bench_result *r) { return futex_per_kop(r, RW_WRUNLOCK); }
static double col_fx_rl(const struct bench_result *r) { return futex_per_kop(r, RW_RDLOCK); }
static double col_fx_ru(const struct bench_result *r) { return futex_per_kop(r, RW_RDUNLOCK); }

const struct bench_column rw_col_futex[RW_NOPS] = {
	[RW_WRLOCK] = { "fx-wl", "write lock futex calls per 1000 ops", 6, 2, col_fx_wl,
		"futex calls per 1000 ops (of either kind) by operation: write lock, "
		"write unlock, read lock, read unlock; the four add up to all futex calls "
		"per 1000 ops (see below)" },
	[RW_WRUNLOCK] = { "fx-wu", "write unlock futex calls per 1000 ops", 6, 2, col_fx_wu, NULL },
	[RW_RDLOCK] = { "fx-rl", "read lock futex calls per 1000 ops", 6, 2, col_fx_rl, NULL },
	[RW_RDUNLOCK] = { "fx-ru", "read unlock futex calls per 1000 ops", 6, 2, col_fx_ru, NULL },
};

/* Which per-thread figure of a side. */
enum side_figure { SIDE_AVG, SIDE_MIN, SIDE_MAX };

/* Ops/s per thread of a split run's side; NAN when the side has no thread. */
static double side_rate(const struct bench_sample *s, enum rw_side side, enum side_figure f)
{
	const struct rw_extra *x = s->extra;
	const unsigned n = side == RW_READ ? x->w.readers : x->w.writers;
	double ops = f == SIDE_MIN ? (double)x->side_min[side] :
		f == SIDE_MAX ? (double)x->side_max[side] : (double)x->ops[side] / n;

	return n ? bench_per_wall(s, ops) : NAN;
}

static double side_kops(const struct bench_result *r, enum rw_side side, enum side_figure f)
{
	return side_rate(bench_result_sample(r), side, f) / 1e3;
}

static double col_rd_avg(const struct bench_result *r) { return side_kops(r, RW_READ, SIDE_AVG); }
static double col_rd_min(const struct bench_result *r) { return side_kops(r, RW_READ, SIDE_MIN); }
static double col_rd_max(const struct bench_result *r) { return side_kops(r, RW_READ, SIDE_MAX); }
static double col_wr_avg(const struct bench_result *r) { return side_kops(r, RW_WRITE, SIDE_AVG); }
static double col_wr_min(const struct bench_result *r) { return side_kops(r, RW_WRITE, SIDE_MIN); }
static double col_wr_max(const struct bench_result *r) { return side_kops(r, RW_WRITE, SIDE_MAX); }

const struct bench_column rw_col_side[RW_NSIDES][3] = {
	[RW_READ] = {
		{ "rd-avg", "reader threads' average rate, kops/s", 9, 2, col_rd_avg,
		  "--split: the reader threads' average, slowest and fastest rate, kops/s "
		  "per thread (the seed's reader rate is the average)" },
		{ "rd-min", "slowest reader thread, kops/s", 9, 2, col_rd_min, NULL },
		{ "rd-max", "fastest reader thread, kops/s", 9, 2, col_rd_max, NULL },
	},
	[RW_WRITE] = {
		{ "wr-avg", "writer threads' average rate, kops/s", 9, 2, col_wr_avg,
		  "--split: the same for the writer threads" },
		{ "wr-min", "slowest writer thread, kops/s", 9, 2, col_wr_min, NULL },
		{ "wr-max", "fastest writer thread, kops/s", 9, 2, col_wr_max, NULL },
	},
};

static double col_wr_rd(const struct bench_result *r)
{
	double rd = side_kops(r, RW_READ, SIDE_AVG), wr = side_kops(r, RW_WRITE, SIDE_AVG);

	return rd > 0 ? wr / rd : NAN;
}

const struct bench_column rw_col_wr_rd = {
	"wr/rd", "writer over reader per-thread rate", 8, 3, col_wr_rd,
	"--split: wr-avg over rd-avg, 0 where the writers starve",
};

static double col_thr_avg_k(const struct bench_result *r)
{
	const struct bench_sample *s = bench_result_sample(r);

	return bench_per_wall(s, (double)s->total_ops / s->threads) / 1e3;
}

static double col_total_k(const struct bench_result *r)
{
	return bench_result_sample(r)->ops_per_sec / 1e3;
}

const struct bench_column rw_col_thr_avg_k = {
	"thr-avg", "per-thread average rate, kops/s, by thread count", 10, 1, col_thr_avg_k,
	"the per-thread average by thread count, kops/s (the last table, with more "
	"than one thread count)",
};
const struct bench_column rw_col_total_k = {
	"kops/s", "total locking rate, kops/s", 10, 1, col_total_k,
	"all threads' lock/unlock pairs per second, kops/s",
};

/* ---- options, help and JSON ----------------------------------------------- */

void rw_parse_load(void *at, const char *scenario, const char *v)
{
	struct rw_workload *w = at;

	if (w->load_given)
		bench_usage_error(scenario, "--load: the critical section's length was "
				  "already given (--load and --cs are one option)");
	w->load = bench_parse_ulong(scenario, "--load", v, 0, 1000000000UL);
	w->load_given = true;
}

void rw_help_common(FILE *f)
{
	fprintf(f,
		"Exclusion is checked in every critical section (a version word a writer\n"
		"makes odd while inside; readers check it is even and unchanged) and after\n"
		"each run (no lost update of the writers' counters): exit 1 if broken.\n"
		"Futex calls by operation (fx-wl write lock, fx-wu write unlock, fx-rl read\n"
		"lock, fx-ru read unlock; per 1000 ops of either kind, so the four add up\n"
		"to all futex calls per 1000 ops) are counted by reading the thread's\n"
		"hotlock futex counters after each lock and unlock call.  Every lock pays\n"
		"those reads, so that ratios stay fair, but only the calls of locks that\n"
		"go through hotlock's futex layer are seen: '-' (JSON null) for glibc.\n"
		"JSON: each run has, besides the mutex scenario's members, reader_ops,\n"
		"writer_ops, reader_ops_per_sec, writer_ops_per_sec, futex_calls_by_op\n"
		"and futex_calls_per_kop_by_op ({write_lock, write_unlock, read_lock,\n"
		"read_unlock}), thread_reader_ops and thread_writer_ops; split runs also\n"
		"reader_/writer_thread_ops_per_sec_min/avg/max.\n");
}

void rw_json_workload(struct bench_json *j, const struct rw_workload *w)
{
	if (!w->mode) {
		if (w->split) {
			bench_json_null(j, "readers_pct");
			bench_json_object(j, "split");
			bench_json_uint(j, "readers", w->readers);
			bench_json_uint(j, "writers", w->writers);
			bench_json_end(j);
		} else {
			bench_json_uint(j, "readers_pct", w->readers_pct);
			bench_json_null(j, "split");
		}
	}
	bench_json_uint(j, "load", w->load);
	bench_json_uint(j, "ncs", w->ncs);
}

static void json_by_op(struct bench_json *j, const char *key, const struct rw_extra *x,
		       double scale)
{
	static const char *const names[RW_NOPS] = {
		[RW_WRLOCK] = "write_lock", [RW_WRUNLOCK] = "write_unlock",
		[RW_RDLOCK] = "read_lock", [RW_RDUNLOCK] = "read_unlock",
	};

	if (!x->futex_counted) {
		bench_json_null(j, key);
		return;
	}
	bench_json_object(j, key);
	for (int op = 0; op < RW_NOPS; op++)
		bench_json_number(j, names[op], (double)x->futex[op] * scale);
	bench_json_end(j);
}

static void json_side_threads(struct bench_json *j, const char *key,
			      const struct rw_extra *x, enum rw_side side)
{
	bench_json_array(j, key);
	for (unsigned i = 0; i < x->threads; i++)
		bench_json_uint(j, NULL, x->thread_ops[i][side]);
	bench_json_end(j);
}

void rw_json_sample(void *ctx, struct bench_json *j, const struct bench_sample *s)
{
	static const char *const side_key[RW_NSIDES][3] = {
		[RW_READ] = { "reader_thread_ops_per_sec_avg", "reader_thread_ops_per_sec_min",
			      "reader_thread_ops_per_sec_max" },
		[RW_WRITE] = { "writer_thread_ops_per_sec_avg", "writer_thread_ops_per_sec_min",
			       "writer_thread_ops_per_sec_max" },
	};
	const struct rw_extra *x = s->extra;
	const uint64_t ops = x->ops[RW_READ] + x->ops[RW_WRITE];

	if (x->w.mode) {
		bench_json_string(j, "rwlock", x->lock);
		bench_json_string(j, "mode", x->w.mode);
		bench_json_uint(j, "readers", x->w.readers);
		bench_json_uint(j, "writers", x->w.writers);
	}
	bench_json_uint(j, "reader_ops", x->ops[RW_READ]);
	bench_json_uint(j, "writer_ops", x->ops[RW_WRITE]);
	bench_json_number(j, "reader_ops_per_sec", bench_per_wall(s, (double)x->ops[RW_READ]));
	bench_json_number(j, "writer_ops_per_sec", bench_per_wall(s, (double)x->ops[RW_WRITE]));
	json_by_op(j, "futex_calls_by_op", x, 1);
	json_by_op(j, "futex_calls_per_kop_by_op", x, ops ? 1e3 / (double)ops : NAN);
	json_side_threads(j, "thread_reader_ops", x, RW_READ);
	json_side_threads(j, "thread_writer_ops", x, RW_WRITE);
	if (!x->w.split)
		return;
	for (int side = 0; side < RW_NSIDES; side++)
		for (int f = 0; f < 3; f++)
			bench_json_number(j, side_key[side][f],
					  side_rate(s, (enum rw_side)side, (enum side_figure)f));
}

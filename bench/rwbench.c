/* SPDX-License-Identifier: MIT */
/* hotlock-bench: the measurement the rwlock and rwsem scenarios share (see
 * rwbench.h): body, exclusion checks, futex calls by operation, columns and
 * JSON. */
#include "rwbench.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* The data every critical section touches: two cache lines. */
struct rw_shared {
	/* Line A.  Odd while a writer is inside. */
	_Alignas(BENCH_CACHELINE) _Atomic uint64_t version;
	volatile uint64_t a;
	/* Line B. */
	_Alignas(BENCH_CACHELINE) volatile uint64_t b;
};

/* One thread's counts, written once when its body ends. */
struct rw_thread {
	uint64_t ops[RW_NSIDES];
	uint64_t futex[RW_NOPS];
	const char *broken;     /* the exclusion failure it saw, or NULL */
} __attribute__((aligned(BENCH_CACHELINE)));

/* One measurement in progress. */
struct rw_run {
	const struct bench_rwlock *lock;
	const struct rw_workload *w;
	void *obj;              /* the lock object, own cache line(s) */
	struct rw_shared *shared;
	struct rw_thread *per;  /* [threads] */
	char label[96];
};

/* A thread's running counts, in registers while it loops. */
struct rw_count {
	bool by_op;             /* count futex calls by operation */
	uint64_t last;          /* the thread's futex calls at the last note */
	uint64_t ops[RW_NSIDES];
	uint64_t futex[RW_NOPS];
};

/* Charges the futex calls made since the last note to op. */
static inline void futex_note(struct rw_count *c, enum rw_op op)
{
	uint64_t now;

	if (!c->by_op)
		return;
	now = bench_thread_futex_calls();
	c->futex[op] += now - c->last;
	c->last = now;
}

/* A reader's critical section; returns what was wrong, or NULL.  relaxed
 * loads throughout: the lock's acquire ordered the last writer's stores
 * before them, if the lock works; if not, the checks say so. */
static const char *read_cs(struct rw_shared *sh, unsigned long load)
{
	uint64_t v = atomic_load_explicit(&sh->version, memory_order_relaxed);
	bool torn = false;

	for (unsigned long i = 0; i < load; i++) {
		bench_pause();
		torn |= sh->a != sh->b;
	}
	if (v & 1)
		return "a reader entered while a writer was inside";
	if (torn || atomic_load_explicit(&sh->version, memory_order_relaxed) != v)
		return "a writer entered while a reader was inside";
	return NULL;
}

/* A writer's critical section; returns what was wrong, or NULL.  relaxed,
 * as in read_cs: the lock orders these for the next holder. */
static const char *write_cs(struct rw_shared *sh, unsigned long load)
{
	uint64_t v = atomic_load_explicit(&sh->version, memory_order_relaxed);

	if (v & 1)
		return "a writer entered while another writer was inside";
	atomic_store_explicit(&sh->version, v + 1, memory_order_relaxed);
	for (unsigned long i = 0; i < load; i++) {
		bench_pause();
		sh->a += 1;
		sh->b += 1;
	}
	if (atomic_load_explicit(&sh->version, memory_order_relaxed) != v + 1)
		return "a writer entered while another writer was inside";
	atomic_store_explicit(&sh->version, v + 2, memory_order_relaxed);
	return NULL;
}

/* One op on one side; false when the run must end (a lock error, or broken
 * exclusion, recorded in *broken). */
static inline bool rw_op(struct bench_thread *t, const struct rw_run *r,
			 struct rw_count *c, enum rw_side side, const char **broken)
{
	const struct bench_rwlock *lk = r->lock;
	const bool rd = side == RW_READ;
	int err;

	if ((err = rd ? lk->rdlock(r->obj) : lk->wrlock(r->obj))) {
		bench_thread_fail(t, rd ? "rdlock" : "wrlock", err);
		return false;
	}
	futex_note(c, rd ? RW_RDLOCK : RW_WRLOCK);
	*broken = rd ? read_cs(r->shared, r->w->load) : write_cs(r->shared, r->w->load);
	err = rd ? lk->rdunlock(r->obj) : lk->wrunlock(r->obj);
	futex_note(c, rd ? RW_RDUNLOCK : RW_WRUNLOCK);
	if (err) {
		bench_thread_fail(t, rd ? "rdunlock" : "wrunlock", err);
		return false;
	}
	if (*broken) {
		/* relaxed: as bench_thread_fail; the report is read after join. */
		atomic_store_explicit(t->stop, true, memory_order_relaxed);
		return false;
	}
	c->ops[side]++;
	return true;
}

static uint64_t rw_body(struct bench_thread *t, void *arg)
{
	const struct rw_run *r = arg;
	const struct rw_workload *w = r->w;
	struct rw_thread *me = &r->per[t->id];
	struct rw_count c = { .by_op = !w->no_futex_by_op };
	/* Seeded by the thread's index (never 0), as in the mutex scenario. */
	uint64_t rng = 0x9E3779B97F4A7C15ull * ((uint64_t)t->id + 1);
	const enum rw_side fixed = t->id < w->readers ? RW_READ : RW_WRITE;
	volatile uint64_t priv = 0;
	const char *broken = NULL;

	if (c.by_op)
		c.last = bench_thread_futex_calls();
	while (!bench_should_stop(t)) {
		/* The top 32 bits of a draw, scaled to [0, 100). */
		enum rw_side side = w->split ? fixed :
			((bench_random(&rng) >> 32) * 100 >> 32) < w->readers_pct ?
			RW_READ : RW_WRITE;

		if (!rw_op(t, r, &c, side, &broken))
			break;
		for (unsigned long i = 0; i < w->ncs; i++) {
			bench_pause();
			priv += 1;
		}
	}
	(void)priv;
	memcpy(me->ops, c.ops, sizeof me->ops);
	memcpy(me->futex, c.futex, sizeof me->futex);
	me->broken = broken;
	return c.ops[RW_READ] + c.ops[RW_WRITE];
}

static void rw_on_hang(void *arg)
{
	const struct rw_run *r = arg;

	bench_print_lock_state(r->lock->name, r->lock->describe, r->obj);
}

/* The run's rw_extra, from the threads' counts. */
static struct rw_extra *rw_collect(const struct rw_run *r, unsigned threads)
{
	struct rw_extra *x = bench_xcalloc(1, sizeof *x + threads * sizeof x->thread_ops[0]);

	x->lock = r->lock->name;
	x->w = *r->w;
	x->futex_counted = r->lock->futex_counted && !r->w->no_futex_by_op;
	x->threads = threads;
	for (int s = 0; s < RW_NSIDES; s++)
		x->side_min[s] = UINT64_MAX;
	for (unsigned i = 0; i < threads; i++) {
		const struct rw_thread *p = &r->per[i];
		const int side = i < r->w->readers ? RW_READ : RW_WRITE;

		for (int s = 0; s < RW_NSIDES; s++) {
			x->ops[s] += p->ops[s];
			x->thread_ops[i][s] = p->ops[s];
		}
		for (int op = 0; op < RW_NOPS; op++)
			x->futex[op] += p->futex[op];
		if (!r->w->split)
			continue;
		if (x->side_min[side] > p->ops[side])
			x->side_min[side] = p->ops[side];
		if (x->side_max[side] < p->ops[side])
			x->side_max[side] = p->ops[side];
	}
	for (int s = 0; s < RW_NSIDES; s++)
		if (x->side_min[s] == UINT64_MAX)
			x->side_min[s] = 0;
	return x;
}

void rw_measure(const struct bench_rwlock *lk, const struct rw_workload *w,
		unsigned threads, double duration_s, struct bench_sample *out)
{
	struct rw_run r = { .lock = lk, .w = w };
	struct bench_run_spec spec = {
		.label = r.label,
		.threads = threads,
		.duration_s = duration_s,
		.body = rw_body,
		.arg = &r,
		.futex_counted = lk->futex_counted,
		.on_hang = rw_on_hang,
		.fifo_priority = w->fifo_priority,
	};
	uint64_t expect;

	if (w->mode)
		snprintf(r.label, sizeof r.label, "%s %s threads=%u", w->mode, lk->name, threads);
	else
		snprintf(r.label, sizeof r.label, "rwlock %s threads=%u", lk->name, threads);
	/* All-zero bytes: what a static initialiser gives; init runs anyway. */
	r.obj = bench_alloc_lines(lk->size);
	r.shared = bench_alloc_lines(sizeof *r.shared);
	r.per = bench_alloc_lines(threads * sizeof *r.per);
	bench_check(lk->init(r.obj), r.label);

	bench_run(&spec, out);

	for (unsigned i = 0; i < threads; i++)
		if (r.per[i].broken)
			bench_fatal("%s: EXCLUSION BROKEN: thread %u (%s): %s", r.label, i,
				    !w->split ? "reads and writes" :
				    i < w->readers ? "a reader" : "a writer", r.per[i].broken);
	out->extra = rw_collect(&r, threads);
	expect = ((struct rw_extra *)out->extra)->ops[RW_WRITE] * w->load;
	if (r.shared->a != expect || r.shared->b != expect)
		bench_fatal("%s: EXCLUSION BROKEN: %llu write ops x load %lu = %llu, but "
			    "the shared counters read %llu and %llu (lost updates: two "
			    "writers inside at once)", r.label,
			    (unsigned long long)((struct rw_extra *)out->extra)->ops[RW_WRITE],
			    w->load, (unsigned long long)expect,
			    (unsigned long long)r.shared->a, (unsigned long long)r.shared->b);
	bench_check(lk->destroy(r.obj), r.label);
	free(r.obj);
	free(r.shared);
	free(r.per);
}

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

/* SPDX-License-Identifier: MIT */
/* hotlock-bench: the measurement the rwlock and rwsem scenarios share (see
 * rwbench.h): body, exclusion checks, futex calls by operation; what is
 * shown of it (columns, options, JSON) is rwbench_report.c's. */
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

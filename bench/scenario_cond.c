/* SPDX-License-Identifier: MIT */
/* hotlock-bench cond: condition variables compared, each with the mutex it
 * comes with (conds.h): glibc's, hotlock's (wait morphing) and futex-cv (the
 * classic wake-all futex condvar).  Three workloads:
 *
 *   queue      P producer and C consumer threads pass items through a
 *              bounded ring (--capacity) under one mutex, with two condvars:
 *              a producer waits on not_full while the ring is full, pushes,
 *              signals not_empty; a consumer waits on not_empty while it is
 *              empty, pops, signals not_full; each signals with the mutex
 *              held and unlocks after every item.  Checked after the run:
 *              every item produced was consumed or is still in the ring
 *              (counts and sums).
 *   broadcast  one thread broadcasts to N waiters, which each take the
 *              mutex, run a short critical section (--cs pauses and an
 *              increment of a shared counter) and go back to waiting; the
 *              last of them signals the broadcaster on a second condvar.
 *              A round: under the mutex the broadcaster bumps a generation,
 *              reads the clock, broadcasts and waits for the N; the last
 *              waiter reads the clock at the end of its critical section.
 *              The latency of a round is the difference; a run reports the
 *              median and the 90th percentile over its rounds.  Checked:
 *              every waiter sees every generation once, and the counter
 *              equals the critical sections run.
 *   pingpong   two threads hand a turn back and forth through one mutex and
 *              two condvars: each waits on its own condvar until the turn is
 *              its, passes it and signals the other's, with the mutex held
 *              throughout but for its waits.  A round trip is two signals.
 *
 * Every run is one bench_run (harness.h): the threads start together, the
 * harness counts each one's futex calls, voluntary context switches and CPU
 * time; at the end of --duration its on_stop takes the mutex, sets a
 * stopping flag and broadcasts every condvar, so that no thread is left
 * asleep.  The runs interleave across condvars within each repeat, as the
 * suites' do; the table shows the run with the median of the workload's
 * measure (items/s, median latency, round trips/s) and its spread over the
 * repeats. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <hotlock/futex.h>

#include "conds.h"
#include "harness.h"

enum cond_kind { COND_QUEUE, COND_BROADCAST, COND_PINGPONG, COND_NKINDS };
static const char *const kind_names[COND_NKINDS] = { "queue", "broadcast", "pingpong" };

#define COND_DEFAULT_PAIRS   "1,1:2,2:4,4:1,7:7,1"
#define COND_DEFAULT_WAITERS "2,4,8,16,32,64"
#define COND_MAX_CAPACITY    (1ul << 20)
/* Latencies kept per run; later rounds are still run and counted. */
#define COND_MAX_LATENCIES   ((size_t)1 << 22)

/* A queue configuration. */
struct cond_pair {
	unsigned producers, consumers;
};

/* One configuration of a workload. */
struct cond_shape {
	enum cond_kind kind;
	unsigned producers, consumers;  /* queue */
	unsigned waiters;               /* broadcast */
};

/* The threads of a run of shape k. */
static unsigned shape_threads(const struct cond_shape *k)
{
	return k->kind == COND_QUEUE ? k->producers + k->consumers :
		k->kind == COND_BROADCAST ? k->waiters + 1 : 2;
}

struct cond_ctx {
	const struct bench_cond *conds[BENCH_MAX_LOCKS];
	const char *names[BENCH_MAX_LOCKS];
	size_t nconds;
	size_t base;            /* the ratios' baseline: glibc, else the first */
	bool kind[COND_NKINDS]; /* --scenario */
	struct cond_pair pairs[BENCH_MAX_THREAD_COUNTS];    /* --threads */
	size_t npairs;
	unsigned waiters[BENCH_MAX_THREAD_COUNTS];          /* --waiters */
	size_t nwaiters;
	unsigned long capacity; /* --capacity: queue slots */
	unsigned long cs;       /* --cs: pauses in a broadcast waiter's section */
	bool pairs_given, waiters_given, capacity_given, cs_given;
};

/* What the threads share, protected by the mutex (plain fields). */
struct cond_shared {
	bool stopping;          /* set by on_stop: every loop ends */
	/* queue: a ring of capacity items, count of them from head */
	uint64_t head, count;
	/* broadcast */
	uint64_t gen;           /* bumped by every broadcast */
	unsigned done;          /* waiters through this round's section */
	double last_end;        /* when the last of them ended it */
	uint64_t sections;      /* critical sections run, all waiters */
	/* pingpong */
	unsigned turn;          /* the thread whose turn it is */
	uint64_t passes;
	uint64_t ring[];        /* queue: [capacity] */
};

/* One thread's results beyond its ops, written when its body ends. */
struct cond_thread {
	uint64_t sum;           /* queue: the items it pushed or popped, summed */
	const char *broken;     /* a check that failed, or NULL */
	/* The broadcaster's: */
	uint64_t bc_futex;      /* futex calls made inside its broadcast calls */
	uint64_t csw;           /* its voluntary context switches */
	double *lat;            /* round latencies, seconds */
	size_t nlat, cap;
} __attribute__((aligned(BENCH_CACHELINE)));

/* One measurement in progress. */
struct cond_run {
	const struct bench_cond *cv;
	struct cond_shape k;
	unsigned long capacity, cs;
	void *m;                /* the mutex, own cache line(s) */
	void *c[2];             /* the condvars, by the indices below */
	struct cond_shared *sh;
	struct cond_thread *per;        /* [threads] */
	char label[96];
};

/* cond_run.c: the queue's, the broadcast's; pingpong's are thread 0's and
 * thread 1's. */
enum { NOT_EMPTY = 0, NOT_FULL = 1 };
enum { ROUND = 0, REPLY = 1 };

/* The figures of one run beyond the harness's (bench_sample.extra).  The
 * sample's total_ops and ops_per_sec count the workload's unit: items
 * consumed, broadcast rounds, round trips. */
struct cond_extra {
	struct cond_shape k;
	/* queue: per-thread items of the producers [0] and consumers [1] */
	uint64_t side_min[2], side_max[2], side_sum[2];
	uint64_t left;          /* items still in the ring at the end */
	/* broadcast */
	double lat_median_s, lat_p90_s; /* NAN without a whole round */
	bool futex_counted;
	uint64_t bc_futex;      /* in the broadcaster's broadcast calls */
	uint64_t bc_csw;        /* the broadcaster thread's */
	/* pingpong */
	uint64_t signals;
	/* Set on the median run once the repeats are in: (max - min) / median
	 * of the workload's measure over them; NAN for one run. */
	double spread;
};

/* ---- the bodies ---------------------------------------------------------- */

/* The calls of the run's condvar and mutex. */
static inline int m_lock(const struct cond_run *r) { return r->cv->mutex->lock(r->m); }
static inline int m_unlock(const struct cond_run *r) { return r->cv->mutex->unlock(r->m); }
static inline int c_wait(const struct cond_run *r, int k) { return r->cv->wait(r->c[k], r->m); }
static inline int c_signal(const struct cond_run *r, int k) { return r->cv->signal(r->c[k]); }

/* Records a failed call (the harness reports it after the run); the thread
 * holds the mutex and lets it go.  Returns ops, for the body's return. */
static uint64_t fail_held(struct bench_thread *t, const struct cond_run *r,
			  const char *what, int err, uint64_t ops)
{
	bench_thread_fail(t, what, err);
	(void)m_unlock(r);
	return ops;
}


/* A producer (the first r->k.producers threads) or a consumer. */
static uint64_t queue_worker(struct bench_thread *t, struct cond_run *r)
{
	struct cond_shared *sh = r->sh;
	const bool producer = t->id < r->k.producers;
	/* A producer waits while the ring is full and then makes it not
	 * empty; a consumer the other way round. */
	const uint64_t blocked = producer ? r->capacity : 0;
	const int wait_on = producer ? NOT_FULL : NOT_EMPTY;
	/* Items name their producer and number: a lost or doubled one changes
	 * the sums. */
	const uint64_t tag = (uint64_t)(t->id + 1) << 40;
	uint64_t ops = 0, sum = 0, item;
	int err;

	for (;;) {
		if ((err = m_lock(r))) {
			bench_thread_fail(t, "lock", err);
			break;
		}
		while (sh->count == blocked && !sh->stopping)
			if ((err = c_wait(r, wait_on)))
				return fail_held(t, r, "wait", err, ops);
		if (sh->stopping) {
			(void)m_unlock(r);
			break;
		}
		if (producer) {
			item = tag | ops;
			sh->ring[(sh->head + sh->count++) % r->capacity] = item;
		} else {
			item = sh->ring[sh->head];
			sh->head = (sh->head + 1) % r->capacity;
			sh->count--;
		}
		sum += item;
		ops++;
		if ((err = c_signal(r, !wait_on)))
			return fail_held(t, r, "signal", err, ops);
		if ((err = m_unlock(r))) {
			bench_thread_fail(t, "unlock", err);
			break;
		}
	}
	r->per[t->id].sum = sum;
	return ops;
}

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
		err = c_wait(r, REPLY);
	return err;
}

static uint64_t broadcaster(struct bench_thread *t, struct cond_run *r)
{
	struct cond_shared *sh = r->sh;
	struct cond_thread *me = &r->per[t->id];
	const uint64_t csw0 = bench_thread_csw();
	uint64_t rounds = 0;
	int err;

	if ((err = m_lock(r))) {
		bench_thread_fail(t, "lock", err);
		return 0;
	}
	/* Round 0: every waiter is waiting. */
	if ((err = await_waiters(r)))
		return fail_held(t, r, "wait (reply)", err, 0);
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
			return fail_held(t, r, "broadcast", err, rounds);
		me->bc_futex += fx1 - fx0;
		if ((err = await_waiters(r)))
			return fail_held(t, r, "wait (reply)", err, rounds);
		if (sh->done < r->k.waiters)
			break;          /* stopped in the middle of the round */
		note_latency(me, sh->last_end - t0);
		rounds++;
	}
	(void)m_unlock(r);
	me->csw = bench_thread_csw() - csw0;
	return rounds;
}

static uint64_t broadcast_waiter(struct bench_thread *t, struct cond_run *r)
{
	struct cond_shared *sh = r->sh;
	uint64_t ops = 0, gen;
	int err;

	if ((err = m_lock(r))) {
		bench_thread_fail(t, "lock", err);
		return 0;
	}
	gen = sh->gen;
	if (++sh->done == r->k.waiters && (err = c_signal(r, REPLY)))
		return fail_held(t, r, "signal (reply)", err, 0);
	for (;;) {
		while (sh->gen == gen && !sh->stopping)
			if ((err = c_wait(r, ROUND)))
				return fail_held(t, r, "wait (broadcast)", err, ops);
		if (sh->stopping)
			break;
		if (sh->gen != gen + 1) {
			r->per[t->id].broken = "a waiter missed a broadcast";
			/* relaxed: as bench_thread_fail; read after join. */
			atomic_store_explicit(t->stop, true, memory_order_relaxed);
			break;
		}
		gen = sh->gen;
		for (unsigned long i = 0; i < r->cs; i++)
			bench_pause();
		sh->sections++;
		ops++;
		if (++sh->done == r->k.waiters) {
			sh->last_end = bench_now();
			if ((err = c_signal(r, REPLY)))
				return fail_held(t, r, "signal (reply)", err, ops);
		}
	}
	(void)m_unlock(r);
	return ops;
}

static uint64_t pingpong_player(struct bench_thread *t, struct cond_run *r)
{
	struct cond_shared *sh = r->sh;
	const unsigned me = t->id, other = !t->id;
	uint64_t passes = 0;
	int err;

	if ((err = m_lock(r))) {
		bench_thread_fail(t, "lock", err);
		return 0;
	}
	for (;;) {
		while (sh->turn != me && !sh->stopping)
			if ((err = c_wait(r, (int)me)))
				return fail_held(t, r, "wait", err, passes);
		if (sh->stopping)
			break;
		sh->turn = other;
		sh->passes++;
		passes++;
		if ((err = c_signal(r, (int)other)))
			return fail_held(t, r, "signal", err, passes);
	}
	(void)m_unlock(r);
	return passes;
}

static uint64_t cond_body(struct bench_thread *t, void *arg)
{
	struct cond_run *r = arg;

	switch (r->k.kind) {
	case COND_QUEUE:
		return queue_worker(t, r);
	case COND_BROADCAST:
		return t->id == 0 ? broadcaster(t, r) : broadcast_waiter(t, r);
	default:
		return pingpong_player(t, r);
	}
}

/* The end of a run: every thread sees stopping, wherever it waits. */
static void cond_on_stop(void *arg)
{
	const struct cond_run *r = arg;

	bench_check(m_lock(r), r->label);
	r->sh->stopping = true;
	for (int k = 0; k < 2; k++)
		bench_check(r->cv->broadcast(r->c[k]), r->label);
	bench_check(m_unlock(r), r->label);
}

static void cond_on_hang(void *arg)
{
	const struct cond_run *r = arg;

	bench_print_lock_state(r->cv->mutex->name, r->cv->mutex->describe, r->m);
}

/* ---- one measurement ----------------------------------------------------- */

/* The queue's figures and checks. */
static void queue_collect(const struct cond_run *r, const struct bench_sample *s,
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
		in_ring += r->sh->ring[(r->sh->head + k) % r->capacity];
	x->left = r->sh->count;
	if (x->side_sum[0] != x->side_sum[1] + x->left || produced != consumed + in_ring)
		bench_fatal("%s: ITEMS LOST OR DOUBLED: %llu produced, %llu consumed, %llu "
			    "left in the ring (item sums %llu, %llu, %llu)", r->label,
			    (unsigned long long)x->side_sum[0], (unsigned long long)x->side_sum[1],
			    (unsigned long long)x->left, (unsigned long long)produced,
			    (unsigned long long)consumed, (unsigned long long)in_ring);
}

/* The broadcast's figures and checks. */
static void broadcast_collect(const struct cond_run *r, const struct bench_sample *s,
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
}

/* Runs condvar cv in workload r->k.kind (r's parameters set) and fills out,
 * its extra a cond_extra. */
static void cond_measure(struct cond_run *r, double duration_s, struct bench_sample *out)
{
	const unsigned threads = shape_threads(&r->k);
	const struct bench_lock *mx = r->cv->mutex;
	struct bench_run_spec spec = {
		.label = r->label,
		.threads = threads,
		.duration_s = duration_s,
		.body = cond_body,
		.arg = r,
		.futex_counted = r->cv->futex_counted,
		.on_hang = cond_on_hang,
		.on_stop = cond_on_stop,
	};
	struct cond_extra *x = bench_xcalloc(1, sizeof *x);

	/* All-zero bytes: what a static initialiser gives; init runs anyway. */
	r->m = bench_alloc_lines(mx->size);
	bench_check(mx->init(r->m), r->label);
	for (int k = 0; k < 2; k++) {
		r->c[k] = bench_alloc_lines(r->cv->size);
		bench_check(r->cv->init(r->c[k]), r->label);
	}
	r->sh = bench_alloc_lines(sizeof *r->sh +
				  (r->k.kind == COND_QUEUE ? r->capacity : 0) * sizeof r->sh->ring[0]);
	r->per = bench_alloc_lines(threads * sizeof *r->per);

	bench_run(&spec, out);

	for (unsigned i = 0; i < threads; i++)
		if (r->per[i].broken)
			bench_fatal("%s: thread %u: %s", r->label, i, r->per[i].broken);
	x->k = r->k;
	x->futex_counted = r->cv->futex_counted;
	x->spread = NAN;
	switch (r->k.kind) {
	case COND_QUEUE:
		queue_collect(r, out, x);
		out->total_ops = x->side_sum[1];
		break;
	case COND_BROADCAST:
		broadcast_collect(r, out, x);
		out->total_ops = out->thread_ops[0];
		break;
	default:
		if (out->thread_ops[0] + out->thread_ops[1] != r->sh->passes ||
		    out->thread_ops[0] - out->thread_ops[1] > 1)
			bench_fatal("%s: TURNS BROKEN: the threads passed the turn %llu and "
				    "%llu times, the shared count reads %llu", r->label,
				    (unsigned long long)out->thread_ops[0],
				    (unsigned long long)out->thread_ops[1],
				    (unsigned long long)r->sh->passes);
		x->signals = r->sh->passes;
		out->total_ops = r->sh->passes / 2;
		break;
	}
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

/* ---- figures and columns ------------------------------------------------- */

static const struct cond_extra *extra_of(const struct bench_result *r)
{
	return bench_result_sample(r)->extra;
}

/* x per op of the run shown, NAN without ops. */
static double per_op(const struct bench_result *r, double x)
{
	const struct bench_sample *s = bench_result_sample(r);

	return s->total_ops ? x / (double)s->total_ops : NAN;
}

/* What the median run and the spread are chosen by: the broadcast's
 * median latency, else the rate. */
static double measure(const struct bench_sample *s)
{
	const struct cond_extra *x = s->extra;

	return x->k.kind == COND_BROADCAST ? x->lat_median_s : s->ops_per_sec;
}

static double col_rate_m(const struct bench_result *r) { return bench_result_sample(r)->ops_per_sec / 1e6; }
static double col_rate_k(const struct bench_result *r) { return bench_result_sample(r)->ops_per_sec / 1e3; }
static double col_spread(const struct bench_result *r) { return extra_of(r)->spread * 100; }
static double col_ratio(const struct bench_result *r) { return r->ratio; }
static double col_csw(const struct bench_result *r) { return per_op(r, (double)bench_result_sample(r)->csw); }
/* CPU s per million ops = CPU us per op. */
static double col_cpu(const struct bench_result *r) { return per_op(r, bench_result_sample(r)->cpu_s) * 1e6; }

static double col_futex(const struct bench_result *r)
{
	const struct bench_sample *s = bench_result_sample(r);

	return s->futex_counted ? per_op(r, (double)s->futex_calls) : NAN;
}

/* The queue's per-thread rates, kitems/s, of the producers (side 0) or
 * consumers (1). */
enum side_figure { SIDE_MIN, SIDE_AVG, SIDE_MAX, SIDE_FAIR };

static double side_figure(const struct bench_result *r, int side, enum side_figure f)
{
	const struct bench_sample *s = bench_result_sample(r);
	const struct cond_extra *x = s->extra;
	const unsigned n = side ? x->k.consumers : x->k.producers;

	switch (f) {
	case SIDE_MIN: return bench_per_wall(s, (double)x->side_min[side]) / 1e3;
	case SIDE_MAX: return bench_per_wall(s, (double)x->side_max[side]) / 1e3;
	case SIDE_AVG: return bench_per_wall(s, (double)x->side_sum[side] / n) / 1e3;
	default:
		return x->side_max[side] ? (double)x->side_min[side] / (double)x->side_max[side] : NAN;
	}
}

static double col_p_min(const struct bench_result *r) { return side_figure(r, 0, SIDE_MIN); }
static double col_p_avg(const struct bench_result *r) { return side_figure(r, 0, SIDE_AVG); }
static double col_p_max(const struct bench_result *r) { return side_figure(r, 0, SIDE_MAX); }
static double col_p_fair(const struct bench_result *r) { return side_figure(r, 0, SIDE_FAIR); }
static double col_c_min(const struct bench_result *r) { return side_figure(r, 1, SIDE_MIN); }
static double col_c_avg(const struct bench_result *r) { return side_figure(r, 1, SIDE_AVG); }
static double col_c_max(const struct bench_result *r) { return side_figure(r, 1, SIDE_MAX); }
static double col_c_fair(const struct bench_result *r) { return side_figure(r, 1, SIDE_FAIR); }

static double col_lat(const struct bench_result *r) { return extra_of(r)->lat_median_s * 1e6; }
static double col_p90(const struct bench_result *r) { return extra_of(r)->lat_p90_s * 1e6; }

static double col_bc_futex(const struct bench_result *r)
{
	const struct cond_extra *x = extra_of(r);

	return x->futex_counted ? per_op(r, (double)x->bc_futex) : NAN;
}

static double col_ns_signal(const struct bench_result *r)
{
	const struct bench_sample *s = bench_result_sample(r);
	const uint64_t n = extra_of(r)->signals;

	return n ? s->wall_s * 1e9 / (double)n : NAN;
}

static const struct bench_column col_items = { "Mitem/s", NULL, 8, 3, col_rate_m, NULL };
static const struct bench_column col_spread_def = { "spread%", NULL, 7, 1, col_spread, NULL };
static const struct bench_column col_p[4] = {
	{ "p-min", NULL, 7, 1, col_p_min, NULL }, { "p-avg", NULL, 7, 1, col_p_avg, NULL },
	{ "p-max", NULL, 7, 1, col_p_max, NULL }, { "p-fair", NULL, 6, 2, col_p_fair, NULL },
};
static const struct bench_column col_c[4] = {
	{ "c-min", NULL, 7, 1, col_c_min, NULL }, { "c-avg", NULL, 7, 1, col_c_avg, NULL },
	{ "c-max", NULL, 7, 1, col_c_max, NULL }, { "c-fair", NULL, 6, 2, col_c_fair, NULL },
};
static const struct bench_column col_futex_item = { "futex/item", NULL, 10, 3, col_futex, NULL };
static const struct bench_column col_csw_item = { "csw/item", NULL, 8, 3, col_csw, NULL };
static const struct bench_column col_cpu_item = { "cpu-s/Mitem", NULL, 11, 3, col_cpu, NULL };
static const struct bench_column col_ratio_def = { "ratio", NULL, 6, 2, col_ratio, NULL };

static const struct bench_column col_lat_def = { "lat-us", NULL, 8, 1, col_lat, NULL };
static const struct bench_column col_p90_def = { "p90-us", NULL, 8, 1, col_p90, NULL };
static const struct bench_column col_rounds = { "krnd/s", NULL, 8, 2, col_rate_k, NULL };
static const struct bench_column col_bc_futex_def = { "bc-futex", NULL, 8, 2, col_bc_futex, NULL };
static const struct bench_column col_futex_rnd = { "futex/rnd", NULL, 9, 2, col_futex, NULL };
static const struct bench_column col_csw_rnd = { "csw/rnd", NULL, 8, 2, col_csw, NULL };
static const struct bench_column col_cpu_rnd = { "cpu-us/rnd", NULL, 10, 1, col_cpu, NULL };

static const struct bench_column col_rt = { "kRT/s", NULL, 8, 1, col_rate_k, NULL };
static const struct bench_column col_ns_signal_def = { "ns/signal", NULL, 9, 0, col_ns_signal, NULL };
static const struct bench_column col_futex_rt = { "futex/RT", NULL, 8, 2, col_futex, NULL };
static const struct bench_column col_csw_rt = { "csw/RT", NULL, 7, 2, col_csw, NULL };
static const struct bench_column col_cpu_rt = { "cpu-us/RT", NULL, 9, 2, col_cpu, NULL };

static const struct bench_column *const queue_columns[] = {
	&col_items, &col_spread_def, &col_p[0], &col_p[1], &col_p[2], &col_p[3],
	&col_c[0], &col_c[1], &col_c[2], &col_c[3], &col_futex_item, &col_csw_item,
	&col_cpu_item, &col_ratio_def,
};
static const struct bench_column *const broadcast_columns[] = {
	&col_lat_def, &col_p90_def, &col_spread_def, &col_rounds, &col_bc_futex_def,
	&col_futex_rnd, &col_csw_rnd, &col_cpu_rnd, &col_ratio_def,
};
static const struct bench_column *const pingpong_columns[] = {
	&col_rt, &col_ns_signal_def, &col_spread_def, &col_futex_rt, &col_csw_rt,
	&col_cpu_rt, &col_ratio_def,
};

/* ---- the runs ------------------------------------------------------------ */

/* One configuration of one workload: a table. */
struct cond_config {
	struct cond_shape k;
	struct bench_result *row;       /* [nconds] */
};

/* "hotlock/queue-4p4c": the JSON's "lock", unique in the file. */
static void entry_name(char *buf, size_t len, const char *cond, const struct cond_shape *k)
{
	if (k->kind == COND_QUEUE)
		snprintf(buf, len, "%s/queue-%up%uc", cond, k->producers, k->consumers);
	else if (k->kind == COND_BROADCAST)
		snprintf(buf, len, "%s/broadcast-%uw", cond, k->waiters);
	else
		snprintf(buf, len, "%s/pingpong", cond);
}

static void config_words(char *buf, size_t len, const struct cond_shape *k)
{
	if (k->kind == COND_QUEUE)
		snprintf(buf, len, "producers=%u consumers=%u", k->producers, k->consumers);
	else if (k->kind == COND_BROADCAST)
		snprintf(buf, len, "waiters=%u", k->waiters);
	else
		snprintf(buf, len, "threads=2");
}

static void run_config(const struct cond_ctx *c, const struct bench_common *common,
		       struct cond_config *cfg)
{
	const struct cond_shape *k = &cfg->k;
	const size_t n = c->nconds;
	char what[64], result[64];

	config_words(what, sizeof what, k);
	for (size_t l = 0; l < n; l++) {
		cfg->row[l].lock = l;
		cfg->row[l].threads = shape_threads(k);
		cfg->row[l].runs = bench_xcalloc(common->repeat, sizeof *cfg->row[l].runs);
	}
	for (unsigned rep = 0; rep < common->repeat; rep++)
		for (size_t l = 0; l < n; l++) {
			struct cond_run r = {
				.cv = c->conds[l], .k = *k, .capacity = c->capacity, .cs = c->cs,
			};
			struct bench_sample *s = &cfg->row[l].runs[rep];

			snprintf(r.label, sizeof r.label, "cond %s %s %s", kind_names[k->kind],
				 c->names[l], what);
			bench_progress_begin("%s run %u/%u", r.label, rep + 1, common->repeat);
			cond_measure(&r, common->duration_s, s);
			if (k->kind == COND_QUEUE)
				snprintf(result, sizeof result, "%.3f Mitems/s", s->ops_per_sec / 1e6);
			else if (k->kind == COND_BROADCAST)
				snprintf(result, sizeof result, "%.1f us median latency",
					 measure(s) * 1e6);
			else
				snprintf(result, sizeof result, "%.1f k round trips/s",
					 s->ops_per_sec / 1e3);
			bench_progress_end(result, s->other_cpus);
		}
	for (size_t l = 0; l < n; l++) {
		struct bench_result *res = &cfg->row[l];
		struct cond_extra *x;
		double lo = INFINITY, hi = -INFINITY;

		res->median = bench_median_run(res->runs, common->repeat, measure);
		for (unsigned rep = 0; rep < common->repeat; rep++) {
			lo = fmin(lo, measure(&res->runs[rep]));
			hi = fmax(hi, measure(&res->runs[rep]));
		}
		x = res->runs[res->median].extra;
		x->spread = common->repeat > 1 ? (hi - lo) / measure(&res->runs[res->median]) : NAN;
	}
	for (size_t l = 0; l < n; l++) {
		const double v = measure(bench_result_sample(&cfg->row[l]));
		const double b = measure(bench_result_sample(&cfg->row[c->base]));

		/* > 1: faster than the baseline (a shorter latency, a higher rate). */
		cfg->row[l].ratio = k->kind == COND_BROADCAST ? b / v : v / b;
	}
}

static void print_kind_header(const struct cond_ctx *c, const struct bench_common *common,
			      enum cond_kind kind)
{
	const char *base = c->names[c->base];

	printf("cond %s: ", kind_names[kind]);
	if (kind == COND_QUEUE)
		printf("producers and consumers through a ring of %lu items, one mutex, "
		       "condvars not_empty and not_full; p- and c- columns: per producer and "
		       "per consumer thread, kitems/s; ratio = items/s over %s's\n",
		       c->capacity, base);
	else if (kind == COND_BROADCAST)
		printf("one thread broadcasts to N waiters, each then runs a critical "
		       "section of %lu pauses; latency = broadcast to the end of the last "
		       "waiter's section, median (p90) over the rounds of a run; ratio = "
		       "%s's latency over this one's\n", c->cs, base);
	else
		printf("two threads pass a turn through one mutex and two condvars; "
		       "RT = round trip (two signals); ratio = round trips/s over %s's\n",
		       base);
	printf("duration=%gs", common->duration_s);
	if (common->repeat > 1)
		printf(" repeat=%u (median run shown; spread = (max - min) / median over "
		       "the runs)", common->repeat);
	printf(" cores=%u futex=%s\n\n", bench_cores(), hl_futex_interface());
}

static void print_config(const struct cond_ctx *c, const struct cond_config *k)
{
	static const struct {
		const struct bench_column *const *cols;
		size_t n;
	} tables[COND_NKINDS] = {
		[COND_QUEUE] = { queue_columns, sizeof queue_columns / sizeof queue_columns[0] },
		[COND_BROADCAST] = { broadcast_columns,
				     sizeof broadcast_columns / sizeof broadcast_columns[0] },
		[COND_PINGPONG] = { pingpong_columns,
				    sizeof pingpong_columns / sizeof pingpong_columns[0] },
	};
	char title[64];

	config_words(title, sizeof title, &k->k);
	bench_table_print(title, c->names, k->row, c->nconds, tables[k->k.kind].cols,
			  tables[k->k.kind].n);
}

/* ---- JSON ---------------------------------------------------------------- */

static void json_run(const void *ctx, struct bench_json *j, const struct bench_sample *s)
{
	const struct cond_extra *x = s->extra;
	const double ops = (double)s->total_ops;

	bench_json_sample(j, s);
	if (x->k.kind == COND_QUEUE) {
		static const char *const side[2] = { "producer", "consumer" };
		const unsigned n[2] = { x->k.producers, x->k.consumers };
		char key[64];

		bench_json_string(j, "unit", "items consumed");
		for (int k = 0; k < 2; k++) {
			snprintf(key, sizeof key, "%s_items", side[k]);
			bench_json_uint(j, key, x->side_sum[k]);
			snprintf(key, sizeof key, "%s_items_per_sec_min", side[k]);
			bench_json_number(j, key, bench_per_wall(s, (double)x->side_min[k]));
			snprintf(key, sizeof key, "%s_items_per_sec_avg", side[k]);
			bench_json_number(j, key, bench_per_wall(s, (double)x->side_sum[k] / n[k]));
			snprintf(key, sizeof key, "%s_items_per_sec_max", side[k]);
			bench_json_number(j, key, bench_per_wall(s, (double)x->side_max[k]));
			snprintf(key, sizeof key, "%s_min_over_max", side[k]);
			bench_json_number(j, key, x->side_max[k] ?
					  (double)x->side_min[k] / (double)x->side_max[k] : NAN);
		}
		bench_json_uint(j, "items_left", x->left);
	} else if (x->k.kind == COND_BROADCAST) {
		bench_json_string(j, "unit", "broadcast rounds");
		bench_json_number(j, "latency_us_median", x->lat_median_s * 1e6);
		bench_json_number(j, "latency_us_p90", x->lat_p90_s * 1e6);
		if (x->futex_counted)
			bench_json_number(j, "broadcast_call_futex_calls_per_round",
					  ops ? (double)x->bc_futex / ops : NAN);
		else
			bench_json_null(j, "broadcast_call_futex_calls_per_round");
		bench_json_number(j, "broadcaster_csw_per_round",
				  ops ? (double)x->bc_csw / ops : NAN);
	} else {
		bench_json_string(j, "unit", "round trips");
		bench_json_uint(j, "signals", x->signals);
		bench_json_number(j, "ns_per_signal", x->signals ?
				  s->wall_s * 1e9 / (double)x->signals : NAN);
	}
}

static void write_json(const struct cond_ctx *c, const struct bench_common *common,
		       const struct cond_config *k, size_t nk, struct bench_json *j)
{
	char name[96];

	bench_json_object(j, NULL);
	bench_json_string(j, "bench", "cond");
	bench_json_object(j, "config");
	bench_json_array(j, "scenarios");
	for (int kind = 0; kind < COND_NKINDS; kind++)
		if (c->kind[kind])
			bench_json_string(j, NULL, kind_names[kind]);
	bench_json_end(j);
	if (c->kind[COND_QUEUE]) {
		bench_json_array(j, "queue_threads");
		for (size_t i = 0; i < c->npairs; i++) {
			bench_json_object(j, NULL);
			bench_json_uint(j, "producers", c->pairs[i].producers);
			bench_json_uint(j, "consumers", c->pairs[i].consumers);
			bench_json_end(j);
		}
		bench_json_end(j);
		bench_json_uint(j, "capacity", c->capacity);
	}
	if (c->kind[COND_BROADCAST]) {
		bench_json_uint_array(j, "waiters", c->waiters, c->nwaiters);
		bench_json_uint(j, "cs", c->cs);
	}
	bench_json_number(j, "duration_s", common->duration_s);
	bench_json_uint(j, "cores", bench_cores());
	bench_json_string_array(j, "locks", c->names, c->nconds);
	bench_json_object(j, "lock_roles");
	for (size_t l = 0; l < c->nconds; l++)
		bench_json_string(j, c->names[l], bench_registry_role(
			&bench_cond_registry, bench_registry_find(&bench_cond_registry,
								  c->names[l])));
	bench_json_end(j);
	bench_json_string(j, "ratio_baseline", c->names[c->base]);
	bench_json_uint(j, "repeat", common->repeat);
	bench_json_string(j, "table", "median");
	bench_json_environment(j);
	bench_json_end(j);
	bench_json_array(j, "results");
	for (size_t i = 0; i < nk; i++)
		for (size_t l = 0; l < c->nconds; l++) {
			const struct bench_result *r = &k[i].row[l];
			const struct cond_shape *shape = &k[i].k;

			entry_name(name, sizeof name, c->names[l], shape);
			bench_json_object(j, NULL);
			bench_json_string(j, "lock", name);
			bench_json_string(j, "cond", c->names[l]);
			bench_json_string(j, "scenario", kind_names[shape->kind]);
			bench_json_uint(j, "threads", r->threads);
			if (shape->kind == COND_QUEUE) {
				bench_json_uint(j, "producers", shape->producers);
				bench_json_uint(j, "consumers", shape->consumers);
			} else if (shape->kind == COND_BROADCAST) {
				bench_json_uint(j, "waiters", shape->waiters);
			}
			json_run(NULL, j, bench_result_sample(r));
			bench_json_number(j, "spread",
					  ((const struct cond_extra *)bench_result_sample(r)->extra)->spread);
			bench_json_number(j, "ratio", r->ratio);
			bench_json_uint(j, "median_run", r->median);
			bench_json_runs(j, r->runs, common->repeat, json_run, NULL);
			bench_json_end(j);
		}
	bench_json_end(j);
	bench_json_end(j);
	bench_json_close(j);
}

/* ---- command line -------------------------------------------------------- */

static void cond_help(FILE *f)
{
	fprintf(f,
		"Usage: hotlock-bench cond [OPTIONS]\n"
		"\n"
		"Condition variables compared, each with its own mutex, in three workloads:\n"
		"  queue      P producers and C consumers pass items through a bounded ring\n"
		"             under one mutex, with condvars not_empty and not_full (wait\n"
		"             while full or empty, push or pop, signal the other side with\n"
		"             the mutex held, unlock); items lost or doubled exit 1\n"
		"  broadcast  one thread broadcasts (with the mutex held) to N waiters, which\n"
		"             each take the mutex, run a short critical section and wait\n"
		"             again; the last one signals the broadcaster on a second\n"
		"             condvar.  Latency: from just before the broadcast call to the\n"
		"             end of the last waiter's critical section\n"
		"  pingpong   two threads pass a turn through one mutex and two condvars\n"
		"Each (workload, configuration, condvar) runs --duration seconds, --repeat\n"
		"times, interleaved across condvars; at the end of a run the mutex is taken,\n"
		"a stop flag set and every condvar broadcast, so no thread is left asleep.\n"
		"\n"
		"Options:\n"
		"  --scenario S,...   the workloads, of queue, broadcast, pingpong (default\n"
		"                     all three, in that order)\n"
		"  --threads P,C:P,C:...  queue: producer,consumer pairs, ':' between pairs,\n"
		"                     each at least 1, P + C at most %u, run in the order\n"
		"                     given (default " COND_DEFAULT_PAIRS ")\n"
		"  --capacity N       queue: items the ring holds, 1 to %lu (default 16)\n"
		"  --waiters N,...    broadcast: waiter counts, 1 to %u each, in the order\n"
		"                     given (default " COND_DEFAULT_WAITERS ")\n"
		"  --cs N             broadcast: pause iterations in each waiter's critical\n"
		"                     section, 0 or more (default 10)\n"
		"  --locks A,B,...    condvars to compare (default " BENCH_COND_DEFAULTS ",\n"
		"                     groups 'all' and 'peers'); 'ratio' is against glibc\n"
		"                     when listed, else the first\n"
		"  --duration S       seconds per run, may be fractional (default 2)\n"
		"  --repeat R         runs of each (configuration, condvar), median shown,\n"
		"                     the JSON keeps all (default 1)\n"
		"  --json FILE        also write the results as JSON to FILE\n"
		"  --topology SPEC    as for the other scenarios (see 'mutex --help')\n"
		"  --busy N           N CPU-bound processes beside the runs, as for the\n"
		"                     other scenarios (see 'mutex --help'; default 0)\n"
		"  --help             this text\n"
		"\n"
		"Condvars (each with its mutex):\n",
		BENCH_MAX_THREADS, COND_MAX_CAPACITY, BENCH_MAX_THREADS - 1);
	bench_conds_print(f, "  ");
	fprintf(f,
		"\n"
		"Columns.  Every table: spread%% = (max - min) / median of the table's\n"
		"measure over the repeats ('-' for one run); ratio = against the baseline,\n"
		"> 1 faster.  futex columns: futex syscalls counted by hotlock's futex\n"
		"layer, all threads, '-' for glibc, whose calls are its own and cannot be\n"
		"counted (JSON null); csw: voluntary context switches (getrusage), all\n"
		"threads; cpu: CPU time, all threads.\n"
		"  queue (a table per P,C):\n"
		"    Mitem/s    items consumed per second of wall time\n"
		"    p-min, p-avg, p-max  per producer thread, kitems/s; p-fair = p-min/p-max\n"
		"    c-min, c-avg, c-max, c-fair  the same for the consumer threads\n"
		"    futex/item, csw/item  per item consumed; cpu-s/Mitem  CPU s per\n"
		"               million items\n"
		"  broadcast (a table per N):\n"
		"    lat-us, p90-us  median and 90th percentile latency over the run's rounds\n"
		"    krnd/s     rounds per second (thousands)\n"
		"    bc-futex   futex calls inside the broadcaster's broadcast call, per round\n"
		"    futex/rnd, csw/rnd, cpu-us/rnd  all threads', per round (the reply\n"
		"               to the broadcaster included)\n"
		"  pingpong:\n"
		"    kRT/s      round trips per second (thousands); ns/signal  wall time per\n"
		"               signal (a round trip is two)\n"
		"    futex/RT, csw/RT, cpu-us/RT  per round trip\n"
		"JSON: one file; each result's \"lock\" is CONDVAR/WORKLOAD-CONFIG\n"
		"(glibc/queue-4p4c, hotlock/broadcast-8w, futex-cv/pingpong), with \"cond\",\n"
		"\"scenario\" and its parameters apart; ops_per_sec is items/s, rounds/s or\n"
		"round trips/s, so that 'hotlock-bench compare' compares them; the\n"
		"queue's adds producer_/consumer_items_per_sec_min/avg/max, the\n"
		"broadcast's latency_us_median and _p90, broadcast_call_futex_calls_per_round\n"
		"and broadcaster_csw_per_round (the broadcaster thread's own context\n"
		"switches, its wait for the reply included: one in its broadcast call\n"
		"cannot be told apart without a syscall in the timed path).\n"
		"\n"
		"Exit status: 0 ok, 1 a run failed (a check, a condvar error, threads that\n"
		"did not stop within duration + 30 s), 2 bad command line.\n");
}

static void scenario_item(void *ctx, const char *name)
{
	struct cond_ctx *c = ctx;
	int k;

	for (k = 0; k < COND_NKINDS && strcmp(name, kind_names[k]) != 0; k++)
		;
	if (k == COND_NKINDS)
		bench_usage_error("cond", "--scenario: unknown scenario '%s' (valid: queue, "
				  "broadcast, pingpong)", name);
	c->kind[k] = true;
}

/* "P,C:P,C:..." into c->pairs, duplicates dropped. */
static void parse_pairs(struct cond_ctx *c, const char *me, const char *list)
{
	const char *p = list;

	c->npairs = 0;
	for (;;) {
		const size_t len = strcspn(p, ":");
		char entry[64], *comma;
		struct cond_pair pr;
		size_t i;

		if (len == 0 || len >= sizeof entry)
			bench_usage_error(me, "--threads: '%s' is not a list of P,C pairs "
					  "(producers,consumers) separated by ':', e.g. 1,1:4,4",
					  list);
		memcpy(entry, p, len);
		entry[len] = '\0';
		comma = strchr(entry, ',');
		if (!comma || strchr(comma + 1, ','))
			bench_usage_error(me, "--threads: '%s' is not P,C (producers,consumers); "
					  "pairs are separated by ':', e.g. 1,1:4,4", entry);
		*comma = '\0';
		pr.producers = bench_parse_ulong(me, "--threads (producers)", entry, 1,
						 BENCH_MAX_THREADS - 1);
		pr.consumers = bench_parse_ulong(me, "--threads (consumers)", comma + 1, 1,
						 BENCH_MAX_THREADS - 1);
		if (pr.producers + pr.consumers > BENCH_MAX_THREADS)
			bench_usage_error(me, "--threads: %u producers + %u consumers: at most %u "
					  "threads", pr.producers, pr.consumers, BENCH_MAX_THREADS);
		for (i = 0; i < c->npairs; i++)
			if (c->pairs[i].producers == pr.producers &&
			    c->pairs[i].consumers == pr.consumers)
				break;
		if (i == c->npairs) {
			if (c->npairs == BENCH_MAX_THREAD_COUNTS)
				bench_usage_error(me, "--threads: more than %u pairs",
						  BENCH_MAX_THREAD_COUNTS);
			c->pairs[c->npairs++] = pr;
		}
		if (p[len] == '\0')
			return;
		p += len + 1;
	}
}

static void waiters_item(void *ctx, const char *entry)
{
	struct cond_ctx *c = ctx;
	const unsigned n = bench_parse_ulong("cond", "--waiters", entry, 1,
					     BENCH_MAX_THREADS - 1);

	for (size_t i = 0; i < c->nwaiters; i++)
		if (c->waiters[i] == n)
			return;
	if (c->nwaiters == BENCH_MAX_THREAD_COUNTS)
		bench_usage_error("cond", "--waiters: more than %u entries",
				  BENCH_MAX_THREAD_COUNTS);
	c->waiters[c->nwaiters++] = n;
}

/* The scenario's own options (bench_parse_args asks it first). */
static bool cond_option(void *ctx, int argc, char **argv, int *i)
{
	static const char *const me = "cond";
	struct cond_ctx *c = ctx;
	const char *v;

	if ((v = bench_opt_value(me, argc, argv, i, "--scenario"))) {
		memset(c->kind, 0, sizeof c->kind);
		bench_list_each(me, "--scenario", v, scenario_item, c);
	} else if ((v = bench_opt_value(me, argc, argv, i, "--threads"))) {
		parse_pairs(c, me, v);
		c->pairs_given = true;
	} else if ((v = bench_opt_value(me, argc, argv, i, "--waiters"))) {
		c->nwaiters = 0;
		bench_list_each(me, "--waiters", v, waiters_item, c);
		c->waiters_given = true;
	} else if ((v = bench_opt_value(me, argc, argv, i, "--capacity"))) {
		c->capacity = bench_parse_ulong(me, "--capacity", v, 1, COND_MAX_CAPACITY);
		c->capacity_given = true;
	} else if ((v = bench_opt_value(me, argc, argv, i, "--cs"))) {
		c->cs = bench_parse_ulong(me, "--cs", v, 0, 1000000000UL);
		c->cs_given = true;
	} else {
		return false;
	}
	return true;
}

/* An option of a workload left out by --scenario: exit 2. */
static void check_used(const struct cond_ctx *c, bool given, const char *opt,
		       enum cond_kind kind)
{
	if (given && !c->kind[kind])
		bench_usage_error("cond", "%s is for the %s scenario, which --scenario "
				  "leaves out", opt, kind_names[kind]);
}

static int cond_main(int argc, char **argv)
{
	static const char *const me = "cond";
	struct cond_ctx c = { .capacity = 16, .cs = 10 };
	struct bench_common common;
	struct cond_config *k;
	struct bench_json *json;
	size_t nk = 0;

	bench_common_defaults(&common, BENCH_COND_DEFAULTS);
	parse_pairs(&c, me, COND_DEFAULT_PAIRS);
	c.nwaiters = 0;
	bench_list_each(me, "--waiters", COND_DEFAULT_WAITERS, waiters_item, &c);
	for (int kind = 0; kind < COND_NKINDS; kind++)
		c.kind[kind] = true;
	bench_parse_args(me, argc, argv, &common, cond_help, cond_option, &c);
	check_used(&c, c.pairs_given, "--threads", COND_QUEUE);
	check_used(&c, c.capacity_given, "--capacity", COND_QUEUE);
	check_used(&c, c.waiters_given, "--waiters", COND_BROADCAST);
	check_used(&c, c.cs_given, "--cs", COND_BROADCAST);
	c.nconds = bench_conds_parse(me, common.locks, c.conds, BENCH_MAX_LOCKS);
	for (size_t l = 0; l < c.nconds; l++) {
		c.names[l] = c.conds[l]->name;
		if (strcmp(c.names[l], "glibc") == 0)
			c.base = l;
	}

	/* The configurations, in order: the queue's pairs, the waiter counts,
	 * pingpong. */
	k = bench_xcalloc(c.npairs + c.nwaiters + 1, sizeof *k);
	if (c.kind[COND_QUEUE])
		for (size_t i = 0; i < c.npairs; i++)
			k[nk++].k = (struct cond_shape){ .kind = COND_QUEUE,
				.producers = c.pairs[i].producers,
				.consumers = c.pairs[i].consumers };
	if (c.kind[COND_BROADCAST])
		for (size_t i = 0; i < c.nwaiters; i++)
			k[nk++].k = (struct cond_shape){ .kind = COND_BROADCAST,
				.waiters = c.waiters[i] };
	if (c.kind[COND_PINGPONG])
		k[nk++].k = (struct cond_shape){ .kind = COND_PINGPONG };

	/* Opened first, so that an unwritable path fails before the runs. */
	json = common.json ? bench_json_open(common.json) : NULL;
	bench_busy_start(common.busy);
	bench_progress_start((unsigned)(nk * c.nconds * common.repeat));
	for (size_t i = 0; i < nk; i++) {
		k[i].row = bench_xcalloc(c.nconds, sizeof *k[i].row);
		run_config(&c, &common, &k[i]);
		bench_progress_clear();
		if (i == 0 || k[i].k.kind != k[i - 1].k.kind) {
			if (i > 0)
				putchar('\n');
			else
				bench_busy_note(stdout);
			print_kind_header(&c, &common, k[i].k.kind);
		} else {
			putchar('\n');
		}
		print_config(&c, &k[i]);
		fflush(stdout);
	}
	bench_busy_stop();
	bench_progress_clear();
	if (json)
		write_json(&c, &common, k, nk, json);
	for (size_t i = 0; i < nk; i++) {
		for (size_t l = 0; l < c.nconds; l++) {
			for (unsigned rep = 0; rep < common.repeat; rep++)
				bench_sample_free(&k[i].row[l].runs[rep]);
			free(k[i].row[l].runs);
		}
		free(k[i].row);
	}
	free(k);
	return 0;
}

const struct bench_scenario bench_scenario_cond = {
	.name = "cond",
	.summary = "condition variables: a producer/consumer queue, a broadcast to N waiters, a ping-pong",
	.main = cond_main,
};

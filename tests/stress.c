/* SPDX-License-Identifier: MIT */
/* hotlock stress harness: see stress.h for what it checks.
 *
 * Layout of a run
 *   main thread: starts the workers and the watchdog, releases them together
 *   through a barrier, lets them run for duration_ms (or until the first
 *   failure), sets stop, joins the workers, then stops the watchdog.  A
 *   run by operation count (ops_per_thread) just joins the workers; a
 *   controlled run (stress_hooks_t) has no watchdog: its scheduler reports
 *   a hang.
 *   workers: loop { outside work; pick an operation; acquire; critical
 *   section with the checks; release; bump progress }.
 *   watchdog: every 20 ms compares each worker's progress counter with the
 *   last one it saw; a worker that is not done and has not moved for
 *   watchdog_ms fails the run (it stays active while the workers are joined,
 *   so a worker stuck at the end is caught too).
 *
 * The harness's own synchronisation (barrier, report mutex, the watchdog's
 * condition variable) uses pthread primitives, never the lock under test.
 * Fields the watchdog reads while workers run are atomics (relaxed: they are
 * diagnostics, nothing is published through them); the per-thread results
 * are plain and read after pthread_join. */
#include "stress.h"
#include "common.h"

#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>

enum wstate {
	ST_START, ST_OUTSIDE, ST_LOCK, ST_TRYLOCK, ST_TIMEDLOCK, ST_RDLOCK,
	ST_TRYRDLOCK, ST_TIMEDRDLOCK, ST_CS, ST_CS_SLEEP, ST_CS_YIELD,
	ST_RELOCK, ST_UNLOCK, ST_RDUNLOCK, ST_DONE,
};

static const char *const state_names[] = {
	[ST_START] = "starting",
	[ST_OUTSIDE] = "outside the lock",
	[ST_LOCK] = "in lock()",
	[ST_TRYLOCK] = "in trylock()",
	[ST_TIMEDLOCK] = "in timedlock()",
	[ST_RDLOCK] = "in rdlock()",
	[ST_TRYRDLOCK] = "in tryrdlock()",
	[ST_TIMEDRDLOCK] = "in timedrdlock()",
	[ST_CS] = "in the critical section",
	[ST_CS_SLEEP] = "sleeping in the critical section",
	[ST_CS_YIELD] = "yielding in the critical section",
	[ST_RELOCK] = "in relock()",
	[ST_UNLOCK] = "in unlock()",
	[ST_RDUNLOCK] = "in rdunlock()",
	[ST_DONE] = "done",
};

/* The data the critical section guards.  a and b are the plain counter
 * pair; data[] is the "work" the critical section does. */
struct shared {
	volatile uint64_t a;
	volatile uint64_t b;
	volatile uint64_t data[8];
	/* Stall accounting (see stress.h), written by the exclusive holder. */
	/* Atomics (relaxed; only the holder writes, with load + store) so that
	 * they never race: the counter pair is the plain-access check. */
	atomic_llong last_release_ns;
	atomic_ullong max_cs_ns, max_gap_ns;
	atomic_ullong stall_ns;
	_Alignas(64) atomic_int owner;   /* worker index + 1, 0 when none */
	atomic_int readers;
	atomic_int max_readers;
};

struct run;

struct worker {
	_Alignas(64) struct run *run;
	int idx;
	pthread_t th;
	atomic_uint tid;
	atomic_ullong progress;  /* operations completed, failed ones included */
	atomic_ullong ops;       /* acquisitions completed */
	atomic_int state;
	test_rng_t rng;
	stress_thread_result_t res;
};

struct run {
	const stress_ops_t *ops;
	const stress_config_t *cfg;
	struct shared sh;
	_Alignas(64) atomic_int stop;
	atomic_int violations;
	atomic_int errors;
	pthread_mutex_t report_mu;
	pthread_barrier_t start;
	struct worker *w;
	/* watchdog */
	pthread_t watchdog;
	pthread_mutex_t watch_mu;
	pthread_cond_t watch_cv;
	bool watch_stop;
};

/* ---- configuration ---- */

int stress_duration_ms(void)
{
	long dflt = HOTLOCK_SANITIZED ? 700 : 1500;
	long ms = env_long("HOTLOCK_STRESS_MS", dflt);
	return ms > 0 ? (int)ms : (int)dflt;
}

int stress_next_round_ops(int ops, int64_t took_ns, int64_t left_ns, int64_t round_ns)
{
	int64_t target = left_ns < round_ns ? left_ns : round_ns;
	double per_ns = (double)ops / (double)(took_ns > 0 ? took_ns : 1);
	int64_t n = (int64_t)(per_ns * (double)target);
	if (n > 4 * (int64_t)ops)
		n = 4 * (int64_t)ops;
	if (n < 16)
		n = 16;
	return (int)n;
}

void stress_config_default(stress_config_t *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->label = "";
	cfg->threads = 4;
	cfg->duration_ms = stress_duration_ms();
	cfg->timed_max_us = 200;
	cfg->cs_sleep_max_us = 1000;
	cfg->cs_work = 50;
	cfg->ncs_work = 20;
	cfg->watchdog_ms = (int)env_long("HOTLOCK_WATCHDOG_MS", 10000);
	cfg->seed = test_seed(0x5eed0001);
}

/* ---- failure reports ---- */

#define MAX_PRINTED 8

static void report(struct run *r, atomic_int *counter, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void report(struct run *r, atomic_int *counter, const char *fmt, ...)
{
	int n = atomic_fetch_add(counter, 1);
	atomic_store(&r->stop, 1);
	if (n >= MAX_PRINTED)
		return;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&r->report_mu);
	fprintf(stderr, "stress [%s%s%s]: %s\n", r->ops->name,
		r->cfg->label[0] ? " " : "", r->cfg->label, msg);
	fflush(stderr);
	pthread_mutex_unlock(&r->report_mu);
	if (r->cfg->hooks && r->cfg->hooks->failed)
		r->cfg->hooks->failed(msg);
}

/* The clock of the run: the hooks' in a controlled run. */
static int64_t run_now(const struct run *r)
{
	return r->cfg->hooks ? r->cfg->hooks->now_ns() : now_ns();
}

#define VIOLATION(r, ...) report((r), &(r)->violations, "mutual exclusion violated: " __VA_ARGS__)
#define ERROR(r, ...) report((r), &(r)->errors, "unexpected result: " __VA_ARGS__)

/* ---- the critical section ---- */

static inline void set_state(struct worker *w, enum wstate s)
{
	atomic_store_explicit(&w->state, s, memory_order_relaxed);
}

/* Stall accounting, called by the exclusive holder right after it took the
 * lock at t_acq (and before cs_open, so that a broken lock's races are
 * reported by the counter pair first).  A handover (previous release to
 * this acquisition) longer than STALL_ALLOW_NS adds its excess to stall_ns. */
#define STALL_ALLOW_NS (2 * NSEC_PER_MSEC)

static inline uint64_t ld(atomic_ullong *p)
{
	return atomic_load_explicit(p, memory_order_relaxed);
}

static inline void st(atomic_ullong *p, uint64_t v)
{
	atomic_store_explicit(p, v, memory_order_relaxed);
}

static void stall_on_acquire(struct worker *w, int64_t t_acq)
{
	struct shared *sh = &w->run->sh;
	int64_t last = atomic_load_explicit(&sh->last_release_ns, memory_order_relaxed);
	if (last && t_acq > last) {
		uint64_t gap = (uint64_t)(t_acq - last);
		if (gap > ld(&sh->max_gap_ns))
			st(&sh->max_gap_ns, gap);
		if (gap > (uint64_t)STALL_ALLOW_NS)
			st(&sh->stall_ns, ld(&sh->stall_ns) + gap - STALL_ALLOW_NS);
	}
}

/* ... and right before it releases: a critical section that lasted longer
 * than STALL_ALLOW_NS (its owner was preempted) adds its excess. */
static void stall_on_release(struct worker *w, int64_t t_acq)
{
	struct shared *sh = &w->run->sh;
	int64_t t = run_now(w->run);
	uint64_t cs = (uint64_t)(t - t_acq);
	if (cs > ld(&sh->max_cs_ns))
		st(&sh->max_cs_ns, cs);
	if (cs > (uint64_t)STALL_ALLOW_NS)
		st(&sh->stall_ns, ld(&sh->stall_ns) + cs - STALL_ALLOW_NS);
	atomic_store_explicit(&sh->last_release_ns, t, memory_order_relaxed);
}

static void cs_open(struct worker *w)
{
	struct run *r = w->run;
	struct shared *sh = &r->sh;
	uint64_t a = sh->a, b = sh->b;
	int o, rd;

	if (a != b)
		VIOLATION(r, "thread %d entered with a=%llu b=%llu (another thread is inside)",
			  w->idx, (unsigned long long)a, (unsigned long long)b);
	o = atomic_exchange_explicit(&sh->owner, w->idx + 1, memory_order_relaxed);
	if (o != 0)
		VIOLATION(r, "thread %d entered while the owner slot held thread %d",
			  w->idx, o - 1);
	rd = atomic_load_explicit(&sh->readers, memory_order_relaxed);
	if (rd != 0)
		VIOLATION(r, "writer thread %d entered with %d readers inside",
			  w->idx, rd);
	sh->a = a + 1;
}

static void cs_close(struct worker *w)
{
	struct run *r = w->run;
	struct shared *sh = &r->sh;
	uint64_t a = sh->a, b = sh->b;
	int o, rd;

	if (a != b + 1)
		VIOLATION(r, "thread %d leaving saw a=%llu b=%llu (another thread was inside)",
			  w->idx, (unsigned long long)a, (unsigned long long)b);
	rd = atomic_load_explicit(&sh->readers, memory_order_relaxed);
	if (rd != 0)
		VIOLATION(r, "writer thread %d leaving saw %d readers inside",
			  w->idx, rd);
	o = atomic_exchange_explicit(&sh->owner, 0, memory_order_relaxed);
	if (o == 0)
		VIOLATION(r, "thread %d leaving found the owner slot empty (another thread left)",
			  w->idx);
	else if (o != w->idx + 1)
		VIOLATION(r, "thread %d leaving found the owner slot held by thread %d",
			  w->idx, o - 1);
	sh->b = b + 1;
}

/* A pause inside a critical section; in a controlled run, a point at
 * which the scheduler may run another thread. */
static void cs_pause(struct worker *w)
{
	const stress_hooks_t *h = w->run->cfg->hooks;
	if (h && h->point)
		h->point();
	else
		test_cpu_relax();
}

static void cs_work(struct worker *w, int n)
{
	volatile uint64_t *data = w->run->sh.data;
	for (int i = 0; i < n; i++) {
		data[i & 7] = data[i & 7] + 1;
		cs_pause(w);
	}
}

static void cs_read_work(struct worker *w, int n)
{
	volatile uint64_t *data = w->run->sh.data;
	uint64_t sum = 0;
	for (int i = 0; i < n; i++) {
		sum += data[i & 7];
		cs_pause(w);
	}
	(void)sum;
}

/* Sometimes sleep (bounded) or yield while holding the lock. */
static void cs_maybe_block(struct worker *w)
{
	const stress_config_t *c = w->run->cfg;
	uint64_t x;

	if (!c->pct_cs_sleep && !c->pct_cs_yield)
		return;
	x = rng_below(&w->rng, 100);
	if (x < (uint64_t)c->pct_cs_sleep) {
		int max = c->cs_sleep_max_us > 0 ? c->cs_sleep_max_us : 1;
		if (max > 1000)
			max = 1000;
		int64_t ns = (int64_t)(1 + rng_below(&w->rng, (uint64_t)max)) * NSEC_PER_USEC;
		set_state(w, ST_CS_SLEEP);
		if (c->hooks && c->hooks->sleep_ns)
			c->hooks->sleep_ns(ns);
		else
			sleep_ns(ns);
	} else if (x < (uint64_t)(c->pct_cs_sleep + c->pct_cs_yield)) {
		set_state(w, ST_CS_YIELD);
		if (c->hooks && c->hooks->yield)
			c->hooks->yield();
		else
			sched_yield();
	}
	set_state(w, ST_CS);
}

static void cs_write(struct worker *w, int64_t t_acq)
{
	struct run *r = w->run;
	const stress_config_t *c = r->cfg;

	set_state(w, ST_CS);
	cs_open(w);
	cs_work(w, c->cs_work);
	cs_maybe_block(w);
	if (r->ops->relock && c->pct_relock &&
	    rng_below(&w->rng, 100) < (uint64_t)c->pct_relock) {
		int rc;
		cs_close(w);
		set_state(w, ST_RELOCK);
		rc = r->ops->relock(r->ops->obj);
		if (rc != 0 && rc != ETIMEDOUT)
			ERROR(r, "thread %d: relock returned %d (%s)", w->idx,
			      rc, strerror(rc));
		w->res.relocks++;
		set_state(w, ST_CS);
		t_acq = run_now(r);     /* the relock's wait is no stall */
		atomic_store_explicit(&r->sh.last_release_ns, 0, memory_order_relaxed);
		cs_open(w);
		cs_work(w, c->cs_work / 2);
	}
	cs_close(w);
	stall_on_release(w, t_acq);
}

static void cs_read(struct worker *w)
{
	struct run *r = w->run;
	struct shared *sh = &r->sh;
	uint64_t a, b;
	int o, rd;

	set_state(w, ST_CS);
	a = sh->a;
	b = sh->b;
	if (a != b)
		VIOLATION(r, "reader thread %d entered with a=%llu b=%llu (a writer is inside)",
			  w->idx, (unsigned long long)a, (unsigned long long)b);
	rd = atomic_fetch_add_explicit(&sh->readers, 1, memory_order_relaxed) + 1;
	if (rd > atomic_load_explicit(&sh->max_readers, memory_order_relaxed))
		atomic_store_explicit(&sh->max_readers, rd, memory_order_relaxed); /* racy max: a statistic */
	o = atomic_load_explicit(&sh->owner, memory_order_relaxed);
	if (o != 0)
		VIOLATION(r, "reader thread %d entered while writer %d held the lock",
			  w->idx, o - 1);
	cs_read_work(w, r->cfg->cs_work);
	cs_maybe_block(w);
	o = atomic_load_explicit(&sh->owner, memory_order_relaxed);
	if (o != 0)
		VIOLATION(r, "reader thread %d saw writer %d inside with it",
			  w->idx, o - 1);
	atomic_fetch_sub_explicit(&sh->readers, 1, memory_order_relaxed);
	a = sh->a;
	b = sh->b;
	if (a != b)
		VIOLATION(r, "reader thread %d leaving saw a=%llu b=%llu (a writer was inside)",
			  w->idx, (unsigned long long)a, (unsigned long long)b);
}

/* ---- the worker ---- */

enum opkind { OP_LOCK, OP_TRY, OP_TIMED };

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct run *r = w->run;
	const stress_ops_t *ops = r->ops;
	const stress_config_t *c = r->cfg;
	bool has_read = ops->rdlock && ops->rdunlock && c->pct_read > 0;

	const stress_hooks_t *h = c->hooks;
	atomic_store_explicit(&w->tid, test_gettid(), memory_order_relaxed);
	if (h) {
		/* Under the scheduler from the first call into the library. */
		pthread_barrier_wait(&r->start);
		h->thread_begin(w->idx);
		if (ops->thread_init)
			ops->thread_init(ops->obj, w->idx);
	} else {
		if (ops->thread_init)
			ops->thread_init(ops->obj, w->idx);
		pthread_barrier_wait(&r->start);
	}

	while (!atomic_load_explicit(&r->stop, memory_order_relaxed) &&
	       (!c->ops_per_thread ||
		atomic_load_explicit(&w->progress, memory_order_relaxed) <
			(uint64_t)c->ops_per_thread)) {
		bool read = has_read && rng_below(&w->rng, 100) < (uint64_t)c->pct_read;
		uint64_t x = rng_below(&w->rng, 100);
		enum opkind k = x < (uint64_t)c->pct_trylock ? OP_TRY
			: x < (uint64_t)(c->pct_trylock + c->pct_timedlock) ? OP_TIMED
			: OP_LOCK;
		int rc;
		int64_t t_acq = 0;

		set_state(w, ST_OUTSIDE);
		if (c->ncs_work > 0) {
			int n = (int)rng_below(&w->rng, (uint64_t)(2 * c->ncs_work + 1));
			for (int i = 0; i < n; i++)
				test_cpu_relax();
		}

		if (k == OP_TRY && !(read ? ops->tryrdlock : ops->trylock))
			k = OP_LOCK;
		if (k == OP_TIMED && !(read ? ops->timedrdlock : ops->timedlock))
			k = OP_LOCK;

		if (k == OP_LOCK) {
			int64_t t0;
			uint64_t waited, stall0, stalled, adj;
			set_state(w, read ? ST_RDLOCK : ST_LOCK);
			stall0 = atomic_load_explicit(&r->sh.stall_ns, memory_order_relaxed);
			t0 = run_now(r);
			rc = read ? ops->rdlock(ops->obj) : ops->lock(ops->obj);
			t_acq = run_now(r);
			w->res.locks++;
			if (rc != 0) {
				ERROR(r, "thread %d: %s returned %d (%s)", w->idx,
				      read ? "rdlock" : "lock", rc, strerror(rc));
				break;
			}
			if (!read)
				stall_on_acquire(w, t_acq);
			stalled = atomic_load_explicit(&r->sh.stall_ns, memory_order_relaxed) - stall0;
			waited = (uint64_t)(t_acq - t0);
			adj = waited > stalled ? waited - stalled : 0;
			w->res.total_wait_ns += waited;
			if (waited > w->res.worst_wait_ns) {
				w->res.worst_wait_ns = waited;
				w->res.worst_wait_stall_ns = stalled;
			}
			if (adj > w->res.worst_wait_adj_ns)
				w->res.worst_wait_adj_ns = adj;
		} else if (k == OP_TRY) {
			set_state(w, read ? ST_TRYRDLOCK : ST_TRYLOCK);
			rc = read ? ops->tryrdlock(ops->obj) : ops->trylock(ops->obj);
			w->res.trylocks++;
			if (rc == EBUSY) {
				w->res.trylock_fail++;
				atomic_fetch_add_explicit(&w->progress, 1, memory_order_relaxed);
				continue;
			}
			if (rc != 0) {
				ERROR(r, "thread %d: %s returned %d (%s), expected 0 or EBUSY",
				      w->idx, read ? "tryrdlock" : "trylock", rc, strerror(rc));
				break;
			}
		} else {
			struct timespec dl;
			int64_t now = run_now(r), dl_ns, after;
			if (rng_below(&w->rng, 10) == 0)
				dl_ns = now - 1000; /* already expired */
			else
				dl_ns = now + (int64_t)rng_below(&w->rng,
					(uint64_t)c->timed_max_us + 1) * NSEC_PER_USEC;
			dl = ns_to_ts(dl_ns);
			set_state(w, read ? ST_TIMEDRDLOCK : ST_TIMEDLOCK);
			rc = read ? ops->timedrdlock(ops->obj, &dl)
				  : ops->timedlock(ops->obj, &dl);
			w->res.timedlocks++;
			if (rc == ETIMEDOUT) {
				after = run_now(r);
				if (after < dl_ns) {
					ERROR(r, "thread %d: %s returned ETIMEDOUT %lld ns before its deadline",
					      w->idx, read ? "timedrdlock" : "timedlock",
					      (long long)(dl_ns - after));
					break;
				}
				w->res.timedlock_fail++;
				atomic_fetch_add_explicit(&w->progress, 1, memory_order_relaxed);
				continue;
			}
			if (rc != 0) {
				ERROR(r, "thread %d: %s returned %d (%s), expected 0 or ETIMEDOUT",
				      w->idx, read ? "timedrdlock" : "timedlock", rc, strerror(rc));
				break;
			}
		}

		if (read) {
			w->res.reads++;
			cs_read(w);
			set_state(w, ST_RDUNLOCK);
			rc = ops->rdunlock(ops->obj);
		} else {
			if (k != OP_LOCK) {
				t_acq = run_now(r);
				stall_on_acquire(w, t_acq);
			}
			cs_write(w, t_acq);
			set_state(w, ST_UNLOCK);
			rc = ops->unlock(ops->obj);
		}
		if (rc != 0) {
			ERROR(r, "thread %d: %s returned %d (%s)", w->idx,
			      read ? "rdunlock" : "unlock", rc, strerror(rc));
			break;
		}
		w->res.ops++;
		atomic_store_explicit(&w->ops, w->res.ops, memory_order_relaxed);
		atomic_fetch_add_explicit(&w->progress, 1, memory_order_relaxed);
	}
	set_state(w, ST_DONE);
	if (h)
		h->thread_end();
	return NULL;
}

/* ---- the watchdog ---- */

/* The lock's describe() line, the harness's owner slot and every worker's
 * state (for the watchdog, and for a controlled run's scheduler). */
static void print_run_state(void *arg)
{
	struct run *r = arg;
	const stress_ops_t *ops = r->ops;
	char buf[1024];

	if (ops->describe) {
		buf[0] = 0;
		ops->describe(ops->obj, buf, sizeof(buf));
		buf[sizeof(buf) - 1] = 0;
		fprintf(stderr, "stress: lock state: %s\n", buf);
	} else {
		fprintf(stderr, "stress: lock state: (no describe op)\n");
	}
	fprintf(stderr, "stress: harness owner slot: %d (worker index + 1, 0 = none), readers inside: %d\n",
		atomic_load(&r->sh.owner), atomic_load(&r->sh.readers));
	for (int i = 0; i < r->cfg->threads; i++) {
		struct worker *w = &r->w[i];
		int st = atomic_load_explicit(&w->state, memory_order_relaxed);
		fprintf(stderr, "stress:   thread %2d tid %u: %llu ops, %llu operations attempted, %s\n",
			i, atomic_load_explicit(&w->tid, memory_order_relaxed),
			(unsigned long long)atomic_load_explicit(&w->ops, memory_order_relaxed),
			(unsigned long long)atomic_load_explicit(&w->progress, memory_order_relaxed),
			st >= 0 && st <= ST_DONE ? state_names[st] : "?");
	}
}

static void hang_report(struct run *r, int who, int64_t stalled_ns)
{
	/* Not under report_mu: a worker stuck while holding it must not stop
	 * this report. */
	fprintf(stderr, "stress [%s%s%s]: WATCHDOG: thread %d made no progress for %lld ms "
		"(limit %d ms); the lock is stuck\n", r->ops->name,
		r->cfg->label[0] ? " " : "", r->cfg->label, who,
		(long long)(stalled_ns / NSEC_PER_MSEC), r->cfg->watchdog_ms);
	print_run_state(r);
	fprintf(stderr, "stress: FAILED: watchdog fired, exiting with status %d\n",
		STRESS_EXIT_HANG);
	fflush(stderr);
	fflush(stdout);
	_exit(STRESS_EXIT_HANG);
}

static void *watchdog_main(void *arg)
{
	struct run *r = arg;
	int n = r->cfg->threads;
	uint64_t *last = calloc((size_t)n, sizeof(*last));
	int64_t *since = calloc((size_t)n, sizeof(*since));
	int64_t limit = (int64_t)r->cfg->watchdog_ms * NSEC_PER_MSEC;

	REQUIRE(last && since, "out of memory");
	for (int i = 0; i < n; i++)
		since[i] = now_ns();

	pthread_mutex_lock(&r->watch_mu);
	while (!r->watch_stop) {
		struct timespec dl;
		int64_t now;
		clock_gettime(CLOCK_REALTIME, &dl);
		dl = ns_to_ts(ts_to_ns(&dl) + 20 * NSEC_PER_MSEC);
		pthread_cond_timedwait(&r->watch_cv, &r->watch_mu, &dl);
		if (r->watch_stop)
			break;
		now = now_ns();
		for (int i = 0; i < n; i++) {
			struct worker *w = &r->w[i];
			uint64_t p = atomic_load_explicit(&w->progress, memory_order_relaxed);
			int st = atomic_load_explicit(&w->state, memory_order_relaxed);
			if (p != last[i] || st == ST_DONE) {
				last[i] = p;
				since[i] = now;
			} else if (now - since[i] > limit) {
				hang_report(r, i, now - since[i]);
			}
		}
	}
	pthread_mutex_unlock(&r->watch_mu);
	free(last);
	free(since);
	return NULL;
}

/* ---- the run ---- */

void stress_result_free(stress_result_t *res)
{
	free(res->per_thread);
	res->per_thread = NULL;
}

void stress_print_summary(const stress_ops_t *ops, const stress_config_t *cfg,
			  const stress_result_t *res)
{
	double secs = (double)res->elapsed_ns / 1e9;
	char rd[96] = "";
	if (res->reads)
		snprintf(rd, sizeof(rd), ", %llu reads (up to %d readers inside at once)",
			 (unsigned long long)res->reads, res->max_readers);
	printf("stress [%s%s%s]: %d threads, %.0f ms, %llu ops (%.0f/s), per-thread "
	       "min/avg/max %llu/%.0f/%llu, trylock fail %llu, timedlock fail %llu, "
	       "worst wait %.2f ms (thread %d)%s, stall %.1f ms, seed 0x%llx%s\n",
	       ops->name, cfg->label[0] ? " " : "", cfg->label, res->threads,
	       secs * 1e3, (unsigned long long)res->total_ops,
	       secs > 0 ? (double)res->total_ops / secs : 0.0,
	       (unsigned long long)res->min_ops, res->avg_ops,
	       (unsigned long long)res->max_ops,
	       (unsigned long long)res->trylock_fail,
	       (unsigned long long)res->timedlock_fail,
	       (double)res->worst_wait_ns / 1e6, res->worst_wait_thread, rd,
	       (double)res->stall_ns / 1e6,
	       (unsigned long long)cfg->seed,
	       res->violations || res->errors ? "  ** FAILED **" : "");
	fflush(stdout);
}

int stress_run(const stress_ops_t *ops, const stress_config_t *cfg,
	       stress_result_t *res)
{
	struct run *r;
	int n = cfg->threads;
	int64_t t0, end;

	REQUIRE(n > 0 && ops->lock && ops->unlock, "bad stress configuration");
	REQUIRE(cfg->watchdog_ms > 0 || cfg->hooks, "watchdog_ms must be positive");
	REQUIRE(!cfg->hooks || (cfg->ops_per_thread > 0 && cfg->hooks->thread_begin &&
				cfg->hooks->thread_end && cfg->hooks->now_ns),
		"a controlled run needs ops_per_thread and the thread and clock hooks");
	memset(res, 0, sizeof(*res));

	r = aligned_alloc(64, (sizeof(*r) + 63) / 64 * 64);
	REQUIRE(r, "out of memory");
	memset(r, 0, sizeof(*r));
	r->ops = ops;
	r->cfg = cfg;
	r->w = aligned_alloc(64, (size_t)n * sizeof(struct worker));
	REQUIRE(r->w, "out of memory");
	memset(r->w, 0, (size_t)n * sizeof(struct worker));
	pthread_mutex_init(&r->report_mu, NULL);
	pthread_mutex_init(&r->watch_mu, NULL);
	pthread_cond_init(&r->watch_cv, NULL);
	REQUIRE(pthread_barrier_init(&r->start, NULL, (unsigned)n + 1) == 0, "barrier");

	for (int i = 0; i < n; i++) {
		struct worker *w = &r->w[i];
		int rc;
		w->run = r;
		w->idx = i;
		rng_seed(&w->rng, cfg->seed, (uint64_t)i + 1);
		rc = pthread_create(&w->th, NULL, worker_main, w);
		REQUIRE(rc == 0, "pthread_create: %s", strerror(rc));
	}
	if (cfg->hooks) {
		/* The scheduler watches for hangs, and reports with our view. */
		if (cfg->hooks->report_with)
			cfg->hooks->report_with(print_run_state, r);
	} else {
		REQUIRE(pthread_create(&r->watchdog, NULL, watchdog_main, r) == 0,
			"pthread_create (watchdog)");
	}

	pthread_barrier_wait(&r->start);
	t0 = now_ns();
	end = t0 + (int64_t)cfg->duration_ms * NSEC_PER_MSEC;
	/* A run by operation count ends when its workers do. */
	if (!cfg->ops_per_thread) {
		while (!atomic_load(&r->stop)) {
			int64_t left = end - now_ns();
			if (left <= 0)
				break;
			sleep_ns(left < 5 * NSEC_PER_MSEC ? left : 5 * NSEC_PER_MSEC);
		}
		atomic_store(&r->stop, 1);
	}
	for (int i = 0; i < n; i++)
		pthread_join(r->w[i].th, NULL);
	res->elapsed_ns = now_ns() - t0;

	if (!cfg->hooks) {
		pthread_mutex_lock(&r->watch_mu);
		r->watch_stop = true;
		pthread_cond_signal(&r->watch_cv);
		pthread_mutex_unlock(&r->watch_mu);
		pthread_join(r->watchdog, NULL);
	}

	res->threads = n;
	res->per_thread = calloc((size_t)n, sizeof(*res->per_thread));
	REQUIRE(res->per_thread, "out of memory");
	res->min_ops = UINT64_MAX;
	res->worst_wait_thread = -1;
	for (int i = 0; i < n; i++) {
		const stress_thread_result_t *t = &r->w[i].res;
		res->per_thread[i] = *t;
		res->total_ops += t->ops;
		if (t->ops < res->min_ops)
			res->min_ops = t->ops;
		if (t->ops > res->max_ops)
			res->max_ops = t->ops;
		res->trylock_fail += t->trylock_fail;
		res->reads += t->reads;
		res->timedlock_fail += t->timedlock_fail;
		if (res->worst_wait_thread < 0 || t->worst_wait_ns > res->worst_wait_ns) {
			res->worst_wait_ns = t->worst_wait_ns;
			res->worst_wait_thread = i;
		}
		if (t->worst_wait_adj_ns > res->worst_wait_adj_ns)
			res->worst_wait_adj_ns = t->worst_wait_adj_ns;
	}
	res->avg_ops = (double)res->total_ops / n;
	res->violations = atomic_load(&r->violations);
	res->errors = atomic_load(&r->errors);
	res->max_readers = atomic_load(&r->sh.max_readers);
	res->stall_ns = atomic_load(&r->sh.stall_ns);
	res->max_cs_ns = atomic_load(&r->sh.max_cs_ns);
	res->max_gap_ns = atomic_load(&r->sh.max_gap_ns);

	if (!cfg->quiet)
		stress_print_summary(ops, cfg, res);

	pthread_barrier_destroy(&r->start);
	pthread_cond_destroy(&r->watch_cv);
	pthread_mutex_destroy(&r->watch_mu);
	pthread_mutex_destroy(&r->report_mu);
	free(r->w);
	free(r);
	return res->violations + res->errors;
}

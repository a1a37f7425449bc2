/* SPDX-License-Identifier: MIT */
/* Stress test of hl_cond with hl_mutex through the stress harness
 * (stress.h): the harness's workers take the mutex (and check mutual
 * exclusion on every critical section, its watchdog fails a run in which a
 * worker makes no progress for HOTLOCK_WATCHDOG_MS, default 10 s, printing
 * the lock state line below and every worker's state); inside each critical
 * section the harness calls relock(), which here does the condition
 * variable work of the worker's role (the ops' thread_init gives each
 * worker its role).  The lock state line the watchdog prints is the
 * mutex's hl_mutex_describe line followed by the workload's state.
 *
 * Usage: test_stress_cond MULT
 *   MULT x the online CPU count threads (ctest runs 2, 4 and 8; and 4 with
 *   spinning off and handoff at once).  Three workloads, each for
 *   HOTLOCK_STRESS_MS (default 1500 ms, 700 ms in sanitizer builds):
 *
 *   pc     producer/consumer over a bounded queue (4 slots) with two
 *          condvars, not_full and not_empty; half the workers produce, half
 *          consume (an odd one out signals and broadcasts both condvars at
 *          random).  Waits are hl_cond_wait or a timedwait with a deadline
 *          60 s away, in a predicate loop; notifications are a signal or a
 *          broadcast, under the mutex or after releasing it.  Every item
 *          carries its producer and sequence number: on every item the
 *          consumer asserts it is the next one of that producer (none lost,
 *          none duplicated, none reordered: the queue is FIFO) and its check
 *          word; on every operation the queue invariant (0 <= count <= 4,
 *          count = produced - consumed).  The run goes in rounds of exactly
 *          N operations per worker (ops_per_thread), so that production and
 *          consumption balance and no wait needs a deadline: a lost wake-up
 *          is a hang, which the watchdog reports.  After each round: every
 *          item of every producer consumed, queue empty, nobody waiting,
 *          both condvars destroy 0, the mutex free.
 *   storm  one broadcaster, every other worker waits on a generation
 *          counter (hl_cond_wait or a far timedwait).  The broadcaster bumps
 *          the generation, broadcasts (under the mutex, or after it), and
 *          waits (on a second condvar, signalled by the last one) until
 *          every worker that waited for the old generation acknowledged the
 *          new one: a waiter the broadcast missed hangs the broadcaster,
 *          which the watchdog reports.  Each waiter asserts that it returns
 *          with exactly the next generation, and that it never returns
 *          without a new generation unless a broadcast sent after releasing
 *          the mutex (which may catch threads that began to wait after the
 *          bump) was under way: no spurious wake-up.  Rounds as for pc.
 *   timed  the harness's mix of lock (40%), trylock (30%) and timedlock
 *          (30%, 0-200 us), and in half of the critical sections: a
 *          timedwait of 1-200 us (one in ten already expired; either
 *          clock), a signal or a broadcast, all under the mutex.  Asserts
 *          on every wait: 0 or ETIMEDOUT, the mutex held again by the
 *          caller, ETIMEDOUT never before the deadline, and a 0 only when a
 *          signal or broadcast may have chosen the waiter: under the mutex
 *          the test counts the waiters and the wake-ups granted (a signal
 *          grants one while waiters outnumber grants, a broadcast one to
 *          every waiter, a timeout removes its waiter) and every return of
 *          0 must use one.  Afterwards the condvar has no waiter (destroy 0)
 *          and the mutex is free.
 * Seed: HOTLOCK_SEED (printed). */
#include "common.h"
#include "mutex_ops.h"
#include "stress.h"

#include <hotlock/hotlock.h>

#include <stdarg.h>
#include <stdatomic.h>

#define FAR_NS (60 * NSEC_PER_SEC)
#define EFAIL EPROTO            /* relock's result when a check failed */

/* Each worker's role and generator, set by thread_init. */
static _Thread_local int t_index;
static _Thread_local test_rng_t t_rng;
static _Thread_local uint64_t t_ops;    /* relock calls in this round */
static uint64_t g_seed;
static int g_round;

/* A check failed inside relock: report it (the run fails) and make every
 * waiter return (their predicates test *failed). */
static int failf(int *failed, hl_cond_t *const *cvs, int ncv, const char *wl,
		 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int failf(int *failed, hl_cond_t *const *cvs, int ncv, const char *wl,
		 const char *fmt, ...)
{
	va_list ap;
	test_failures++;
	if (!*failed) {
		fprintf(stderr, "FAIL [%s, round %d, thread %d]: ", wl, g_round, t_index);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
		fflush(stderr);
	}
	*failed = 1;
	for (int i = 0; i < ncv; i++)
		hl_cond_broadcast(cvs[i]);
	return EFAIL;
}

static void role_init(int index)
{
	t_index = index;
	t_ops = 0;
	rng_seed(&t_rng, g_seed ^ (uint64_t)g_round * 0x9e3779b97f4a7c15ull, 1000 + (uint64_t)index);
}

/* A wait of a predicate loop: hl_cond_wait, or a timedwait whose deadline
 * (60 s) never comes. */
static int wait_long(hl_cond_t *c, hl_mutex_t *m)
{
	if (rng_below(&t_rng, 4))
		return hl_cond_wait(c, m);
	clockid_t clk = rng_below(&t_rng, 2) ? CLOCK_REALTIME : CLOCK_MONOTONIC;
	struct timespec ts = deadline_in(clk, FAR_NS);
	return hl_cond_timedwait(c, m, clk, &ts);
}

/* ---- pc: producer/consumer ---- */

#define QCAP 4

struct item {
	uint32_t producer, seq;
	uint64_t check;
};

static uint64_t item_check(uint32_t p, uint32_t seq)
{
	uint64_t x = ((uint64_t)p << 32 | seq) ^ 0x5eedc0dec0ffeeull;
	return splitmix64(&x);
}

enum role { PRODUCER, CONSUMER, BYSTANDER };

struct pc {
	hl_mutex_t m;
	hl_cond_t not_full, not_empty;
	int threads, nprod;
	/* Under m (plain: ThreadSanitizer checks the mutex orders them). */
	struct item q[QCAP];
	uint64_t head, tail;            /* consumed and produced, in total */
	uint32_t *produced;             /* per producer: items produced */
	uint32_t *next;                 /* per producer: next seq expected */
	int wait_full, wait_empty;      /* threads waiting on each condvar */
	int failed;
	uint64_t waits, notifies_out;   /* statistics */
	/* For the watchdog (it reads them while m is held elsewhere). */
	atomic_ullong d_head, d_tail;
	atomic_int d_wait_full, d_wait_empty, d_failed;
};

static enum role pc_role(const struct pc *S, int index)
{
	if (index >= 2 * S->nprod)
		return BYSTANDER;
	return index % 2 ? CONSUMER : PRODUCER;
}

static void pc_diag(struct pc *S)
{
	atomic_store_explicit(&S->d_head, S->head, memory_order_relaxed);
	atomic_store_explicit(&S->d_tail, S->tail, memory_order_relaxed);
	atomic_store_explicit(&S->d_wait_full, S->wait_full, memory_order_relaxed);
	atomic_store_explicit(&S->d_wait_empty, S->wait_empty, memory_order_relaxed);
	atomic_store_explicit(&S->d_failed, S->failed, memory_order_relaxed);
}

#define PC_FAIL(S, ...)                                                      \
	failf(&(S)->failed, (hl_cond_t *const[]){ &(S)->not_full, &(S)->not_empty }, 2, \
	      "pc", __VA_ARGS__)

/* Wakes the other side: a signal or a broadcast, under m or after it. */
static int pc_notify(struct pc *S, hl_cond_t *c)
{
	uint64_t x = rng_below(&t_rng, 100);
	bool bcast = x % 5 == 4;            /* 20% */
	if (x < 70)
		return bcast ? hl_cond_broadcast(c) : hl_cond_signal(c);
	S->notifies_out++;
	pc_diag(S);
	int rc = hl_mutex_unlock(&S->m);
	if (rc)
		return rc;
	rc = bcast ? hl_cond_broadcast(c) : hl_cond_signal(c);
	int rc2 = hl_mutex_lock(&S->m);
	return rc ? rc : rc2;
}

static int pc_check_queue(struct pc *S, const char *when)
{
	uint64_t count = S->tail - S->head;
	if (S->tail < S->head || count > QCAP)
		return PC_FAIL(S, "%s: queue invariant broken: produced %llu, consumed %llu "
			       "(count %lld, capacity %d)", when, (unsigned long long)S->tail,
			       (unsigned long long)S->head, (long long)(S->tail - S->head), QCAP);
	return 0;
}

static int pc_relock(void *o)
{
	struct pc *S = o;
	enum role role = pc_role(S, t_index);
	int rc;

	t_ops++;
	if (S->failed)
		return 0;
	if ((rc = pc_check_queue(S, "entering")))
		return rc;
	if (role == PRODUCER) {
		uint32_t p = (uint32_t)t_index / 2;
		while (S->tail - S->head == QCAP && !S->failed) {
			S->wait_full++;
			S->waits++;
			pc_diag(S);
			rc = wait_long(&S->not_full, &S->m);
			S->wait_full--;
			if (rc)
				return PC_FAIL(S, "producer %u: wait on not_full returned %d (%s)", p,
					       rc, strerror(rc));
			if ((rc = pc_check_queue(S, "after a wait on not_full")))
				return rc;
		}
		if (S->failed)
			return 0;
		uint32_t seq = S->produced[p]++;
		S->q[S->tail % QCAP] = (struct item){ p, seq, item_check(p, seq) };
		S->tail++;
		rc = pc_notify(S, &S->not_empty);
	} else if (role == CONSUMER) {
		while (S->tail == S->head && !S->failed) {
			S->wait_empty++;
			S->waits++;
			pc_diag(S);
			rc = wait_long(&S->not_empty, &S->m);
			S->wait_empty--;
			if (rc)
				return PC_FAIL(S, "consumer %d: wait on not_empty returned %d (%s)",
					       t_index, rc, strerror(rc));
			if ((rc = pc_check_queue(S, "after a wait on not_empty")))
				return rc;
		}
		if (S->failed)
			return 0;
		struct item it = S->q[S->head % QCAP];
		S->head++;
		if (it.producer >= (uint32_t)S->nprod || it.check != item_check(it.producer, it.seq))
			return PC_FAIL(S, "consumer %d took a corrupt item {%u, %u, %llx}", t_index,
				       it.producer, it.seq, (unsigned long long)it.check);
		if (it.seq != S->next[it.producer])
			return PC_FAIL(S, "consumer %d took item %u of producer %u, expected %u: "
				       "%s", t_index, it.seq, it.producer, S->next[it.producer],
				       it.seq > S->next[it.producer] ? "items lost" :
				       "an item consumed twice");
		S->next[it.producer]++;
		rc = pc_notify(S, &S->not_full);
	} else {
		hl_cond_t *c = rng_below(&t_rng, 2) ? &S->not_full : &S->not_empty;
		rc = rng_below(&t_rng, 2) ? hl_cond_signal(c) : hl_cond_broadcast(c);
	}
	if (rc)
		return PC_FAIL(S, "notify or mutex call returned %d (%s)", rc, strerror(rc));
	rc = pc_check_queue(S, "leaving");
	pc_diag(S);
	return rc;
}

static int pc_describe(void *o, char *buf, size_t len)
{
	struct pc *S = o;
	char mb[512];
	unsigned long long h = atomic_load_explicit(&S->d_head, memory_order_relaxed);
	unsigned long long t = atomic_load_explicit(&S->d_tail, memory_order_relaxed);
	hl_mutex_describe(&S->m, mb, sizeof(mb));
	return snprintf(buf, len, "%s | pc round %d: produced %llu, consumed %llu, in the queue "
			"%lld of %d; waiting on not_full %d, on not_empty %d; %d producers, %d "
			"consumers%s%s", mb, g_round, t, h, (long long)(t - h), QCAP,
			atomic_load_explicit(&S->d_wait_full, memory_order_relaxed),
			atomic_load_explicit(&S->d_wait_empty, memory_order_relaxed), S->nprod,
			S->nprod, S->threads > 2 * S->nprod ? ", 1 bystander" : "",
			atomic_load_explicit(&S->d_failed, memory_order_relaxed) ? ", FAILED" : "");
}

/* ---- storm: broadcasts to waiters of a generation counter ---- */

struct storm {
	hl_mutex_t m;
	hl_cond_t cv, ack_cv;
	int threads;
	uint64_t rounds_ops;            /* N: the broadcaster's last op ends the round */
	/* Under m. */
	uint64_t gen;
	int waiting;                    /* waiters registered for the current gen */
	int expected, acks;             /* for the last bump */
	int in_flight;                  /* a broadcast after unlocking is under way */
	uint64_t outside_done;          /* such broadcasts completed */
	int done, failed;
	uint64_t wakeups, legit_extra, broadcasts;
	atomic_ullong d_gen;
	atomic_int d_waiting, d_expected, d_acks, d_done, d_failed, d_in_flight;
};

static void storm_diag(struct storm *S)
{
	atomic_store_explicit(&S->d_gen, S->gen, memory_order_relaxed);
	atomic_store_explicit(&S->d_waiting, S->waiting, memory_order_relaxed);
	atomic_store_explicit(&S->d_expected, S->expected, memory_order_relaxed);
	atomic_store_explicit(&S->d_acks, S->acks, memory_order_relaxed);
	atomic_store_explicit(&S->d_done, S->done, memory_order_relaxed);
	atomic_store_explicit(&S->d_failed, S->failed, memory_order_relaxed);
	atomic_store_explicit(&S->d_in_flight, S->in_flight, memory_order_relaxed);
}

#define STORM_FAIL(S, ...)                                                   \
	failf(&(S)->failed, (hl_cond_t *const[]){ &(S)->cv, &(S)->ack_cv }, 2, "storm", \
	      __VA_ARGS__)

static int storm_broadcaster(struct storm *S)
{
	int rc;
	S->gen++;
	S->expected = S->waiting;
	S->acks = 0;
	S->broadcasts++;
	if (rng_below(&t_rng, 10) < 7) {
		rc = hl_cond_broadcast(&S->cv);
	} else {
		S->in_flight = 1;
		storm_diag(S);
		if ((rc = hl_mutex_unlock(&S->m)))
			return STORM_FAIL(S, "unlock returned %d", rc);
		rc = hl_cond_broadcast(&S->cv);
		int rc2 = hl_mutex_lock(&S->m);
		if (rc2)
			return STORM_FAIL(S, "lock returned %d", rc2);
		S->in_flight = 0;
		S->outside_done++;
	}
	if (rc)
		return STORM_FAIL(S, "broadcast returned %d", rc);
	storm_diag(S);
	/* Every waiter of the old generation acknowledges the new one. */
	while (S->acks < S->expected && !S->failed) {
		rc = wait_long(&S->ack_cv, &S->m);
		if (rc)
			return STORM_FAIL(S, "the broadcaster's wait for acks returned %d (%s)", rc,
					  strerror(rc));
	}
	if (t_ops == S->rounds_ops) {
		S->done = 1;
		rc = hl_cond_broadcast(&S->cv);
		if (rc)
			return STORM_FAIL(S, "broadcast returned %d", rc);
	}
	storm_diag(S);
	return 0;
}

static int storm_waiter(struct storm *S)
{
	uint64_t g = S->gen;
	int rc;
	if (S->done || S->failed)
		return 0;
	S->waiting++;
	storm_diag(S);
	for (;;) {
		uint64_t od = S->outside_done;
		int inflight = S->in_flight;
		rc = wait_long(&S->cv, &S->m);
		if (rc) {
			S->waiting--;
			return STORM_FAIL(S, "waiter's wait returned %d (%s)", rc, strerror(rc));
		}
		S->wakeups++;
		if (S->gen != g || S->done || S->failed)
			break;
		/* No new generation: only a broadcast sent after its sender
		 * released the mutex may have caught this wait. */
		if (!inflight && !S->in_flight && S->outside_done == od) {
			S->waiting--;
			return STORM_FAIL(S, "spurious wake-up: a waiter of generation %llu returned "
					  "without a new generation and with no broadcast under way",
					  (unsigned long long)g);
		}
		S->legit_extra++;
	}
	S->waiting--;
	if (S->gen != g && !S->failed) {
		if (S->gen != g + 1)
			return STORM_FAIL(S, "a waiter of generation %llu returned at %llu (the "
					  "broadcaster went on without its ack)",
					  (unsigned long long)g, (unsigned long long)S->gen);
		if (++S->acks == S->expected) {
			rc = hl_cond_signal(&S->ack_cv);
			if (rc)
				return STORM_FAIL(S, "signal returned %d", rc);
		}
		if (S->acks > S->expected)
			return STORM_FAIL(S, "%d acks for generation %llu, %d waiters were "
					  "waiting for it", S->acks, (unsigned long long)S->gen,
					  S->expected);
	}
	storm_diag(S);
	return 0;
}

static int storm_relock(void *o)
{
	struct storm *S = o;
	t_ops++;
	return t_index == 0 ? storm_broadcaster(S) : storm_waiter(S);
}

static int storm_describe(void *o, char *buf, size_t len)
{
	struct storm *S = o;
	char mb[512];
	hl_mutex_describe(&S->m, mb, sizeof(mb));
	return snprintf(buf, len, "%s | storm round %d: generation %llu of %llu, %d waiters "
			"registered, acks %d of %d expected, outside broadcast %s, done %d%s", mb,
			g_round, (unsigned long long)atomic_load_explicit(&S->d_gen,
									  memory_order_relaxed),
			(unsigned long long)S->rounds_ops,
			atomic_load_explicit(&S->d_waiting, memory_order_relaxed),
			atomic_load_explicit(&S->d_acks, memory_order_relaxed),
			atomic_load_explicit(&S->d_expected, memory_order_relaxed),
			atomic_load_explicit(&S->d_in_flight, memory_order_relaxed) ? "under way" : "none",
			atomic_load_explicit(&S->d_done, memory_order_relaxed),
			atomic_load_explicit(&S->d_failed, memory_order_relaxed) ? ", FAILED" : "");
}

/* ---- timed: short timed waits among signals and broadcasts ---- */

struct timed {
	hl_mutex_t m;
	hl_cond_t cv;
	/* Under m. */
	int waiting;                    /* in a timedwait of cv */
	int granted;                    /* wake-ups signals/broadcasts may owe them */
	int failed;
	uint64_t waits, woken, timeouts, signals, broadcasts, expired;
	atomic_int d_waiting, d_granted, d_failed;
	atomic_ullong d_waits, d_woken;
};

static void timed_diag(struct timed *S)
{
	atomic_store_explicit(&S->d_waiting, S->waiting, memory_order_relaxed);
	atomic_store_explicit(&S->d_granted, S->granted, memory_order_relaxed);
	atomic_store_explicit(&S->d_failed, S->failed, memory_order_relaxed);
	atomic_store_explicit(&S->d_waits, S->waits, memory_order_relaxed);
	atomic_store_explicit(&S->d_woken, S->woken, memory_order_relaxed);
}

#define TIMED_FAIL(S, ...) \
	failf(&(S)->failed, (hl_cond_t *const[]){ &(S)->cv }, 1, "timed", __VA_ARGS__)

static int timed_relock(void *o)
{
	struct timed *S = o;
	uint64_t x = rng_below(&t_rng, 100);
	int rc;

	if (S->failed)
		return 0;
	if (x < 60) {
		clockid_t clk = rng_below(&t_rng, 2) ? CLOCK_REALTIME : CLOCK_MONOTONIC;
		int64_t dl = clock_ns(clk);
		if (rng_below(&t_rng, 10) == 0) {
			dl -= 1000;
			S->expired++;
		} else {
			dl += (int64_t)(1 + rng_below(&t_rng, 200)) * NSEC_PER_USEC;
		}
		struct timespec ts = ns_to_ts(dl);
		uint32_t me = test_gettid();
		S->waiting++;
		S->waits++;
		timed_diag(S);
		rc = hl_cond_timedwait(&S->cv, &S->m, clk, &ts);
		int64_t after = clock_ns(clk);
		uint32_t owner = hl_mutex_owner(&S->m);
		S->waiting--;
		if (owner != me)
			return TIMED_FAIL(S, "timedwait returned %d with the mutex owned by %u, not "
					  "the caller %u", rc, owner, me);
		if (rc == 0) {
			if (S->granted <= 0)
				return TIMED_FAIL(S, "timedwait returned 0 with no wake-up owed to any "
						  "waiter (a spurious or doubled wake-up)");
			S->granted--;
			S->woken++;
		} else if (rc == ETIMEDOUT) {
			if (after < dl)
				return TIMED_FAIL(S, "ETIMEDOUT %lld ns before the deadline on %s",
						  (long long)(dl - after),
						  clk == CLOCK_MONOTONIC ? "CLOCK_MONOTONIC" :
						  "CLOCK_REALTIME");
			S->timeouts++;
			if (S->granted > S->waiting)
				S->granted = S->waiting;
		} else {
			return TIMED_FAIL(S, "timedwait returned %d (%s)", rc, strerror(rc));
		}
	} else if (x < 90) {
		if (S->waiting > S->granted)
			S->granted++;
		S->signals++;
		rc = hl_cond_signal(&S->cv);
		if (rc)
			return TIMED_FAIL(S, "signal returned %d", rc);
	} else {
		S->granted = S->waiting;
		S->broadcasts++;
		rc = hl_cond_broadcast(&S->cv);
		if (rc)
			return TIMED_FAIL(S, "broadcast returned %d", rc);
	}
	timed_diag(S);
	return rc;
}

static int timed_describe(void *o, char *buf, size_t len)
{
	struct timed *S = o;
	char mb[512];
	hl_mutex_describe(&S->m, mb, sizeof(mb));
	return snprintf(buf, len, "%s | timed: %d in a timedwait, %d wake-ups owed, %llu waits, "
			"%llu woken%s", mb,
			atomic_load_explicit(&S->d_waiting, memory_order_relaxed),
			atomic_load_explicit(&S->d_granted, memory_order_relaxed),
			(unsigned long long)atomic_load_explicit(&S->d_waits, memory_order_relaxed),
			(unsigned long long)atomic_load_explicit(&S->d_woken, memory_order_relaxed),
			atomic_load_explicit(&S->d_failed, memory_order_relaxed) ? ", FAILED" : "");
}

/* ---- the ops ---- */

/* Every ops object starts with its mutex. */
static void op_thread_init(void *o, int index) { role_init(index); }

/* The mutex's ops (mutex_ops.h) on obj, whose first member is its mutex,
 * with the workload's name, relock and describe. */
static stress_ops_t cond_ops(const char *name, void *obj, int (*relock)(void *),
			     int (*describe)(void *, char *, size_t))
{
	stress_ops_t ops = mutex_stress_ops((hl_mutex_t *)obj);
	ops.name = name;
	ops.describe = describe;
	ops.relock = relock;
	ops.thread_init = op_thread_init;
	return ops;
}

/* The mutex after a run: free, no waiter left. */
static void check_mutex_free(hl_mutex_t *m, const char *what)
{
	CHECK(hl_mutex_owner(m) == 0, "%s: mutex owner %u after the run", what, hl_mutex_owner(m));
	CHECK_RC(hl_mutex_trylock(m), 0);
	CHECK_RC(hl_mutex_unlock(m), 0);
	CHECK_RC(hl_mutex_destroy(m), 0);
}

static void base_config(stress_config_t *cfg, const char *label, int threads, uint64_t seed)
{
	stress_config_default(cfg);
	cfg->label = label;
	cfg->threads = threads;
	cfg->seed = seed;
	cfg->pct_relock = 100;
	cfg->pct_cs_sleep = 1;
	cfg->cs_sleep_max_us = 50;
	cfg->pct_cs_yield = 2;
	cfg->cs_work = 20;
	cfg->quiet = 1;
}

/* ---- the workloads ---- */

static bool run_pc(int threads, uint64_t seed)
{
	const int64_t dur = (int64_t)stress_duration_ms() * NSEC_PER_MSEC;
	const int64_t t0 = now_ns();
	int ops = 64, rounds = 0;
	uint64_t items = 0, waits = 0, outside = 0;
	char label[64];
	bool ok = true;

	snprintf(label, sizeof(label), "pc x%d", threads);
	do {
		struct pc *S = calloc(1, sizeof(*S));
		REQUIRE(S, "calloc");
		S->threads = threads;
		S->nprod = threads / 2;
		S->produced = calloc((size_t)S->nprod, sizeof(uint32_t));
		S->next = calloc((size_t)S->nprod, sizeof(uint32_t));
		REQUIRE(S->produced && S->next, "calloc");
		if (rounds % 2)
			hl_cond_init(&S->not_full);   /* else calloc's zero bytes */
		stress_ops_t o = cond_ops("hl_cond+hl_mutex", S, pc_relock, pc_describe);
		stress_config_t cfg;
		stress_result_t res;
		base_config(&cfg, label, threads, seed + (uint64_t)rounds);
		cfg.ops_per_thread = ops;
		g_round = rounds;
		int64_t r0 = now_ns();
		int bad = stress_run(&o, &cfg, &res);
		int64_t took = now_ns() - r0;
		CHECK(bad == 0 && !S->failed, "%s round %d: %d violations, %d unexpected results",
		      label, rounds, res.violations, res.errors);
		if (bad == 0 && !S->failed) {
			CHECK(S->head == S->tail && S->tail == (uint64_t)S->nprod * (uint64_t)ops,
			      "%s round %d: produced %llu, consumed %llu, expected %llu each", label,
			      rounds, (unsigned long long)S->tail, (unsigned long long)S->head,
			      (unsigned long long)S->nprod * (uint64_t)ops);
			for (int p = 0; p < S->nprod; p++)
				CHECK(S->produced[p] == (uint32_t)ops && S->next[p] == (uint32_t)ops,
				      "%s round %d: producer %d produced %u, %u consumed, expected %d",
				      label, rounds, p, S->produced[p], S->next[p], ops);
			CHECK(S->wait_full == 0 && S->wait_empty == 0, "%s round %d: %d/%d still "
			      "waiting", label, rounds, S->wait_full, S->wait_empty);
			CHECK_RC(hl_cond_destroy(&S->not_full), 0);
			CHECK_RC(hl_cond_destroy(&S->not_empty), 0);
			check_mutex_free(&S->m, label);
		}
		items += S->tail;
		waits += S->waits;
		outside += S->notifies_out;
		ok = ok && bad == 0 && !S->failed && !test_failures;
		if (!ok)
			stress_print_summary(&o, &cfg, &res);
		stress_result_free(&res);
		free(S->produced);
		free(S->next);
		free(S);
		rounds++;
		ops = stress_next_round_ops(ops, took, t0 + dur - now_ns(), dur / 4);
	} while (ok && now_ns() - t0 < dur);
	printf("stress [%s]: %d rounds, %.0f ms, %llu items through a %d-slot queue by %d "
	       "producers and %d consumers, %llu waits, %llu notifications after unlocking%s\n",
	       label, rounds, (double)(now_ns() - t0) / 1e6, (unsigned long long)items, QCAP,
	       threads / 2, threads / 2, (unsigned long long)waits, (unsigned long long)outside,
	       ok ? "" : "  ** FAILED **");
	fflush(stdout);
	return ok;
}

static bool run_storm(int threads, uint64_t seed)
{
	const int64_t dur = (int64_t)stress_duration_ms() * NSEC_PER_MSEC;
	const int64_t t0 = now_ns();
	int ops = 32, rounds = 0;
	uint64_t gens = 0, wakeups = 0, extra = 0, outside = 0;
	char label[64];
	bool ok = true;

	snprintf(label, sizeof(label), "storm x%d", threads);
	do {
		struct storm *S = calloc(1, sizeof(*S));
		REQUIRE(S, "calloc");
		S->threads = threads;
		S->rounds_ops = (uint64_t)ops;
		stress_ops_t o = cond_ops("hl_cond+hl_mutex", S, storm_relock, storm_describe);
		stress_config_t cfg;
		stress_result_t res;
		base_config(&cfg, label, threads, seed + 1000 + (uint64_t)rounds);
		cfg.ops_per_thread = ops;
		g_round = rounds;
		int64_t r0 = now_ns();
		int bad = stress_run(&o, &cfg, &res);
		int64_t took = now_ns() - r0;
		CHECK(bad == 0 && !S->failed, "%s round %d: %d violations, %d unexpected results",
		      label, rounds, res.violations, res.errors);
		if (bad == 0 && !S->failed) {
			CHECK(S->gen == (uint64_t)ops && S->done && S->waiting == 0 &&
			      S->acks == S->expected, "%s round %d: generation %llu of %d, done %d, "
			      "%d waiting, acks %d of %d", label, rounds, (unsigned long long)S->gen,
			      ops, S->done, S->waiting, S->acks, S->expected);
			CHECK_RC(hl_cond_destroy(&S->cv), 0);
			CHECK_RC(hl_cond_destroy(&S->ack_cv), 0);
			check_mutex_free(&S->m, label);
		}
		gens += S->gen;
		wakeups += S->wakeups;
		extra += S->legit_extra;
		outside += S->outside_done;
		ok = ok && bad == 0 && !S->failed && !test_failures;
		if (!ok)
			stress_print_summary(&o, &cfg, &res);
		stress_result_free(&res);
		free(S);
		rounds++;
		ops = stress_next_round_ops(ops, took, t0 + dur - now_ns(), dur / 4);
	} while (ok && now_ns() - t0 < dur);
	printf("stress [%s]: %d rounds, %.0f ms, %llu broadcasts (%llu after unlocking) to %d "
	       "waiters, %llu wake-ups (%llu by a broadcast sent after unlocking, without a new "
	       "generation)%s\n", label, rounds, (double)(now_ns() - t0) / 1e6,
	       (unsigned long long)gens, (unsigned long long)outside, threads - 1,
	       (unsigned long long)wakeups, (unsigned long long)extra, ok ? "" : "  ** FAILED **");
	fflush(stdout);
	return ok;
}

static bool run_timed(int threads, uint64_t seed)
{
	struct timed *S = calloc(1, sizeof(*S));
	stress_config_t cfg;
	stress_result_t res;
	char label[64];
	bool ok;

	REQUIRE(S, "calloc");
	snprintf(label, sizeof(label), "timed x%d", threads);
	stress_ops_t o = cond_ops("hl_cond+hl_mutex", S, timed_relock, timed_describe);
	base_config(&cfg, label, threads, seed + 2000);
	cfg.pct_trylock = 30;
	cfg.pct_timedlock = 30;
	cfg.pct_relock = 50;
	cfg.quiet = 0;
	g_round = 0;
	int bad = stress_run(&o, &cfg, &res);
	CHECK(bad == 0 && !S->failed, "%s: %d violations, %d unexpected results", label,
	      res.violations, res.errors);
	ok = bad == 0 && !S->failed;
	for (int i = 0; i < threads; i++)
		CHECK(res.per_thread[i].locks + res.per_thread[i].trylocks +
		      res.per_thread[i].timedlocks > 0, "%s: thread %d completed no operation",
		      label, i);
	if (ok) {
		CHECK(S->waiting == 0, "%s: %d still waiting", label, S->waiting);
		CHECK_RC(hl_cond_destroy(&S->cv), 0);
		check_mutex_free(&S->m, label);
	}
	printf("stress [%s]: %llu timedwaits (%llu with the deadline already past): %llu woken, "
	       "%llu timed out; %llu signals, %llu broadcasts\n", label,
	       (unsigned long long)S->waits, (unsigned long long)S->expired,
	       (unsigned long long)S->woken, (unsigned long long)S->timeouts,
	       (unsigned long long)S->signals, (unsigned long long)S->broadcasts);
	fflush(stdout);
	stress_result_free(&res);
	free(S);
	return ok && !test_failures;
}

int main(int argc, char **argv)
{
	long mult = argc > 1 ? strtol(argv[1], NULL, 10) : 2;
	long cpus = online_cpus();
	int threads = (int)(mult * cpus);
	hl_config_t hc;

	REQUIRE(argc <= 2, "usage: test_stress_cond MULT");
	REQUIRE(mult > 0 && threads >= 2 && threads <= 4096, "bad multiplier %s",
		argc > 1 ? argv[1] : "");
	g_seed = test_seed(0x5eedc0d2);
	hl_config_get(&hc);
	printf("test_stress_cond: %d threads (%ldx %ld CPUs), %d ms per workload, seed 0x%llx, "
	       "spin_ns %llu, handoff_ns %llu%s\n", threads, mult, cpus, stress_duration_ms(),
	       (unsigned long long)g_seed, (unsigned long long)hc.spin_ns,
	       (unsigned long long)hc.handoff_ns, HOTLOCK_SANITIZED ? ", sanitizer build" : "");
	fflush(stdout);
	if (run_pc(threads, g_seed) && run_storm(threads, g_seed))
		run_timed(threads, g_seed);
	return test_finish("test_stress_cond");
}

/* SPDX-License-Identifier: MIT */
/* Controlled-schedule tests: the stress harness (stress.h) drives a lock of
 * the library built in the controlled-schedule mode (src/controlled.h), in
 * which one thread runs at a time, every atomic is a point where the
 * scheduler may switch threads, and time and futexes are virtual.  Each
 * schedule runs in a forked process, from a seed that decides everything:
 * the strategy (random, or PCT with depth 2 or 3), the number of threads
 * and operations, the lock's tunables (spin, handoff, CNA threshold), the
 * CPUs the library believes it has, the operation mix, spurious wake-ups.
 *
 * A schedule fails when the harness sees two threads inside (or a wrong
 * return code), when every thread is blocked for good (a lost wake-up), when
 * it does not end within a step limit (a livelock), when the library hits
 * an internal error, or when the lock is not free at the end.  The failing
 * process prints the schedule's last steps, every thread's state, the
 * lock's describe() line and the command that replays it:
 * HOTLOCK_SCHED_SEED=<seed> runs that one schedule again, step for step
 * (HOTLOCK_SCHED_TRACE=1 prints every step).  Replay is checked: the first
 * schedules run twice and must take the same steps.
 *
 *   test_sched --lock L [--schedules N] [--seed S] [--jobs J] [--max-failures F]
 *   L: mutex (FIFO queue), mutex-cna (CNA queue, 2 virtual nodes, a
 *      prioritized thread now and then), rwlock (with downgrades; the
 *      default kind, writer-preferring), rwlock-fair and rwlock-reader
 *      (the same client on the fair and reader-preferring kinds);
 *      mutex-free, mutex-cna-free, rwlock-free: the same locks freed by
 *      their last user the moment it is done (the lifetime client below:
 *      destroy must succeed, and a later access to the lock by any thread
 *      fails the schedule); mutex-signal: mutex with signals, whose
 *      handler takes a second mutex (with timed waits that give up) at any
 *      scheduling point of the interrupted thread, on its nested node; cond:
 *      hl_cond_t with its mutex, signals, broadcasts and timed waits (the
 *      semaphore client below); mutex-sem: mutexes as binary semaphores
 *      (the shim's normal mutex); channel: hl_channel, a server and 2-3
 *      clients with untimed and timed calls and a shutdown (the channel
 *      client below); swap: a ping-pong of hl_swap and timed waits; and
 *      the checker's own seeded faults: broken-excl (a lock whose test and set
 *      are two steps), broken-wake (a futex lock whose unlock can miss a
 *      sleeper), drop-wake (hl_mutex, with the scheduler losing one
 *      futex_wake in five: the kernel losing a wake-up).  A seeded fault
 *      must be caught: the run fails if none of its schedules fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hotlock/cond.h>
#include <hotlock/config.h>
#include <hotlock/futex.h>
#include <hotlock/mutex.h>
#include <hotlock/rwlock.h>
#include <hotlock/swap.h>
#include <hotlock/topology.h>

#include "atomics.h"
#include "common.h"
#include "controlled.h"
#include "shim_api.h"
#include "mutex_ops.h"
#include "rwlock_ops.h"
#include "stress.h"

enum lock_kind {
	L_MUTEX, L_MUTEX_CNA, L_RWLOCK, L_MUTEX_FREE, L_MUTEX_CNA_FREE, L_RWLOCK_FREE,
	L_MUTEX_SIGNAL, L_COND, L_MUTEX_SEM, L_CHANNEL, L_SWAP, L_RWLOCK_READER, L_RWLOCK_FAIR,
	L_RWLOCK_YIELDS, L_BROKEN_EXCL, L_BROKEN_WAKE, L_DROP_WAKE,      /* the seeded faults: last */
};

/* hl_rwlock in one of its kinds: rwlock (the default, writer-preferring),
 * rwlock-fair (HL_RWLOCK_FAIR), rwlock-reader (HL_RWLOCK_PREFER_READER),
 * rwlock-yields (HL_RWLOCK_WRITER_YIELDS, with its shortest bound, so that
 * writers yield within a schedule). */
static bool rw_kind(int k)
{
	return k == L_RWLOCK || k == L_RWLOCK_READER || k == L_RWLOCK_FAIR || k == L_RWLOCK_YIELDS;
}

static const char *const lock_names[] = {
	[L_MUTEX] = "mutex", [L_MUTEX_CNA] = "mutex-cna", [L_RWLOCK] = "rwlock",
	[L_MUTEX_FREE] = "mutex-free", [L_MUTEX_CNA_FREE] = "mutex-cna-free",
	[L_RWLOCK_FREE] = "rwlock-free", [L_MUTEX_SIGNAL] = "mutex-signal", [L_COND] = "cond",
	[L_MUTEX_SEM] = "mutex-sem", [L_CHANNEL] = "channel", [L_SWAP] = "swap",
	[L_BROKEN_EXCL] = "broken-excl", [L_BROKEN_WAKE] = "broken-wake",
	[L_DROP_WAKE] = "drop-wake", [L_RWLOCK_READER] = "rwlock-reader",
	[L_RWLOCK_FAIR] = "rwlock-fair", [L_RWLOCK_YIELDS] = "rwlock-yields",
};

/* The lifetime clients (below): the lock is freed by its last user. */
static bool lifetime(enum lock_kind k)
{
	return k == L_MUTEX_FREE || k == L_MUTEX_CNA_FREE || k == L_RWLOCK_FREE;
}

static bool seeded_fault(enum lock_kind k)
{
	return k >= L_BROKEN_EXCL;
}

/* What one schedule reports to the parent (shared memory). */
struct outcome {
	int done;
	struct hl__sched_stats st;
	int pct;
};

/* Everything a schedule does, derived from its seed. */
struct plan {
	struct hl__sched_params p;
	hl_config_t cfg;
	int ops;                /* per thread */
	int pct_trylock, pct_timed, pct_read, pct_relock, pct_sleep, pct_yield;
	int prio_thread;        /* mutex-cna: this worker is prioritized, -1: none */
};

static uint64_t mix(uint64_t x)
{
	return splitmix64(&x);
}

static void make_plan(enum lock_kind kind, uint64_t seed, struct plan *pl)
{
	test_rng_t r;
	rng_seed(&r, seed, 77);
	memset(pl, 0, sizeof(*pl));
	struct hl__sched_params *p = &pl->p;
	p->seed = seed;
	p->strategy = rng_below(&r, 2) ? HL_SCHED_PCT : HL_SCHED_RANDOM;
	p->pct_depth = 2 + (int)rng_below(&r, 2);
	p->threads = 2 + (int)rng_below(&r, 3);                 /* 2-4 */
	/* hl_rwlock and CNA: queues long enough for groups of readers and
	 * for waiters set aside on both nodes. */
	if (kind == L_MUTEX_FREE)
		p->threads = 2 + (int)rng_below(&r, 2);         /* 2-3 */
	if (kind == L_COND)
		p->threads = 2 + (int)rng_below(&r, 4);         /* 2-5 */
	if (kind == L_MUTEX_SEM)
		p->threads = 2 + (int)rng_below(&r, 3);         /* 2-4 */
	if (kind == L_CHANNEL)
		p->threads = 3 + (int)rng_below(&r, 2);         /* the server + 2-3 clients */
	if (kind == L_SWAP)
		p->threads = 2;
	if (rw_kind(kind) || kind == L_RWLOCK_FREE)
		p->threads = 3 + (int)rng_below(&r, 4);         /* 3-6 */
	if (kind == L_MUTEX_CNA || kind == L_MUTEX_CNA_FREE)
		p->threads = 4 + (int)rng_below(&r, 5);         /* 4-8 */
	pl->ops = 2 + (int)rng_below(&r, 7);                    /* 2-8 */
	/* About the steps a schedule takes (8-16 per operation, measured), so
	 * that PCT's change points fall inside it. */
	p->pct_steps = (uint64_t)(p->threads * pl->ops) * 12;
	p->max_steps = 200000;
	/* Virtual time: a step of 20-120 ns (a few atomics, a short spin),
	 * or of 0.5-8 us, so that the millisecond timers (hl_rwlock's
	 * re-check of a waiter that is due) fire within a schedule. */
	p->step_ns = rng_below(&r, 2) ? 20 + rng_below(&r, 100) : 500 + rng_below(&r, 7500);
	p->spurious_per_64k = rng_below(&r, 4) == 0 ? 200 : 0;
	static const unsigned jump[] = { 0, 1024, 4096 };      /* 1 step in 64, in 16 */
	p->jump_per_64k = jump[rng_below(&r, 3)];
	static const int cpus[] = { 1, 2, 2, 4 };
	p->cpus = cpus[rng_below(&r, 4)];
	static const uint64_t spin[] = { 0, 300, 2000 };
	static const uint64_t handoff[] = { 0, 500, 5000, 4000000 };
	static const uint64_t threshold[] = { 0, 300, 1000, 20000 };
	pl->cfg.spin_ns = spin[rng_below(&r, 3)];
	pl->cfg.handoff_ns = handoff[rng_below(&r, 4)];
	pl->cfg.cna_threshold_ns = threshold[rng_below(&r, 4)];
	pl->cfg.rwlock_yield_ns = HL_RWLOCK_YIELD_NS_MIN;
	pl->pct_trylock = 15;
	pl->pct_timed = kind == L_CHANNEL || kind == L_SWAP ? 40 : 25;
	pl->pct_read = rw_kind(kind) ? (rng_below(&r, 2) ? 50 : 80) : 0;
	pl->pct_relock = rw_kind(kind) ? 20 : 0;
	pl->pct_sleep = kind == L_MUTEX_CNA || rw_kind(kind) || kind == L_COND ? 25 : 5;  /* queues build */
	pl->pct_yield = 10;
	pl->prio_thread = kind == L_MUTEX_CNA && rng_below(&r, 2) ? (int)rng_below(&r, 4) : -1;
	if (kind == L_BROKEN_WAKE || kind == L_DROP_WAKE)
		pl->pct_timed = 0;      /* a timed wait would hide a lost wake-up */
	if (lifetime(kind)) {
		/* Heads that give up, so that releases meet abandoned
		 * nodes, and readers that are the last out. */
		pl->pct_timed = 40;
		pl->pct_read = kind == L_RWLOCK_FREE ? 50 : 0;
	}
	if (kind == L_MUTEX_CNA_FREE)
		pl->prio_thread = rng_below(&r, 2) ? (int)rng_below(&r, 4) : -1;
}

/* ---- the seeded faults ---------------------------------------------------- */

/* broken-excl: "test and set" as a load and a store. */
static _Atomic uint32_t toy_word;

static int excl_lock(void *o)
{
	for (;;) {
		if (hl__load(&toy_word, HL_ACQUIRE) == 0) {
			hl__store(&toy_word, 1, HL_RELAXED);
			return 0;
		}
		hl__cpu_yield();
	}
}

static int excl_trylock(void *o)
{
	if (hl__load(&toy_word, HL_ACQUIRE) != 0)
		return EBUSY;
	hl__store(&toy_word, 1, HL_RELAXED);
	return 0;
}

static int toy_unlock(void *o)
{
	hl__store(&toy_word, 0, HL_RELEASE);
	return 0;
}

/* broken-wake: Drepper's futex mutex (0 free, 1 locked, 2 contended) with
 * an unlock that reads the word before it stores 0, instead of exchanging
 * it: a locker that marks the word contended between the two sleeps for
 * good. */
static int wake_lock(void *o)
{
	uint32_t c = 0;
	if (hl__cas(&toy_word, &c, 1, HL_ACQUIRE))
		return 0;
	while (hl__xchg(&toy_word, 2, HL_ACQUIRE) != 0)
		hl_futex_wait((uint32_t *)&toy_word, 2, CLOCK_MONOTONIC, NULL);
	return 0;
}

static int wake_trylock(void *o)
{
	uint32_t c = 0;
	return hl__cas(&toy_word, &c, 1, HL_ACQUIRE) ? 0 : EBUSY;
}

static int wake_unlock(void *o)
{
	uint32_t was = hl__load(&toy_word, HL_RELAXED);
	hl__store(&toy_word, 0, HL_RELEASE);
	if (was == 2)
		hl_futex_wake((uint32_t *)&toy_word, 1);
	return 0;
}

static int toy_describe(void *o, char *buf, size_t len)
{
	return snprintf(buf, len, "word %u", atomic_load(&toy_word)) < 0 ? EINVAL : 0;
}

/* ---- lifetime: a lock freed the moment its last user is done ------------- */

/* mutex-free, mutex-cna-free, rwlock-free.  Each thread makes its operations
 * (lock, trylock and timed calls whose deadlines of 0-5 us make queue heads
 * give up, so that releases meet abandoned nodes; read and write sides for
 * the rwlock), then one last acquisition in which it drops its reference to
 * the lock, as a program drops its reference to an object under the
 * object's own lock.  The thread that drops the last one destroys the lock,
 * which must return 0 (nobody holds it or waits for it), and frees it
 * (hl__sched_free): a writer right after its unlock; a reader after a write
 * lock and unlock of its own, the usual way to wait until the other readers
 * have let go.  From then on any access to the lock by any thread fails the
 * schedule: a release must not touch the lock after the store that lets
 * another thread take it (docs/design.md invariant 7). */
static struct plan the_plan;
static void cna_thread_init(void *obj, int index);

struct life {
	enum lock_kind kind;
	union { hl_mutex_t m; hl_rwlock_t rw; } lock;
	_Atomic int refs;       /* threads still using the lock */
	int writers, readers;   /* inside; one thread runs at a time */
	int freed;
};

static struct life the_life;

static void life_enter(struct life *L, bool reader)
{
	if (L->writers || (!reader && L->readers))
		hl__sched_fail("two threads inside: %d writers, %d readers, and a %s entered",
			      L->writers, L->readers, reader ? "reader" : "writer");
	if (reader)
		L->readers++;
	else
		L->writers++;
}

static void life_leave(struct life *L, bool reader)
{
	if (reader)
		L->readers--;
	else
		L->writers--;
}

/* One acquisition: how = 0 lock, 1 try, 2 timed (deadline rel_ns ahead).
 * Returns 0 when held. */
static int life_acquire(struct life *L, bool reader, int how, int64_t rel_ns)
{
	struct timespec dl = ns_to_ts((int64_t)hl__sched_now_ns() + rel_ns);
	int rc;
	if (L->kind != L_RWLOCK_FREE)
		rc = how == 0 ? hl_mutex_lock(&L->lock.m) : how == 1 ? hl_mutex_trylock(&L->lock.m) :
		     hl_mutex_timedlock(&L->lock.m, CLOCK_MONOTONIC, &dl);
	else if (reader)
		rc = how == 0 ? hl_rwlock_rdlock(&L->lock.rw) : how == 1 ?
		     hl_rwlock_tryrdlock(&L->lock.rw) :
		     hl_rwlock_timedrdlock(&L->lock.rw, CLOCK_MONOTONIC, &dl);
	else
		rc = how == 0 ? hl_rwlock_wrlock(&L->lock.rw) : how == 1 ?
		     hl_rwlock_trywrlock(&L->lock.rw) :
		     hl_rwlock_timedwrlock(&L->lock.rw, CLOCK_MONOTONIC, &dl);
	int fine = how == 0 ? 0 : how == 1 ? EBUSY : ETIMEDOUT;
	if (rc && rc != fine)
		hl__sched_fail("%s returned %d", how == 0 ? "lock" : how == 1 ? "trylock" : "timedlock", rc);
	if (!rc)
		life_enter(L, reader);
	return rc;
}

static void life_release(struct life *L, bool reader)
{
	life_leave(L, reader);
	int rc = L->kind == L_RWLOCK_FREE ? hl_rwlock_unlock(&L->lock.rw) : hl_mutex_unlock(&L->lock.m);
	if (rc)
		hl__sched_fail("unlock returned %d", rc);
}

/* The last reference is gone: destroy and free the lock. */
static void life_free(struct life *L)
{
	int rc = L->kind == L_RWLOCK_FREE ? hl_rwlock_destroy(&L->lock.rw) :
		 hl_mutex_destroy(&L->lock.m);
	if (rc)
		hl__sched_fail("destroy returned %d for a lock that nobody holds or waits for "
			      "(its last user is done)", rc);
	L->freed = 1;
	hl__sched_free(&L->lock, sizeof(L->lock));
}

struct life_worker {
	int index;
	uint64_t seed;
	pthread_t th;
};

static void *life_main(void *arg)
{
	struct life_worker *w = arg;
	struct life *L = &the_life;
	const struct plan *pl = &the_plan;
	test_rng_t r;
	rng_seed(&r, w->seed, (uint64_t)w->index + 1);
	if (L->kind == L_MUTEX_CNA_FREE)
		cna_thread_init(NULL, w->index);
	hl__sched_thread_begin(w->index);
	for (int k = 0; k < pl->ops; k++) {
		bool last = k == pl->ops - 1;
		bool reader = (int)rng_below(&r, 100) < pl->pct_read;
		int pick = (int)rng_below(&r, 100);
		int how = last ? 0 : pick < pl->pct_trylock ? 1 : pick < pl->pct_trylock + pl->pct_timed ? 2 : 0;
		if (k == pl->ops - 2)
			how = 2;        /* gives up, then comes back for its last */
		int64_t rel = rng_below(&r, 10) == 0 ? -1000 : (int64_t)rng_below(&r, 5001);
		if (life_acquire(L, reader, how, rel))
			continue;
		if ((int)rng_below(&r, 100) < pl->pct_sleep)
			hl__sched_sleep_ns(1 + rng_below(&r, 3000));
		else
			hl__sched_yield();
		bool drop_last = last && atomic_fetch_sub(&L->refs, 1) == 1;
		life_release(L, reader);
		if (!drop_last)
			continue;
		if (reader) {
			/* Other readers may still hold shares: wait them
			 * out with a write hold of our own. */
			life_acquire(L, false, 0, 0);
			life_release(L, false);
		}
		life_free(L);
	}
	hl__sched_thread_end();
	return NULL;
}

static void life_describe(void *arg)
{
	struct life *L = arg;
	char buf[1024] = "(freed)";
	if (!L->freed) {
		if (L->kind == L_RWLOCK_FREE)
			hl_rwlock_describe(&L->lock.rw, buf, sizeof(buf));
		else
			hl_mutex_describe(&L->lock.m, buf, sizeof(buf));
	}
	fprintf(stderr, "hotlock-sched: lock: %s; references left %d\n", buf,
		atomic_load(&L->refs));
}

/* Runs the lifetime client for the plan; fails the schedule on any fault. */
static void life_run(enum lock_kind kind, uint64_t seed)
{
	struct life *L = &the_life;
	const struct plan *pl = &the_plan;
	memset(L, 0, sizeof(*L));
	L->kind = kind;
	atomic_store(&L->refs, pl->p.threads);
	if (kind == L_RWLOCK_FREE) {
		hl_rwlock_init(&L->lock.rw);
		hl__sched_name(&L->lock, sizeof(L->lock), "rwlock");
	} else {
		hl_mutex_init(&L->lock.m);
		if (kind == L_MUTEX_CNA_FREE) {
			REQUIRE(hl_topology_set("virtual:2") == 0, "topology");
			REQUIRE(hl_mutex_set_queue(&L->lock.m, HL_QUEUE_CNA) == 0, "queue");
		} else {
			REQUIRE(hl_mutex_set_queue(&L->lock.m, HL_QUEUE_FIFO) == 0, "queue");
		}
		hl__sched_name(&L->lock, sizeof(L->lock), "mutex");
	}
	/* The library's one-time set-up, outside the schedule. */
	REQUIRE(life_acquire(L, false, 1, 0) == 0, "set-up");
	life_release(L, false);
	hl__sched_on_failure(life_describe, L);
	struct life_worker w[HL_SCHED_MAX_THREADS];
	for (int i = 0; i < pl->p.threads; i++) {
		w[i] = (struct life_worker){ .index = i, .seed = seed };
		REQUIRE(pthread_create(&w[i].th, NULL, life_main, &w[i]) == 0, "pthread_create");
	}
	for (int i = 0; i < pl->p.threads; i++)
		pthread_join(w[i].th, NULL);
	if (!L->freed)
		hl__sched_fail("the lock was not freed: %d references left", atomic_load(&L->refs));
}

/* ---- cond: hl_cond_t with its mutex --------------------------------------- */

/* A semaphore made of hl_mutex + hl_cond, the way programs use a condvar.
 * Thread 0 makes `ops` posts for every other thread (count + 1, then a
 * signal, or a broadcast one time in four, sent under the mutex or just
 * after releasing it), sleeping or yielding now and then; the others make
 * `ops` takes each (wait while count is 0, with a timed wait of 0-5 us, or
 * passed, in pct_timed of the waits, which then waits again; then
 * count - 1).  There are as many posts as takes, so a schedule in which the
 * consumers end up blocked for good is a lost wake-up (a signal that moved
 * nobody, or a moved waiter that the mutex never woke).  Every return from
 * a wait must hold the mutex (its owner is the caller, and nobody else is
 * inside).  Then every thread waits on a second condvar, `done`, until the
 * last one comes, which destroys the first condvar (0: nobody waits or is
 * leaving it), broadcasts, unlocks, destroys `done` (which must
 * return 0: every waiter was moved) and frees it at once, while the
 * others, moved onto the mutex's queue, have still to take the mutex: from
 * then on any access to `done` fails the schedule (the header's promise
 * that a condvar may be freed once its waiters are signalled). */
struct condc {
	hl_mutex_t m;
	hl_cond_t cv;
	hl_cond_t *done;        /* freed by the last thread */
	int inside, count, finished, done_set;
};

static struct condc the_condc;

static void condc_enter(struct condc *C)
{
	if (C->inside++)
		hl__sched_fail("two threads inside the condvar's mutex");
	if (hl_mutex_owner(&C->m) != (uint32_t)syscall(SYS_gettid))
		hl__sched_fail("a thread is inside, but the mutex's owner is %u", hl_mutex_owner(&C->m));
}

static void condc_lock(struct condc *C)
{
	int rc = hl_mutex_lock(&C->m);
	if (rc)
		hl__sched_fail("lock returned %d", rc);
	condc_enter(C);
}

static void condc_unlock(struct condc *C)
{
	C->inside--;
	int rc = hl_mutex_unlock(&C->m);
	if (rc)
		hl__sched_fail("unlock returned %d", rc);
}

/* Waits on cv (C->m held): untimed, or timed with a deadline rel_ns ahead. */
static void condc_wait(struct condc *C, hl_cond_t *cv, bool timed, int64_t rel_ns)
{
	C->inside--;
	int rc;
	if (timed) {
		struct timespec dl = ns_to_ts((int64_t)hl__sched_now_ns() + rel_ns);
		rc = hl_cond_timedwait(cv, &C->m, CLOCK_MONOTONIC, &dl);
		if (rc == ETIMEDOUT)
			rc = 0;
	} else {
		rc = hl_cond_wait(cv, &C->m);
	}
	if (rc)
		hl__sched_fail("%s returned %d", timed ? "hl_cond_timedwait" : "hl_cond_wait", rc);
	condc_enter(C);
}

/* A post: count + 1, then a signal (or a broadcast, one time in four),
 * under the mutex or just after releasing it. */
static void condc_post(struct condc *C, test_rng_t *r)
{
	bool broadcast = rng_below(r, 4) == 0, after = rng_below(r, 3) == 0;
	condc_lock(C);
	C->count++;
	if (!after)
		broadcast ? hl_cond_broadcast(&C->cv) : hl_cond_signal(&C->cv);
	condc_unlock(C);
	if (after)
		broadcast ? hl_cond_broadcast(&C->cv) : hl_cond_signal(&C->cv);
}

/* A take: wait while count is 0 (timed waits give up and wait again). */
static void condc_take(struct condc *C, test_rng_t *r)
{
	const struct plan *pl = &the_plan;
	condc_lock(C);
	while (!C->count) {
		bool timed = (int)rng_below(r, 100) < pl->pct_timed;
		int64_t rel = rng_below(r, 10) == 0 ? -1000 : (int64_t)rng_below(r, 5001);
		condc_wait(C, &C->cv, timed, rel);
	}
	C->count--;
	condc_unlock(C);
}

static void *condc_main(void *arg)
{
	struct life_worker *w = arg;
	struct condc *C = &the_condc;
	const struct plan *pl = &the_plan;
	test_rng_t r;
	rng_seed(&r, w->seed, (uint64_t)w->index + 1);
	hl__sched_thread_begin(w->index);
	/* Thread 0 posts what the others take, pausing now and then. */
	int n = w->index ? pl->ops : pl->ops * (pl->p.threads - 1);
	for (int k = 0; k < n; k++) {
		if (w->index) {
			condc_take(C, &r);
			continue;
		}
		if ((int)rng_below(&r, 100) < pl->pct_sleep)
			hl__sched_sleep_ns(1 + rng_below(&r, 3000));
		else if ((int)rng_below(&r, 100) < pl->pct_yield)
			hl__sched_yield();
		condc_post(C, &r);
	}
	condc_lock(C);
	if (++C->finished == pl->p.threads) {
		/* Nobody posts or takes any more: the condvar has no waiters,
		 * and no thread is still leaving it. */
		int rc = hl_cond_destroy(&C->cv);
		if (rc)
			hl__sched_fail("destroy of the condvar returned %d after the last take",
				       rc);
		C->done_set = 1;
		hl_cond_broadcast(C->done);
		condc_unlock(C);
		rc = hl_cond_destroy(C->done);
		if (rc)
			hl__sched_fail("destroy of `done` returned %d after its broadcast", rc);
		hl__sched_free(C->done, sizeof(*C->done));
	} else {
		while (!C->done_set)
			condc_wait(C, C->done, false, 0);
		condc_unlock(C);
	}
	hl__sched_thread_end();
	return NULL;
}

static void condc_describe(void *arg)
{
	struct condc *C = arg;
	char buf[1024];
	hl_mutex_describe(&C->m, buf, sizeof(buf));
	fprintf(stderr, "hotlock-sched: mutex: %s; count %d, finished %d, inside %d\n", buf,
		C->count, C->finished, C->inside);
}

static void cond_run(uint64_t seed)
{
	struct condc *C = &the_condc;
	const struct plan *pl = &the_plan;
	static hl_cond_t done;
	memset(C, 0, sizeof(*C));
	hl_mutex_init(&C->m);
	hl_cond_init(&C->cv);
	hl_cond_init(&done);
	C->done = &done;
	REQUIRE(hl_mutex_set_queue(&C->m, HL_QUEUE_FIFO) == 0, "queue");
	hl__sched_name(&C->m, sizeof(C->m), "mutex");
	hl__sched_name(&C->cv, sizeof(C->cv), "cond");
	hl__sched_name(&done, sizeof(done), "done");
	/* The library's one-time set-up, outside the schedule. */
	REQUIRE(hl_mutex_trylock(&C->m) == 0 && hl_mutex_unlock(&C->m) == 0, "set-up");
	hl__sched_on_failure(condc_describe, C);
	struct life_worker w[HL_SCHED_MAX_THREADS];
	for (int i = 0; i < pl->p.threads; i++) {
		w[i] = (struct life_worker){ .index = i, .seed = seed };
		REQUIRE(pthread_create(&w[i].th, NULL, condc_main, &w[i]) == 0, "pthread_create");
	}
	for (int i = 0; i < pl->p.threads; i++)
		pthread_join(w[i].th, NULL);
	if (C->count)
		hl__sched_fail("count %d at the end: posts and takes do not match", C->count);
	if (hl_mutex_destroy(&C->m))
		hl__sched_fail("the mutex is busy after every thread has ended");
}

/* ---- mutex-sem: mutexes as binary semaphores (the pthread shim) ----------- */

/* What a normal pthread mutex allows and the shim gives it (shim_api.h):
 * any thread may unlock it, and its holder's relock waits for that unlock.
 * rt-tests' ptsematest ping-pongs two threads on two such mutexes, each
 * locked at the start: thread 0 posts (unlocks) s1 and waits (locks) s2,
 * thread 1 waits s1 and posts s2, `ops` rounds.  So every unlock but the
 * first of each is another thread's unlock of the mutex its waiter holds,
 * and every wait is a relock by the holder.  A third thread, if any,
 * borrows either token now and then with a timed lock of 0-5 us (or a
 * deadline passed: abandoned nodes in the queue) and gives it back at once.
 * Checked: the waiter of each round sees exactly the rounds posted before
 * (a lost post is a deadlock, a doubled one a count off).
 *
 * A third token, s3, is posted whenever it is taken: threads 2 and 3 (if
 * any) wait for it now and then (timed, as the borrows), and thread 0 posts
 * it in each round if it is held (trylock fails) without waiting for anyone
 * to see the post, so that a post can land while a waiter is still inside
 * its slow-path acquire, after it took the word and before it recorded its
 * successor in it.  Checked: s3 is not left stuck (at the end it can be
 * posted, taken and destroyed).  Only thread 0 posts s3: two unlocks of one
 * hold are undefined. */
struct semc {
	hl_mutex_t s1, s2, s3;
	int posted, taken;
};

static struct semc the_semc;

static void sem_check(int rc, const char *what)
{
	if (rc)
		hl__sched_fail("%s returned %d", what, rc);
}

static void *sem_main(void *arg)
{
	struct life_worker *w = arg;
	struct semc *S = &the_semc;
	const struct plan *pl = &the_plan;
	test_rng_t r;
	rng_seed(&r, w->seed, 300 + (uint64_t)w->index);
	hl__sched_thread_begin(w->index);
	for (int i = 0; i < pl->ops; i++) {
		if (w->index == 0) {
			/* s3: posted if held (if free, the trylock took it and
			 * the unlock gives it back). */
			hl_mutex_trylock(&S->s3);
			sem_check(hl__mutex_unlock_any(&S->s3), "post s3");
			S->posted = i + 1;
			sem_check(hl__mutex_unlock_any(&S->s1), "post s1");
			sem_check(hl__mutex_lock_any(&S->s2, NULL), "wait s2");
			if (S->taken != i + 1)
				hl__sched_fail("round %d: the other side took %d posts", i + 1, S->taken);
		} else if (w->index == 1) {
			sem_check(hl__mutex_lock_any(&S->s1, NULL), "wait s1");
			if (S->posted != i + 1)
				hl__sched_fail("round %d: woken with %d posts made", i + 1, S->posted);
			S->taken = i + 1;
			sem_check(hl__mutex_unlock_any(&S->s2), "post s2");
		} else {
			bool third = w->index == 3 || rng_below(&r, 2);
			hl_mutex_t *s = third ? &S->s3 : rng_below(&r, 2) ? &S->s1 : &S->s2;
			int64_t rel = rng_below(&r, 4) == 0 ? -1000 : (int64_t)rng_below(&r, 5001);
			struct timespec ts = ns_to_ts((int64_t)hl__sched_now_ns() + rel);
			struct hl__deadline dl;
			REQUIRE(hl__deadline_init(&dl, CLOCK_MONOTONIC, &ts) == 0, "deadline");
			int rc = hl__mutex_lock_any(s, &dl);
			if (rc == 0) {
				if (!third)     /* s3 is posted by thread 0 */
					sem_check(hl__mutex_unlock_any(s), "give back");
			} else if (rc != ETIMEDOUT)
				hl__sched_fail("borrow returned %d", rc);
		}
	}
	hl__sched_thread_end();
	return NULL;
}

static void semc_describe(void *arg)
{
	struct semc *S = arg;
	char b1[512], b2[512];
	hl_mutex_describe(&S->s1, b1, sizeof(b1));
	hl_mutex_describe(&S->s2, b2, sizeof(b2));
	fprintf(stderr, "hotlock-sched: s1: %s\nhotlock-sched: s2: %s\nposted %d taken %d\n", b1, b2,
		S->posted, S->taken);
}

static void sem_run(uint64_t seed)
{
	struct semc *S = &the_semc;
	const struct plan *pl = &the_plan;
	memset(S, 0, sizeof(*S));
	REQUIRE(hl_mutex_set_queue(&S->s1, HL_QUEUE_FIFO) == 0 &&
		hl_mutex_set_queue(&S->s2, HL_QUEUE_FIFO) == 0 &&
		hl_mutex_set_queue(&S->s3, HL_QUEUE_FIFO) == 0, "queue");
	hl__sched_name(&S->s1, sizeof(S->s1), "s1");
	hl__sched_name(&S->s2, sizeof(S->s2), "s2");
	hl__sched_name(&S->s3, sizeof(S->s3), "s3");
	/* Both start locked, by a thread that is neither side. */
	REQUIRE(hl_mutex_lock(&S->s1) == 0 && hl_mutex_lock(&S->s2) == 0, "set-up");
	hl__sched_on_failure(semc_describe, S);
	struct life_worker w[HL_SCHED_MAX_THREADS];
	for (int i = 0; i < pl->p.threads; i++) {
		w[i] = (struct life_worker){ .index = i, .seed = seed };
		REQUIRE(pthread_create(&w[i].th, NULL, sem_main, &w[i]) == 0, "pthread_create");
	}
	for (int i = 0; i < pl->p.threads; i++)
		pthread_join(w[i].th, NULL);
	if (S->taken != pl->ops)
		hl__sched_fail("%d of %d rounds", S->taken, pl->ops);
	/* Each is held (by its last waiter; s3 maybe not): unlock, and
	 * nothing is left. */
	if (hl__mutex_unlock_any(&S->s1) || hl__mutex_unlock_any(&S->s2) ||
	    hl__mutex_unlock_any(&S->s3) || hl_mutex_destroy(&S->s1) ||
	    hl_mutex_destroy(&S->s2) || hl_mutex_destroy(&S->s3))
		hl__sched_fail("a semaphore is busy after every thread has ended");
}

/* ---- channel: hl_channel, a server and its clients ------------------------ */

/* Thread 0 is the server: hl_channel_receive, then for each call it takes a
 * response made from the request, after a yield or a short sleep now and
 * then (so that timed calls give up while they are served), replied with
 * hl_channel_reply_receive (or, one time in four, hl_channel_reply and
 * hl_channel_receive); its receives are timed in some schedules (0-5 us,
 * retried on ETIMEDOUT).  ECANCELED from a reply counts a call whose
 * client gave up.  The others are clients: `ops` calls each, pct_timed of
 * them timed (0-5 us, or passed).  In half the schedules one client shuts
 * the channel down before one of its calls; the last client to finish
 * always does, which ends the server's loop (ESHUTDOWN).
 *
 * Checked: a call that returns 0 has the response to its own request (a
 * response names its request), and the server took that request once; a
 * call that fails leaves *resp alone; ETIMEDOUT only from a timed call,
 * ESHUTDOWN only once a shutdown has begun and only for a request the
 * server never took; the server takes each request at most once; at the
 * end, its successful replies are the calls that returned 0, its ECANCELED
 * replies the timed-out calls it had taken, every request it took was
 * replied to or refused, and the channel is empty (destroy returns 0).  A
 * lost wake-up leaves a thread blocked for good, and a record written after
 * its call returned shows up as a wrong response, a count off (the record's
 * stack slot is the client's next call) or a smashed stack (the process
 * dies: the schedule fails all the same). */
#define CHAN_MAX_OPS 8
#define CHAN_MAX_CLIENTS 3

struct chan_req {
	int client, k;
};

enum { CALL_NONE, CALL_OK, CALL_TIMEDOUT, CALL_SHUTDOWN };

struct chanc {
	hl_channel_t ch;
	struct chan_req req[CHAN_MAX_CLIENTS][CHAN_MAX_OPS];
	int resp[CHAN_MAX_CLIENTS][CHAN_MAX_OPS];       /* a response: its address */
	int taken[CHAN_MAX_CLIENTS][CHAN_MAX_OPS];      /* times the server took it */
	int outcome[CHAN_MAX_CLIENTS][CHAN_MAX_OPS];
	bool timed[CHAN_MAX_CLIENTS][CHAN_MAX_OPS];
	int replied, cancelled, took, timeouts, clients_done;
	bool shut_begun;
	int early_client, early_k;      /* shuts down before this call; -1: none */
	bool recv_timed;
};

static struct chanc the_chanc;

static void chan_shutdown(struct chanc *C)
{
	C->shut_begun = true;
	int rc = hl_channel_shutdown(&C->ch);
	if (rc)
		hl__sched_fail("hl_channel_shutdown returned %d", rc);
}

/* A receive for the server: 0 with *req, or ESHUTDOWN. */
static int chan_receive(struct chanc *C, test_rng_t *r, void **req)
{
	for (;;) {
		int rc;
		bool timed = C->recv_timed && rng_below(r, 2);
		if (timed) {
			int64_t rel = rng_below(r, 8) == 0 ? -1000 : (int64_t)rng_below(r, 5001);
			struct timespec dl = ns_to_ts((int64_t)hl__sched_now_ns() + rel);
			rc = hl_channel_receive(&C->ch, req, CLOCK_MONOTONIC, &dl);
		} else {
			rc = hl_channel_receive(&C->ch, req, CLOCK_MONOTONIC, NULL);
		}
		if (rc == ETIMEDOUT && timed)
			continue;
		if (rc && rc != ESHUTDOWN)
			hl__sched_fail("hl_channel_receive returned %d", rc);
		return rc;
	}
}

/* The server took req: checks it and makes its response. */
static void *chan_took(struct chanc *C, void *req)
{
	struct chan_req *q = req;
	if (!q || q->client < 0 || q->client >= CHAN_MAX_CLIENTS || q->k < 0 ||
	    q->k >= CHAN_MAX_OPS || q != &C->req[q->client][q->k])
		hl__sched_fail("the server received %p, not a request", req);
	if (C->taken[q->client][q->k]++)
		hl__sched_fail("the server took request %d.%d twice", q->client, q->k);
	C->took++;
	return &C->resp[q->client][q->k];
}

static void chan_server(struct chanc *C, test_rng_t *r)
{
	const struct plan *pl = &the_plan;
	void *req;
	int rc = chan_receive(C, r, &req);
	while (!rc) {
		void *resp = chan_took(C, req);
		if ((int)rng_below(r, 100) < pl->pct_sleep)
			hl__sched_sleep_ns(1 + rng_below(r, 3000));
		else if ((int)rng_below(r, 100) < pl->pct_yield)
			hl__sched_yield();
		bool two_calls = rng_below(r, 4) == 0;
		bool timed = !two_calls && C->recv_timed && rng_below(r, 2);
		if (two_calls) {
			rc = hl_channel_reply(&C->ch, resp);
		} else if (timed) {
			int64_t rel = rng_below(r, 8) == 0 ? -1000 : (int64_t)rng_below(r, 5001);
			struct timespec dl = ns_to_ts((int64_t)hl__sched_now_ns() + rel);
			rc = hl_channel_reply_receive(&C->ch, resp, &req, CLOCK_MONOTONIC, &dl);
		} else {
			rc = hl_channel_reply_receive(&C->ch, resp, &req, CLOCK_MONOTONIC, NULL);
		}
		if (rc == ECANCELED) {
			C->cancelled++;
			rc = chan_receive(C, r, &req);
			continue;
		}
		if (rc == EPERM || (two_calls && rc))
			hl__sched_fail("the reply returned %d", rc);
		C->replied++;
		if (two_calls || (rc == ETIMEDOUT && timed))
			rc = chan_receive(C, r, &req);
		else if (rc && rc != ESHUTDOWN)
			hl__sched_fail("hl_channel_reply_receive returned %d", rc);
	}
}

static void chan_client(struct chanc *C, int me, test_rng_t *r)
{
	const struct plan *pl = &the_plan;
	int c = me - 1;
	for (int k = 0; k < pl->ops; k++) {
		if (me == C->early_client && k == C->early_k)
			chan_shutdown(C);
		void *sentinel = &C->outcome, *resp = sentinel;
		bool timed = (int)rng_below(r, 100) < pl->pct_timed;
		C->timed[c][k] = timed;
		int rc;
		if (timed) {
			int64_t rel = rng_below(r, 10) == 0 ? -1000 : (int64_t)rng_below(r, 5001);
			struct timespec dl = ns_to_ts((int64_t)hl__sched_now_ns() + rel);
			rc = hl_channel_call_timed(&C->ch, &C->req[c][k], &resp, CLOCK_MONOTONIC, &dl);
		} else {
			rc = hl_channel_call(&C->ch, &C->req[c][k], &resp);
		}
		if (rc == 0) {
			if (resp != &C->resp[c][k])
				hl__sched_fail("call %d.%d returned %p, not the response to its request (%p)",
					      c, k, resp, (void *)&C->resp[c][k]);
			if (C->taken[c][k] != 1)
				hl__sched_fail("call %d.%d returned 0, but the server took it %d times",
					      c, k, C->taken[c][k]);
			C->outcome[c][k] = CALL_OK;
			continue;
		}
		if (resp != sentinel)
			hl__sched_fail("call %d.%d returned %d and set *resp", c, k, rc);
		if (rc == ETIMEDOUT && timed) {
			C->outcome[c][k] = CALL_TIMEDOUT;
			C->timeouts++;
		} else if (rc == ESHUTDOWN && C->shut_begun) {
			if (C->taken[c][k])
				hl__sched_fail("call %d.%d returned ESHUTDOWN, but the server took it", c, k);
			C->outcome[c][k] = CALL_SHUTDOWN;
		} else {
			hl__sched_fail("%s call %d.%d returned %d%s", timed ? "a timed" : "an untimed", c, k,
				      rc, rc == ESHUTDOWN ? " before any shutdown" : "");
		}
	}
	if (++C->clients_done == the_plan.p.threads - 1)
		chan_shutdown(C);
}

static void *chan_main(void *arg)
{
	struct life_worker *w = arg;
	struct chanc *C = &the_chanc;
	test_rng_t r;
	rng_seed(&r, w->seed, 500 + (uint64_t)w->index);
	hl__sched_thread_begin(w->index);
	if (w->index == 0)
		chan_server(C, &r);
	else
		chan_client(C, w->index, &r);
	hl__sched_thread_end();
	return NULL;
}

static void chan_describe(void *arg)
{
	struct chanc *C = arg;
	char buf[512];
	hl_mutex_describe(&C->ch.lock_, buf, sizeof(buf));
	fprintf(stderr, "hotlock-sched: channel: mutex %s; first %p last %p current %p, "
		"server_waiting %u closed %u receiving %u current_gone %u, server point %u; "
		"took %d replied %d cancelled %d timeouts %d, clients done %d, early shutdown "
		"%d.%d, timed receives %d\n", buf, C->ch.first_, C->ch.last_, C->ch.current_,
		C->ch.server_waiting_, C->ch.closed_, C->ch.receiving_, C->ch.current_gone_,
		C->ch.server_.state_, C->took, C->replied, C->cancelled, C->timeouts,
		C->clients_done, C->early_client, C->early_k, C->recv_timed);
}

static void chan_run(uint64_t seed)
{
	struct chanc *C = &the_chanc;
	const struct plan *pl = &the_plan;
	test_rng_t r;
	rng_seed(&r, seed, 499);
	memset(C, 0, sizeof(*C));
	REQUIRE(pl->ops <= CHAN_MAX_OPS && pl->p.threads - 1 <= CHAN_MAX_CLIENTS, "plan");
	REQUIRE(hl_channel_init(&C->ch) == 0, "init");
	REQUIRE(hl_mutex_set_queue(&C->ch.lock_, HL_QUEUE_FIFO) == 0, "queue");
	for (int c = 0; c < CHAN_MAX_CLIENTS; c++)
		for (int k = 0; k < CHAN_MAX_OPS; k++)
			C->req[c][k] = (struct chan_req){ c, k };
	C->early_client = rng_below(&r, 2) ? 1 + (int)rng_below(&r, (uint64_t)pl->p.threads - 1) : -1;
	C->early_k = (int)rng_below(&r, (uint64_t)pl->ops);
	C->recv_timed = rng_below(&r, 2);
	hl__sched_name(&C->ch, sizeof(C->ch), "channel");
	/* The library's one-time set-up, outside the schedule. */
	REQUIRE(hl_mutex_trylock(&C->ch.lock_) == 0 && hl_mutex_unlock(&C->ch.lock_) == 0, "set-up");
	hl__sched_on_failure(chan_describe, C);
	struct life_worker w[HL_SCHED_MAX_THREADS];
	for (int i = 0; i < pl->p.threads; i++) {
		w[i] = (struct life_worker){ .index = i, .seed = seed };
		REQUIRE(pthread_create(&w[i].th, NULL, chan_main, &w[i]) == 0, "pthread_create");
	}
	for (int i = 0; i < pl->p.threads; i++)
		pthread_join(w[i].th, NULL);
	int ok = 0, taken_timedout = 0, taken = 0;
	for (int c = 0; c < pl->p.threads - 1; c++) {
		for (int k = 0; k < pl->ops; k++) {
			int o = C->outcome[c][k];
			taken += C->taken[c][k];
			if (o == CALL_NONE)
				hl__sched_fail("call %d.%d never returned", c, k);
			ok += o == CALL_OK;
			taken_timedout += o == CALL_TIMEDOUT && C->taken[c][k];
		}
	}
	if (C->replied != ok)
		hl__sched_fail("the server replied %d times, and %d calls returned 0", C->replied, ok);
	if (C->cancelled != taken_timedout)
		hl__sched_fail("the server's replies were refused %d times, and %d calls timed out "
			      "after it took them", C->cancelled, taken_timedout);
	if (taken != C->took || C->took != C->replied + C->cancelled)
		hl__sched_fail("the server took %d requests (%d counted), replied %d, refused %d",
			      C->took, taken, C->replied, C->cancelled);
	int rc = hl_channel_destroy(&C->ch);
	if (rc)
		hl__sched_fail("hl_channel_destroy returned %d after every thread has ended", rc);
}

/* ---- swap: a ping-pong on two wait points ---------------------------------- */

/* Two threads pass a ball back and forth `ops` times: thread 0 writes an
 * odd value and swaps (wakes thread 1's point, waits on its own), thread 1
 * waits, checks the odd value, writes the next even one and swaps back (its
 * last turn only wakes).  pct_timed of the swaps and waits are timed
 * (hl_swap_timed, hl_wait_self_timed, 0-5 us or passed); a timed wait that
 * returns ETIMEDOUT waits again (the wake it waits for is kept for it),
 * timed at most 3 times in a row.  Checked: every wait that returns 0
 * finds the value its peer wrote before the wake (a wait that returns with
 * no wake, or a wake taken twice, shows as a wrong value; a lost wake
 * leaves a thread blocked for good); at the end no wake is left on either
 * point (a timed wait with a deadline passed returns ETIMEDOUT), and both
 * points destroy with 0. */
struct swapc {
	hl_swap_point_t pt[2];
	int ball;
	int waits, timeouts, wakes;
};

static struct swapc the_swapc;

/* Waits on pt[me] until it returns 0 (the first try may be a swap). */
static void swap_wait(struct swapc *S, int me, test_rng_t *r, bool swap)
{
	const struct plan *pl = &the_plan;
	int timed_tries = 0;
	for (;;) {
		bool timed = timed_tries < 3 && (int)rng_below(r, 100) < pl->pct_timed;
		int64_t rel = rng_below(r, 8) == 0 ? -1000 : (int64_t)rng_below(r, 5001);
		struct timespec dl = ns_to_ts((int64_t)hl__sched_now_ns() + rel);
		int rc;
		if (swap) {
			S->wakes++;
			rc = timed ? hl_swap_timed(&S->pt[1 - me], &S->pt[me], CLOCK_MONOTONIC, &dl)
				   : hl_swap(&S->pt[1 - me], &S->pt[me]);
		} else {
			rc = timed ? hl_wait_self_timed(&S->pt[me], CLOCK_MONOTONIC, &dl)
				   : hl_wait_self(&S->pt[me]);
		}
		swap = false;
		if (rc == 0)
			break;
		if (rc != ETIMEDOUT || !timed)
			hl__sched_fail("thread %d: %s returned %d", me, timed ? "a timed wait" : "a wait", rc);
		S->timeouts++;
		timed_tries++;
	}
	S->waits++;
}

static void *swap_main(void *arg)
{
	struct life_worker *w = arg;
	struct swapc *S = &the_swapc;
	const struct plan *pl = &the_plan;
	int me = w->index;
	test_rng_t r;
	rng_seed(&r, w->seed, 700 + (uint64_t)me);
	hl__sched_thread_begin(me);
	if (me == 1)
		swap_wait(S, me, &r, false);
	for (int i = 0; i < pl->ops; i++) {
		if (me == 0) {
			S->ball = 2 * i + 1;
			swap_wait(S, me, &r, true);
			if (S->ball != 2 * i + 2)
				hl__sched_fail("round %d: thread 0 woke to ball %d, not %d", i, S->ball, 2 * i + 2);
		} else {
			if (S->ball != 2 * i + 1)
				hl__sched_fail("round %d: thread 1 woke to ball %d, not %d", i, S->ball, 2 * i + 1);
			S->ball = 2 * i + 2;
			if (i < pl->ops - 1) {
				swap_wait(S, me, &r, true);
			} else {
				S->wakes++;
				if (hl_wake(&S->pt[0]))
					hl__sched_fail("hl_wake failed");
			}
		}
		if ((int)rng_below(&r, 100) < pl->pct_yield)
			hl__sched_yield();
	}
	/* Every wake made to this point has been taken: none is left. */
	struct timespec past = ns_to_ts((int64_t)hl__sched_now_ns() - 1000);
	int rc = hl_wait_self_timed(&S->pt[me], CLOCK_MONOTONIC, &past);
	if (rc != ETIMEDOUT)
		hl__sched_fail("thread %d: a wait at the end returned %d: a wake was left over", me, rc);
	hl__sched_thread_end();
	return NULL;
}

static void swap_describe(void *arg)
{
	struct swapc *S = arg;
	fprintf(stderr, "hotlock-sched: swap: points %u %u, ball %d, waits %d, timeouts %d, "
		"wakes %d\n", S->pt[0].state_, S->pt[1].state_, S->ball, S->waits, S->timeouts,
		S->wakes);
}

static void swap_run(uint64_t seed)
{
	struct swapc *S = &the_swapc;
	const struct plan *pl = &the_plan;
	memset(S, 0, sizeof(*S));
	REQUIRE(hl_swap_point_init(&S->pt[0]) == 0 && hl_swap_point_init(&S->pt[1]) == 0, "init");
	hl__sched_name(&S->pt[0], sizeof(S->pt[0]), "point0");
	hl__sched_name(&S->pt[1], sizeof(S->pt[1]), "point1");
	hl__sched_on_failure(swap_describe, S);
	struct life_worker w[2];
	for (int i = 0; i < 2; i++) {
		w[i] = (struct life_worker){ .index = i, .seed = seed };
		REQUIRE(pthread_create(&w[i].th, NULL, swap_main, &w[i]) == 0, "pthread_create");
	}
	for (int i = 0; i < 2; i++)
		pthread_join(w[i].th, NULL);
	if (S->waits != 2 * pl->ops || S->wakes != 2 * pl->ops || S->ball != 2 * pl->ops)
		hl__sched_fail("%d waits, %d wakes, ball %d for %d rounds", S->waits, S->wakes, S->ball,
			      pl->ops);
	if (hl_swap_point_destroy(&S->pt[0]) || hl_swap_point_destroy(&S->pt[1]))
		hl__sched_fail("a point is busy after both threads have ended");
}

/* ---- signals: a handler that locks a second mutex ------------------------ */

/* mutex-signal: the stress harness on the_mutex, and at any scheduling
 * point a thread may be interrupted by a handler that takes sig_mutex, with
 * lock or with a timed call whose deadline (0-5 us, or passed) often makes
 * it give up and leave its node in sig_mutex's queue.  The interrupted
 * thread may be anywhere in the_mutex's code, its own wait included; the
 * handler waits on the next nesting level's node (src/thread.h). */
static hl_mutex_t sig_mutex;
static int sig_inside;          /* handlers inside sig_mutex */
static __thread uint64_t sig_count;

static void sig_handler(void)
{
	uint64_t k = ++sig_count;
	int rc;
	if (k % 2) {
		int64_t rel = k % 5 == 0 ? -1000 : (int64_t)(k * 977 % 5001);
		struct timespec dl = ns_to_ts((int64_t)hl__sched_now_ns() + rel);
		rc = hl_mutex_timedlock(&sig_mutex, CLOCK_MONOTONIC, &dl);
		if (rc == ETIMEDOUT)
			return;
	} else {
		rc = hl_mutex_lock(&sig_mutex);
	}
	if (rc)
		hl__sched_fail("the handler's lock of the second mutex returned %d", rc);
	if (sig_inside++)
		hl__sched_fail("two handlers inside the second mutex");
	hl__sched_yield();
	sig_inside--;
	if ((rc = hl_mutex_unlock(&sig_mutex)))
		hl__sched_fail("the handler's unlock returned %d", rc);
}

/* ---- one schedule, in a child process ------------------------------------- */

static hl_mutex_t the_mutex;
static hl_rwlock_t the_rwlock;

static void sched_sleep(int64_t ns) { hl__sched_sleep_ns((uint64_t)ns); }
static int64_t sched_now(void) { return (int64_t)hl__sched_now_ns(); }
static void sched_failed(const char *msg) { hl__sched_fail("%s", msg); }

static void print_lock(void *arg)
{
	const stress_ops_t *ops = arg;
	char buf[1024] = "";
	if (ops->describe)
		ops->describe(ops->obj, buf, sizeof(buf));
	fprintf(stderr, "hotlock-sched: lock: %s\n", buf);
}

static void (*print_run)(void *);
static void *print_run_arg;

static void report_with(void (*print)(void *run), void *run)
{
	print_run = print;
	print_run_arg = run;
}

static void on_failure(void *arg)
{
	if (print_run)
		print_run(print_run_arg);
	else
		print_lock(arg);
}

static void cna_thread_init(void *obj, int index)
{
	hl_topology_set_thread_node(index % 2);
	if (index == the_plan.prio_thread)
		hl_thread_set_prioritized(1);
}

/* relock for hl_rwlock: downgrade the write hold, drop the read hold, take
 * the write lock again. */
static int rwlock_relock(void *o)
{
	int rc = hl_rwlock_downgrade(o);
	if (!rc)
		rc = hl_rwlock_unlock(o);
	if (!rc)
		rc = hl_rwlock_wrlock(o);
	return rc;
}

static void describe_plan(enum lock_kind kind, const struct plan *pl, char *buf, size_t len)
{
	snprintf(buf, len, "%s, %s%s, %d threads x %d ops, spin %" PRIu64 " ns, handoff %" PRIu64
		 " ns, cna threshold %" PRIu64 " ns, %d cpus, step %" PRIu64 " ns%s%s%s",
		 lock_names[kind], pl->p.strategy == HL_SCHED_PCT ? "pct depth " : "random",
		 pl->p.strategy == HL_SCHED_PCT ? (pl->p.pct_depth == 2 ? "2" : "3") : "",
		 pl->p.threads, pl->ops, pl->cfg.spin_ns, pl->cfg.handoff_ns,
		 pl->cfg.cna_threshold_ns, pl->p.cpus, pl->p.step_ns,
		 pl->p.spurious_per_64k ? ", spurious wake-ups" : "",
		 pl->p.jump_per_64k ? ", time jumps" : "",
		 pl->prio_thread >= 0 ? ", a prioritized thread" : "");
}

static _Noreturn void run_child(enum lock_kind kind, uint64_t seed, bool trace,
				const char *argv0, struct outcome *out)
{
	struct plan *pl = &the_plan;
	char replay[1024], what[256];
	make_plan(kind, seed, pl);
	describe_plan(kind, pl, what, sizeof(what));
	snprintf(replay, sizeof(replay), "HOTLOCK_SCHED_SEED=0x%" PRIx64 " %s --lock %s   (%s)",
		 seed, argv0, lock_names[kind], what);
	pl->p.replay = replay;
	pl->p.trace = trace;
	if (kind == L_DROP_WAKE)
		pl->p.drop_wake_per_64k = 13107;        /* one in five */
	alarm(60);              /* a hang of the scheduler itself */

	hl__sched_init(&pl->p);
	REQUIRE(hl_config_set(&pl->cfg) == 0, "hl_config_set");

	stress_ops_t ops;
	if (lifetime(kind)) {
		life_run(kind, seed);
		goto passed;
	}
	if (kind == L_COND) {
		cond_run(seed);
		goto passed;
	}
	if (kind == L_MUTEX_SEM) {
		sem_run(seed);
		goto passed;
	}
	if (kind == L_CHANNEL) {
		chan_run(seed);
		goto passed;
	}
	if (kind == L_SWAP) {
		swap_run(seed);
		goto passed;
	}
	switch (kind) {
	case L_MUTEX:
	case L_DROP_WAKE:
	case L_MUTEX_CNA:
	case L_MUTEX_SIGNAL:
		hl_mutex_init(&the_mutex);
		ops = mutex_stress_ops(&the_mutex);
		if (kind == L_MUTEX_CNA) {
			REQUIRE(hl_topology_set("virtual:2") == 0, "topology");
			REQUIRE(hl_mutex_set_queue(&the_mutex, HL_QUEUE_CNA) == 0, "queue");
			ops.thread_init = cna_thread_init;
		} else {
			REQUIRE(hl_mutex_set_queue(&the_mutex, HL_QUEUE_FIFO) == 0, "queue");
		}
		hl__sched_name(&the_mutex, sizeof(the_mutex), "mutex");
		break;
	case L_RWLOCK:
	case L_RWLOCK_READER:
	case L_RWLOCK_FAIR:
	case L_RWLOCK_YIELDS:
		hl_rwlock_init_kind(&the_rwlock, kind == L_RWLOCK_READER   ? HL_RWLOCK_PREFER_READER
						 : kind == L_RWLOCK_FAIR   ? HL_RWLOCK_FAIR
						 : kind == L_RWLOCK_YIELDS ? HL_RWLOCK_WRITER_YIELDS
									   : HL_RWLOCK_PREFER_WRITER);
		ops = rwlock_stress_ops(&the_rwlock);
		ops.relock = rwlock_relock;
		hl__sched_name(&the_rwlock, sizeof(the_rwlock), "rwlock");
		break;
	default:        /* L_BROKEN_EXCL, L_BROKEN_WAKE */
		ops = (stress_ops_t){
			.name = lock_names[kind], .obj = &toy_word,
			.lock = kind == L_BROKEN_EXCL ? excl_lock : wake_lock,
			.trylock = kind == L_BROKEN_EXCL ? excl_trylock : wake_trylock,
			.unlock = kind == L_BROKEN_EXCL ? toy_unlock : wake_unlock,
			.describe = toy_describe,
		};
		hl__sched_name(&toy_word, sizeof(toy_word), "word");
		break;
	}
	/* The library's one-time set-up (thread records, arenas) happens here,
	 * outside the schedule. */
	if (ops.trylock(ops.obj) == 0)
		ops.unlock(ops.obj);
	hl__sched_on_failure(on_failure, &ops);
	if (kind == L_MUTEX_SIGNAL) {
		hl_mutex_init(&sig_mutex);
		REQUIRE(hl_mutex_set_queue(&sig_mutex, HL_QUEUE_FIFO) == 0, "queue");
		hl__sched_name(&sig_mutex, sizeof(sig_mutex), "sigmutex");
		hl__sched_set_signal(sig_handler, 4096);        /* 1 step in 16 */
	}

	stress_hooks_t hooks = {
		.thread_begin = hl__sched_thread_begin,
		.thread_end = hl__sched_thread_end,
		.now_ns = sched_now,
		.point = hl__sched_yield,
		.sleep_ns = sched_sleep,
		.yield = hl__sched_yield,
		.failed = sched_failed,
		.report_with = report_with,
	};
	stress_config_t cfg;
	stress_config_default(&cfg);
	cfg.label = "controlled";
	cfg.threads = pl->p.threads;
	cfg.ops_per_thread = pl->ops;
	cfg.hooks = &hooks;
	cfg.seed = seed;
	cfg.quiet = 1;
	cfg.pct_trylock = pl->pct_trylock;
	cfg.pct_timedlock = pl->pct_timed;
	cfg.timed_max_us = 5;
	cfg.pct_read = pl->pct_read;
	cfg.pct_relock = pl->pct_relock;
	cfg.pct_cs_sleep = pl->pct_sleep;
	cfg.cs_sleep_max_us = 3;
	cfg.pct_cs_yield = pl->pct_yield;
	cfg.cs_work = 2;
	cfg.ncs_work = 0;

	stress_result_t res;
	int bad = stress_run(&ops, &cfg, &res);
	if (bad)
		hl__sched_fail("the harness reported %d failures", bad);
	/* The end state: the lock is free. */
	if (ops.trylock(ops.obj) != 0)
		hl__sched_fail("the lock is not free after every thread has ended");
	ops.unlock(ops.obj);
	if (kind == L_MUTEX_SIGNAL && hl_mutex_destroy(&sig_mutex) != 0)
		hl__sched_fail("the handlers' mutex is not free after every thread has ended");
	stress_result_free(&res);
passed:
	hl__sched_stats(&out->st);
	out->pct = pl->p.strategy == HL_SCHED_PCT;
	out->done = 1;
	if (trace || getenv("HOTLOCK_SCHED_SEED"))
		fprintf(stderr, "test_sched: seed 0x%" PRIx64 " passed: %" PRIu64 " steps, %" PRIu64
			" switches, %" PRIu64 " futex waits, %" PRIu64 " timeouts, %" PRIu64
			" signals (%s)\n", seed, out->st.steps, out->st.switches,
			out->st.futex_waits, out->st.timeouts, out->st.signals, what);
	fflush(stdout);
	fflush(stderr);
	_exit(0);
}

/* ---- the parent ------------------------------------------------------------ */

#define MAX_JOBS 16             /* schedules run at once */

struct job {
	pid_t pid;
	uint64_t seed;
	long k;                 /* the schedule's number */
	bool again;             /* its second run, for the replay check */
	int slot;               /* its outcome in shared memory */
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void usage(void)
{
	fprintf(stderr, "usage: test_sched --lock mutex|mutex-cna|rwlock|rwlock-fair|rwlock-reader|\n"
			"                         mutex-free|mutex-cna-free|\n"
			"                         rwlock-free|mutex-signal|cond|mutex-sem|\n"
			"                         channel|swap|broken-excl|broken-wake|drop-wake\n"
			"                  [--schedules N] [--seed S] [--jobs J] [--replay-check K]\n"
			"                  [--max-failures F]   (stop after F failed schedules; 5)\n"
			"  HOTLOCK_SCHED_SEED=S runs the one schedule of seed S (a replay);\n"
			"  HOTLOCK_SCHED_TRACE=1 prints its every step.\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int kind = -1, jobs = (int)sysconf(_SC_NPROCESSORS_ONLN), replay_check = 20;
	int max_failures = 5;
	long schedules = 1000;
	uint64_t base = test_seed(0x5c4ed001);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--lock") && i + 1 < argc) {
			const char *v = argv[++i];
			for (int k = 0; k < (int)(sizeof(lock_names) / sizeof(lock_names[0])); k++)
				if (!strcmp(v, lock_names[k]))
					kind = k;
			if (kind < 0) {
				fprintf(stderr, "test_sched: unknown lock '%s'\n", v);
				usage();
			}
		} else if (!strcmp(argv[i], "--schedules") && i + 1 < argc) {
			schedules = strtol(argv[++i], NULL, 0);
		} else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
			base = strtoull(argv[++i], NULL, 0);
		} else if (!strcmp(argv[i], "--jobs") && i + 1 < argc) {
			jobs = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--max-failures") && i + 1 < argc) {
			max_failures = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--replay-check") && i + 1 < argc) {
			replay_check = atoi(argv[++i]);
		} else {
			usage();
		}
	}
	if (kind < 0 || schedules < 1 || jobs < 1 || max_failures < 1 || replay_check < 0)
		usage();
	if (jobs > MAX_JOBS)
		jobs = MAX_JOBS;

	struct outcome *out = mmap(NULL, sizeof(struct outcome) * MAX_JOBS, PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	REQUIRE(out != MAP_FAILED, "mmap");
	const char *one = getenv("HOTLOCK_SCHED_SEED");
	bool trace = getenv("HOTLOCK_SCHED_TRACE") && atoi(getenv("HOTLOCK_SCHED_TRACE"));
	if (one) {
		/* A replay: one schedule, in this process. */
		run_child(kind, strtoull(one, NULL, 0), trace, argv[0], out);
	}

	int64_t t0 = now_ns(), last_progress = t0;
	long started = 0, finished = 0, failed = 0, pct = 0;
	uint64_t *steps = calloc((size_t)schedules, sizeof(uint64_t));
	uint64_t *hashes = calloc((size_t)schedules, sizeof(uint64_t));
	struct hl__sched_stats sum = { 0 };
	uint64_t first_failing = 0;
	long first_failing_k = 0;
	struct job running[MAX_JOBS] = { 0 };
	bool slot_busy[MAX_JOBS] = { false };
	int nrun = 0;
	REQUIRE(steps && hashes, "out of memory");
	/* Checking replay: the first replay_check schedules run a second time
	 * and must take exactly the same steps. */
	long total = schedules + (replay_check < schedules ? replay_check : schedules);

	printf("test_sched: %s, %ld schedules from seed 0x%" PRIx64 ", %d at a time\n",
	       lock_names[kind], schedules, base, jobs);
	fflush(stdout);
	while (finished < total) {
		while (nrun < jobs && started < total) {
			int slot = 0;
			while (slot_busy[slot])
				slot++;         /* nrun < jobs: one is free */
			slot_busy[slot] = true;
			long k = started < schedules ? started : started - schedules;
			uint64_t seed = mix(base + (uint64_t)k);
			memset(&out[slot], 0, sizeof(out[slot]));
			fflush(stdout);
			fflush(stderr);
			pid_t pid = fork();
			REQUIRE(pid >= 0, "fork: %s", strerror(errno));
			if (pid == 0) {
				/* A seeded fault's schedules print only the first catch. */
				if (seeded_fault(kind) && failed) {
					int fd = open("/dev/null", O_WRONLY);
					dup2(fd, 2);
				}
				run_child(kind, seed, trace, argv[0], &out[slot]);
			}
			running[nrun++] = (struct job){ pid, seed, k, started >= schedules, slot };
			started++;
		}
		int status;
		pid_t pid = wait(&status);
		REQUIRE(pid > 0, "wait: %s", strerror(errno));
		int j = 0;
		while (j < nrun && running[j].pid != pid)
			j++;
		REQUIRE(j < nrun, "unknown child");
		struct job jb = running[j];
		running[j] = running[--nrun];
		slot_busy[jb.slot] = false;
		finished++;
		struct outcome *o = &out[jb.slot];
		bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && o->done;
		if (!ok) {
			if (!failed) {
				first_failing = jb.seed;
				first_failing_k = jb.k;
			}
			failed++;
			if (!seeded_fault(kind)) {
				fprintf(stderr, "test_sched: schedule of seed 0x%" PRIx64 " FAILED (%s %d)\n",
					jb.seed, WIFSIGNALED(status) ? "signal" : "exit status",
					WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
				if (failed >= max_failures)
					break;
			}
			continue;
		}
		uint64_t h = o->st.trace_hash ^ o->st.steps;
		if (jb.again) {
			/* The first run of this seed started long before this
			 * one (schedules start in order), and has ended. */
			if (hashes[jb.k] != h) {
				fprintf(stderr, "test_sched: seed 0x%" PRIx64 " did not replay: its second "
					"run took other steps (%" PRIu64 " against %" PRIu64 ")\n",
					jb.seed, o->st.steps, steps[jb.k]);
				if (!failed) {
					first_failing = jb.seed;
					first_failing_k = jb.k;
				}
				failed++;
			}
		} else {
			hashes[jb.k] = h;
			steps[jb.k] = o->st.steps;
			sum.steps += o->st.steps;
			sum.switches += o->st.switches;
			sum.futex_waits += o->st.futex_waits;
			sum.timeouts += o->st.timeouts;
			sum.spurious += o->st.spurious;
			sum.jumps += o->st.jumps;
			sum.signals += o->st.signals;
			pct += o->pct;
		}
		int64_t now = now_ns();
		if (now - last_progress > 5 * NSEC_PER_SEC) {
			printf("test_sched: %s: %ld/%ld schedules, %ld failed, %.0f s\n",
			       lock_names[kind], finished, total, failed, (double)(now - t0) / 1e9);
			fflush(stdout);
			last_progress = now;
		}
		if (seeded_fault(kind) && failed)
			break;
	}
	while (nrun > 0) {
		kill(running[nrun - 1].pid, SIGKILL);
		waitpid(running[--nrun].pid, NULL, 0);
	}
	double secs = (double)(now_ns() - t0) / 1e9;

	if (seeded_fault(kind) || failed) {
		free(steps);
		free(hashes);
	}
	if (seeded_fault(kind)) {
		if (!failed) {
			printf("test_sched: FAILED: the seeded fault %s was not caught in %ld schedules\n",
			       lock_names[kind], schedules);
			return 1;
		}
		printf("test_sched: the seeded fault %s was caught, as it must be: first by "
		       "schedule %ld (seed 0x%" PRIx64 "); %.1f s\n", lock_names[kind],
		       first_failing_k + 1, first_failing, secs);
		return 0;
	}
	if (failed) {
		printf("test_sched: FAILED: %ld schedules failed; the first: schedule %ld, seed 0x%"
		       PRIx64 " (replay: HOTLOCK_SCHED_SEED=0x%" PRIx64 " %s --lock %s)\n",
		       failed, first_failing_k + 1, first_failing, first_failing, argv[0],
		       lock_names[kind]);
		return 1;
	}
	long n = 0, distinct = 0;
	for (long k = 0; k < schedules; k++)
		if (hashes[k])
			steps[n] = steps[k], hashes[n] = hashes[k], n++;
	qsort(hashes, (size_t)n, sizeof(uint64_t), cmp_u64);
	for (long k = 0; k < n; k++)
		distinct += !k || hashes[k] != hashes[k - 1];
	qsort(steps, (size_t)n, sizeof(uint64_t), cmp_u64);
	printf("test_sched: %s: %ld schedules passed (%ld pct, %ld random), %ld distinct; "
	       "steps per schedule median %" PRIu64 ", max %" PRIu64 "; %" PRIu64 " steps, %" PRIu64
	       " switches, %" PRIu64 " futex waits, %" PRIu64 " timeouts, %" PRIu64
	       " spurious wake-ups, %" PRIu64 " time jumps, %" PRIu64 " signals; %d replayed "
	       "exactly; %.1f s\n",
	       lock_names[kind], n, pct, n - pct, distinct, n ? steps[n / 2] : 0,
	       n ? steps[n - 1] : 0, sum.steps, sum.switches, sum.futex_waits, sum.timeouts,
	       sum.spurious, sum.jumps, sum.signals, replay_check < schedules ? replay_check : (int)schedules, secs);
	free(steps);
	free(hashes);
	return 0;
}

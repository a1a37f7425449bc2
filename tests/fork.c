/* SPDX-License-Identifier: MIT */
/* fork() while hl_mutex locks are contended (design invariant 6: the child
 * of a fork has usable locks).
 *
 * The parent runs 4 threads that contend on 4 mutexes (lock, trylock,
 * timedlock; critical sections that sometimes sleep up to 2 ms, so that
 * waiters queue and park), and forks 50 times (30 in sanitizer builds) at
 * random moments (seeded).  Every third fork happens while the forking
 * thread itself holds mutex 0, which it has held for 10 ms, so that waiters
 * are queued behind it and parked; in half of those the handoff threshold
 * is 0 (hl_config_set) while it holds the lock, so that the parked waiter
 * recorded for its unlock is due a handoff at the fork (the counts of both
 * situations are printed).
 *
 * In each child (only the forking thread survives) it asserts:
 *  - a mutex the forking thread held at the fork: owner != 0, the child can
 *    unlock it (0), after which it is free (owner 0) and usable like the
 *    others below;
 *  - every mutex free at the fork (hl_mutex_owner() == 0 in the child; no
 *    other thread exists there to change it): lock/unlock (owner = the
 *    child's TID while held), trylock, timedlock on both clocks, lock of a
 *    held mutex gives EDEADLK, destroy gives 0 (no waiter of the parent is
 *    left in its queue);
 *  - 4 new threads contend on those mutexes for ~100 ms (longer, up to 5 s,
 *    until each has acquired once) with mutual exclusion checked on every
 *    critical section (counter pair per mutex), each thread acquires at least
 *    once, every mutex is free at the end;
 *  - every 5th child forks a grandchild that repeats the single-thread checks
 *    and a short 2-thread contention (a second fork generation);
 *  - every 4th fork (from the 4th; not under ThreadSanitizer, which does not
 *    know it) is a _Fork(), which runs no atfork handler, hotlock's neither:
 *    the child must find out by itself that it is one (issue 24: another
 *    library's child handler, run before hotlock's, meets the same state).
 *    Such a child only makes the single-thread checks (no threads: glibc's
 *    own fork handlers did not run either), and the owner it sees on a lock
 *    taken by a fast path before any slow path ran may be the forking
 *    thread's TID in the parent (hotlock's TID cache, which is still its
 *    own in the child).
 * Mutexes held at the fork by the other threads (which do not exist in the
 * child) are left alone, as with pthread mutexes.
 * The parent reaps each child with a 10 s limit (killed and failed after
 * that: a hang in the child), then checks its own locks: exclusion held in
 * the parent throughout and all mutexes free at the end. */
#include "common.h"

#include <hotlock/hotlock.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#if TEST_TSAN
/* ThreadSanitizer refuses to let a child of a multithreaded fork start
 * threads unless told; the child here does exactly that, on purpose. */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
	return "die_after_fork=0";
}
#endif

#define NLOCKS 4
#define NCONT 4
#define NCHILD_THREADS 4

struct guarded {
	hl_mutex_t m;
	volatile uint64_t a, b;     /* plain counter pair, written under m */
	char pad[64 - sizeof(hl_mutex_t) - 2 * sizeof(uint64_t)];
};

static struct guarded locks[NLOCKS];
static atomic_int stop;
static atomic_int parent_violations;
/* Contenders that have completed an operation: the first fork waits for all
 * of them, so that every fork lands while they contend on hotlock's locks
 * and none while a thread is still being created (a fork then can leave the
 * child with a lock of the C library or a sanitizer runtime held by a thread
 * that does not exist there, which is no test of hotlock). */
static atomic_int contenders_running;
static uint64_t seed;

/* ---- the critical section, checked ---- */

static bool cs(struct guarded *g, test_rng_t *rng, int sleep_pct)
{
	uint64_t a = g->a, b = g->b;
	bool ok = a == b;
	g->a = a + 1;
	for (int i = 0; i < 20; i++)
		__asm__ __volatile__("" ::: "memory");
	if (sleep_pct && (int)rng_below(rng, 100) < sleep_pct)
		sleep_ns((int64_t)(1 + rng_below(rng, 2000)) * NSEC_PER_USEC);
	ok = ok && g->a == b + 1;
	g->b = b + 1;
	return ok;
}

/* One operation on a random lock: lock (70%), trylock (15%), timedlock with
 * a 0..500 us timeout (15%).  Returns -1 on an unexpected result, 0 when not
 * acquired, 1 when acquired and the critical section checked out, 2 when
 * exclusion was violated. */
static int one_op(struct guarded *set, const bool *usable, test_rng_t *rng, int sleep_pct)
{
	int i, rc;
	uint64_t x;
	do
		i = (int)rng_below(rng, NLOCKS);
	while (!usable[i]);
	x = rng_below(rng, 100);
	if (x < 70) {
		rc = hl_mutex_lock(&set[i].m);
	} else if (x < 85) {
		rc = hl_mutex_trylock(&set[i].m);
		if (rc == EBUSY)
			return 0;
	} else {
		struct timespec ts = deadline_in(CLOCK_MONOTONIC,
			(int64_t)rng_below(rng, 501) * NSEC_PER_USEC);
		rc = hl_mutex_timedlock(&set[i].m, CLOCK_MONOTONIC, &ts);
		if (rc == ETIMEDOUT)
			return 0;
	}
	if (rc != 0) {
		fprintf(stderr, "lock %d: acquire returned %d (%s)\n", i, rc, strerror(rc));
		return -1;
	}
	bool ok = cs(&set[i], rng, sleep_pct);
	rc = hl_mutex_unlock(&set[i].m);
	if (rc != 0) {
		fprintf(stderr, "lock %d: unlock returned %d (%s)\n", i, rc, strerror(rc));
		return -1;
	}
	return ok ? 1 : 2;
}

/* ---- parent contenders ---- */

static void *contender(void *arg)
{
	int idx = (int)(intptr_t)arg;
	test_rng_t rng;
	bool all[NLOCKS] = { true, true, true, true };
	rng_seed(&rng, seed, 100 + (uint64_t)idx);
	for (bool first = true; !atomic_load_explicit(&stop, memory_order_relaxed); first = false) {
		int r = one_op(locks, all, &rng, 5);
		if (first)
			atomic_fetch_add(&contenders_running, 1);
		if (r == 2 || r < 0) {
			atomic_fetch_add(&parent_violations, 1);
			fprintf(stderr, "parent contender %d: %s\n", idx,
				r == 2 ? "mutual exclusion violated" : "unexpected result");
		}
	}
	return NULL;
}

/* ---- the child ---- */

static int child_failures;

#define CCHECK(cond, ...)                                                     \
	do {                                                                  \
		if (!(cond)) {                                                \
			child_failures++;                                     \
			fprintf(stderr, "child %d: FAIL %s:%d: %s: ", (int)getpid(), \
				__FILE__, __LINE__, #cond);                   \
			fprintf(stderr, __VA_ARGS__);                         \
			fputc('\n', stderr);                                  \
		}                                                             \
	} while (0)

struct child_thread {
	pthread_t th;
	int idx;
	const bool *usable;
	atomic_ullong acquired;
	int bad;
	atomic_int *cstop;
	uint64_t stream;
};

static void *child_contender(void *arg)
{
	struct child_thread *t = arg;
	test_rng_t rng;
	rng_seed(&rng, seed, t->stream);
	while (!atomic_load_explicit(t->cstop, memory_order_relaxed)) {
		int r = one_op(locks, t->usable, &rng, 2);
		if (r == 1)
			atomic_fetch_add_explicit(&t->acquired, 1, memory_order_relaxed);
		else if (r != 0)
			t->bad++;
	}
	return NULL;
}

/* The single-thread checks on every usable (free) lock. */
static uint32_t forker_parent_tid;     /* in a _Fork() child, else 0 */

static void check_free_locks(const bool *usable, const char *who)
{
	uint32_t me = test_gettid();
	for (int i = 0; i < NLOCKS; i++) {
		hl_mutex_t *m = &locks[i].m;
		struct timespec ts;
		if (!usable[i])
			continue;
		CCHECK(hl_mutex_lock(m) == 0, "%s: lock %d", who, i);
		CCHECK(hl_mutex_owner(m) == me ||
			       (forker_parent_tid && hl_mutex_owner(m) == forker_parent_tid),
		       "%s: lock %d owner %u, expected %u", who, i, hl_mutex_owner(m), me);
		CCHECK(hl_mutex_lock(m) == EDEADLK, "%s: relock %d not EDEADLK", who, i);
		CCHECK(hl_mutex_unlock(m) == 0, "%s: unlock %d", who, i);
		CCHECK(hl_mutex_trylock(m) == 0, "%s: trylock %d", who, i);
		CCHECK(hl_mutex_unlock(m) == 0, "%s: unlock %d after trylock", who, i);
		ts = deadline_in(CLOCK_MONOTONIC, NSEC_PER_SEC);
		CCHECK(hl_mutex_timedlock(m, CLOCK_MONOTONIC, &ts) == 0, "%s: timedlock %d", who, i);
		CCHECK(hl_mutex_unlock(m) == 0, "%s: unlock %d after timedlock", who, i);
		ts = deadline_in(CLOCK_REALTIME, NSEC_PER_SEC);
		CCHECK(hl_mutex_timedlock(m, CLOCK_REALTIME, &ts) == 0, "%s: timedlock %d (realtime)",
		       who, i);
		CCHECK(hl_mutex_unlock(m) == 0, "%s: unlock %d after timedlock", who, i);
		CCHECK(hl_mutex_owner(m) == 0, "%s: lock %d owner %u after the checks", who, i,
		       hl_mutex_owner(m));
		CCHECK(hl_mutex_destroy(m) == 0, "%s: destroy %d: a parent waiter is still queued? %s",
		       who, i, "(EBUSY)");
	}
}

static void contend(const bool *usable, int nthreads, int64_t ms, const char *who)
{
	struct child_thread t[NCHILD_THREADS];
	atomic_int cstop = 0;
	for (int k = 0; k < nthreads; k++) {
		t[k].idx = k;
		t[k].usable = usable;
		t[k].cstop = &cstop;
		t[k].stream = 1000 + (uint64_t)getpid() * 16 + (uint64_t)k;
		t[k].bad = 0;
		atomic_init(&t[k].acquired, 0);
		CCHECK(pthread_create(&t[k].th, NULL, child_contender, &t[k]) == 0,
		       "%s: pthread_create", who);
	}
	sleep_ns(ms * NSEC_PER_MSEC); /* the contention lasts this long */
	/* ... and until every thread has acquired once (a thread the VM did not
	 * run for those ms is not the lock's fault), 5 s at most. */
	for (int64_t end = now_ns() + 5 * NSEC_PER_SEC; now_ns() < end;) {
		int all = 1;
		for (int k = 0; k < nthreads; k++)
			all &= atomic_load(&t[k].acquired) > 0;
		if (all)
			break;
		sleep_ns(NSEC_PER_MSEC);
	}
	atomic_store(&cstop, 1);
	for (int k = 0; k < nthreads; k++) {
		pthread_join(t[k].th, NULL);
		CCHECK(t[k].bad == 0, "%s: thread %d saw %d exclusion violations or errors", who,
		       k, t[k].bad);
		CCHECK(atomic_load(&t[k].acquired) > 0, "%s: thread %d never acquired a lock in "
		       "%lld ms + 5 s", who, k, (long long)ms);
	}
	for (int i = 0; i < NLOCKS; i++)
		if (usable[i])
			CCHECK(hl_mutex_owner(&locks[i].m) == 0 && locks[i].a == locks[i].b,
			       "%s: lock %d owner %u, counters %llu/%llu after the contention", who,
			       i, hl_mutex_owner(&locks[i].m), (unsigned long long)locks[i].a,
			       (unsigned long long)locks[i].b);
}

static hl_config_t dflt_config;

static int child_main(bool holding0, bool grandchild, bool raw)
{
	bool usable[NLOCKS];
	int nusable = 0;
	char desc[256];

	hl_mutex_describe(&locks[0].m, desc, sizeof(desc));
	CCHECK(hl_config_set(&dflt_config) == 0, "hl_config_set");

	for (int i = 0; i < NLOCKS; i++) {
		uint32_t o = hl_mutex_owner(&locks[i].m);
		usable[i] = o == 0;
		if (i == 0 && holding0) {
			CCHECK(o != 0, "lock 0 held by the forking thread shows owner 0");
			CCHECK(hl_mutex_unlock(&locks[0].m) == 0,
			       "the child cannot unlock the lock its thread held at the fork");
			CCHECK(hl_mutex_owner(&locks[0].m) == 0,
			       "after the child's unlock, lock 0 is owned by %u (a thread of the "
			       "parent that was queued on it?); at the fork: %s",
			       hl_mutex_owner(&locks[0].m), desc);
			usable[0] = hl_mutex_owner(&locks[0].m) == 0;
			if (usable[0])
				CCHECK(locks[0].a == locks[0].b, "lock 0 counters %llu/%llu",
				       (unsigned long long)locks[0].a, (unsigned long long)locks[0].b);
		} else if (usable[i]) {
			CCHECK(locks[i].a == locks[i].b,
			       "lock %d free at the fork but its counters are %llu/%llu", i,
			       (unsigned long long)locks[i].a, (unsigned long long)locks[i].b);
		}
		nusable += usable[i];
	}
	if (nusable == 0)
		return child_failures ? 1 : 0;
	check_free_locks(usable, raw ? "_Fork child" : "child");
	if (raw)
		return child_failures ? 1 : 0;
	contend(usable, NCHILD_THREADS, 100, "child");

	if (grandchild && !child_failures) {
		pid_t pid;
		int status;
		fflush(stdout);
		fflush(stderr);
		pid = fork();
		if (pid == 0) {
			check_free_locks(usable, "grandchild");
			contend(usable, 2, 30, "grandchild");
			_exit(child_failures ? 1 : 0);
		}
		CCHECK(pid > 0, "fork of the grandchild: %s", strerror(errno));
		if (pid > 0) {
			int r = reap_with_timeout(pid, 10000, &status);
			CCHECK(r == 0, "grandchild hung (killed after 10 s)");
			CCHECK(r != 0 || (WIFEXITED(status) && WEXITSTATUS(status) == 0),
			       "grandchild failed (status 0x%x)", status);
		}
	}
	return child_failures ? 1 : 0;
}

int main(void)
{
	pthread_t th[NCONT];
	test_rng_t rng;
	int nforks = HOTLOCK_SANITIZED ? 30 : 50;
	int held_forks = 0, skipped_total = 0, held_wake = 0, held_handoff = 0, raw_forks = 0;
	int raw_handoff = 0;

	seed = test_seed(0x5eed0f04);
	hl_config_get(&dflt_config);
	rng_seed(&rng, seed, 0);
	printf("test_fork: %d forks among %d contending threads on %d mutexes, seed 0x%llx\n",
	       nforks, NCONT, NLOCKS, (unsigned long long)seed);
	fflush(stdout);

	for (int i = 0; i < NCONT; i++)
		REQUIRE(pthread_create(&th[i], NULL, contender, (void *)(intptr_t)i) == 0,
			"pthread_create");
	for (int waited_ms = 0; atomic_load(&contenders_running) < NCONT; waited_ms++) {
		REQUIRE(waited_ms < 10000, "only %d of %d contenders completed an operation in 10 s",
			atomic_load(&contenders_running), NCONT);
		sleep_ns(1000 * 1000);
	}

	for (int f = 0; f < nforks; f++) {
		bool hold = f % 3 == 2;
		bool raw = !TEST_TSAN && f % 4 == 3;
		pid_t pid;
		int status, r;
		char sb[64];

		/* A random moment (the test is about when the fork lands). */
		sleep_ns((int64_t)rng_below(&rng, 10000) * NSEC_PER_USEC);
		if (hold && f % 2) {
			/* Handoff at once: the waiter queued behind us is due a
			 * handoff when we unlock, in the child too. */
			hl_config_t c = dflt_config;
			c.handoff_ns = 0;
			REQUIRE(hl_config_set(&c) == 0, "hl_config_set");
		}
		if (hold) {
			REQUIRE(hl_mutex_lock(&locks[0].m) == 0, "lock 0");
			/* Hold it past the handoff threshold with waiters queued. */
			sleep_ns(10 * NSEC_PER_MSEC);
			held_forks++;
		}
		for (int i = 0; i < NLOCKS; i++)
			skipped_total += hl_mutex_owner(&locks[i].m) != 0 && !(hold && i == 0);
		if (hold) {
			/* Coverage: whether a waiter was recorded for the unlock
			 * (WAKE) and due a handoff (HANDOFF) at the fork. */
			char d[256];
			hl_mutex_describe(&locks[0].m, d, sizeof(d));
			held_wake += strstr(d, "WAKE") != NULL;
			held_handoff += strstr(d, "HANDOFF") != NULL;
			raw_handoff += raw && strstr(d, "HANDOFF") != NULL;
		}
		fflush(stdout);
		fflush(stderr);
		raw_forks += raw;
		if (raw) {
			forker_parent_tid = test_gettid();
			pid = _Fork();
		} else {
			pid = fork();
		}
		REQUIRE(pid >= 0, "fork: %s", strerror(errno));
		if (pid == 0)
			_exit(child_main(hold, f % 5 == 4, raw));
		forker_parent_tid = 0;
		REQUIRE(hl_config_set(&dflt_config) == 0, "hl_config_set");
		if (hold) {
			/* The parent's counter pair stays consistent: the child
			 * has its own copy. */
			CHECK_RC(hl_mutex_unlock(&locks[0].m), 0);
		}
		r = reap_with_timeout(pid, 10000, &status);
		CHECK(r == 0, "fork %d%s: the child hung and was killed after 10 s", f,
		      hold ? " (holding lock 0)" : "");
		if (r == 0)
			CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			      "fork %d%s: the child %s", f, hold ? " (holding lock 0)" : "",
			      describe_status(status, sb, sizeof(sb)));
	}

	atomic_store(&stop, 1);
	for (int i = 0; i < NCONT; i++)
		pthread_join(th[i], NULL);
	CHECK(atomic_load(&parent_violations) == 0, "%d violations or errors in the parent",
	      atomic_load(&parent_violations));
	for (int i = 0; i < NLOCKS; i++) {
		CHECK(hl_mutex_owner(&locks[i].m) == 0, "parent lock %d owner %u at the end", i,
		      hl_mutex_owner(&locks[i].m));
		CHECK(locks[i].a == locks[i].b, "parent lock %d counters %llu/%llu", i,
		      (unsigned long long)locks[i].a, (unsigned long long)locks[i].b);
		CHECK_RC(hl_mutex_destroy(&locks[i].m), 0);
	}
	printf("test_fork: %d forks (%d while holding lock 0: %d with a parked waiter recorded, "
	       "%d with a handoff due), about %d locks held by other threads at the forks; "
	       "%d by _Fork() (%d with a handoff due)\n",
	       nforks, held_forks, held_wake, held_handoff, skipped_total, raw_forks, raw_handoff);
	return test_finish("test_fork");
}

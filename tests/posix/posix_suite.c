/* SPDX-License-Identifier: MIT */
/* The POSIX semantics of pthread mutexes, rwlocks and condition variables,
 * as glibc 2.36 gives them: run on plain glibc (the control, which must
 * pass) and through the pthread shim (tests/posix/CMakeLists.txt).  Not
 * linked with hotlock: a plain pthread program, as the shim meets them.
 *
 *   posix_suite [--list] [--case NAME]...
 *
 * Each case runs in a child process with a watchdog (20 s; 90 s for the
 * 2^32 locks of the recursion limit), so a hang names
 * its case; one line per case, a total, exit 0 only if all passed.  Where
 * glibc's answer is not POSIX's (or POSIX leaves it open), the case asserts
 * glibc's and says so.
 *
 * Who gets into an rwlock, and when (the rwlock progress cases):
 * - rwlock_writer_gives_up: a timed writer that gives up (ETIMEDOUT, not
 *   before its 300 ms deadline) while the lock is read-held lets the reader
 *   that arrived behind it in at once, the first reader still inside
 *   (POSIX: no writer holds or waits); every kind, timedwrlock and
 *   clockwrlock(CLOCK_MONOTONIC).  With a second writer queued as well,
 *   only that it keeps waiting while readers hold and that all get through
 *   one at a time after (who goes first is the kind's choice).
 * - rwlock_reader_pref_progress: the default kind, PREFER_READER_NP and
 *   PREFER_WRITER_NP (glibc treats it as PREFER_READER_NP) let a reader in
 *   while the lock is read-held and a writer waits (tryrdlock, rdlock): a
 *   consumer that holds a read lock while it waits for a producer that
 *   needs one does not deadlock.
 *   Under hotlock-run --rwlock-default writer-yields the tryrdlock is
 *   not asserted (the writer's claim keeps it out until it yields).
 * - rwlock_writer_yields (only under hotlock-run --rwlock-default
 *   writer-yields, skipped otherwise): a writer among three readers whose
 *   45 ms holds overlap gets in within 2 s (glibc's default kind starves
 *   it: its bug 25619), and a read holder that waits for another thread's
 *   rdlock while a writer waits is not deadlocked.
 * - rwlock_rt_reader (POSIX Thread Execution Scheduling; skipped without
 *   the privilege for SCHED_FIFO): a reader gets in past a waiting writer
 *   of lower priority.  The reverse (a lower-priority reader kept out by a
 *   higher-priority writer, LTP pthread_rwlock_rdlock/2-1) glibc's default
 *   kind does not do: not asserted.
 * - rwlock_writer_pref_progress: PREFER_WRITER_NONRECURSIVE_NP's waiting
 *   writer keeps new readers out (EBUSY, ETIMEDOUT, a blocking rdlock
 *   waits), gets the lock once the readers leave, and the reader kept out
 *   gets in after the writer's unlock.
 * There a thread that does not come back fails the case with what it
 * waited for (timed joins, 1 to 3 s), before the watchdog would. */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failures;
static const char *current;

#define CHECK(cond, ...)                                                        \
	do {                                                                    \
		if (!(cond)) {                                                  \
			printf("FAIL %s (%s:%d): ", current, __FILE__, __LINE__);\
			printf(__VA_ARGS__);                                    \
			printf("\n");                                           \
			fflush(stdout);                                         \
			failures++;                                             \
		}                                                               \
	} while (0)
/* An errno-style return: expected value e. */
#define CHECK_RC(rc, e, what)                                                   \
	do {                                                                    \
		int rc_ = (rc), e_ = (e);                                       \
		CHECK(rc_ == e_, "%s: got %d (%s), expected %d (%s)", what, rc_,\
		      strerrorname_np(rc_) ? strerrorname_np(rc_) : "0", e_,    \
		      strerrorname_np(e_) ? strerrorname_np(e_) : "0");         \
	} while (0)

static int64_t now_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static struct timespec in_ns(clockid_t c, int64_t ns)
{
	int64_t t = now_ns(c) + ns;
	return (struct timespec){ (time_t)(t / 1000000000), (long)(t % 1000000000) };
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

static pthread_t spawn(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	if (pthread_create(&t, NULL, fn, arg)) {
		printf("FAIL %s: pthread_create\n", current);
		exit(1);
	}
	return t;
}

/* ---- mutex ---------------------------------------------------------------- */

struct mx_arg {
	pthread_mutex_t *m;
	int rc;
};

static void *trylock_other(void *p)
{
	struct mx_arg *a = p;
	a->rc = pthread_mutex_trylock(a->m);
	if (a->rc == 0)
		pthread_mutex_unlock(a->m);
	return NULL;
}

static int trylock_from_other_thread(pthread_mutex_t *m)
{
	struct mx_arg a = { .m = m };
	pthread_join(spawn(trylock_other, &a), NULL);
	return a.rc;
}

static void *unlock_other(void *p)
{
	struct mx_arg *a = p;
	a->rc = pthread_mutex_unlock(a->m);
	return NULL;
}

static int unlock_from_other_thread(pthread_mutex_t *m)
{
	struct mx_arg a = { .m = m };
	pthread_join(spawn(unlock_other, &a), NULL);
	return a.rc;
}

struct counter {
	pthread_mutex_t *m;
	long n, iters;
	atomic_int inside;
	int bad;
};

static void *count_main(void *p)
{
	struct counter *c = p;
	for (long i = 0; i < c->iters; i++) {
		pthread_mutex_lock(c->m);
		if (atomic_fetch_add(&c->inside, 1))
			c->bad = 1;
		c->n++;
		atomic_fetch_sub(&c->inside, 1);
		pthread_mutex_unlock(c->m);
	}
	return NULL;
}

static void check_exclusion(pthread_mutex_t *m, const char *what)
{
	struct counter c = { .m = m, .iters = 20000 };
	pthread_t t[8];
	for (int i = 0; i < 8; i++)
		t[i] = spawn(count_main, &c);
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	CHECK(c.n == 8 * c.iters && !c.bad, "%s: %ld of %ld increments, overlap %d", what, c.n,
	      8 * c.iters, c.bad);
}

static void basic_normal(pthread_mutex_t *m, const char *what)
{
	CHECK_RC(pthread_mutex_lock(m), 0, what);
	CHECK_RC(trylock_from_other_thread(m), EBUSY, "trylock by another thread");
	CHECK_RC(pthread_mutex_unlock(m), 0, "unlock");
	CHECK_RC(trylock_from_other_thread(m), 0, "trylock of a free mutex");
	check_exclusion(m, what);
}

static void case_mutex_normal(void)
{
	static pthread_mutex_t s = PTHREAD_MUTEX_INITIALIZER;
	basic_normal(&s, "PTHREAD_MUTEX_INITIALIZER");
	static pthread_mutex_t a = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;
	basic_normal(&a, "PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP");
	pthread_mutex_t *z = calloc(1, sizeof(*z));     /* zeroed, never initialised */
	basic_normal(z, "zeroed memory");
	free(z);
	int types[] = { PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_DEFAULT, PTHREAD_MUTEX_ADAPTIVE_NP };
	for (int i = 0; i < 3; i++) {
		pthread_mutexattr_t at;
		pthread_mutex_t m;
		pthread_mutexattr_init(&at);
		pthread_mutexattr_settype(&at, types[i]);
		CHECK_RC(pthread_mutex_init(&m, &at), 0, "init");
		basic_normal(&m, "attr type");
		CHECK_RC(pthread_mutex_destroy(&m), 0, "destroy");
		pthread_mutexattr_destroy(&at);
	}
	pthread_mutex_t m;
	CHECK_RC(pthread_mutex_init(&m, NULL), 0, "init NULL attr");
	basic_normal(&m, "init NULL attr");
	CHECK_RC(pthread_mutex_trylock(&m), 0, "trylock");
	CHECK_RC(pthread_mutex_trylock(&m), EBUSY, "trylock by the holder (normal)");
	CHECK_RC(pthread_mutex_unlock(&m), 0, "unlock");
	CHECK_RC(pthread_mutex_destroy(&m), 0, "destroy");
}

/* A normal mutex as a binary semaphore, as rt-tests' ptsematest uses it:
 * locked by one thread, unlocked by another; the holder's relock waits for
 * that unlock. */
static pthread_mutex_t sem_a = PTHREAD_MUTEX_INITIALIZER, sem_b = PTHREAD_MUTEX_INITIALIZER;
static atomic_int sem_rounds;
static void *sem_partner(void *p)
{
	(void)p;
	for (int i = 0; i < 2000; i++) {
		pthread_mutex_lock(&sem_b);             /* wait: relock of our own */
		atomic_fetch_add(&sem_rounds, 1);
		pthread_mutex_unlock(&sem_a);           /* post: the other's */
	}
	return NULL;
}

static void case_mutex_unlock_by_other(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	CHECK_RC(pthread_mutex_lock(&m), 0, "lock");
	CHECK_RC(unlock_from_other_thread(&m), 0, "unlock of a normal mutex by another thread");
	CHECK_RC(trylock_from_other_thread(&m), 0, "a third thread takes it after");
	/* ptsematest: both start locked; main posts b and waits a. */
	pthread_mutex_lock(&sem_a);
	pthread_mutex_lock(&sem_b);
	pthread_t t = spawn(sem_partner, NULL);
	for (int i = 0; i < 2000; i++) {
		pthread_mutex_unlock(&sem_b);
		pthread_mutex_lock(&sem_a);
		CHECK(atomic_load(&sem_rounds) == i + 1, "round %d: partner at %d", i + 1,
		      atomic_load(&sem_rounds));
		if (failures)
			break;
	}
	pthread_join(t, NULL);
}

static void errorcheck_checks(pthread_mutex_t *m, const char *what)
{
	current = what;
	CHECK_RC(pthread_mutex_unlock(m), EPERM, "unlock of an unlocked errorcheck mutex");
	CHECK_RC(pthread_mutex_lock(m), 0, "lock");
	CHECK_RC(pthread_mutex_lock(m), EDEADLK, "relock by the owner");
	CHECK_RC(pthread_mutex_trylock(m), EBUSY, "trylock by the owner");
	struct timespec ts = in_ns(CLOCK_REALTIME, 10000000);
	CHECK_RC(pthread_mutex_timedlock(m, &ts), EDEADLK, "timedlock by the owner");
	CHECK_RC(unlock_from_other_thread(m), EPERM, "unlock by another thread");
	CHECK_RC(trylock_from_other_thread(m), EBUSY, "trylock by another thread");
	CHECK_RC(pthread_mutex_unlock(m), 0, "unlock");
	CHECK_RC(pthread_mutex_unlock(m), EPERM, "second unlock");
	check_exclusion(m, what);
}

/* pthread_mutex_init with a mutex type. */
static void init_type(pthread_mutex_t *m, int type)
{
	pthread_mutexattr_t at;
	pthread_mutexattr_init(&at);
	pthread_mutexattr_settype(&at, type);
	CHECK_RC(pthread_mutex_init(m, &at), 0, "init");
	pthread_mutexattr_destroy(&at);
}

static void case_mutex_errorcheck(void)
{
	static pthread_mutex_t s = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
	errorcheck_checks(&s, "mutex_errorcheck: static initialiser");
	pthread_mutex_t m;
	init_type(&m, PTHREAD_MUTEX_ERRORCHECK);
	errorcheck_checks(&m, "mutex_errorcheck: attr");
	CHECK_RC(pthread_mutex_destroy(&m), 0, "destroy");
}

static void recursive_checks(pthread_mutex_t *m, const char *what)
{
	current = what;
	CHECK_RC(pthread_mutex_unlock(m), EPERM, "unlock of an unlocked recursive mutex");
	for (int i = 0; i < 100; i++)
		CHECK_RC(i % 2 ? pthread_mutex_lock(m) : pthread_mutex_trylock(m), 0, "nested lock");
	struct timespec ts = in_ns(CLOCK_REALTIME, 10000000);
	CHECK_RC(pthread_mutex_timedlock(m, &ts), 0, "nested timedlock");
	CHECK_RC(unlock_from_other_thread(m), EPERM, "unlock by another thread");
	for (int i = 0; i < 101; i++) {
		CHECK_RC(trylock_from_other_thread(m), EBUSY, "another thread while held");
		CHECK_RC(pthread_mutex_unlock(m), 0, "nested unlock");
	}
	CHECK_RC(trylock_from_other_thread(m), 0, "another thread once the count is 0");
	CHECK_RC(pthread_mutex_unlock(m), EPERM, "unlock after the last");
	check_exclusion(m, what);
}

static void case_mutex_recursive(void)
{
	static pthread_mutex_t s = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
	recursive_checks(&s, "mutex_recursive: static initialiser");
	pthread_mutex_t m;
	init_type(&m, PTHREAD_MUTEX_RECURSIVE);
	recursive_checks(&m, "mutex_recursive: attr");
	CHECK_RC(pthread_mutex_destroy(&m), 0, "destroy");
}

/* 2^32 - 1 holds, then EAGAIN (glibc's count is 32 bits). */
static void case_mutex_recursive_overflow(void)
{
	static pthread_mutex_t m = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
	uint64_t n = 0;
	int rc;
	while ((rc = pthread_mutex_trylock(&m)) == 0 && n < (1ull << 33))
		n++;
	CHECK_RC(rc, EAGAIN, "the lock past the count's limit");
	CHECK(n == UINT32_MAX, "%llu holds before EAGAIN, expected %u", (unsigned long long)n,
	      UINT32_MAX);
	CHECK_RC(pthread_mutex_lock(&m), EAGAIN, "lock at the limit");
	CHECK_RC(pthread_mutex_unlock(&m), 0, "unlock");
	CHECK_RC(pthread_mutex_lock(&m), 0, "lock again below the limit");
}

struct timed_arg {
	pthread_mutex_t *m;
	clockid_t clock;
	int use_clocklock;
	int rc;
	int64_t waited;
};

static void *timed_other(void *p)
{
	struct timed_arg *a = p;
	struct timespec ts = in_ns(a->clock, 50000000);
	int64_t t0 = now_ns(a->clock);
	a->rc = a->use_clocklock ? pthread_mutex_clocklock(a->m, a->clock, &ts)
				 : pthread_mutex_timedlock(a->m, &ts);
	a->waited = now_ns(a->clock) - t0;
	return NULL;
}

static void case_mutex_timed(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	struct timespec bad = { time(NULL) + 10, 1000000000 }, past = { 0, 0 };
	/* A free mutex is taken before the time is looked at (glibc). */
	CHECK_RC(pthread_mutex_timedlock(&m, &bad), 0, "timedlock of a free mutex, bad tv_nsec");
	pthread_mutex_unlock(&m);
	CHECK_RC(pthread_mutex_timedlock(&m, &past), 0, "timedlock of a free mutex, time passed");
	pthread_mutex_unlock(&m);
	CHECK_RC(pthread_mutex_clocklock(&m, CLOCK_PROCESS_CPUTIME_ID, &past), EINVAL,
		 "clocklock with an unsupported clock");
	CHECK_RC(pthread_mutex_clocklock(&m, 12345, &past), EINVAL, "clocklock with a bad clock");
	pthread_mutex_lock(&m);
	/* timedlock: CLOCK_REALTIME; clocklock: either clock. */
	for (int k = 0; k < 3; k++) {
		struct timed_arg a = { .m = &m, .clock = k == 2 ? CLOCK_MONOTONIC : CLOCK_REALTIME,
				       .use_clocklock = k >= 1 };
		pthread_join(spawn(timed_other, &a), NULL);
		CHECK_RC(a.rc, ETIMEDOUT, "timed lock of a held mutex");
		CHECK(a.waited >= 49000000, "timed out after %.1f ms of 50", a.waited / 1e6);
	}
	CHECK_RC(pthread_mutex_unlock(&m), 0, "unlock");
}

static pthread_mutex_t held_m = PTHREAD_MUTEX_INITIALIZER;
static void *timed_bad_other(void *p)
{
	int *rc = p;
	struct timespec bad = { time(NULL) + 10, 1000000000 }, neg = { -1, 0 }, past = { 1, 0 };
	rc[0] = pthread_mutex_timedlock(&held_m, &bad);
	rc[1] = pthread_mutex_timedlock(&held_m, &neg);
	rc[2] = pthread_mutex_timedlock(&held_m, &past);
	rc[3] = pthread_mutex_clocklock(&held_m, CLOCK_MONOTONIC, &past);
	return NULL;
}

static void case_mutex_timed_held(void)
{
	int rc[4];
	pthread_mutex_lock(&held_m);
	pthread_join(spawn(timed_bad_other, rc), NULL);
	CHECK_RC(rc[0], EINVAL, "timedlock of a held mutex, bad tv_nsec");
	CHECK_RC(rc[1], ETIMEDOUT, "timedlock of a held mutex, negative tv_sec");
	CHECK_RC(rc[2], ETIMEDOUT, "timedlock of a held mutex, time passed");
	CHECK_RC(rc[3], ETIMEDOUT, "clocklock of a held mutex, time passed");
	pthread_mutex_unlock(&held_m);
}

static void case_mutex_destroy_reuse(void)
{
	pthread_mutex_t m;
	pthread_mutex_init(&m, NULL);
	pthread_mutex_lock(&m);
	CHECK_RC(pthread_mutex_destroy(&m), EBUSY, "destroy of a locked mutex");
	pthread_mutex_unlock(&m);
	CHECK_RC(pthread_mutex_destroy(&m), 0, "destroy of a free mutex");
	CHECK_RC(pthread_mutex_lock(&m), EINVAL, "lock of a destroyed mutex (glibc: kind -1)");
	CHECK_RC(pthread_mutex_init(&m, NULL), 0, "init again");
	CHECK_RC(pthread_mutex_lock(&m), 0, "lock after init again");
	pthread_mutex_unlock(&m);
	/* Freed without destroy, the memory reused as other kinds. */
	for (int round = 0; round < 3; round++) {
		pthread_mutexattr_t at;
		pthread_mutexattr_init(&at);
		pthread_mutexattr_settype(&at, PTHREAD_MUTEX_RECURSIVE);
		pthread_mutex_t *p = malloc(sizeof(*p));
		pthread_mutex_init(p, &at);
		pthread_mutex_lock(p);
		pthread_mutex_lock(p);
		pthread_mutex_unlock(p);
		pthread_mutex_unlock(p);
		free(p);        /* no destroy */
		pthread_mutex_t *q = malloc(sizeof(*q));
		memset(q, 0, sizeof(*q));
		basic_normal(q, "reused memory, zeroed");
		pthread_mutexattr_settype(&at, PTHREAD_MUTEX_ERRORCHECK);
		pthread_mutex_init(q, &at);
		CHECK_RC(pthread_mutex_lock(q), 0, "reused as errorcheck: lock");
		CHECK_RC(pthread_mutex_lock(q), EDEADLK, "reused as errorcheck: relock");
		pthread_mutex_unlock(q);
		free(q);
		pthread_mutexattr_destroy(&at);
	}
}

/* A thread in a condvar wait on m: glibc's destroy says EBUSY until the
 * wait has taken m again and let it go (glibc's tst-mutex8, tst-mutexpi8),
 * for normal, recursive and errorcheck mutexes, and a priority-inheritance
 * one (which the shim leaves to glibc, beside its own condvar). */
struct dcw {
	pthread_mutex_t m;
	pthread_cond_t c;
	atomic_int waiting, done;
};

static void *dcw_waiter(void *p)
{
	struct dcw *d = p;
	pthread_mutex_lock(&d->m);
	atomic_store(&d->waiting, 1);
	while (!atomic_load(&d->done))
		pthread_cond_wait(&d->c, &d->m);
	pthread_mutex_unlock(&d->m);
	return NULL;
}

static void case_mutex_destroy_cond_waiter(void)
{
	static const int types[] = { PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_RECURSIVE,
				     PTHREAD_MUTEX_ERRORCHECK, PTHREAD_MUTEX_NORMAL };
	static const char *const names[] = { "normal", "recursive", "errorcheck",
					     "priority-inheritance" };
	for (int t = 0; t < 4; t++) {
		struct dcw d = { .c = PTHREAD_COND_INITIALIZER };
		pthread_mutexattr_t at;
		pthread_mutexattr_init(&at);
		pthread_mutexattr_settype(&at, types[t]);
		if (t == 3)
			pthread_mutexattr_setprotocol(&at, PTHREAD_PRIO_INHERIT);
		pthread_mutex_init(&d.m, &at);
		pthread_mutexattr_destroy(&at);
		pthread_t th = spawn(dcw_waiter, &d);
		while (!atomic_load(&d.waiting))
			sleep_ms(1);
		/* The waiter is in its wait once we can take the mutex. */
		pthread_mutex_lock(&d.m);
		pthread_mutex_unlock(&d.m);
		int rc = pthread_mutex_destroy(&d.m);
		CHECK(rc == EBUSY, "destroy of a %s mutex that a condvar waiter will take again: "
		      "%d, expected EBUSY", names[t], rc);
		pthread_mutex_lock(&d.m);
		atomic_store(&d.done, 1);
		pthread_cond_signal(&d.c);
		pthread_mutex_unlock(&d.m);
		pthread_join(th, NULL);         /* the case's watchdog catches a hang */
		rc = pthread_mutex_destroy(&d.m);
		CHECK(rc == 0, "destroy of the %s mutex once the wait ended: %d", names[t], rc);
		pthread_cond_destroy(&d.c);
	}
}

/* Robust: the owner dies, the next locker gets EOWNERDEAD. */
static pthread_mutex_t robust_m;
static void *robust_die(void *p)
{
	(void)p;
	pthread_mutex_lock(&robust_m);
	return NULL;    /* exits holding it */
}

static void case_mutex_robust(void)
{
	pthread_mutexattr_t at;
	pthread_mutexattr_init(&at);
	pthread_mutexattr_setrobust(&at, PTHREAD_MUTEX_ROBUST);
	CHECK_RC(pthread_mutex_init(&robust_m, &at), 0, "init robust");
	pthread_join(spawn(robust_die, NULL), NULL);
	CHECK_RC(pthread_mutex_lock(&robust_m), EOWNERDEAD, "lock after the owner died");
	CHECK_RC(pthread_mutex_consistent(&robust_m), 0, "consistent");
	CHECK_RC(pthread_mutex_unlock(&robust_m), 0, "unlock");
	CHECK_RC(pthread_mutex_lock(&robust_m), 0, "lock again");
	CHECK_RC(pthread_mutex_unlock(&robust_m), 0, "unlock");
	check_exclusion(&robust_m, "robust");
	pthread_mutex_t plain = PTHREAD_MUTEX_INITIALIZER;
	CHECK_RC(pthread_mutex_consistent(&plain), EINVAL, "consistent of a non-robust mutex");
	CHECK_RC(pthread_mutex_destroy(&robust_m), 0, "destroy");
}

static void case_mutex_pi_pp(void)
{
	pthread_mutexattr_t at;
	pthread_mutex_t m;
	pthread_mutexattr_init(&at);
	pthread_mutexattr_setprotocol(&at, PTHREAD_PRIO_INHERIT);
	CHECK_RC(pthread_mutex_init(&m, &at), 0, "init PI");
	CHECK_RC(pthread_mutex_lock(&m), 0, "PI lock");
	CHECK_RC(trylock_from_other_thread(&m), EBUSY, "PI trylock by another");
	CHECK_RC(pthread_mutex_unlock(&m), 0, "PI unlock");
	check_exclusion(&m, "priority inheritance");
	pthread_mutex_destroy(&m);

	/* Priority protect: whether a SCHED_OTHER thread may take it depends
	 * on its priority and privileges (glibc: EINVAL when the ceiling is
	 * below the caller's priority); what matters here is that the calls
	 * reach glibc's implementation, which keeps the ceiling. */
	int min = sched_get_priority_min(SCHED_FIFO);
	pthread_mutexattr_setprotocol(&at, PTHREAD_PRIO_PROTECT);
	pthread_mutexattr_setprioceiling(&at, min);
	CHECK_RC(pthread_mutex_init(&m, &at), 0, "init PP");
	int ceiling = -1;
	CHECK_RC(pthread_mutex_getprioceiling(&m, &ceiling), 0, "getprioceiling");
	CHECK(ceiling == min, "ceiling %d, set %d", ceiling, min);
	int rc = pthread_mutex_lock(&m);
	CHECK(rc == 0 || rc == EINVAL || rc == EPERM, "PP lock: %d", rc);
	if (rc == 0)
		CHECK_RC(pthread_mutex_unlock(&m), 0, "PP unlock");
	pthread_mutex_destroy(&m);
	pthread_mutex_t plain = PTHREAD_MUTEX_INITIALIZER;
	CHECK_RC(pthread_mutex_getprioceiling(&plain, &ceiling), EINVAL,
		 "getprioceiling of a normal mutex");
}

/* Process-shared objects in MAP_SHARED memory, parent and child. */
struct shared_area {
	pthread_mutex_t m;
	pthread_rwlock_t l;
	pthread_cond_t c;
	long counter_m, counter_l;      /* under m, under l */
	int flag;
};

static struct shared_area *shared_area(void)
{
	void *p = mmap(NULL, sizeof(struct shared_area), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		printf("FAIL %s: mmap\n", current);
		exit(1);
	}
	memset(p, 0, sizeof(struct shared_area));
	struct shared_area *s = p;
	pthread_mutexattr_t ma;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(&s->m, &ma);
	pthread_rwlockattr_t ra;
	pthread_rwlockattr_init(&ra);
	pthread_rwlockattr_setpshared(&ra, PTHREAD_PROCESS_SHARED);
	pthread_rwlock_init(&s->l, &ra);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
	pthread_cond_init(&s->c, &ca);
	return s;
}

static void case_process_shared(void)
{
	struct shared_area *s = shared_area();
	const long n = 20000;
	pid_t pid = fork();
	if (pid == 0) {
		for (long i = 0; i < n; i++) {
			pthread_mutex_lock(&s->m);
			s->counter_m++;
			pthread_mutex_unlock(&s->m);
			pthread_rwlock_wrlock(&s->l);
			s->counter_l++;
			pthread_rwlock_unlock(&s->l);
		}
		pthread_mutex_lock(&s->m);
		s->flag = 1;
		pthread_cond_signal(&s->c);
		pthread_mutex_unlock(&s->m);
		_exit(0);
	}
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&s->m);
		s->counter_m++;
		pthread_mutex_unlock(&s->m);
		pthread_rwlock_wrlock(&s->l);
		s->counter_l++;
		pthread_rwlock_unlock(&s->l);
	}
	pthread_mutex_lock(&s->m);
	while (!s->flag)
		pthread_cond_wait(&s->c, &s->m);
	pthread_mutex_unlock(&s->m);
	int st;
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
	CHECK(s->counter_m == 2 * n && s->counter_l == 2 * n,
	      "counters %ld (mutex) and %ld (rwlock), expected %ld each", s->counter_m, s->counter_l, 2 * n);
	munmap(s, sizeof(*s));
}

/* ---- rwlock ------------------------------------------------------------------ */

struct rw_arg {
	pthread_rwlock_t *l;
	int rc;
};

static void *rd_other(void *p)
{
	struct rw_arg *a = p;
	a->rc = pthread_rwlock_tryrdlock(a->l);
	if (!a->rc)
		pthread_rwlock_unlock(a->l);
	return NULL;
}

static void *wr_other(void *p)
{
	struct rw_arg *a = p;
	a->rc = pthread_rwlock_trywrlock(a->l);
	if (!a->rc)
		pthread_rwlock_unlock(a->l);
	return NULL;
}

static int other_try(pthread_rwlock_t *l, int write)
{
	struct rw_arg a = { .l = l };
	pthread_join(spawn(write ? wr_other : rd_other, &a), NULL);
	return a.rc;
}

struct rw_count {
	pthread_rwlock_t *l;
	long value, writes;
	atomic_int readers, writers;
	int bad;
};

static void *rw_count_main(void *p)
{
	struct rw_count *c = p;
	for (int i = 0; i < 5000; i++) {
		if (i % 4 == 0) {
			pthread_rwlock_wrlock(c->l);
			if (atomic_fetch_add(&c->writers, 1) || atomic_load(&c->readers))
				c->bad = 1;
			c->value++;
			c->writes++;
			atomic_fetch_sub(&c->writers, 1);
		} else {
			pthread_rwlock_rdlock(c->l);
			atomic_fetch_add(&c->readers, 1);
			if (atomic_load(&c->writers))
				c->bad = 1;
			atomic_fetch_sub(&c->readers, 1);
		}
		pthread_rwlock_unlock(c->l);
	}
	return NULL;
}

static void rw_basic(pthread_rwlock_t *l, const char *what)
{
	CHECK_RC(pthread_rwlock_rdlock(l), 0, "rdlock");
	CHECK_RC(other_try(l, 0), 0, "a second reader at once");
	CHECK_RC(other_try(l, 1), EBUSY, "trywrlock while read-held");
	CHECK_RC(pthread_rwlock_unlock(l), 0, "unlock");
	CHECK_RC(pthread_rwlock_wrlock(l), 0, "wrlock");
	CHECK_RC(other_try(l, 0), EBUSY, "tryrdlock while write-held");
	CHECK_RC(other_try(l, 1), EBUSY, "trywrlock while write-held");
	CHECK_RC(pthread_rwlock_wrlock(l), EDEADLK, "wrlock by the writer");
	CHECK_RC(pthread_rwlock_rdlock(l), EDEADLK, "rdlock by the writer");
	CHECK_RC(pthread_rwlock_unlock(l), 0, "unlock");
	struct rw_count c = { .l = l };
	pthread_t t[6];
	for (int i = 0; i < 6; i++)
		t[i] = spawn(rw_count_main, &c);
	for (int i = 0; i < 6; i++)
		pthread_join(t[i], NULL);
	CHECK(!c.bad && c.value == c.writes && c.writes == 6 * 1250, "%s: writes %ld value %ld overlap %d",
	      what, c.writes, c.value, c.bad);
}

static void case_rwlock_basic(void)
{
	static pthread_rwlock_t s = PTHREAD_RWLOCK_INITIALIZER;
	rw_basic(&s, "PTHREAD_RWLOCK_INITIALIZER");
	static pthread_rwlock_t w = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
	rw_basic(&w, "PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP");
	pthread_rwlock_t *z = calloc(1, sizeof(*z));
	rw_basic(z, "zeroed memory");
	free(z);
	pthread_rwlock_t l;
	CHECK_RC(pthread_rwlock_init(&l, NULL), 0, "init");
	rw_basic(&l, "init");
	pthread_rwlock_rdlock(&l);
	CHECK_RC(pthread_rwlock_destroy(&l), 0, "destroy of a held rwlock (glibc: 0)");
	pthread_rwlock_unlock(&l);
	CHECK_RC(pthread_rwlock_destroy(&l), 0, "destroy");
}

/* Several readers inside at once. */
static pthread_barrier_t rd_barrier;
static void *rd_together(void *p)
{
	pthread_rwlock_t *l = p;
	pthread_rwlock_rdlock(l);
	pthread_barrier_wait(&rd_barrier);      /* all four inside together */
	pthread_rwlock_unlock(l);
	return NULL;
}

static void case_rwlock_readers_together(void)
{
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	pthread_barrier_init(&rd_barrier, NULL, 4);
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		t[i] = spawn(rd_together, &l);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);       /* the watchdog catches a hang */
	pthread_barrier_destroy(&rd_barrier);
}

struct rw_timed {
	pthread_rwlock_t *l;
	int write, clocked;
	clockid_t clock;
	int rc;
	int64_t waited;
};

static void *rw_timed_main(void *p)
{
	struct rw_timed *a = p;
	struct timespec ts = in_ns(a->clock, 50000000);
	int64_t t0 = now_ns(a->clock);
	if (a->clocked)
		a->rc = a->write ? pthread_rwlock_clockwrlock(a->l, a->clock, &ts)
				 : pthread_rwlock_clockrdlock(a->l, a->clock, &ts);
	else
		a->rc = a->write ? pthread_rwlock_timedwrlock(a->l, &ts)
				 : pthread_rwlock_timedrdlock(a->l, &ts);
	a->waited = now_ns(a->clock) - t0;
	if (!a->rc)
		pthread_rwlock_unlock(a->l);
	return NULL;
}

static void case_rwlock_timed(void)
{
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	struct timespec bad = { time(NULL) + 10, 1000000000 }, past = { 0, 0 };
	/* glibc checks the time first, even on a free rwlock. */
	CHECK_RC(pthread_rwlock_timedrdlock(&l, &bad), EINVAL, "timedrdlock, bad tv_nsec");
	CHECK_RC(pthread_rwlock_timedwrlock(&l, &bad), EINVAL, "timedwrlock, bad tv_nsec");
	CHECK_RC(pthread_rwlock_clockrdlock(&l, 12345, &past), EINVAL, "clockrdlock, bad clock");
	CHECK_RC(pthread_rwlock_clockwrlock(&l, CLOCK_PROCESS_CPUTIME_ID, &past), EINVAL,
		 "clockwrlock, unsupported clock");
	CHECK_RC(pthread_rwlock_timedrdlock(&l, &past), 0, "timedrdlock of a free rwlock, time passed");
	pthread_rwlock_unlock(&l);
	pthread_rwlock_wrlock(&l);
	struct timespec ts = in_ns(CLOCK_REALTIME, 10000000);
	CHECK_RC(pthread_rwlock_timedwrlock(&l, &ts), EDEADLK, "timedwrlock by the writer");
	for (int k = 0; k < 8; k++) {
		struct rw_timed a = { .l = &l, .write = k & 1, .clocked = (k >> 1) & 1,
				      .clock = (k >> 2) ? CLOCK_MONOTONIC : CLOCK_REALTIME };
		if (!a.clocked && a.clock == CLOCK_MONOTONIC)
			continue;
		pthread_join(spawn(rw_timed_main, &a), NULL);
		CHECK_RC(a.rc, ETIMEDOUT, "timed lock of a write-held rwlock");
		CHECK(a.waited >= 49000000, "timed out after %.1f ms of 50", a.waited / 1e6);
	}
	pthread_rwlock_unlock(&l);
	pthread_rwlock_rdlock(&l);
	struct rw_timed a = { .l = &l, .write = 1, .clock = CLOCK_MONOTONIC, .clocked = 1 };
	pthread_join(spawn(rw_timed_main, &a), NULL);
	CHECK_RC(a.rc, ETIMEDOUT, "clockwrlock of a read-held rwlock");
	pthread_rwlock_unlock(&l);
}

/* A reader takes its read lock again while a writer waits (glibc's default
 * kind; POSIX requires recursive read locks to work). */
static pthread_rwlock_t rec_l = PTHREAD_RWLOCK_INITIALIZER, rec_l2 = PTHREAD_RWLOCK_INITIALIZER;
static atomic_int writer_state, writer2_state;  /* 1 waiting, 2 got it */
static void *rec_writer(void *p)
{
	pthread_rwlock_t *l = p;
	atomic_int *state = l == &rec_l2 ? &writer2_state : &writer_state;
	atomic_store(state, 1);
	pthread_rwlock_wrlock(l);
	atomic_store(state, 2);
	pthread_rwlock_unlock(l);
	return NULL;
}

static void case_rwlock_recursive_read(void)
{
	for (int k = 0; k < 3; k++) {
		atomic_store(&writer_state, 0);
		atomic_store(&writer2_state, 0);
		CHECK_RC(pthread_rwlock_rdlock(&rec_l), 0, "rdlock");
		CHECK_RC(pthread_rwlock_rdlock(&rec_l2), 0, "rdlock of a second rwlock");
		pthread_t w = spawn(rec_writer, &rec_l);
		pthread_t w2 = spawn(rec_writer, &rec_l2);
		sleep_ms(100);
		CHECK(atomic_load(&writer_state) == 1, "the writer is not waiting (%d)",
		      atomic_load(&writer_state));
		struct timespec ts = in_ns(CLOCK_REALTIME, 2000000000);
		int rc = k == 0 ? pthread_rwlock_rdlock(&rec_l)
		       : k == 1 ? pthread_rwlock_tryrdlock(&rec_l)
				: pthread_rwlock_timedrdlock(&rec_l, &ts);
		CHECK_RC(rc, 0, k == 0 ? "recursive rdlock while a writer waits"
			      : k == 1 ? "recursive tryrdlock while a writer waits"
				       : "recursive timedrdlock while a writer waits");
		for (int i = 0; i < 5; i++)
			CHECK_RC(pthread_rwlock_rdlock(&rec_l2), 0, "nested rdlock of the second");
		CHECK(atomic_load(&writer_state) == 1, "the writer got in while read-held");
		for (int i = 0; i < 6; i++)
			pthread_rwlock_unlock(&rec_l2);
		pthread_rwlock_unlock(&rec_l);
		sleep_ms(20);
		CHECK(atomic_load(&writer_state) == 1, "the writer got in while still read-held once");
		pthread_rwlock_unlock(&rec_l);
		pthread_join(w, NULL);
		pthread_join(w2, NULL);
		CHECK(atomic_load(&writer_state) == 2 && atomic_load(&writer2_state) == 2,
		      "the writers did not get the locks");
	}
}

/* Writer preference: a waiting writer keeps new readers out. */
static void case_rwlock_prefer_writer(void)
{
	pthread_rwlockattr_t at;
	pthread_rwlock_t l;
	pthread_rwlockattr_init(&at);
	CHECK_RC(pthread_rwlockattr_setkind_np(&at, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP), 0,
		 "setkind");
	pthread_rwlock_init(&l, &at);
	atomic_store(&writer_state, 0);
	pthread_rwlock_rdlock(&l);
	pthread_t w = spawn(rec_writer, &l);
	sleep_ms(100);
	CHECK(atomic_load(&writer_state) == 1, "the writer is not waiting");
	CHECK_RC(other_try(&l, 0), EBUSY, "a new reader while a writer waits (writer preference)");
	pthread_rwlock_unlock(&l);
	pthread_join(w, NULL);
	CHECK(atomic_load(&writer_state) == 2, "the writer did not get the lock");
	rw_basic(&l, "PREFER_WRITER_NONRECURSIVE");
	pthread_rwlock_destroy(&l);
}

/* ---- rwlock progress: who gets in, and when --------------------------------- */

/* An actor: one thread's one lock call, then (if it got the lock) a hold
 * until the case releases it.  state: 1 calling, 2 holding, 3 done (giving
 * back the lock, or the call failed).  2 is stored after the lock call and
 * left before the unlock: two actors seen at 2 together held together. */
enum { RW_RD, RW_TIMEDRD, RW_WR, RW_TIMEDWR, RW_CLOCKWR };

struct rw_actor {
	pthread_rwlock_t *l;
	int op;
	int64_t timeout_ns;     /* RW_TIMED*, RW_CLOCKWR: the deadline, from the call */
	atomic_int state, release;
	atomic_int *other;      /* a state that must not be 2 while we hold a write lock */
	atomic_int overlap;
	int rc;
	int64_t waited;         /* ns in the call, on the call's clock */
	pthread_attr_t *attr;   /* NULL: default attributes */
};

static void *rw_actor_main(void *p)
{
	struct rw_actor *a = p;
	clockid_t clock = a->op == RW_CLOCKWR ? CLOCK_MONOTONIC : CLOCK_REALTIME;
	struct timespec ts = in_ns(clock, a->timeout_ns);
	int64_t t0 = now_ns(clock);
	atomic_store(&a->state, 1);
	switch (a->op) {
	case RW_RD: a->rc = pthread_rwlock_rdlock(a->l); break;
	case RW_TIMEDRD: a->rc = pthread_rwlock_timedrdlock(a->l, &ts); break;
	case RW_WR: a->rc = pthread_rwlock_wrlock(a->l); break;
	case RW_TIMEDWR: a->rc = pthread_rwlock_timedwrlock(a->l, &ts); break;
	default: a->rc = pthread_rwlock_clockwrlock(a->l, clock, &ts); break;
	}
	a->waited = now_ns(clock) - t0;
	if (a->rc == 0) {
		atomic_store(&a->state, 2);
		while (!atomic_load(&a->release)) {
			if (a->other && atomic_load(a->other) == 2)
				atomic_store(&a->overlap, 1);
			sleep_ms(1);    /* sleeps: some actors run SCHED_FIFO */
		}
		atomic_store(&a->state, 3);     /* before the unlock: 2 means held */
		pthread_rwlock_unlock(a->l);
	}
	atomic_store(&a->state, 3);
	return NULL;
}

static pthread_t rw_actor_spawn(struct rw_actor *a)
{
	pthread_t t;
	int rc = pthread_create(&t, a->attr, rw_actor_main, a);
	if (rc) {
		printf("FAIL %s: pthread_create: %s\n", current, strerror(rc));
		exit(1);
	}
	return t;
}

/* Until the actor's state is at least s, at most ms: 1 if it got there. */
static int rw_actor_reaches(struct rw_actor *a, int s, int ms)
{
	int64_t end = now_ns(CLOCK_MONOTONIC) + (int64_t)ms * 1000000;
	while (atomic_load(&a->state) < s) {
		if (now_ns(CLOCK_MONOTONIC) >= end)
			return 0;
		sleep_ms(1);
	}
	return 1;
}

/* A thread that never comes back: the case cannot go on (its threads use
 * the case's stack), so it ends here, saying what hung. */
static void rw_hung(const char *what)
{
	printf("FAIL %s: %s (hung: the case stops here)\n", current, what);
	fflush(stdout);
	_exit(1);
}

/* Joins t, or, past ms, rw_hung(what). */
static void join_within(pthread_t t, int ms, const char *what)
{
	struct timespec ts = in_ns(CLOCK_REALTIME, (int64_t)ms * 1000000);
	int rc = pthread_timedjoin_np(t, NULL, &ts);
	if (rc == ETIMEDOUT)
		rw_hung(what);
	CHECK_RC(rc, 0, "pthread_timedjoin_np");
}

static const struct {
	int kind;               /* -1: a NULL attr (the default kind) */
	const char *name;
} rw_kinds[] = {
	{ -1, "default" },
	{ PTHREAD_RWLOCK_PREFER_READER_NP, "PREFER_READER_NP" },
	{ PTHREAD_RWLOCK_PREFER_WRITER_NP, "PREFER_WRITER_NP" },
	{ PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP, "PREFER_WRITER_NONRECURSIVE_NP" },
};

static void rw_init_kind(pthread_rwlock_t *l, int kind)
{
	if (kind < 0) {
		CHECK_RC(pthread_rwlock_init(l, NULL), 0, "init, NULL attr");
		return;
	}
	pthread_rwlockattr_t at;
	pthread_rwlockattr_init(&at);
	CHECK_RC(pthread_rwlockattr_setkind_np(&at, kind), 0, "setkind");
	CHECK_RC(pthread_rwlock_init(l, &at), 0, "init");
	pthread_rwlockattr_destroy(&at);
}

/* The lock is free: a writer gets it at once. */
static void rw_check_free(pthread_rwlock_t *l, const char *kind)
{
	int rc = pthread_rwlock_trywrlock(l);
	CHECK(rc == 0, "%s: trywrlock once every hold is given back: %d (%s), expected 0", kind, rc,
	      strerrorname_np(rc) ? strerrorname_np(rc) : "0");
	if (rc == 0)
		pthread_rwlock_unlock(l);
}

/* A writer gives up (timed wrlock, past its deadline) while the lock is
 * read-held and a reader R arrived behind it: after the writer's
 * ETIMEDOUT no writer holds or waits, so R gets in (POSIX rdlock), with
 * the first reader A still inside.  The deadline is 300 ms, well past the
 * 4 ms after which hotlock's waiting writer is due a handoff.  with_w2: a
 * second writer W2 queues (untimed) behind R before W gives up: W2 keeps
 * waiting while readers hold; whether R gets in before W2 is the kind's
 * choice (glibc's PREFER_WRITER_NONRECURSIVE_NP keeps R out), so not
 * asserted; all of them get through once A unlocks. */
static void rw_writer_gives_up(int kind, const char *kname, int op, int with_w2)
{
	char what[200];
	pthread_rwlock_t l;
	rw_init_kind(&l, kind);
	CHECK_RC(pthread_rwlock_rdlock(&l), 0, "A's rdlock");
	struct rw_actor w = { .l = &l, .op = op, .timeout_ns = 300000000 };
	struct rw_actor r = { .l = &l, .op = RW_RD };
	struct rw_actor w2 = { .l = &l, .op = RW_WR, .other = &r.state };
	pthread_t wt = rw_actor_spawn(&w);
	rw_actor_reaches(&w, 1, 1000);
	sleep_ms(50);
	CHECK(atomic_load(&w.state) == 1, "%s: W is not waiting (state %d) while A holds a read lock",
	      kname, atomic_load(&w.state));
	pthread_t rt = rw_actor_spawn(&r), w2t = 0;
	rw_actor_reaches(&r, 1, 1000);
	sleep_ms(20);           /* R in its rdlock well before W's deadline */
	if (with_w2) {
		sleep_ms(30);
		CHECK(atomic_load(&r.state) == 1, "%s: R got in (state %d) past the waiting writer W; "
		      "the W2 variant needs R blocked behind W", kname, atomic_load(&r.state));
		w2t = rw_actor_spawn(&w2);
		rw_actor_reaches(&w2, 1, 1000);
		sleep_ms(20);
	}
	snprintf(what, sizeof(what), "%s: W's %s (300 ms deadline) did not return within 1 s past it",
		 kname, op == RW_CLOCKWR ? "clockwrlock" : "timedwrlock");
	join_within(wt, 1300, what);
	CHECK_RC(w.rc, ETIMEDOUT, "W's timed wrlock while A holds a read lock");
	CHECK(w.waited >= 299000000, "%s: W timed out after %.1f ms of 300", kname, w.waited / 1e6);
	if (with_w2) {
		sleep_ms(50);
		CHECK(atomic_load(&w2.state) == 1, "%s: W2 (wrlock) is not waiting (state %d) while A "
		      "holds a read lock, after W gave up", kname, atomic_load(&w2.state));
		CHECK_RC(pthread_rwlock_unlock(&l), 0, "A's unlock");
		/* R and W2 both get through, one at a time. */
		int64_t end = now_ns(CLOCK_MONOTONIC) + 2000000000;
		while ((atomic_load(&r.state) < 3 || atomic_load(&w2.state) < 3) &&
		       now_ns(CLOCK_MONOTONIC) < end) {
			if (atomic_load(&r.state) == 2) {
				CHECK(atomic_load(&w2.state) != 2, "%s: R and W2 hold the lock together",
				      kname);
				atomic_store(&r.release, 1);
			}
			if (atomic_load(&w2.state) == 2) {
				sleep_ms(5);    /* W2 holds a while, looking for R inside */
				atomic_store(&w2.release, 1);
			}
			sleep_ms(1);
		}
		CHECK(!atomic_load(&w2.overlap), "%s: R got in while W2 held the write lock", kname);
		if (atomic_load(&r.state) < 3 || atomic_load(&w2.state) < 3) {
			snprintf(what, sizeof(what), "%s: 2 s after A's unlock (W gave up before), R (rdlock) "
				 "is at state %d and W2 (wrlock) at %d (1 waiting, 2 holding, 3 done)",
				 kname, atomic_load(&r.state), atomic_load(&w2.state));
			rw_hung(what);
		}
		join_within(rt, 1000, "R did not end");
		join_within(w2t, 1000, "W2 did not end");
		CHECK_RC(r.rc, 0, "R's rdlock");
		CHECK_RC(w2.rc, 0, "W2's wrlock");
	} else {
		if (!rw_actor_reaches(&r, 2, 1000)) {
			CHECK(0, "%s: W's timed wrlock gave up (%s), yet R's rdlock still waits 1 s later "
			      "while only A holds the lock, for reading (POSIX: no writer holds or waits, "
			      "so a reader gets in)", kname, strerrorname_np(w.rc) ? strerrorname_np(w.rc)
									       : "0");
			CHECK_RC(pthread_rwlock_unlock(&l), 0, "A's unlock");
			if (!rw_actor_reaches(&r, 2, 1000)) {
				snprintf(what, sizeof(what), "%s: R's rdlock still waits 1 s after A's unlock "
					 "too, with the lock free (a lost wake-up)", kname);
				rw_hung(what);
			}
			printf("     %s: %s: R got in only once A unlocked\n", current, kname);
			atomic_store(&r.release, 1);
			join_within(rt, 1000, "R did not end");
		} else {
			CHECK_RC(other_try(&l, 1), EBUSY, "trywrlock while A and R hold read locks");
			atomic_store(&r.release, 1);
			join_within(rt, 1000, "R's unlock did not return");
			CHECK_RC(r.rc, 0, "R's rdlock");
			CHECK_RC(pthread_rwlock_unlock(&l), 0, "A's unlock");
		}
	}
	rw_check_free(&l, kname);
	pthread_rwlock_destroy(&l);
}

static void case_rwlock_writer_gives_up(void)
{
	for (size_t k = 0; k < sizeof(rw_kinds) / sizeof(rw_kinds[0]); k++)
		rw_writer_gives_up(rw_kinds[k].kind, rw_kinds[k].name, RW_TIMEDWR, 0);
	rw_writer_gives_up(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP,
			   "PREFER_WRITER_NONRECURSIVE_NP, clockwrlock(CLOCK_MONOTONIC)", RW_CLOCKWR, 0);
	rw_writer_gives_up(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP,
			   "PREFER_WRITER_NONRECURSIVE_NP, a second writer W2 queued", RW_TIMEDWR, 1);
}

/* Reader preference (glibc's default kind, PREFER_READER_NP, and
 * PREFER_WRITER_NP, which glibc treats as PREFER_READER_NP): a reader gets
 * in while the lock is read-held and a writer waits.  Programs rely on it:
 * here a consumer holds a read lock while it waits on a condvar for a
 * producer that needs a read lock of its own, with a writer queued between
 * them.  With a fair rwlock that is a deadlock; the consumer's wait has a
 * 1.5 s deadline so that the case ends and says so. */
struct rp_shared {
	pthread_rwlock_t l;
	pthread_mutex_t m;
	pthread_cond_t c;
	int flag;
	atomic_int consumer, producer; /* 1 waiting, 2 read-held, 3 done */
	int consumer_rc;
};

static void *rp_consumer(void *p)
{
	struct rp_shared *s = p;
	atomic_store(&s->consumer, 1);
	pthread_rwlock_rdlock(&s->l);
	atomic_store(&s->consumer, 2);
	struct timespec ts = in_ns(CLOCK_REALTIME, 1500000000);
	int rc = 0;
	pthread_mutex_lock(&s->m);
	while (!s->flag && rc == 0)
		rc = pthread_cond_timedwait(&s->c, &s->m, &ts);
	s->consumer_rc = s->flag ? 0 : rc;
	pthread_mutex_unlock(&s->m);
	pthread_rwlock_unlock(&s->l);
	atomic_store(&s->consumer, 3);
	return NULL;
}

static void *rp_producer(void *p)
{
	struct rp_shared *s = p;
	atomic_store(&s->producer, 1);
	pthread_rwlock_rdlock(&s->l);
	atomic_store(&s->producer, 2);
	pthread_mutex_lock(&s->m);
	s->flag = 1;
	pthread_cond_signal(&s->c);
	pthread_mutex_unlock(&s->m);
	pthread_rwlock_unlock(&s->l);
	atomic_store(&s->producer, 3);
	return NULL;
}

/* Whether the shim runs glibc's default rwlock kinds as writer-yields
 * (hotlock-run --rwlock-default writer-yields, docs/shim.md). */
static int writer_yields(void)
{
	const char *v = getenv("HOTLOCK_RWLOCK_DEFAULT");
	return v && !strcmp(v, "writer-yields");
}

static void case_rwlock_reader_pref_progress(void)
{
	for (size_t k = 0; k < 3; k++) {        /* not PREFER_WRITER_NONRECURSIVE_NP */
		const char *kname = rw_kinds[k].name;
		struct rp_shared s = { .m = PTHREAD_MUTEX_INITIALIZER, .c = PTHREAD_COND_INITIALIZER };
		rw_init_kind(&s.l, rw_kinds[k].kind);
		pthread_t ct = spawn(rp_consumer, &s);
		int64_t end = now_ns(CLOCK_MONOTONIC) + 1000000000;
		while (atomic_load(&s.consumer) < 2 && now_ns(CLOCK_MONOTONIC) < end)
			sleep_ms(1);
		CHECK(atomic_load(&s.consumer) == 2, "%s: the consumer's rdlock of a free rwlock", kname);
		struct rw_actor w = { .l = &s.l, .op = RW_WR, .release = 1 };
		pthread_t wt = rw_actor_spawn(&w);
		rw_actor_reaches(&w, 1, 1000);
		sleep_ms(80);
		CHECK(atomic_load(&w.state) == 1, "%s: the writer is not waiting (state %d)", kname,
		      atomic_load(&w.state));
		/* writer-yields keeps new readers out while the writer's
		 * claim stands (the one difference from glibc it makes). */
		if (!writer_yields())
			CHECK(other_try(&s.l, 0) == 0, "%s: tryrdlock by another thread while the "
			      "lock is read-held and a writer waits: EBUSY, expected 0 (reader "
			      "preference)", kname);
		pthread_t pt = spawn(rp_producer, &s);
		char what[200];
		snprintf(what, sizeof(what), "%s: the producer, the consumer and the writer did not all "
			 "finish within 3 s", kname);
		join_within(ct, 3000, what);
		join_within(pt, 1000, what);
		join_within(wt, 1000, what);
		CHECK(s.consumer_rc == 0, "%s: the producer's rdlock waited behind the waiting writer "
		      "while the consumer held a read lock: the consumer's wait for its flag timed out "
		      "after 1.5 s (without the deadline: a deadlock; reader preference lets the producer "
		      "in)", kname);
		CHECK_RC(w.rc, 0, "the writer's wrlock once the readers left");
		rw_check_free(&s.l, kname);
		pthread_rwlock_destroy(&s.l);
	}
}

struct ry_reader {
	pthread_rwlock_t *l;
	atomic_int stop;
	int rc;
};

/* Cycles 45 ms read holds until told to stop. */
static void *ry_cycle(void *p)
{
	struct ry_reader *r = p;
	while (!atomic_load(&r->stop)) {
		if ((r->rc = pthread_rwlock_rdlock(r->l)))
			return NULL;
		sleep_ms(45);
		if ((r->rc = pthread_rwlock_unlock(r->l)))
			return NULL;
	}
	return NULL;
}

/* Under hotlock-run --rwlock-default writer-yields only (skipped
 * otherwise: glibc's default kind starves this writer, its bug 25619): in
 * glibc's default kind, a writer among three readers whose 45 ms holds
 * overlap without a gap gets the lock within 2 s; a read holder that
 * waits for another thread's rdlock while a writer waits is not
 * deadlocked (rwlock_reader_pref_progress has the same with a condvar). */
static void case_rwlock_writer_yields(void)
{
	if (!writer_yields()) {
		printf("skip %s: HOTLOCK_RWLOCK_DEFAULT is not writer-yields\n", current);
		return;
	}
	pthread_rwlock_t l;
	rw_init_kind(&l, -1);
	enum { NR = 3 };
	struct ry_reader r[NR];
	pthread_t rt[NR];
	for (int i = 0; i < NR; i++) {
		r[i] = (struct ry_reader){ .l = &l };
		rt[i] = spawn(ry_cycle, &r[i]);
		sleep_ms(15);   /* staggered: the holds overlap */
	}
	struct rw_actor w = { .l = &l, .op = RW_WR, .release = 1 };
	pthread_t wt = rw_actor_spawn(&w);
	CHECK(rw_actor_reaches(&w, 2, 2000), "the writer among overlapping read holds did not "
	      "get the lock within 2 s (glibc's bug 25619)");
	for (int i = 0; i < NR; i++)
		atomic_store(&r[i].stop, 1);
	join_within(wt, 3000, "the writer");
	for (int i = 0; i < NR; i++) {
		join_within(rt[i], 3000, "a reader");
		CHECK_RC(r[i].rc, 0, "a reader's rdlock or unlock");
	}
	CHECK_RC(w.rc, 0, "the writer's wrlock");

	/* The holder waits for a second reader while a writer waits. */
	CHECK_RC(pthread_rwlock_rdlock(&l), 0, "the holder's rdlock");
	struct rw_actor w2 = { .l = &l, .op = RW_WR, .release = 1 };
	pthread_t w2t = rw_actor_spawn(&w2);
	rw_actor_reaches(&w2, 1, 1000);
	sleep_ms(20);
	struct rw_actor rd = { .l = &l, .op = RW_RD, .release = 1 };
	pthread_t rdt = rw_actor_spawn(&rd);
	CHECK(rw_actor_reaches(&rd, 3, 2000), "the second reader, waited for by the read holder, "
	      "did not get in within 2 s while a writer waited");
	CHECK(atomic_load(&w2.state) == 1, "the writer got in while read-held (state %d)",
	      atomic_load(&w2.state));
	CHECK_RC(pthread_rwlock_unlock(&l), 0, "the holder's unlock");
	join_within(rdt, 3000, "the second reader");
	join_within(w2t, 3000, "the writer behind the two readers");
	CHECK_RC(rd.rc, 0, "the second reader's rdlock");
	CHECK_RC(w2.rc, 0, "the writer's wrlock after the readers");
	rw_check_free(&l, "default");
	pthread_rwlock_destroy(&l);
}

/* POSIX, Thread Execution Scheduling: with SCHED_FIFO threads, a reader
 * gets in unless a writer holds the lock or a writer of higher or equal
 * priority waits.  Here the writer waits at a lower priority than the
 * reader, so the reader gets in (glibc's default kind does).  The reverse
 * (LTP pthread_rwlock_rdlock/2-1: a lower-priority reader kept out by a
 * higher-priority writer) glibc's default kind does not do: not asserted.
 * Skipped without the privilege for SCHED_FIFO.  Every SCHED_FIFO thread
 * here blocks or sleeps; none is pinned. */
static void case_rwlock_rt_reader(void)
{
	int min = sched_get_priority_min(SCHED_FIFO);
	struct sched_param sp = { .sched_priority = min + 2 }, other = { .sched_priority = 0 };
	int rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	if (rc == EPERM) {
		printf("skip %s: SCHED_FIFO not permitted (EPERM)\n", current);
		return;
	}
	CHECK_RC(rc, 0, "pthread_setschedparam(SCHED_FIFO) of the main thread");
	if (rc)
		return;
	pthread_attr_t wattr, rattr;
	struct sched_param wp = { .sched_priority = min + 1 }, rp = { .sched_priority = min + 3 };
	pthread_attr_t *attrs[2] = { &wattr, &rattr };
	struct sched_param *prios[2] = { &wp, &rp };
	for (int i = 0; i < 2; i++) {
		pthread_attr_init(attrs[i]);
		pthread_attr_setinheritsched(attrs[i], PTHREAD_EXPLICIT_SCHED);
		pthread_attr_setschedpolicy(attrs[i], SCHED_FIFO);
		pthread_attr_setschedparam(attrs[i], prios[i]);
	}
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	CHECK_RC(pthread_rwlock_rdlock(&l), 0, "the main thread's rdlock (SCHED_FIFO min+2)");
	struct rw_actor w = { .l = &l, .op = RW_WR, .release = 1, .attr = &wattr };
	struct rw_actor r = { .l = &l, .op = RW_RD, .attr = &rattr };
	pthread_t wt = rw_actor_spawn(&w);
	rw_actor_reaches(&w, 1, 1000);
	sleep_ms(80);
	CHECK(atomic_load(&w.state) == 1, "the writer (SCHED_FIFO min+1) is not waiting (state %d)",
	      atomic_load(&w.state));
	pthread_t rt = rw_actor_spawn(&r);
	if (!rw_actor_reaches(&r, 2, 1000)) {
		CHECK(0, "a SCHED_FIFO min+3 reader's rdlock still waits after 1 s, while the lock is "
		      "read-held and only a lower-priority (min+1) writer waits (POSIX TPS: it gets in)");
	} else {
		CHECK(atomic_load(&w.state) == 1, "the writer got in while read-held");
	}
	atomic_store(&r.release, 1);
	CHECK_RC(pthread_rwlock_unlock(&l), 0, "the main thread's unlock");
	join_within(rt, 1000, "the SCHED_FIFO reader did not get in within 1 s of the main thread's "
		    "unlock");
	join_within(wt, 1000, "the SCHED_FIFO writer did not get in within 1 s of the readers' unlock");
	CHECK_RC(r.rc, 0, "the reader's rdlock");
	CHECK_RC(w.rc, 0, "the writer's wrlock");
	rw_check_free(&l, "default");
	for (int i = 0; i < 2; i++)
		pthread_attr_destroy(attrs[i]);
	CHECK_RC(pthread_setschedparam(pthread_self(), SCHED_OTHER, &other), 0,
		 "the main thread back to SCHED_OTHER");
}

/* PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP: a waiting writer keeps new
 * readers of other threads out (try: EBUSY; timed: ETIMEDOUT; blocking:
 * waits), gets the lock once the readers it waits for leave, and the
 * reader kept out gets in after the writer's unlock. */
static void case_rwlock_writer_pref_progress(void)
{
	const char *kname = "PREFER_WRITER_NONRECURSIVE_NP";
	pthread_rwlock_t l;
	rw_init_kind(&l, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	CHECK_RC(pthread_rwlock_rdlock(&l), 0, "A's rdlock");
	struct rw_actor w = { .l = &l, .op = RW_WR };
	struct rw_actor r = { .l = &l, .op = RW_RD, .other = NULL };
	struct rw_actor tr = { .l = &l, .op = RW_TIMEDRD, .timeout_ns = 100000000, .release = 1 };
	w.other = &r.state;
	pthread_t wt = rw_actor_spawn(&w);
	rw_actor_reaches(&w, 1, 1000);
	sleep_ms(80);
	CHECK(atomic_load(&w.state) == 1, "the writer is not waiting (state %d)", atomic_load(&w.state));
	CHECK_RC(other_try(&l, 0), EBUSY, "tryrdlock by another thread while a writer waits");
	join_within(rw_actor_spawn(&tr), 1200, "a timedrdlock with a 100 ms deadline did not return "
		    "within 1 s past it");
	CHECK_RC(tr.rc, ETIMEDOUT, "timedrdlock (100 ms) by another thread while a writer waits");
	CHECK(tr.waited >= 99000000, "the timedrdlock timed out after %.1f ms of 100", tr.waited / 1e6);
	pthread_t rt = rw_actor_spawn(&r);
	rw_actor_reaches(&r, 1, 1000);
	sleep_ms(50);
	CHECK(atomic_load(&r.state) == 1, "%s: a blocking rdlock by another thread got in (state %d) "
	      "while a writer waits", kname, atomic_load(&r.state));
	CHECK(atomic_load(&w.state) == 1, "the writer got in while A holds a read lock");
	CHECK_RC(pthread_rwlock_unlock(&l), 0, "A's unlock");
	if (!rw_actor_reaches(&w, 2, 1000))
		rw_hung("the writer did not get the lock within 1 s of the last reader's unlock");
	sleep_ms(20);
	CHECK(atomic_load(&r.state) == 1, "the blocked reader got in while the writer holds (state %d)",
	      atomic_load(&r.state));
	atomic_store(&w.release, 1);
	if (!rw_actor_reaches(&r, 2, 1000))
		rw_hung("the blocked reader did not get in within 1 s of the writer's unlock");
	CHECK(!atomic_load(&w.overlap), "the reader and the writer held the lock together");
	atomic_store(&r.release, 1);
	join_within(wt, 1000, "the writer did not end");
	join_within(rt, 1000, "the reader did not end");
	CHECK_RC(w.rc, 0, "the writer's wrlock");
	CHECK_RC(r.rc, 0, "the reader's rdlock");
	rw_check_free(&l, kname);
	pthread_rwlock_destroy(&l);
}

/* ---- condition variables ------------------------------------------------------ */

struct cv_arg {
	pthread_mutex_t *m;
	pthread_cond_t *c;
	int *pred;
	atomic_int waiting, woken;
};

static void *cv_waiter(void *p)
{
	struct cv_arg *a = p;
	pthread_mutex_lock(a->m);
	atomic_fetch_add(&a->waiting, 1);
	while (!*a->pred)
		pthread_cond_wait(a->c, a->m);
	atomic_fetch_add(&a->woken, 1);
	pthread_mutex_unlock(a->m);
	return NULL;
}

/* Until n threads wait (each counts itself under the mutex before its
 * wait, and the wait releases it: once we hold it, they are waiting). */
static void wait_for_waiters(struct cv_arg *a, int n)
{
	while (atomic_load(&a->waiting) < n)
		sleep_ms(1);
	pthread_mutex_lock(a->m);
	pthread_mutex_unlock(a->m);
}

static void cv_signal_broadcast(pthread_mutex_t *m, pthread_cond_t *c, const char *what)
{
	int pred = 0;
	struct cv_arg a = { .m = m, .c = c, .pred = &pred };
	pthread_t t[6];
	for (int i = 0; i < 6; i++)
		t[i] = spawn(cv_waiter, &a);
	wait_for_waiters(&a, 6);
	pthread_mutex_lock(m);
	pred = 1;
	CHECK_RC(pthread_cond_broadcast(c), 0, "broadcast");
	pthread_mutex_unlock(m);
	for (int i = 0; i < 6; i++)
		pthread_join(t[i], NULL);
	CHECK(atomic_load(&a.woken) == 6, "%s: broadcast woke %d of 6", what, atomic_load(&a.woken));
	/* One signal per waiter: each wakes one. */
	pred = 0;
	atomic_store(&a.waiting, 0);
	atomic_store(&a.woken, 0);
	for (int i = 0; i < 3; i++)
		t[i] = spawn(cv_waiter, &a);
	wait_for_waiters(&a, 3);
	pthread_mutex_lock(m);
	pred = 1;
	pthread_mutex_unlock(m);
	for (int i = 0; i < 3; i++) {
		CHECK_RC(pthread_cond_signal(c), 0, "signal");
		sleep_ms(5);
	}
	int64_t end = now_ns(CLOCK_MONOTONIC) + 5000000000;
	while (atomic_load(&a.woken) < 3 && now_ns(CLOCK_MONOTONIC) < end) {
		pthread_cond_broadcast(c);      /* spurious-wake tolerant predicate */
		sleep_ms(10);
	}
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	CHECK(atomic_load(&a.woken) == 3, "%s: %d of 3 woken", what, atomic_load(&a.woken));
}

static void case_cond_basic(void)
{
	static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	static pthread_cond_t s = PTHREAD_COND_INITIALIZER;
	cv_signal_broadcast(&m, &s, "PTHREAD_COND_INITIALIZER");
	pthread_cond_t *z = calloc(1, sizeof(*z));
	cv_signal_broadcast(&m, z, "zeroed memory");
	free(z);
	pthread_cond_t c;
	CHECK_RC(pthread_cond_init(&c, NULL), 0, "init");
	cv_signal_broadcast(&m, &c, "init");
	CHECK_RC(pthread_cond_signal(&c), 0, "signal with no waiter");
	CHECK_RC(pthread_cond_broadcast(&c), 0, "broadcast with no waiter");
	CHECK_RC(pthread_cond_destroy(&c), 0, "destroy");
	/* A recursive mutex held once, and an errorcheck one. */
	pthread_mutex_t em;
	init_type(&em, PTHREAD_MUTEX_ERRORCHECK);
	pthread_cond_init(&c, NULL);
	cv_signal_broadcast(&em, &c, "errorcheck mutex");
	struct timespec ts = in_ns(CLOCK_REALTIME, 1000000);
	CHECK_RC(pthread_cond_timedwait(&c, &em, &ts), EPERM, "timedwait without the errorcheck mutex");
	pthread_mutex_t rm;
	init_type(&rm, PTHREAD_MUTEX_RECURSIVE);
	cv_signal_broadcast(&rm, &c, "recursive mutex");
	pthread_cond_destroy(&c);
}

static void timed_wait_check(pthread_cond_t *c, clockid_t clock, int clockwait, const char *what)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&m);
	struct timespec ts = in_ns(clock, 50000000);
	int64_t t0 = now_ns(clock);
	int rc;
	do
		rc = clockwait ? pthread_cond_clockwait(c, &m, clock, &ts)
			       : pthread_cond_timedwait(c, &m, &ts);
	while (rc == 0);        /* spurious wake-ups are allowed */
	int64_t waited = now_ns(clock) - t0;
	CHECK_RC(rc, ETIMEDOUT, what);
	CHECK(waited >= 49000000, "%s: timed out after %.1f ms of 50", what, waited / 1e6);
	CHECK_RC(pthread_mutex_trylock(&m), EBUSY, "the mutex is held again after the timeout");
	pthread_mutex_unlock(&m);
}

static void case_cond_timed(void)
{
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	timed_wait_check(&c, CLOCK_REALTIME, 0, "timedwait (realtime)");
	timed_wait_check(&c, CLOCK_REALTIME, 1, "clockwait realtime");
	timed_wait_check(&c, CLOCK_MONOTONIC, 1, "clockwait monotonic");
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	CHECK_RC(pthread_condattr_setclock(&ca, CLOCK_MONOTONIC), 0, "setclock");
	pthread_cond_t mc;
	pthread_cond_init(&mc, &ca);
	timed_wait_check(&mc, CLOCK_MONOTONIC, 0, "timedwait on a CLOCK_MONOTONIC condvar");
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&m);
	struct timespec bad = { time(NULL) + 10, 1000000000 }, past = { 0, 0 };
	CHECK_RC(pthread_cond_timedwait(&c, &m, &bad), EINVAL, "timedwait, bad tv_nsec");
	CHECK_RC(pthread_cond_clockwait(&c, &m, 12345, &past), EINVAL, "clockwait, bad clock");
	CHECK_RC(pthread_cond_clockwait(&c, &m, CLOCK_PROCESS_CPUTIME_ID, &past), EINVAL,
		 "clockwait, unsupported clock");
	CHECK_RC(pthread_cond_timedwait(&c, &m, &past), ETIMEDOUT, "timedwait, time passed");
	CHECK_RC(pthread_mutex_trylock(&m), EBUSY, "the mutex is held after the calls");
	pthread_mutex_unlock(&m);
}

/* Producers and consumers on a bounded queue. */
#define Q_CAP 8
static struct {
	pthread_mutex_t m;
	pthread_cond_t not_full, not_empty;
	long items[Q_CAP];
	int head, count, producers_left;
	long sum;
} q = { .m = PTHREAD_MUTEX_INITIALIZER, .not_full = PTHREAD_COND_INITIALIZER,
	.not_empty = PTHREAD_COND_INITIALIZER };

static void *producer(void *p)
{
	long base = (long)(intptr_t)p;
	for (long i = 1; i <= 5000; i++) {
		pthread_mutex_lock(&q.m);
		while (q.count == Q_CAP)
			pthread_cond_wait(&q.not_full, &q.m);
		q.items[(q.head + q.count++) % Q_CAP] = base + i;
		pthread_cond_signal(&q.not_empty);
		pthread_mutex_unlock(&q.m);
	}
	pthread_mutex_lock(&q.m);
	if (--q.producers_left == 0)
		pthread_cond_broadcast(&q.not_empty);
	pthread_mutex_unlock(&q.m);
	return NULL;
}

static void *consumer(void *p)
{
	(void)p;
	for (;;) {
		pthread_mutex_lock(&q.m);
		while (q.count == 0 && q.producers_left)
			pthread_cond_wait(&q.not_empty, &q.m);
		if (q.count == 0) {
			pthread_mutex_unlock(&q.m);
			return NULL;
		}
		q.sum += q.items[q.head];
		q.head = (q.head + 1) % Q_CAP;
		q.count--;
		pthread_cond_signal(&q.not_full);
		pthread_mutex_unlock(&q.m);
	}
}

static void case_cond_queue(void)
{
	q.producers_left = 4;
	pthread_t t[8];
	for (int i = 0; i < 4; i++)
		t[i] = spawn(producer, (void *)(intptr_t)(i * 1000000));
	for (int i = 4; i < 8; i++)
		t[i] = spawn(consumer, NULL);
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	long want = 0;
	for (int i = 0; i < 4; i++)
		want += 5000L * i * 1000000 + 5000L * 5001 / 2;
	CHECK(q.sum == want && q.count == 0, "sum %ld, expected %ld; %d left", q.sum, want, q.count);
}

/* A condvar waited with mutexes glibc keeps. */
static void case_cond_glibc_mutex(void)
{
	const char *names[] = { "robust", "priority inheritance", "process-shared" };
	for (int k = 0; k < 3; k++) {
		pthread_mutexattr_t at;
		pthread_mutex_t m;
		pthread_mutexattr_init(&at);
		if (k == 0)
			pthread_mutexattr_setrobust(&at, PTHREAD_MUTEX_ROBUST);
		else if (k == 1)
			pthread_mutexattr_setprotocol(&at, PTHREAD_PRIO_INHERIT);
		else
			pthread_mutexattr_setpshared(&at, PTHREAD_PROCESS_SHARED);
		pthread_mutex_init(&m, &at);
		pthread_cond_t c = PTHREAD_COND_INITIALIZER;
		cv_signal_broadcast(&m, &c, names[k]);
		timed_wait_check(&c, CLOCK_REALTIME, 0, names[k]);
		pthread_mutex_destroy(&m);
	}
}

/* A process-shared condvar (glibc keeps it under the shim) waited with a
 * private mutex (hotlock's), on either clock. */
static void case_cond_shared_private_mutex(void)
{
	for (int k = 0; k < 2; k++) {
		pthread_condattr_t ca;
		pthread_condattr_init(&ca);
		pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
		if (k)
			pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_t c;
		CHECK_RC(pthread_cond_init(&c, &ca), 0, "init process-shared condvar");
		pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
		cv_signal_broadcast(&m, &c, "process-shared condvar, private mutex");
		timed_wait_check(&c, k ? CLOCK_MONOTONIC : CLOCK_REALTIME, 0,
				 "process-shared condvar, private mutex: timedwait");
		CHECK_RC(pthread_cond_destroy(&c), 0, "destroy");
	}
}

/* Cancellation: a thread cancelled in a condvar wait runs its cleanup
 * handlers holding the mutex. */
static pthread_mutex_t cancel_m;
static pthread_cond_t cancel_c = PTHREAD_COND_INITIALIZER;
static atomic_int cancel_started, cleanup_rc = -1, cancel_pred;
static void cancel_cleanup(void *p)
{
	(void)p;
	atomic_store(&cleanup_rc, pthread_mutex_unlock(&cancel_m));
}

static void *cancel_waiter(void *p)
{
	intptr_t mode = (intptr_t)p;
	pthread_mutex_lock(&cancel_m);
	if (mode == 2)
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	atomic_store(&cancel_started, 1);
	pthread_cleanup_push(cancel_cleanup, NULL);
	struct timespec ts = in_ns(CLOCK_REALTIME, 60 * 1000000000LL);
	while (!atomic_load(&cancel_pred)) {
		if (mode == 1)
			pthread_cond_timedwait(&cancel_c, &cancel_m, &ts);
		else
			pthread_cond_wait(&cancel_c, &cancel_m);
	}
	pthread_cleanup_pop(0);
	pthread_mutex_unlock(&cancel_m);
	if (mode == 2) {
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
		pthread_testcancel();   /* acts on the pending cancel */
		return (void *)1;       /* not reached */
	}
	return NULL;
}

static void case_cond_cancel(void)
{
	init_type(&cancel_m, PTHREAD_MUTEX_ERRORCHECK);
	const char *modes[] = { "pthread_cond_wait", "pthread_cond_timedwait",
				"pthread_cond_wait with cancellation disabled" };
	for (intptr_t mode = 0; mode < 3; mode++) {
		atomic_store(&cancel_started, 0);
		atomic_store(&cleanup_rc, -1);
		atomic_store(&cancel_pred, 0);
		pthread_t t = spawn(cancel_waiter, (void *)mode);
		while (!atomic_load(&cancel_started))
			sleep_ms(1);
		sleep_ms(50);
		CHECK_RC(pthread_cancel(t), 0, "pthread_cancel");
		if (mode == 2) {
			sleep_ms(50);
			pthread_mutex_lock(&cancel_m);
			atomic_store(&cancel_pred, 1);
			pthread_cond_signal(&cancel_c);
			pthread_mutex_unlock(&cancel_m);
		}
		void *res;
		pthread_join(t, &res);
		CHECK(res == PTHREAD_CANCELED, "%s: the thread was not cancelled", modes[mode]);
		if (mode < 2)
			CHECK(atomic_load(&cleanup_rc) == 0,
			      "%s: the cleanup handler's unlock of the errorcheck mutex returned %d "
			      "(0: it held the mutex)", modes[mode], atomic_load(&cleanup_rc));
		CHECK_RC(pthread_mutex_trylock(&cancel_m), 0, "the mutex is free after the cancel");
		pthread_mutex_unlock(&cancel_m);
	}
}

/* A cancel racing a signal: the signal still wakes a waiter. */
static atomic_int race_woken;
static int race_tokens;
static void race_cleanup(void *p)
{
	(void)p;
	pthread_mutex_unlock(&cancel_m);
}

static void *race_waiter(void *p)
{
	(void)p;
	pthread_mutex_lock(&cancel_m);
	atomic_fetch_add(&cancel_started, 1);
	pthread_cleanup_push(race_cleanup, NULL);
	while (!race_tokens)
		pthread_cond_wait(&cancel_c, &cancel_m);
	race_tokens--;
	atomic_fetch_add(&race_woken, 1);
	pthread_cleanup_pop(1);
	return NULL;
}

static void case_cond_cancel_signal_race(void)
{
	pthread_mutex_init(&cancel_m, NULL);
	for (int round = 0; round < 20; round++) {
		atomic_store(&cancel_started, 0);
		atomic_store(&race_woken, 0);
		race_tokens = 0;
		pthread_t t[3];
		for (int i = 0; i < 3; i++)
			t[i] = spawn(race_waiter, NULL);
		while (atomic_load(&cancel_started) < 3)
			sleep_ms(1);
		pthread_mutex_lock(&cancel_m);
		pthread_mutex_unlock(&cancel_m);
		pthread_mutex_lock(&cancel_m);
		race_tokens = 1;
		pthread_cond_signal(&cancel_c);
		pthread_mutex_unlock(&cancel_m);
		pthread_cancel(t[round % 3]);
		int64_t end = now_ns(CLOCK_MONOTONIC) + 5000000000;
		while (race_tokens && now_ns(CLOCK_MONOTONIC) < end)
			sleep_ms(1);
		CHECK(race_tokens == 0, "round %d: the signal was lost with the cancel", round);
		for (int i = 0; i < 3; i++)
			pthread_cancel(t[i]);
		for (int i = 0; i < 3; i++)
			pthread_join(t[i], NULL);
		if (failures)
			break;
	}
}

/* cond_cancel_destroy: cancel a waiter, broadcast, destroy the condvar and
 * reuse its memory at once (POSIX: nobody is blocked on it after the
 * broadcast; glibc's destroy waits for the woken waiters to leave it).  The
 * cancelled waiter must not touch the condvar after that: its bytes stay as
 * the reuse wrote them.  200 rounds, each with a fresh mutex of each
 * round's kind (normal; robust, which glibc keeps under the shim). */
struct destroy_round {
	pthread_mutex_t m;
	pthread_cond_t *c;
	atomic_int waiting;
	int pred;
};

static void destroy_cleanup(void *p)
{
	pthread_mutex_unlock(&((struct destroy_round *)p)->m);
}

static void *destroy_waiter(void *p)
{
	struct destroy_round *r = p;
	pthread_mutex_lock(&r->m);
	atomic_fetch_add(&r->waiting, 1);
	pthread_cleanup_push(destroy_cleanup, r);
	while (!r->pred)
		pthread_cond_wait(r->c, &r->m);
	pthread_cleanup_pop(1);
	return NULL;
}

/* Waits (up to 2 s) until n waiters counted themselves and one more lock
 * of r->m succeeded: each released it in its wait. */
static void destroy_wait_for(struct destroy_round *r, int n)
{
	int64_t end = now_ns(CLOCK_MONOTONIC) + 2000000000;
	while (atomic_load(&r->waiting) < n && now_ns(CLOCK_MONOTONIC) < end)
		sleep_ms(1);
	pthread_mutex_lock(&r->m);
	pthread_mutex_unlock(&r->m);
}

static int destroy_reuse_check(pthread_cond_t *c, pthread_t *t, int n, const char *what,
			       int round)
{
	int rc = pthread_cond_destroy(c);
	CHECK_RC(rc, 0, what);
	memset(c, 0x5a, sizeof(*c));
	for (int i = 0; i < n; i++)
		join_within(t[i], 3000, "a woken waiter did not come back");
	const unsigned char *b = (const unsigned char *)c;
	size_t bad = 0;
	for (size_t i = 0; i < sizeof(*c); i++)
		bad += b[i] != 0x5a;
	CHECK(bad == 0, "%s, round %d: %zu bytes of the destroyed condvar's reused memory "
	      "were written by a waiter", what, round, bad);
	return rc != 0 || bad != 0;
}

static void case_cond_cancel_destroy(void)
{
	pthread_cond_t *c = malloc(sizeof(*c));
	for (int round = 0; round < 200; round++) {
		struct destroy_round r = { .c = c };
		pthread_mutex_init(&r.m, NULL);
		pthread_cond_init(c, NULL);
		pthread_t t[2];
		for (int i = 0; i < 2; i++)
			t[i] = spawn(destroy_waiter, &r);
		destroy_wait_for(&r, 2);
		pthread_cancel(t[round % 2]);
		pthread_mutex_lock(&r.m);
		r.pred = 1;
		pthread_cond_broadcast(c);
		pthread_mutex_unlock(&r.m);
		if (destroy_reuse_check(c, t, 2, "destroy after a cancel and a broadcast", round))
			break;
		pthread_mutex_destroy(&r.m);
	}
	free(c);
}

/* cond_glibc_mutex_destroy: waiters with a mutex glibc keeps (robust,
 * priority inheritance), a broadcast, then destroy at once: 0, and no waiter
 * writes the condvar after it (glibc's destroy waits for them). */
static void case_cond_glibc_mutex_destroy(void)
{
	pthread_cond_t *c = malloc(sizeof(*c));
	const char *names[] = { "robust", "priority inheritance" };
	for (int kind = 0; kind < 2; kind++) {
		for (int round = 0; round < 100; round++) {
			struct destroy_round r = { .c = c };
			pthread_mutexattr_t a;
			pthread_mutexattr_init(&a);
			if (kind == 0)
				pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
			else
				pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT);
			pthread_mutex_init(&r.m, &a);
			pthread_mutexattr_destroy(&a);
			pthread_cond_init(c, NULL);
			pthread_t t[3];
			for (int i = 0; i < 3; i++)
				t[i] = spawn(destroy_waiter, &r);
			destroy_wait_for(&r, 3);
			pthread_mutex_lock(&r.m);
			r.pred = 1;
			pthread_cond_broadcast(c);
			pthread_mutex_unlock(&r.m);
			if (destroy_reuse_check(c, t, 3, names[kind], round))
				break;
			pthread_mutex_destroy(&r.m);
		}
	}
	free(c);
}

/* cond_wait_after_cancel: a cancelled thread's cleanup handler and its
 * thread-specific-data destructor wait on a condvar (a timed wait of
 * 100 ms, in the usual predicate loop): each wait blocks until its
 * deadline, as on glibc, instead of returning at once, again and again. */
static pthread_mutex_t after_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t after_c = PTHREAD_COND_INITIALIZER;
static atomic_int after_calls[2], after_started;
static pthread_key_t after_key;

static void after_wait(int which)
{
	struct timespec ts = in_ns(CLOCK_REALTIME, 100000000);
	pthread_mutex_lock(&after_m);
	while (atomic_fetch_add(&after_calls[which], 1) < 100000 &&
	       pthread_cond_timedwait(&after_c, &after_m, &ts) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&after_m);
}

static void after_cleanup(void *p)
{
	(void)p;
	pthread_mutex_unlock(&after_m);
	after_wait(0);
}

static void after_destructor(void *p)
{
	(void)p;
	after_wait(1);
}

static void *after_waiter(void *p)
{
	(void)p;
	pthread_setspecific(after_key, (void *)1);
	pthread_mutex_lock(&after_m);
	pthread_cleanup_push(after_cleanup, NULL);
	atomic_store(&after_started, 1);
	for (;;)
		pthread_cond_wait(&after_c, &after_m);
	pthread_cleanup_pop(0);
	return NULL;
}

static void case_cond_wait_after_cancel(void)
{
	pthread_key_create(&after_key, after_destructor);
	pthread_t t = spawn(after_waiter, NULL);
	while (!atomic_load(&after_started))
		sleep_ms(1);
	sleep_ms(20);
	pthread_cancel(t);
	join_within(t, 3000, "the cancelled thread did not finish its cleanup");
	/* One call each on glibc; a few spurious wake-ups are allowed. */
	CHECK(atomic_load(&after_calls[0]) <= 5 && atomic_load(&after_calls[1]) <= 5,
	      "a 100 ms timed wait took %d calls in the cleanup handler and %d in the "
	      "key destructor (each returned before its deadline)",
	      atomic_load(&after_calls[0]), atomic_load(&after_calls[1]));
}

/* The GLIBC_2.2.5 condvar functions (the old ABI: an 8-byte object that
 * points to the condvar glibc allocates at first use). */
int old_cond_init(void *, const pthread_condattr_t *);
int old_cond_destroy(void *);
int old_cond_wait(void *, pthread_mutex_t *);
int old_cond_timedwait(void *, pthread_mutex_t *, const struct timespec *);
int old_cond_signal(void *);
int old_cond_broadcast(void *);
__asm__(".symver old_cond_init, pthread_cond_init@GLIBC_2.2.5");
__asm__(".symver old_cond_destroy, pthread_cond_destroy@GLIBC_2.2.5");
__asm__(".symver old_cond_wait, pthread_cond_wait@GLIBC_2.2.5");
__asm__(".symver old_cond_timedwait, pthread_cond_timedwait@GLIBC_2.2.5");
__asm__(".symver old_cond_signal, pthread_cond_signal@GLIBC_2.2.5");
__asm__(".symver old_cond_broadcast, pthread_cond_broadcast@GLIBC_2.2.5");

static struct {
	void *cond;     /* the old 8-byte object */
	pthread_mutex_t m;
	int pred;
	atomic_int waiting;
} old = { .m = PTHREAD_MUTEX_INITIALIZER };

static void *old_waiter(void *p)
{
	(void)p;
	pthread_mutex_lock(&old.m);
	atomic_fetch_add(&old.waiting, 1);
	while (!old.pred)
		old_cond_wait(&old.cond, &old.m);
	pthread_mutex_unlock(&old.m);
	return NULL;
}

static void case_cond_old_abi(void)
{
	CHECK_RC(old_cond_init(&old.cond, NULL), 0, "old init");
	pthread_t t[3];
	for (int i = 0; i < 3; i++)
		t[i] = spawn(old_waiter, NULL);
	while (atomic_load(&old.waiting) < 3)
		sleep_ms(1);
	pthread_mutex_lock(&old.m);
	old.pred = 1;
	CHECK_RC(old_cond_signal(&old.cond), 0, "old signal");
	CHECK_RC(old_cond_broadcast(&old.cond), 0, "old broadcast");
	pthread_mutex_unlock(&old.m);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	pthread_mutex_lock(&old.m);
	struct timespec ts = in_ns(CLOCK_REALTIME, 20000000);
	int rc;
	do
		rc = old_cond_timedwait(&old.cond, &old.m, &ts);
	while (rc == 0);
	CHECK_RC(rc, ETIMEDOUT, "old timedwait");
	pthread_mutex_unlock(&old.m);
	CHECK_RC(old_cond_destroy(&old.cond), 0, "old destroy");
}

/* ---- fork, exit, many threads, dlopen ------------------------------------------ */

/* fork_free, fork_rw and fork_c are free at every fork; the contenders
 * keep fork_busy and busy_rw busy meanwhile (held at a fork, those are
 * held by a thread the child does not have: not used there). */
static pthread_mutex_t fork_free = PTHREAD_MUTEX_INITIALIZER, fork_busy = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t fork_rw = PTHREAD_RWLOCK_INITIALIZER, busy_rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_cond_t fork_c = PTHREAD_COND_INITIALIZER;
static atomic_int fork_stop;
static void *fork_contender(void *p)
{
	(void)p;
	while (!atomic_load(&fork_stop)) {
		pthread_mutex_lock(&fork_busy);
		pthread_mutex_unlock(&fork_busy);
		pthread_rwlock_rdlock(&busy_rw);
		pthread_rwlock_unlock(&busy_rw);
	}
	return NULL;
}

static void case_fork(void)
{
	pthread_mutex_t held_e, held_r, held_n = PTHREAD_MUTEX_INITIALIZER;
	init_type(&held_e, PTHREAD_MUTEX_ERRORCHECK);
	init_type(&held_r, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_lock(&held_e);
	pthread_mutex_lock(&held_n);
	pthread_mutex_lock(&held_r);
	pthread_mutex_lock(&held_r);
	pthread_t t[3];
	for (int i = 0; i < 3; i++)
		t[i] = spawn(fork_contender, NULL);
	for (int round = 0; round < 10; round++) {
		pid_t pid = fork();
		if (pid == 0) {
			int bad = 0, rc;
			/* Held by the forking thread: still held in the child.
			 * An errorcheck or recursive mutex knows its owner by
			 * TID, which fork changed: glibc says EPERM to the
			 * child's unlock, hotlock remembers the parent's TID
			 * (0); either way the mutex stays held until then. */
			bad |= (pthread_mutex_trylock(&held_e) != EBUSY);
			rc = pthread_mutex_unlock(&held_e);
			bad |= (rc != 0 && rc != EPERM);
			bad |= (pthread_mutex_trylock(&held_n) != EBUSY) << 1;
			bad |= (pthread_mutex_unlock(&held_n) != 0) << 2;
			bad |= (pthread_mutex_lock(&held_n) != 0) << 3;
			rc = pthread_mutex_unlock(&held_r);
			if (rc == 0) {  /* the count of 2 goes on */
				bad |= (pthread_mutex_unlock(&held_r) != 0) << 5;
				bad |= (pthread_mutex_unlock(&held_r) != EPERM) << 6;
			} else {
				bad |= (rc != EPERM) << 4;
			}
			/* Free locks are usable, also from new threads. */
			struct counter c = { .m = &fork_free, .iters = 2000 };
			pthread_t ct[3];
			for (int i = 0; i < 3; i++)
				pthread_create(&ct[i], NULL, count_main, &c);
			for (int i = 0; i < 3; i++)
				pthread_join(ct[i], NULL);
			bad |= (c.n != 6000 || c.bad) << 7;
			/* (exit statuses are 8 bits: the rest report by name) */
			if (pthread_rwlock_wrlock(&fork_rw) != 0)
				printf("FAIL fork: child: the free rwlock\n");
			pthread_rwlock_unlock(&fork_rw);
			pthread_mutex_lock(&fork_free);
			struct timespec ts = in_ns(CLOCK_REALTIME, 5000000);
			if (pthread_cond_timedwait(&fork_c, &fork_free, &ts) != ETIMEDOUT)
				printf("FAIL fork: child: the free condvar\n");
			pthread_mutex_unlock(&fork_free);
			fflush(stdout);
			_exit(bad);
		}
		int st;
		waitpid(pid, &st, 0);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "round %d: child status 0x%x (exit bits: 1 errorcheck held, 2/4/8 normal held, "
		      "16/32/64 recursive count, 128 free mutex)", round, st);
	}
	atomic_store(&fork_stop, 1);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
}

static pthread_mutex_t exit_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t exit_c = PTHREAD_COND_INITIALIZER;
static void *exit_blocker(void *p)
{
	(void)p;
	pthread_mutex_lock(&exit_m);
	pthread_cond_wait(&exit_c, &exit_m);    /* never signalled */
	return NULL;
}

static void *exit_locker(void *p)
{
	(void)p;
	pthread_mutex_lock(&exit_m);            /* blocks: main of the child holds it... */
	return NULL;
}

static void *exit_caller(void *p)
{
	intptr_t how = (intptr_t)p;
	sleep_ms(50);
	if (how == 0)
		exit(42);
	_exit(43);
}

/* fork_library_handlers: a library's own atfork handlers (atfork_lib.c:
 * prepare locks its mutex, parent and child unlock it) run in the child
 * before any of the shim's, while 3 threads contend on that mutex (held up
 * 2 to 6 ms, so that waiters queue, park and fall due: the handoff
 * threshold is 4 ms).  The child's unlock, and its next call into the
 * library, must not wait for a thread of the parent: each of 20 children
 * makes one call and exits, within 2 s (the case stops at the first that
 * does not). */
long atfork_lib_call(long hold_us);
static atomic_int lib_stop;

static void *lib_caller(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	while (!atomic_load(&lib_stop))
		atfork_lib_call(2000 + rand_r(&seed) % 4000);
	return NULL;
}

static void case_fork_library_handlers(void)
{
	pthread_t t[3];
	for (int i = 0; i < 3; i++)
		t[i] = spawn(lib_caller, (void *)(uintptr_t)(i + 1));
	int hung = 0, bad = 0;
	for (int round = 0; round < 20; round++) {
		struct timespec ts = { 0, 1000000 + round * 150000 };
		nanosleep(&ts, NULL);
		pid_t pid = fork();
		if (pid == 0) {
			atfork_lib_call(0);
			_exit(0);
		}
		int st = 0;
		int64_t end = now_ns(CLOCK_MONOTONIC) + 2000000000;
		pid_t r;
		while ((r = waitpid(pid, &st, WNOHANG)) == 0 && now_ns(CLOCK_MONOTONIC) < end) {
			struct timespec p = { 0, 2000000 };
			nanosleep(&p, NULL);
		}
		if (r == 0) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			hung++;
			break;
		} else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			bad++;
		}
	}
	atomic_store(&lib_stop, 1);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	CHECK(hung == 0 && bad == 0, "a child hung on the library's lock (%d), %d failed",
	      hung, bad);
}

static void case_exit_from_thread(void)
{
	for (intptr_t how = 0; how < 3; how++) {
		pid_t pid = fork();
		if (pid == 0) {
			pthread_t t;
			pthread_create(&t, NULL, exit_blocker, NULL);
			sleep_ms(20);
			pthread_mutex_lock(&exit_m);
			pthread_create(&t, NULL, exit_locker, NULL);
			if (how == 2) {
				sleep_ms(50);
				return_from_main:
				exit(44);       /* main returns while threads block on locks */
			}
			pthread_create(&t, NULL, exit_caller, (void *)how);
			pause();
			goto return_from_main;
		}
		int st;
		waitpid(pid, &st, 0);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 42 + how, "exit case %d: status 0x%x", (int)how,
		      st);
	}
}

static pthread_mutex_t many_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t many_l = PTHREAD_RWLOCK_INITIALIZER;
static pthread_cond_t many_c = PTHREAD_COND_INITIALIZER;
static int many_go, many_in;
static long many_written, many_woken;   /* under many_l, under many_m */
static void *many_main(void *p)
{
	(void)p;
	pthread_rwlock_rdlock(&many_l);
	pthread_rwlock_unlock(&many_l);
	pthread_rwlock_wrlock(&many_l);
	many_written++;
	pthread_rwlock_unlock(&many_l);
	pthread_mutex_lock(&many_m);
	many_in++;
	while (!many_go)
		pthread_cond_wait(&many_c, &many_m);
	many_woken++;
	pthread_mutex_unlock(&many_m);
	return NULL;
}

static void case_many_threads(void)
{
	enum { N = 2000 };
	static pthread_t t[N];
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 64 * 1024);
	int made = 0;
	for (; made < N; made++)
		if (pthread_create(&t[made], &at, many_main, NULL))
			break;
	CHECK(made == N, "created %d of %d threads", made, N);
	for (;;) {
		pthread_mutex_lock(&many_m);
		int in = many_in;
		pthread_mutex_unlock(&many_m);
		if (in == made)
			break;
		sleep_ms(2);
	}
	pthread_mutex_lock(&many_m);
	many_go = 1;
	pthread_cond_broadcast(&many_c);
	pthread_mutex_unlock(&many_m);
	for (int i = 0; i < made; i++)
		pthread_join(t[i], NULL);
	CHECK(many_written == made && many_woken == made, "written %ld, woken %ld, expected %d each",
	      many_written, many_woken, made);
}

static char self_dir[4096];
static void case_dlopen(void)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/dl_locklib.so", self_dir);
	for (int round = 0; round < 3; round++) {
		void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		CHECK(h != NULL, "dlopen %s: %s", path, dlerror());
		if (!h)
			return;
		long (*run)(int) = (long (*)(int))dlsym(h, "dl_locklib_run");
		CHECK(run != NULL, "dlsym");
		if (run)
			CHECK(run(4) == 4 * 3 * 1000, "the library's locked counts are off");
		CHECK(dlclose(h) == 0, "dlclose");
	}
}

/* The layout the shim relies on (glibc's, checked here on glibc). */
static void case_layout(void)
{
	CHECK(sizeof(pthread_mutex_t) == 40 && sizeof(pthread_rwlock_t) == 56 &&
	      sizeof(pthread_cond_t) == 48, "sizes %zu %zu %zu", sizeof(pthread_mutex_t),
	      sizeof(pthread_rwlock_t), sizeof(pthread_cond_t));
	pthread_mutex_t inits[] = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP,
				    PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP,
				    PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP };
	for (int k = 0; k < 4; k++) {
		unsigned char b[40];
		memcpy(b, &inits[k], 40);
		int kind;
		memcpy(&kind, b + 16, 4);
		int other = 0;
		for (int i = 0; i < 40; i++)
			if ((i < 16 || i >= 20) && b[i])
				other = 1;
		CHECK(kind == k && !other, "mutex initialiser %d: kind %d at byte 16, other bytes %s", k,
		      kind, other ? "set" : "zero");
	}
	pthread_rwlock_t w = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
	unsigned flags;
	memcpy(&flags, (char *)&w + 48, 4);
	CHECK(flags == PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP, "rwlock __flags %u at byte 48",
	      flags);
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	static const unsigned char zero[48];
	CHECK(!memcmp(&c, zero, 48), "PTHREAD_COND_INITIALIZER is not all zero");
}

/* ---- the driver ------------------------------------------------------------------ */

static const struct {
	const char *name;
	void (*fn)(void);
	unsigned watchdog_s;    /* 0: 20 */
} cases[] = {
	{ "layout", case_layout, 0 },
	{ "mutex_normal", case_mutex_normal, 0 },
	{ "mutex_unlock_by_other", case_mutex_unlock_by_other, 0 },
	{ "mutex_errorcheck", case_mutex_errorcheck, 0 },
	{ "mutex_recursive", case_mutex_recursive, 0 },
	{ "mutex_recursive_overflow", case_mutex_recursive_overflow, 90 },  /* 2^32 locks: ~12 s */
	{ "mutex_timed", case_mutex_timed, 0 },
	{ "mutex_timed_held", case_mutex_timed_held, 0 },
	{ "mutex_destroy_reuse", case_mutex_destroy_reuse, 0 },
	{ "mutex_destroy_cond_waiter", case_mutex_destroy_cond_waiter, 0 },
	{ "mutex_robust", case_mutex_robust, 0 },
	{ "mutex_pi_pp", case_mutex_pi_pp, 0 },
	{ "process_shared", case_process_shared, 0 },
	{ "rwlock_basic", case_rwlock_basic, 0 },
	{ "rwlock_readers_together", case_rwlock_readers_together, 0 },
	{ "rwlock_timed", case_rwlock_timed, 0 },
	{ "rwlock_recursive_read", case_rwlock_recursive_read, 0 },
	{ "rwlock_prefer_writer", case_rwlock_prefer_writer, 0 },
	{ "rwlock_writer_gives_up", case_rwlock_writer_gives_up, 0 },
	{ "rwlock_reader_pref_progress", case_rwlock_reader_pref_progress, 0 },
	{ "rwlock_writer_yields", case_rwlock_writer_yields, 0 },
	{ "rwlock_rt_reader", case_rwlock_rt_reader, 0 },
	{ "rwlock_writer_pref_progress", case_rwlock_writer_pref_progress, 0 },
	{ "cond_basic", case_cond_basic, 0 },
	{ "cond_timed", case_cond_timed, 0 },
	{ "cond_queue", case_cond_queue, 0 },
	{ "cond_glibc_mutex", case_cond_glibc_mutex, 0 },
	{ "cond_shared_private_mutex", case_cond_shared_private_mutex, 0 },
	{ "cond_cancel", case_cond_cancel, 0 },
	{ "cond_cancel_signal_race", case_cond_cancel_signal_race, 0 },
	{ "cond_cancel_destroy", case_cond_cancel_destroy, 0 },
	{ "cond_glibc_mutex_destroy", case_cond_glibc_mutex_destroy, 0 },
	{ "cond_wait_after_cancel", case_cond_wait_after_cancel, 0 },
	{ "cond_old_abi", case_cond_old_abi, 0 },
	{ "fork", case_fork, 0 },
	{ "fork_library_handlers", case_fork_library_handlers, 0 },
	{ "exit_from_thread", case_exit_from_thread, 0 },
	{ "many_threads", case_many_threads, 0 },
	{ "dlopen", case_dlopen, 0 },
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

static int run_case(size_t i)
{
	int64_t t0 = now_ns(CLOCK_MONOTONIC);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		current = cases[i].name;
		alarm(cases[i].watchdog_s ? cases[i].watchdog_s : 20);
		cases[i].fn();
		fflush(stdout);
		_exit(failures ? 1 : 0);
	}
	int st;
	waitpid(pid, &st, 0);
	double s = (now_ns(CLOCK_MONOTONIC) - t0) / 1e9;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		printf("ok   %-28s (%.2f s)\n", cases[i].name, s);
		return 0;
	}
	if (WIFSIGNALED(st))
		printf("FAIL %-28s killed by signal %d%s (%.2f s)\n", cases[i].name, WTERMSIG(st),
		       WTERMSIG(st) == SIGALRM ? ": hung (watchdog)" : "", s);
	else
		printf("FAIL %-28s (%.2f s)\n", cases[i].name, s);
	return 1;
}

int main(int argc, char **argv)
{
	ssize_t n = readlink("/proc/self/exe", self_dir, sizeof(self_dir) - 1);
	if (n > 0) {
		self_dir[n] = 0;
		char *slash = strrchr(self_dir, '/');
		if (slash)
			*slash = 0;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	int selected[NCASES] = { 0 }, any = 0;
	for (int a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--list")) {
			for (size_t i = 0; i < NCASES; i++)
				puts(cases[i].name);
			return 0;
		}
		if (!strcmp(argv[a], "--case") && a + 1 < argc) {
			size_t i;
			for (i = 0; i < NCASES && strcmp(cases[i].name, argv[a + 1]); i++)
				;
			if (i == NCASES) {
				fprintf(stderr, "posix_suite: no case %s (see --list)\n", argv[a + 1]);
				return 2;
			}
			selected[i] = any = 1;
			a++;
			continue;
		}
		fprintf(stderr, "usage: posix_suite [--list] [--case NAME]...\n");
		return 2;
	}
	int failed = 0, ran = 0;
	int64_t t0 = now_ns(CLOCK_MONOTONIC);
	for (size_t i = 0; i < NCASES; i++)
		if (!any || selected[i]) {
			failed += run_case(i);
			ran++;
		}
	printf("posix_suite: %d of %d cases passed (%.1f s)\n", ran - failed, ran,
	       (now_ns(CLOCK_MONOTONIC) - t0) / 1e9);
	return failed ? 1 : 0;
}

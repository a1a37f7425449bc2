/* SPDX-License-Identifier: MIT */
/* hl_cond API test: every call, every documented error, and the wake-up
 * guarantees of include/hotlock/cond.h, with real threads.
 *
 * Every waiter here calls hl_cond_wait/hl_cond_timedwait once, without a
 * predicate loop: the header promises no spurious wake-up (a thread has a
 * node for a wait at nesting level 0), so a return of 0 is a wake-up by a
 * signal or broadcast, and the tests count them.  "Listed" below means
 * the waiter took the mutex, said so, and called the wait: once the main
 * thread takes the mutex after that, the waiter has released it in its
 * wait, which lists it first (cond.h: a signal sent after that finds it).
 *
 * Asserts:
 *  - sizeof(hl_cond_t) <= 16; HL_COND_INIT is all-zero bytes; static and
 *    automatic HL_COND_INIT, memset 0, calloc'd memory and hl_cond_init over
 *    garbage are condvars without waiters (signal/broadcast 0, a past
 *    deadline ETIMEDOUT, a waiter released by a signal and by a broadcast,
 *    destroy 0); a condvar destroyed after its waiters left and initialised
 *    again works, also with another mutex;
 *  - signal and broadcast with no waiters return 0 and are not remembered:
 *    a thread that begins to wait after them stays waiting (100 ms) until
 *    a later signal;
 *  - no stolen signal (glibc bug 13165's class): 1-3 threads A wait; a
 *    signal (under the mutex, after it, or with the mutex free); then a
 *    thread B begins to wait: exactly one A returns, B does not, and from
 *    then on every single signal releases exactly one more waiter (returns
 *    counted under the mutex never exceed the signals sent); many rounds;
 *    which A is released is not asserted (only "one of those waiting");
 *  - broadcast with N = 1..32 waiters releases all N, and none of 1-2
 *    threads that began to wait after it (under the mutex or after it);
 *  - no spurious wake-up: waiters whose predicate is false (hl_cond_wait,
 *    timedwait with a far deadline on both clocks) do not return in 200 ms
 *    while the same mutex is locked and unlocked and another condvar on it
 *    is signalled and broadcast; 4 waiters and 4 signals 30 ms apart: each
 *    signal releases exactly one;
 *  - timedwait on CLOCK_REALTIME and CLOCK_MONOTONIC: ETIMEDOUT not before
 *    the deadline (the clock reads at least the deadline on return) and
 *    less than 2 s after it, the mutex released during the wait (another
 *    thread takes it meanwhile) and held again on return (owner = the
 *    caller's TID, unlock 0); a deadline already past ({0,0}, {-1,0},
 *    1 ms ago, {0,999999999}): ETIMEDOUT at once, mutex held; signalled
 *    before its deadline: 0;
 *  - timedwait EINVAL for 9 bad clocks (CPU-time clocks, MONOTONIC_RAW,
 *    BOOTTIME, COARSE, TAI, 12345, -1) and tv_nsec -1, 1e9, at once, with
 *    the mutex still held by the caller; also EINVAL, not EPERM, with the
 *    mutex free or held by another thread (checked before anything else);
 *    the condvar is left without waiters (destroy 0);
 *  - EPERM from wait and timedwait (both clocks, without waiting out the
 *    deadline) when the caller does not hold the mutex: mutex free, held by
 *    another thread, caller holding another mutex; nothing changes;
 *  - destroy: EBUSY while a thread waits (wait and timedwait), and while
 *    one of two waiters is still waiting after the other was signalled;
 *    0 once its waiters were signalled (or broadcast to) while they are
 *    still blocked on the mutex the main thread holds: the condvar is then
 *    overwritten with 0xff bytes, or freed (ASan catches a later access),
 *    and the waiters return 0 normally; also after a signal without the
 *    mutex; destroy polled while a short timedwait times out returns only
 *    EBUSY or 0, and a heap condvar freed at its 0 is not touched again
 *    (ASan); a signal (1 waiter) or broadcast (1-6 waiters) sent as their
 *    common deadline passes, then destroy: 0 at once, and the memory,
 *    filled with 0xff (or freed), is not written afterwards by a waiter
 *    that gave up and was still unlisting itself (this race is narrow with
 *    real threads: a destroy that does not wait for such a waiter is
 *    caught in about one run of four here);
 *  - one condvar, two mutexes: while a thread waits with m1, a wait or
 *    timedwait with m2 returns EINVAL at once with m2 still held by the
 *    caller; the first waiter is still released by a signal; once it has
 *    left, the condvar works with m2;
 *  - a timed-out waiter is neither lost nor woken twice: many rounds of
 *    1-4 threads with timedwaits of -20..280 us, or 2-7 with one deadline
 *    (the signal sent as it passes, so that it often finds waiters that
 *    gave up still listed), and one thread W that waits without a
 *    deadline, listed before, between or after them, then one signal
 *    (under the mutex or after it) or a broadcast, racing the
 *    deadlines: at most one timed waiter returns 0 for a signal; if none
 *    did, the signal went to W, which returns without another signal (a
 *    signal sent while W waits is never lost); if one did, W is still
 *    waiting and a second signal releases it; every 0-return is matched by
 *    a signal; every ETIMEDOUT comes at or after its deadline with the
 *    mutex held; the condvar is left without waiters (destroy 0);
 *  - fork: while threads of the parent wait on a condvar (and the forking
 *    thread holds its mutex or not), the child can use the condvar, without
 *    hl_cond_init or after it, with the same mutex or another one: signal,
 *    broadcast, a waiter released by each, a timed wait, destroy 0; and the
 *    same in children forked at random moments while threads hammer a
 *    condvar with short timed waits, signals and broadcasts.
 * A thread that does not return is reported after 10 s with the mutex's
 * describe line; a main thread stuck in a call, by the phase alarm (45 s).
 * Seed: HOTLOCK_SEED (printed). */
#include "call.h"
#include "common.h"

#include <hotlock/hotlock.h>

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdatomic.h>

#if TEST_TSAN
/* The fork tests start threads in children of a multithreaded process. */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
	return "die_after_fork=0";
}
#endif

#define HANG_MS 10000           /* a wait this long for a thread is a hang */
#define AT_ONCE_NS (100 * NSEC_PER_MSEC)
#define FAR_NS (60 * NSEC_PER_SEC)

static const char *clock_name(clockid_t c)
{
	return c == CLOCK_MONOTONIC ? "CLOCK_MONOTONIC" : "CLOCK_REALTIME";
}

/* A hang: what was expected, the mutex's state; the test cannot go on. */
static void hang(hl_mutex_t *m, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
static void hang(hl_mutex_t *m, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "FATAL (hang): ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (m) {
		hl_mutex_describe(m, buf, sizeof(buf));
		fprintf(stderr, "; mutex: %s", buf);
	}
	fputc('\n', stderr);
	fflush(stderr);
	fflush(stdout);
	_exit(2);
}

/* Each test names its phase (set_phase, common.h): a hang fails the run
 * with that name. */

/* sem_wait with a limit; false when it passed. */
static bool sem_wait_ms(sem_t *s, int64_t ms)
{
	struct timespec dl = deadline_in(CLOCK_REALTIME, ms * NSEC_PER_MSEC);
	int r;
	while ((r = sem_timedwait(s, &dl)) != 0 && errno == EINTR)
		;
	return r == 0;
}

/* ---- a waiter thread: one wait, its result recorded ---- */

/* Return counters shared by a group of waiters, changed under the mutex. */
struct group {
	int nret;               /* waits that returned (any code) */
	int nret0;              /* of which 0 */
	sem_t ret;              /* posted after each return */
};

static void group_init(struct group *g)
{
	g->nret = g->nret0 = 0;
	sem_init(&g->ret, 0, 0);
}

enum wkind { W_WAIT, W_TIMED };

struct waiter {
	pthread_t th;
	hl_cond_t *c;
	hl_mutex_t *m;
	enum wkind kind;
	clockid_t clk;
	int64_t rel_ns;         /* W_TIMED: deadline this long after the call */
	int64_t abs_ns;         /* W_TIMED: this deadline instead, when not 0 */
	struct group *g;
	/* results */
	uint32_t tid;
	int rc;
	int64_t deadline_ns;    /* on clk */
	int64_t ret_clock_ns;   /* clk read right after the return */
	uint32_t owner_after;   /* hl_mutex_owner() right after the return */
	int unlock_rc;
	atomic_int returned;
	sem_t reg, done;
};

static void *waiter_main(void *p)
{
	struct waiter *w = p;
	struct timespec ts;
	int rc;

	w->tid = test_gettid();
	rc = hl_mutex_lock(w->m);
	REQUIRE(rc == 0, "waiter: hl_mutex_lock returned %d", rc);
	if (w->kind == W_TIMED) {
		w->deadline_ns = w->abs_ns ? w->abs_ns : clock_ns(w->clk) + w->rel_ns;
		ts = ns_to_ts(w->deadline_ns);
	}
	sem_post(&w->reg);
	if (w->kind == W_WAIT)
		rc = hl_cond_wait(w->c, w->m);
	else
		rc = hl_cond_timedwait(w->c, w->m, w->clk, &ts);
	w->ret_clock_ns = clock_ns(w->kind == W_TIMED ? w->clk : CLOCK_MONOTONIC);
	w->owner_after = hl_mutex_owner(w->m);
	w->rc = rc;
	if (w->g) {
		w->g->nret++;
		w->g->nret0 += rc == 0;
	}
	atomic_store(&w->returned, 1);
	w->unlock_rc = hl_mutex_unlock(w->m);
	if (w->g)
		sem_post(&w->g->ret);
	sem_post(&w->done);
	return NULL;
}

static void waiter_start(struct waiter *w, hl_cond_t *c, hl_mutex_t *m, enum wkind kind,
			 clockid_t clk, int64_t rel_ns, struct group *g)
{
	memset(w, 0, sizeof(*w));
	w->c = c;
	w->m = m;
	w->kind = kind;
	w->clk = clk;
	w->rel_ns = rel_ns;
	w->g = g;
	w->rc = -1;
	sem_init(&w->reg, 0, 0);
	sem_init(&w->done, 0, 0);
	REQUIRE(pthread_create(&w->th, NULL, waiter_main, w) == 0, "pthread_create");
}

/* The waiter holds m and is about to wait (it may be listed already). */
static void waiter_reg(struct waiter *w)
{
	if (!sem_wait_ms(&w->reg, HANG_MS))
		hang(w->m, "a waiter thread did not take its mutex in %d ms", HANG_MS);
}

/* Starts a waiter and returns once it is listed on c. */
static void waiter_start_listed(struct waiter *w, hl_cond_t *c, hl_mutex_t *m, enum wkind kind,
				clockid_t clk, int64_t rel_ns, struct group *g)
{
	waiter_start(w, c, m, kind, clk, rel_ns, g);
	waiter_reg(w);
	REQUIRE(hl_mutex_lock(m) == 0, "lock");
	REQUIRE(hl_mutex_unlock(m) == 0, "unlock");
}

static bool waiter_returned(struct waiter *w)
{
	return atomic_load(&w->returned) != 0;
}

/* Joins the waiter; one still blocked after HANG_MS is a hang (fatal). */
static int waiter_join(struct waiter *w, const char *what)
{
	if (!sem_wait_ms(&w->done, HANG_MS))
		hang(w->m, "%s: the waiter (tid %u) did not return in %d ms", what, w->tid, HANG_MS);
	pthread_join(w->th, NULL);
	sem_destroy(&w->reg);
	sem_destroy(&w->done);
	return w->rc;
}

/* Joins and checks a return of 0 with the mutex held by the waiter. */
static void waiter_join_ok(struct waiter *w, const char *what)
{
	int rc = waiter_join(w, what);
	CHECK(rc == 0, "%s: the wait returned %d (%s), expected 0", what, rc, strerror(rc));
	CHECK(w->owner_after == w->tid, "%s: after the wait the mutex owner is %u, not the waiter %u",
	      what, w->owner_after, w->tid);
	CHECK(w->unlock_rc == 0, "%s: the waiter's unlock returned %d", what, w->unlock_rc);
}

static void group_wait_return(struct group *g, hl_mutex_t *m, const char *what)
{
	if (!sem_wait_ms(&g->ret, HANG_MS))
		hang(m, "%s: no waiter returned in %d ms", what, HANG_MS);
}

/* ---- a call on another thread, with a limit (call.h) ---- */

/* call_join, reporting a hang with m's state. */
static int call_join_m(struct call *c, hl_mutex_t *m, const char *what)
{
	if (!call_done_within(c, HANG_MS))
		hang(m, "%s: still blocked after %d ms", what, HANG_MS);
	return call_join(c, 0, what);
}

static int call_run(int (*fn)(void *), void *arg, hl_mutex_t *m, const char *what)
{
	struct call c;
	call_start(&c, fn, arg);
	return call_join_m(&c, m, what);
}

/* A holder thread: takes m, holds it until told, unlocks. */
struct holder {
	hl_mutex_t *m;
	sem_t locked, release;
	struct call c;
};

static int holder_fn(void *p)
{
	struct holder *h = p;
	int rc = hl_mutex_lock(h->m);
	sem_post(&h->locked);
	if (rc)
		return rc;
	while (sem_wait(&h->release) != 0 && errno == EINTR)
		;
	return hl_mutex_unlock(h->m);
}

static void holder_start(struct holder *h, hl_mutex_t *m)
{
	h->m = m;
	sem_init(&h->locked, 0, 0);
	sem_init(&h->release, 0, 0);
	call_start(&h->c, holder_fn, h);
	if (!sem_wait_ms(&h->locked, HANG_MS))
		hang(m, "the holder did not get the mutex");
}

static int holder_finish(struct holder *h)
{
	int rc;
	sem_post(&h->release);
	rc = call_join_m(&h->c, h->m, "holder thread");
	sem_destroy(&h->locked);
	sem_destroy(&h->release);
	return rc;
}

/* ---- init forms ---- */

/* c has no waiters: no-op signal and broadcast, a past deadline, a waiter
 * released by a signal, one by a broadcast, destroy 0. */
static void basic_on(hl_cond_t *c, hl_mutex_t *m, const char *what)
{
	struct timespec past = { 0, 0 };
	struct waiter w;
	char buf[128];

	CHECK(hl_cond_signal(c) == 0, "%s: signal without waiters", what);
	CHECK(hl_cond_broadcast(c) == 0, "%s: broadcast without waiters", what);
	CHECK_RC(hl_mutex_lock(m), 0);
	CHECK(hl_cond_timedwait(c, m, CLOCK_MONOTONIC, &past) == ETIMEDOUT,
	      "%s: timedwait with deadline {0, 0} did not time out", what);
	CHECK(hl_mutex_owner(m) == test_gettid(), "%s: mutex not held after the timeout", what);
	CHECK_RC(hl_mutex_unlock(m), 0);
	waiter_start_listed(&w, c, m, W_WAIT, CLOCK_MONOTONIC, 0, NULL);
	CHECK(hl_cond_signal(c) == 0, "%s: signal", what);
	snprintf(buf, sizeof(buf), "%s: waiter released by a signal", what);
	waiter_join_ok(&w, buf);
	waiter_start_listed(&w, c, m, W_TIMED, CLOCK_REALTIME, FAR_NS, NULL);
	CHECK(hl_cond_broadcast(c) == 0, "%s: broadcast", what);
	snprintf(buf, sizeof(buf), "%s: timed waiter released by a broadcast", what);
	waiter_join_ok(&w, buf);
	CHECK(hl_cond_destroy(c) == 0, "%s: destroy after the waiters left", what);
}

static hl_cond_t static_c = HL_COND_INIT;

static void test_init_forms(void)
{
	static const hl_cond_t zero_bytes;
	hl_cond_t local = HL_COND_INIT;
	hl_cond_t zeroed, garbage;
	hl_cond_t *heap = calloc(1, sizeof(hl_cond_t));
	hl_mutex_t m = HL_MUTEX_INIT, m2 = HL_MUTEX_INIT;

	CHECK(sizeof(hl_cond_t) <= 16, "sizeof(hl_cond_t) = %zu", sizeof(hl_cond_t));
	CHECK(memcmp(&local, &zero_bytes, sizeof(local)) == 0, "HL_COND_INIT is not all-zero bytes");
	basic_on(&static_c, &m, "static HL_COND_INIT");
	basic_on(&local, &m, "automatic HL_COND_INIT");
	memset(&zeroed, 0, sizeof(zeroed));
	basic_on(&zeroed, &m, "memset 0");
	REQUIRE(heap, "calloc");
	basic_on(heap, &m, "calloc");
	free(heap);
	memset(&garbage, 0xa5, sizeof(garbage));
	CHECK_RC(hl_cond_init(&garbage), 0);
	basic_on(&garbage, &m, "hl_cond_init over 0xa5 bytes");
	/* Destroyed (by basic_on) after its waiters left, initialised again:
	 * works, with the same mutex and with another one. */
	CHECK_RC(hl_cond_init(&local), 0);
	basic_on(&local, &m, "re-initialised");
	CHECK_RC(hl_cond_init(&local), 0);
	basic_on(&local, &m2, "re-initialised, another mutex");
	CHECK_RC(hl_mutex_destroy(&m), 0);
	CHECK_RC(hl_mutex_destroy(&m2), 0);
	printf("init forms: HL_COND_INIT (static, automatic), memset, calloc, hl_cond_init, "
	       "re-init after destroy: usable\n");
}

/* ---- signals without waiters are not remembered ---- */

static void test_noop(void)
{
	hl_cond_t c = HL_COND_INIT;
	hl_mutex_t m = HL_MUTEX_INIT;
	struct waiter w;

	for (int i = 0; i < 3; i++) {
		CHECK_RC(hl_cond_signal(&c), 0);
		CHECK_RC(hl_cond_broadcast(&c), 0);
	}
	CHECK_RC(hl_mutex_lock(&m), 0);
	CHECK_RC(hl_cond_signal(&c), 0);     /* under the mutex, too */
	CHECK_RC(hl_cond_broadcast(&c), 0);
	CHECK_RC(hl_mutex_unlock(&m), 0);
	waiter_start_listed(&w, &c, &m, W_WAIT, CLOCK_MONOTONIC, 0, NULL);
	sleep_ns(100 * NSEC_PER_MSEC); /* a remembered signal would release it now */
	CHECK(!waiter_returned(&w), "a thread that began to wait after signals and broadcasts "
	      "without waiters returned (rc %d): they were remembered", w.rc);
	CHECK_RC(hl_cond_signal(&c), 0);
	waiter_join_ok(&w, "waiter after no-op signals, then signalled");
	CHECK_RC(hl_cond_destroy(&c), 0);
	printf("signal/broadcast without waiters: 0, not remembered (waiter still blocked 100 ms "
	       "later)\n");
}

/* ---- no stolen signal ---- */

static void test_no_stolen_signal(test_rng_t *rng)
{
	const int rounds = HOTLOCK_SANITIZED ? 120 : 400;
	hl_cond_t c = HL_COND_INIT;
	hl_mutex_t m = HL_MUTEX_INIT;
	int first_longest = 0;

	for (int r = 0; r < rounds; r++) {
		struct group g;
		struct waiter a[3], b;
		int na = 1 + (int)rng_below(rng, 3);
		int mode = (int)rng_below(rng, 3);
		int signals = 1, a_returned = 0;
		char what[96];

		group_init(&g);
		for (int i = 0; i < na; i++)
			waiter_start_listed(&a[i], &c, &m, i % 2 ? W_TIMED : W_WAIT,
					    i == 2 ? CLOCK_REALTIME : CLOCK_MONOTONIC, FAR_NS, &g);
		/* The signal; B starts after it. */
		if (mode == 0) {
			CHECK_RC(hl_mutex_lock(&m), 0);
			CHECK_RC(hl_cond_signal(&c), 0);
			waiter_start(&b, &c, &m, W_WAIT, CLOCK_MONOTONIC, 0, &g); /* queues on m */
			if (rng_below(rng, 2))
				sleep_ns(20 * NSEC_PER_USEC);
			CHECK_RC(hl_mutex_unlock(&m), 0);
		} else if (mode == 1) {
			CHECK_RC(hl_mutex_lock(&m), 0);
			CHECK_RC(hl_cond_signal(&c), 0);
			CHECK_RC(hl_mutex_unlock(&m), 0);
			waiter_start(&b, &c, &m, W_WAIT, CLOCK_MONOTONIC, 0, &g);
		} else {
			CHECK_RC(hl_cond_signal(&c), 0);
			waiter_start(&b, &c, &m, W_WAIT, CLOCK_MONOTONIC, 0, &g);
		}
		snprintf(what, sizeof(what), "round %d (%d waiting, mode %d)", r, na, mode);
		group_wait_return(&g, &m, what);
		waiter_reg(&b);
		CHECK_RC(hl_mutex_lock(&m), 0);  /* B is listed now, or it returned */
		for (int i = 0; i < na; i++)
			a_returned += waiter_returned(&a[i]);
		CHECK(g.nret == 1 && a_returned == 1 && !waiter_returned(&b),
		      "%s: one signal: %d returns (%d of the threads waiting at the signal), and "
		      "the thread that began to wait after it %s", what, g.nret, a_returned,
		      waiter_returned(&b) ? "RETURNED (stolen signal)" : "waits");
		first_longest += waiter_returned(&a[0]);
		CHECK_RC(hl_mutex_unlock(&m), 0);
		if (r % 8 == 0) {
			sleep_ns(NSEC_PER_MSEC);
			CHECK_RC(hl_mutex_lock(&m), 0);
			CHECK(g.nret == 1 && !waiter_returned(&b),
			      "%s: 1 ms after: %d returns for one signal, B %s", what, g.nret,
			      waiter_returned(&b) ? "returned" : "waits");
			CHECK_RC(hl_mutex_unlock(&m), 0);
		}
		/* The rest, one signal at a time: each releases exactly one. */
		for (int k = 0; k < na; k++) {
			CHECK_RC(hl_mutex_lock(&m), 0);
			CHECK_RC(hl_cond_signal(&c), 0);
			signals++;
			CHECK_RC(hl_mutex_unlock(&m), 0);
			group_wait_return(&g, &m, what);
			CHECK_RC(hl_mutex_lock(&m), 0);
			CHECK(g.nret == signals, "%s: %d returns after %d signals", what, g.nret,
			      signals);
			CHECK_RC(hl_mutex_unlock(&m), 0);
		}
		for (int i = 0; i < na; i++)
			waiter_join_ok(&a[i], what);
		waiter_join_ok(&b, what);
		CHECK(g.nret0 == na + 1, "%s: %d waits returned 0 of %d", what, g.nret0, na + 1);
		sem_destroy(&g.ret);
		CHECK_RC(hl_cond_destroy(&c), 0);
		if (test_failures)
			break;
	}
	printf("no stolen signal: %d rounds of 1-3 waiters, a signal, then a new waiter: one of "
	       "the earlier waiters released each time (the longest-waiting one in %d)\n", rounds,
	       first_longest);
}

/* ---- broadcast ---- */

static void test_broadcast(test_rng_t *rng)
{
	hl_cond_t c = HL_COND_INIT;
	hl_mutex_t m = HL_MUTEX_INIT;
	struct waiter *w = calloc(34, sizeof(*w));
	REQUIRE(w, "calloc");

	for (int n = 1; n <= 32; n++) {
		struct group g;
		int late = 1 + (int)rng_below(rng, 2);
		bool under = n % 2;
		char what[64];

		snprintf(what, sizeof(what), "broadcast to %d", n);
		group_init(&g);
		for (int i = 0; i < n; i++) {
			waiter_start(&w[i], &c, &m, i % 3 ? W_WAIT : W_TIMED,
				     i % 2 ? CLOCK_REALTIME : CLOCK_MONOTONIC, FAR_NS, &g);
			waiter_reg(&w[i]);
		}
		CHECK_RC(hl_mutex_lock(&m), 0);  /* every one is listed */
		if (under) {
			CHECK_RC(hl_cond_broadcast(&c), 0);
			for (int i = n; i < n + late; i++)
				waiter_start(&w[i], &c, &m, W_WAIT, CLOCK_MONOTONIC, 0, &g);
			CHECK_RC(hl_mutex_unlock(&m), 0);
		} else {
			CHECK_RC(hl_mutex_unlock(&m), 0);
			CHECK_RC(hl_cond_broadcast(&c), 0);
			for (int i = n; i < n + late; i++)
				waiter_start(&w[i], &c, &m, W_WAIT, CLOCK_MONOTONIC, 0, &g);
		}
		for (int i = 0; i < n; i++)
			group_wait_return(&g, &m, what);
		for (int i = n; i < n + late; i++)
			waiter_reg(&w[i]);
		if (n % 4 == 0)
			sleep_ns(2 * NSEC_PER_MSEC);
		CHECK_RC(hl_mutex_lock(&m), 0);
		CHECK(g.nret == n, "%s (%s the mutex): %d returns (%d threads began to wait "
		      "after it)", what, under ? "under" : "after", g.nret, late);
		for (int i = n; i < n + late; i++)
			CHECK(!waiter_returned(&w[i]), "%s: a thread that began to wait after it "
			      "returned", what);
		CHECK_RC(hl_mutex_unlock(&m), 0);
		for (int i = 0; i < n; i++)
			waiter_join_ok(&w[i], what);
		CHECK_RC(hl_cond_destroy(&c), EBUSY);    /* the late ones wait */
		CHECK_RC(hl_cond_broadcast(&c), 0);
		for (int i = n; i < n + late; i++)
			waiter_join_ok(&w[i], "late waiter, second broadcast");
		CHECK(g.nret0 == n + late, "%s: %d of %d returned 0", what, g.nret0, n + late);
		sem_destroy(&g.ret);
		CHECK_RC(hl_cond_destroy(&c), 0);
	}
	free(w);
	printf("broadcast: N = 1..32 waiters all released, none of the 1-2 that began to wait "
	       "after it\n");
}

/* ---- no spurious wake-ups ---- */

struct pred_waiter {
	hl_cond_t *c;
	hl_mutex_t *m;
	const int *flag;
	int kind;               /* 0 wait, 1 timedwait MONOTONIC, 2 REALTIME */
	int wakeups;            /* returns of the wait, under m */
	int bad_rc;
	sem_t reg;              /* posted, holding m, before the first wait */
};

static int pred_fn(void *p)
{
	struct pred_waiter *w = p;
	REQUIRE(hl_mutex_lock(w->m) == 0, "lock");
	sem_post(&w->reg);
	while (!*w->flag) {
		int rc;
		if (w->kind == 0) {
			rc = hl_cond_wait(w->c, w->m);
		} else {
			clockid_t clk = w->kind == 1 ? CLOCK_MONOTONIC : CLOCK_REALTIME;
			struct timespec ts = deadline_in(clk, FAR_NS);
			rc = hl_cond_timedwait(w->c, w->m, clk, &ts);
		}
		if (rc)
			w->bad_rc = rc;
		w->wakeups++;
	}
	return hl_mutex_unlock(w->m);
}

static void test_no_spurious(void)
{
	hl_cond_t c = HL_COND_INIT, other = HL_COND_INIT;
	hl_mutex_t m = HL_MUTEX_INIT;
	struct pred_waiter pw[4];
	struct call pc[4];
	struct waiter w[4];
	struct group g;
	int flag = 0;

	/* Three waiters on c, a fourth on another condvar of the same mutex,
	 * each with a predicate that stays false. */
	for (int i = 0; i < 4; i++) {
		pw[i] = (struct pred_waiter){ .c = i < 3 ? &c : &other, .m = &m, .flag = &flag,
					      .kind = i % 3 };
		sem_init(&pw[i].reg, 0, 0);
		call_start(&pc[i], pred_fn, &pw[i]);
		if (!sem_wait_ms(&pw[i].reg, HANG_MS))
			hang(&m, "predicate waiter did not start");
	}
	CHECK_RC(hl_mutex_lock(&m), 0);          /* all of them wait now */
	CHECK_RC(hl_mutex_unlock(&m), 0);
	/* 200 ms of activity on the same mutex and on the other condvar, whose
	 * waiter is moved onto the mutex by each signal; no signal on c. */
	for (int64_t end = now_ns() + 200 * NSEC_PER_MSEC; now_ns() < end;) {
		CHECK_RC(hl_mutex_lock(&m), 0);
		CHECK_RC(hl_cond_signal(&other), 0);
		CHECK_RC(hl_cond_broadcast(&other), 0);
		CHECK_RC(hl_mutex_unlock(&m), 0);
		sleep_ns(500 * NSEC_PER_USEC);
	}
	CHECK_RC(hl_mutex_lock(&m), 0);
	for (int i = 0; i < 3; i++)
		CHECK(pw[i].wakeups == 0, "waiter %d (%s) woke %d times in 200 ms without a "
		      "signal", i, i == 0 ? "wait" : i == 1 ? "timedwait MONOTONIC" :
		      "timedwait REALTIME", pw[i].wakeups);
	CHECK(pw[3].wakeups > 0, "the other condvar's waiter was never woken by its signals");
	flag = 1;
	CHECK_RC(hl_cond_broadcast(&c), 0);
	CHECK_RC(hl_cond_broadcast(&other), 0);
	CHECK_RC(hl_mutex_unlock(&m), 0);
	for (int i = 0; i < 4; i++) {
		CHECK(call_join_m(&pc[i], &m, "predicate waiter") == 0, "predicate waiter unlock");
		CHECK(pw[i].bad_rc == 0, "predicate waiter %d: rc %d", i, pw[i].bad_rc);
		CHECK(i == 3 || pw[i].wakeups == 1, "predicate waiter %d: %d wake-ups (expected 1, "
		      "the broadcast)", i, pw[i].wakeups);
		sem_destroy(&pw[i].reg);
	}

	/* Each signal releases exactly one of several waiters. */
	group_init(&g);
	for (int i = 0; i < 4; i++)
		waiter_start_listed(&w[i], &c, &m, i % 2 ? W_TIMED : W_WAIT,
				    i == 3 ? CLOCK_REALTIME : CLOCK_MONOTONIC, FAR_NS, &g);
	for (int k = 1; k <= 4; k++) {
		CHECK_RC(hl_cond_signal(&c), 0);
		sleep_ns(30 * NSEC_PER_MSEC); /* the pause over which returns are counted */
		group_wait_return(&g, &m, "one signal of four");
		CHECK_RC(hl_mutex_lock(&m), 0);
		CHECK(g.nret == k, "%d signals to 4 waiters released %d", k, g.nret);
		CHECK_RC(hl_mutex_unlock(&m), 0);
	}
	for (int i = 0; i < 4; i++)
		waiter_join_ok(&w[i], "one of four waiters");
	sem_destroy(&g.ret);
	CHECK_RC(hl_cond_destroy(&c), 0);
	CHECK_RC(hl_cond_destroy(&other), 0);
	printf("no spurious wake-up in 200 ms of mutex and other-condvar traffic; 4 signals, "
	       "30 ms apart, to 4 waiters: one released by each\n");
}

/* ---- timedwait ---- */

/* Takes m once, says so while holding it. */
struct taker {
	hl_mutex_t *m;
	atomic_int got;
};

static int taker_fn(void *p)
{
	struct taker *t = p;
	int rc = hl_mutex_lock(t->m);
	if (rc)
		return rc;
	atomic_store(&t->got, 1);
	return hl_mutex_unlock(t->m);
}

static void test_timedwait(void)
{
	const clockid_t clocks[] = { CLOCK_MONOTONIC, CLOCK_REALTIME };
	const int64_t wait = 100 * NSEC_PER_MSEC;
	hl_cond_t c = HL_COND_INIT;
	hl_mutex_t m = HL_MUTEX_INIT;
	uint32_t me = test_gettid();

	for (int k = 0; k < 2; k++) {
		clockid_t clk = clocks[k];
		struct timespec ts;
		struct call other;
		struct taker tk = { &m, 0 };
		int64_t dl, t0, t1, at;
		int rc;

		CHECK_RC(hl_mutex_lock(&m), 0);
		call_start(&other, taker_fn, &tk);      /* gets m only while we wait */
		sleep_ns(10 * NSEC_PER_MSEC);           /* ... queued on it by then */
		dl = clock_ns(clk) + wait;
		ts = ns_to_ts(dl);
		t0 = now_ns();
		rc = hl_cond_timedwait(&c, &m, clk, &ts);
		at = clock_ns(clk);
		t1 = now_ns();
		CHECK(rc == ETIMEDOUT, "%s: timedwait returned %d (%s), expected ETIMEDOUT",
		      clock_name(clk), rc, strerror(rc));
		CHECK(at >= dl, "%s: ETIMEDOUT %lld ns before the deadline", clock_name(clk),
		      (long long)(dl - at));
		CHECK(t1 - t0 >= wait - NSEC_PER_MSEC, "%s: waited only %.3f ms of %.0f",
		      clock_name(clk), (t1 - t0) / 1e6, wait / 1e6);
		CHECK(t1 - t0 < wait + 2 * NSEC_PER_SEC, "%s: waited %.3f ms for a %.0f ms timeout",
		      clock_name(clk), (t1 - t0) / 1e6, wait / 1e6);
		CHECK(hl_mutex_owner(&m) == me, "%s: after ETIMEDOUT the owner is %u, not the caller "
		      "%u", clock_name(clk), hl_mutex_owner(&m), me);
		/* The other thread, queued on m before the wait, got it during
		 * the wait. */
		CHECK(atomic_load(&tk.got), "%s: the mutex was not released during the wait "
		      "(a thread queued on it did not get it in %.0f ms)", clock_name(clk),
		      wait / 1e6);
		CHECK_RC(hl_mutex_unlock(&m), 0);
		CHECK(call_join_m(&other, &m, "lock during the wait") == 0, "other thread's lock");
		printf("timedwait %s: ETIMEDOUT after %.3f ms (requested %.0f ms), mutex held again\n",
		       clock_name(clk), (t1 - t0) / 1e6, wait / 1e6);

		/* Deadlines already passed: ETIMEDOUT at once, m held. */
		const struct timespec past[] = {
			{ 0, 0 }, { -1, 0 }, ns_to_ts(clock_ns(clk) - NSEC_PER_MSEC), { 0, 999999999 },
		};
		CHECK_RC(hl_mutex_lock(&m), 0);
		for (size_t i = 0; i < sizeof(past) / sizeof(past[0]); i++) {
			t0 = now_ns();
			rc = hl_cond_timedwait(&c, &m, clk, &past[i]);
			t1 = now_ns();
			CHECK(rc == ETIMEDOUT && t1 - t0 < AT_ONCE_NS,
			      "%s: past deadline {%lld, %ld}: %d (%s) after %.1f ms", clock_name(clk),
			      (long long)past[i].tv_sec, past[i].tv_nsec, rc, strerror(rc),
			      (t1 - t0) / 1e6);
			CHECK(hl_mutex_owner(&m) == me, "%s: past deadline: owner %u after it",
			      clock_name(clk), hl_mutex_owner(&m));
		}
		CHECK_RC(hl_mutex_unlock(&m), 0);
		CHECK_RC(hl_cond_destroy(&c), 0);        /* no waiter left behind */

		/* Signalled before the deadline: 0. */
		{
			struct waiter w;
			waiter_start_listed(&w, &c, &m, W_TIMED, clk, 10 * NSEC_PER_SEC, NULL);
			sleep_ns(5 * NSEC_PER_MSEC);
			CHECK_RC(hl_cond_signal(&c), 0);
			waiter_join_ok(&w, clock_name(clk));
			CHECK(w.ret_clock_ns < w.deadline_ns, "%s: the signalled timedwait returned "
			      "after its deadline", clock_name(clk));
		}
	}
	CHECK_RC(hl_cond_destroy(&c), 0);
}

static const clockid_t bad_clocks[] = {
	CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID, CLOCK_MONOTONIC_RAW,
	CLOCK_REALTIME_COARSE, CLOCK_MONOTONIC_COARSE, CLOCK_BOOTTIME, CLOCK_TAI, 12345, -1,
};
#define N_BAD_CLOCKS (int)(sizeof(bad_clocks) / sizeof(bad_clocks[0]))

/* Every EINVAL case of timedwait on (c, m), at once; owner of m unchanged. */
static void check_einval(hl_cond_t *c, hl_mutex_t *m, const char *state)
{
	uint32_t owner = hl_mutex_owner(m);
	for (int i = 0; i < N_BAD_CLOCKS + 6; i++) {
		clockid_t clk;
		struct timespec ts;
		if (i < N_BAD_CLOCKS) {
			clk = bad_clocks[i];
			ts = deadline_in(CLOCK_MONOTONIC, NSEC_PER_SEC);
		} else {
			clk = (i - N_BAD_CLOCKS) % 2 ? CLOCK_REALTIME : CLOCK_MONOTONIC;
			ts = deadline_in(clk, NSEC_PER_SEC);
			switch ((i - N_BAD_CLOCKS) / 2) {
			case 0: ts.tv_nsec = -1; break;
			case 1: ts.tv_nsec = 1000000000; break;
			default: ts.tv_sec = 0; ts.tv_nsec = -1; break;   /* also when passed */
			}
		}
		int64_t t0 = now_ns();
		int rc = hl_cond_timedwait(c, m, clk, &ts);
		int64_t t = now_ns() - t0;
		CHECK(rc == EINVAL && t < AT_ONCE_NS, "%s: timedwait with clock %d, tv_nsec %ld "
		      "returned %d (%s) after %.1f ms, expected EINVAL at once", state, (int)clk,
		      ts.tv_nsec, rc, strerror(rc), t / 1e6);
		CHECK(hl_mutex_owner(m) == owner, "%s: after EINVAL (clock %d, tv_nsec %ld) the "
		      "mutex owner is %u, was %u", state, (int)clk, ts.tv_nsec, hl_mutex_owner(m),
		      owner);
	}
}

struct einval_arg {
	hl_cond_t *c;
	hl_mutex_t *m;
};

static int einval_fn(void *p)
{
	struct einval_arg *a = p;
	check_einval(a->c, a->m, "mutex free");
	return 0;
}

static void test_einval(void)
{
	hl_cond_t c = HL_COND_INIT;
	hl_mutex_t m = HL_MUTEX_INIT;
	struct einval_arg a = { &c, &m };
	struct holder h;

	CHECK_RC(hl_mutex_lock(&m), 0);
	check_einval(&c, &m, "mutex held by the caller");
	CHECK(hl_mutex_owner(&m) == test_gettid(), "the caller no longer holds the mutex");
	CHECK_RC(hl_mutex_unlock(&m), 0);
	/* Checked before anything else: EINVAL, not EPERM, and no wait. */
	call_run(einval_fn, &a, &m, "EINVAL with the mutex free");
	holder_start(&h, &m);
	check_einval(&c, &m, "mutex held by another thread");
	CHECK_RC(holder_finish(&h), 0);
	CHECK_RC(hl_cond_destroy(&c), 0);
	basic_on(&c, &m, "after the EINVAL calls");
	printf("timedwait EINVAL: %d bad clocks and bad tv_nsec, at once, mutex unchanged "
	       "(held, free, held by another thread)\n", N_BAD_CLOCKS);
}

/* ---- EPERM ---- */

struct eperm_arg {
	hl_cond_t *c;
	hl_mutex_t *m, *mine;   /* mine: a mutex the caller holds meanwhile, or NULL */
	const char *state;
};

static int eperm_fn(void *p)
{
	struct eperm_arg *a = p;
	uint32_t owner;
	if (a->mine)
		REQUIRE(hl_mutex_lock(a->mine) == 0, "lock");
	owner = hl_mutex_owner(a->m);
	int rc = hl_cond_wait(a->c, a->m);
	CHECK(rc == EPERM, "%s: hl_cond_wait returned %d (%s), expected EPERM", a->state, rc,
	      strerror(rc));
	for (int k = 0; k < 2; k++) {
		clockid_t clk = k ? CLOCK_REALTIME : CLOCK_MONOTONIC;
		struct timespec ts = deadline_in(clk, NSEC_PER_SEC);
		int64_t t0 = now_ns();
		rc = hl_cond_timedwait(a->c, a->m, clk, &ts);
		CHECK(rc == EPERM && now_ns() - t0 < AT_ONCE_NS, "%s: hl_cond_timedwait (%s) "
		      "returned %d (%s) after %.1f ms, expected EPERM at once", a->state,
		      clock_name(clk), rc, strerror(rc), (now_ns() - t0) / 1e6);
	}
	CHECK(hl_mutex_owner(a->m) == owner, "%s: the mutex owner changed from %u to %u",
	      a->state, owner, hl_mutex_owner(a->m));
	if (a->mine)
		CHECK_RC(hl_mutex_unlock(a->mine), 0);
	return 0;
}

static void test_eperm(void)
{
	hl_cond_t c = HL_COND_INIT;
	hl_mutex_t m = HL_MUTEX_INIT, m2 = HL_MUTEX_INIT;
	struct eperm_arg a = { &c, &m, NULL, "mutex free" };
	struct holder h;

	call_run(eperm_fn, &a, &m, "EPERM, mutex free");
	a.mine = &m2;
	a.state = "caller holds another mutex";
	call_run(eperm_fn, &a, &m, "EPERM, another mutex held");
	holder_start(&h, &m);
	a.mine = NULL;
	a.state = "mutex held by another thread";
	call_run(eperm_fn, &a, &m, "EPERM, mutex held by another thread");
	CHECK(hl_mutex_owner(&m) == h.c.tid, "the holder lost the mutex");
	CHECK_RC(holder_finish(&h), 0);
	CHECK_RC(hl_cond_destroy(&c), 0);
	basic_on(&c, &m, "after the EPERM calls");
	printf("EPERM: wait and timedwait without the mutex (free, held by another thread, "
	       "another mutex held)\n");
}

/* ---- destroy ---- */

static void test_destroy(void)
{
	hl_mutex_t m = HL_MUTEX_INIT;
	hl_cond_t local;
	struct waiter w[6];

	/* EBUSY while a thread waits, wait and timedwait. */
	hl_cond_init(&local);
	for (int k = 0; k < 2; k++) {
		waiter_start_listed(&w[0], &local, &m, k ? W_TIMED : W_WAIT, CLOCK_MONOTONIC, FAR_NS,
				    NULL);
		CHECK(hl_cond_destroy(&local) == EBUSY, "destroy while a thread %s: not EBUSY",
		      k ? "timedwaits" : "waits");
		CHECK_RC(hl_cond_signal(&local), 0);
		waiter_join_ok(&w[0], "waiter after a refused destroy");
	}
	/* One of two signalled: the other still waits. */
	waiter_start_listed(&w[0], &local, &m, W_WAIT, CLOCK_MONOTONIC, 0, NULL);
	waiter_start_listed(&w[1], &local, &m, W_TIMED, CLOCK_REALTIME, FAR_NS, NULL);
	CHECK_RC(hl_cond_signal(&local), 0);
	CHECK(hl_cond_destroy(&local) == EBUSY, "destroy with one of two waiters signalled: "
	      "not EBUSY");
	CHECK_RC(hl_cond_signal(&local), 0);
	CHECK_RC(hl_cond_destroy(&local), 0);
	waiter_join_ok(&w[0], "first of two");
	waiter_join_ok(&w[1], "second of two");

	/* Signalled (or broadcast to) while they are blocked on the mutex we
	 * hold: destroy 0, the memory overwritten or freed, and they return
	 * normally. */
	for (int variant = 0; variant < 4; variant++) {
		bool heap = variant & 1, bcast = variant & 2;
		int n = bcast ? 3 : 1;
		hl_cond_t *c = heap ? malloc(sizeof(*c)) : &local;
		char what[96];
		REQUIRE(c, "malloc");
		snprintf(what, sizeof(what), "%s condvar destroyed after its %s",
			 heap ? "heap" : "automatic", bcast ? "broadcast" : "signal");
		memset(c, 0x5a, sizeof(*c));
		CHECK_RC(hl_cond_init(c), 0);
		for (int i = 0; i < n; i++)
			waiter_start_listed(&w[i], c, &m, i == 1 ? W_TIMED : W_WAIT, CLOCK_MONOTONIC,
					    FAR_NS, NULL);
		CHECK_RC(hl_mutex_lock(&m), 0);
		CHECK_RC(bcast ? hl_cond_broadcast(c) : hl_cond_signal(c), 0);
		CHECK(hl_cond_destroy(c) == 0, "%s: destroy right after it refused", what);
		if (heap)
			free(c);
		else
			memset(c, 0xff, sizeof(*c));
		for (int i = 0; i < n; i++)
			CHECK(!waiter_returned(&w[i]), "%s: a waiter returned while we hold the "
			      "mutex", what);
		CHECK_RC(hl_mutex_unlock(&m), 0);
		for (int i = 0; i < n; i++)
			waiter_join_ok(&w[i], what);
	}
	/* Signalled without the mutex: destroy 0 at once, then freed. */
	for (int r = 0; r < 50; r++) {
		hl_cond_t *c = malloc(sizeof(*c));
		REQUIRE(c, "malloc");
		hl_cond_init(c);
		waiter_start_listed(&w[0], c, &m, r % 2 ? W_TIMED : W_WAIT, CLOCK_REALTIME, FAR_NS,
				    NULL);
		CHECK_RC(hl_cond_signal(c), 0);
		CHECK_RC(hl_cond_destroy(c), 0);
		free(c);
		waiter_join_ok(&w[0], "condvar freed after a signal without the mutex");
	}
	/* Destroy polled while a short timedwait times out: EBUSY until it is
	 * done with the condvar, then 0, and the memory freed at once. */
	int busy = 0;
	for (int r = 0; r < 50; r++) {
		hl_cond_t *c = malloc(sizeof(*c));
		REQUIRE(c, "malloc");
		hl_cond_init(c);
		waiter_start_listed(&w[0], c, &m, W_TIMED, CLOCK_MONOTONIC,
				    (int64_t)(50 + 20 * r) * NSEC_PER_USEC, NULL);
		for (;;) {
			int rc = hl_cond_destroy(c);
			if (rc == 0)
				break;
			CHECK(rc == EBUSY, "destroy during a timedwait returned %d", rc);
			if (rc != EBUSY)
				break;
			busy++;
			sched_yield();
		}
		free(c);
		int rc = waiter_join(&w[0], "timed waiter, condvar destroyed");
		CHECK(rc == ETIMEDOUT && w[0].owner_after == w[0].tid && w[0].unlock_rc == 0,
		      "timed waiter: %d (%s), owner %u", rc, strerror(rc), w[0].owner_after);
	}
	/* A signal racing the deadline of a timed waiter, or a broadcast
	 * racing the deadline of 1-6 (one deadline for all), then destroy at
	 * once, which must say 0: the list is empty, whether the waiters were
	 * woken or gave up.  (A signal to 2-3 of them: destroy polled, EBUSY
	 * while the others are still listed, until 0.)  The memory is then
	 * freed (ASan reports a later access), or filled with 0xff and
	 * checked after the waiters returned: a waiter that gave up and still
	 * cleans up its listing must be waited for by destroy. */
	const int race_rounds = HOTLOCK_SANITIZED ? 300 : 600;
	const int64_t lead_ns = (HOTLOCK_SANITIZED ? 3000 : 1000) * NSEC_PER_USEC;
	int raced_timeouts = 0, raced_woken = 0;
	for (int r = 0; r < race_rounds; r++) {
		bool fill = r % 4 != 0, bcast = r % 3 != 0;
		int n = bcast ? 1 + (r / 2) % 6 : 1 + (r / 2) % 3;
		hl_cond_t *c = malloc(sizeof(*c));
		static const unsigned char ff[sizeof(hl_cond_t)] = {
			0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
			0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		};
		int64_t dl = clock_ns(CLOCK_MONOTONIC) + lead_ns;
		REQUIRE(c && sizeof(*c) == sizeof(ff), "malloc");
		hl_cond_init(c);
		for (int i = 0; i < n; i++) {
			waiter_start(&w[i], c, &m, W_TIMED, CLOCK_MONOTONIC, 0, NULL);
			w[i].abs_ns = dl;
			waiter_reg(&w[i]);
		}
		CHECK_RC(hl_mutex_lock(&m), 0);  /* all listed (or timed out already) */
		CHECK_RC(hl_mutex_unlock(&m), 0);
		int64_t at = dl + ((int64_t)(r * 7919 % 181) - 30) * NSEC_PER_USEC;
		while (clock_ns(CLOCK_MONOTONIC) < at)
			test_cpu_relax();       /* the signal's moment */
		CHECK_RC(bcast ? hl_cond_broadcast(c) : hl_cond_signal(c), 0);
		int rc = hl_cond_destroy(c);
		while (rc == EBUSY && !bcast && n > 1) {
			busy++;
			sched_yield();
			rc = hl_cond_destroy(c);
		}
		CHECK(rc == 0, "round %d: destroy right after a %s racing the deadline of %d "
		      "waiters returned %d (%s)", r, bcast ? "broadcast" : "signal", n, rc,
		      strerror(rc));
		if (rc != 0) {
			/* Not safe to free: release them first. */
			CHECK_RC(hl_cond_broadcast(c), 0);
			for (int i = 0; i < n; i++)
				waiter_join(&w[i], "timed waiter after a refused destroy");
			free(c);
			break;
		}
		if (fill)
			memset(c, 0xff, sizeof(*c));
		else
			free(c);
		for (int i = 0; i < n; i++) {
			rc = waiter_join(&w[i], "timed waiter racing a signal, condvar destroyed");
			CHECK((rc == 0 || rc == ETIMEDOUT) && w[i].owner_after == w[i].tid &&
			      w[i].unlock_rc == 0, "round %d: timed waiter: %d (%s), owner %u", r, rc,
			      strerror(rc), w[i].owner_after);
			raced_timeouts += rc == ETIMEDOUT;
			raced_woken += rc == 0;
		}
		if (fill) {
			CHECK(memcmp(c, ff, sizeof(ff)) == 0, "round %d: the condvar was written after "
			      "its destroy returned 0 (a waiter that gave up was still cleaning up)",
			      r);
			free(c);
		}
		if (test_failures)
			break;
	}
	CHECK_RC(hl_mutex_destroy(&m), 0);
	printf("destroy: EBUSY while waited on; 0 right after a signal or broadcast, the memory "
	       "overwritten/freed while the waiters still queued for the mutex; "
	       "%d EBUSY polls during timeouts; %d rounds of a signal or broadcast racing "
	       "timeouts, then destroy and free (%d woken, %d timed out)\n", busy, race_rounds,
	       raced_woken, raced_timeouts);
}

/* ---- one condvar, two mutexes ---- */

struct other_mutex_arg {
	hl_cond_t *c;
	hl_mutex_t *m2;
	bool timed;
	uint32_t owner_after;
	int unlock_rc;
	int64_t took_ns;
};

static int other_mutex_fn(void *p)
{
	struct other_mutex_arg *a = p;
	struct timespec ts = deadline_in(CLOCK_MONOTONIC, 10 * NSEC_PER_SEC);
	int rc;
	REQUIRE(hl_mutex_lock(a->m2) == 0, "lock m2");
	int64_t t0 = now_ns();
	rc = a->timed ? hl_cond_timedwait(a->c, a->m2, CLOCK_MONOTONIC, &ts)
		      : hl_cond_wait(a->c, a->m2);
	a->took_ns = now_ns() - t0;
	a->owner_after = hl_mutex_owner(a->m2);
	a->unlock_rc = hl_mutex_unlock(a->m2);
	return rc;
}

static void test_two_mutexes(void)
{
	hl_cond_t c = HL_COND_INIT;
	hl_mutex_t m1 = HL_MUTEX_INIT, m2 = HL_MUTEX_INIT;

	for (int k = 0; k < 2; k++) {
		struct waiter w1, w2;
		struct other_mutex_arg a = { &c, &m2, k == 1, 0, -1, 0 };
		struct call t;
		waiter_start_listed(&w1, &c, &m1, k ? W_WAIT : W_TIMED, CLOCK_REALTIME, FAR_NS, NULL);
		call_start(&t, other_mutex_fn, &a);
		int rc = call_join_m(&t, &m2, "wait with a second mutex");
		CHECK(rc == EINVAL, "%s with a second mutex while a thread waits with the first: "
		      "%d (%s), expected EINVAL", a.timed ? "timedwait" : "wait", rc, strerror(rc));
		CHECK(a.owner_after == t.tid && a.unlock_rc == 0 && a.took_ns < AT_ONCE_NS,
		      "after the EINVAL: m2 owner %u (caller %u), unlock %d, %.1f ms",
		      a.owner_after, t.tid, a.unlock_rc, a.took_ns / 1e6);
		CHECK(!waiter_returned(&w1), "the first waiter returned after the EINVAL");
		CHECK_RC(hl_cond_signal(&c), 0);
		waiter_join_ok(&w1, "first mutex's waiter");
		/* Nobody waits: the condvar now works with m2. */
		waiter_start_listed(&w2, &c, &m2, W_WAIT, CLOCK_MONOTONIC, 0, NULL);
		CHECK_RC(hl_cond_signal(&c), 0);
		waiter_join_ok(&w2, "second mutex, after the first's waiter left");
	}
	CHECK_RC(hl_cond_destroy(&c), 0);
	printf("two mutexes: EINVAL for the second while the first's waiter waits (wait and "
	       "timedwait); the condvar works with the second later\n");
}

/* ---- timeouts racing signals ---- */

/* Rounds of two kinds.  Scattered: 1-4 timed waiters with deadlines of
 * -20..280 us each, the signal 0-300 us after they are listed.  Together:
 * 2-7 timed waiters with one deadline, and the signal sent when the clock
 * reaches it (-30..+60 us): the timed waiters give up at once and queue
 * for the list lock to unlist themselves, so that the signaller often
 * finds a waiter that gave up at the head of the list and must skip it. */
static void test_timeout_race(test_rng_t *rng)
{
	const int rounds = HOTLOCK_SANITIZED ? 400 : 2000;
	const int64_t together_ns = (HOTLOCK_SANITIZED ? 3000 : 1000) * NSEC_PER_USEC;
	int to_timed = 0, to_w = 0, w_behind = 0, timeouts = 0, together_rounds = 0;

	for (int r = 0; r < rounds; r++) {
		hl_cond_t c = HL_COND_INIT;
		hl_mutex_t m = HL_MUTEX_INIT;
		struct group g;
		struct waiter t[7], w;
		bool together = r % 2;
		int k = together ? 2 + (int)rng_below(rng, 6) : 1 + (int)rng_below(rng, 4);
		int wpos = (int)rng_below(rng, (uint64_t)k + 1);
		/* 0, 1 signal under m; 2, 3 after it (together: 2, 3, 4); 5 broadcast */
		int mode = (int)rng_below(rng, 6);
		int z = 0, to = 0;
		int64_t dl = together ? clock_ns(CLOCK_MONOTONIC) + together_ns : 0;
		char what[160];

		if (together && mode < 5)
			mode = mode < 2 ? mode : 2;
		together_rounds += together;
		group_init(&g);
		for (int i = 0, ti = 0; i <= k; i++) {
			if (i == wpos) {
				waiter_start(&w, &c, &m, r % 3 ? W_WAIT : W_TIMED, CLOCK_MONOTONIC,
					     FAR_NS, NULL);
				waiter_reg(&w);
			} else {
				int64_t rel = ((int64_t)rng_below(rng, 301) - 20) * NSEC_PER_USEC;
				clockid_t clk = together || ti % 2 == 0 ? CLOCK_MONOTONIC : CLOCK_REALTIME;
				waiter_start(&t[ti], &c, &m, W_TIMED, clk, rel, &g);
				t[ti].abs_ns = dl;
				waiter_reg(&t[ti]);
				ti++;
			}
		}
		CHECK_RC(hl_mutex_lock(&m), 0);  /* W is listed, the others listed or gone */
		CHECK_RC(hl_mutex_unlock(&m), 0);
		if (together) {
			int64_t at = dl + ((int64_t)rng_below(rng, 91) - 30) * NSEC_PER_USEC;
			while (clock_ns(CLOCK_MONOTONIC) < at)
				test_cpu_relax();       /* the signal's moment */
		} else if (rng_below(rng, 4)) {
			sleep_ns((int64_t)rng_below(rng, 300) * NSEC_PER_USEC);
		}
		if (mode <= 1) {
			CHECK_RC(hl_mutex_lock(&m), 0);
			CHECK_RC(hl_cond_signal(&c), 0);
			CHECK_RC(hl_mutex_unlock(&m), 0);
		} else if (mode <= 4) {
			CHECK_RC(hl_cond_signal(&c), 0);
		} else {
			CHECK_RC(hl_mutex_lock(&m), 0);
			CHECK_RC(hl_cond_broadcast(&c), 0);
			CHECK_RC(hl_mutex_unlock(&m), 0);
		}
		snprintf(what, sizeof(what), "round %d: %d timed waiters (%s), W at %d, %s", r, k,
			 together ? "one deadline" : "scattered deadlines", wpos,
			 mode <= 1 ? "signal under the mutex" : mode <= 4 ? "signal after it" :
			 "broadcast");
		for (int i = 0; i < k; i++) {
			int rc = waiter_join(&t[i], what);
			if (rc == 0) {
				z++;
			} else {
				to++;
				CHECK(rc == ETIMEDOUT, "%s: timed waiter %d returned %d (%s)", what, i,
				      rc, strerror(rc));
				CHECK(t[i].ret_clock_ns >= t[i].deadline_ns, "%s: ETIMEDOUT %lld ns "
				      "before the deadline", what,
				      (long long)(t[i].deadline_ns - t[i].ret_clock_ns));
			}
			CHECK(t[i].owner_after == t[i].tid && t[i].unlock_rc == 0,
			      "%s: timed waiter %d: owner %u after its return (itself %u), unlock %d",
			      what, i, t[i].owner_after, t[i].tid, t[i].unlock_rc);
		}
		timeouts += to;
		if (mode == 5 || z == 0) {
			/* The broadcast, or the signal nobody else took, is W's:
			 * W was listed and cannot give up. */
			if (!sem_wait_ms(&w.done, HANG_MS))
				hang(&m, "%s: %d timed waiters timed out, none returned 0, and the "
				     "waiter without a deadline was not released: the %s was lost",
				     what, to, mode == 5 ? "broadcast" : "signal");
			sem_post(&w.done);
			to_w += mode != 5;
			w_behind += mode != 5 && wpos > 0;
		} else {
			CHECK(z == 1, "%s: one signal released %d timed waiters", what, z);
			to_timed++;
			if (r % 16 == 1)
				sleep_ns(NSEC_PER_MSEC);
			CHECK(!waiter_returned(&w), "%s: a timed waiter took the signal and W "
			      "returned too (woken twice)", what);
			CHECK_RC(hl_cond_signal(&c), 0);
		}
		waiter_join_ok(&w, what);
		CHECK(g.nret0 == z, "%s: %d timed waiters returned 0, counted %d", what, z, g.nret0);
		sem_destroy(&g.ret);
		CHECK_RC(hl_cond_destroy(&c), 0);
		CHECK_RC(hl_mutex_destroy(&m), 0);
		if (test_failures)
			break;
	}
	printf("timeouts racing signals: %d rounds (%d with one deadline for all), %d timeouts; "
	       "a signal went to a timed waiter %d times, to the waiter without deadline %d "
	       "times (%d of them listed behind timed waiters)\n", rounds, together_rounds,
	       timeouts, to_timed, to_w, w_behind);
}

/* ---- fork ---- */

static hl_cond_t fork_c = HL_COND_INIT;
static hl_mutex_t fork_m = HL_MUTEX_INIT;

/* In a child: c works with m. */
static void child_use(hl_cond_t *c, hl_mutex_t *m, const char *what)
{
	struct waiter w[2];
	struct timespec ts;
	char buf[128];

	CHECK(hl_cond_signal(c) == 0 && hl_cond_broadcast(c) == 0,
	      "%s: signal/broadcast (no waiter in the child)", what);
	waiter_start_listed(&w[0], c, m, W_WAIT, CLOCK_MONOTONIC, 0, NULL);
	CHECK_RC(hl_cond_signal(c), 0);
	snprintf(buf, sizeof(buf), "%s: signalled", what);
	waiter_join_ok(&w[0], buf);
	waiter_start_listed(&w[0], c, m, W_WAIT, CLOCK_MONOTONIC, 0, NULL);
	waiter_start_listed(&w[1], c, m, W_TIMED, CLOCK_REALTIME, FAR_NS, NULL);
	CHECK_RC(hl_mutex_lock(m), 0);
	CHECK_RC(hl_cond_broadcast(c), 0);
	CHECK_RC(hl_mutex_unlock(m), 0);
	snprintf(buf, sizeof(buf), "%s: broadcast", what);
	waiter_join_ok(&w[0], buf);
	waiter_join_ok(&w[1], buf);
	CHECK_RC(hl_mutex_lock(m), 0);
	ts = deadline_in(CLOCK_MONOTONIC, 10 * NSEC_PER_MSEC);
	CHECK(hl_cond_timedwait(c, m, CLOCK_MONOTONIC, &ts) == ETIMEDOUT, "%s: timedwait", what);
	CHECK(hl_mutex_owner(m) == test_gettid(), "%s: owner after the timedwait", what);
	CHECK_RC(hl_mutex_unlock(m), 0);
	CHECK(hl_cond_destroy(c) == 0, "%s: destroy in the child (nobody waits here)", what);
	CHECK_RC(hl_cond_init(c), 0);
}

static int child_exit(int base)
{
	fflush(stdout);
	fflush(stderr);
	return test_failures > base ? 1 : 0;
}

static void reap_child(pid_t pid, const char *what)
{
	int status, r;
	char sb[64];
	REQUIRE(pid >= 0, "fork: %s", strerror(errno));
	r = reap_with_timeout(pid, HANG_MS, &status);
	CHECK(r == 0, "%s: the child hung and was killed after %d ms", what, HANG_MS);
	if (r == 0)
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: the child %s", what,
		      describe_status(status, sb, sizeof(sb)));
}

/* Hammering threads: short timed waits, signals and broadcasts. */
static hl_cond_t ham_c = HL_COND_INIT;
static hl_mutex_t ham_m = HL_MUTEX_INIT;
static atomic_int ham_stop;
static uint64_t ham_seed;

static void *hammer(void *arg)
{
	test_rng_t rng;
	rng_seed(&rng, ham_seed, 500 + (uint64_t)(intptr_t)arg);
	while (!atomic_load_explicit(&ham_stop, memory_order_relaxed)) {
		uint64_t x = rng_below(&rng, 10);
		REQUIRE(hl_mutex_lock(&ham_m) == 0, "hammer lock");
		if (x < 6) {
			struct timespec ts = deadline_in(CLOCK_MONOTONIC,
				(int64_t)rng_below(&rng, 201) * NSEC_PER_USEC);
			int rc = hl_cond_timedwait(&ham_c, &ham_m, CLOCK_MONOTONIC, &ts);
			REQUIRE(rc == 0 || rc == ETIMEDOUT, "hammer timedwait %d", rc);
		} else if (x < 9) {
			hl_cond_signal(&ham_c);
		} else {
			hl_cond_broadcast(&ham_c);
		}
		REQUIRE(hl_mutex_unlock(&ham_m) == 0, "hammer unlock");
	}
	return NULL;
}

static void test_fork(test_rng_t *rng)
{
	struct waiter w[3];
	int nforks = HOTLOCK_SANITIZED ? 6 : 16;
	int m_free_forks = 0;

	for (int i = 0; i < 3; i++)
		waiter_start_listed(&w[i], &fork_c, &fork_m, i == 2 ? W_TIMED : W_WAIT,
				    CLOCK_MONOTONIC, FAR_NS, NULL);
	for (int variant = 0; variant < 6; variant++) {
		bool held = variant & 1, init = variant & 2, other = variant & 4;
		char what[160];
		snprintf(what, sizeof(what), "fork with 3 waiters%s%s%s",
			 held ? ", mutex held by the forking thread" : "",
			 init ? ", hl_cond_init in the child" : "",
			 other ? ", another mutex in the child" : "");
		if (held)
			CHECK_RC(hl_mutex_lock(&fork_m), 0);
		fflush(stdout);
		fflush(stderr);
		int base = test_failures;
		pid_t pid = fork();
		if (pid == 0) {
			hl_mutex_t m2 = HL_MUTEX_INIT;
			if (held) {
				CHECK(hl_mutex_owner(&fork_m) != 0, "%s: the held mutex shows owner 0",
				      what);
				CHECK_RC(hl_mutex_unlock(&fork_m), 0);
			}
			CHECK(hl_mutex_owner(&fork_m) == 0, "%s: mutex owned by %u in the child",
			      what, hl_mutex_owner(&fork_m));
			if (init)
				CHECK_RC(hl_cond_init(&fork_c), 0);
			child_use(&fork_c, other ? &m2 : &fork_m, what);
			CHECK(hl_mutex_destroy(&fork_m) == 0, "%s: destroy of the mutex in the child",
			      what);
			_exit(child_exit(base));
		}
		if (held)
			CHECK_RC(hl_mutex_unlock(&fork_m), 0);
		reap_child(pid, what);
	}
	/* The parent's waiters are still there, and released as usual. */
	for (int i = 0; i < 3; i++)
		CHECK(!waiter_returned(&w[i]), "a parent waiter returned during the forks");
	CHECK_RC(hl_cond_destroy(&fork_c), EBUSY);
	CHECK_RC(hl_cond_broadcast(&fork_c), 0);
	for (int i = 0; i < 3; i++)
		waiter_join_ok(&w[i], "parent waiter after the forks");
	CHECK_RC(hl_cond_destroy(&fork_c), 0);

	/* Forks at random moments while threads hammer a condvar. */
	pthread_t th[3];
	struct waiter forever;
	ham_seed = rng_next(rng);
	atomic_store(&ham_stop, 0);
	waiter_start_listed(&forever, &ham_c, &ham_m, W_WAIT, CLOCK_MONOTONIC, 0, NULL);
	for (int i = 0; i < 3; i++)
		REQUIRE(pthread_create(&th[i], NULL, hammer, (void *)(intptr_t)i) == 0,
			"pthread_create");
	sleep_ns(5 * NSEC_PER_MSEC);
	for (int f = 0; f < nforks; f++) {
		sleep_ns((int64_t)rng_below(rng, 3000) * NSEC_PER_USEC);
		fflush(stdout);
		fflush(stderr);
		int base = test_failures;
		pid_t pid = fork();
		if (pid == 0) {
			hl_mutex_t m3 = HL_MUTEX_INIT;
			bool m_free = hl_mutex_owner(&ham_m) == 0;
			child_use(&ham_c, &m3, "fork among hammering threads, a new mutex");
			if (m_free)
				child_use(&ham_c, &ham_m, "fork among hammering threads, their mutex");
			_exit(child_exit(base) | (m_free ? 4 : 0));
		}
		int status, r;
		char sb[64];
		r = reap_with_timeout(pid, HANG_MS, &status);
		CHECK(r == 0, "fork %d among hammering threads: the child hung (killed after %d ms)",
		      f, HANG_MS);
		if (r == 0) {
			CHECK(WIFEXITED(status) && (WEXITSTATUS(status) & 1) == 0,
			      "fork %d among hammering threads: the child %s", f,
			      describe_status(status, sb, sizeof(sb)));
			m_free_forks += WIFEXITED(status) && (WEXITSTATUS(status) & 4);
		}
	}
	atomic_store(&ham_stop, 1);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	CHECK_RC(hl_mutex_lock(&ham_m), 0);
	CHECK_RC(hl_cond_signal(&ham_c), 0);
	CHECK_RC(hl_mutex_unlock(&ham_m), 0);
	/* The forever waiter may have been released by a hammer already. */
	waiter_join_ok(&forever, "the waiter without deadline among the hammering threads");
	CHECK_RC(hl_cond_destroy(&ham_c), 0);
	printf("fork: the child uses a condvar its parent's threads wait on (6 variants), and "
	       "%d children forked among hammering threads (%d with the mutex free at the fork)\n",
	       nforks, m_free_forks);
}

int main(void)
{
	uint64_t seed = test_seed(0x5eedc0d1);
	test_rng_t rng;
	rng_seed(&rng, seed, 0);
	printf("test_cond_api: seed 0x%llx%s\n", (unsigned long long)seed,
	       HOTLOCK_SANITIZED ? ", sanitizer build" : "");
	fflush(stdout);
	set_phase("test_init_forms");
	test_init_forms();
	set_phase("test_noop");
	test_noop();
	set_phase("test_einval");
	test_einval();
	set_phase("test_eperm");
	test_eperm();
	set_phase("test_timedwait");
	test_timedwait();
	set_phase("test_two_mutexes");
	test_two_mutexes();
	set_phase("test_destroy");
	test_destroy();
	set_phase("test_no_spurious");
	test_no_spurious();
	set_phase("test_no_stolen_signal");
	test_no_stolen_signal(&rng);
	set_phase("test_broadcast");
	test_broadcast(&rng);
	set_phase("test_timeout_race");
	test_timeout_race(&rng);
	set_phase("test_fork");
	test_fork(&rng);
	alarm(0);
	return test_finish("test_cond_api");
}

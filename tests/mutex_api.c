/* SPDX-License-Identifier: MIT */
/* hl_mutex API test: every call and every documented error.
 *
 * Asserts:
 *  - sizeof(hl_mutex_t) <= 16; HL_MUTEX_INIT (static and automatic), memset
 *    zero, calloc'd memory and hl_mutex_init over garbage are all unlocked
 *    mutexes (owner 0, lock/trylock/unlock work, destroy 0);
 *  - lock/unlock, trylock (0, then EBUSY while held by anyone), owner = the
 *    holder's TID (seen from any thread), 0 when free;
 *  - EDEADLK: lock and timedlock of a mutex the caller holds;
 *  - EPERM: unlock of an unlocked mutex, a second unlock, unlock by a thread
 *    that is not the owner (and the mutex stays locked by its owner);
 *  - EBUSY: destroy of a mutex held by the caller or by another thread;
 *  - timedlock EINVAL for tv_nsec -1 and 1e9 and for clocks other than
 *    CLOCK_REALTIME/CLOCK_MONOTONIC, on a free mutex (which stays free), on a
 *    mutex held by another thread and on one held by the caller;
 *  - timedlock on a free mutex with a deadline already past succeeds (as
 *    POSIX says: no timeout when the lock is free);
 *  - timedlock ETIMEDOUT on a held mutex: with the deadline already past
 *    (promptly), and after actually waiting, on both clocks: the clock reads
 *    at least the deadline on return, the wait lasted at least the requested
 *    time minus 1 ms and less than the requested time plus 2 s;
 *  - timedlock succeeds when the holder releases in time (both clocks);
 *  - a deadline far in the future (tv_sec 1.9e10, 1e11, INT64_MAX: the
 *    nanosecond count overflows 64 bits) waits instead of timing out;
 *  - a lock() waiter blocked behind timedlock waiters that gave up still
 *    gets the mutex when it is released (timed-out nodes in the queue do not
 *    lose the wake-up), in several start orders;
 *  - describe: one line, contains the owner's TID, truncates like snprintf
 *    and returns the full length; len 0 writes nothing;
 *  - hl_config_get/set: defaults (handoff 4 ms) unless the environment
 *    overrides them, EINVAL out of range with nothing changed, the maximum
 *    values accepted. */
#include "call.h"
#include "common.h"
#include "shim_api.h"

#include <hotlock/hotlock.h>

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>

static hl_mutex_t global_m = HL_MUTEX_INIT;

static int do_unlock(void *m) { return hl_mutex_unlock(m); }
static int do_trylock(void *m) { return hl_mutex_trylock(m); }
static int do_lock_unlock(void *m)
{
	int rc = hl_mutex_lock(m);
	if (rc)
		return rc;
	return hl_mutex_unlock(m);
}

/* A holder thread: locks, reports, holds until told, unlocks. */
struct holder {
	hl_mutex_t *m;
	sem_t locked, release;
	int64_t hold_ns;        /* >0: release by itself after this long */
	struct call c;
	atomic_int unlock_rc;
};

static int holder_fn(void *p)
{
	struct holder *h = p;
	int rc = hl_mutex_lock(h->m);
	sem_post(&h->locked);
	if (rc)
		return rc;
	if (h->hold_ns > 0)
		sleep_ns(h->hold_ns); /* the test is about time: hold this long */
	else
		while (sem_wait(&h->release) != 0 && errno == EINTR)
			;
	return hl_mutex_unlock(h->m);
}

static void holder_start(struct holder *h, hl_mutex_t *m, int64_t hold_ns)
{
	h->m = m;
	h->hold_ns = hold_ns;
	sem_init(&h->locked, 0, 0);
	sem_init(&h->release, 0, 0);
	call_start(&h->c, holder_fn, h);
	while (sem_wait(&h->locked) != 0 && errno == EINTR)
		;
}

static int holder_finish(struct holder *h)
{
	int rc;
	if (h->hold_ns <= 0)
		sem_post(&h->release);
	rc = call_join(&h->c, 10000, "holder thread");
	sem_destroy(&h->locked);
	sem_destroy(&h->release);
	return rc;
}

/* ---- the tests ---- */

static void basic_on(hl_mutex_t *m, const char *what)
{
	uint32_t me = test_gettid();
	CHECK(hl_mutex_owner(m) == 0, "%s: owner %u before use", what, hl_mutex_owner(m));
	CHECK_RC(hl_mutex_lock(m), 0);
	CHECK(hl_mutex_owner(m) == me, "%s: owner %u, expected %u", what, hl_mutex_owner(m), me);
	CHECK_RC(hl_mutex_unlock(m), 0);
	CHECK(hl_mutex_owner(m) == 0, "%s: owner %u after unlock", what, hl_mutex_owner(m));
	CHECK_RC(hl_mutex_trylock(m), 0);
	CHECK_RC(hl_mutex_unlock(m), 0);
	CHECK_RC(hl_mutex_destroy(m), 0);
}

static void test_init_forms(void)
{
	hl_mutex_t local = HL_MUTEX_INIT;
	hl_mutex_t zeroed;
	hl_mutex_t garbage;
	hl_mutex_t *heap = calloc(1, sizeof(hl_mutex_t));
	static const hl_mutex_t zero_bytes;

	CHECK(sizeof(hl_mutex_t) <= 16, "sizeof(hl_mutex_t) = %zu", sizeof(hl_mutex_t));
	CHECK(memcmp(&local, &zero_bytes, sizeof(local)) == 0,
	      "HL_MUTEX_INIT is not all-zero bytes");
	basic_on(&global_m, "static HL_MUTEX_INIT");
	basic_on(&local, "automatic HL_MUTEX_INIT");
	memset(&zeroed, 0, sizeof(zeroed));
	basic_on(&zeroed, "memset 0");
	REQUIRE(heap, "calloc");
	basic_on(heap, "calloc");
	free(heap);
	memset(&garbage, 0xa5, sizeof(garbage));
	CHECK_RC(hl_mutex_init(&garbage), 0);
	basic_on(&garbage, "hl_mutex_init over garbage");
	/* Destroy then init again: usable. */
	CHECK_RC(hl_mutex_init(&local), 0);
	basic_on(&local, "re-initialised");
	printf("init forms: HL_MUTEX_INIT, memset, calloc, hl_mutex_init: unlocked and usable\n");
}

static void test_errors_same_thread(void)
{
	hl_mutex_t m = HL_MUTEX_INIT;
	struct timespec dl = deadline_in(CLOCK_MONOTONIC, NSEC_PER_SEC);
	struct timespec rdl = deadline_in(CLOCK_REALTIME, NSEC_PER_SEC);

	CHECK_RC(hl_mutex_unlock(&m), EPERM);       /* unlocked */
	CHECK_RC(hl_mutex_lock(&m), 0);
	CHECK_RC(hl_mutex_lock(&m), EDEADLK);
	CHECK_RC(hl_mutex_timedlock(&m, CLOCK_MONOTONIC, &dl), EDEADLK);
	CHECK_RC(hl_mutex_timedlock(&m, CLOCK_REALTIME, &rdl), EDEADLK);
	CHECK_RC(hl_mutex_trylock(&m), EBUSY);
	CHECK_RC(hl_mutex_destroy(&m), EBUSY);
	CHECK(hl_mutex_owner(&m) == test_gettid(), "owner %u after the errors",
	      hl_mutex_owner(&m));
	CHECK_RC(hl_mutex_unlock(&m), 0);
	CHECK_RC(hl_mutex_unlock(&m), EPERM);       /* second unlock */
	CHECK(hl_mutex_owner(&m) == 0, "owner %u after unlock", hl_mutex_owner(&m));
	CHECK_RC(hl_mutex_destroy(&m), 0);
	printf("same-thread errors: EPERM, EDEADLK, EBUSY checked\n");
}

static const clockid_t bad_clocks[] = {
	CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID, CLOCK_MONOTONIC_RAW,
	CLOCK_REALTIME_COARSE, CLOCK_MONOTONIC_COARSE, CLOCK_BOOTTIME, CLOCK_TAI,
	42, -1,
};

static void check_einval(hl_mutex_t *m, const char *state)
{
	struct timespec ts;
	int64_t later = clock_ns(CLOCK_MONOTONIC) + NSEC_PER_SEC;
	const clockid_t clocks[] = { CLOCK_MONOTONIC, CLOCK_REALTIME };

	for (int c = 0; c < 2; c++) {
		ts = ns_to_ts(clock_ns(clocks[c]) + NSEC_PER_SEC);
		ts.tv_nsec = -1;
		CHECK(hl_mutex_timedlock(m, clocks[c], &ts) == EINVAL,
		      "%s: tv_nsec -1 on clock %d not EINVAL", state, (int)clocks[c]);
		ts.tv_nsec = 1000000000;
		CHECK(hl_mutex_timedlock(m, clocks[c], &ts) == EINVAL,
		      "%s: tv_nsec 1e9 on clock %d not EINVAL", state, (int)clocks[c]);
		ts.tv_nsec = -1;
		ts.tv_sec = 0; /* also bad when the time has passed */
		CHECK(hl_mutex_timedlock(m, clocks[c], &ts) == EINVAL,
		      "%s: tv_nsec -1 at time 0 on clock %d not EINVAL", state, (int)clocks[c]);
	}
	for (size_t i = 0; i < sizeof(bad_clocks) / sizeof(bad_clocks[0]); i++) {
		ts = ns_to_ts(later);
		int rc = hl_mutex_timedlock(m, bad_clocks[i], &ts);
		CHECK(rc == EINVAL, "%s: clock %d gave %d (%s), expected EINVAL", state,
		      (int)bad_clocks[i], rc, strerror(rc));
		if (rc == 0)
			hl_mutex_unlock(m);
	}
}

static void test_einval(void)
{
	hl_mutex_t m = HL_MUTEX_INIT;
	struct holder h;

	check_einval(&m, "free mutex");
	CHECK(hl_mutex_owner(&m) == 0, "EINVAL calls left the mutex owned by %u",
	      hl_mutex_owner(&m));
	CHECK_RC(hl_mutex_lock(&m), 0);
	check_einval(&m, "mutex held by the caller");
	CHECK_RC(hl_mutex_unlock(&m), 0);
	holder_start(&h, &m, 0);
	check_einval(&m, "mutex held by another thread");
	CHECK_RC(holder_finish(&h), 0);
	CHECK_RC(hl_mutex_destroy(&m), 0);
	printf("timedlock EINVAL: bad tv_nsec and %zu bad clocks, free and held\n",
	       sizeof(bad_clocks) / sizeof(bad_clocks[0]));
}

static void test_cross_thread_errors(void)
{
	hl_mutex_t m = HL_MUTEX_INIT;
	uint32_t me = test_gettid();
	struct call c;
	struct holder h;

	/* Unlock by a thread that is not the owner. */
	CHECK_RC(hl_mutex_lock(&m), 0);
	call_start(&c, do_unlock, &m);
	CHECK(call_join(&c, 10000, "unlock from another thread") == EPERM,
	      "unlock by a non-owner thread returned %d, expected EPERM", c.rc);
	CHECK(hl_mutex_owner(&m) == me, "after a foreign unlock the owner is %u, expected %u",
	      hl_mutex_owner(&m), me);
	call_start(&c, do_trylock, &m);
	CHECK(call_join(&c, 10000, "trylock from another thread") == EBUSY,
	      "trylock from another thread returned %d while held, expected EBUSY", c.rc);
	CHECK_RC(hl_mutex_unlock(&m), 0);

	/* Another thread holds it: destroy EBUSY, trylock EBUSY, unlock EPERM,
	 * owner is that thread. */
	holder_start(&h, &m, 0);
	CHECK_RC(hl_mutex_destroy(&m), EBUSY);
	CHECK_RC(hl_mutex_trylock(&m), EBUSY);
	CHECK_RC(hl_mutex_unlock(&m), EPERM);
	CHECK(hl_mutex_owner(&m) == h.c.tid, "owner %u, the holder is %u",
	      hl_mutex_owner(&m), h.c.tid);
	{
		char buf[256], tid[16];
		int n = hl_mutex_describe(&m, buf, sizeof(buf));
		snprintf(tid, sizeof(tid), "%u", h.c.tid);
		CHECK(n > 0 && (size_t)n < sizeof(buf), "describe returned %d", n);
		CHECK(strstr(buf, tid) != NULL, "describe does not show the owner TID %s: %s",
		      tid, buf);
		printf("describe while held by %s: %s\n", tid, buf);
	}
	CHECK_RC(holder_finish(&h), 0);
	CHECK_RC(hl_mutex_destroy(&m), 0);

	/* A blocked lock() gets the mutex when the holder releases it. */
	holder_start(&h, &m, 0);
	call_start(&c, do_lock_unlock, &m);
	CHECK(!call_done_within(&c, 50), "lock() returned while another thread held the mutex");
	CHECK_RC(holder_finish(&h), 0);
	CHECK(call_join(&c, 10000, "lock() after the holder's unlock") == 0,
	      "blocked lock/unlock returned %d", c.rc);
	CHECK(hl_mutex_owner(&m) == 0, "owner %u at the end", hl_mutex_owner(&m));
	CHECK_RC(hl_mutex_destroy(&m), 0);
	printf("cross-thread: EPERM for a foreign unlock, EBUSY destroy, blocked lock woken\n");
}

static void test_describe(void)
{
	hl_mutex_t m = HL_MUTEX_INIT;
	char buf[256], small[8], tid[16];
	int n, k;

	n = hl_mutex_describe(&m, buf, sizeof(buf));
	CHECK(n > 0 && (size_t)n == strlen(buf), "describe of a free mutex returned %d for \"%s\"",
	      n, buf);
	printf("describe free: %s\n", buf);
	CHECK_RC(hl_mutex_lock(&m), 0);
	snprintf(tid, sizeof(tid), "%u", test_gettid());
	n = hl_mutex_describe(&m, buf, sizeof(buf));
	CHECK(n > 0 && (size_t)n == strlen(buf), "describe returned %d for \"%s\"", n, buf);
	CHECK(strstr(buf, tid) != NULL, "describe does not show the owner TID %s: %s", tid, buf);
	CHECK(strchr(buf, '\n') == NULL || strchr(buf, '\n') == buf + n - 1,
	      "describe is not one line: %s", buf);
	memset(small, 'x', sizeof(small));
	k = hl_mutex_describe(&m, small, sizeof(small));
	CHECK(k == n, "truncated describe returned %d, the full line is %d", k, n);
	CHECK(memchr(small, 0, sizeof(small)) != NULL && strlen(small) == sizeof(small) - 1,
	      "truncated describe did not fill and terminate an 8-byte buffer");
	memset(small, 'x', sizeof(small));
	k = hl_mutex_describe(&m, small, 0);
	CHECK(k == n, "describe with len 0 returned %d, expected %d", k, n);
	CHECK(small[0] == 'x', "describe with len 0 wrote into the buffer");
	k = hl_mutex_describe(&m, NULL, 0);
	CHECK(k == n, "describe(NULL, 0) returned %d, expected %d", k, n);
	printf("describe held: %s\n", buf);
	CHECK_RC(hl_mutex_unlock(&m), 0);
}

static const char *clock_name(clockid_t c)
{
	return c == CLOCK_MONOTONIC ? "CLOCK_MONOTONIC" : "CLOCK_REALTIME";
}

static void test_timedlock(void)
{
	const clockid_t clocks[] = { CLOCK_MONOTONIC, CLOCK_REALTIME };
	const int64_t wait = 100 * NSEC_PER_MSEC;
	hl_mutex_t m = HL_MUTEX_INIT;
	struct holder h;
	struct timespec ts;

	/* Free mutex, deadline in the past: taken. */
	for (int c = 0; c < 2; c++) {
		ts = ns_to_ts(clock_ns(clocks[c]) - NSEC_PER_SEC);
		CHECK(hl_mutex_timedlock(&m, clocks[c], &ts) == 0,
		      "%s: free mutex with a past deadline not taken", clock_name(clocks[c]));
		CHECK_RC(hl_mutex_unlock(&m), 0);
		ts.tv_sec = 0;
		ts.tv_nsec = 0;
		CHECK(hl_mutex_timedlock(&m, clocks[c], &ts) == 0,
		      "%s: free mutex with deadline 0 not taken", clock_name(clocks[c]));
		CHECK_RC(hl_mutex_unlock(&m), 0);
	}

	holder_start(&h, &m, 0);
	for (int c = 0; c < 2; c++) {
		clockid_t clk = clocks[c];
		int64_t t0, t1, dl;
		int rc;
		const struct timespec past[] = {
			ns_to_ts(clock_ns(clk) - NSEC_PER_MSEC), { 0, 0 }, { -1, 0 },
			{ 0, 999999999 },
		};

		/* Deadline already passed: ETIMEDOUT at once. */
		for (size_t i = 0; i < sizeof(past) / sizeof(past[0]); i++) {
			t0 = now_ns();
			rc = hl_mutex_timedlock(&m, clk, &past[i]);
			t1 = now_ns();
			CHECK(rc == ETIMEDOUT, "%s: held mutex, past deadline {%lld, %ld}: %d (%s)",
			      clock_name(clk), (long long)past[i].tv_sec, past[i].tv_nsec, rc,
			      strerror(rc));
			CHECK(t1 - t0 < NSEC_PER_SEC, "%s: past deadline took %.1f ms",
			      clock_name(clk), (t1 - t0) / 1e6);
		}

		/* A real wait. */
		dl = clock_ns(clk) + wait;
		ts = ns_to_ts(dl);
		t0 = now_ns();
		rc = hl_mutex_timedlock(&m, clk, &ts);
		t1 = now_ns();
		CHECK(rc == ETIMEDOUT, "%s: held mutex returned %d (%s), expected ETIMEDOUT",
		      clock_name(clk), rc, strerror(rc));
		CHECK(clock_ns(clk) >= dl, "%s: returned before the deadline (clock %lld < %lld)",
		      clock_name(clk), (long long)clock_ns(clk), (long long)dl);
		CHECK(t1 - t0 >= wait - NSEC_PER_MSEC, "%s: waited only %.3f ms of %.0f",
		      clock_name(clk), (t1 - t0) / 1e6, wait / 1e6);
		CHECK(t1 - t0 < wait + 2 * NSEC_PER_SEC, "%s: waited %.3f ms for a %.0f ms timeout",
		      clock_name(clk), (t1 - t0) / 1e6, wait / 1e6);
		CHECK(hl_mutex_owner(&m) == h.c.tid, "%s: after the timeout the owner is %u, not %u",
		      clock_name(clk), hl_mutex_owner(&m), h.c.tid);
		printf("timedlock %s: ETIMEDOUT after %.3f ms (requested %.0f ms)\n",
		       clock_name(clk), (t1 - t0) / 1e6, wait / 1e6);
	}
	CHECK_RC(holder_finish(&h), 0);

	/* The holder releases in time: timedlock succeeds. */
	for (int c = 0; c < 2; c++) {
		clockid_t clk = clocks[c];
		int64_t t0, t1;
		int rc;
		holder_start(&h, &m, 50 * NSEC_PER_MSEC);
		ts = deadline_in(clk, 10 * NSEC_PER_SEC);
		t0 = now_ns();
		rc = hl_mutex_timedlock(&m, clk, &ts);
		t1 = now_ns();
		CHECK(rc == 0, "%s: the holder released after 50 ms, timedlock (10 s) returned %d (%s)",
		      clock_name(clk), rc, strerror(rc));
		if (rc == 0) {
			CHECK(hl_mutex_owner(&m) == test_gettid(), "owner %u after timedlock",
			      hl_mutex_owner(&m));
			/* The holder's unlock may still be on its way out;
			 * ours must work. */
			CHECK_RC(hl_mutex_unlock(&m), 0);
		}
		CHECK_RC(holder_finish(&h), 0);
		printf("timedlock %s: acquired after %.1f ms when the holder released\n",
		       clock_name(clk), (t1 - t0) / 1e6);
	}
	CHECK_RC(hl_mutex_destroy(&m), 0);
}

/* A deadline far in the future is a long wait, not an overflow that makes it
 * look past: the waiter must still be waiting 50 ms later, and get the
 * mutex when it is released. */
struct far_arg {
	hl_mutex_t *m;
	clockid_t clk;
	time_t sec;
};

static int do_far_timedlock(void *p)
{
	struct far_arg *a = p;
	struct timespec ts = { a->sec, 0 };
	int rc = hl_mutex_timedlock(a->m, a->clk, &ts);
	if (rc == 0)
		hl_mutex_unlock(a->m);
	return rc;
}

static void test_far_deadlines(void)
{
	const time_t secs[] = {
		(time_t)19000000000ll,          /* x 1e9 overflows 64 bits */
		(time_t)100000000000ll,
		(time_t)INT64_MAX,
	};
	const clockid_t clocks[] = { CLOCK_MONOTONIC, CLOCK_REALTIME };
	hl_mutex_t m = HL_MUTEX_INIT;

	for (size_t i = 0; i < sizeof(secs) / sizeof(secs[0]); i++)
		for (int c = 0; c < 2; c++) {
			struct holder h;
			struct call w;
			struct far_arg a = { &m, clocks[c], secs[i] };
			holder_start(&h, &m, 0);
			call_start(&w, do_far_timedlock, &a);
			CHECK(!call_done_within(&w, 50),
			      "%s: timedlock with tv_sec %lld returned %d (%s) at once, while held",
			      clock_name(clocks[c]), (long long)secs[i], w.rc, strerror(w.rc));
			CHECK_RC(holder_finish(&h), 0);
			CHECK(call_join(&w, 10000, "far-deadline timedlock") == 0,
			      "%s: timedlock with tv_sec %lld returned %d after the release",
			      clock_name(clocks[c]), (long long)secs[i], w.rc);
		}
	CHECK_RC(hl_mutex_destroy(&m), 0);
	printf("far-future deadlines (tv_sec up to INT64_MAX): waited, then acquired\n");
}

/* Timed-out waiters in the queue must not lose the wake-up of a lock()
 * waiter behind or before them. */
struct timed_arg {
	hl_mutex_t *m;
	int64_t timeout_ns;
	clockid_t clk;
};

static int do_timedlock(void *p)
{
	struct timed_arg *a = p;
	struct timespec ts = deadline_in(a->clk, a->timeout_ns);
	int rc = hl_mutex_timedlock(a->m, a->clk, &ts);
	if (rc == 0)
		hl_mutex_unlock(a->m);
	return rc;
}

static void test_timeouts_in_queue(void)
{
	hl_mutex_t m = HL_MUTEX_INIT;
	enum { NT = 3 };

	for (int order = 0; order < 3; order++) {
		struct holder h;
		struct call timed[NT], locker;
		struct timed_arg ta[NT];

		holder_start(&h, &m, 0);
		/* order 0: lock() waiter queued first; 1: last; 2: middle.
		 * The short sleeps only shape the queue order; the result must
		 * hold whatever the order. */
		for (int i = 0; i < NT; i++) {
			if ((order == 0 && i == 0) || (order == 2 && i == 1)) {
				call_start(&locker, do_lock_unlock, &m);
				sleep_ns(5 * NSEC_PER_MSEC);
			}
			ta[i].m = &m;
			ta[i].timeout_ns = (20 + 10 * i) * NSEC_PER_MSEC;
			ta[i].clk = i % 2 ? CLOCK_REALTIME : CLOCK_MONOTONIC;
			call_start(&timed[i], do_timedlock, &ta[i]);
			sleep_ns(2 * NSEC_PER_MSEC);
		}
		if (order == 1)
			call_start(&locker, do_lock_unlock, &m);
		for (int i = 0; i < NT; i++) {
			int rc = call_join(&timed[i], 10000, "timedlock waiter");
			CHECK(rc == ETIMEDOUT, "order %d: timed waiter %d returned %d (%s)",
			      order, i, rc, strerror(rc));
		}
		CHECK(!call_done_within(&locker, 20), "order %d: lock() returned while held", order);
		CHECK_RC(holder_finish(&h), 0);
		CHECK(call_join(&locker, 10000, "lock() waiter behind timed-out waiters") == 0,
		      "order %d: lock() waiter returned %d", order, locker.rc);
		CHECK(hl_mutex_owner(&m) == 0, "order %d: owner %u at the end", order,
		      hl_mutex_owner(&m));
		/* The mutex is clean: no waiter left, usable. */
		CHECK_RC(hl_mutex_trylock(&m), 0);
		CHECK_RC(hl_mutex_unlock(&m), 0);
		CHECK_RC(hl_mutex_destroy(&m), 0);
	}
	printf("timed-out waiters in the queue: the lock() waiter was woken in 3 orders\n");
}

static void test_config(void)
{
	hl_config_t c0, c, bad;

	hl_config_get(&c0);
	printf("config: spin_ns %llu, handoff_ns %llu\n", (unsigned long long)c0.spin_ns,
	       (unsigned long long)c0.handoff_ns);
	if (!getenv("HOTLOCK_HANDOFF_NS"))
		CHECK(c0.handoff_ns == 4000000, "default handoff_ns %llu, expected 4 ms",
		      (unsigned long long)c0.handoff_ns);
	if (!getenv("HOTLOCK_SPIN_NS"))
		CHECK(c0.spin_ns <= HL_SPIN_NS_MAX, "default spin_ns %llu out of range",
		      (unsigned long long)c0.spin_ns);
	bad = c0;
	bad.spin_ns = HL_SPIN_NS_MAX + 1;
	CHECK_RC(hl_config_set(&bad), EINVAL);
	bad = c0;
	bad.handoff_ns = HL_HANDOFF_NS_MAX + 1;
	CHECK_RC(hl_config_set(&bad), EINVAL);
	bad.spin_ns = 1; /* valid, but the whole set must be refused */
	CHECK_RC(hl_config_set(&bad), EINVAL);
	hl_config_get(&c);
	CHECK(c.spin_ns == c0.spin_ns && c.handoff_ns == c0.handoff_ns,
	      "a refused hl_config_set changed the config");
	CHECK(HL_SPIN_NS_MAX == 10000000ull && HL_HANDOFF_NS_MAX == 10000000000ull,
	      "limits are not 10 ms / 10 s");
	c.spin_ns = HL_SPIN_NS_MAX;
	c.handoff_ns = HL_HANDOFF_NS_MAX;
	CHECK_RC(hl_config_set(&c), 0);
	hl_config_get(&c);
	CHECK(c.spin_ns == HL_SPIN_NS_MAX && c.handoff_ns == HL_HANDOFF_NS_MAX,
	      "get after set: %llu %llu", (unsigned long long)c.spin_ns,
	      (unsigned long long)c.handoff_ns);
	c.spin_ns = 0;
	c.handoff_ns = 0;
	CHECK_RC(hl_config_set(&c), 0);
	hl_config_get(&c);
	CHECK(c.spin_ns == 0 && c.handoff_ns == 0, "get after set to 0");
	/* With spinning off and handoff at once the mutex still works. */
	{
		hl_mutex_t m = HL_MUTEX_INIT;
		struct holder h;
		struct call w;
		holder_start(&h, &m, 0);
		call_start(&w, do_lock_unlock, &m);
		CHECK(!call_done_within(&w, 20), "lock() returned while held (spin 0)");
		CHECK_RC(holder_finish(&h), 0);
		CHECK(call_join(&w, 10000, "lock() with spin 0, handoff 0") == 0, "lock failed");
	}
	/* rwlock_yield_ns: its range, and 0 for the default (a config
	 * filled in field by field before the field existed stays valid). */
	if (!getenv("HOTLOCK_RWLOCK_YIELD_NS"))
		CHECK(c0.rwlock_yield_ns == 10000000, "default rwlock_yield_ns %llu, expected 10 ms",
		      (unsigned long long)c0.rwlock_yield_ns);
	bad = c0;
	bad.rwlock_yield_ns = HL_RWLOCK_YIELD_NS_MIN - 1;
	CHECK_RC(hl_config_set(&bad), EINVAL);
	bad.rwlock_yield_ns = HL_RWLOCK_YIELD_NS_MAX + 1;
	CHECK_RC(hl_config_set(&bad), EINVAL);
	c = c0;
	c.rwlock_yield_ns = HL_RWLOCK_YIELD_NS_MIN;
	CHECK_RC(hl_config_set(&c), 0);
	hl_config_get(&c);
	CHECK(c.rwlock_yield_ns == HL_RWLOCK_YIELD_NS_MIN, "get after set: rwlock_yield_ns %llu",
	      (unsigned long long)c.rwlock_yield_ns);
	c.rwlock_yield_ns = 0;
	CHECK_RC(hl_config_set(&c), 0);
	hl_config_get(&c);
	CHECK(c.rwlock_yield_ns == 10000000, "rwlock_yield_ns 0 set %llu, expected the default",
	      (unsigned long long)c.rwlock_yield_ns);
	CHECK_RC(hl_config_set(&c0), 0);
	hl_config_get(&c);
	CHECK(c.spin_ns == c0.spin_ns && c.handoff_ns == c0.handoff_ns &&
	      c.rwlock_yield_ns == c0.rwlock_yield_ns, "config not restored");
	printf("config: ranges, EINVAL, set/get checked\n");
}

/* Run as `test_mutex_api --env SPIN HANDOFF` (ctest sets the environment):
 * the values read from HOTLOCK_SPIN_NS/HOTLOCK_HANDOFF_NS at start-up. */
static int env_config_main(char **argv)
{
	hl_config_t c;
	unsigned long long spin = strtoull(argv[2], NULL, 10);
	unsigned long long handoff = strtoull(argv[3], NULL, 10);
	hl_config_get(&c);
	printf("environment HOTLOCK_SPIN_NS=%s HOTLOCK_HANDOFF_NS=%s: config %llu %llu\n",
	       getenv("HOTLOCK_SPIN_NS") ? getenv("HOTLOCK_SPIN_NS") : "(unset)",
	       getenv("HOTLOCK_HANDOFF_NS") ? getenv("HOTLOCK_HANDOFF_NS") : "(unset)",
	       (unsigned long long)c.spin_ns, (unsigned long long)c.handoff_ns);
	CHECK(c.spin_ns == spin, "spin_ns %llu, expected %llu from the environment",
	      (unsigned long long)c.spin_ns, spin);
	CHECK(c.handoff_ns == handoff, "handoff_ns %llu, expected %llu from the environment",
	      (unsigned long long)c.handoff_ns, handoff);
	return test_finish("test_mutex_api --env");
}

/* A mutex used as a binary semaphore (issue 24): three consumers lock it
 * (P, hl__mutex_lock_any: the pthread shim's lock of a normal mutex, which
 * waits even in its owner), a producer unlocks it whenever it is held (V:
 * hl__mutex_unlock_any, the shim's unlock of a normal mutex by a thread
 * that does not own it, which glibc allows too).  A V that lands while a consumer is
 * still inside a slow-path acquire (between taking the word and recording
 * its successor in it) must not leave the word stuck with no owner, which
 * no lock and no unlock can change: the consumers keep getting it, for
 * about a second of Vs. */
static hl_mutex_t sem_m;
static atomic_long sem_got;
static atomic_int sem_stop;

static void *sem_consumer(void *arg)
{
	(void)arg;
	while (!atomic_load(&sem_stop)) {
		/* As the shim locks a normal mutex: its owner waits for an
		 * unlock too (no EDEADLK). */
		hl__mutex_lock_any(&sem_m, NULL);
		atomic_fetch_add(&sem_got, 1);
	}
	return NULL;
}

/* The same with hl_cond: two waiters that hold the mutex between their
 * waits (each wait releases and retakes it), and a broadcaster that takes
 * it (P) and broadcasts while it holds it, which records the first moved
 * waiter in the word it owns (deferred to its unlock, morph.h) while the
 * producer's V may free that word.  The producer unlocks only the
 * broadcaster's holds (sem_bc_holds), so that every hold is released once:
 * two unlocks of one hold are undefined, here as on glibc. */
static hl_cond_t sem_c;
static atomic_int sem_bc_holds;

static void *sem_waiter(void *arg)
{
	(void)arg;
	hl__mutex_lock_any(&sem_m, NULL);
	while (!atomic_load(&sem_stop)) {
		struct timespec ts = deadline_in(CLOCK_MONOTONIC, 10 * NSEC_PER_MSEC);
		if (hl_cond_timedwait(&sem_c, &sem_m, CLOCK_MONOTONIC, &ts) == 0)
			atomic_fetch_add(&sem_got, 1);
	}
	hl__mutex_unlock_any(&sem_m);
	return NULL;
}

static void *sem_broadcaster(void *arg)
{
	(void)arg;
	while (!atomic_load(&sem_stop)) {
		hl__mutex_lock_any(&sem_m, NULL);
		atomic_store(&sem_bc_holds, 1);
		hl_cond_broadcast(&sem_c);
		atomic_fetch_add(&sem_got, 1);
	}
	return NULL;
}

/* One V: with_cond, only of a hold of the broadcaster's. */
static bool sem_v(bool with_cond)
{
	if (with_cond) {
		if (!atomic_exchange(&sem_bc_holds, 0))
			return false;
	} else if (hl_mutex_trylock(&sem_m) == 0) {
		hl__mutex_unlock_any(&sem_m);   /* it was free: leave it so */
		return false;
	}
	hl__mutex_unlock_any(&sem_m);
	return true;
}

static void test_unlock_by_other(bool with_cond)
{
	pthread_t t[3];
	hl_mutex_init(&sem_m);
	hl_cond_init(&sem_c);
	atomic_store(&sem_stop, 0);
	atomic_store(&sem_got, 0);
	if (!with_cond)
		REQUIRE(hl_mutex_lock(&sem_m) == 0, "lock");
	for (int i = 0; i < 3; i++)
		REQUIRE(pthread_create(&t[i], NULL, !with_cond ? sem_consumer :
				       i < 2 ? sem_waiter : sem_broadcaster, NULL) == 0,
			"pthread_create");
	int64_t start = now_ns(), last_progress = start;
	long last = 0, vs = 0;
	bool stuck = false;
	char desc[256] = "";
	/* A second of Vs, then until the consumers show progress again;
	 * stuck: none for 3 s (a generous margin for a loaded machine and the
	 * sanitizers: a stuck word never moves again). */
	for (;;) {
		vs += sem_v(with_cond);
		long got = atomic_load(&sem_got);
		int64_t now = now_ns();
		if (got != last) {
			last = got;
			last_progress = now;
			if (now - start >= NSEC_PER_SEC)
				break;
		} else if (now - last_progress > 3 * NSEC_PER_SEC) {
			hl_mutex_describe(&sem_m, desc, sizeof(desc));
			stuck = true;
			break;
		}
	}
	CHECK(!stuck, "a mutex unlocked by another thread%s is stuck after %ld Vs and %ld Ps: %s",
	      with_cond ? " (with hl_cond)" : "", vs, last, desc);
	atomic_store(&sem_stop, 1);
	if (stuck) {
		printf("test_mutex_api: the consumers cannot finish; exiting\n");
		test_finish("test_mutex_api");
		_exit(1);
	}
	for (int i = 0; i < 3; i++) {
		/* V until each consumer has seen the stop. */
		while (pthread_tryjoin_np(t[i], NULL) == EBUSY) {
			sem_v(with_cond);
			sleep_ns(100000);
		}
	}
	printf("test_mutex_api: binary semaphore%s: %ld Vs, %ld Ps in about 1 s\n",
	       with_cond ? " with hl_cond" : "", vs, last);
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "--env") == 0)
		return env_config_main(argv);
	test_init_forms();
	test_errors_same_thread();
	test_einval();
	test_cross_thread_errors();
	test_describe();
	test_timedlock();
	test_timeouts_in_queue();
	test_far_deadlines();
	test_config();
	test_unlock_by_other(false);
	test_unlock_by_other(true);
	return test_finish("test_mutex_api");
}

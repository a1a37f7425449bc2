/* SPDX-License-Identifier: MIT */
/* hl_rwlock API test: every call and every documented error.
 *
 * Asserts:
 *  - sizeof(hl_rwlock_t) <= 16; HL_RWLOCK_INIT is all-zero bytes; a static
 *    and an automatic HL_RWLOCK_INIT, memset zero, calloc'd memory,
 *    hl_rwlock_init over garbage and a re-initialised lock are all unlocked
 *    rwlocks: holders (no writer, no reader), wrlock/rdlock/unlock,
 *    trywrlock/tryrdlock work, destroy 0;
 *  - hl_rwlock_holders: the writer's TID (seen from any thread) and 0
 *    readers when write-held; no writer and the exact count when read-held
 *    (1 and 2 by the caller, 3 by three threads at once: readers share);
 *  - tryrdlock: 0 while free or read-held (no writer waiting), EBUSY while
 *    write-held by another thread; trywrlock: EBUSY while read-held (by the
 *    caller or others) or write-held by another thread;
 *  - the write holder calling trywrlock or tryrdlock gets EBUSY (rwlock.h:
 *    trywrlock "EBUSY if held (by anyone)", tryrdlock "EBUSY if it cannot be
 *    had now"; EDEADLK is documented for the blocking and timed calls only);
 *  - EDEADLK: wrlock, rdlock, timedwrlock and timedrdlock (both clocks) by
 *    the write holder; the lock stays write-held by it;
 *  - EPERM: unlock of a free lock (static and zeroed), a second unlock, an
 *    unlock by a thread that is not the writer while another thread
 *    write-holds it (both directions: the lock stays write-held by its
 *    owner); downgrade of a free lock, of a read hold (the caller's or
 *    another thread's), by a non-owner while another thread write-holds it,
 *    and a second downgrade;
 *  - EBUSY from destroy while read-held (by the caller, by another thread),
 *    write-held (by the caller, by another thread), and while held with a
 *    waiter queued (a writer behind readers, a reader behind a writer); 0
 *    once everything is released (no waiter left behind).  A lock that is
 *    free while a waiter is still queued exists only for an instant (the
 *    head retakes it), so it is not tested;
 *  - downgrade: the writer's hold becomes one read hold (holders: no
 *    writer, 1 reader); then another thread's rdlock and tryrdlock succeed
 *    at once while a trywrlock fails (EBUSY) and a wrlock stays blocked
 *    until every read hold is released, and only then returns 0; a writer
 *    queued before the downgrade stays blocked until the unlock; a reader
 *    queued before the downgrade enters while the downgraded hold is still
 *    held (2 readers);
 *  - blocked rdlock/wrlock calls return 0 when the holder (writer, or the
 *    last reader) releases;
 *  - timed calls, both kinds, both clocks: EINVAL for tv_nsec -1 and 1e9
 *    and for clocks other than CLOCK_REALTIME/CLOCK_MONOTONIC, on a free
 *    lock (which stays free), a lock read-held or write-held by another
 *    thread, and one write-held by the caller (EINVAL before EDEADLK, as
 *    hl_mutex); a free lock with a deadline already past (or 0) is taken;
 *    ETIMEDOUT promptly for past deadlines while write-held by another
 *    thread, and after a real 100 ms wait (the clock reads at least the
 *    deadline on return, the wait lasted at least the requested time minus
 *    1 ms and less than the requested time plus 2 s); while read-held by
 *    another thread, timedrdlock is taken at once and timedwrlock times out
 *    (same bounds); tryrdlock then returns 0 (a due writer that gave up
 *    withdrew its handoff before it returned); once the holder leaves, the lock is free, trywrlock works and
 *    destroy returns 0 (nothing left behind); success when the holder
 *    releases in time;
 *  - a deadline far in the future (tv_sec 1.9e10, 1e11, INT64_MAX: the
 *    nanosecond count overflows 64 bits) waits instead of timing out, both
 *    kinds, both clocks, and the call succeeds after the release;
 *  - a second read lock by a thread that holds one: 0 whether the writer
 *    queued behind its hold is due or not, by rdlock, timedrdlock and
 *    tryrdlock, in every kind (rwlock.h, docs/rwlock.md);
 *  - kinds: init_kind EINVAL for unknown kinds, hl_rwlock_kind reads back
 *    the kind (prefer-writer for hl_rwlock_init); the basic calls in each kind; a
 *    new reader's tryrdlock while read-held and a writer waits: fair 0
 *    while the writer is not due and EBUSY once it is, prefer-reader 0,
 *    prefer-writer EBUSY; the writer gets the lock when the read hold
 *    ends; a due timed writer that gives up: a tryrdlock right after its
 *    ETIMEDOUT returns 0 and a reader queued behind it gets in, while the
 *    read hold stays; prefer-reader: a reader queued behind a writer head
 *    gets in once the write hold it waited for is downgraded (the writer
 *    still waiting);
 *  - an rdlock or wrlock waiter queued with timed waiters of both kinds that
 *    give up (in three start orders, behind a writer; a wrlock waiter also
 *    behind a reader) still gets the lock when it is released; the lock is
 *    then free and destroy returns 0;
 *  - describe: one line; shows the writer's TID when write-held and the
 *    reader count (as a number on its own) when read-held by 3 threads;
 *    truncates like snprintf and returns the full length; len 0 writes
 *    nothing.
 * Not tested: EAGAIN at HL_RWLOCK_MAX_READERS (2^31 - 1) read holds, which a
 * black-box test cannot reach. */
#include "call.h"
#include "common.h"
#include "rwlock_ops.h"

#include <hotlock/hotlock.h>

#include <ctype.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>

static hl_rwlock_t global_l = HL_RWLOCK_INIT;

enum kind { RD, WR };

static const char *kind_name(enum kind k) { return k == RD ? "read" : "write"; }

static const char *clock_name(clockid_t c)
{
	return c == CLOCK_MONOTONIC ? "CLOCK_MONOTONIC" : "CLOCK_REALTIME";
}

static int lock_kind(hl_rwlock_t *l, enum kind k)
{
	return k == RD ? hl_rwlock_rdlock(l) : hl_rwlock_wrlock(l);
}

static int timedlock_kind(hl_rwlock_t *l, enum kind k, clockid_t clk, const struct timespec *ts)
{
	return k == RD ? hl_rwlock_timedrdlock(l, clk, ts) : hl_rwlock_timedwrlock(l, clk, ts);
}

static void check_holders(const hl_rwlock_t *l, uint32_t want_w, uint32_t want_r,
			  const char *what)
{
	uint32_t w = 12345, r = 12345;
	hl_rwlock_holders(l, &w, &r);
	CHECK(w == want_w && r == want_r, "%s: holders show writer %u and %u readers, "
	      "expected writer %u and %u readers", what, w, r, want_w, want_r);
}

/* Waits (up to 10 s, else fatal) until the thread of call c is queued on l
 * as a waiter of kind k, and parked (rwlock_ops.h). */
static void wait_queued(hl_rwlock_t *l, struct call *c, enum kind k, const char *what)
{
	char line[1024];
	REQUIRE(rwlock_wait_queued(l, k == RD ? 'R' : 'W', &c->tid, line, sizeof(line)),
		"%s: thread %u not queued after 10 s: %s", what, atomic_load(&c->tid), line);
}

static int do_unlock(void *l) { return hl_rwlock_unlock(l); }
static int do_downgrade(void *l) { return hl_rwlock_downgrade(l); }
static int do_trywrlock(void *l) { return hl_rwlock_trywrlock(l); }
static int do_tryrdlock(void *l) { return hl_rwlock_tryrdlock(l); }
static int do_wrlock_unlock(void *l)
{
	int rc = hl_rwlock_wrlock(l);
	return rc ? rc : hl_rwlock_unlock(l);
}
static int do_rdlock_unlock(void *l)
{
	int rc = hl_rwlock_rdlock(l);
	return rc ? rc : hl_rwlock_unlock(l);
}
static int do_tryrdlock_unlock(void *l)
{
	int rc = hl_rwlock_tryrdlock(l);
	return rc ? rc : hl_rwlock_unlock(l);
}

/* A holder thread: locks (read or write), reports, holds until told (or for
 * hold_ns), unlocks. */
struct holder {
	hl_rwlock_t *l;
	enum kind k;
	sem_t locked, release;
	int64_t hold_ns;        /* >0: release by itself after this long */
	int lock_rc;
	struct call c;
};

static int holder_fn(void *p)
{
	struct holder *h = p;
	int rc = lock_kind(h->l, h->k);
	h->lock_rc = rc;
	sem_post(&h->locked);
	if (rc)
		return rc;
	if (h->hold_ns > 0)
		sleep_ns(h->hold_ns); /* the test is about time: hold this long */
	else
		while (sem_wait(&h->release) != 0 && errno == EINTR)
			;
	return hl_rwlock_unlock(h->l);
}

/* Starts the holder; with wait, returns once it holds the lock. */
static void holder_begin(struct holder *h, hl_rwlock_t *l, enum kind k, int64_t hold_ns,
			 bool wait)
{
	h->l = l;
	h->k = k;
	h->hold_ns = hold_ns;
	h->lock_rc = -1;
	sem_init(&h->locked, 0, 0);
	sem_init(&h->release, 0, 0);
	call_start(&h->c, holder_fn, h);
	if (wait) {
		while (sem_wait(&h->locked) != 0 && errno == EINTR)
			;
		REQUIRE(h->lock_rc == 0, "holder's %slock returned %d", k == RD ? "rd" : "wr",
			h->lock_rc);
	}
}

/* Waits up to timeout_ms for h's lock call to return; whether it did. */
static bool holder_locked_within(struct holder *h, int64_t timeout_ms)
{
	struct timespec dl = deadline_in(CLOCK_REALTIME, timeout_ms * NSEC_PER_MSEC);
	int r;
	while ((r = sem_timedwait(&h->locked, &dl)) != 0 && errno == EINTR)
		;
	return r == 0;
}

static void holder_start(struct holder *h, hl_rwlock_t *l, enum kind k, int64_t hold_ns)
{
	holder_begin(h, l, k, hold_ns, true);
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

static void basic_on(hl_rwlock_t *l, const char *what)
{
	uint32_t me = test_gettid();
	check_holders(l, 0, 0, what);
	CHECK_RC(hl_rwlock_wrlock(l), 0);
	check_holders(l, me, 0, what);
	CHECK_RC(hl_rwlock_unlock(l), 0);
	check_holders(l, 0, 0, what);
	CHECK_RC(hl_rwlock_rdlock(l), 0);
	check_holders(l, 0, 1, what);
	CHECK_RC(hl_rwlock_rdlock(l), 0);       /* a second read hold */
	check_holders(l, 0, 2, what);
	CHECK_RC(hl_rwlock_trywrlock(l), EBUSY);
	CHECK_RC(hl_rwlock_unlock(l), 0);
	CHECK_RC(hl_rwlock_unlock(l), 0);
	check_holders(l, 0, 0, what);
	CHECK_RC(hl_rwlock_tryrdlock(l), 0);
	CHECK_RC(hl_rwlock_unlock(l), 0);
	CHECK_RC(hl_rwlock_trywrlock(l), 0);
	check_holders(l, me, 0, what);
	CHECK_RC(hl_rwlock_unlock(l), 0);
	CHECK_RC(hl_rwlock_destroy(l), 0);
}

static void test_init_forms(void)
{
	hl_rwlock_t local = HL_RWLOCK_INIT;
	hl_rwlock_t zeroed;
	hl_rwlock_t garbage;
	hl_rwlock_t *heap = calloc(1, sizeof(hl_rwlock_t));
	static const hl_rwlock_t zero_bytes;

	CHECK(sizeof(hl_rwlock_t) <= 16, "sizeof(hl_rwlock_t) = %zu", sizeof(hl_rwlock_t));
	CHECK(memcmp(&local, &zero_bytes, sizeof(local)) == 0,
	      "HL_RWLOCK_INIT is not all-zero bytes");
	CHECK_RC(hl_rwlock_unlock(&global_l), EPERM);   /* static, never used */
	basic_on(&global_l, "static HL_RWLOCK_INIT");
	basic_on(&local, "automatic HL_RWLOCK_INIT");
	memset(&zeroed, 0, sizeof(zeroed));
	CHECK_RC(hl_rwlock_unlock(&zeroed), EPERM);
	CHECK_RC(hl_rwlock_downgrade(&zeroed), EPERM);
	basic_on(&zeroed, "memset 0");
	REQUIRE(heap, "calloc");
	basic_on(heap, "calloc");
	free(heap);
	memset(&garbage, 0xa5, sizeof(garbage));
	CHECK_RC(hl_rwlock_init(&garbage), 0);
	basic_on(&garbage, "hl_rwlock_init over garbage");
	CHECK_RC(hl_rwlock_init(&local), 0);
	basic_on(&local, "re-initialised");
	printf("init forms: HL_RWLOCK_INIT (static, automatic), memset, calloc, hl_rwlock_init: "
	       "unlocked and usable\n");
}

static void test_errors_same_thread(void)
{
	hl_rwlock_t l = HL_RWLOCK_INIT;
	uint32_t me = test_gettid();
	const clockid_t clocks[] = { CLOCK_MONOTONIC, CLOCK_REALTIME };

	CHECK_RC(hl_rwlock_unlock(&l), EPERM);          /* free */
	CHECK_RC(hl_rwlock_downgrade(&l), EPERM);

	/* Write-held by the caller. */
	CHECK_RC(hl_rwlock_wrlock(&l), 0);
	CHECK_RC(hl_rwlock_wrlock(&l), EDEADLK);
	CHECK_RC(hl_rwlock_rdlock(&l), EDEADLK);
	for (int c = 0; c < 2; c++) {
		struct timespec dl = deadline_in(clocks[c], NSEC_PER_SEC);
		int rc = hl_rwlock_timedwrlock(&l, clocks[c], &dl);
		CHECK(rc == EDEADLK, "%s: timedwrlock by the writer returned %d (%s)",
		      clock_name(clocks[c]), rc, strerror(rc));
		rc = hl_rwlock_timedrdlock(&l, clocks[c], &dl);
		CHECK(rc == EDEADLK, "%s: timedrdlock by the writer returned %d (%s)",
		      clock_name(clocks[c]), rc, strerror(rc));
	}
	CHECK_RC(hl_rwlock_trywrlock(&l), EBUSY);
	CHECK_RC(hl_rwlock_tryrdlock(&l), EBUSY);
	CHECK_RC(hl_rwlock_destroy(&l), EBUSY);
	check_holders(&l, me, 0, "write-held after the errors");
	CHECK_RC(hl_rwlock_unlock(&l), 0);
	CHECK_RC(hl_rwlock_unlock(&l), EPERM);          /* second unlock */
	CHECK_RC(hl_rwlock_downgrade(&l), EPERM);
	check_holders(&l, 0, 0, "after the unlock");

	/* Read-held by the caller. */
	CHECK_RC(hl_rwlock_rdlock(&l), 0);
	CHECK_RC(hl_rwlock_downgrade(&l), EPERM);       /* not a write hold */
	CHECK_RC(hl_rwlock_destroy(&l), EBUSY);
	CHECK_RC(hl_rwlock_trywrlock(&l), EBUSY);
	check_holders(&l, 0, 1, "read-held after the errors");
	CHECK_RC(hl_rwlock_unlock(&l), 0);
	CHECK_RC(hl_rwlock_unlock(&l), EPERM);

	/* Downgrade: write -> one read hold; a second downgrade is EPERM. */
	CHECK_RC(hl_rwlock_wrlock(&l), 0);
	CHECK_RC(hl_rwlock_downgrade(&l), 0);
	check_holders(&l, 0, 1, "after downgrade");
	CHECK_RC(hl_rwlock_downgrade(&l), EPERM);
	CHECK_RC(hl_rwlock_destroy(&l), EBUSY);
	CHECK_RC(hl_rwlock_trywrlock(&l), EBUSY);
	CHECK_RC(hl_rwlock_tryrdlock(&l), 0);           /* shares with itself */
	check_holders(&l, 0, 2, "downgraded + tryrdlock");
	CHECK_RC(hl_rwlock_unlock(&l), 0);
	CHECK_RC(hl_rwlock_unlock(&l), 0);
	CHECK_RC(hl_rwlock_unlock(&l), EPERM);
	check_holders(&l, 0, 0, "after the downgraded hold's unlock");
	CHECK_RC(hl_rwlock_destroy(&l), 0);
	printf("same-thread errors: EPERM, EDEADLK (4 calls, 2 clocks), EBUSY checked; "
	       "downgrade alone\n");
}

static const clockid_t bad_clocks[] = {
	CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID, CLOCK_MONOTONIC_RAW,
	CLOCK_REALTIME_COARSE, CLOCK_MONOTONIC_COARSE, CLOCK_BOOTTIME, CLOCK_TAI,
	42, -1,
};

static void check_einval(hl_rwlock_t *l, const char *state)
{
	const clockid_t clocks[] = { CLOCK_MONOTONIC, CLOCK_REALTIME };
	struct timespec ts;

	for (int k = RD; k <= WR; k++) {
		for (int c = 0; c < 2; c++) {
			const struct timespec bad[] = {
				{ ns_to_ts(clock_ns(clocks[c]) + NSEC_PER_SEC).tv_sec, -1 },
				{ ns_to_ts(clock_ns(clocks[c]) + NSEC_PER_SEC).tv_sec, 1000000000 },
				{ 0, -1 },      /* also bad when the time has passed */
				{ 0, 1000000000 },
			};
			for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
				int rc = timedlock_kind(l, (enum kind)k, clocks[c], &bad[i]);
				CHECK(rc == EINVAL, "%s: timed%slock {%lld, %ld} on %s returned %d "
				      "(%s), expected EINVAL", state, k == RD ? "rd" : "wr",
				      (long long)bad[i].tv_sec, bad[i].tv_nsec, clock_name(clocks[c]),
				      rc, strerror(rc));
				if (rc == 0)
					hl_rwlock_unlock(l);
			}
		}
		for (size_t i = 0; i < sizeof(bad_clocks) / sizeof(bad_clocks[0]); i++) {
			int rc;
			ts = deadline_in(CLOCK_MONOTONIC, NSEC_PER_SEC);
			rc = timedlock_kind(l, (enum kind)k, bad_clocks[i], &ts);
			CHECK(rc == EINVAL, "%s: timed%slock on clock %d returned %d (%s), expected "
			      "EINVAL", state, k == RD ? "rd" : "wr", (int)bad_clocks[i], rc,
			      strerror(rc));
			if (rc == 0)
				hl_rwlock_unlock(l);
		}
	}
}

static void test_einval(void)
{
	hl_rwlock_t l = HL_RWLOCK_INIT;
	struct holder h;

	check_einval(&l, "free lock");
	check_holders(&l, 0, 0, "after EINVAL calls on a free lock");
	CHECK_RC(hl_rwlock_wrlock(&l), 0);
	check_einval(&l, "write-held by the caller");
	CHECK_RC(hl_rwlock_unlock(&l), 0);
	holder_start(&h, &l, WR, 0);
	check_einval(&l, "write-held by another thread");
	check_holders(&l, atomic_load(&h.c.tid), 0, "after EINVAL calls, write-held");
	CHECK_RC(holder_finish(&h), 0);
	holder_start(&h, &l, RD, 0);
	check_einval(&l, "read-held by another thread");
	check_holders(&l, 0, 1, "after EINVAL calls, read-held");
	CHECK_RC(holder_finish(&h), 0);
	CHECK_RC(hl_rwlock_destroy(&l), 0);
	printf("timed EINVAL: bad tv_nsec and %zu bad clocks, both kinds, free and held\n",
	       sizeof(bad_clocks) / sizeof(bad_clocks[0]));
}

static void test_cross_thread(void)
{
	hl_rwlock_t l = HL_RWLOCK_INIT;
	uint32_t me = test_gettid();
	struct call c;
	struct holder h, rh[3];

	/* The caller write-holds: another thread's unlock and downgrade are
	 * EPERM, its try calls EBUSY; the lock stays ours. */
	CHECK_RC(hl_rwlock_wrlock(&l), 0);
	call_start(&c, do_unlock, &l);
	CHECK(call_join(&c, 10000, "unlock from another thread") == EPERM,
	      "unlock by a non-owner thread returned %d, expected EPERM", c.rc);
	call_start(&c, do_downgrade, &l);
	CHECK(call_join(&c, 10000, "downgrade from another thread") == EPERM,
	      "downgrade by a non-owner thread returned %d, expected EPERM", c.rc);
	call_start(&c, do_trywrlock, &l);
	CHECK(call_join(&c, 10000, "trywrlock from another thread") == EBUSY,
	      "trywrlock from another thread returned %d while write-held, expected EBUSY", c.rc);
	call_start(&c, do_tryrdlock, &l);
	CHECK(call_join(&c, 10000, "tryrdlock from another thread") == EBUSY,
	      "tryrdlock from another thread returned %d while write-held, expected EBUSY", c.rc);
	check_holders(&l, me, 0, "after a foreign unlock and downgrade");
	CHECK_RC(hl_rwlock_unlock(&l), 0);

	/* Another thread write-holds. */
	holder_start(&h, &l, WR, 0);
	CHECK_RC(hl_rwlock_destroy(&l), EBUSY);
	CHECK_RC(hl_rwlock_trywrlock(&l), EBUSY);
	CHECK_RC(hl_rwlock_tryrdlock(&l), EBUSY);
	CHECK_RC(hl_rwlock_unlock(&l), EPERM);
	CHECK_RC(hl_rwlock_downgrade(&l), EPERM);
	check_holders(&l, atomic_load(&h.c.tid), 0, "write-held by the holder thread");
	{
		char buf[1024], tid[16];
		int n = hl_rwlock_describe(&l, buf, sizeof(buf));
		snprintf(tid, sizeof(tid), "%u", atomic_load(&h.c.tid));
		CHECK(n > 0 && (size_t)n < sizeof(buf), "describe returned %d", n);
		CHECK(strstr(buf, tid) != NULL, "describe does not show the writer TID %s: %s",
		      tid, buf);
		printf("describe while write-held by %s: %s\n", tid, buf);
	}
	/* A blocked rdlock and a blocked wrlock get it when it is released. */
	{
		struct call r, w;
		call_start(&r, do_rdlock_unlock, &l);
		call_start(&w, do_wrlock_unlock, &l);
		CHECK(!call_done_within(&r, 50), "rdlock returned while another thread write-held");
		CHECK(!call_done_within(&w, 1), "wrlock returned while another thread write-held");
		CHECK_RC(holder_finish(&h), 0);
		CHECK(call_join(&r, 10000, "rdlock after the writer's unlock") == 0,
		      "blocked rdlock/unlock returned %d", r.rc);
		CHECK(call_join(&w, 10000, "wrlock after the writer's unlock") == 0,
		      "blocked wrlock/unlock returned %d", w.rc);
	}
	check_holders(&l, 0, 0, "after the blocked calls");
	CHECK_RC(hl_rwlock_destroy(&l), 0);

	/* Three threads read-hold at once. */
	for (int i = 0; i < 3; i++)
		holder_start(&rh[i], &l, RD, 0);
	check_holders(&l, 0, 3, "read-held by 3 threads");
	CHECK_RC(hl_rwlock_destroy(&l), EBUSY);
	CHECK_RC(hl_rwlock_trywrlock(&l), EBUSY);
	CHECK_RC(hl_rwlock_downgrade(&l), EPERM);       /* others' read holds */
	{
		char buf[1024];
		const char *p;
		bool shown = false;
		int n = hl_rwlock_describe(&l, buf, sizeof(buf));
		CHECK(n > 0 && (size_t)n < sizeof(buf), "describe returned %d", n);
		/* "3" as a number of its own, not a digit inside a hex word. */
		for (p = buf; (p = strchr(p, '3')) != NULL; p++)
			if ((p == buf || !isalnum((unsigned char)p[-1])) &&
			    !isalnum((unsigned char)p[1]))
				shown = true;
		CHECK(shown, "describe does not show the reader count 3: %s", buf);
		printf("describe while read-held by 3 threads: %s\n", buf);
	}
	call_start(&c, do_tryrdlock_unlock, &l);
	CHECK(call_join(&c, 10000, "tryrdlock while read-held") == 0,
	      "tryrdlock while read-held (no writer waiting) returned %d", c.rc);
	/* A blocked wrlock gets it when the last reader releases. */
	{
		struct call w;
		call_start(&w, do_wrlock_unlock, &l);
		CHECK(!call_done_within(&w, 50), "wrlock returned while 3 threads read-held");
		CHECK_RC(holder_finish(&rh[0]), 0);
		CHECK_RC(holder_finish(&rh[1]), 0);
		CHECK(!call_done_within(&w, 20), "wrlock returned while a reader still held");
		CHECK_RC(holder_finish(&rh[2]), 0);
		CHECK(call_join(&w, 10000, "wrlock after the last reader's unlock") == 0,
		      "blocked wrlock/unlock returned %d", w.rc);
	}
	check_holders(&l, 0, 0, "at the end");
	CHECK_RC(hl_rwlock_destroy(&l), 0);
	printf("cross-thread: EPERM for foreign unlock/downgrade, EBUSY try and destroy, "
	       "3 readers share, blocked calls woken\n");
}

/* destroy while held with a waiter queued behind the holder. */
static void test_destroy_waited(void)
{
	hl_rwlock_t l = HL_RWLOCK_INIT;
	struct holder h;
	struct call w;

	for (int k = RD; k <= WR; k++) {
		enum kind hk = k == RD ? WR : RD;       /* the holder, the other kind */
		holder_start(&h, &l, hk, 0);
		call_start(&w, k == RD ? do_rdlock_unlock : do_wrlock_unlock, &l);
		wait_queued(&l, &w, (enum kind)k, "waiter for destroy");
		CHECK(hl_rwlock_destroy(&l) == EBUSY, "destroy with a %s waiter queued behind a "
		      "%s hold did not return EBUSY", kind_name((enum kind)k), kind_name(hk));
		CHECK_RC(holder_finish(&h), 0);
		CHECK(call_join(&w, 10000, "queued waiter") == 0, "the queued %s waiter returned %d",
		      kind_name((enum kind)k), w.rc);
		check_holders(&l, 0, 0, "after the waiter");
		CHECK_RC(hl_rwlock_destroy(&l), 0);
	}
	printf("destroy: EBUSY with a queued reader behind a writer and a queued writer behind "
	       "a reader; 0 once drained\n");
}

static void test_downgrade(void)
{
	hl_rwlock_t l = HL_RWLOCK_INIT;
	struct holder rd;
	struct call w, c;

	/* a. Downgrade with nobody waiting: readers come in, a writer does not
	 * until every read hold is gone. */
	CHECK_RC(hl_rwlock_wrlock(&l), 0);
	CHECK_RC(hl_rwlock_downgrade(&l), 0);
	check_holders(&l, 0, 1, "downgraded");
	call_start(&c, do_tryrdlock_unlock, &l);
	CHECK(call_join(&c, 10000, "tryrdlock beside a downgraded hold") == 0,
	      "tryrdlock beside a downgraded hold returned %d", c.rc);
	holder_start(&rd, &l, RD, 0);   /* rdlock, within 10 s or fatal */
	check_holders(&l, 0, 2, "downgraded + another reader");
	call_start(&c, do_trywrlock, &l);
	CHECK(call_join(&c, 10000, "trywrlock beside a downgraded hold") == EBUSY,
	      "trywrlock while downgraded returned %d, expected EBUSY", c.rc);
	call_start(&w, do_wrlock_unlock, &l);
	CHECK(!call_done_within(&w, 50), "wrlock returned while a downgraded hold was held");
	CHECK_RC(holder_finish(&rd), 0);
	CHECK(!call_done_within(&w, 50), "wrlock returned while the downgraded hold was held");
	check_holders(&l, 0, 1, "downgraded, the other reader gone");
	CHECK_RC(hl_rwlock_unlock(&l), 0);
	CHECK(call_join(&w, 10000, "wrlock after the downgraded hold's unlock") == 0,
	      "wrlock after the unlock returned %d", w.rc);
	check_holders(&l, 0, 0, "after a");

	/* b. A writer queued before the downgrade stays out until the unlock. */
	CHECK_RC(hl_rwlock_wrlock(&l), 0);
	call_start(&w, do_wrlock_unlock, &l);
	wait_queued(&l, &w, WR, "writer queued before a downgrade");
	CHECK_RC(hl_rwlock_downgrade(&l), 0);
	CHECK(!call_done_within(&w, 50), "a queued writer got in after the downgrade");
	check_holders(&l, 0, 1, "downgraded with a writer queued");
	CHECK_RC(hl_rwlock_unlock(&l), 0);
	CHECK(call_join(&w, 10000, "queued writer after the unlock") == 0,
	      "queued writer returned %d", w.rc);
	check_holders(&l, 0, 0, "after b");

	/* c. A reader queued before the downgrade comes in beside it. */
	CHECK_RC(hl_rwlock_wrlock(&l), 0);
	holder_begin(&rd, &l, RD, 0, false);
	wait_queued(&l, &rd.c, RD, "reader queued before a downgrade");
	CHECK_RC(hl_rwlock_downgrade(&l), 0);
	{
		bool in = holder_locked_within(&rd, 2000);
		CHECK(in && rd.lock_rc == 0, "a reader queued before the downgrade did not "
		      "get in within 2 s while the downgraded hold was held (rdlock %d)",
		      rd.lock_rc);
		if (in)
			check_holders(&l, 0, 2, "downgraded + the queued reader");
	}
	CHECK_RC(hl_rwlock_unlock(&l), 0);
	CHECK_RC(holder_finish(&rd), 0);
	check_holders(&l, 0, 0, "after c");
	CHECK_RC(hl_rwlock_destroy(&l), 0);
	printf("downgrade: readers enter beside it, writers (new or queued) wait for the "
	       "unlock, a queued reader enters\n");
}

static void test_describe(void)
{
	hl_rwlock_t l = HL_RWLOCK_INIT;
	char buf[1024], small[8], tid[16];
	int n, k;

	n = hl_rwlock_describe(&l, buf, sizeof(buf));
	CHECK(n > 0 && (size_t)n == strlen(buf), "describe of a free lock returned %d for \"%s\"",
	      n, buf);
	printf("describe free: %s\n", buf);
	CHECK_RC(hl_rwlock_wrlock(&l), 0);
	snprintf(tid, sizeof(tid), "%u", test_gettid());
	n = hl_rwlock_describe(&l, buf, sizeof(buf));
	CHECK(n > 0 && (size_t)n == strlen(buf), "describe returned %d for \"%s\"", n, buf);
	CHECK(strstr(buf, tid) != NULL, "describe does not show the writer TID %s: %s", tid, buf);
	CHECK(strchr(buf, '\n') == NULL || strchr(buf, '\n') == buf + n - 1,
	      "describe is not one line: %s", buf);
	memset(small, 'x', sizeof(small));
	k = hl_rwlock_describe(&l, small, sizeof(small));
	CHECK(k == n, "truncated describe returned %d, the full line is %d", k, n);
	CHECK(memchr(small, 0, sizeof(small)) != NULL && strlen(small) == sizeof(small) - 1,
	      "truncated describe did not fill and terminate an 8-byte buffer");
	memset(small, 'x', sizeof(small));
	k = hl_rwlock_describe(&l, small, 0);
	CHECK(k == n, "describe with len 0 returned %d, expected %d", k, n);
	CHECK(small[0] == 'x', "describe with len 0 wrote into the buffer");
	k = hl_rwlock_describe(&l, NULL, 0);
	CHECK(k == n, "describe(NULL, 0) returned %d, expected %d", k, n);
	printf("describe write-held: %s\n", buf);
	CHECK_RC(hl_rwlock_unlock(&l), 0);
	CHECK_RC(hl_rwlock_destroy(&l), 0);
}

static void test_timed(void)
{
	const clockid_t clocks[] = { CLOCK_MONOTONIC, CLOCK_REALTIME };
	const int64_t wait = 100 * NSEC_PER_MSEC;
	hl_rwlock_t l = HL_RWLOCK_INIT;
	struct holder h;
	struct timespec ts;

	/* Free lock, deadline in the past (or 0): taken. */
	for (int k = RD; k <= WR; k++)
		for (int c = 0; c < 2; c++) {
			ts = ns_to_ts(clock_ns(clocks[c]) - NSEC_PER_SEC);
			CHECK(timedlock_kind(&l, (enum kind)k, clocks[c], &ts) == 0,
			      "%s: free lock with a past deadline not taken for %s",
			      clock_name(clocks[c]), kind_name((enum kind)k));
			CHECK_RC(hl_rwlock_unlock(&l), 0);
			ts.tv_sec = 0;
			ts.tv_nsec = 0;
			CHECK(timedlock_kind(&l, (enum kind)k, clocks[c], &ts) == 0,
			      "%s: free lock with deadline 0 not taken for %s",
			      clock_name(clocks[c]), kind_name((enum kind)k));
			CHECK_RC(hl_rwlock_unlock(&l), 0);
		}

	/* Write-held by another thread: both kinds time out. */
	holder_start(&h, &l, WR, 0);
	for (int k = RD; k <= WR; k++)
		for (int c = 0; c < 2; c++) {
			clockid_t clk = clocks[c];
			int64_t t0, t1, dl;
			int rc;
			const struct timespec past[] = {
				ns_to_ts(clock_ns(clk) - NSEC_PER_MSEC), { 0, 0 }, { -1, 0 },
				{ 0, 999999999 },
			};

			for (size_t i = 0; i < sizeof(past) / sizeof(past[0]); i++) {
				t0 = now_ns();
				rc = timedlock_kind(&l, (enum kind)k, clk, &past[i]);
				t1 = now_ns();
				CHECK(rc == ETIMEDOUT, "%s %s: write-held, past deadline {%lld, %ld}: "
				      "%d (%s)", clock_name(clk), kind_name((enum kind)k),
				      (long long)past[i].tv_sec, past[i].tv_nsec, rc, strerror(rc));
				CHECK(t1 - t0 < NSEC_PER_SEC, "%s: past deadline took %.1f ms",
				      clock_name(clk), (t1 - t0) / 1e6);
			}

			dl = clock_ns(clk) + wait;
			ts = ns_to_ts(dl);
			t0 = now_ns();
			rc = timedlock_kind(&l, (enum kind)k, clk, &ts);
			t1 = now_ns();
			CHECK(rc == ETIMEDOUT, "%s %s: write-held lock returned %d (%s), expected "
			      "ETIMEDOUT", clock_name(clk), kind_name((enum kind)k), rc, strerror(rc));
			CHECK(clock_ns(clk) >= dl, "%s: returned before the deadline", clock_name(clk));
			CHECK(t1 - t0 >= wait - NSEC_PER_MSEC, "%s %s: waited only %.3f ms of %.0f",
			      clock_name(clk), kind_name((enum kind)k), (t1 - t0) / 1e6, wait / 1e6);
			CHECK(t1 - t0 < wait + 2 * NSEC_PER_SEC, "%s %s: waited %.3f ms for a %.0f ms "
			      "timeout", clock_name(clk), kind_name((enum kind)k), (t1 - t0) / 1e6,
			      wait / 1e6);
			check_holders(&l, atomic_load(&h.c.tid), 0, "write-held after a timeout");
			printf("timed%slock %s, write-held: ETIMEDOUT after %.3f ms (requested %.0f ms)\n",
			       k == RD ? "rd" : "wr", clock_name(clk), (t1 - t0) / 1e6, wait / 1e6);
		}
	CHECK_RC(holder_finish(&h), 0);

	/* Read-held by another thread: timedrdlock shares it at once and
	 * timedwrlock times out.  The writer was due by then (it waited longer
	 * than the handoff threshold), and a due writer that gives up keeps new
	 * readers out until the current read hold ends, as if it still waited
	 * (docs/rwlock.md): tryrdlock may say EBUSY.  Once the holder leaves,
	 * the lock is free and clean: no flags, no queue. */
	for (int c = 0; c < 2; c++) {
		clockid_t clk = clocks[c];
		int64_t dl, t0, t1, t2;
		int rc;
		holder_start(&h, &l, RD, 0);
		ts = deadline_in(clk, NSEC_PER_SEC);
		t0 = now_ns();
		rc = hl_rwlock_timedrdlock(&l, clk, &ts);
		t1 = now_ns();
		CHECK(rc == 0, "%s: timedrdlock (1 s) on a read-held lock returned %d (%s)",
		      clock_name(clk), rc, strerror(rc));
		if (rc == 0) {
			check_holders(&l, 0, 2, "timedrdlock beside a reader");
			CHECK_RC(hl_rwlock_unlock(&l), 0);
		}
		dl = clock_ns(clk) + wait;
		ts = ns_to_ts(dl);
		t1 = now_ns();
		rc = hl_rwlock_timedwrlock(&l, clk, &ts);
		t2 = now_ns();
		CHECK(rc == ETIMEDOUT, "%s: timedwrlock on a read-held lock returned %d (%s)",
		      clock_name(clk), rc, strerror(rc));
		CHECK(clock_ns(clk) >= dl && t2 - t1 >= wait - NSEC_PER_MSEC &&
		      t2 - t1 < wait + 2 * NSEC_PER_SEC,
		      "%s: timedwrlock on a read-held lock waited %.3f ms of %.0f",
		      clock_name(clk), (t2 - t1) / 1e6, wait / 1e6);
		rc = hl_rwlock_tryrdlock(&l);
		CHECK(rc == 0, "%s: after a timedwrlock gave up, tryrdlock on the read-held lock "
		      "returned %d (%s), expected 0 (the writer withdrew its handoff)",
		      clock_name(clk), rc, strerror(rc));
		if (rc == 0)
			CHECK_RC(hl_rwlock_unlock(&l), 0);
		CHECK_RC(holder_finish(&h), 0);
		check_holders(&l, 0, 0, "after the writer gave up and the reader left");
		CHECK_RC(hl_rwlock_trywrlock(&l), 0);
		CHECK_RC(hl_rwlock_unlock(&l), 0);
		CHECK_RC(hl_rwlock_destroy(&l), 0);
		printf("%s, read-held: timedrdlock taken in %.3f ms, timedwrlock ETIMEDOUT after "
		       "%.3f ms, then tryrdlock %s\n", clock_name(clk), (t1 - t0) / 1e6,
		       (t2 - t1) / 1e6, rc ? "EBUSY" : "0");
	}
	check_holders(&l, 0, 0, "after the read-held timed calls");

	/* The holder releases in time: the timed call succeeds. */
	for (int k = RD; k <= WR; k++)
		for (int c = 0; c < 2; c++) {
			clockid_t clk = clocks[c];
			enum kind hk = (enum kind)(k == RD ? WR : (c ? RD : WR));
			int64_t t0, t1;
			int rc;
			holder_start(&h, &l, hk, 50 * NSEC_PER_MSEC);
			ts = deadline_in(clk, 10 * NSEC_PER_SEC);
			t0 = now_ns();
			rc = timedlock_kind(&l, (enum kind)k, clk, &ts);
			t1 = now_ns();
			CHECK(rc == 0, "%s: timed%slock (10 s) behind a %s hold of 50 ms returned %d "
			      "(%s)", clock_name(clk), k == RD ? "rd" : "wr", kind_name(hk), rc,
			      strerror(rc));
			if (rc == 0)
				CHECK_RC(hl_rwlock_unlock(&l), 0);
			CHECK_RC(holder_finish(&h), 0);
			printf("timed%slock %s behind a %s hold: acquired after %.1f ms\n",
			       k == RD ? "rd" : "wr", clock_name(clk), kind_name(hk), (t1 - t0) / 1e6);
		}
	check_holders(&l, 0, 0, "after the timed calls");
	CHECK_RC(hl_rwlock_destroy(&l), 0);
}

/* A deadline far in the future is a long wait, not an overflow that makes it
 * look past: the waiter must still be waiting 50 ms later, and get the lock
 * when it is released. */
struct far_arg {
	hl_rwlock_t *l;
	enum kind k;
	clockid_t clk;
	time_t sec;
};

static int do_far_timedlock(void *p)
{
	struct far_arg *a = p;
	struct timespec ts = { a->sec, 0 };
	int rc = timedlock_kind(a->l, a->k, a->clk, &ts);
	if (rc == 0)
		hl_rwlock_unlock(a->l);
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
	hl_rwlock_t l = HL_RWLOCK_INIT;

	for (size_t i = 0; i < sizeof(secs) / sizeof(secs[0]); i++)
		for (int c = 0; c < 2; c++)
			for (int k = RD; k <= WR; k++) {
				struct holder h;
				struct call w;
				struct far_arg a = { &l, (enum kind)k, clocks[c], secs[i] };
				holder_start(&h, &l, WR, 0);
				call_start(&w, do_far_timedlock, &a);
				CHECK(!call_done_within(&w, 30),
				      "%s: timed%slock with tv_sec %lld returned %d (%s) at once, "
				      "while write-held", clock_name(clocks[c]), k == RD ? "rd" : "wr",
				      (long long)secs[i], w.rc, strerror(w.rc));
				CHECK_RC(holder_finish(&h), 0);
				CHECK(call_join(&w, 10000, "far-deadline timed call") == 0,
				      "%s: timed%slock with tv_sec %lld returned %d after the release",
				      clock_name(clocks[c]), k == RD ? "rd" : "wr",
				      (long long)secs[i], w.rc);
			}
	CHECK_RC(hl_rwlock_destroy(&l), 0);
	printf("far-future deadlines (tv_sec up to INT64_MAX), both kinds: waited, then "
	       "acquired\n");
}

static const int rwkinds[] = { HL_RWLOCK_FAIR, HL_RWLOCK_PREFER_READER, HL_RWLOCK_PREFER_WRITER,
				HL_RWLOCK_WRITER_YIELDS };
#define NKINDS (sizeof(rwkinds) / sizeof(rwkinds[0]))
static const char *lockkind_name(int k)
{
	return k == HL_RWLOCK_FAIR            ? "fair"
	       : k == HL_RWLOCK_PREFER_READER ? "prefer-reader"
	       : k == HL_RWLOCK_PREFER_WRITER ? "prefer-writer"
					      : "writer-yields";
}

/* A thread that holds a read lock and asks for another (rwlock.h, above
 * hl_rwlock_rdlock) is granted it whatever waits: with a writer queued
 * behind its hold that is not due, and one that is (which keeps other
 * readers out in the fair and writer-preferring kinds), by rdlock,
 * timedrdlock and tryrdlock, in every kind.  The writer's threshold is read
 * when it queues, so each case queues its own writer. */
static void test_recursive_read(void)
{
	hl_config_t c0, c;
	hl_config_get(&c0);
	const int64_t thresholds[] = { 2000 * NSEC_PER_MSEC, 4 * NSEC_PER_MSEC };
	for (unsigned ki = 0; ki < NKINDS; ki++)
		for (int due = 0; due < 2; due++)
			for (int form = 0; form < 3; form++) {
				hl_rwlock_t l;
				struct call w;
				CHECK_RC(hl_rwlock_init_kind(&l, rwkinds[ki]), 0);
				c = c0;
				c.handoff_ns = (uint64_t)thresholds[due];
				CHECK_RC(hl_config_set(&c), 0);
				CHECK_RC(hl_rwlock_rdlock(&l), 0);
				call_start(&w, do_wrlock_unlock, &l);
				wait_queued(&l, &w, WR, "writer behind a read hold");
				sleep_ns(20 * NSEC_PER_MSEC);   /* due after 4 ms, not after 2 s */
				struct timespec dl = deadline_in(CLOCK_MONOTONIC, 200 * NSEC_PER_MSEC);
				int rc = form == 0 ? hl_rwlock_rdlock(&l)
				       : form == 1 ? hl_rwlock_timedrdlock(&l, CLOCK_MONOTONIC, &dl)
						   : hl_rwlock_tryrdlock(&l);
				CHECK(rc == 0, "%s: a second read lock (%s) while the queued writer "
				      "is %s returned %d, expected 0", lockkind_name(rwkinds[ki]),
				      form == 0 ? "rdlock" : form == 1 ? "timedrdlock" : "tryrdlock",
				      due ? "due" : "not due", rc);
				if (!rc) {
					check_holders(&l, 0, 2, "a nested read");
					CHECK_RC(hl_rwlock_unlock(&l), 0);
				}
				CHECK(!call_done_within(&w, 0), "the writer got the lock while it was "
				      "read-held");
				CHECK_RC(hl_rwlock_unlock(&l), 0);
				CHECK(call_join(&w, 10000, "writer") == 0, "the writer returned %d", w.rc);
				CHECK_RC(hl_rwlock_destroy(&l), 0);
			}
	CHECK_RC(hl_config_set(&c0), 0);
	printf("recursive read: granted while a queued writer is due or not, rdlock, timedrdlock "
	       "and tryrdlock, every kind\n");
}

struct timed_wr {
	hl_rwlock_t *l;
	int64_t wait_ns;
};

static int do_timedwrlock_unlock(void *p)
{
	struct timed_wr *a = p;
	struct timespec ts = deadline_in(CLOCK_MONOTONIC, a->wait_ns);
	int rc = hl_rwlock_timedwrlock(a->l, CLOCK_MONOTONIC, &ts);
	return rc ? rc : hl_rwlock_unlock(a->l);
}

/* The kinds (rwlock.h): init_kind's checks; what a new reader gets while
 * the lock is read-held and a writer waits (fair: in while the writer is
 * not due, out once it is; prefer-reader: in; prefer-writer: out at once);
 * the writer gets the lock once the read holds end, in every kind; and a
 * writer that gives up (a timed wrlock, due) takes its claim back before
 * its call returns: a reader that was kept out only by it, queued or new,
 * gets in while the read hold stays. */
static void test_kinds(void)
{
	hl_rwlock_t l;
	hl_config_t c0, base, c;
	hl_config_get(&c0);
	base = c0;
	CHECK_RC(hl_rwlock_init_kind(&l, 4), EINVAL);
	CHECK_RC(hl_rwlock_init_kind(&l, -1), EINVAL);
	hl_rwlock_init(&l);
	CHECK_RC(hl_rwlock_kind(&l), HL_RWLOCK_PREFER_WRITER);
	/* writer-yields as prefer-writer: its bound (1 s) is far beyond the
	 * cases' waits (test_writer_yields has its own). */
	base.rwlock_yield_ns = HL_RWLOCK_YIELD_NS_MAX;
	for (unsigned ki = 0; ki < NKINDS; ki++) {
		const int k = rwkinds[ki];
		CHECK_RC(hl_rwlock_init_kind(&l, k), 0);
		CHECK_RC(hl_rwlock_kind(&l), k);
		basic_on(&l, lockkind_name(k));
		CHECK_RC(hl_rwlock_init_kind(&l, k), 0);
		for (int due = 0; due < 2; due++) {
			struct holder h;
			struct call w, r;
			c = base;
			c.handoff_ns = due ? 4 * NSEC_PER_MSEC : 2000 * NSEC_PER_MSEC;
			CHECK_RC(hl_config_set(&c), 0);
			holder_start(&h, &l, RD, 0);
			call_start(&w, do_wrlock_unlock, &l);
			wait_queued(&l, &w, WR, "writer behind a read hold");
			sleep_ns(20 * NSEC_PER_MSEC);
			int want = k == HL_RWLOCK_PREFER_READER || (k == HL_RWLOCK_FAIR && !due) ? 0 : EBUSY;
			call_start(&r, do_tryrdlock_unlock, &l);
			CHECK(call_join(&r, 10000, "tryrdlock") == want,
			      "%s: a new reader's tryrdlock while read-held and a %s writer waits "
			      "returned %d, expected %d", lockkind_name(k), due ? "due" : "not yet due",
			      r.rc, want);
			CHECK(!call_done_within(&w, 0), "%s: the writer got in while read-held",
			      lockkind_name(k));
			CHECK_RC(holder_finish(&h), 0);
			CHECK(call_join(&w, 10000, "writer") == 0, "%s: the writer returned %d once the "
			      "reads ended", lockkind_name(k), w.rc);
		}
		/* Withdrawal: a due writer gives up with a reader queued
		 * behind it (fair, prefer-writer) or not (prefer-reader). */
		c = base;
		c.handoff_ns = 4 * NSEC_PER_MSEC;
		CHECK_RC(hl_config_set(&c), 0);
		struct holder h;
		struct call w, r;
		struct timed_wr tw = { &l, 200 * NSEC_PER_MSEC };
		holder_start(&h, &l, RD, 0);
		call_start(&w, do_timedwrlock_unlock, &tw);
		wait_queued(&l, &w, WR, "timed writer behind a read hold");
		sleep_ns(20 * NSEC_PER_MSEC);
		call_start(&r, do_rdlock_unlock, &l);
		if (k != HL_RWLOCK_PREFER_READER)
			wait_queued(&l, &r, RD, "reader behind a due writer");
		CHECK(call_join(&w, 10000, "timed writer") == ETIMEDOUT,
		      "%s: the timed writer returned %d, expected ETIMEDOUT", lockkind_name(k), w.rc);
		int rc = hl_rwlock_tryrdlock(&l);
		CHECK(rc == 0, "%s: tryrdlock right after the due writer gave up returned %d, "
		      "expected 0 (its HANDOFF withdrawn)", lockkind_name(k), rc);
		if (!rc)
			CHECK_RC(hl_rwlock_unlock(&l), 0);
		CHECK(call_join(&r, 2000, "reader") == 0,
		      "%s: the reader queued behind the writer that gave up did not get in while "
		      "the read hold stays (%d)", lockkind_name(k), r.rc);
		CHECK_RC(holder_finish(&h), 0);
		if (k == HL_RWLOCK_PREFER_READER) {
			/* A reader queued behind a writer head gets in as
			 * soon as the lock is read-held (the head grants the
			 * readers behind it, src/rwlock.c step 4b): here the
			 * write hold it waited for is downgraded. */
			struct call w2;
			CHECK_RC(hl_rwlock_wrlock(&l), 0);
			call_start(&w2, do_wrlock_unlock, &l);
			wait_queued(&l, &w2, WR, "writer behind a write hold");
			call_start(&r, do_rdlock_unlock, &l);
			wait_queued(&l, &r, RD, "reader behind the queued writer");
			CHECK_RC(hl_rwlock_downgrade(&l), 0);
			CHECK(call_join(&r, 2000, "reader behind the writer head") == 0,
			      "prefer-reader: the reader queued behind a writer did not get in while "
			      "the lock was read-held (downgraded) (%d)", r.rc);
			CHECK(!call_done_within(&w2, 0), "prefer-reader: the writer got in while "
			      "read-held");
			CHECK_RC(hl_rwlock_unlock(&l), 0);
			CHECK(call_join(&w2, 10000, "writer") == 0, "the writer returned %d", w2.rc);
		}
		check_holders(&l, 0, 0, "after the kinds' cases");
		CHECK_RC(hl_rwlock_trywrlock(&l), 0);
		CHECK_RC(hl_rwlock_unlock(&l), 0);
		CHECK_RC(hl_rwlock_destroy(&l), 0);
	}
	CHECK_RC(hl_config_set(&c0), 0);
	printf("kinds: fair, prefer-reader, prefer-writer, writer-yields: new readers beside "
	       "waiting writers as each promises; a due writer that gives up lets the readers in "
	       "at once\n");
}

/* A reader that cycles read holds of hold_ns until told to stop. */
struct cycler {
	hl_rwlock_t *l;
	int64_t hold_ns;
	atomic_bool stop;
	struct call c;
};

static int cycle_reads(void *p)
{
	struct cycler *r = p;
	while (!atomic_load(&r->stop)) {
		int rc = hl_rwlock_rdlock(r->l);
		if (rc)
			return rc;
		sleep_ns(r->hold_ns);   /* the test is about time: hold this long */
		if ((rc = hl_rwlock_unlock(r->l)))
			return rc;
	}
	return 0;
}

/* Polls tryrdlock every millisecond for up to 3 s; 0 once it got (and gave
 * back) a share. */
static int do_poll_tryrdlock(void *l)
{
	for (int i = 0; i < 3000; i++) {
		int rc = hl_rwlock_tryrdlock(l);
		if (rc != EBUSY)
			return rc ? rc : hl_rwlock_unlock(l);
		sleep_ns(NSEC_PER_MSEC);
	}
	return EBUSY;
}

/* HL_RWLOCK_WRITER_YIELDS (rwlock.h):
 *  - a read holder that waits for another thread's read while a writer
 *    waits (glibc's tst-rwlock16 pattern): the second reader gets in once
 *    the writer's claim reaches its bound (10 ms), long before 2 s;
 *    prefer-writer, whose writer never yields, keeps it out for the whole
 *    200 ms it is given (the contrast that shows the yield at work); the
 *    writer gets the lock after both reads; so does a reader that polls
 *    tryrdlock (the claim stays down for a while: a poller that never
 *    queues gets in too);
 *  - a writer among readers that overlap without a gap, each read hold
 *    (45 ms, 15 ms apart) longer than the first bound: it gets the lock within 2 s (the
 *    bound doubles at each yield until the holds present at a claim drain
 *    within it; with a fixed bound it would never get in). */
static void test_writer_yields(void)
{
	hl_config_t c0, c;
	hl_config_get(&c0);
	c = c0;
	c.rwlock_yield_ns = 10 * NSEC_PER_MSEC;
	CHECK_RC(hl_config_set(&c), 0);
	const int kinds[] = { HL_RWLOCK_WRITER_YIELDS, HL_RWLOCK_PREFER_WRITER };
	for (unsigned ki = 0; ki < 2; ki++) {
		const int k = kinds[ki];
		hl_rwlock_t l;
		struct call w;
		struct holder second;
		CHECK_RC(hl_rwlock_init_kind(&l, k), 0);
		CHECK_RC(hl_rwlock_rdlock(&l), 0);
		call_start(&w, do_wrlock_unlock, &l);
		wait_queued(&l, &w, WR, "writer behind a read hold");
		int64_t t0 = now_ns();
		holder_begin(&second, &l, RD, 0, false);
		bool in = holder_locked_within(&second, k == HL_RWLOCK_WRITER_YIELDS ? 2000 : 200);
		int64_t waited = now_ns() - t0;
		if (k == HL_RWLOCK_WRITER_YIELDS)
			CHECK(in && second.lock_rc == 0, "writer-yields: a second reader, waited for "
			      "by the read holder, not in after %lld ms (rc %d)",
			      (long long)(waited / NSEC_PER_MSEC), second.lock_rc);
		else
			CHECK(!in, "prefer-writer: a second reader got in past the waiting writer "
			      "(the contrast case: its writer never yields)");
		CHECK(!call_done_within(&w, 0), "%s: the writer got in while read-held",
		      lockkind_name(k));
		CHECK_RC(hl_rwlock_unlock(&l), 0);
		if (!in)
			CHECK(holder_locked_within(&second, 10000) && second.lock_rc == 0,
			      "%s: the second reader did not get in after the writer", lockkind_name(k));
		CHECK_RC(holder_finish(&second), 0);
		CHECK(call_join(&w, 10000, "writer") == 0, "%s: the writer returned %d",
		      lockkind_name(k), w.rc);
		CHECK_RC(hl_rwlock_destroy(&l), 0);
		if (k == HL_RWLOCK_WRITER_YIELDS)
			printf("writer-yields: the reader a read holder waited for got in after "
			       "%.1f ms\n", (double)waited / NSEC_PER_MSEC);
	}
	{
		hl_rwlock_t l;
		struct call w, p;
		CHECK_RC(hl_rwlock_init_kind(&l, HL_RWLOCK_WRITER_YIELDS), 0);
		CHECK_RC(hl_rwlock_rdlock(&l), 0);
		call_start(&w, do_wrlock_unlock, &l);
		wait_queued(&l, &w, WR, "writer behind a read hold");
		call_start(&p, do_poll_tryrdlock, &l);
		CHECK(call_join(&p, 10000, "tryrdlock poller") == 0, "writer-yields: a reader "
		      "polling tryrdlock past a waiting writer, waited for by the read holder, "
		      "returned %d", p.rc);
		CHECK(!call_done_within(&w, 0), "writer-yields: the writer got in while read-held");
		CHECK_RC(hl_rwlock_unlock(&l), 0);
		CHECK(call_join(&w, 10000, "writer") == 0, "the writer returned %d", w.rc);
		CHECK_RC(hl_rwlock_destroy(&l), 0);
	}

	enum { NR = 3 };
	hl_rwlock_t l;
	struct cycler r[NR];
	CHECK_RC(hl_rwlock_init_kind(&l, HL_RWLOCK_WRITER_YIELDS), 0);
	for (int i = 0; i < NR; i++) {
		r[i].l = &l;
		r[i].hold_ns = 45 * NSEC_PER_MSEC;
		atomic_store(&r[i].stop, false);
		call_start(&r[i].c, cycle_reads, &r[i]);
		sleep_ns(15 * NSEC_PER_MSEC);   /* staggered: the holds overlap */
	}
	struct call w;
	int64_t t0 = now_ns();
	call_start(&w, do_wrlock_unlock, &l);
	bool in = call_done_within(&w, 2000);
	int64_t waited = now_ns() - t0;
	CHECK(in, "writer-yields: a writer among overlapping 45 ms read holds not in after 2 s");
	for (int i = 0; i < NR; i++)
		atomic_store(&r[i].stop, true);
	CHECK(call_join(&w, 10000, "writer among readers") == 0, "the writer returned %d", w.rc);
	for (int i = 0; i < NR; i++)
		CHECK_RC(call_join(&r[i].c, 10000, "reader"), 0);
	CHECK_RC(hl_rwlock_destroy(&l), 0);
	CHECK_RC(hl_config_set(&c0), 0);
	printf("writer-yields: a writer among overlapping 45 ms read holds got in after %.1f ms\n",
	       (double)waited / NSEC_PER_MSEC);
}

/* Timed-out waiters in the queue must not lose the wake-up of a blocking
 * waiter behind or before them. */
struct timed_arg {
	hl_rwlock_t *l;
	enum kind k;
	int64_t timeout_ns;
	clockid_t clk;
};

static int do_timedlock(void *p)
{
	struct timed_arg *a = p;
	struct timespec ts = deadline_in(a->clk, a->timeout_ns);
	int rc = timedlock_kind(a->l, a->k, a->clk, &ts);
	if (rc == 0)
		hl_rwlock_unlock(a->l);
	return rc;
}

static void test_timeouts_in_queue(void)
{
	hl_rwlock_t l = HL_RWLOCK_INIT;
	enum { NT = 3 };
	/* holder kind, blocking waiter kind: a reader behind a write hold can
	 * only come in at its release; so can a writer behind either. */
	const enum kind cases[][2] = { { WR, RD }, { WR, WR }, { RD, WR } };
	int rounds = 0;

	for (size_t ci = 0; ci < sizeof(cases) / sizeof(cases[0]); ci++)
		for (int order = 0; order < 3; order++) {
			enum kind hk = cases[ci][0], lk = cases[ci][1];
			struct holder h;
			struct call timed[NT], locker;
			struct timed_arg ta[NT];

			holder_start(&h, &l, hk, 0);
			/* order 0: the blocking waiter queued first; 1: last;
			 * 2: in the middle.  The timed waiters are writers when
			 * the lock is read-held (a timed reader would share it),
			 * else alternately readers and writers. */
			for (int i = 0; i < NT; i++) {
				if ((order == 0 && i == 0) || (order == 2 && i == 1)) {
					call_start(&locker, lk == RD ? do_rdlock_unlock
							    : do_wrlock_unlock, &l);
					wait_queued(&l, &locker, lk, "blocking waiter");
				}
				ta[i].l = &l;
				ta[i].k = hk == RD ? WR : (enum kind)(i % 2);
				ta[i].timeout_ns = (20 + 10 * i) * NSEC_PER_MSEC;
				ta[i].clk = i % 2 ? CLOCK_REALTIME : CLOCK_MONOTONIC;
				call_start(&timed[i], do_timedlock, &ta[i]);
				sleep_ns(2 * NSEC_PER_MSEC); /* shapes the order; any order must work */
			}
			if (order == 1)
				call_start(&locker, lk == RD ? do_rdlock_unlock : do_wrlock_unlock, &l);
			for (int i = 0; i < NT; i++) {
				int rc = call_join(&timed[i], 10000, "timed waiter");
				CHECK(rc == ETIMEDOUT, "%s hold, %s waiter, order %d: timed %s waiter %d "
				      "returned %d (%s)", kind_name(hk), kind_name(lk), order,
				      kind_name(ta[i].k), i, rc, strerror(rc));
			}
			CHECK(!call_done_within(&locker, 20), "%s hold, order %d: the %s waiter "
			      "returned while held", kind_name(hk), order, kind_name(lk));
			CHECK_RC(holder_finish(&h), 0);
			CHECK(call_join(&locker, 10000, "blocking waiter behind timed-out waiters") == 0,
			      "%s hold, order %d: the %s waiter returned %d", kind_name(hk), order,
			      kind_name(lk), locker.rc);
			check_holders(&l, 0, 0, "after the timed-out waiters");
			CHECK_RC(hl_rwlock_trywrlock(&l), 0);
			CHECK_RC(hl_rwlock_unlock(&l), 0);
			CHECK_RC(hl_rwlock_destroy(&l), 0);
			rounds++;
		}
	printf("timed-out waiters in the queue: the blocking waiter was woken in %d rounds "
	       "(3 hold/waiter kinds x 3 orders)\n", rounds);
}

int main(void)
{
	printf("test_rwlock_api: no seed (no random choices), %ld CPUs\n", online_cpus());
	test_init_forms();
	test_errors_same_thread();
	test_einval();
	test_cross_thread();
	test_destroy_waited();
	test_downgrade();
	test_describe();
	test_timed();
	test_far_deadlines();
	test_timeouts_in_queue();
	test_recursive_read();
	test_kinds();
	test_writer_yields();
	printf("EAGAIN (HL_RWLOCK_MAX_READERS read holds) not tested: out of reach of a "
	       "black-box test\n");
	return test_finish("test_rwlock_api");
}

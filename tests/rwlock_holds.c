/* SPDX-License-Identifier: MIT */
/* hl_rwlock's read ownership, known exactly (src/holds.h): a read is
 * nested, and passes waiting writers, only in a thread that holds a share
 * of that same lock; a read unlock releases a share of the caller's.
 * Each case failed with the per-thread counters indexed by a hash of the
 * lock's address that came before (issue 37, faults 1-3).
 *
 * Asserts:
 *  1. other locks' shares do not count: three threads each keep a read
 *     share of a long-lived lock A and cycle overlapping reads of a second
 *     lock B (A and B fell in the same counter of the old hash); a writer
 *     of B, in each kind that bounds writers (the default PREFER_WRITER,
 *     FAIR), gets B within 2 s (before: it timed out, 5 of 5 runs);
 *  2. a read unlock by a thread that holds no share of the lock: EPERM, and
 *     the lock stays read-held by its holder, whose unlock then returns 0;
 *     one by a thread that holds a share of another lock: EPERM too;
 *     a thread's second unlock of one share: EPERM;
 *  3. a signal handler's nested read is recognised wherever the signal
 *     lands: a reader thread, L's only reader, cycles timedrdlock/unlock
 *     of L; a writer cycles timedwrlock/unlock of L; the main thread sends
 *     the reader SIGUSR1 every 10-50 us, and the handler, when it finds L
 *     read-held (so by its own thread), takes a nested read with
 *     tryrdlock, which must be granted whatever waits (a refusal is where
 *     rdlock would queue behind the writer that waits for the interrupted
 *     share: a deadlock; the hash design refused the reads that came
 *     between a share's CAS and its count, or between the count's drop
 *     and the release);
 *  4. past the table's capacity (8 locks): a thread read-holds 12 locks at
 *     once, nests a read of each while a writer waits on it (no deadlock:
 *     the untracked shares count as nested for every lock), then releases
 *     everything (every unlock 0); then an unlock of a lock it no longer
 *     holds is EPERM again, and writers get every lock.
 *  5. fork (issue 37, fault 6): a lock whose word holds only flags of
 *     another fork generation (a fork parent's waiter, which does not
 *     exist here) is free for every call: trywrlock, tryrdlock, wrlock,
 *     destroy (before, trywrlock alone said EBUSY).
 * A thread that does not finish is reported after 10 s; the phase alarm
 * (45 s) catches a main thread stuck in a call. */
#include "common.h"

#include <hotlock/rwlock.h>

#include "thread.h"     /* hl__fork_gen: test 5 */

#include <pthread.h>
#include <stdatomic.h>

#define HANG_NS (10 * NSEC_PER_SEC)

static int timed_rd(hl_rwlock_t *l, int64_t rel_ns)
{
	struct timespec dl = deadline_in(CLOCK_MONOTONIC, rel_ns);
	return hl_rwlock_timedrdlock(l, CLOCK_MONOTONIC, &dl);
}

static int timed_wr(hl_rwlock_t *l, int64_t rel_ns)
{
	struct timespec dl = deadline_in(CLOCK_MONOTONIC, rel_ns);
	return hl_rwlock_timedwrlock(l, CLOCK_MONOTONIC, &dl);
}

static void join_or_hang(pthread_t t, const char *what)
{
	struct timespec dl = deadline_in(CLOCK_REALTIME, HANG_NS);
	REQUIRE(pthread_timedjoin_np(t, NULL, &dl) == 0, "%s did not finish in 10 s", what);
}

/* ---- 1. other locks' shares do not count ---- */

/* The counter of the hash design that came before (64 counters): the test
 * picks A and B in the same one, so that it failed there. */
static unsigned old_slot(const void *p)
{
	uint32_t a = (uint32_t)((uintptr_t)p >> 4);
	return (a * 0x9e3779b1u) >> 26;
}

#define CYCLERS 3
struct other_locks {
	hl_rwlock_t *a, *b;
	_Atomic bool stop;
	_Atomic int ready;
};

static void *cycler(void *p)
{
	struct other_locks *o = p;
	CHECK_RC(hl_rwlock_rdlock(o->a), 0);    /* kept for the whole run */
	atomic_fetch_add(&o->ready, 1);
	while (!atomic_load(&o->stop)) {
		if (timed_rd(o->b, 3 * NSEC_PER_SEC) != 0)
			continue;       /* waited behind the writer: fine */
		for (int i = 0; i < 2000; i++)
			test_cpu_relax();
		CHECK_RC(hl_rwlock_unlock(o->b), 0);
	}
	CHECK_RC(hl_rwlock_unlock(o->a), 0);
	return NULL;
}

static void test_other_locks(int kind, const char *kind_name)
{
	static hl_rwlock_t locks[256];
	int ia = 0, ib = -1;
	for (int i = 1; i < 256 && ib < 0; i++)
		if (old_slot(&locks[i]) == old_slot(&locks[ia]))
			ib = i;
	REQUIRE(ib > 0, "no two of 256 locks in the same counter of the old hash");
	struct other_locks o = { &locks[ia], &locks[ib], false, 0 };
	REQUIRE(hl_rwlock_init_kind(o.a, kind) == 0 && hl_rwlock_init_kind(o.b, kind) == 0,
		"hl_rwlock_init_kind");
	pthread_t t[CYCLERS];
	for (int i = 0; i < CYCLERS; i++)
		REQUIRE(pthread_create(&t[i], NULL, cycler, &o) == 0, "pthread_create");
	while (atomic_load(&o.ready) < CYCLERS)
		sleep_ns(NSEC_PER_MSEC);
	sleep_ns(20 * NSEC_PER_MSEC);   /* the reads of B overlap by now */
	int64_t start = now_ns();
	int rc = timed_wr(o.b, 2 * NSEC_PER_SEC);
	int64_t waited = now_ns() - start;
	if (rc == 0)
		CHECK_RC(hl_rwlock_unlock(o.b), 0);
	atomic_store(&o.stop, true);
	for (int i = 0; i < CYCLERS; i++)
		join_or_hang(t[i], "a reader of B");
	CHECK(rc == 0, "%s: a writer of B waited %.0f ms and got %d while %d threads held "
	      "A for reading and cycled reads of B (another lock's shares taken as B's)",
	      kind_name, (double)waited / NSEC_PER_MSEC, rc, CYCLERS);
	printf("other locks' shares (%s): the writer of B waited %.2f ms (%s) beside %d "
	       "readers of A cycling reads of B\n", kind_name, (double)waited / NSEC_PER_MSEC,
	       rc ? "timed out" : "got it", CYCLERS);
	CHECK_RC(hl_rwlock_destroy(o.a), 0);
	CHECK_RC(hl_rwlock_destroy(o.b), 0);
}

/* ---- 2. a read unlock releases a share of the caller's ---- */

struct holder {
	hl_rwlock_t *l;
	_Atomic int step;       /* 1: holds it; 2: release */
	int rc;
};

static void *read_holder(void *p)
{
	struct holder *h = p;
	CHECK_RC(hl_rwlock_rdlock(h->l), 0);
	atomic_store(&h->step, 1);
	while (atomic_load(&h->step) != 2)
		sleep_ns(100 * 1000);
	h->rc = hl_rwlock_unlock(h->l);
	return NULL;
}

static void test_foreign_unlock(void)
{
	hl_rwlock_t l = HL_RWLOCK_INIT, other = HL_RWLOCK_INIT;
	struct holder h = { &l, 0, -1 };
	pthread_t t;
	REQUIRE(pthread_create(&t, NULL, read_holder, &h) == 0, "pthread_create");
	while (atomic_load(&h.step) != 1)
		sleep_ns(100 * 1000);
	CHECK_RC(hl_rwlock_unlock(&l), EPERM);          /* a share of another's */
	CHECK_RC(hl_rwlock_rdlock(&other), 0);
	CHECK_RC(hl_rwlock_unlock(&l), EPERM);          /* holding another lock */
	uint32_t w = 1, r = 0;
	hl_rwlock_holders(&l, &w, &r);
	CHECK(w == 0 && r == 1, "after refused unlocks: writer %u, %u readers (want 0, 1)", w, r);
	CHECK_RC(hl_rwlock_rdlock(&l), 0);              /* our own share */
	CHECK_RC(hl_rwlock_unlock(&l), 0);
	CHECK_RC(hl_rwlock_unlock(&l), EPERM);          /* and no second */
	atomic_store(&h.step, 2);
	join_or_hang(t, "the read holder");
	CHECK(h.rc == 0, "the holder's unlock returned %d", h.rc);
	CHECK_RC(hl_rwlock_unlock(&other), 0);
	CHECK_RC(hl_rwlock_destroy(&l), 0);
	printf("foreign read unlock: EPERM, the holder's share kept\n");
}

/* ---- 3. a signal handler's nested read ---- */

static hl_rwlock_t sig_l = HL_RWLOCK_INIT;
static _Atomic long handler_nested, handler_refused, handler_skipped;
static _Atomic bool sig_stop;

/* The reader thread is L's only reader: when the handler finds L
 * read-held, the share is its own thread's, so its read is nested and must
 * be granted whatever waits (a tryrdlock, so that a refusal is counted
 * where a rdlock would deadlock: queued behind the writer, which waits for
 * the interrupted share).  With L not read-held it reads nothing: a read
 * then may have to wait, and a read in a handler that interrupted its
 * thread's own wait for L, or its own release in progress, is outside
 * what POSIX allows. */
static void nested_handler(int sig)
{
	(void)sig;
	int saved = errno;
	uint32_t w, r;
	hl_rwlock_holders(&sig_l, &w, &r);
	if (r == 0) {
		atomic_fetch_add(&handler_skipped, 1);
	} else if (hl_rwlock_tryrdlock(&sig_l) == 0) {
		hl_rwlock_unlock(&sig_l);
		atomic_fetch_add(&handler_nested, 1);
	} else {
		atomic_fetch_add(&handler_refused, 1);
	}
	errno = saved;
}

static void *sig_reader(void *p)
{
	(void)p;
	while (!atomic_load(&sig_stop)) {
		struct timespec dl = deadline_in(CLOCK_MONOTONIC, 100 * NSEC_PER_MSEC);
		if (hl_rwlock_timedrdlock(&sig_l, CLOCK_MONOTONIC, &dl) != 0)
			continue;
		for (int i = 0; i < 20; i++)
			test_cpu_relax();
		CHECK_RC(hl_rwlock_unlock(&sig_l), 0);
	}
	return NULL;
}

static void *sig_writer(void *p)
{
	(void)p;
	while (!atomic_load(&sig_stop)) {
		if (timed_wr(&sig_l, 50 * NSEC_PER_MSEC) == 0) {
			for (int i = 0; i < 20; i++)
				test_cpu_relax();
			CHECK_RC(hl_rwlock_unlock(&sig_l), 0);
		}
	}
	return NULL;
}

static void test_signal_nested(void)
{
	struct sigaction sa = { 0 };
	sa.sa_handler = nested_handler;
	sigemptyset(&sa.sa_mask);
	REQUIRE(sigaction(SIGUSR1, &sa, NULL) == 0, "sigaction");
	pthread_t reader, writer;
	REQUIRE(pthread_create(&reader, NULL, sig_reader, NULL) == 0, "pthread_create");
	REQUIRE(pthread_create(&writer, NULL, sig_writer, NULL) == 0, "pthread_create");
	long sent = 0;
	int64_t end = now_ns() + 1500 * NSEC_PER_MSEC;
	unsigned x = 12345;
	while (now_ns() < end) {
		pthread_kill(reader, SIGUSR1);
		sent++;
		x = x * 1103515245u + 12345u;
		sleep_ns(10000 + (x >> 16) % 40000);
	}
	atomic_store(&sig_stop, true);
	join_or_hang(reader, "the reader");
	join_or_hang(writer, "the writer");
	printf("signal handler's nested reads: %ld signals; with L read-held by the "
	       "interrupted thread, %ld nested reads granted, %ld refused; %ld with L not "
	       "read-held\n", sent, atomic_load(&handler_nested), atomic_load(&handler_refused),
	       atomic_load(&handler_skipped));
	CHECK(atomic_load(&handler_refused) == 0, "%ld of a signal handler's reads of a lock its "
	      "thread held for reading were refused (a rdlock would have queued behind the "
	      "writer that waits for that share: a deadlock)", atomic_load(&handler_refused));
	/* ThreadSanitizer holds a signal back until its thread calls into
	 * an interceptor, which the reader does not do while it holds L. */
	if (!TEST_TSAN)
		CHECK(atomic_load(&handler_nested) > 0, "no signal found the lock read-held");
	CHECK_RC(hl_rwlock_destroy(&sig_l), 0);
}

/* ---- 4. past the table's capacity ---- */

#define MANY 12

struct many {
	hl_rwlock_t l[MANY];
	_Atomic int writers_done;
};

static void *many_writer(void *p)
{
	hl_rwlock_t *l = p;
	CHECK_RC(timed_wr(l, 10 * NSEC_PER_SEC), 0);
	CHECK_RC(hl_rwlock_unlock(l), 0);
	return NULL;
}

static void test_capacity(void)
{
	static struct many m;
	for (int i = 0; i < MANY; i++)
		hl_rwlock_init(&m.l[i]);
	for (int i = 0; i < MANY; i++)
		CHECK_RC(hl_rwlock_rdlock(&m.l[i]), 0);
	/* A writer waits on each: new readers without a share queue. */
	pthread_t w[MANY];
	for (int i = 0; i < MANY; i++)
		REQUIRE(pthread_create(&w[i], NULL, many_writer, &m.l[i]) == 0, "pthread_create");
	sleep_ns(30 * NSEC_PER_MSEC);
	for (int i = 0; i < MANY; i++) {
		int rc = timed_rd(&m.l[i], 2 * NSEC_PER_SEC);
		CHECK(rc == 0, "lock %d of %d read-held: a nested read with a writer waiting "
		      "returned %d", i + 1, MANY, rc);
		if (rc == 0)
			CHECK_RC(hl_rwlock_unlock(&m.l[i]), 0);
	}
	for (int i = 0; i < MANY; i++)
		CHECK_RC(hl_rwlock_unlock(&m.l[i]), 0);
	for (int i = 0; i < MANY; i++)
		join_or_hang(w[i], "a writer");
	CHECK_RC(hl_rwlock_unlock(&m.l[0]), EPERM);
	CHECK_RC(hl_rwlock_unlock(&m.l[MANY - 1]), EPERM);
	for (int i = 0; i < MANY; i++)
		CHECK_RC(hl_rwlock_destroy(&m.l[i]), 0);
	printf("capacity: %d locks read-held at once, each nested past its waiting writer\n",
	       MANY);
}

/* ---- 5. a fork parent's flags ---- */

/* The word of a lock left by a fork parent whose queue head had set its
 * flags: WAKE and HANDOFF of another generation, no holder (thread.h's
 * generations; rwlock.c's layout: GEN in bits 22-29, WAKE 30, HANDOFF 31). */
static void stale_flags(hl_rwlock_t *l)
{
	hl_rwlock_init(l);
	uint64_t gen = (hl__fork_gen() + 1u) & 0xffu;
	l->state_ = (1ull << 30) | (1ull << 31) | gen << 22;
}

static void test_fork_flags(void)
{
	hl_rwlock_t l;
	stale_flags(&l);
	CHECK_RC(hl_rwlock_trywrlock(&l), 0);
	CHECK_RC(hl_rwlock_unlock(&l), 0);
	stale_flags(&l);
	CHECK_RC(hl_rwlock_tryrdlock(&l), 0);
	CHECK_RC(hl_rwlock_unlock(&l), 0);
	stale_flags(&l);
	CHECK_RC(hl_rwlock_wrlock(&l), 0);
	CHECK_RC(hl_rwlock_unlock(&l), 0);
	stale_flags(&l);
	CHECK_RC(hl_rwlock_destroy(&l), 0);
	printf("a fork parent's flags: free for trywrlock, tryrdlock, wrlock and destroy\n");
}

int main(void)
{
	printf("test_rwlock_holds%s\n", HOTLOCK_SANITIZED ? ": sanitizer build" : "");
	set_phase("test_other_locks");
	test_other_locks(HL_RWLOCK_PREFER_WRITER, "prefer-writer");
	test_other_locks(HL_RWLOCK_FAIR, "fair");
	set_phase("test_foreign_unlock");
	test_foreign_unlock();
	set_phase("test_signal_nested");
	test_signal_nested();
	set_phase("test_capacity");
	test_capacity();
	set_phase("test_fork_flags");
	test_fork_flags();
	alarm(0);
	return test_finish("test_rwlock_holds");
}

/* SPDX-License-Identifier: MIT */
/* hotlock-bench adapters: ww-rw and ww-rw-writer, the classic wait-wake
 * futex reader-writer lock (what the TP-futex seed calls "WW futex"): the
 * readers and writers, holding and waiting, counted in one 32-bit word, and
 * two futex event counters, one the readers sleep on and one the writers
 * sleep on.  One implementation; a flag set by init picks the preference.
 * The futex calls go through hl_futex_wait/hl_futex_wake, so hl_futex_stats
 * counts them.
 *
 * The state word:
 *
 *   bits   field  meaning
 *   0-10   R      readers holding the lock (0 to 2047)
 *   11-20  RW     readers waiting: registered, asleep or about to be
 *   21-30  WW     writers waiting, the same
 *   31     W      a writer holds the lock
 *
 * A thread is in at most one field, so with BENCH_MAX_THREADS threads R
 * needs 11 bits, and RW and WW, which never hold every thread (someone holds
 * the lock or waits as a writer), 10 (static_asserts below).
 *
 *   state                 meaning
 *   0                     free, nobody waits
 *   R=n                   held by n readers
 *   W                     held by a writer
 *   W, RW=a, WW=b         held by a writer; a readers and b writers wait
 *   R=n, WW=b             held by readers; writers wait (for R to reach 0)
 *   R=n, RW=a, WW=b       writer-preferring only: readers arrived after a
 *                         writer began to wait, and wait behind it
 *   R=0, W=0, RW or WW>0  between an unlock and the wake-up it caused
 *
 * Who may enter:
 *   a reader  when W = 0, and (writer-preferring) WW = 0;
 *   a writer  when W = 0 and R = 0.
 *
 * Lock (reader or writer):
 *   1. CAS the word: enter (R+1, or set W) if we may; else register (RW+1
 *      or WW+1).  A failed CAS re-reads the word and decides again.
 *   2. Registered: read our side's event counter, then the word.  If we
 *      may enter now, CAS: unregister and enter in one step, done.
 *   3. Else futex_wait(counter, the value read in 2); on any return go to 2.
 *      We stay registered while we sleep and retry.
 * Unlock:
 *   reader  R-1.  If that made R 0 and writers wait: wake one writer.
 *   writer  clear W.  Then, reader-preferring: readers wait? wake them all,
 *           else writers wait? wake one.  Writer-preferring: writers wait?
 *           wake one, else readers wait? wake them all.
 *   To wake a side: increment its event counter, then futex_wake it.
 *
 * No lost wake-up: a waiter registers in the word (step 1) before it reads
 * the counter (step 2), and reads the counter before it reads the word; an
 * unlocker changes the word before it increments the counter.  Both change
 * the word by read-modify-writes, which are totally ordered: an unlock after
 * the registration sees it and increments the counter.  If the waiter read
 * the counter before that increment, its futex_wait returns at once (the
 * kernel compares the counter) or is woken by the wake that follows; if it
 * read the incremented counter, the release increment / acquire read make
 * it see the unlocked word in step 2, and it enters without sleeping (or
 * finds the lock taken again, by someone whose unlock will wake it).  Every
 * change that lets a waiter in is an unlock that wakes its side, except one:
 * a reader-preferring writer unlock that finds readers and writers waiting
 * wakes the readers only; the writers are woken by the unlock of the last
 * of those readers (or by a writer who took the lock before them).
 *
 * Not fair either way: newcomers take the lock ahead of woken waiters, and
 * the preferred side can starve the other (the seed's point).  The counters
 * wrap at 2^32: a waiter that sleeps through exactly 2^32 wake-ups of its
 * side would miss one, as in every event-counter futex design. */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <hotlock/futex.h>

#include "futex_word.h"
#include "harness.h"
#include "rwlocks.h"

#define WW_R1           (1u << 0)
#define WW_R_MASK       (0x7ffu << 0)
#define WW_RW1          (1u << 11)
#define WW_RW_MASK      (0x3ffu << 11)
#define WW_WW1          (1u << 21)
#define WW_WW_MASK      (0x3ffu << 21)
#define WW_W            (1u << 31)

_Static_assert(BENCH_MAX_THREADS <= WW_R_MASK / WW_R1,
	       "R holds every thread of a run");
_Static_assert(BENCH_MAX_THREADS - 1 <= WW_RW_MASK / WW_RW1 &&
	       BENCH_MAX_THREADS - 1 <= WW_WW_MASK / WW_WW1,
	       "RW and WW hold every thread but one");

struct ww_rw {
	_Atomic uint32_t state;
	_Atomic uint32_t rseq;  /* readers' event counter: they sleep here */
	_Atomic uint32_t wseq;  /* writers' event counter */
	/* Set by init before the run's threads start (pthread_create orders
	 * it); read plainly after. */
	bool prefer_writer;
};

static bool reader_may_enter(const struct ww_rw *l, uint32_t s)
{
	return !(s & WW_W) && !(l->prefer_writer && (s & WW_WW_MASK));
}

static bool writer_may_enter(uint32_t s)
{
	return !(s & (WW_W | WW_R_MASK));
}

static int ww_init_pref(void *p, bool prefer_writer)
{
	struct ww_rw *l = p;

	atomic_init(&l->state, 0);
	atomic_init(&l->rseq, 0);
	atomic_init(&l->wseq, 0);
	l->prefer_writer = prefer_writer;
	return 0;
}

static int ww_init(void *p)
{
	return ww_init_pref(p, false);
}

static int ww_writer_init(void *p)
{
	return ww_init_pref(p, true);
}

static int ww_destroy(void *p)
{
	struct ww_rw *l = p;

	/* relaxed: the run's threads are joined; join orders their writes. */
	return atomic_load_explicit(&l->state, memory_order_relaxed) ? EBUSY : 0;
}

/* Wakes one side: increment its counter, then wake n of its sleepers.
 * release: the unlock's change of the word (before this in program order)
 * is seen by a waiter whose acquire read of the counter (ww_wait) returns
 * the incremented value. */
static void ww_wake(_Atomic uint32_t *seq, int n)
{
	atomic_fetch_add_explicit(seq, 1, memory_order_release);
	(void)hl_futex_wake(futex_word(seq), n); /* returns how many it woke */
}

/* Leaves the waiters without entering, after a futex error that waiting
 * again would not cure (none is expected: no timeout, a valid address).
 * Whatever wake-up we may have taken is passed on: whichever side waits and
 * may enter now is woken (writer-preferring, the last waiting writer to
 * leave lets in the readers it held back). */
static void ww_unregister(struct ww_rw *l, uint32_t one)
{
	/* relaxed: we leave; nothing we wrote is published by this. */
	uint32_t s = atomic_fetch_sub_explicit(&l->state, one, memory_order_relaxed) - one;

	if ((s & WW_WW_MASK) && writer_may_enter(s))
		ww_wake(&l->wseq, 1);
	if ((s & WW_RW_MASK) && reader_may_enter(l, s))
		ww_wake(&l->rseq, INT_MAX);
}

/* A side's bits: the count it adds to enter, the one it adds to wait, and
 * the event counter it sleeps on. */
struct ww_side {
	uint32_t enter, wait;
	_Atomic uint32_t *seq;
};

static bool may_enter(const struct ww_rw *l, uint32_t s, bool reader)
{
	return reader ? reader_may_enter(l, s) : writer_may_enter(s);
}

/* Steps 2-3 for a registered waiter. */
static int ww_wait(struct ww_rw *l, bool reader, const struct ww_side *side)
{
	for (;;) {
		/* acquire: pairs with the release increment in ww_wake, so the
		 * read of the word below sees the unlock that came before the
		 * increment, if we read the incremented value. */
		uint32_t v = atomic_load_explicit(side->seq, memory_order_acquire);
		/* relaxed: only decides; the CAS below re-checks it. */
		uint32_t s = atomic_load_explicit(&l->state, memory_order_relaxed);
		int err;

		while (may_enter(l, s, reader)) {
			/* acquire on success: pairs with the release of the
			 * last unlock, whose critical section happens before
			 * ours.  relaxed on failure: s is decided on again. */
			if (atomic_compare_exchange_weak_explicit(&l->state, &s,
								  s - side->wait + side->enter,
								  memory_order_acquire,
								  memory_order_relaxed))
				return 0;
		}
		err = hl_futex_wait(futex_word(side->seq), v, CLOCK_MONOTONIC, NULL);
		if (err && err != EAGAIN && err != EINTR) {
			ww_unregister(l, side->wait);
			return err;
		}
	}
}

/* Step 1, then the wait if we registered. */
static int ww_lock(struct ww_rw *l, bool reader)
{
	const struct ww_side side = {
		.enter = reader ? WW_R1 : WW_W,
		.wait = reader ? WW_RW1 : WW_WW1,
		.seq = reader ? &l->rseq : &l->wseq,
	};
	/* relaxed: only decides; the CAS below re-checks it. */
	uint32_t s = atomic_load_explicit(&l->state, memory_order_relaxed);

	for (;;) {
		if (may_enter(l, s, reader)) {
			/* acquire on success: pairs with the release of the
			 * last unlock (for a reader, a writer's), whose
			 * critical section happens before ours.  relaxed on
			 * failure: s is decided on again.  (A writer enters
			 * where W is clear, so + W sets it.) */
			if (atomic_compare_exchange_weak_explicit(&l->state, &s,
								  s + side.enter,
								  memory_order_acquire,
								  memory_order_relaxed))
				return 0;
		} else if (atomic_compare_exchange_weak_explicit(&l->state, &s,
								 s + side.wait,
								 memory_order_relaxed,
								 memory_order_relaxed)) {
			/* relaxed: registering publishes nothing; the unlock
			 * that wakes us finds it by its own read-modify-write
			 * of the word, which follows ours in its order. */
			return ww_wait(l, reader, &side);
		}
	}
}

static int ww_rdlock(void *p)
{
	return ww_lock(p, true);
}

static int ww_wrlock(void *p)
{
	return ww_lock(p, false);
}

static int ww_rdunlock(void *p)
{
	struct ww_rw *l = p;
	/* release: pairs with the acquire of the next writer to enter, so our
	 * critical section happens before its. */
	uint32_t s = atomic_fetch_sub_explicit(&l->state, WW_R1, memory_order_release);

	if (!(s & WW_R_MASK)) {
		/* Not read-held: the decrement borrowed from RW; undo it
		 * (others may glimpse the borrow: misuse, which the
		 * benchmark never commits, is reported, not made safe).
		 * relaxed: it publishes nothing. */
		atomic_fetch_add_explicit(&l->state, WW_R1, memory_order_relaxed);
		return EPERM;
	}
	if ((s & WW_R_MASK) == WW_R1 && (s & WW_WW_MASK))
		ww_wake(&l->wseq, 1);
	return 0;
}

static int ww_wrunlock(void *p)
{
	struct ww_rw *l = p;
	/* release: pairs with the acquire of the next reader or writer to
	 * enter.  Clearing a bit that is clear changes nothing. */
	uint32_t s = atomic_fetch_and_explicit(&l->state, ~WW_W, memory_order_release);

	if (!(s & WW_W))
		return EPERM;
	if (l->prefer_writer ? !(s & WW_WW_MASK) && (s & WW_RW_MASK) : (s & WW_RW_MASK) != 0)
		ww_wake(&l->rseq, INT_MAX);
	else if (s & WW_WW_MASK)
		ww_wake(&l->wseq, 1);
	return 0;
}

static int ww_describe(const void *p, char *buf, size_t len)
{
	const struct ww_rw *l = p;
	/* relaxed: a snapshot for a report; the fields may be moving. */
	uint32_t s = atomic_load_explicit(&l->state, memory_order_relaxed);

	snprintf(buf, len, "state=%#x (W=%u R=%u readers-waiting=%u writers-waiting=%u) "
		 "rseq=%u wseq=%u %s-preferring", s, s >> 31, s & WW_R_MASK,
		 (s & WW_RW_MASK) / WW_RW1, (s & WW_WW_MASK) / WW_WW1,
		 atomic_load_explicit(&l->rseq, memory_order_relaxed),
		 atomic_load_explicit(&l->wseq, memory_order_relaxed),
		 l->prefer_writer ? "writer" : "reader");
	return 0;
}

/* The two adapters differ in their name and preference only. */
#define WW_ADAPTER(name_, summary_, init_) {			\
	.name = name_,						\
	.summary = summary_,					\
	.size = sizeof(struct ww_rw),				\
	.init = init_,						\
	.destroy = ww_destroy,					\
	.rdlock = ww_rdlock,					\
	.wrlock = ww_wrlock,					\
	.rdunlock = ww_rdunlock,				\
	.wrunlock = ww_wrunlock,				\
	.describe = ww_describe,				\
	.futex_counted = true,					\
}

const struct bench_rwlock bench_rwlock_ww = WW_ADAPTER("ww-rw",
	"wait-wake futex rwlock (the seed's WW futex), prefers readers",
	ww_init);

const struct bench_rwlock bench_rwlock_ww_writer = WW_ADAPTER("ww-rw-writer",
	"wait-wake futex rwlock (the seed's WW futex), prefers writers",
	ww_writer_init);

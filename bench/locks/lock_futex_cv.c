/* SPDX-License-Identifier: MIT */
/* hotlock-bench adapter: futex-cv, the classic "wake them all and let them
 * re-lock" futex condition variable, with the futex3 mutex adapter (the
 * three-state mutex of locks/lock_futex3.c).  A baseline: the condvar of
 * many hand-written futex libraries, and of glibc before 2.25 in spirit.
 * The futex calls go through hl_futex_wait/hl_futex_wake, so hl_futex_stats
 * counts them, the mutex's too.
 *
 *   word  meaning
 *   seq   a sequence number, bumped by every signal and broadcast
 *
 * wait(m):   1. old = seq (m is held).
 *            2. Unlock m.
 *            3. futex_wait(seq, old): sleeps unless seq changed since 1,
 *               in which case the kernel's compare returns at once
 *               (EAGAIN), so a signal between 2 and 3 is not lost.
 *            4. Lock m; return (the caller tests its predicate again:
 *               every woken thread returns, whether or not the signal was
 *               meant for it).
 * signal:    seq += 1, then futex_wake(seq, 1).
 * broadcast: seq += 1, then futex_wake(seq, INT_MAX): every waiter wakes
 *            and contends for m, where all but one sleep again.
 * There is no waiter count: every signal and broadcast makes its futex_wake
 * call, waiters or not, as the textbook version does. */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>

#include <hotlock/futex.h>

#include "conds.h"
#include "futex_word.h"

struct futex_cv {
	_Atomic uint32_t seq;
};

static int futex_cv_init(void *c)
{
	struct futex_cv *cv = c;

	atomic_init(&cv->seq, 0);
	return 0;
}

static int futex_cv_destroy(void *c)
{
	(void)c; /* nothing to check: the condvar does not know its waiters */
	return 0;
}

static int futex_cv_wait(void *c, void *m)
{
	struct futex_cv *cv = c;
	/* relaxed: m orders this load against a signaller's change of the
	 * predicate and its increment (made under m, or after it took m
	 * following our unlock); the kernel's compare in futex_wait sees any
	 * increment made since. */
	uint32_t old = atomic_load_explicit(&cv->seq, memory_order_relaxed);
	int err = bench_lock_futex3.unlock(m), lock_err;

	if (err)
		return err;
	err = hl_futex_wait(futex_word(&cv->seq), old, CLOCK_MONOTONIC, NULL);
	if (err == EAGAIN || err == EINTR)
		err = 0;
	/* Retaken whatever the wait returned: the caller expects m held. */
	lock_err = bench_lock_futex3.lock(m);
	return lock_err ? lock_err : err;
}

/* Bumps seq and wakes up to n waiters. */
static int futex_cv_wake(struct futex_cv *cv, int n)
{
	/* relaxed: the waiters' load is ordered by the mutex (see wait); the
	 * futex syscalls order the kernel's compare against this store. */
	atomic_fetch_add_explicit(&cv->seq, 1, memory_order_relaxed);
	(void)hl_futex_wake(futex_word(&cv->seq), n); /* returns how many it woke */
	return 0;
}

static int futex_cv_signal(void *c)
{
	return futex_cv_wake(c, 1);
}

static int futex_cv_broadcast(void *c)
{
	return futex_cv_wake(c, INT_MAX);
}

const struct bench_cond bench_cond_futex_cv = {
	.name = "futex-cv",
	.summary = "sequence-word futex condvar (wake all, re-lock) with the futex3 mutex, counted futex calls",
	.mutex = &bench_lock_futex3,
	.size = sizeof(struct futex_cv),
	.init = futex_cv_init,
	.destroy = futex_cv_destroy,
	.wait = futex_cv_wait,
	.signal = futex_cv_signal,
	.broadcast = futex_cv_broadcast,
	.futex_counted = true,
};

/* SPDX-License-Identifier: MIT */
/* hotlock-bench adapter: futex3, the classic three-state futex mutex
 * ("mutex3" in Ulrich Drepper, "Futexes Are Tricky", 2011), the design
 * glibc's own normal mutex descends from.  The futex calls go through
 * hl_futex_wait/hl_futex_wake, so hl_futex_stats counts them.
 *
 *   word  meaning
 *   0     free
 *   1     locked, no waiter
 *   2     locked, maybe waiters (a thread sets 2 before it sleeps)
 *
 * lock:   1. CAS 0 -> 1.  Success: ours, no syscall.
 *         2. Else swap in 2 (unless the word already was 2): an old 0 means
 *            the lock is ours, marked contended as a precaution.
 *         3. While the swap returned non-zero: futex_wait(word, 2), then
 *            swap in 2 again.  The kernel compares the word with 2 and
 *            queues the thread atomically, so an unlock between our swap
 *            and our wait makes the wait return at once (EAGAIN).
 * unlock: 1. Decrement.  Old value 1: nobody waits, done.
 *         2. Old value 2: store 0 and wake one waiter, which swaps in 2
 *            again on its way in, so the waiters left behind are not
 *            forgotten.
 * Unfair and herd-free: each unlock wakes at most one thread, but a
 * running thread may take the lock before the woken one runs. */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>

#include <hotlock/futex.h>

#include "futex_word.h"
#include "locks.h"

struct futex3 {
	_Atomic uint32_t word;
};

static int futex3_init(void *l)
{
	struct futex3 *f = l;

	atomic_init(&f->word, 0);
	return 0;
}

static int futex3_destroy(void *l)
{
	struct futex3 *f = l;

	/* relaxed: the run's threads are joined; join orders their writes. */
	return atomic_load_explicit(&f->word, memory_order_relaxed) ? EBUSY : 0;
}

static int futex3_lock(void *l)
{
	struct futex3 *f = l;
	uint32_t c = 0;

	/* acquire on success: pairs with the release in futex3_unlock, so
	 * the previous owner's critical section happens before ours.
	 * relaxed on failure: c is only used to pick the slow path. */
	if (atomic_compare_exchange_strong_explicit(&f->word, &c, 1,
						    memory_order_acquire,
						    memory_order_relaxed))
		return 0;
	/* acquire: pairs with the unlock's release, when the swap returns 0
	 * and the lock is ours (same for the swap in the loop). */
	if (c != 2)
		c = atomic_exchange_explicit(&f->word, 2, memory_order_acquire);
	while (c != 0) {
		int err = hl_futex_wait(futex_word(&f->word), 2, CLOCK_MONOTONIC, NULL);

		if (err && err != EAGAIN && err != EINTR)
			return err;
		c = atomic_exchange_explicit(&f->word, 2, memory_order_acquire);
	}
	return 0;
}

static int futex3_unlock(void *l)
{
	struct futex3 *f = l;
	uint32_t old;

	/* release: pairs with the acquire CAS or swap of the next owner. */
	old = atomic_fetch_sub_explicit(&f->word, 1, memory_order_release);
	if (old == 1)
		return 0;
	if (old != 2)
		return EPERM; /* was not locked */
	/* release: as above, for a next owner that swaps 0 out.  The wake
	 * needs no fence of its own: a waiter either saw this 0 in the
	 * kernel's compare (and does not sleep) or is queued and woken. */
	atomic_store_explicit(&f->word, 0, memory_order_release);
	(void)hl_futex_wake(futex_word(&f->word), 1); /* returns how many it woke */
	return 0;
}

const struct bench_lock bench_lock_futex3 = {
	.name = "futex3",
	.summary = "three-state futex mutex (Drepper's mutex3), counted futex calls",
	.size = sizeof(struct futex3),
	.init = futex3_init,
	.destroy = futex3_destroy,
	.lock = futex3_lock,
	.unlock = futex3_unlock,
	.futex_counted = true,
};

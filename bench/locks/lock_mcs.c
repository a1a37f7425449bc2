/* SPDX-License-Identifier: MIT */
/* hotlock-bench adapter: mcs, a spinning MCS queue lock, the userspace analog
 * of the kernel's "stock" qspinlock slow path (kernel/locking/mcs_spinlock.h).
 * Each waiter spins with a pause instruction on a flag in its own queue node
 * and never parks, so it is fair (FIFO) and cache-friendly when every thread
 * has a CPU, and collapses when threads outnumber CPUs: the lock is handed to
 * a waiter that may not be running, and the others burn their time slices
 * spinning behind it.  It makes no syscalls (its futex counters read 0).
 *
 *   lock->tail   last node in the queue, NULL when the lock is free
 *   node->next   the waiter behind this one, NULL until it links in
 *   node->locked 0 while waiting, 1 once the predecessor handed over
 *
 * lock:   1. Reset our node, then swap it into tail.
 *         2. Old tail NULL: the lock is ours.
 *         3. Else link in behind it (prev->next = node) and spin until
 *            node->locked becomes 1.
 * unlock: 1. No successor linked yet: CAS tail from our node to NULL; if that
 *            works, the lock is free.  Else a successor has swapped itself
 *            into tail but not yet linked in: spin until node->next is set.
 *         2. Hand over: successor->locked = 1.
 *
 * The queue node is thread-local (one per thread, on its own cache line), so
 * a thread may hold or wait for one mcs lock at a time, which is what the
 * scenarios do.  After unlock nobody refers to the node any more: the
 * successor, if any, was read in step 1, and it never touches our node. */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

#include "harness.h"
#include "locks.h"

struct mcs_node {
	_Atomic(struct mcs_node *) next;
	atomic_int locked;
} __attribute__((aligned(BENCH_CACHELINE)));

struct mcs_lock {
	_Atomic(struct mcs_node *) tail;
};

static _Thread_local struct mcs_node mcs_self;

static int mcs_init(void *l)
{
	struct mcs_lock *m = l;

	atomic_init(&m->tail, NULL);
	return 0;
}

static int mcs_destroy(void *l)
{
	struct mcs_lock *m = l;

	/* relaxed: the run's threads are joined; join orders their writes. */
	return atomic_load_explicit(&m->tail, memory_order_relaxed) ? EBUSY : 0;
}

static int mcs_lock(void *l)
{
	struct mcs_lock *m = l;
	struct mcs_node *self = &mcs_self, *prev;

	/* relaxed: published by the release half of the swap below. */
	atomic_store_explicit(&self->next, NULL, memory_order_relaxed);
	atomic_store_explicit(&self->locked, 0, memory_order_relaxed);
	/* acq_rel.  release: our successor reads our node from tail (its own
	 * swap, acquire) and then writes self->next and self->locked; our
	 * resets above must come before those writes.  acquire: when prev is
	 * NULL, pairs with the release CAS in mcs_unlock, so the last owner's
	 * critical section happens before ours. */
	prev = atomic_exchange_explicit(&m->tail, self, memory_order_acq_rel);
	if (!prev)
		return 0;
	/* release: pairs with the acquire load of next in mcs_unlock; the
	 * predecessor then sees our reset of locked before it sets it. */
	atomic_store_explicit(&prev->next, self, memory_order_release);
	/* acquire: pairs with the release handover in mcs_unlock, so the
	 * predecessor's critical section happens before ours. */
	while (!atomic_load_explicit(&self->locked, memory_order_acquire))
		bench_pause();
	return 0;
}

static int mcs_unlock(void *l)
{
	struct mcs_lock *m = l;
	struct mcs_node *self = &mcs_self, *expected = self, *next;

	/* acquire: pairs with the successor's release store of prev->next. */
	next = atomic_load_explicit(&self->next, memory_order_acquire);
	if (!next) {
		/* release: pairs with the acquire half of the next locker's
		 * swap when it finds the queue empty.  relaxed on failure:
		 * someone is queued behind us; we read next below. */
		if (atomic_compare_exchange_strong_explicit(&m->tail, &expected, NULL,
							    memory_order_release,
							    memory_order_relaxed))
			return 0;
		if (expected == NULL)
			return EPERM; /* the lock was free: not ours to unlock */
		/* acquire: as the load above. */
		while (!(next = atomic_load_explicit(&self->next, memory_order_acquire)))
			bench_pause();
	}
	/* release: pairs with the successor's acquire spin on locked. */
	atomic_store_explicit(&next->locked, 1, memory_order_release);
	return 0;
}

const struct bench_lock bench_lock_mcs = {
	.name = "mcs",
	.summary = "spinning MCS queue lock (kernel qspinlock slow path analog), never parks",
	.size = sizeof(struct mcs_lock),
	.init = mcs_init,
	.destroy = mcs_destroy,
	.lock = mcs_lock,
	.unlock = mcs_unlock,
	.futex_counted = true,
};

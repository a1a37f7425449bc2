/* SPDX-License-Identifier: MIT */
/* hotlock-bench adapters: abseil's absl::Mutex (Google's mutex, from
 * Debian's libabsl-dev), as a mutex and as a reader-writer lock:
 *   absl     Lock() and Unlock(): one word holding the lock bits and a
 *            pointer to a queue of waiters, spinning a bounded number of
 *            times before it queues and blocks on a per-thread semaphore;
 *   absl-rw  ReaderLock/ReaderUnlock, WriterLock/WriterUnlock: the same
 *            word and waiter queue, with a reader count in the word;
 *            queued writers make new readers queue.
 * Its futex calls are its own, not counted.  C++, so that abseil's class
 * is constructed in the harness's memory (placement new) and destroyed
 * there; the memory orders are abseil's, this file only forwards. */
#include <absl/synchronization/mutex.h>

#include <new>

extern "C" {
#include "locks.h"
#include "rwlocks.h"
}

static_assert(sizeof(absl::Mutex) <= 64 && alignof(absl::Mutex) <= 64,
	      "absl::Mutex must fit the cache line the harness gives");

static int absl_init(void *l)
{
	new (l) absl::Mutex();
	return 0;
}

static int absl_destroy(void *l)
{
	static_cast<absl::Mutex *>(l)->~Mutex();
	return 0;
}

/* The adapter function of one operation, a member function of absl::Mutex
 * named at compile time: absl_op<&absl::Mutex::Lock> calls Lock() directly,
 * as a hand-written forwarder would. */
template <void (absl::Mutex::*op)()>
static int absl_op(void *l)
{
	(static_cast<absl::Mutex *>(l)->*op)();
	return 0;
}

extern "C" const struct bench_lock bench_lock_absl = {
	.name = "absl",
	.summary = "abseil absl::Mutex: spins, then queues on a per-thread semaphore (calls not counted)",
	.size = sizeof(absl::Mutex),
	.init = absl_init,
	.destroy = absl_destroy,
	.lock = absl_op<&absl::Mutex::Lock>,
	.unlock = absl_op<&absl::Mutex::Unlock>,
	.describe = nullptr,
	.futex_counted = false,
	.peer = true,
};

extern "C" const struct bench_rwlock bench_rwlock_absl = {
	.name = "absl-rw",
	.summary = "abseil absl::Mutex as ReaderLock/WriterLock (calls not counted)",
	.size = sizeof(absl::Mutex),
	.init = absl_init,
	.destroy = absl_destroy,
	.rdlock = absl_op<&absl::Mutex::ReaderLock>,
	.wrlock = absl_op<&absl::Mutex::WriterLock>,
	.rdunlock = absl_op<&absl::Mutex::ReaderUnlock>,
	.wrunlock = absl_op<&absl::Mutex::WriterUnlock>,
	.describe = nullptr,
	.futex_counted = false,
	.peer = true,
};

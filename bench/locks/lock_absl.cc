/* SPDX-License-Identifier: MIT */
/* hotlock-bench adapter: absl, abseil's absl::Mutex (Google's mutex, from
 * Debian's libabsl-dev: one word holding the lock bits and a pointer to a
 * queue of waiters, spinning a bounded number of times before it queues
 * and blocks on a per-thread semaphore).  Lock() and Unlock(); its futex
 * calls are its own, not counted.  C++, so that abseil's class is
 * constructed in the harness's memory (placement new) and destroyed there;
 * the memory orders are abseil's, this file only forwards. */
#include <absl/synchronization/mutex.h>

#include <new>

extern "C" {
#include "locks.h"
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

static int absl_lock(void *l)
{
	static_cast<absl::Mutex *>(l)->Lock();
	return 0;
}

static int absl_unlock(void *l)
{
	static_cast<absl::Mutex *>(l)->Unlock();
	return 0;
}

extern "C" const struct bench_lock bench_lock_absl = {
	.name = "absl",
	.summary = "abseil absl::Mutex: spins, then queues on a per-thread semaphore (calls not counted)",
	.size = sizeof(absl::Mutex),
	.init = absl_init,
	.destroy = absl_destroy,
	.lock = absl_lock,
	.unlock = absl_unlock,
	.describe = nullptr,
	.futex_counted = false,
	.peer = true,
};

/* SPDX-License-Identifier: MIT */
/* hotlock-bench adapter: absl-rw, abseil's absl::Mutex used as a
 * reader-writer lock (ReaderLock/ReaderUnlock, WriterLock/WriterUnlock:
 * the same word and waiter queue as the absl adapter, with a reader count
 * in the word; queued writers make new readers queue).  Its futex calls
 * are its own, not counted; the memory orders are abseil's, this file only
 * forwards. */
#include <absl/synchronization/mutex.h>

#include <new>

extern "C" {
#include "rwlocks.h"
}

static int absl_rw_init(void *l)
{
	new (l) absl::Mutex();
	return 0;
}

static int absl_rw_destroy(void *l)
{
	static_cast<absl::Mutex *>(l)->~Mutex();
	return 0;
}

static int absl_rw_rdlock(void *l)
{
	static_cast<absl::Mutex *>(l)->ReaderLock();
	return 0;
}

static int absl_rw_wrlock(void *l)
{
	static_cast<absl::Mutex *>(l)->WriterLock();
	return 0;
}

static int absl_rw_rdunlock(void *l)
{
	static_cast<absl::Mutex *>(l)->ReaderUnlock();
	return 0;
}

static int absl_rw_wrunlock(void *l)
{
	static_cast<absl::Mutex *>(l)->WriterUnlock();
	return 0;
}

extern "C" const struct bench_rwlock bench_rwlock_absl = {
	.name = "absl-rw",
	.summary = "abseil absl::Mutex as ReaderLock/WriterLock (calls not counted)",
	.size = sizeof(absl::Mutex),
	.init = absl_rw_init,
	.destroy = absl_rw_destroy,
	.rdlock = absl_rw_rdlock,
	.wrlock = absl_rw_wrlock,
	.rdunlock = absl_rw_rdunlock,
	.wrunlock = absl_rw_wrunlock,
	.describe = nullptr,
	.futex_counted = false,
	.peer = true,
};

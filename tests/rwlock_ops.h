/* SPDX-License-Identifier: MIT */
/* hl_rwlock as the stress harness (stress.h) drives it: the ops table every
 * hl_rwlock stress and fairness test starts from.  The exclusive side is the
 * write lock, the shared side the read lock; both release through
 * hl_rwlock_unlock. */
#ifndef HOTLOCK_TESTS_RWLOCK_OPS_H
#define HOTLOCK_TESTS_RWLOCK_OPS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <hotlock/rwlock.h>

#include "common.h"
#include "stress.h"

static inline int rwlock_ops_wrlock(void *o) { return hl_rwlock_wrlock(o); }
static inline int rwlock_ops_trywrlock(void *o) { return hl_rwlock_trywrlock(o); }
static inline int rwlock_ops_timedwrlock(void *o, const struct timespec *abs)
{
	return hl_rwlock_timedwrlock(o, CLOCK_MONOTONIC, abs);
}
static inline int rwlock_ops_rdlock(void *o) { return hl_rwlock_rdlock(o); }
static inline int rwlock_ops_tryrdlock(void *o) { return hl_rwlock_tryrdlock(o); }
static inline int rwlock_ops_timedrdlock(void *o, const struct timespec *abs)
{
	return hl_rwlock_timedrdlock(o, CLOCK_MONOTONIC, abs);
}
static inline int rwlock_ops_unlock(void *o) { return hl_rwlock_unlock(o); }
static inline int rwlock_ops_describe(void *o, char *buf, size_t len)
{
	return hl_rwlock_describe(o, buf, len);
}

/* The ops for rwlock l: wrlock/trywrlock/timedwrlock (CLOCK_MONOTONIC) as
 * the exclusive side, rdlock/tryrdlock/timedrdlock as the shared side,
 * unlock for both, describe; no relock, no thread_init. */
static inline stress_ops_t rwlock_stress_ops(hl_rwlock_t *l)
{
	stress_ops_t ops = {
		.name = "hl_rwlock",
		.obj = l,
		.lock = rwlock_ops_wrlock,
		.trylock = rwlock_ops_trywrlock,
		.timedlock = rwlock_ops_timedwrlock,
		.unlock = rwlock_ops_unlock,
		.describe = rwlock_ops_describe,
		.rdlock = rwlock_ops_rdlock,
		.tryrdlock = rwlock_ops_tryrdlock,
		.timedrdlock = rwlock_ops_timedrdlock,
		.rdunlock = rwlock_ops_unlock,
	};
	return ops;
}

/* Whether hl_rwlock_describe lists thread tid in the waiter queue as a
 * waiter of kind 'R' or 'W' (" R<tid>@<node>:<state>" for a reader,
 * " <tid>@..." for a writer).  The queue is listed once its head has parked
 * and recorded itself. */
static inline bool rwlock_describe_lists(const hl_rwlock_t *l, char kind, uint32_t tid,
					 char *line, size_t len)
{
	char pat[32];
	const char *q;
	hl_rwlock_describe(l, line, len);
	q = strstr(line, " queue");
	snprintf(pat, sizeof(pat), " %s%u@", kind == 'R' ? "R" : "", tid);
	return q && strstr(q, pat) != NULL;
}

/* Waits, up to 10 s, until the thread whose TID *tidp publishes (0 until it
 * runs) is queued on l as a waiter of kind 'R' or 'W' and parked: listed by
 * describe and asleep (state S in /proc).  A thread asleep inside a lock
 * call has enqueued itself: it parks only on its queue node.  In a TSan
 * build describe is not called (it reads queue nodes other threads write,
 * racy on purpose, which TSan reports): the thread must then be seen
 * asleep on 3 looks 1 ms apart.  Returns false on the time limit, with the
 * last describe line in line.  The tests that build a queue start each
 * waiter only once the previous one is queued, which fixes the order. */
static inline bool rwlock_wait_queued(const hl_rwlock_t *l, char kind, const atomic_uint *tidp,
				      char *line, size_t len)
{
	int64_t end = now_ns() + 10 * NSEC_PER_SEC;
	int asleep = 0;
	line[0] = 0;
	for (;;) {
		uint32_t tid = atomic_load(tidp);
		if (tid && thread_state(tid) == 'S') {
			if (TEST_TSAN ? ++asleep >= 3 : rwlock_describe_lists(l, kind, tid, line, len))
				return true;
		} else {
			asleep = 0;
		}
		if (now_ns() > end) {
			if (!TEST_TSAN)
				hl_rwlock_describe(l, line, len);
			return false;
		}
		sleep_ns(NSEC_PER_MSEC); /* polling another thread's state */
	}
}

#endif

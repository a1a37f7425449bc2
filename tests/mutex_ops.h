/* SPDX-License-Identifier: MIT */
/* hl_mutex as the stress harness (stress.h) drives it: the ops table every
 * hl_mutex stress, fairness and CNA test starts from. */
#ifndef HOTLOCK_TESTS_MUTEX_OPS_H
#define HOTLOCK_TESTS_MUTEX_OPS_H

#include <time.h>

#include <hotlock/mutex.h>

#include "stress.h"

static inline int mutex_ops_lock(void *o) { return hl_mutex_lock(o); }
static inline int mutex_ops_trylock(void *o) { return hl_mutex_trylock(o); }
static inline int mutex_ops_unlock(void *o) { return hl_mutex_unlock(o); }
static inline int mutex_ops_timedlock(void *o, const struct timespec *abs)
{
	return hl_mutex_timedlock(o, CLOCK_MONOTONIC, abs);
}
static inline int mutex_ops_describe(void *o, char *buf, size_t len)
{
	return hl_mutex_describe(o, buf, len);
}

/* The ops for mutex m: lock, trylock, timedlock (CLOCK_MONOTONIC), unlock,
 * describe; no read side, no thread_init. */
static inline stress_ops_t mutex_stress_ops(hl_mutex_t *m)
{
	stress_ops_t ops = {
		.name = "hl_mutex",
		.obj = m,
		.lock = mutex_ops_lock,
		.trylock = mutex_ops_trylock,
		.timedlock = mutex_ops_timedlock,
		.unlock = mutex_ops_unlock,
		.describe = mutex_ops_describe,
	};
	return ops;
}

#endif

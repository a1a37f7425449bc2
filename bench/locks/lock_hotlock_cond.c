/* SPDX-License-Identifier: MIT */
/* hotlock-bench adapter: hotlock's hl_cond_t with the hotlock mutex
 * adapter's hl_mutex_t (default queue policy).  hl_cond_t morphs its
 * waits: a signal or a broadcast moves its waiters, still asleep, onto the
 * mutex's waiter queue, whose unlocks then wake them one at a time (see
 * include/hotlock/cond.h).  Its futex syscalls go through the library's
 * counted futex layer.  The memory orders are the library's; this file only
 * forwards. */
#include <hotlock/cond.h>

#include "conds.h"

static int hotlock_cond_init(void *c)
{
	return hl_cond_init(c);
}

static int hotlock_cond_destroy(void *c)
{
	return hl_cond_destroy(c);
}

static int hotlock_cond_wait(void *c, void *m)
{
	return hl_cond_wait(c, m);
}

static int hotlock_cond_signal(void *c)
{
	return hl_cond_signal(c);
}

static int hotlock_cond_broadcast(void *c)
{
	return hl_cond_broadcast(c);
}

const struct bench_cond bench_cond_hotlock = {
	.name = "hotlock",
	.summary = "hl_cond_t with an hl_mutex_t: signal and broadcast move waiters onto the mutex queue",
	.mutex = &bench_lock_hotlock,
	.size = sizeof(hl_cond_t),
	.init = hotlock_cond_init,
	.destroy = hotlock_cond_destroy,
	.wait = hotlock_cond_wait,
	.signal = hotlock_cond_signal,
	.broadcast = hotlock_cond_broadcast,
	.futex_counted = true,
};

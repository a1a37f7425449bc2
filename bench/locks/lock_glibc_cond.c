/* SPDX-License-Identifier: MIT */
/* hotlock-bench adapter: glibc's condition variable, as programs use it
 * today: pthread_cond_t (default attributes) with the glibc mutex adapter's
 * pthread_mutex_t (PTHREAD_MUTEX_NORMAL, glibc's default kind).
 *
 * glibc's condvar (2.25 and later) counts waiters in two groups by sequence
 * numbers; a signal or a broadcast wakes waiters with futex_wake and each
 * woken waiter then takes the mutex itself: nothing is moved onto the
 * mutex, so a broadcast to N waiters has them all contend for it.  glibc
 * makes its futex syscalls itself, so hl_futex_stats cannot see them:
 * futex_counted is false and the tables print "-".  The memory orders are
 * glibc's; this file only forwards. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* the build defines it; also when compiled alone */
#endif
#include <pthread.h>

#include "conds.h"

static int glibc_cond_init(void *c)
{
	return pthread_cond_init(c, NULL);
}

static int glibc_cond_destroy(void *c)
{
	return pthread_cond_destroy(c);
}

static int glibc_cond_wait(void *c, void *m)
{
	return pthread_cond_wait(c, m);
}

static int glibc_cond_signal(void *c)
{
	return pthread_cond_signal(c);
}

static int glibc_cond_broadcast(void *c)
{
	return pthread_cond_broadcast(c);
}

const struct bench_cond bench_cond_glibc = {
	.name = "glibc",
	.summary = "pthread_cond_t with a pthread_mutex_t (futex calls not counted)",
	.mutex = &bench_lock_glibc,
	.size = sizeof(pthread_cond_t),
	.init = glibc_cond_init,
	.destroy = glibc_cond_destroy,
	.wait = glibc_cond_wait,
	.signal = glibc_cond_signal,
	.broadcast = glibc_cond_broadcast,
	.futex_counted = false,
	.peer = true,
};

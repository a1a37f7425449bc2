/* SPDX-License-Identifier: MIT */
/* hotlock-bench adapters: glibc's pthread mutex, as programs use it today.
 *   glibc           PTHREAD_MUTEX_NORMAL: one CAS, then futex wait at once
 *   glibc-adaptive  PTHREAD_MUTEX_ADAPTIVE_NP: spins a bounded, self-tuned
 *                   number of trylocks before it waits
 * glibc makes its futex syscalls itself, so hl_futex_stats cannot see them:
 * futex_counted is false and the tables print "-".  The memory orders are
 * glibc's; this file only forwards. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* the build defines it; also when compiled alone */
#endif
#include <pthread.h>

#include "locks.h"

static int glibc_init_type(void *l, int type)
{
	pthread_mutexattr_t attr;
	int err, err2;

	err = pthread_mutexattr_init(&attr);
	if (err)
		return err;
	err = pthread_mutexattr_settype(&attr, type);
	if (!err)
		err = pthread_mutex_init(l, &attr);
	err2 = pthread_mutexattr_destroy(&attr);
	return err ? err : err2;
}

static int glibc_init(void *l)
{
	return glibc_init_type(l, PTHREAD_MUTEX_NORMAL);
}

static int glibc_adaptive_init(void *l)
{
	return glibc_init_type(l, PTHREAD_MUTEX_ADAPTIVE_NP);
}

static int glibc_destroy(void *l)
{
	return pthread_mutex_destroy(l);
}

static int glibc_lock(void *l)
{
	return pthread_mutex_lock(l);
}

static int glibc_unlock(void *l)
{
	return pthread_mutex_unlock(l);
}

/* The two adapters differ in their name and mutex type only; the adaptive
 * one is the glibc mutex a program tuned for contention picks, so it is
 * among hotlock's peers. */
#define GLIBC_ADAPTER(name_, summary_, init_, peer_) {		\
	.name = name_,						\
	.summary = summary_,					\
	.size = sizeof(pthread_mutex_t),			\
	.init = init_,						\
	.destroy = glibc_destroy,				\
	.lock = glibc_lock,					\
	.unlock = glibc_unlock,					\
	.futex_counted = false,					\
	.peer = peer_,						\
}

const struct bench_lock bench_lock_glibc = GLIBC_ADAPTER("glibc",
	"pthread_mutex_t, PTHREAD_MUTEX_NORMAL (futex calls not counted)",
	glibc_init, false);

const struct bench_lock bench_lock_glibc_adaptive = GLIBC_ADAPTER("glibc-adaptive",
	"pthread_mutex_t, PTHREAD_MUTEX_ADAPTIVE_NP (futex calls not counted)",
	glibc_adaptive_init, true);

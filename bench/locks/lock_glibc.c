/* SPDX-License-Identifier: MIT */
/* hotlock-bench adapters: glibc's pthread locks, as programs use them today.
 *   glibc            pthread_mutex_t, PTHREAD_MUTEX_NORMAL: one CAS, then
 *                    futex wait at once
 *   glibc-adaptive   pthread_mutex_t, PTHREAD_MUTEX_ADAPTIVE_NP: spins a
 *                    bounded, self-tuned number of trylocks before it waits
 *   glibc-rw         pthread_rwlock_t, the default kind,
 *                    PTHREAD_RWLOCK_PREFER_READER_NP: a reader gets in
 *                    whenever no writer holds the lock, so a steady stream
 *                    of readers starves the writers
 *   glibc-rw-writer  pthread_rwlock_t,
 *                    PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP: once a
 *                    writer waits, new readers wait too
 *   glibc (condvar)  pthread_cond_t with the glibc mutex (below)
 * glibc makes its futex syscalls itself, so hl_futex_stats cannot see them:
 * futex_counted is false and the tables print "-".  The memory orders are
 * glibc's; this file only forwards. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* the build defines it; also when compiled alone */
#endif
#include <pthread.h>
#include <stdio.h>

#include "conds.h"
#include "locks.h"
#include "rwlocks.h"

/* ---- pthread_mutex_t ---------------------------------------------------- */

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

BENCH_FORWARD(glibc_destroy, pthread_mutex_destroy)
BENCH_FORWARD(glibc_lock, pthread_mutex_lock)
BENCH_FORWARD(glibc_unlock, pthread_mutex_unlock)

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

/* ---- pthread_rwlock_t --------------------------------------------------- */

static int glibc_rw_init_kind(void *l, int kind)
{
	pthread_rwlockattr_t attr;
	int err, err2;

	err = pthread_rwlockattr_init(&attr);
	if (err)
		return err;
	err = pthread_rwlockattr_setkind_np(&attr, kind);
	if (!err)
		err = pthread_rwlock_init(l, &attr);
	err2 = pthread_rwlockattr_destroy(&attr);
	return err ? err : err2;
}

static int glibc_rw_init(void *l)
{
	return glibc_rw_init_kind(l, PTHREAD_RWLOCK_PREFER_READER_NP);
}

static int glibc_rw_writer_init(void *l)
{
	return glibc_rw_init_kind(l, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
}

BENCH_FORWARD(glibc_rw_destroy, pthread_rwlock_destroy)
BENCH_FORWARD(glibc_rw_rdlock, pthread_rwlock_rdlock)
BENCH_FORWARD(glibc_rw_wrlock, pthread_rwlock_wrlock)
BENCH_FORWARD(glibc_rw_unlock, pthread_rwlock_unlock)

/* glibc's own state words (nptl/pthread_rwlock_common.c explains them):
 * __readers holds the reader count (from bit 3) and the phase and waiting
 * flags (bits 0-2); __writers the writer count and whether one holds the
 * lock; __cur_writer the TID of the writer holding it. */
static int glibc_rw_describe(const void *l, char *buf, size_t len)
{
	const pthread_rwlock_t *rw = l;

	snprintf(buf, len, "__readers=%#x (%u readers, flags %#x) __writers=%#x "
		 "__wrphase_futex=%#x __writers_futex=%#x __cur_writer=%d",
		 rw->__data.__readers, rw->__data.__readers >> 3,
		 rw->__data.__readers & 7u, rw->__data.__writers,
		 rw->__data.__wrphase_futex, rw->__data.__writers_futex,
		 rw->__data.__cur_writer);
	return 0;
}

/* The two adapters differ in their name and kind only; the default kind,
 * what programs get, is among hotlock's peers.  pthread_rwlock_unlock
 * finds out itself which side it releases. */
#define GLIBC_RW_ADAPTER(name_, summary_, init_, peer_) {	\
	.name = name_,						\
	.summary = summary_,					\
	.size = sizeof(pthread_rwlock_t),			\
	.init = init_,						\
	.destroy = glibc_rw_destroy,				\
	.rdlock = glibc_rw_rdlock,				\
	.wrlock = glibc_rw_wrlock,				\
	.rdunlock = glibc_rw_unlock,				\
	.wrunlock = glibc_rw_unlock,				\
	.describe = glibc_rw_describe,				\
	.futex_counted = false,					\
	.peer = peer_,						\
}

const struct bench_rwlock bench_rwlock_glibc = GLIBC_RW_ADAPTER("glibc-rw",
	"pthread_rwlock_t, default (prefers readers; futex calls not counted)",
	glibc_rw_init, true);

const struct bench_rwlock bench_rwlock_glibc_writer = GLIBC_RW_ADAPTER("glibc-rw-writer",
	"pthread_rwlock_t, PREFER_WRITER_NONRECURSIVE_NP (futex calls not counted)",
	glibc_rw_writer_init, false);

/* ---- pthread_cond_t ----------------------------------------------------- */

/* glibc's condition variable, as programs use it today: pthread_cond_t
 * (default attributes) with the glibc mutex adapter's pthread_mutex_t
 * (PTHREAD_MUTEX_NORMAL, glibc's default kind).
 *
 * glibc's condvar (2.25 and later) counts waiters in two groups by sequence
 * numbers; a signal or a broadcast wakes waiters with futex_wake and each
 * woken waiter then takes the mutex itself: nothing is moved onto the
 * mutex, so a broadcast to N waiters has them all contend for it. */
static int glibc_cond_init(void *c)
{
	return pthread_cond_init(c, NULL);
}

static int glibc_cond_wait(void *c, void *m)
{
	return pthread_cond_wait(c, m);
}

BENCH_FORWARD(glibc_cond_destroy, pthread_cond_destroy)
BENCH_FORWARD(glibc_cond_signal, pthread_cond_signal)
BENCH_FORWARD(glibc_cond_broadcast, pthread_cond_broadcast)

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

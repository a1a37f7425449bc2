/* SPDX-License-Identifier: MIT */
/* hotlock-bench adapters: glibc's pthread rwlock, as programs use it today.
 *   glibc-rw         the default kind, PTHREAD_RWLOCK_PREFER_READER_NP: a
 *                    reader gets in whenever no writer holds the lock, so a
 *                    steady stream of readers starves the writers
 *   glibc-rw-writer  PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP: once a
 *                    writer waits, new readers wait too
 * glibc makes its futex syscalls itself, so hl_futex_stats cannot see them:
 * futex_counted is false and the tables print "-".  The memory orders are
 * glibc's; this file only forwards. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* the build defines it; also when compiled alone */
#endif
#include <pthread.h>
#include <stdio.h>

#include "rwlocks.h"

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

static int glibc_rw_destroy(void *l)
{
	return pthread_rwlock_destroy(l);
}

static int glibc_rw_rdlock(void *l)
{
	return pthread_rwlock_rdlock(l);
}

static int glibc_rw_wrlock(void *l)
{
	return pthread_rwlock_wrlock(l);
}

static int glibc_rw_unlock(void *l)
{
	return pthread_rwlock_unlock(l);
}

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
 * what programs get, is among hotlock's peers. */
#define GLIBC_RW_ADAPTER(name_, summary_, init_, peer_) {		\
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

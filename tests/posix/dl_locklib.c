/* SPDX-License-Identifier: MIT */
/* A library that uses locks of its own, for posix_suite's dlopen case: a
 * static mutex, rwlock and condvar, used from `threads` threads. */
#include <pthread.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static long count, count_rw;
static int arrived, expected;

static void *worker(void *p)
{
	(void)p;
	for (int i = 0; i < 1000; i++) {
		pthread_mutex_lock(&m);
		count++;
		pthread_mutex_unlock(&m);
		pthread_rwlock_wrlock(&l);
		count_rw++;
		pthread_rwlock_unlock(&l);
		pthread_rwlock_rdlock(&l);
		pthread_rwlock_unlock(&l);
		pthread_mutex_lock(&m);
		count++;
		pthread_mutex_unlock(&m);
	}
	pthread_mutex_lock(&m);
	if (++arrived == expected)
		pthread_cond_broadcast(&c);
	while (arrived < expected)
		pthread_cond_wait(&c, &m);
	pthread_mutex_unlock(&m);
	return 0;
}

long dl_locklib_run(int threads)
{
	pthread_t t[64];
	count = count_rw = 0;
	arrived = 0;
	expected = threads;
	for (int i = 0; i < threads && i < 64; i++)
		pthread_create(&t[i], 0, worker, 0);
	for (int i = 0; i < threads && i < 64; i++)
		pthread_join(t[i], 0);
	return count + count_rw;
}

/* SPDX-License-Identifier: MIT */
/* ordered: a program that cannot deadlock and takes its locks in one
 * order, while threads wait long for each other (tests/deadlocks.sh): the
 * deadlock detector must find no deadlock and no lock-order inversion in
 * it (hangs it may report: a holder sleeps with its locks).  Its threads take ascending subsets of
 * LOCKS mutexes and an rwlock (read or write), hold them for up to 400 ms,
 * and start again, for SECONDS (argv[1], default 5); the owners of the
 * locks that threads wait for change all the time, which is what could
 * make a detector that read the wait-for graph at more than one instant
 * see a cycle that never stood.
 *
 *   ordered [SECONDS [reversed]] */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define THREADS 6
#define LOCKS 4

static pthread_mutex_t locks[LOCKS] = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
					PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER };
static pthread_rwlock_t last = PTHREAD_RWLOCK_INITIALIZER;
static double seconds = 5;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *worker(void *arg)
{
	uint32_t x = (uint32_t)(uintptr_t)arg * 2654435761u + 1;
	double end = now() + seconds;
	while (now() < end) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		unsigned set = x % (1u << (LOCKS + 1));
		for (int i = 0; i < LOCKS; i++)
			if (set & (1u << i))
				pthread_mutex_lock(&locks[i]);
		bool rw = set & (1u << LOCKS), write = x & (1u << 20);
		if (rw && write)
			pthread_rwlock_wrlock(&last);
		else if (rw)
			pthread_rwlock_rdlock(&last);
		struct timespec hold = { 0, (long)(x % 400) * 1000000 };
		nanosleep(&hold, NULL);
		if (rw)
			pthread_rwlock_unlock(&last);
		for (int i = LOCKS - 1; i >= 0; i--)
			if (set & (1u << i))
				pthread_mutex_unlock(&locks[i]);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		seconds = atof(argv[1]);
	/* "reversed": the test's seeded fault, one inversion, made by main
	 * before the threads start (so it cannot deadlock): the detector
	 * must report it. */
	if (argc > 2 && !strcmp(argv[2], "reversed")) {
		pthread_mutex_lock(&locks[1]);
		pthread_mutex_lock(&locks[0]);
		pthread_mutex_unlock(&locks[0]);
		pthread_mutex_unlock(&locks[1]);
	}
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1));
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	puts("ordered: done");
	return 0;
}

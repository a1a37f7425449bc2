/* SPDX-License-Identifier: MIT */
/* A plain pthread program (not linked with hotlock) whose threads start
 * on every CPU and are then pinned to one, each by one of the two calls a
 * program uses: the main thread pins itself with sched_setaffinity(0),
 * pins one worker with pthread_setaffinity_np from outside, and the other
 * worker pins itself with pthread_setaffinity_np(pthread_self()).  Only
 * then do the workers contend for a mutex held 20 us at a time.  Under
 * hotlock-run every thread of the process shares one CPU by then, so the
 * waiting policy has no spinner slot: shim_affinity.sh checks that the
 * report counts no spin.  Exits 77 where the process may use fewer than
 * two CPUs (nothing to pin away from). */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t pinned, go;
static atomic_bool stop;
static cpu_set_t one;

static void hold(long ns)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < ns);
}

static void *worker(void *arg)
{
	if (arg && pthread_setaffinity_np(pthread_self(), sizeof(one), &one) != 0) {
		fprintf(stderr, "affinity_prog: pthread_setaffinity_np(self) failed\n");
		exit(1);
	}
	pthread_barrier_wait(&pinned);
	pthread_barrier_wait(&go);
	while (!atomic_load(&stop)) {
		pthread_mutex_lock(&m);
		hold(20000);
		pthread_mutex_unlock(&m);
	}
	return NULL;
}

int main(void)
{
	cpu_set_t all;
	if (sched_getaffinity(0, sizeof(all), &all) != 0 || CPU_COUNT(&all) < 2) {
		printf("affinity_prog: fewer than 2 usable CPUs, nothing to check\n");
		return 77;
	}
	int first = 0;
	while (!CPU_ISSET(first, &all))
		first++;
	CPU_ZERO(&one);
	CPU_SET(first, &one);
	pthread_barrier_init(&pinned, NULL, 3);
	pthread_barrier_init(&go, NULL, 3);
	pthread_t a, b;
	if (pthread_create(&a, NULL, worker, NULL) || pthread_create(&b, NULL, worker, &one)) {
		fprintf(stderr, "affinity_prog: pthread_create failed\n");
		return 1;
	}
	if (pthread_setaffinity_np(a, sizeof(one), &one) != 0 ||
	    sched_setaffinity(0, sizeof(one), &one) != 0) {
		fprintf(stderr, "affinity_prog: setting the affinity failed\n");
		return 1;
	}
	pthread_barrier_wait(&pinned);
	pthread_barrier_wait(&go);
	struct timespec run = { 0, 300000000 };
	nanosleep(&run, NULL);
	atomic_store(&stop, true);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("affinity_prog: done\n");
	return 0;
}

/* SPDX-License-Identifier: MIT */
/* hotlock-shim-pair: what an uncontended pthread_mutex_lock + unlock pair
 * costs in a program that knows nothing of hotlock, for `hotlock-bench apps`
 * to run plain (glibc) and under hotlock-run (the shim).  Not linked with
 * hotlock: the pair goes through the dynamic linker's binding of
 * pthread_mutex_lock, as in any program.
 *
 *   hotlock-shim-pair [--idle-thread] [--pairs N] [--trials K]
 *
 * Loops N pairs on one PTHREAD_MUTEX_INITIALIZER mutex, K times, and prints
 * the best trial's time per pair.  --idle-thread first starts a second
 * thread that sleeps in read(2) until the end: glibc's lock skips its atomic
 * instruction while a process has a single thread, so the two forms differ.
 * Output, one "key value" a line:
 *   ns_per_pair 3.85
 *   trials_ns 3.91 3.85 ...
 *   lock_from /path/of/the/object/defining/pthread_mutex_lock
 * (lock_from tells whether the shim was loaded). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* the build defines it; also when compiled alone */
#endif
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_TRIALS 100

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static _Noreturn void usage(const char *why, const char *arg)
{
	fprintf(stderr, "hotlock-shim-pair: %s%s\n"
		"usage: hotlock-shim-pair [--idle-thread] [--pairs N] [--trials K]\n",
		why, arg);
	exit(2);
}

static unsigned long number(const char *opt, const char *v, unsigned long max)
{
	char *end;
	unsigned long n;

	if (!v)
		usage("missing value after ", opt);
	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || !*v || *end || *v == '-' || n < 1 || n > max)
		usage("bad number: ", v);
	return n;
}

static void *idle(void *arg)
{
	char c;

	/* Until main closes the write end. */
	while (read(*(int *)arg, &c, 1) > 0)
		;
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long pairs = 10000000, trials = 5;
	double best = 0, ns[MAX_TRIALS];
	int idle_thread = 0, fd[2] = { -1, -1 };
	pthread_t t;
	Dl_info info;
	void *sym;
	int err;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--idle-thread") == 0)
			idle_thread = 1;
		else if (strcmp(argv[i], "--pairs") == 0)
			pairs = number(argv[i], argv[i + 1], 1000000000000UL), i++;
		else if (strcmp(argv[i], "--trials") == 0)
			trials = number(argv[i], argv[i + 1], MAX_TRIALS), i++;
		else
			usage("unknown argument ", argv[i]);
	}
	if (idle_thread) {
		if (pipe(fd) != 0) {
			perror("hotlock-shim-pair: pipe");
			return 1;
		}
		if ((err = pthread_create(&t, NULL, idle, &fd[0]))) {
			fprintf(stderr, "hotlock-shim-pair: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	for (unsigned long k = 0; k < trials; k++) {
		double t0 = now();

		for (unsigned long i = 0; i < pairs; i++) {
			pthread_mutex_lock(&m);
			pthread_mutex_unlock(&m);
		}
		ns[k] = (now() - t0) * 1e9 / (double)pairs;
		if (k == 0 || ns[k] < best)
			best = ns[k];
	}
	if (idle_thread) {
		close(fd[1]);
		pthread_join(t, NULL);
		close(fd[0]);
	}
	printf("ns_per_pair %.3f\ntrials_ns", best);
	for (unsigned long k = 0; k < trials; k++)
		printf(" %.3f", ns[k]);
	/* The definition the program's calls are bound to: the first in the
	 * global scope, LD_PRELOAD's before libc's. */
	sym = dlsym(RTLD_DEFAULT, "pthread_mutex_lock");
	printf("\nlock_from %s\n", sym && dladdr(sym, &info) && info.dli_fname ?
	       info.dli_fname : "unknown");
	return 0;
}

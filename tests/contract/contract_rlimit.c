/* SPDX-License-Identifier: MIT */
/* The lock's contract, address space (docs/core.md, "The lock's contract"): the library's memory grows
 * with use, so that a program under an address-space limit starts as many
 * threads under hotlock-run as on glibc; nothing is printed on its behalf
 * (it failed when the first slow path reserved 112 MiB and the policy's
 * stdio brought malloc arenas, and near the limit the library said
 * "cannot reserve the waiter arena; contended locks fall back to
 * polling").
 *
 * Under setrlimit(RLIMIT_AS, 512 MiB), starts threads with STACK KiB
 * stacks, one after another, until pthread_create fails or MAX threads
 * run; each, as it starts, takes a mutex, an rwlock (write and read) and
 * waits on a condvar, each contended (a hammer thread holds the mutex and
 * the rwlock 50 us of every 55), then waits on the condvar until the end,
 * so that all of them live at once.  Prints "threads: N" on stdout and
 * nothing on stderr.  contract_rlimit.sh runs it on glibc and under
 * hotlock-run and compares the counts.
 *   contract_rlimit [--expect hotlock|glibc] [--stack KIB] [--max N] */
#include "contract.h"

#include <sys/resource.h>

static const char *prog = "contract_rlimit";

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static bool done;                       /* under m */
static int started;                     /* under m */
static _Atomic bool hammer_stop;

static void *hammer(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&hammer_stop, memory_order_relaxed)) {
		pthread_mutex_lock(&m);
		contract_busy_ns(50000);
		pthread_mutex_unlock(&m);
		pthread_rwlock_wrlock(&rw);
		contract_busy_ns(50000);
		pthread_rwlock_unlock(&rw);
		contract_busy_ns(5000);
	}
	return NULL;
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_rwlock_wrlock(&rw);
	pthread_rwlock_unlock(&rw);
	pthread_rwlock_rdlock(&rw);
	pthread_rwlock_unlock(&rw);
	pthread_mutex_lock(&m);
	started++;
	pthread_cond_broadcast(&cv);
	while (!done)
		pthread_cond_wait(&cv, &m);
	pthread_mutex_unlock(&m);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *impl = contract_expect(&argc, argv, prog);
	long stack_kib = 256, max = 200;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--stack"))
			stack_kib = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--max"))
			max = atol(argv[i + 1]);
	}
	struct rlimit rl;
	REQUIRE(getrlimit(RLIMIT_AS, &rl) == 0, "getrlimit");
	rl.rlim_cur = 512ul << 20;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < rl.rlim_cur)
		rl.rlim_cur = rl.rlim_max;
	REQUIRE(setrlimit(RLIMIT_AS, &rl) == 0, "setrlimit: %s", strerror(errno));

	pthread_attr_t a;
	pthread_attr_init(&a);
	REQUIRE(pthread_attr_setstacksize(&a, (size_t)stack_kib << 10) == 0, "stack size");
	pthread_t h;
	REQUIRE(pthread_create(&h, &a, hammer, NULL) == 0, "pthread_create");
	pthread_t *t = calloc((size_t)max, sizeof(*t));
	REQUIRE(t, "calloc");
	long n = 0;
	int err = 0;
	while (n < max) {
		err = pthread_create(&t[n], &a, worker, NULL);
		if (err)
			break;
		n++;
		/* One at a time: each meets the hammer, not its siblings. */
		pthread_mutex_lock(&m);
		while (started < n)
			pthread_cond_wait(&cv, &m);
		pthread_mutex_unlock(&m);
	}
	atomic_store(&hammer_stop, true);
	pthread_join(h, NULL);
	pthread_mutex_lock(&m);
	done = true;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&m);
	for (long i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("threads: %ld (stack %ld KiB, limit 512 MiB, locks: %s, stopped by %s)\n", n,
	       stack_kib, impl, err ? strerror(err) : "the maximum");
	return 0;
}

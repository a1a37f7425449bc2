/* SPDX-License-Identifier: MIT */
/* The lock's contract, no allocation, from a signal handler (docs/core.md, "The lock's contract"): a
 * handler may take a mutex while its thread is inside glibc's malloc,
 * since the lock call allocates nothing (on glibc it cannot deadlock
 * there).  When the policy called fopen inside a contended call, that
 * needed the malloc arena lock the interrupted malloc held: 6 of 10 runs
 * deadlocked.
 *
 * Each round is a fresh forked child (its first contended lock is the
 * process's first, where the policy once read the cgroup quota with
 * stdio): a holder thread keeps mutex M 300 us of every 330; thread T
 * mallocs and frees 2-32 KiB blocks in a loop (beyond the tcache: each
 * call takes its arena's lock) and marks the time it is inside malloc or
 * free; the main thread sends T SIGUSR1 every 0.5 ms, and T's handler,
 * when T is inside malloc or free, takes M (contended: it parks), counts,
 * unlocks.  40 such locks per round, 12 rounds, about 2 s in all.  A
 * handler lock that does not return in 2 s is a deadlock: the round fails
 * with "FAIL: round R: the handler's pthread_mutex_lock(M) did not return
 * in 2 s (a deadlock); its thread was inside malloc or free"; the test stops
 * after 3 such rounds.
 *
 * Not linked with hotlock: run on glibc (the control: passes) and under
 * hotlock-run.
 *   contract_sigmalloc [--expect hotlock|glibc] [--rounds N] */
#include "contract.h"

static const char *prog = "contract_sigmalloc";

#define LOCKS_PER_ROUND 40

static pthread_mutex_t mx = PTHREAD_MUTEX_INITIALIZER;
static _Atomic bool stop;
static volatile sig_atomic_t in_malloc;
static _Atomic long locked, skipped;
static _Atomic int in_handler_lock;     /* 1 while the handler is in pthread_mutex_lock */
static _Atomic int handler_saw_malloc;  /* T was in malloc when that handler ran */

static void on_usr1(int sig)
{
	(void)sig;
	int saved = errno;
	if (!in_malloc) {
		atomic_fetch_add(&skipped, 1);
		errno = saved;
		return;
	}
	handler_saw_malloc = 1;
	in_handler_lock = 1;
	pthread_mutex_lock(&mx);
	in_handler_lock = 0;
	pthread_mutex_unlock(&mx);
	atomic_fetch_add(&locked, 1);
	errno = saved;
}

static void *holder(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		pthread_mutex_lock(&mx);
		contract_busy_ns(300000);
		pthread_mutex_unlock(&mx);
		contract_busy_ns(30000);
	}
	return NULL;
}

static void *mallocer(void *arg)
{
	_Atomic int *ready = arg;
	test_rng_t r;
	rng_seed(&r, 0x5167, 0);
	void *keep[8] = { 0 };
	atomic_store(ready, 1);
	for (unsigned i = 0; !atomic_load_explicit(&stop, memory_order_relaxed); i++) {
		size_t n = 2048 + (size_t)rng_below(&r, 30 * 1024);
		in_malloc = 1;
		void *p = malloc(n);
		free(keep[i % 8]);
		in_malloc = 0;
		if (!p)
			abort();
		((volatile char *)p)[0] = 1;
		keep[i % 8] = p;
	}
	in_malloc = 1;
	for (int i = 0; i < 8; i++)
		free(keep[i]);
	in_malloc = 0;
	return NULL;
}

static int round_child(void *arg)
{
	int round = (int)(intptr_t)arg;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	REQUIRE(sigaction(SIGUSR1, &sa, NULL) == 0, "sigaction");
	pthread_t h, t;
	_Atomic int ready = 0;
	REQUIRE(pthread_create(&h, NULL, holder, NULL) == 0, "pthread_create");
	REQUIRE(pthread_create(&t, NULL, mallocer, &ready) == 0, "pthread_create");
	while (!atomic_load(&ready))
		sleep_ns(100 * NSEC_PER_USEC);
	int64_t give_up = now_ns() + 5 * NSEC_PER_SEC;
	while (atomic_load(&locked) < LOCKS_PER_ROUND && now_ns() < give_up) {
		long before = atomic_load(&locked) + atomic_load(&skipped);
		handler_saw_malloc = 0;
		REQUIRE(pthread_kill(t, SIGUSR1) == 0, "pthread_kill");
		int64_t limit = now_ns() + 2 * NSEC_PER_SEC;
		while (atomic_load(&locked) + atomic_load(&skipped) == before && now_ns() < limit)
			sleep_ns(50 * NSEC_PER_USEC);
		if (atomic_load(&locked) + atomic_load(&skipped) == before) {
			fprintf(stderr, "%s: FAIL: round %d: the handler's %s did not return in 2 s "
				"(a deadlock); its thread was %s\n", prog, round,
				in_handler_lock ? "pthread_mutex_lock(M)" : "pthread_mutex_unlock(M)",
				handler_saw_malloc ? "inside malloc or free (glibc's arena lock held?)"
						   : "not inside malloc");
			fflush(stderr);
			_exit(1);
		}
		sleep_ns(500 * NSEC_PER_USEC);
	}
	atomic_store(&stop, true);
	pthread_join(t, NULL);
	pthread_join(h, NULL);
	if (atomic_load(&locked) < LOCKS_PER_ROUND) {
		fprintf(stderr, "%s: FAIL: round %d: only %ld handler locks while the thread was "
			"in malloc in 5 s (%ld signals found it elsewhere)\n", prog, round,
			(long)locked, (long)skipped);
		return 1;
	}
	printf("%s: round %d: %ld handler locks inside malloc, %ld signals found it elsewhere\n",
	       prog, round, (long)locked, (long)skipped);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *impl = contract_expect(&argc, argv, prog);
	int rounds = 12;
	if (argc == 3 && !strcmp(argv[1], "--rounds"))
		rounds = atoi(argv[2]);
	contract_shared_init();
	printf("%s: locks: %s, %d rounds\n", prog, impl, rounds);
	int failed = 0, ran = 0;
	for (int i = 1; i <= rounds && failed < 3; i++, ran++) {
		int status = contract_run_child(round_child, (void *)(intptr_t)i, 15000);
		char buf[128];
		if (status == -1) {
			fprintf(stderr, "%s: FAIL: round %d: the child hung (killed after 15 s)\n",
				prog, i);
			failed++;
		} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			if (!WIFEXITED(status))
				fprintf(stderr, "%s: FAIL: round %d: the child %s\n", prog, i,
					describe_status(status, buf, sizeof(buf)));
			failed++;
		}
	}
	if (failed) {
		fprintf(stderr, "%s: FAILED: %d of %d rounds deadlocked or failed%s\n", prog, failed,
			ran, failed >= 3 && ran < rounds ? " (stopped after 3)" : "");
		return 1;
	}
	printf("%s: OK: %d rounds\n", prog, rounds);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/* A signal handler that takes a lock while its thread is in the middle of a
 * lock call (src/thread.h: nesting levels, each with its own node).
 *
 * Thread T locks and unlocks mutex M1, which thread C keeps contended, so
 * that T spends its time in M1's slow paths (queued, parked, spinning as
 * head, leaving the queue).  Thread S sends T a SIGUSR1 every 20-100 us.
 * T's handler takes mutex M2 with a deadline 0-100 us ahead (thread H holds
 * M2 for 20-50 us at a time, so the handler's wait queues, parks and often
 * gives up, leaving its node in M2's queue), and releases it if it got it.
 *
 * Asserts: mutual exclusion on M1 (T and C) and on M2 (the handler and H),
 * every call's return code, that both locks are free and destroyable at
 * the end, and that the run covered the cases: handlers that got M2 and
 * handlers that gave up.  A handler that reused the node of the wait it
 * interrupted would corrupt one of the two queues (a hang, which the ctest
 * timeout reports, or two threads inside).  The window in which the old
 * node bookkeeping went wrong was two instructions wide, so a real-signal
 * run rarely lands in it; the controlled schedules (test_sched --lock
 * mutex-signal) deliver the handler at every step and catch the wrong
 * orders every time (tests/sched_mutants.py).  This test runs the nesting
 * with real signals, EINTR from futex waits included, under both
 * sanitizers. */
#include "common.h"

#include <hotlock/hotlock.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

static hl_mutex_t m1 = HL_MUTEX_INIT, m2 = HL_MUTEX_INIT;
static atomic_int stop;
static atomic_int in_m1, in_m2;
static atomic_long handled, got_m2, gave_up, bad_rc, overlaps;
static atomic_long t_ops, c_ops, h_ops;
static pthread_t t_thread;
static atomic_int t_ready;
static long t_waits;            /* T's futex waits (parks) over the run */

static void on_sigusr1(int sig)
{
	int saved = errno;
	long k = atomic_fetch_add(&handled, 1);
	struct timespec dl = deadline_in(CLOCK_MONOTONIC, (k * 7919) % 100 * NSEC_PER_USEC);
	int rc = hl_mutex_timedlock(&m2, CLOCK_MONOTONIC, &dl);
	if (rc == 0) {
		if (atomic_fetch_add(&in_m2, 1) != 0)
			atomic_fetch_add(&overlaps, 1);
		atomic_fetch_sub(&in_m2, 1);
		if (hl_mutex_unlock(&m2) != 0)
			atomic_fetch_add(&bad_rc, 1);
		atomic_fetch_add(&got_m2, 1);
	} else if (rc == ETIMEDOUT) {
		atomic_fetch_add(&gave_up, 1);
	} else {
		atomic_fetch_add(&bad_rc, 1);
	}
	errno = saved;
}

/* One critical section of M1 (work pause iterations long), checked. */
static void m1_round(atomic_long *ops, int work)
{
	if (hl_mutex_lock(&m1) != 0)
		atomic_fetch_add(&bad_rc, 1);
	if (atomic_fetch_add(&in_m1, 1) != 0)
		atomic_fetch_add(&overlaps, 1);
	for (int i = 0; i < work; i++)
		test_cpu_relax();
	atomic_fetch_sub(&in_m1, 1);
	if (hl_mutex_unlock(&m1) != 0)
		atomic_fetch_add(&bad_rc, 1);
	atomic_fetch_add(ops, 1);
}

static void *thread_t(void *arg)
{
	/* The first slow path registers the thread's record: not under a
	 * signal (src/thread.h). */
	struct timespec dl = deadline_in(CLOCK_MONOTONIC, NSEC_PER_MSEC);
	CHECK_RC(hl_mutex_timedlock(&m1, CLOCK_MONOTONIC, &dl), ETIMEDOUT);
	atomic_store(&t_ready, 1);
	hl_futex_stats_t a, b;
	hl_futex_stats_thread(&a);
	while (!atomic_load(&stop)) {
		m1_round(&t_ops, 1);
		for (int i = 0; i < 50; i++)
			test_cpu_relax();         /* C takes M1 meanwhile */
	}
	hl_futex_stats_thread(&b);
	t_waits = (long)(b.wait - a.wait);
	return NULL;
}

static void *thread_c(void *arg)
{
	/* Long critical sections (about 100 pauses, a few us): T, whose own
	 * are short, mostly finds M1 held and waits for it. */
	while (!atomic_load(&stop))
		m1_round(&c_ops, 100);
	return NULL;
}

static void *thread_h(void *arg)
{
	long k = 0;
	while (!atomic_load(&stop)) {
		if (hl_mutex_lock(&m2) != 0)
			atomic_fetch_add(&bad_rc, 1);
		if (atomic_fetch_add(&in_m2, 1) != 0)
			atomic_fetch_add(&overlaps, 1);
		sleep_ns((20 + k++ % 31) * NSEC_PER_USEC);
		atomic_fetch_sub(&in_m2, 1);
		if (hl_mutex_unlock(&m2) != 0)
			atomic_fetch_add(&bad_rc, 1);
		atomic_fetch_add(&h_ops, 1);
		sleep_ns(5 * NSEC_PER_USEC);
	}
	return NULL;
}

static void *thread_s(void *arg)
{
	long k = 0;
	while (!atomic_load(&stop)) {
		pthread_kill(t_thread, SIGUSR1);
		sleep_ns((20 + k++ * 37 % 81) * NSEC_PER_USEC);
	}
	return NULL;
}

int main(void)
{
	int ms = (int)env_long("HOTLOCK_SIGNAL_MS", HOTLOCK_SANITIZED ? 700 : 1500);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigusr1;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	REQUIRE(sigaction(SIGUSR1, &sa, NULL) == 0, "sigaction");

	/* Held while T's first slow path times out. */
	CHECK_RC(hl_mutex_lock(&m1), 0);
	pthread_t c, h, s;
	REQUIRE(pthread_create(&t_thread, NULL, thread_t, NULL) == 0, "pthread_create");
	while (!atomic_load(&t_ready))
		sleep_ns(100 * NSEC_PER_USEC);
	CHECK_RC(hl_mutex_unlock(&m1), 0);
	REQUIRE(pthread_create(&c, NULL, thread_c, NULL) == 0, "pthread_create");
	REQUIRE(pthread_create(&h, NULL, thread_h, NULL) == 0, "pthread_create");
	REQUIRE(pthread_create(&s, NULL, thread_s, NULL) == 0, "pthread_create");
	sleep_ns(ms * NSEC_PER_MSEC);
	atomic_store(&stop, 1);
	pthread_join(s, NULL);
	pthread_join(t_thread, NULL);
	pthread_join(c, NULL);
	pthread_join(h, NULL);

	printf("test_signal: %d ms: T %ld (futex waits %ld) and C %ld critical sections of M1; "
	       "%ld handlers in T: %ld got M2, %ld gave up; H %ld critical sections of M2\n", ms,
	       atomic_load(&t_ops), t_waits, atomic_load(&c_ops), atomic_load(&handled),
	       atomic_load(&got_m2), atomic_load(&gave_up), atomic_load(&h_ops));
	CHECK(atomic_load(&overlaps) == 0, "%ld mutual exclusion violations", atomic_load(&overlaps));
	CHECK(atomic_load(&bad_rc) == 0, "%ld unexpected return codes", atomic_load(&bad_rc));
	CHECK(atomic_load(&got_m2) > 0 && atomic_load(&gave_up) > 0,
	      "the handlers did not both get M2 and give up on it");
	CHECK(atomic_load(&t_ops) > 0 && atomic_load(&c_ops) > 0, "M1 made no progress");
	CHECK_RC(hl_mutex_destroy(&m1), 0);
	CHECK_RC(hl_mutex_destroy(&m2), 0);
	return test_finish("test_signal");
}

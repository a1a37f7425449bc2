/* SPDX-License-Identifier: MIT */
/* Timed waits on a CLOCK_REALTIME deadline follow the clock, as glibc's do:
 * set forward past the deadline, a waiter returns ETIMEDOUT then, not when
 * the monotonic time its deadline stood for at the start has passed.
 *
 * Setting the machine's clock needs privileges and would disturb every
 * other program, so this runs in the controlled-schedule mode
 * (src/controlled.h), whose clocks are virtual: hl__sched_set_realtime moves
 * CLOCK_REALTIME as settimeofday would.  Each case runs in a forked
 * process: thread 0 takes the lock, sleeps 1 s of virtual time, sets
 * CLOCK_REALTIME 1 hour forward and keeps the lock 100 s more; thread 1
 * waits with a deadline 60 s ahead on CLOCK_REALTIME and must return
 * ETIMEDOUT within 100 us of virtual time of the clock's change, as the
 * kernel's timers on that clock end a sleep at once.  (hl_rwlock's waits
 * slept on CLOCK_MONOTONIC until the deadline's equivalent as of the
 * sleep's start: a due writer returned 59 s late, other waiters at their
 * next millisecond re-check.)
 *
 *   test_clock_set            every case
 *   test_clock_set CASE       one (its name as printed)
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <hotlock/cond.h>
#include <hotlock/config.h>
#include <hotlock/mutex.h>
#include <hotlock/rwlock.h>

#include "controlled.h"

#define NS 1000000000ull
#define HOLD_FIRST_NS (1 * NS)          /* before the clock is set */
#define HOLD_AFTER_NS (100 * NS)        /* after it */
#define DEADLINE_NS (60 * NS)           /* the waiter's, ahead on CLOCK_REALTIME */
#define CLOCK_STEP_NS (3600 * NS)
#define LATE_NS (NS / 10000)            /* how late the waiter may return: a
					   few dozen steps of the schedule */
#define WAITER_START_NS (NS / 1000)     /* after the holder's lock */

enum lock_op { RDLOCK, WRLOCK, MUTEX, COND };

struct scase {
	const char *name;
	enum lock_op op;
	int kind;                       /* hl_rwlock's */
};

static const struct scase cases[] = {
	{ "rwlock-writer-wrlock", WRLOCK, HL_RWLOCK_PREFER_WRITER },
	{ "rwlock-writer-rdlock", RDLOCK, HL_RWLOCK_PREFER_WRITER },
	{ "rwlock-fair-wrlock", WRLOCK, HL_RWLOCK_FAIR },
	{ "rwlock-fair-rdlock", RDLOCK, HL_RWLOCK_FAIR },
	{ "rwlock-reader-wrlock", WRLOCK, HL_RWLOCK_PREFER_READER },
	{ "rwlock-reader-rdlock", RDLOCK, HL_RWLOCK_PREFER_READER },
	{ "mutex-timedlock", MUTEX, 0 },
	{ "cond-timedwait", COND, 0 },
};

static const struct scase *the_case;
static hl_rwlock_t rw;
static hl_mutex_t mu;           /* the holder's (MUTEX) */
static hl_mutex_t cv_mu;        /* the waiter's, for its condvar (COND) */
static hl_cond_t cv;
static uint64_t clock_set_at, waiter_done_at;
static int waiter_rc = -1;

static _Noreturn void fail(const char *what)
{
	fprintf(stderr, "test_clock_set %s: %s\n", the_case->name, what);
	_exit(1);
}

/* Thread 0: holds the lock (COND: nothing; nobody signals the condvar)
 * while it sets the clock forward. */
static void *holder(void *arg)
{
	(void)arg;
	hl__sched_thread_begin(0);
	if ((the_case->op == MUTEX && hl_mutex_lock(&mu)) ||
	    ((the_case->op == RDLOCK || the_case->op == WRLOCK) && hl_rwlock_wrlock(&rw)))
		fail("the holder's lock");
	hl__sched_sleep_ns(HOLD_FIRST_NS);
	hl__sched_set_realtime((int64_t)CLOCK_STEP_NS);
	clock_set_at = hl__sched_now_ns();
	hl__sched_sleep_ns(HOLD_AFTER_NS);
	if ((the_case->op == MUTEX && hl_mutex_unlock(&mu)) ||
	    ((the_case->op == RDLOCK || the_case->op == WRLOCK) && hl_rwlock_unlock(&rw)))
		fail("the holder's unlock");
	hl__sched_thread_end();
	return NULL;
}

/* Thread 1: the timed wait, DEADLINE_NS ahead on the (virtual)
 * CLOCK_REALTIME. */
static void *waiter(void *arg)
{
	(void)arg;
	hl__sched_thread_begin(1);
	hl__sched_sleep_ns(WAITER_START_NS);    /* the holder has the lock by then */
	struct timespec now;
	hl__sched_clock_gettime(CLOCK_REALTIME, &now);
	uint64_t abs = (uint64_t)now.tv_sec * NS + (uint64_t)now.tv_nsec + DEADLINE_NS;
	struct timespec dl = { (time_t)(abs / NS), (long)(abs % NS) };
	switch (the_case->op) {
	case RDLOCK:
		waiter_rc = hl_rwlock_timedrdlock(&rw, CLOCK_REALTIME, &dl);
		break;
	case WRLOCK:
		waiter_rc = hl_rwlock_timedwrlock(&rw, CLOCK_REALTIME, &dl);
		break;
	case MUTEX:
		waiter_rc = hl_mutex_timedlock(&mu, CLOCK_REALTIME, &dl);
		break;
	case COND:
		if (hl_mutex_lock(&cv_mu))
			fail("the waiter's lock");
		waiter_rc = hl_cond_timedwait(&cv, &cv_mu, CLOCK_REALTIME, &dl);
		if (hl_mutex_unlock(&cv_mu))
			fail("the waiter's unlock");
		break;
	}
	waiter_done_at = hl__sched_now_ns();
	hl__sched_thread_end();
	return NULL;
}

static _Noreturn void run_case(void)
{
	struct hl__sched_params p = {
		.seed = 1, .strategy = HL_SCHED_RANDOM, .threads = 2, .pct_depth = 1,
		.max_steps = 1000000, .step_ns = 100, .cpus = 2,
	};
	alarm(60);              /* a hang of the scheduler itself */
	hl__sched_init(&p);
	if (hl_rwlock_init_kind(&rw, the_case->kind) || hl_mutex_init(&mu) ||
	    hl_mutex_init(&cv_mu) || hl_cond_init(&cv))
		fail("init");
	pthread_t t[2];
	if (pthread_create(&t[0], NULL, holder, NULL) || pthread_create(&t[1], NULL, waiter, NULL))
		fail("pthread_create");
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	if (waiter_rc != ETIMEDOUT) {
		fprintf(stderr, "test_clock_set %s: the waiter returned %d (%s), not ETIMEDOUT\n",
			the_case->name, waiter_rc, strerror(waiter_rc));
		_exit(1);
	}
	if (waiter_done_at < clock_set_at || waiter_done_at - clock_set_at > LATE_NS) {
		fprintf(stderr,
			"test_clock_set %s: the waiter returned %.3f s after the clock was set past "
			"its deadline (at most %.3f s)\n", the_case->name,
			((double)waiter_done_at - (double)clock_set_at) / 1e9, (double)LATE_NS / 1e9);
		_exit(1);
	}
	printf("ok   %s: ETIMEDOUT %.6f s after the clock was set\n", the_case->name,
	       (double)(waiter_done_at - clock_set_at) / 1e9);
	fflush(stdout);
	_exit(0);
}

int main(int argc, char **argv)
{
	int failed = 0, ran = 0;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (argc > 1 && strcmp(argv[1], cases[i].name))
			continue;
		ran++;
		the_case = &cases[i];
		fflush(stdout);
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0)
			run_case();
		int st;
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
			printf("FAIL %s (status 0x%x)\n", cases[i].name, st);
			failed++;
		}
	}
	if (!ran) {
		fprintf(stderr, "test_clock_set: no case named %s\n", argc > 1 ? argv[1] : "");
		return 2;
	}
	return failed ? 1 : 0;
}

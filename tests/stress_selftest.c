/* SPDX-License-Identifier: MIT */
/* Self-test of the stress harness: it must fail on broken locks, for the
 * right reason, and pass on a correct one.  Each case runs the harness in a
 * forked child (output captured) and the parent checks how the child ended:
 *   no-exclusion   a spinlock whose trylock always "succeeds" without taking
 *                  the lock: the counter pair / owner slot must catch it
 *                  (exit 1, "mutual exclusion violated"; in a TSan build a
 *                  ThreadSanitizer data race report in the harness's critical
 *                  section is the same finding, seen first).
 *   deadlock       a lock whose unlock forgets to release, so the second
 *                  lock() never returns: the watchdog (1 s) must fire (exit
 *                  STRESS_EXIT_HANG, "WATCHDOG", the lock's describe() line and
 *                  the threads' states printed) well before the parent's
 *                  30 s limit.
 *   early-timeout  a timedlock that returns ETIMEDOUT at once: caught as a
 *                  timeout before its deadline (exit 1).
 *   broken-rwlock  a reader-writer lock whose readers take nothing: a reader
 *                  inside with a writer must be reported (exit 1).
 *   broken-relock  a relock op (the condition-variable wait hook) that
 *                  releases the lock and returns without taking it again:
 *                  reported as a violation (exit 1).
 *   control        correct locks (pthread mutex with a condition-variable
 *                  relock; pthread rwlock with overlapping readers) through
 *                  the same path: exit 0 with a summary line, so the
 *                  failures above come from the broken locks and not from
 *                  the child machinery. */
#include "common.h"
#include "stress.h"

#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>

/* ---- broken lock 1: trylock does not exclude ---- */

static atomic_int spin_flag;

static int spin_lock(void *o)
{
	while (atomic_exchange(&spin_flag, 1))
		sched_yield();
	return 0;
}
static int spin_trylock_broken(void *o)
{
	return 0; /* the bug: "succeeds" without taking the lock */
}
static int spin_timedlock(void *o, const struct timespec *abs)
{
	return spin_lock(o);
}
static int spin_timedlock_early(void *o, const struct timespec *abs)
{
	return ETIMEDOUT; /* the bug: gives up before the deadline */
}
static int spin_unlock(void *o)
{
	atomic_store(&spin_flag, 0);
	return 0;
}

/* ---- broken lock 2: unlock does not release ---- */

static sem_t dead_sem;
static atomic_int dead_calls;

static int dead_lock(void *o)
{
	atomic_fetch_add(&dead_calls, 1);
	while (sem_wait(&dead_sem) != 0 && errno == EINTR)
		;
	return 0;
}
static int dead_unlock(void *o)
{
	return 0; /* the bug: the semaphore is never posted */
}
static int dead_describe(void *o, char *buf, size_t len)
{
	int v = -1;
	sem_getvalue(&dead_sem, &v);
	return snprintf(buf, len, "broken-deadlock: semaphore value %d, %d lock calls",
			v, atomic_load(&dead_calls));
}

/* ---- a correct lock ---- */

static pthread_mutex_t pm = PTHREAD_MUTEX_INITIALIZER;

static int pm_lock(void *o) { return pthread_mutex_lock(&pm); }
static int pm_trylock(void *o) { return pthread_mutex_trylock(&pm); }
/* trylock until the deadline: pthread_mutex_clocklock is not known to
 * every ThreadSanitizer runtime. */
static int pm_timedlock(void *o, const struct timespec *abs)
{
	for (;;) {
		if (pthread_mutex_trylock(&pm) == 0)
			return 0;
		if (now_ns() >= ts_to_ns(abs))
			return ETIMEDOUT;
		sched_yield();
	}
}
static int pm_unlock(void *o) { return pthread_mutex_unlock(&pm); }
static int pm_describe(void *o, char *buf, size_t len)
{
	return snprintf(buf, len, "pthread mutex");
}

/* ---- reader-writer locks: broken (readers ignore writers) and correct ---- */

static int rd_noop(void *o) { return 0; } /* the bug: takes nothing */

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static int rw_wrlock(void *o) { return pthread_rwlock_wrlock(&rw); }
static int rw_rdlock(void *o) { return pthread_rwlock_rdlock(&rw); }
static int rw_tryrdlock(void *o) { return pthread_rwlock_tryrdlock(&rw); }
static int rw_trywrlock(void *o) { return pthread_rwlock_trywrlock(&rw); }
static int rw_unlock(void *o) { return pthread_rwlock_unlock(&rw); }

/* ---- relock (a condition-variable wait): broken and correct ---- */

static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static int pm_relock(void *o)
{
	struct timespec ts;
	int rc;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts = ns_to_ts(ts_to_ns(&ts) + 100 * NSEC_PER_USEC);
	pthread_cond_signal(&cv);
	rc = pthread_cond_timedwait(&cv, &pm, &ts);
	return rc;
}

static int spin_relock_broken(void *o)
{
	spin_unlock(o);
	/* Give another thread the lock before returning, so that the overlap
	 * is certain: a single sched_yield let a loaded machine (an ASan
	 * build beside other jobs) run 300,000 operations with no other
	 * thread taking the lock in the window, and 10,000 yields let one
	 * with both CPUs taken by other jobs run 419 operations in 2 s with
	 * none.  Bounded: 10,000 yields, then sleeps for up to 100 ms, which
	 * give the other threads a CPU however busy the machine is. */
	for (int i = 0; i < 10000 && !atomic_load(&spin_flag); i++)
		sched_yield();
	for (int i = 0; i < 2000 && !atomic_load(&spin_flag); i++)
		sleep_ns(50 * NSEC_PER_USEC);
	return 0; /* the bug: returns without taking the lock again */
}

/* ---- the children ---- */

enum which { NOEXCL, DEADLOCK, EARLY, RW_BROKEN, RELOCK_BROKEN, CONTROL, RW_CONTROL };

static int child(void *arg)
{
	enum which w = (enum which)(intptr_t)arg;
	stress_ops_t ops = { .obj = NULL };
	stress_config_t cfg;
	stress_result_t res;
	int bad;

	stress_config_default(&cfg);
	cfg.threads = 4;
	cfg.duration_ms = 2000;
	switch (w) {
	case NOEXCL:
		ops.name = "broken-noexcl";
		ops.lock = spin_lock;
		ops.trylock = spin_trylock_broken;
		ops.timedlock = spin_timedlock;
		ops.unlock = spin_unlock;
		cfg.pct_trylock = 50;
		cfg.pct_cs_sleep = 10; /* owners linger: overlap is certain */
		cfg.cs_sleep_max_us = 200;
		break;
	case DEADLOCK:
		sem_init(&dead_sem, 0, 1);
		ops.name = "broken-deadlock";
		ops.lock = dead_lock;
		ops.unlock = dead_unlock;
		ops.describe = dead_describe;
		cfg.watchdog_ms = 1000;
		cfg.duration_ms = 3000;
		break;
	case EARLY:
		ops.name = "broken-early-timeout";
		ops.lock = spin_lock;
		ops.timedlock = spin_timedlock_early;
		ops.unlock = spin_unlock;
		cfg.pct_timedlock = 50;
		break;
	case RW_BROKEN:
		ops.name = "broken-rwlock";
		ops.lock = spin_lock;
		ops.unlock = spin_unlock;
		ops.rdlock = rd_noop;
		ops.rdunlock = rd_noop;
		cfg.pct_read = 50;
		cfg.pct_cs_sleep = 10;
		cfg.cs_sleep_max_us = 200;
		break;
	case RELOCK_BROKEN:
		ops.name = "broken-relock";
		ops.lock = spin_lock;
		ops.unlock = spin_unlock;
		ops.relock = spin_relock_broken;
		cfg.pct_relock = 30;
		break;
	case RW_CONTROL:
		ops.name = "pthread-rwlock-control";
		ops.lock = rw_wrlock;
		ops.trylock = rw_trywrlock;
		ops.unlock = rw_unlock;
		ops.rdlock = rw_rdlock;
		ops.tryrdlock = rw_tryrdlock;
		ops.rdunlock = rw_unlock;
		cfg.pct_read = 70;
		cfg.pct_trylock = 20;
		cfg.pct_cs_sleep = 2;
		cfg.duration_ms = 500;
		break;
	case CONTROL:
		ops.name = "pthread-control";
		ops.lock = pm_lock;
		ops.trylock = pm_trylock;
		ops.timedlock = pm_timedlock;
		ops.unlock = pm_unlock;
		ops.describe = pm_describe;
		ops.relock = pm_relock;
		cfg.pct_relock = 5;
		cfg.pct_trylock = 30;
		cfg.pct_timedlock = 30;
		cfg.pct_cs_sleep = 2;
		cfg.pct_cs_yield = 5;
		cfg.duration_ms = 500;
		cfg.watchdog_ms = 10000;
		break;
	}
	bad = stress_run(&ops, &cfg, &res);
	printf("child: stress_run returned %d (violations %d, errors %d)\n", bad,
	       res.violations, res.errors);
	stress_result_free(&res);
	return bad ? 1 : 0;
}

static char out[1 << 16];

static void show_output(const char *name)
{
	printf("---- %s: child output ----\n%s---- end ----\n", name, out);
}

int main(void)
{
	int status, r;
	char sb[64];
	int64_t t0, dt;

	printf("test_stress_selftest: TSan build: %s\n", TEST_TSAN ? "yes" : "no");

	/* 1. no exclusion */
	r = run_in_child(child, (void *)(intptr_t)NOEXCL, 60000, out, sizeof(out), &status);
	show_output("no-exclusion");
	CHECK(r == 0, "no-exclusion: the child hung and was killed");
	if (r == 0) {
		bool harness = WIFEXITED(status) && WEXITSTATUS(status) == 1 &&
			strstr(out, "mutual exclusion violated") != NULL;
		bool tsan = TEST_TSAN && strstr(out, "ThreadSanitizer: data race") &&
			(strstr(out, "cs_open") || strstr(out, "cs_close") ||
			 strstr(out, "cs_read"));
		CHECK(harness || tsan, "no-exclusion: the child %s without reporting a "
		      "mutual exclusion violation", describe_status(status, sb, sizeof(sb)));
		printf("no-exclusion: caught (%s, by %s)\n",
		       describe_status(status, sb, sizeof(sb)),
		       harness ? "the counter pair" : "ThreadSanitizer");
	}

	/* 1b. readers that ignore writers, a relock that does not relock */
	{
		const struct { enum which w; const char *name; } cases[] = {
			{ RW_BROKEN, "broken-rwlock" }, { RELOCK_BROKEN, "broken-relock" },
		};
		for (int i = 0; i < 2; i++) {
			r = run_in_child(child, (void *)(intptr_t)cases[i].w, 60000, out,
					 sizeof(out), &status);
			show_output(cases[i].name);
			CHECK(r == 0, "%s: the child hung and was killed", cases[i].name);
			if (r == 0) {
				bool harness = WIFEXITED(status) && WEXITSTATUS(status) == 1 &&
					strstr(out, "mutual exclusion violated") != NULL;
				bool tsan = TEST_TSAN && strstr(out, "ThreadSanitizer: data race") &&
					(strstr(out, "cs_open") || strstr(out, "cs_close") ||
					 strstr(out, "cs_read") || strstr(out, "cs_work"));
				CHECK(harness || tsan, "%s: the child %s without reporting a mutual "
				      "exclusion violation", cases[i].name,
				      describe_status(status, sb, sizeof(sb)));
			}
		}
	}

	/* 2. deadlock: the watchdog must fire */
	t0 = now_ns();
	r = run_in_child(child, (void *)(intptr_t)DEADLOCK, 30000, out, sizeof(out), &status);
	dt = now_ns() - t0;
	show_output("deadlock");
	CHECK(r == 0, "deadlock: the watchdog did not fire; the child was killed after 30 s");
	if (r == 0) {
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == STRESS_EXIT_HANG,
		      "deadlock: the child %s, expected exit status %d",
		      describe_status(status, sb, sizeof(sb)), STRESS_EXIT_HANG);
		CHECK(strstr(out, "WATCHDOG") != NULL, "deadlock: no WATCHDOG message");
		CHECK(strstr(out, "lock state: broken-deadlock: semaphore value 0") != NULL,
		      "deadlock: the lock's describe() line was not printed");
		CHECK(strstr(out, "in lock()") != NULL,
		      "deadlock: the threads' states were not printed");
		CHECK(dt < 20 * NSEC_PER_SEC, "deadlock: the watchdog took %.1f s", dt / 1e9);
		printf("deadlock: caught by the watchdog after %.1f s (%s)\n", dt / 1e9,
		       describe_status(status, sb, sizeof(sb)));
	}

	/* 3. timedlock that gives up early */
	r = run_in_child(child, (void *)(intptr_t)EARLY, 60000, out, sizeof(out), &status);
	show_output("early-timeout");
	CHECK(r == 0, "early-timeout: the child hung and was killed");
	if (r == 0) {
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1 &&
		      strstr(out, "before its deadline") != NULL,
		      "early-timeout: the child %s without reporting the early timeout",
		      describe_status(status, sb, sizeof(sb)));
	}

	/* 4. a correct lock passes */
	r = run_in_child(child, (void *)(intptr_t)CONTROL, 60000, out, sizeof(out), &status);
	show_output("control");
	CHECK(r == 0, "control: the child hung and was killed");
	if (r == 0) {
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "control: a correct lock failed the harness: the child %s",
		      describe_status(status, sb, sizeof(sb)));
		CHECK(strstr(out, "stress [pthread-control]: 4 threads") != NULL,
		      "control: no summary line");
	}
	/* 5. a correct reader-writer lock passes, readers overlapping */
	r = run_in_child(child, (void *)(intptr_t)RW_CONTROL, 60000, out, sizeof(out), &status);
	show_output("rwlock control");
	CHECK(r == 0, "rwlock control: the child hung and was killed");
	if (r == 0)
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "rwlock control: a correct rwlock failed the harness: the child %s",
		      describe_status(status, sb, sizeof(sb)));
	return test_finish("test_stress_selftest");
}

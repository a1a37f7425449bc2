/* SPDX-License-Identifier: MIT */
/* hotlock stress harness: many threads hammer one lock through an ops table
 * and the harness checks, on every critical section, that the lock excludes.
 *
 * What it checks
 *   - Mutual exclusion, on every acquisition: a pair of plain (deliberately
 *     non-atomic, volatile so the compiler keeps every access) counters a, b
 *     is written inside the critical section: on entry a == b must hold, then
 *     a++, the work, a == b + 1 must still hold, then b++.  An atomic owner
 *     slot must be empty on entry and still hold this thread on exit.  Two
 *     threads inside at once break one of these; in a ThreadSanitizer build
 *     the plain counters also make TSan check that the lock orders memory
 *     (release on unlock, acquire on lock).
 *   - Reader-writer locks (ops with rdlock): readers may overlap each other
 *     but never a writer: a reader sees a == b throughout, a writer sees no
 *     reader inside.
 *   - Return codes: lock 0, trylock 0/EBUSY, timedlock 0/ETIMEDOUT and never
 *     ETIMEDOUT before its deadline, unlock 0.
 *   - Progress: a watchdog thread fails the run (prints the lock's describe()
 *     line and every thread's state, then _exit(STRESS_EXIT_HANG)) when any
 *     worker completes no operation for watchdog_ms.  Critical-section sleeps
 *     are bounded (at most cs_sleep_max_us), so a healthy worker always
 *     completes operations.
 *
 * What it records: per-thread operation counts, trylock/timedlock failures,
 * and the worst wait (from calling lock() to holding the lock); a summary
 * line per run (threads, total ops, per-thread min/avg/max, worst wait).
 *
 * Stall accounting, for time bounds on a noisy machine: the exclusive holder
 * measures how long its critical section lasted and how long the handover
 * took (the previous release to its acquisition).  The part of either that
 * exceeds 2 ms is "stall": time in which the lock could not progress because
 * its holder, or the thread it was handed to, did not run (preempted by the
 * scheduler or, on a VM, by the host).  Each lock() wait also records how
 * much stall happened during it, so a bound on waiting can be checked on the
 * wait minus the stall inside it (worst_wait_adj_ns) as well as raw.  The
 * run's total stall is reported so that a test can also bound it.  Read-side
 * acquisitions do not take part (several readers hold the lock at once).
 *
 * The harness stops a run at the first violation or unexpected return code
 * and reports it; stress_run() returns nonzero then.  It never calls exit()
 * except from the watchdog (the workers are stuck then; joining them would
 * hang). */
#ifndef HOTLOCK_TESTS_STRESS_H
#define HOTLOCK_TESTS_STRESS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Exit status of a process whose run the watchdog failed. */
#define STRESS_EXIT_HANG 3

/* The lock under test.  obj is passed to every op.  Optional ops may be NULL:
 * a missing trylock/timedlock is replaced by lock, a missing describe prints
 * nothing, and the read side is used only when rdlock and rdunlock are set. */
typedef struct stress_ops {
	const char *name;
	void *obj;
	int (*lock)(void *obj);                            /* 0 */
	int (*trylock)(void *obj);                         /* 0 or EBUSY */
	/* abs is a CLOCK_MONOTONIC deadline.  0 or ETIMEDOUT. */
	int (*timedlock)(void *obj, const struct timespec *abs);
	int (*unlock)(void *obj);                          /* 0 */
	int (*describe)(void *obj, char *buf, size_t len);
	/* Shared (read) side, for reader-writer locks. */
	int (*rdlock)(void *obj);
	int (*tryrdlock)(void *obj);
	int (*timedrdlock)(void *obj, const struct timespec *abs);
	int (*rdunlock)(void *obj);
	/* Called inside an exclusive critical section: releases the lock and
	 * takes it again before returning (a condition-variable wait with a
	 * short timeout, for instance); the harness closes its critical section
	 * around the call.  0 or ETIMEDOUT. */
	int (*relock)(void *obj);
	/* Optional: called by each worker (index 0..threads-1) on its own
	 * thread before its first operation, before the run starts (to place
	 * the thread on a node, make it prioritized, ...). */
	void (*thread_init)(void *obj, int index);
} stress_ops_t;

/* A controlled run (tests/sched.c): the workers run under a scheduler
 * that decides who runs when, in virtual time.  With hooks, the harness
 * starts no watchdog (the scheduler reports a hang), each worker calls
 * thread_begin after the start barrier and before thread_init, and
 * thread_end after its last operation; the harness's clock, sleeps and
 * yields are the hooks', and point() is called inside every critical
 * section between the checks, so that a lock that lets two threads in can
 * be caught there.  failed() is told of the first violation or error and
 * need not return; report_with() hands the scheduler a function that
 * prints the harness's view of the run (as the watchdog does). */
typedef struct stress_hooks {
	void (*thread_begin)(int index);
	void (*thread_end)(void);
	int64_t (*now_ns)(void);        /* CLOCK_MONOTONIC as the lock sees it */
	void (*point)(void);
	void (*sleep_ns)(int64_t ns);
	void (*yield)(void);
	void (*failed)(const char *msg);
	void (*report_with)(void (*print)(void *run), void *run);
} stress_hooks_t;

typedef struct stress_config {
	const char *label;      /* printed in the summary line */
	int threads;
	int duration_ms;
	/* Operation mix, in percent of operations; the rest are lock(). */
	int pct_trylock;
	int pct_timedlock;
	int timed_max_us;       /* timedlock timeouts uniform in [0, this] us;
				   one in ten has already expired */
	int pct_read;           /* of operations, when the ops have a read side */
	int pct_relock;         /* of exclusive critical sections, with relock */
	/* Critical-section behaviour, in percent of critical sections. */
	int pct_cs_sleep;       /* nanosleep 1 us .. cs_sleep_max_us */
	int cs_sleep_max_us;    /* at most 1000 */
	int pct_cs_yield;       /* sched_yield() while holding the lock */
	int cs_work;            /* pause iterations touching shared data */
	int ncs_work;           /* pause iterations outside, random 0..2x */
	int watchdog_ms;        /* no progress for this long fails the run */
	uint64_t seed;
	int quiet;              /* no summary line */
	/* Each worker stops after this many operations (failed trylocks and
	 * timedlocks included) instead of at duration_ms; 0: by duration. */
	int ops_per_thread;
	const stress_hooks_t *hooks;    /* NULL: real threads in real time */
} stress_config_t;

typedef struct stress_thread_result {
	uint64_t ops;           /* completed acquisitions (any kind) */
	uint64_t locks;         /* lock()/rdlock() calls */
	uint64_t trylocks, trylock_fail;
	uint64_t timedlocks, timedlock_fail;
	uint64_t reads;         /* acquisitions of the read side */
	uint64_t relocks;
	uint64_t worst_wait_ns; /* lock()/rdlock(): call to holding */
	uint64_t worst_wait_stall_ns;   /* stall time inside that worst wait */
	uint64_t worst_wait_adj_ns;     /* worst of (wait - stall inside it) */
	uint64_t total_wait_ns;
} stress_thread_result_t;

typedef struct stress_result {
	int threads;
	int64_t elapsed_ns;
	uint64_t total_ops, min_ops, max_ops;
	double avg_ops;
	uint64_t trylock_fail, timedlock_fail;
	uint64_t reads;         /* read-side acquisitions */
	int max_readers;        /* most readers seen inside at once */
	uint64_t worst_wait_ns;
	int worst_wait_thread;
	uint64_t worst_wait_adj_ns;     /* worst stall-adjusted wait */
	uint64_t stall_ns;              /* total stall time of the run */
	uint64_t max_cs_ns;             /* longest exclusive critical section */
	uint64_t max_gap_ns;            /* longest release-to-acquire handover */
	int violations;         /* mutual exclusion violations seen */
	int errors;             /* unexpected return codes */
	stress_thread_result_t *per_thread;   /* threads entries */
} stress_result_t;

/* Defaults: 4 threads, stress_duration_ms(), lock only, cs_work 50,
 * ncs_work 20, cs_sleep_max_us 1000, watchdog 10 s, seed from HOTLOCK_SEED
 * or a fixed value. */
void stress_config_default(stress_config_t *cfg);

/* HOTLOCK_STRESS_MS, else 1500 (700 in sanitizer builds). */
int stress_duration_ms(void);

/* For a test run in rounds: the next round's operations per worker, from
 * the last round's rate (ops in took_ns), aiming at round_ns but not past
 * the end (left_ns); at most 4 times the last round, at least 16. */
int stress_next_round_ops(int ops, int64_t took_ns, int64_t left_ns, int64_t round_ns);

/* Runs the stress test; fills *res (free it with stress_result_free).
 * Returns 0 when every check passed, else the number of violations plus
 * errors (the first few are printed to stderr as they happen). */
int stress_run(const stress_ops_t *ops, const stress_config_t *cfg,
	       stress_result_t *res);

void stress_result_free(stress_result_t *res);

/* The summary line stress_run prints (also for callers that want it again). */
void stress_print_summary(const stress_ops_t *ops, const stress_config_t *cfg,
			  const stress_result_t *res);

#endif

/* SPDX-License-Identifier: MIT */
/* The controlled-schedule mode: the library's real code, run one thread at
 * a time by a deterministic scheduler.  The scheduler is the tests'
 * (tests/controlled.c, with its design); this header is what the library
 * is built against.
 *
 * Only a build with -DHOTLOCK_SCHED has it (the static library
 * libhotlock_sched.a, built for the tests): there every atomic of
 * src/atomics.h, every pause and yield of a spin loop, every futex call and
 * every clock read of the library goes through the hooks below.  The
 * ordinary library has none of this.
 *
 * Use, from a test (tests/sched.c): in a fresh process, hl__sched_init;
 * then start the threads, each of which calls hl__sched_thread_begin(i)
 * before its first lock call and hl__sched_thread_end after its last; the
 * scheduler starts once all have begun and stops when all have ended.  A
 * failure (every thread blocked for good, a step limit passed, an
 * hl__sched_fail from the test, an internal error of the library) prints
 * the schedule and ends the process with HL_SCHED_EXIT_FAIL. */
#ifndef HOTLOCK_CONTROLLED_H
#define HOTLOCK_CONTROLLED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define HL_SCHED_MAX_THREADS 16
#define HL_SCHED_EXIT_FAIL 86

enum hl__sched_strategy {
	/* Every step, the next thread uniformly among those that can run. */
	HL_SCHED_RANDOM,
	/* PCT (Burckhardt et al., ASPLOS 2010): random distinct thread
	 * priorities, the highest runnable thread runs; at pct_depth - 1
	 * random steps in [1, pct_steps] the running thread drops below all
	 * others.  A thread that pauses or yields in a spin loop (it waits
	 * for another) also drops to the bottom, so that spinning never
	 * starves the thread it waits for. */
	HL_SCHED_PCT,
};

struct hl__sched_params {
	uint64_t seed;
	enum hl__sched_strategy strategy;
	int threads;                    /* that will call hl__sched_thread_begin */
	int pct_depth;                  /* PCT's d (>= 1) */
	uint64_t pct_steps;             /* PCT's k: the change points fall in [1, k] */
	uint64_t max_steps;             /* more is a livelock: fail */
	uint64_t step_ns;               /* virtual time one step takes */
	unsigned spurious_per_64k;      /* chance a parked thread wakes for nothing, per step */
	unsigned jump_per_64k;          /* chance, per step, that time jumps to the next
					   deadline (the running thread preempted
					   that long): timers fire between any two steps */
	unsigned drop_wake_per_64k;     /* chance a futex_wake wakes nobody: a seeded
					   fault, for the test of the checker */
	int cpus;                       /* what the library's spinner slots see */
	bool trace;                     /* print every step as it happens */
	const char *replay;             /* printed on failure: how to run this schedule again */
};

struct hl__sched_stats {
	uint64_t steps;                 /* scheduling points */
	uint64_t switches;              /* steps at which another thread ran next */
	uint64_t futex_waits;           /* threads put to sleep by futex_wait */
	uint64_t timeouts;              /* futex_wait/sleep ended by virtual time */
	uint64_t spurious;              /* futex_wait ended for nothing */
	uint64_t jumps;                 /* of time to the next deadline */
	uint64_t now_ns;                /* virtual CLOCK_MONOTONIC at the end */
	uint64_t signals;               /* handlers run (hl__sched_set_signal) */
	uint64_t trace_hash;            /* of every step's (thread, kind, file, line) */
};

#ifdef HOTLOCK_SCHED

/* ---- for the test ---- */

void hl__sched_init(const struct hl__sched_params *p);
void hl__sched_thread_begin(int index);
void hl__sched_thread_end(void);
/* A scheduling point of the test's own (inside a critical section, so that
 * another thread may run there if the lock lets it). */
void hl__sched_yield(void);
/* Sleeps ns of virtual time (other threads run meanwhile). */
void hl__sched_sleep_ns(uint64_t ns);
/* Virtual CLOCK_MONOTONIC, as the library sees it. */
uint64_t hl__sched_now_ns(void);
/* Sets CLOCK_REALTIME forward (or back) by delta_ns, as settimeofday
 * would: CLOCK_MONOTONIC does not move, and a futex wait on a
 * CLOCK_REALTIME deadline ends once the clock passes it. */
void hl__sched_set_realtime(int64_t delta_ns);
/* Prints msg, the schedule, and ends the process. */
_Noreturn void hl__sched_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Called on failure, after the schedule is printed (the lock's state). */
void hl__sched_on_failure(void (*fn)(void *arg), void *arg);
/* Names [obj, obj + size) in the printed schedule. */
void hl__sched_name(const void *obj, size_t size, const char *name);
/* Signals: from now on, at each scheduling point of a scheduled thread that
 * is not running the handler already, handler() runs first with
 * probability per_64k / 65536, on that thread, as if a signal had arrived
 * between two of its instructions.  The handler's own atomics are
 * scheduling points like any others; it does not nest. */
void hl__sched_set_signal(void (*handler)(void), unsigned per_64k);
/* The calling thread frees [obj, obj + size) (a lock it has destroyed):
 * from now on a scheduling point of any thread on an address in it fails
 * the schedule, as a use after free (docs/design.md invariant 7: after
 * the store that lets another thread take a lock, the releaser touches
 * nothing of it, so its last user may free it at once). */
void hl__sched_free(const void *obj, size_t size);
/* After every thread has ended. */
void hl__sched_stats(struct hl__sched_stats *out);

/* ---- for the library (atomics.h, futex.c, internal.h) ---- */

enum hl__sched_kind {
	HL_SP_LOAD, HL_SP_STORE, HL_SP_XCHG, HL_SP_CAS, HL_SP_RMW,
	HL_SP_PAUSE,            /* hl__cpu_relax: spinning, waiting for another */
	HL_SP_YIELD,            /* sched_yield in a spin loop, or the test's */
	HL_SP_FUTEX_WAIT, HL_SP_FUTEX_WAKE, HL_SP_SLEEP, HL_SP_TEST,
};

void hl__sched_point(int kind, const volatile void *addr, const char *file, int line);
int hl__sched_futex_wait(uint32_t *addr, uint32_t val, clockid_t clock,
			 const struct timespec *abstime);
int hl__sched_futex_wake(uint32_t *addr, int n);
void hl__sched_clock_gettime(clockid_t clock, struct timespec *ts);
/* A per-thread seed for the library's own random choices (CNA's SRO). */
uint32_t hl__sched_thread_seed(void);
int hl__sched_cpus(void);
/* hl__bug's report, inside a schedule: the schedule, then the process
 * ends.  Returns outside one. */
void hl__sched_bug(const char *what, unsigned long value);

#endif
#endif

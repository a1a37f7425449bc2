/* SPDX-License-Identifier: MIT */
/* Internal helpers shared by every layer: symbol visibility, branch hints,
 * time, deadlines. */
#ifndef HOTLOCK_INTERNAL_H
#define HOTLOCK_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "atomics.h"

/* Library-internal functions: not exported from libhotlock.so. */
#define HL_HIDDEN __attribute__((visibility("hidden")))

/* A broken protocol invariant: print and abort (never continue with a
 * corrupted lock). */
HL_HIDDEN _Noreturn void hl__bug(const char *what, unsigned long value);
/* Reads the small file at path into buf, of len bytes: at most len - 1
 * bytes with one read, then a 0.  Returns the length read, or -1 if the
 * file cannot be opened or read, or is empty.  The descriptor is closed at
 * once (none is kept for a program that reuses descriptors to take); errno
 * as it was; no allocation (wait.c's hl__machine_learn runs where a thread
 * starts, which may be inside the program's allocator). */
HL_HIDDEN ssize_t hl__read_small_file(const char *path, char *buf, size_t len);

#define hl__likely(x)   __builtin_expect(!!(x), 1)
#define hl__unlikely(x) __builtin_expect(!!(x), 0)
/* For a slow path called from a fast one: kept out of line, so that the
 * fast path needs no stack frame of its own. */
#define HL_NOINLINE __attribute__((noinline))

#define HL_NSEC_PER_SEC 1000000000ull

/* A clock reading in nanoseconds.  Only for times the library reads itself:
 * a caller's tv_sec may be anything up to INT64_MAX and would wrap. */
static inline uint64_t hl__ts_to_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * HL_NSEC_PER_SEC + (uint64_t)ts->tv_nsec;
}

/* A caller-supplied time (tv_nsec already checked to be in [0, 1e9)) in
 * nanoseconds, saturating: UINT64_MAX from 18446744073.709551615 s on (year
 * 2554), 0 for a negative tv_sec. */
static inline uint64_t hl__ts_to_ns_sat(const struct timespec *ts)
{
	if (ts->tv_sec < 0)
		return 0;
	uint64_t sec = (uint64_t)ts->tv_sec, nsec = (uint64_t)ts->tv_nsec;
	if (sec > (UINT64_MAX - nsec) / HL_NSEC_PER_SEC)
		return UINT64_MAX;
	return sec * HL_NSEC_PER_SEC + nsec;
}

/* a + b, saturating at UINT64_MAX. */
static inline uint64_t hl__add_sat(uint64_t a, uint64_t b)
{
	return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

/* Every clock read of the library: in the controlled-schedule build
 * (src/controlled.h), the scheduler's virtual time. */
static inline void hl__clock_gettime(clockid_t clock, struct timespec *ts)
{
#ifdef HOTLOCK_SCHED
	hl__sched_clock_gettime(clock, ts);
#else
	clock_gettime(clock, ts);
#endif
}

static inline uint64_t hl__clock_ns(clockid_t clock)
{
	struct timespec ts;
	hl__clock_gettime(clock, &ts);
	return hl__ts_to_ns(&ts);
}

/* Sleeps ns nanoseconds (a poll's back-off; virtual time in the
 * controlled-schedule build). */
static inline void hl__sleep_ns(long ns)
{
#ifdef HOTLOCK_SCHED
	hl__sched_sleep_ns((uint64_t)ns);
#else
	struct timespec ts = { ns / (long)HL_NSEC_PER_SEC, ns % (long)HL_NSEC_PER_SEC };
	int saved = errno;
	nanosleep(&ts, NULL);
	errno = saved;
#endif
}

/* CLOCK_MONOTONIC in nanoseconds (vDSO, no syscall). */
static inline uint64_t hl__now_ns(void)
{
	return hl__clock_ns(CLOCK_MONOTONIC);
}

/* An absolute timeout as the caller gave it; NULL means "wait forever".
 * A deadline may also pass early, when *interrupt becomes non-zero (the
 * pthread shim's cancellation: src/preload/shim_cond.c), and then need not
 * have a time at all (forever). */
struct hl__deadline {
	clockid_t clock;        /* CLOCK_MONOTONIC or CLOCK_REALTIME */
	bool forever;           /* no time: passes only by interrupt */
	struct timespec abs;
	const _Atomic uint32_t *interrupt;      /* NULL: none */
};

/* EINVAL for an unknown clock or a tv_nsec outside [0, 1e9). */
static inline int hl__deadline_init(struct hl__deadline *dl, clockid_t clock,
				   const struct timespec *abstime)
{
	if (clock != CLOCK_MONOTONIC && clock != CLOCK_REALTIME)
		return EINVAL;
	if (!abstime || abstime->tv_nsec < 0 || abstime->tv_nsec >= (long)HL_NSEC_PER_SEC)
		return EINVAL;
	dl->clock = clock;
	dl->forever = false;
	dl->abs = *abstime;
	dl->interrupt = NULL;
	return 0;
}

/* Compared as timespecs, exact for any tv_sec.  (Where a deadline must
 * become nanoseconds, hl__ts_to_ns_sat saturates.) */
static inline bool hl__deadline_passed(const struct hl__deadline *dl)
{
	if (!dl)
		return false;
	/* Relaxed: an interrupt publishes nothing but itself. */
	if (dl->interrupt && hl__load(dl->interrupt, HL_RELAXED))
		return true;
	if (dl->forever)
		return false;
	struct timespec now;
	hl__clock_gettime(dl->clock, &now);
	return now.tv_sec > dl->abs.tv_sec ||
	       (now.tv_sec == dl->abs.tv_sec && now.tv_nsec >= dl->abs.tv_nsec);
}

/* One back-off step of the locks' poll fallback (lock_poll, for a thread
 * with no queue node): true once dl has passed; else sleeps *sleep_ns
 * (start it at 1 us), doubled each time up to 1 ms, and returns false. */
static inline bool hl__poll_backoff(const struct hl__deadline *dl, long *sleep_ns)
{
	if (hl__deadline_passed(dl))
		return true;
	hl__sleep_ns(*sleep_ns);
	if (*sleep_ns < 1000000)
		*sleep_ns *= 2;
	return false;
}

#endif

/* SPDX-License-Identifier: MIT */
/* hotlock: hl_cond_t, a condition variable for hl_mutex_t with wait
 * morphing: hl_cond_broadcast does not wake its waiters to fight for the
 * mutex, it moves them onto the mutex's waiter queue, where the mutex's own
 * unlocks wake them one at a time; a broadcast to N waiters makes at most
 * one futex call.  hl_cond_signal wakes the one waiter it chose.  See
 * docs/cond.md and the design comment in src/cond.c. */
#ifndef HOTLOCK_COND_H
#define HOTLOCK_COND_H

#include <stdint.h>
#include <sys/types.h> /* clockid_t, also in strict ISO C mode */
#include <time.h>

#include <hotlock/mutex.h>

#ifdef __cplusplus
extern "C" {
#endif

/* All-zero bytes are a valid condition variable with no waiters.  The
 * fields are private: accessed atomically by the library only (src/cond.c
 * pins the layout). */
typedef struct hl_cond {
	uint32_t lock_;     /* the waiter list's lock (with the fork generation) */
	uint32_t first_;    /* first waiter node (index | fork generation), 0: none */
	uint32_t last_;     /* last waiter node (index) */
	uint32_t refs_;     /* waiters that may still touch the condvar */
} hl_cond_t;

#define HL_COND_INIT { 0, 0, 0, 0 }

/* Every call returns 0 or an errno value, as pthread does. */
int hl_cond_init(hl_cond_t *c);
/* EBUSY while threads wait on c.  A condvar may be destroyed (and its
 * memory freed) as soon as its waiters have been signalled or broadcast to,
 * before they return from their waits. */
int hl_cond_destroy(hl_cond_t *c);
/* Releases m, waits until signalled, and takes m again before it returns.
 * EPERM: the caller does not hold m; EINVAL: other threads wait on c with
 * another mutex.  Spurious wake-ups: only when the thread has no waiter
 * node left (waits nested deeper than the library keeps nodes for), after
 * a 1 ms sleep; callers test their predicate in a loop, as POSIX asks. */
int hl_cond_wait(hl_cond_t *c, hl_mutex_t *m);
/* hl_cond_wait until the absolute time abstime on clock (CLOCK_REALTIME or
 * CLOCK_MONOTONIC).  ETIMEDOUT when the time passed before a signal chose
 * this thread, with m held again; EINVAL for an unknown clock or tv_nsec
 * outside [0, 1e9), checked before anything else. */
int hl_cond_timedwait(hl_cond_t *c, hl_mutex_t *m, clockid_t clock,
		      const struct timespec *abstime);
/* Wakes the thread that has waited longest, which then takes the mutex
 * again; no effect without waiters.  The caller need not hold the mutex. */
int hl_cond_signal(hl_cond_t *c);
/* Moves every thread waiting now onto the mutex's waiter queue, in the order
 * they began to wait: they wake one at a time, as the mutex is released to
 * them.  The caller need not hold the mutex. */
int hl_cond_broadcast(hl_cond_t *c);

#ifdef __cplusplus
}
#endif
#endif

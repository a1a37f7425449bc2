/* SPDX-License-Identifier: MIT */
/* The shim's side of the contention report (hotlock-run --stats): what its
 * lock paths call, only while shim_stats_on (set once, at load).  The
 * design is shim_stats.c's; stats.h is the interface to the report
 * library.  What runs on every acquisition of a tracked lock is inline
 * here and kept short, because it runs inside the critical section, and
 * touches the record's memory as seldom as it can, because that memory
 * moves between CPUs with the lock:
 *  - an acquisition that waited is counted, with what its wait cost, and
 *    its hold timed from the clock read that ended its wait;
 *  - of the acquisitions that did not wait, one in SAMPLE, picked at random
 *    (a per-thread xorshift, so that no program's pattern of locks falls
 *    in step with it), has its hold timed, and is counted SAMPLE times with
 *    that hold; the others cost a few instructions on the thread's own
 *    state (a denser sample costs more: docs/stats.md, "What it costs,
 *    and how it counts");
 *  - the counts are summed by the thread and added to the record seldom
 *    (shim_stats.c: struct sums);
 *  - times are read from shim_ticks: the CPU's time-stamp counter where the
 *    kernel keeps time by it, converted to nanoseconds for the report.
 * Counting and timing every acquisition under the lock, with
 * clock_gettime, would cost a program whose locks are busy a large share
 * of its rate (docs/stats.md, "Cost, measured").
 * Whatever goes into the record is an atomic add, made by threads side by
 * side; the only shared memory written inside the critical section is the
 * hold's start, into the object itself (its line is the lock's). */
#ifndef HOTLOCK_SHIM_STATS_H
#define HOTLOCK_SHIM_STATS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "internal.h"
#include "stats.h"
#include "stats_area.h"
#include "thread.h"

#define SAMPLE 64               /* acquisitions without a wait per counted one */

HL_HIDDEN extern bool shim_stats_on;
HL_HIDDEN extern bool shim_tsc;
HL_HIDDEN extern struct stats_rec *shim_recs;
HL_HIDDEN extern struct area_slot *shim_slot;
HL_HIDDEN extern __thread uint32_t shim_sample_state __attribute__((tls_model("initial-exec")));
HL_HIDDEN extern __thread uint64_t shim_releases __attribute__((tls_model("initial-exec")));

/* The collector's clock: the TSC (rdtsc, cheaper than the vDSO's
 * clock_gettime: docs/stats.md) where shim_stats.c found the kernel keeping
 * CLOCK_MONOTONIC by it, which makes it constant-rate and synchronised
 * across CPUs; else CLOCK_MONOTONIC's nanoseconds.  Every time in the
 * records and thread totals is in these ticks until the report converts
 * them (shim_stats.c: to_ns).  Never 0, which marks an untimed hold. */
static inline uint64_t shim_ticks(void)
{
#if defined(__x86_64__)
	if (hl__likely(shim_tsc))
		return __builtin_ia32_rdtsc();
#endif
	return hl__now_ns();
}

/* A timed hold's start (the object's held_since) carries whether it was
 * a sampled acquisition, to be counted SAMPLE times when the hold ends
 * (bit 0; a tick of precision is lost), or one that waited, counted with
 * its wait. */
#define HOLD_SAMPLED 1ull

/* An object's index when it found the record table full: counted once, and
 * not tracked (shim_stats_track). */
#define SHIM_STATS_UNTRACKED UINT32_MAX

/* obj's record (its class's), from the index in its bytes; NULL if it has
 * none.  The index is checked against the table, so bytes that were never
 * ours (an object copied, memory reused without init) reach a record of
 * this process at worst, never memory outside the table.  Relaxed: the
 * record was written before the index was published (release,
 * shim_stats_track), and a stale one only makes a call miss. */
static inline struct stats_rec *shim_stats_rec(const void *obj, uint32_t idx)
{
	(void)obj;
	if (!idx || !shim_slot || idx >= hl__load(&shim_slot->recs_used, HL_RELAXED))
		return NULL;
	return &shim_recs[idx];
}

/* obj's record at its first contention: its class's, found or made (NULL:
 * the table is full, or no report). */
HL_HIDDEN struct stats_rec *shim_stats_track(void *obj, _Atomic uint32_t *idx, enum stats_obj kind,
					     uint32_t type);
/* A mutex glibc keeps (process-shared, robust, PI): the record of its
 * waits, found or made by its address (NULL: the table is full, or no
 * report). */
HL_HIDDEN struct stats_rec *shim_stats_glibc_mutex(void *obj);
/* A mutex of hotlock's: its record, made now if it has none (shim_mutex.c);
 * NULL for glibc's, or where the table is full. */
HL_HIDDEN struct stats_rec *shim_mutex_stats(pthread_mutex_t *m);
/* obj is destroyed or initialised again: it leaves its class. */
HL_HIDDEN void shim_stats_forget(void *obj, _Atomic uint32_t *idx);
/* A thread the shim started begins (shim_thread.c): its start time. */
HL_HIDDEN void shim_stats_thread_start(void);
/* The caller's call stack outside the shim, innermost first: at most max
 * frames into out, their count.  glibc's backtrace: the slow paths only
 * (a class's first contention, a new lock-order edge). */
HL_HIDDEN uint32_t shim_stats_stack(uintptr_t *out, uint32_t max);
/* The calling thread's name, as the kernel has it (shim_stats.c, "thread
 * names"): a new thread's creator passes its own on (shim_thread.c). */
HL_HIDDEN void shim_stats_my_name(char out[STATS_NAME]);
/* The calling thread is named name now (cut to 15 bytes, as the kernel
 * does): its creator's at its start, pthread_setname_np or PR_SET_NAME. */
HL_HIDDEN void shim_stats_named(const char *name);
/* The shim's pthread_create is about to start a thread (shim_thread.c):
 * the report's slot is taken at the process's first (a few loads where
 * there is no report). */
HL_HIDDEN void shim_stats_before_thread(void);

/* A wait for a lock (r's; NULL: none to count it in, only noted where
 * holds are listed): begin before, end
 * after, with the lock's answer (0: the caller holds it now; the counts go
 * into the thread's own sums, shim_stats.c).  Meanwhile the thread's
 * record says which lock it waits for: hotlock-top's "waiting now", and
 * its wait record (how, obj, timed: shim_holds.h) for the deadlock
 * detector.  Returns when the wait ended (shim_ticks, bit 0 clear): the
 * hold's start (0 without a record). */
struct shim_wait {
	uint64_t t0;
	uint64_t c0[HL_COUNTERS];
};
HL_HIDDEN void shim_wait_begin(struct shim_wait *w, struct stats_rec *r, enum stats_lock how,
			       const void *obj, bool timed);
HL_HIDDEN uint64_t shim_wait_end(struct stats_rec *r, const struct shim_wait *w, bool read, int err);

/* A thread's first state: its TID, mixed (murmur3's finalizer), so that
 * threads draw apart.  With one seed for all, every thread would sample
 * the same acquisitions of its own, and the errors would add up instead of
 * averaging out (docs/stats.md, "What it costs, and how it counts"). */
static inline uint32_t shim_sample_seed(void)
{
	uint32_t x = hl__tid() ^ 0x9e3779b9u;
	x ^= x >> 16;
	x *= 0x85ebca6bu;
	x ^= x >> 13;
	x *= 0xc2b2ae35u;
	x ^= x >> 16;
	return x ? x : 2463534242u;     /* any state but 0 */
}

/* Whether this acquisition without a wait is the one in SAMPLE counted:
 * xorshift32 (Marsaglia) on the thread's own state. */
static inline bool shim_sampled(void)
{
	uint32_t x = shim_sample_state;
	if (hl__unlikely(!x))
		x = shim_sample_seed();
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	shim_sample_state = x;
	return (x & (SAMPLE - 1)) == 0;
}

/* A sampled acquisition's hold starts: since, the object's hold start (0
 * while untimed), is written and read by the holder only (relaxed). */
static inline void shim_hold_start_sampled(_Atomic uint64_t *since)
{
	hl__store(since, shim_ticks() | HOLD_SAMPLED, HL_RELAXED);
}

/* An exclusive acquisition that did not wait: one in SAMPLE has its hold
 * timed, and is counted SAMPLE times when the hold ends (shim_hold_add,
 * after the release: nothing of the record is touched under the lock). */
static inline void shim_stats_acquired(_Atomic uint64_t *since)
{
	if (hl__unlikely(shim_sampled()))
		shim_hold_start_sampled(since);
}

/* After a release of a tracked lock: counted (condvar re-waits,
 * shim_stats.c). */
static inline void shim_stats_released(void)
{
	shim_releases++;
}

/* A read acquisition that did not wait: sampled as above (readers run side
 * by side: an atomic add). */
static inline void shim_stats_read(struct stats_rec *r)
{
	if (hl__unlikely(shim_sampled()))
		hl__fetch_add(&r->c[STC_R_ACQ], SAMPLE, HL_RELAXED);
}

/* A trylock that found the lock taken. */
static inline void shim_stats_busy(struct stats_rec *r)
{
	hl__fetch_add(&r->c[STC_TRY_BUSY], 1, HL_RELAXED);
}

/* An exclusive hold ends: before the release, its start is taken from the
 * object (0: untimed), which may be freed once released, and *until gets
 * the clock, which ends the hold (the release, and the wake-up it may
 * make, are not part of it).  After the release, shim_hold_add adds the
 * hold, with a sampled acquisition's count, to the thread's sums. */
static inline uint64_t shim_hold_take(_Atomic uint64_t *since, uint64_t *until)
{
	uint64_t t0 = hl__load(since, HL_RELAXED);
	if (t0) {
		hl__store(since, 0, HL_RELAXED);
		*until = shim_ticks();
	}
	return t0;
}

HL_HIDDEN void shim_hold_add(struct stats_rec *r, uint64_t t0, uint64_t until);

/* A release that took the slow path: the futex calls it made, added after
 * it (to the record: never freed memory).  Returns whether it woke a
 * waiter. */
HL_HIDDEN void shim_release_begin(struct shim_wait *w);
HL_HIDDEN bool shim_release_end(struct stats_rec *r, const struct shim_wait *w);
/* After a release that served a waiter (a mutex's slow unlock, a write
 * unlock that woke one): the holder's call site, sampled (shim_stats.c). */
HL_HIDDEN void shim_stats_contended_release(struct stats_rec *r);

/* A condvar wait on record r (the caller holds mutex; timed: with a
 * deadline): returns its start. */
HL_HIDDEN uint64_t shim_cond_wait_begin(struct stats_rec *r, const void *cond, const void *mutex,
					bool timed);
HL_HIDDEN void shim_cond_wait_end(struct stats_rec *r, uint64_t t0, const void *cond,
				  const void *mutex, int err);
/* A signal (waiters: how many were listed) or broadcast. */
HL_HIDDEN void shim_cond_signalled(struct stats_rec *r, uint32_t waiters, bool broadcast);

#endif

/* SPDX-License-Identifier: MIT */
/* What the pthread shim (src/preload/) asks of the locks, beyond their
 * public API: glibc's semantics where they differ from hotlock's.
 *
 * - A normal pthread mutex is not owned by a thread: any thread may unlock
 *   it, and its locker waits on a relock like any other thread (rt-tests'
 *   ptsematest uses it as a binary semaphore).  hl_mutex_lock returns
 *   EDEADLK and hl_mutex_unlock EPERM there instead.
 * - glibc's rwlock kinds: the shim keeps the kind where glibc does (the
 *   pthread object's __flags) and passes it to each call.
 * - pthread_cond_wait is a cancellation point; the shim's waits end early
 *   when pthread_cancel interrupts the thread (struct hl__deadline's
 *   interrupt word, thread.h).
 */
#ifndef HOTLOCK_SHIM_API_H
#define HOTLOCK_SHIM_API_H

#include <hotlock/cond.h>
#include <hotlock/mutex.h>
#include <hotlock/rwlock.h>

#include "internal.h"

/* hl_mutex_lock/timedlock (dl NULL: no deadline), except that a caller
 * that holds m waits for whoever unlocks it (ETIMEDOUT at the deadline) as
 * any other thread does. */
HL_HIDDEN int hl__mutex_lock_any(hl_mutex_t *m, const struct hl__deadline *dl);
/* Unlocks m whoever holds it.  0 also when m is not locked (glibc's answer
 * for a normal mutex). */
HL_HIDDEN int hl__mutex_unlock_any(hl_mutex_t *m);

/* The uncontended lock and unlock of hl_mutex_lock/unlock, inline in the
 * shim's pthread functions (a call costs a few percent of the pair).  The
 * word's encoding is mutex.c's: free is 0, held with no waiter to wake is
 * the owner's TID.  false: take the full path.
 *
 * single: the process has one thread (glibc's __libc_single_threaded); then,
 * as glibc's own lock does, a plain load and store replace the atomic
 * read-modify-write, which costs more than the rest of the pair.  No other
 * thread exists to race, and a signal handler that takes m between the load
 * and the store has released it again before the interrupted code goes on.
 * Relaxed there: pthread_create orders it all before any later thread. */
static inline bool hl__mutex_lock_fast(hl_mutex_t *m, uint32_t tid, bool single)
{
	_Atomic uint32_t *w = (_Atomic uint32_t *)&m->word_;
	uint32_t free_word = 0;
	if (hl__unlikely(!tid))
		return false;
	if (single) {
		if (hl__load(w, HL_RELAXED) != free_word)
			return false;
		hl__store(w, tid, HL_RELAXED);
		return true;
	}
	/* Acquire: as hl_mutex_lock. */
	return hl__cas(w, &free_word, tid, HL_ACQUIRE);
}
/* hl_mutex's step 5b (mutex.c): moved waiters this thread nudges after its
 * next unlock, which the inline unlock below does as hl_mutex_unlock
 * does. */
HL_HIDDEN extern __thread uint32_t hl__nudge_after_unlock __attribute__((tls_model("initial-exec")));
HL_HIDDEN void hl__mutex_nudge_now(void);
static inline void hl__mutex_nudge_if_due(void)
{
	if (hl__unlikely(hl__nudge_after_unlock))
		hl__mutex_nudge_now();
}

static inline bool hl__mutex_unlock_fast(hl_mutex_t *m, uint32_t tid, bool single)
{
	_Atomic uint32_t *w = (_Atomic uint32_t *)&m->word_;
	uint32_t held = tid;
	if (hl__unlikely(!tid))
		return false;
	if (single) {
		if (hl__load(w, HL_RELAXED) != held)
			return false;
		hl__store(w, 0, HL_RELAXED);
		return true;
	}
	/* Release: as hl_mutex_unlock. */
	if (!hl__cas(w, &held, 0, HL_RELEASE))
		return false;
	hl__mutex_nudge_if_due();
	return true;
}

/* hl_rwlock_rdlock/timedrdlock (dl NULL: no deadline), tryrdlock and
 * wrlock/timedwrlock for a lock of the given kind (HL_RWLOCK_FAIR, _PREFER_
 * READER or _PREFER_WRITER), whatever kind its own bytes say. */
HL_HIDDEN int hl__rwlock_rdlock_kind(hl_rwlock_t *l, int kind, const struct hl__deadline *dl);
HL_HIDDEN int hl__rwlock_tryrdlock_kind(hl_rwlock_t *l, int kind);
/* hl_rwlock_unlock, except that a read unlock by a thread that holds no
 * share of l releases one all the same, as glibc's does (the native call
 * says EPERM); the taker's table keeps the share counted (holds.h). */
HL_HIDDEN int hl__rwlock_unlock_foreign(hl_rwlock_t *l);
HL_HIDDEN int hl__rwlock_wrlock_kind(hl_rwlock_t *l, int kind, const struct hl__deadline *dl);

/* hl_cond_timedwait with a prepared deadline (NULL: none), which may pass
 * by interrupt only (forever). */
HL_HIDDEN int hl__cond_wait_dl(hl_cond_t *c, hl_mutex_t *m, const struct hl__deadline *dl);
/* Whether c has waiters listed (a relaxed hint, as signal's first step). */
HL_HIDDEN bool hl__cond_has_waiters(hl_cond_t *c);
/* How many waiters c has (a relaxed hint: refs, which also counts waiters
 * that gave up and have not yet left the list), for the shim's report. */
HL_HIDDEN uint32_t hl__cond_waiters(hl_cond_t *c);

#endif

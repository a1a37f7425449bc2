/* SPDX-License-Identifier: MIT */
/* pthread_mutex_* for the shim (shim.c): hotlock's kinds on hl_mutex,
 * glibc's (robust, priority protocols, process-shared, unknown) on glibc's
 * real functions.
 *
 *   type (byte 16)      lock                    unlock
 *   ------------------  ----------------------  -----------------------------
 *   NORMAL, ADAPTIVE    hl_mutex; a relock by   by any thread (glibc too);
 *                       the holder waits for    0 on an unlocked one
 *                       whoever unlocks it
 *   ERRORCHECK          EDEADLK on relock       EPERM unless the caller owns it
 *   RECURSIVE           count += 1 by the       EPERM unless the caller owns
 *                       owner; EAGAIN at        it; count -= 1, the lock goes
 *                       2^32 - 1 holds          at the last
 *   anything else       glibc's                 glibc's
 *
 * The count of a recursive mutex is touched only by its owner, between its
 * acquire of the lock word and its release of it, so it needs no atomics.
 *
 * Timed locks take a free mutex before they look at the time, and check an
 * unknown clock first, as glibc does: EINVAL for a clock other than
 * CLOCK_REALTIME and CLOCK_MONOTONIC, EINVAL for a bad tv_nsec only when
 * the call has to wait, ETIMEDOUT for a time already passed.
 *
 * The contention report (shim_stats.c): with it on, a mutex's first wait
 * (or busy trylock) gives it a record and SHIM_MUTEX_TRACKED in its type
 * word; lock and unlock compare the whole word with a plain type, so a
 * tracked mutex leaves the inline fast path for the counting one, and an
 * untracked one pays nothing.
 */
#include <errno.h>
#include <string.h>

#include "morph.h"
#include "shim.h"
#include "shim_holds.h"
#include "shim_stats.h"
#include "shim_api.h"
#include "thread.h"

/* glibc 2.32+: whether the process has a single thread (shim_api.h,
 * hl__mutex_lock_fast). */
#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>
#define single_threaded() hl__unlikely(__libc_single_threaded != 0)
#else
#define single_threaded() false
#endif

static inline bool held_by_me(pthread_mutex_t *m)
{
	return hl__mutex_held_by(&SM(m)->hl, hl__tid());
}

int shim_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *attr)
{
	int type = PTHREAD_MUTEX_NORMAL;
	if (hl__unlikely(shim_order_on))
		shim_order_forget(m);   /* a new lock at this address */
	if (attr) {
		int robust, pshared, protocol;
		if (pthread_mutexattr_gettype(attr, &type) || pthread_mutexattr_getrobust(attr, &robust) ||
		    pthread_mutexattr_getpshared(attr, &pshared) ||
		    pthread_mutexattr_getprotocol(attr, &protocol) ||
		    robust != PTHREAD_MUTEX_STALLED || pshared != PTHREAD_PROCESS_PRIVATE ||
		    protocol != PTHREAD_PRIO_NONE || type < 0 || type > PTHREAD_MUTEX_ADAPTIVE_NP)
			return REAL(R_MUTEX_INIT, int (*)(pthread_mutex_t *, const pthread_mutexattr_t *))(m, attr);
	}
	if (hl__unlikely(shim_stats_on))
		shim_stats_forget(m, &SM(m)->stats);    /* initialised again */
	memset(m, 0, sizeof(*m));
	/* Relaxed: the mutex is published to other threads by whatever
	 * shares it after init. */
	hl__store(&SM(m)->kind, type, HL_RELAXED);
	return 0;
}
SHIM_EXPORT(shim_mutex_init, pthread_mutex_init, "GLIBC_2.2.5");

int shim_mutex_destroy(pthread_mutex_t *m)
{
	if (hl__unlikely(shim_order_on))
		shim_order_forget(m);
	if (shim_mutex_type(m) < 0)
		return REAL(R_MUTEX_DESTROY, int (*)(pthread_mutex_t *))(m);
	/* As glibc's: EBUSY while a condvar wait has released it and will
	 * take it again (glibc's tst-mutex8).  Relaxed: see wait_hotlock
	 * (shim_cond.c). */
	if (hl__load(&SM(m)->cond_waiters, HL_RELAXED))
		return EBUSY;
	int err = hl_mutex_destroy(&SM(m)->hl);
	if (err)
		return err;
	if (hl__unlikely(shim_stats_on))
		shim_stats_forget(m, &SM(m)->stats);
	/* As glibc: a destroyed mutex has kind -1, which every call then
	 * refuses (glibc's functions answer EINVAL). */
	hl__store(&SM(m)->kind, -1, HL_RELAXED);
	return 0;
}
SHIM_EXPORT(shim_mutex_destroy, pthread_mutex_destroy, "GLIBC_2.2.5");

/* A recursive mutex's owner takes it once more. */
static int recursive_again(pthread_mutex_t *m)
{
	if (SM(m)->count == UINT32_MAX - 1)
		return EAGAIN;
	SM(m)->count++;
	return 0;
}

/* The wait of a lock of hotlock's kind `type` (a recursive owner's relock
 * handled before), until dl (NULL: none). */
static int lock_wait(pthread_mutex_t *m, int type, const struct hl__deadline *dl)
{
	if (dl)
		return hl__mutex_lock_any(&SM(m)->hl, dl);
	int err = hl_mutex_lock(&SM(m)->hl);
	if (err == EDEADLK && type != PTHREAD_MUTEX_ERRORCHECK)
		return hl__mutex_lock_any(&SM(m)->hl, NULL);
	return err;
}

/* A wait with no record to count it in (no report, or the table is
 * full): noted for the deadlock detector where it lists holds. */
static int noted_wait(pthread_mutex_t *m, int type, const struct hl__deadline *dl)
{
	struct shim_wait w;
	shim_wait_begin(&w, NULL, SL_MUTEX, m, dl != NULL);
	int err = lock_wait(m, type, dl);
	shim_wait_end(NULL, &w, false, err);
	return err;
}

/* m's record, made now if it has none (the report is on, m is contended). */
static struct stats_rec *mutex_rec(pthread_mutex_t *m, int type)
{
	/* Relaxed: see shim_stats_rec. */
	struct stats_rec *r = shim_stats_rec(m, hl__load(&SM(m)->stats, HL_RELAXED));
	if (!r && (r = shim_stats_track(m, &SM(m)->stats, ST_MUTEX, (uint32_t)type)))
		/* Relaxed: a hint to this mutex's later calls; a call that
		 * misses it only goes uncounted. */
		hl__fetch_or(&SM(m)->kind, SHIM_MUTEX_TRACKED, HL_RELAXED);
	return r;
}

struct stats_rec *shim_mutex_stats(pthread_mutex_t *m)
{
	int type = shim_mutex_type(m);
	return type < 0 ? NULL : mutex_rec(m, type);
}

/* The wait of lock_wait, timed and counted in r; the hold it begins is
 * timed from the wait's end. */
static int counted_wait(pthread_mutex_t *m, struct stats_rec *r, int type, const struct hl__deadline *dl)
{
	struct shim_wait w;
	shim_wait_begin(&w, r, SL_MUTEX, m, dl != NULL);
	int err = lock_wait(m, type, dl);
	uint64_t t1 = shim_wait_end(r, &w, false, err);
	if (!err)
		/* Relaxed: the holder's own (shim_stats.h). */
		hl__store(&SM(m)->held_since, t1, HL_RELAXED);
	return err;
}

/* A lock with the report on that the inline paths did not take: a tracked
 * mutex of another type than normal or adaptive, or an untracked one's
 * first wait (which makes its record). */
__attribute__((noinline)) static int counted_lock(pthread_mutex_t *m, int type)
{
	struct stats_rec *r = mutex_rec(m, type);
	if (!r)
		return noted_wait(m, type, NULL);
	bool plain = type == PTHREAD_MUTEX_NORMAL || type == PTHREAD_MUTEX_ADAPTIVE_NP;
	if (plain ? hl__mutex_lock_fast(&SM(m)->hl, hl__tid_known(), single_threaded())
		  : hl_mutex_trylock(&SM(m)->hl) == 0) {
		shim_stats_acquired(&SM(m)->held_since);
		return 0;
	}
	return counted_wait(m, r, type, NULL);
}

/* A lock of a mutex glibc keeps, with the report on: a wait (a trylock
 * that finds it taken) is timed and counted in its record, as a wait and
 * no more (shim_stats_glibc_mutex).  A robust mutex's EOWNERDEAD is a
 * lock taken. */
static int glibc_counted(pthread_mutex_t *m, const struct timespec *abstime, clockid_t clock, int how)
{
	int err = REAL(R_MUTEX_TRYLOCK, int (*)(pthread_mutex_t *))(m);
	if (err != EBUSY)
		return err;
	struct stats_rec *r = shim_stats_glibc_mutex(m);
	struct shim_wait w;
	shim_wait_begin(&w, r, SL_GLIBC_MUTEX, m, how != 0);
	if (how == 0)
		err = REAL(R_MUTEX_LOCK, int (*)(pthread_mutex_t *))(m);
	else if (how == 1)
		err = REAL(R_MUTEX_TIMEDLOCK, int (*)(pthread_mutex_t *, const struct timespec *))(m, abstime);
	else
		err = REAL(R_MUTEX_CLOCKLOCK, int (*)(pthread_mutex_t *, clockid_t, const struct timespec *))(
			m, clock, abstime);
	shim_wait_end(r, &w, false, err == EOWNERDEAD ? 0 : err);
	return err;
}

/* Every lock but an untracked normal or adaptive mutex's.  Not inlined,
 * nor is counted_lock: the fast path above them must not pay for their
 * stack frames. */
__attribute__((noinline)) static int lock_other(pthread_mutex_t *m, int32_t kind)
{
	int type = shim_mutex_type(m);
	if (type < 0)
		return hl__unlikely(shim_stats_on || shim_holds_on)
			       ? glibc_counted(m, NULL, 0, 0)
			       : REAL(R_MUTEX_LOCK, int (*)(pthread_mutex_t *))(m);
	if (type == PTHREAD_MUTEX_RECURSIVE && held_by_me(m))
		return recursive_again(m);
	if (type == PTHREAD_MUTEX_ERRORCHECK && held_by_me(m))
		return EDEADLK;
	if (kind & SHIM_MUTEX_TRACKED) {
		/* A normal or adaptive one was tried in shim_mutex_lock
		 * already: straight to the wait (another try would be one
		 * more atomic operation on a contended line). */
		struct stats_rec *r;
		if ((type == PTHREAD_MUTEX_NORMAL || type == PTHREAD_MUTEX_ADAPTIVE_NP) &&
		    (r = shim_stats_rec(m, hl__load(&SM(m)->stats, HL_RELAXED))))
			return counted_wait(m, r, type, NULL);
		return counted_lock(m, type);
	}
	if (hl__unlikely(shim_stats_on || shim_holds_on))
		return hl_mutex_trylock(&SM(m)->hl) == 0 ? 0 : counted_lock(m, type);
	return hl_mutex_lock(&SM(m)->hl);
}

/* A tracked normal or adaptive mutex, taken without a wait, in the one
 * acquisition in SAMPLE that is counted (shim_stats.h).  Not inlined: a
 * clock read inline lengthens the untracked fast path above it
 * (docs/stats.md, "What it costs, and how it counts"). */
__attribute__((noinline)) static void sampled_acquisition(pthread_mutex_t *m)
{
	shim_hold_start_sampled(&SM(m)->held_since);
}

/* The type word of a tracked normal or adaptive mutex. */
#define TRACKED_NORMAL (PTHREAD_MUTEX_NORMAL | SHIM_MUTEX_TRACKED)
#define TRACKED_ADAPTIVE (PTHREAD_MUTEX_ADAPTIVE_NP | SHIM_MUTEX_TRACKED)

static inline __attribute__((always_inline)) int mutex_lock(pthread_mutex_t *m)
{
	/* Relaxed: set at init, before m was shared; TRACKED: a hint. */
	int32_t kind = hl__load(&SM(m)->kind, HL_RELAXED);
	if (hl__likely(kind == PTHREAD_MUTEX_NORMAL || kind == PTHREAD_MUTEX_ADAPTIVE_NP)) {
		if (hl__mutex_lock_fast(&SM(m)->hl, hl__tid_known(), single_threaded()))
			return 0;
		if (hl__unlikely(shim_stats_on || shim_holds_on))
			return counted_lock(m, kind);
		int err = hl_mutex_lock(&SM(m)->hl);
		return hl__likely(err != EDEADLK) ? err : hl__mutex_lock_any(&SM(m)->hl, NULL);
	}
	/* Tracked (the report is on, m was contended): a free mutex is taken
	 * here too, the sampled acquisition only noting its hold's start. */
	if ((kind == TRACKED_NORMAL || kind == TRACKED_ADAPTIVE) &&
	    hl__mutex_lock_fast(&SM(m)->hl, hl__tid_known(), single_threaded())) {
		if (hl__unlikely(shim_sampled()))
			sampled_acquisition(m);
		return 0;
	}
	return lock_other(m, kind);
}

/* ---- the hold list (shim_holds.c) ----
 * With the deadlock detector on, every call that takes a mutex lists it
 * in the thread's holds once it has it (site: the caller's return
 * address), and every unlock takes it out first; under --deadlocks alone
 * (shim_mutex_sites) the site is kept in the mutex instead, and the
 * unlock writes nothing.  One load of a flag set at load is all the calls
 * pay without it. */

static enum stats_lock mutex_how(pthread_mutex_t *m)
{
	return shim_mutex_type(m) < 0 ? SL_GLIBC_MUTEX : SL_MUTEX;
}

/* The hold of m that a call's answer err means (a robust mutex's
 * EOWNERDEAD is a lock taken): listed, or its site kept in m (relaxed:
 * the holder's own field, read by the collector only while it holds m). */
static inline __attribute__((always_inline)) int mutex_held(pthread_mutex_t *m, int err, uintptr_t site)
{
	shim_site = 0;
	if (err && err != EOWNERDEAD)
		return err;
	if (!shim_mutex_sites)
		shim_hold_push(m, mutex_how(m), site);
	else if (shim_mutex_type(m) >= 0)
		hl__store(&SM(m)->held_since, site, HL_RELAXED);
	return err;
}

/* Every listed lock but a free normal or adaptive mutex's, with no lock
 * order to note: shim_site says where a wait in it waits. */
__attribute__((noinline)) static int lock_listed_slow(pthread_mutex_t *m, uintptr_t site)
{
	if (shim_order_on)
		shim_order_before(m, mutex_how(m), site);
	shim_site = site;
	return mutex_held(m, mutex_lock(m), site);
}

/* A listed lock: the common case (a normal or adaptive mutex found free,
 * with no lock order to note: none on, or no lock held) inline, as short
 * as the unlisted one plus the push, or the store of the site. */
static inline __attribute__((always_inline)) int lock_listed(pthread_mutex_t *m, uintptr_t site)
{
	/* Relaxed: as in mutex_lock (untracked: no report with holds); the
	 * count, the thread's own. */
	int32_t kind = hl__load(&SM(m)->kind, HL_RELAXED);
	if (hl__likely(!shim_order_on || !shim_me || !hl__load(&shim_me->nholds, HL_RELAXED)) &&
	    (kind == PTHREAD_MUTEX_NORMAL || kind == PTHREAD_MUTEX_ADAPTIVE_NP) &&
	    hl__mutex_lock_fast(&SM(m)->hl, hl__tid_known(), single_threaded())) {
		if (hl__likely(shim_mutex_sites))
			hl__store(&SM(m)->held_since, site, HL_RELAXED);
		else
			shim_hold_push(m, SL_MUTEX, site);
		return 0;
	}
	return lock_listed_slow(m, site);
}

int shim_mutex_lock(pthread_mutex_t *m)
{
	if (hl__unlikely(shim_holds_on))
		return lock_listed(m, SHIM_CALLER());
	return mutex_lock(m);
}
SHIM_EXPORT(shim_mutex_lock, pthread_mutex_lock, "GLIBC_2.2.5");

static int mutex_trylock(pthread_mutex_t *m)
{
	int type = shim_mutex_type(m);
	if (type == PTHREAD_MUTEX_RECURSIVE && held_by_me(m))
		return recursive_again(m);
	if (type < 0)
		return REAL(R_MUTEX_TRYLOCK, int (*)(pthread_mutex_t *))(m);
	int err = hl_mutex_trylock(&SM(m)->hl);
	if (hl__likely(!shim_stats_on))
		return err;
	/* A busy trylock is contention too (a program may spin on it). */
	struct stats_rec *r = err ? mutex_rec(m, type)
				  : shim_stats_rec(m, hl__load(&SM(m)->stats, HL_RELAXED));
	if (r && !err) {
		shim_stats_acquired(&SM(m)->held_since);
	} else if (r && err == EBUSY) {
		shim_stats_busy(r);
	}
	return err;
}

int shim_mutex_trylock(pthread_mutex_t *m)
{
	if (hl__unlikely(shim_holds_on))
		return mutex_held(m, mutex_trylock(m), SHIM_CALLER());
	return mutex_trylock(m);
}
SHIM_EXPORT2(shim_mutex_trylock, pthread_mutex_trylock, "GLIBC_2.34", "GLIBC_2.2.5");

/* Timed and clock locks of hotlock's kinds (see the top). */
static int timed_lock(pthread_mutex_t *m, int type, clockid_t clock, const struct timespec *abstime)
{
	if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
		return EINVAL;
	if (type == PTHREAD_MUTEX_RECURSIVE && held_by_me(m))
		return recursive_again(m);
	if (type == PTHREAD_MUTEX_ERRORCHECK && held_by_me(m))
		return EDEADLK;
	if (hl_mutex_trylock(&SM(m)->hl) == 0) {
		struct stats_rec *r;
		if (hl__unlikely(shim_stats_on) &&
		    (r = shim_stats_rec(m, hl__load(&SM(m)->stats, HL_RELAXED))))
			shim_stats_acquired(&SM(m)->held_since);
		return 0;
	}
	struct hl__deadline dl;
	int err = hl__deadline_init(&dl, clock, abstime);
	if (err)
		return err;
	struct stats_rec *r;
	if (hl__unlikely(shim_stats_on) && (r = mutex_rec(m, type)))
		return counted_wait(m, r, type, &dl);
	if (hl__unlikely(shim_holds_on))
		return noted_wait(m, type, &dl);
	return hl__mutex_lock_any(&SM(m)->hl, &dl);
}

static int mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime)
{
	int type = shim_mutex_type(m);
	if (type >= 0)
		return timed_lock(m, type, CLOCK_REALTIME, abstime);
	if (hl__unlikely(shim_stats_on || shim_holds_on))
		return glibc_counted(m, abstime, CLOCK_REALTIME, 1);
	return REAL(R_MUTEX_TIMEDLOCK, int (*)(pthread_mutex_t *, const struct timespec *))(m, abstime);
}

/* A timed lock cannot wait forever: it orders nothing. */
int shim_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime)
{
	if (hl__unlikely(shim_holds_on)) {
		shim_site = SHIM_CALLER();
		return mutex_held(m, mutex_timedlock(m, abstime), SHIM_CALLER());
	}
	return mutex_timedlock(m, abstime);
}
SHIM_EXPORT2(shim_mutex_timedlock, pthread_mutex_timedlock, "GLIBC_2.34", "GLIBC_2.2.5");

static int mutex_clocklock(pthread_mutex_t *m, clockid_t clock, const struct timespec *abstime)
{
	int type = shim_mutex_type(m);
	if (type >= 0)
		return timed_lock(m, type, clock, abstime);
	if (hl__unlikely(shim_stats_on || shim_holds_on))
		return glibc_counted(m, abstime, clock, 2);
	return REAL(R_MUTEX_CLOCKLOCK, int (*)(pthread_mutex_t *, clockid_t, const struct timespec *))(
		m, clock, abstime);
}

int shim_mutex_clocklock(pthread_mutex_t *m, clockid_t clock, const struct timespec *abstime)
{
	if (hl__unlikely(shim_holds_on)) {
		shim_site = SHIM_CALLER();
		return mutex_held(m, mutex_clocklock(m, clock, abstime), SHIM_CALLER());
	}
	return mutex_clocklock(m, clock, abstime);
}
SHIM_EXPORT2(shim_mutex_clocklock, pthread_mutex_clocklock, "GLIBC_2.34", "GLIBC_2.30");

/* The unlock of a lock of hotlock's kind `type` (a recursive owner's inner
 * unlock handled before). */
static int unlock_now(pthread_mutex_t *m, int type)
{
	int err = hl_mutex_unlock(&SM(m)->hl);
	if (err == EPERM && type != PTHREAD_MUTEX_ERRORCHECK && type != PTHREAD_MUTEX_RECURSIVE)
		return hl__mutex_unlock_any(&SM(m)->hl);
	return err;
}

/* Every unlock but an untracked normal or adaptive mutex's (not inlined,
 * as lock_other). */
__attribute__((noinline)) static int unlock_other(pthread_mutex_t *m, int32_t kind)
{
	int type = shim_mutex_type(m);
	if (type < 0)
		return REAL(R_MUTEX_UNLOCK, int (*)(pthread_mutex_t *))(m);
	if (type == PTHREAD_MUTEX_RECURSIVE || type == PTHREAD_MUTEX_ERRORCHECK) {
		if (!held_by_me(m))
			return EPERM;
		if (SM(m)->count) {
			SM(m)->count--;
			return 0;
		}
	}
	struct stats_rec *r;
	if (!(kind & SHIM_MUTEX_TRACKED) || !(r = shim_stats_rec(m, hl__load(&SM(m)->stats, HL_RELAXED))))
		return unlock_now(m, type);
	/* The hold's start is read while m is still ours (after the unlock,
	 * m may be freed), and its end is the clock now; the hold, and the
	 * futex calls of a slow release, are added after it, to the record,
	 * which is never freed memory. */
	uint64_t until = 0, held = shim_hold_take(&SM(m)->held_since, &until);
	int err = 0;
	if (!(type == PTHREAD_MUTEX_NORMAL || type == PTHREAD_MUTEX_ADAPTIVE_NP) ||
	    !hl__mutex_unlock_fast(&SM(m)->hl, hl__tid_known(), single_threaded())) {
		struct shim_wait w;
		shim_release_begin(&w);
		err = unlock_now(m, type);
		bool woke = shim_release_end(r, &w);
		/* It served a waiter: a normal or adaptive mutex's unlock
		 * takes this path only for one (its fast path failed: a head
		 * recorded itself), another type's where it woke one. */
		if (!err && (woke || type == PTHREAD_MUTEX_NORMAL || type == PTHREAD_MUTEX_ADAPTIVE_NP))
			shim_stats_contended_release(r);
	}
	shim_hold_add(r, held, until);
	shim_stats_released();
	return err;
}

int shim_mutex_unlock(pthread_mutex_t *m)
{
	if (hl__unlikely(shim_mutex_listed))
		shim_hold_pop(m);
	/* Relaxed: as in lock. */
	int32_t kind = hl__load(&SM(m)->kind, HL_RELAXED);
	if (hl__likely(kind == PTHREAD_MUTEX_NORMAL || kind == PTHREAD_MUTEX_ADAPTIVE_NP)) {
		if (hl__mutex_unlock_fast(&SM(m)->hl, hl__tid_known(), single_threaded()))
			return 0;
		int err = hl_mutex_unlock(&SM(m)->hl);
		return hl__likely(err != EPERM) ? err : hl__mutex_unlock_any(&SM(m)->hl);
	}
	/* Tracked: an untimed hold with nobody waiting is released here (its
	 * release counted); the rest in unlock_other.  Relaxed: the
	 * holder's own (shim_stats.h). */
	if ((kind == TRACKED_NORMAL || kind == TRACKED_ADAPTIVE) &&
	    !hl__load(&SM(m)->held_since, HL_RELAXED) &&
	    hl__mutex_unlock_fast(&SM(m)->hl, hl__tid_known(), single_threaded())) {
		shim_stats_released();
		return 0;
	}
	return unlock_other(m, kind);
}
SHIM_EXPORT(shim_mutex_unlock, pthread_mutex_unlock, "GLIBC_2.2.5");

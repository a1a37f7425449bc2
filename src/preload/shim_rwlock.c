/* SPDX-License-Identifier: MIT */
/* pthread_rwlock_* for the shim (shim.c): hotlock's rwlocks on hl_rwlock,
 * process-shared ones (and kinds the shim does not know) on glibc's.
 *
 * Kinds.  glibc keeps the kind in the object's __flags (byte 48), where
 * pthread_rwlock_init and the static initialisers put it; so does the shim,
 * and each call passes it on (shim_api.h):
 *
 *   glibc kind                               hl_rwlock kind
 *   PTHREAD_RWLOCK_PREFER_READER_NP (0,       HL_RWLOCK_PREFER_READER: a
 *     the default and the zeroed object)      reader gets in whenever no
 *   PTHREAD_RWLOCK_PREFER_WRITER_NP (1,       writer holds the lock (glibc
 *     which glibc treats as the default)      treats these two alike); or,
 *                                             with HOTLOCK_RWLOCK_DEFAULT=
 *                                             writer-yields,
 *                                             HL_RWLOCK_WRITER_YIELDS
 *   PTHREAD_RWLOCK_PREFER_WRITER_            HL_RWLOCK_PREFER_WRITER: a
 *     NONRECURSIVE_NP (2)                     waiting writer keeps new
 *                                             readers out
 *
 * A thread's recursive read lock is granted by hl_rwlock itself, whatever
 * waits (its count of the read locks each thread holds), in every kind.
 *
 * The contention report (shim_stats.c): with it on, each call tries the
 * lock first; one that must wait gives the rwlock a record (its index at
 * byte 32), and from then on its acquisitions are counted (each that
 * waits, one in 64 of the others: shim_stats.h), and a counted writer's
 * hold timed (its TID and start at bytes 36 and 40).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"
#include "shim_holds.h"
#include "shim_stats.h"
#include "shim_api.h"

/* The hl_rwlock kind of glibc's two default kinds: HL_RWLOCK_PREFER_READER,
 * or what HOTLOCK_RWLOCK_DEFAULT says, read once at load. */
static _Atomic uint32_t default_kind = HL_RWLOCK_PREFER_READER;

__attribute__((constructor)) static void rwlock_default_init(void)
{
	const char *v = getenv("HOTLOCK_RWLOCK_DEFAULT");
	if (!v || !*v || !strcmp(v, "prefer-reader"))
		return;
	if (!strcmp(v, "writer-yields"))
		/* Relaxed: at load, before any thread of the program. */
		hl__store(&default_kind, HL_RWLOCK_WRITER_YIELDS, HL_RELAXED);
	else
		fprintf(stderr, "hotlock: ignoring HOTLOCK_RWLOCK_DEFAULT=%s (expected "
			"prefer-reader or writer-yields)\n", v);
}

static inline int hl__kind(pthread_rwlock_t *l)
{
	/* Relaxed: written by init before the lock was shared; default_kind
	 * at load. */
	return hl__load(&SR(l)->kind, HL_RELAXED) == PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP
		       ? HL_RWLOCK_PREFER_WRITER
		       : (int)hl__load(&default_kind, HL_RELAXED);
}

int shim_rwlock_init(pthread_rwlock_t *l, const pthread_rwlockattr_t *attr)
{
	int kind = PTHREAD_RWLOCK_PREFER_READER_NP;
	if (hl__unlikely(shim_order_on))
		shim_order_forget(l);   /* a new lock at this address */
	if (attr) {
		int pshared;
		if (pthread_rwlockattr_getkind_np(attr, &kind) ||
		    pthread_rwlockattr_getpshared(attr, &pshared) ||
		    pshared != PTHREAD_PROCESS_PRIVATE || kind < 0 ||
		    kind > PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP)
			return REAL(R_RWLOCK_INIT, int (*)(pthread_rwlock_t *, const pthread_rwlockattr_t *))(
				l, attr);
	}
	if (hl__unlikely(shim_stats_on))
		shim_stats_forget(l, &SR(l)->stats);    /* initialised again */
	memset(l, 0, sizeof(*l));
	/* Relaxed: published with the rwlock by whatever shares it. */
	hl__store(&SR(l)->kind, (uint32_t)kind, HL_RELAXED);
	return 0;
}
SHIM_EXPORT2(shim_rwlock_init, pthread_rwlock_init, "GLIBC_2.34", "GLIBC_2.2.5");

/* glibc's destroy does nothing and returns 0, held or not; so does ours
 * (hl_rwlock_destroy would say EBUSY for a held one, an answer a program
 * written against glibc has never seen). */
int shim_rwlock_destroy(pthread_rwlock_t *l)
{
	if (hl__unlikely(shim_order_on))
		shim_order_forget(l);
	if (shim_rwlock_is_glibc(l))
		return REAL(R_RWLOCK_DESTROY, int (*)(pthread_rwlock_t *))(l);
	if (hl__unlikely(shim_stats_on))
		shim_stats_forget(l, &SR(l)->stats);
	return 0;
}

/* ---- counting (the report on) ---- */

static inline struct stats_rec *rw_rec(pthread_rwlock_t *l)
{
	/* Relaxed: see shim_stats_rec. */
	return shim_stats_rec(l, hl__load(&SR(l)->stats, HL_RELAXED));
}

static int lock_wait(pthread_rwlock_t *l, bool read, int kind, const struct hl__deadline *dl)
{
	return read ? hl__rwlock_rdlock_kind(&SR(l)->hl, kind, dl)
		    : hl__rwlock_wrlock_kind(&SR(l)->hl, kind, dl);
}

/* The write lock is ours: its writer is known, so that its unlock ends
 * the hold.  Relaxed: the writer's own fields, read by the writer at its
 * unlock. */
static void writer_begins(pthread_rwlock_t *l)
{
	hl__store(&SR(l)->writer, hl__tid(), HL_RELAXED);
}

/* An acquisition that did not wait, counted in l's record r (if any). */
static void acquired(pthread_rwlock_t *l, struct stats_rec *r, bool read)
{
	if (!r)
		return;
	if (read) {
		shim_stats_read(r);
	} else {
		writer_begins(l);
		shim_stats_acquired(&SR(l)->held_since);
	}
}

/* A try: counted in l's record, which a busy try makes. */
static int counted_try(pthread_rwlock_t *l, bool read, int err)
{
	struct stats_rec *r = rw_rec(l);
	if (!err) {
		acquired(l, r, read);
	} else if (err == EBUSY) {
		if (r || (r = shim_stats_track(l, &SR(l)->stats, ST_RWLOCK,
					       hl__load(&SR(l)->kind, HL_RELAXED))))
			shim_stats_busy(r);
	}
	return err;
}

/* A lock (until dl, NULL: none), counted (the report on; else, with the
 * deadlock detector, its wait noted): tried first; a wait is timed. */
static int counted_lock(pthread_rwlock_t *l, bool read, const struct hl__deadline *dl)
{
	int kind = hl__kind(l);
	int err = read ? hl__rwlock_tryrdlock_kind(&SR(l)->hl, kind) : hl_rwlock_trywrlock(&SR(l)->hl);
	struct stats_rec *r = rw_rec(l);
	if (!err) {
		acquired(l, r, read);
		return 0;
	}
	r = r ? r : shim_stats_track(l, &SR(l)->stats, ST_RWLOCK, hl__load(&SR(l)->kind, HL_RELAXED));
	/* Without a record (no report, or the table is full) the wait is
	 * only noted, for the deadlock detector (shim_wait_begin). */
	struct shim_wait w;
	shim_wait_begin(&w, r, read ? SL_READ : SL_WRITE, l, dl != NULL);
	err = lock_wait(l, read, kind, dl);
	uint64_t t1 = shim_wait_end(r, &w, read, err);
	if (r && !err && !read) {
		writer_begins(l);
		/* The hold is timed from the wait's end (relaxed: as above). */
		hl__store(&SR(l)->held_since, t1, HL_RELAXED);
	}
	return err;
}
SHIM_EXPORT2(shim_rwlock_destroy, pthread_rwlock_destroy, "GLIBC_2.34", "GLIBC_2.2.5");

/* ---- the hold list (shim_holds.c) ----
 * With the deadlock detector on, a call that took l lists it in the
 * thread's holds (site: the caller's return address), and unlock takes it
 * out first; a call that waits until it gets it (blocking: not a try, not
 * a timed one) first records the lock order. */
static enum stats_lock rwlock_how(pthread_rwlock_t *l, bool read)
{
	bool glibc = shim_rwlock_is_glibc(l);
	return read ? (glibc ? SL_GLIBC_READ : SL_READ) : (glibc ? SL_GLIBC_WRITE : SL_WRITE);
}

static void rwlock_before(pthread_rwlock_t *l, bool read, uintptr_t site, bool blocking)
{
	if (blocking && shim_order_on)
		shim_order_before(l, rwlock_how(l, read), site);
	shim_site = site;
}

static int rwlock_held(pthread_rwlock_t *l, int err, bool read, uintptr_t site)
{
	shim_site = 0;
	if (!err)
		shim_hold_push(l, rwlock_how(l, read), site);
	return err;
}

/* A lock of an rwlock glibc keeps, with the deadlock detector on: a wait
 * (a try that finds it taken) is noted in the thread's wait record. */
static int glibc_noted(pthread_rwlock_t *l, bool read)
{
	int err = read ? REAL(R_RWLOCK_TRYRDLOCK, int (*)(pthread_rwlock_t *))(l)
		       : REAL(R_RWLOCK_TRYWRLOCK, int (*)(pthread_rwlock_t *))(l);
	if (err != EBUSY)
		return err;
	struct shim_wait w;
	shim_wait_begin(&w, NULL, read ? SL_GLIBC_READ : SL_GLIBC_WRITE, l, false);
	err = read ? REAL(R_RWLOCK_RDLOCK, int (*)(pthread_rwlock_t *))(l)
		   : REAL(R_RWLOCK_WRLOCK, int (*)(pthread_rwlock_t *))(l);
	shim_wait_end(NULL, &w, read, err);
	return err;
}

static int rwlock_rdlock(pthread_rwlock_t *l)
{
	if (shim_rwlock_is_glibc(l))
		return hl__unlikely(shim_holds_on) ? glibc_noted(l, true)
						   : REAL(R_RWLOCK_RDLOCK, int (*)(pthread_rwlock_t *))(l);
	if (hl__unlikely(shim_stats_on || shim_holds_on))
		return counted_lock(l, true, NULL);
	return hl__rwlock_rdlock_kind(&SR(l)->hl, hl__kind(l), NULL);
}

int shim_rwlock_rdlock(pthread_rwlock_t *l)
{
	if (hl__unlikely(shim_holds_on)) {
		rwlock_before(l, true, SHIM_CALLER(), true);
		return rwlock_held(l, rwlock_rdlock(l), true, SHIM_CALLER());
	}
	return rwlock_rdlock(l);
}
SHIM_EXPORT2(shim_rwlock_rdlock, pthread_rwlock_rdlock, "GLIBC_2.34", "GLIBC_2.2.5");

static int rwlock_tryrdlock(pthread_rwlock_t *l)
{
	if (shim_rwlock_is_glibc(l))
		return REAL(R_RWLOCK_TRYRDLOCK, int (*)(pthread_rwlock_t *))(l);
	int err = hl__rwlock_tryrdlock_kind(&SR(l)->hl, hl__kind(l));
	return hl__unlikely(shim_stats_on) ? counted_try(l, true, err) : err;
}

int shim_rwlock_tryrdlock(pthread_rwlock_t *l)
{
	if (hl__unlikely(shim_holds_on)) {
		rwlock_before(l, true, SHIM_CALLER(), false);
		return rwlock_held(l, rwlock_tryrdlock(l), true, SHIM_CALLER());
	}
	return rwlock_tryrdlock(l);
}
SHIM_EXPORT2(shim_rwlock_tryrdlock, pthread_rwlock_tryrdlock, "GLIBC_2.34", "GLIBC_2.2.5");

/* glibc checks the clock and the time before anything else, even for a
 * share it could grant at once; so does hl__deadline_init. */
static int rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *abstime)
{
	if (shim_rwlock_is_glibc(l))
		return REAL(R_RWLOCK_TIMEDRDLOCK, int (*)(pthread_rwlock_t *, const struct timespec *))(
			l, abstime);
	struct hl__deadline dl;
	if (hl__deadline_init(&dl, CLOCK_REALTIME, abstime))
		return EINVAL;
	if (hl__unlikely(shim_stats_on || shim_holds_on))
		return counted_lock(l, true, &dl);
	return hl__rwlock_rdlock_kind(&SR(l)->hl, hl__kind(l), &dl);
}

int shim_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *abstime)
{
	if (hl__unlikely(shim_holds_on)) {
		rwlock_before(l, true, SHIM_CALLER(), false);
		return rwlock_held(l, rwlock_timedrdlock(l, abstime), true, SHIM_CALLER());
	}
	return rwlock_timedrdlock(l, abstime);
}
SHIM_EXPORT2(shim_rwlock_timedrdlock, pthread_rwlock_timedrdlock, "GLIBC_2.34", "GLIBC_2.2.5");

static int rwlock_clockrdlock(pthread_rwlock_t *l, clockid_t clock, const struct timespec *abstime)
{
	if (shim_rwlock_is_glibc(l))
		return REAL(R_RWLOCK_CLOCKRDLOCK,
			    int (*)(pthread_rwlock_t *, clockid_t, const struct timespec *))(l, clock, abstime);
	struct hl__deadline dl;
	if (hl__deadline_init(&dl, clock, abstime))
		return EINVAL;
	if (hl__unlikely(shim_stats_on || shim_holds_on))
		return counted_lock(l, true, &dl);
	return hl__rwlock_rdlock_kind(&SR(l)->hl, hl__kind(l), &dl);
}

int shim_rwlock_clockrdlock(pthread_rwlock_t *l, clockid_t clock, const struct timespec *abstime)
{
	if (hl__unlikely(shim_holds_on)) {
		rwlock_before(l, true, SHIM_CALLER(), false);
		return rwlock_held(l, rwlock_clockrdlock(l, clock, abstime), true, SHIM_CALLER());
	}
	return rwlock_clockrdlock(l, clock, abstime);
}
SHIM_EXPORT2(shim_rwlock_clockrdlock, pthread_rwlock_clockrdlock, "GLIBC_2.34", "GLIBC_2.30");

static int rwlock_wrlock(pthread_rwlock_t *l)
{
	if (shim_rwlock_is_glibc(l))
		return hl__unlikely(shim_holds_on) ? glibc_noted(l, false)
						   : REAL(R_RWLOCK_WRLOCK, int (*)(pthread_rwlock_t *))(l);
	if (hl__unlikely(shim_stats_on || shim_holds_on))
		return counted_lock(l, false, NULL);
	return hl__rwlock_wrlock_kind(&SR(l)->hl, hl__kind(l), NULL);
}

int shim_rwlock_wrlock(pthread_rwlock_t *l)
{
	if (hl__unlikely(shim_holds_on)) {
		rwlock_before(l, false, SHIM_CALLER(), true);
		return rwlock_held(l, rwlock_wrlock(l), false, SHIM_CALLER());
	}
	return rwlock_wrlock(l);
}
SHIM_EXPORT2(shim_rwlock_wrlock, pthread_rwlock_wrlock, "GLIBC_2.34", "GLIBC_2.2.5");

static int rwlock_trywrlock(pthread_rwlock_t *l)
{
	if (shim_rwlock_is_glibc(l))
		return REAL(R_RWLOCK_TRYWRLOCK, int (*)(pthread_rwlock_t *))(l);
	int err = hl_rwlock_trywrlock(&SR(l)->hl);
	return hl__unlikely(shim_stats_on) ? counted_try(l, false, err) : err;
}

int shim_rwlock_trywrlock(pthread_rwlock_t *l)
{
	if (hl__unlikely(shim_holds_on)) {
		rwlock_before(l, false, SHIM_CALLER(), false);
		return rwlock_held(l, rwlock_trywrlock(l), false, SHIM_CALLER());
	}
	return rwlock_trywrlock(l);
}
SHIM_EXPORT2(shim_rwlock_trywrlock, pthread_rwlock_trywrlock, "GLIBC_2.34", "GLIBC_2.2.5");

static int rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *abstime)
{
	if (shim_rwlock_is_glibc(l))
		return REAL(R_RWLOCK_TIMEDWRLOCK, int (*)(pthread_rwlock_t *, const struct timespec *))(
			l, abstime);
	struct hl__deadline dl;
	if (hl__deadline_init(&dl, CLOCK_REALTIME, abstime))
		return EINVAL;
	if (hl__unlikely(shim_stats_on || shim_holds_on))
		return counted_lock(l, false, &dl);
	return hl__rwlock_wrlock_kind(&SR(l)->hl, hl__kind(l), &dl);
}

int shim_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *abstime)
{
	if (hl__unlikely(shim_holds_on)) {
		rwlock_before(l, false, SHIM_CALLER(), false);
		return rwlock_held(l, rwlock_timedwrlock(l, abstime), false, SHIM_CALLER());
	}
	return rwlock_timedwrlock(l, abstime);
}
SHIM_EXPORT2(shim_rwlock_timedwrlock, pthread_rwlock_timedwrlock, "GLIBC_2.34", "GLIBC_2.2.5");

static int rwlock_clockwrlock(pthread_rwlock_t *l, clockid_t clock, const struct timespec *abstime)
{
	if (shim_rwlock_is_glibc(l))
		return REAL(R_RWLOCK_CLOCKWRLOCK,
			    int (*)(pthread_rwlock_t *, clockid_t, const struct timespec *))(l, clock, abstime);
	struct hl__deadline dl;
	if (hl__deadline_init(&dl, clock, abstime))
		return EINVAL;
	if (hl__unlikely(shim_stats_on || shim_holds_on))
		return counted_lock(l, false, &dl);
	return hl__rwlock_wrlock_kind(&SR(l)->hl, hl__kind(l), &dl);
}

int shim_rwlock_clockwrlock(pthread_rwlock_t *l, clockid_t clock, const struct timespec *abstime)
{
	if (hl__unlikely(shim_holds_on)) {
		rwlock_before(l, false, SHIM_CALLER(), false);
		return rwlock_held(l, rwlock_clockwrlock(l, clock, abstime), false, SHIM_CALLER());
	}
	return rwlock_clockwrlock(l, clock, abstime);
}
SHIM_EXPORT2(shim_rwlock_clockwrlock, pthread_rwlock_clockwrlock, "GLIBC_2.34", "GLIBC_2.30");

int shim_rwlock_unlock(pthread_rwlock_t *l)
{
	if (hl__unlikely(shim_holds_on))
		shim_hold_pop(l);
	if (shim_rwlock_is_glibc(l))
		return REAL(R_RWLOCK_UNLOCK, int (*)(pthread_rwlock_t *))(l);
	struct stats_rec *r;
	if (hl__likely(!shim_stats_on) || !(r = rw_rec(l)))
		return hl__rwlock_unlock_foreign(&SR(l)->hl);
	/* A writer's hold's start is read while the lock is still its own
	 * (the TID is ours only while we hold it for writing: a reader never
	 * matches); the hold is added after the release. */
	uint64_t held = 0, until = 0;
	if (hl__load(&SR(l)->writer, HL_RELAXED) == hl__tid()) {
		hl__store(&SR(l)->writer, 0, HL_RELAXED);
		held = shim_hold_take(&SR(l)->held_since, &until);
	}
	struct shim_wait w;
	shim_release_begin(&w);
	int err = hl__rwlock_unlock_foreign(&SR(l)->hl);
	/* A release that woke a waiter ended a hold that others waited for. */
	if (shim_release_end(r, &w) && !err)
		shim_stats_contended_release(r);
	shim_hold_add(r, held, until);
	shim_stats_released();
	return err;
}
SHIM_EXPORT2(shim_rwlock_unlock, pthread_rwlock_unlock, "GLIBC_2.34", "GLIBC_2.2.5");

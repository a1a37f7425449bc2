/* SPDX-License-Identifier: MIT */
/* pthread_cond_* for the shim (shim.c).
 *
 *   condvar     mutex       wait
 *   ----------  ----------  ----------------------------------------------
 *   hotlock's   hotlock's   hl_cond (wait morphing: docs/cond.md)
 *   hotlock's   glibc's     a futex sequence beside hl_cond (below)
 *   glibc's     glibc's     glibc's pthread_cond_* (process-shared)
 *   glibc's     hotlock's   glibc's condvar with a private glibc mutex,
 *                           in slices of at most 10 ms (below)
 *
 * A condvar may meet both kinds of mutex over its life (POSIX binds it to
 * one mutex only while threads wait), so signal and broadcast serve both
 * kinds of waiter: hl_cond's, then the sequence's if any waits there.
 *
 * The futex sequence (a mutex glibc keeps: robust, priority inheritance,
 * process-shared):
 *  wait:    fwaiters += 1; s = fseq; unlock m (glibc's); futex-wait while
 *           fseq == s; fwaiters -= 1 (the last access to the condvar);
 *           lock m (glibc's: EOWNERDEAD passes on).
 *  signal:  if fwaiters: fseq += 1, wake one (broadcast: all).
 *  destroy: waits until fwaiters is 0, as glibc's destroy waits for its
 *           woken waiters.
 * A waiter counts itself and reads fseq before it unlocks m, so a signaller
 * that changed the predicate under m afterwards sees the count, and its
 * increment makes the wait return at once or wakes it (seq_cst: the count
 * and the sequence are two words).  A signal may wake more waiters than it
 * must (spurious wake-ups, which POSIX allows), never fewer.
 *
 * A process-shared condvar with a mutex of hotlock's (the mutex private,
 * against POSIX's advice): glibc's wait would unlock the mutex itself, with
 * glibc's code on hotlock's bytes.  So the waiter takes a private glibc
 * mutex, releases ours and waits on glibc's condvar with that one, for at
 * most 10 ms; a signal sent between our release and glibc's wait is seen
 * at the next slice: a late wake-up, returned as a spurious one.
 *
 * The contention report (shim_stats.c): with it on, a condvar of hotlock's
 * gets a record at its first wait (its index at byte 24), and so does the
 * wait's mutex; waits, wake-ups, signals and broadcasts are counted from
 * then on.  A signal counts before it signals: the condvar may be freed
 * the moment a waiter wakes.
 *
 * The GLIBC_2.2.5 condvar ABI: old binaries' pthread_cond_t may be only 8
 * bytes, holding a pointer to the real condvar, which glibc's old functions
 * allocate at first use; the shim's do the same, with the shim's condvar.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <hotlock/futex.h>

#include "futex.h"
#include "morph.h"
#include "shim.h"
#include "shim_holds.h"
#include "shim_stats.h"
#include "shim_api.h"
#include "thread.h"

/* How long a slice of a wait on a glibc condvar with a hotlock mutex is. */
#define GLIBC_COND_SLICE_NS 10000000ull

int shim_cond_init(pthread_cond_t *c, const pthread_condattr_t *attr)
{
	clockid_t clock = CLOCK_REALTIME;
	if (attr) {
		int pshared;
		if (pthread_condattr_getpshared(attr, &pshared) || pthread_condattr_getclock(attr, &clock) ||
		    pshared != PTHREAD_PROCESS_PRIVATE ||
		    (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC))
			return REAL(R_COND_INIT, int (*)(pthread_cond_t *, const pthread_condattr_t *))(c, attr);
	}
	if (hl__unlikely(shim_stats_on))
		shim_stats_forget(c, &SC(c)->stats);    /* initialised again */
	memset(c, 0, sizeof(*c));
	/* Relaxed: published with the condvar by whatever shares it. */
	hl__store(&SC(c)->flags, clock == CLOCK_MONOTONIC ? SHIM_COND_MONOTONIC : 0, HL_RELAXED);
	return 0;
}
SHIM_EXPORT(shim_cond_init, pthread_cond_init, "GLIBC_2.3.2");

int shim_cond_destroy(pthread_cond_t *c)
{
	if (shim_cond_is_glibc(c))
		return REAL(R_COND_DESTROY, int (*)(pthread_cond_t *))(c);
	/* Waiters of the futex sequence (a mutex glibc keeps) leave the count
	 * as their last access to the condvar, before they take the mutex
	 * again: destroy waits for them, as glibc's does for its waiters, so
	 * that destroy right after a broadcast returns 0 and nobody writes the
	 * condvar after it.  (One that was never woken is waited for too, as
	 * by glibc: destroying a condvar with blocked waiters is undefined.)
	 * Acquire: pairs with the waiters' release decrement, so their
	 * accesses to the condvar come before whatever reuses its memory. */
	long sleep_ns = 1000;
	while (hl__load(&SC(c)->fwaiters, HL_ACQUIRE))
		hl__poll_backoff(NULL, &sleep_ns);
	int err = hl_cond_destroy(&SC(c)->hl);
	if (!err && hl__unlikely(shim_stats_on))
		shim_stats_forget(c, &SC(c)->stats);
	return err;
}

/* With the report on: counts a signal or broadcast, before it is sent. */
static void count_signal(struct shim_cond *sc, bool broadcast)
{
	/* Relaxed: see shim_stats_rec. */
	struct stats_rec *r = shim_stats_rec(sc, hl__load(&sc->stats, HL_RELAXED));
	if (r)
		shim_cond_signalled(r, hl__cond_waiters(&sc->hl) + hl__load(&sc->fwaiters, HL_RELAXED),
				    broadcast);
}
SHIM_EXPORT(shim_cond_destroy, pthread_cond_destroy, "GLIBC_2.3.2");

/* Signal or broadcast (wake: 1 or all) where the futex sequence has
 * waiters.  The rule of every wake-up: a woken waiter may destroy the
 * condvar and free it at once, so the wake is the waker's last access to it
 * (hl_cond's signal and broadcast keep it; the futex call after the
 * increment is harmless on freed memory).  So the count is read first and
 * each kind served in an order that ends with a wake: hl_cond's waiters
 * first, only if any are listed (both kinds at once means two mutexes in
 * concurrent waits, which POSIX leaves undefined), then the sequence. */
static void serve_sequence(struct shim_cond *sc, int wake)
{
	if (hl__cond_has_waiters(&sc->hl)) {
		if (wake == 1)
			hl_cond_signal(&sc->hl);
		else
			hl_cond_broadcast(&sc->hl);
	}
	hl__fetch_add(&sc->fseq, 1, HL_SEQ_CST);
	hl_futex_wake((uint32_t *)&sc->fseq, wake);
}

int shim_cond_signal(pthread_cond_t *c)
{
	if (shim_cond_is_glibc(c))
		return REAL(R_COND_SIGNAL, int (*)(pthread_cond_t *))(c);
	struct shim_cond *sc = SC(c);
	if (hl__unlikely(shim_stats_on))
		count_signal(sc, false);
	/* seq_cst: pairs with the waiter's count (see the top).  Read
	 * before any waiter is woken: see serve_sequence. */
	if (!hl__load(&sc->fwaiters, HL_SEQ_CST)) {
		hl_cond_signal(&sc->hl);
		return 0;
	}
	serve_sequence(sc, 1);
	return 0;
}
SHIM_EXPORT(shim_cond_signal, pthread_cond_signal, "GLIBC_2.3.2");

int shim_cond_broadcast(pthread_cond_t *c)
{
	if (shim_cond_is_glibc(c))
		return REAL(R_COND_BROADCAST, int (*)(pthread_cond_t *))(c);
	struct shim_cond *sc = SC(c);
	if (hl__unlikely(shim_stats_on))
		count_signal(sc, true);
	/* seq_cst: as in signal. */
	if (!hl__load(&sc->fwaiters, HL_SEQ_CST)) {
		hl_cond_broadcast(&sc->hl);
		return 0;
	}
	serve_sequence(sc, INT32_MAX);
	return 0;
}
SHIM_EXPORT(shim_cond_broadcast, pthread_cond_broadcast, "GLIBC_2.3.2");

/* The deadline of a wait: abstime on clock (NULL: none), ended early by
 * intr (NULL: never).  Returns NULL for a wait with neither. */
static const struct hl__deadline *wait_deadline(struct hl__deadline *dl, clockid_t clock,
					       const struct timespec *abstime,
					       const _Atomic uint32_t *intr)
{
	if (!abstime && !intr)
		return NULL;
	dl->clock = clock;
	dl->forever = !abstime;
	if (abstime)
		dl->abs = *abstime;
	dl->interrupt = intr;
	return dl;
}

/* Both hotlock's.  The mutex's checks are glibc's: EPERM unless the caller
 * holds an errorcheck or recursive mutex (hl_cond checks every kind); a
 * recursive mutex is released and retaken with its whole count. */
static int wait_hotlock(struct shim_cond *c, pthread_mutex_t *pm, int type,
			const struct hl__deadline *dl)
{
	struct shim_mutex *m = SM(pm);
	uint32_t count = 0;
	if (type == PTHREAD_MUTEX_RECURSIVE && hl__mutex_held_by(&m->hl, hl__tid())) {
		count = m->count;
		m->count = 0;
	}
	/* Relaxed: the wait's release of the mutex publishes it to whoever
	 * takes the mutex next; the unlock after our wait, its end. */
	hl__fetch_add(&m->cond_waiters, 1, HL_RELAXED);
	int err = hl__cond_wait_dl(&c->hl, &m->hl, dl);
	hl__fetch_sub(&m->cond_waiters, 1, HL_RELAXED);
	if (count)
		m->count = count;
	return err;
}

/* A mutex glibc keeps: the futex sequence (see the top).  *quiet: the
 * sequence had not moved when the wait ended (it took no signal). */
static int wait_sequence(struct shim_cond *c, pthread_mutex_t *m, const struct hl__deadline *dl,
			 bool *quiet)
{
	*quiet = true;
	/* seq_cst: see the top. */
	hl__fetch_add(&c->fwaiters, 1, HL_SEQ_CST);
	uint32_t seq = hl__load(&c->fseq, HL_SEQ_CST);
	/* glibc's own wait keeps the mutex's user count (__nusers) through
	 * the wait, so that its destroy says EBUSY meanwhile (glibc's
	 * tst-mutexpi8); its unlock takes one off, so the owner adds one
	 * first.  glibc changes the count only with the mutex held, as we
	 * do. */
	const bool owner = (uint32_t)m->__data.__owner == hl__tid();
	if (owner)
		m->__data.__nusers++;
	int err = REAL(R_MUTEX_UNLOCK, int (*)(pthread_mutex_t *))(m);
	if (err) {
		if (owner)
			m->__data.__nusers--;
		hl__fetch_sub(&c->fwaiters, 1, HL_RELAXED);
		return err;
	}
	const struct timespec *abs = dl && !dl->forever ? &dl->abs : NULL;
	clockid_t clock = dl ? dl->clock : CLOCK_REALTIME;
	int r;
	if (dl && dl->interrupt)
		r = hl__futex_wait_either((uint32_t *)&c->fseq, seq, (const uint32_t *)dl->interrupt, 0,
					  clock, abs);
	else
		r = hl_futex_wait((uint32_t *)&c->fseq, seq, clock, abs);
	/* seq_cst: as a signal's. */
	*quiet = hl__load(&c->fseq, HL_SEQ_CST) == seq;
	/* Release: our last access to the condvar (see shim_cond_destroy). */
	hl__fetch_sub(&c->fwaiters, 1, HL_RELEASE);
	err = REAL(R_MUTEX_LOCK, int (*)(pthread_mutex_t *))(m);
	if (owner && (!err || err == EOWNERDEAD))
		m->__data.__nusers--;   /* ours again: the count the lock added goes */
	if (err)
		return err;             /* EOWNERDEAD and the like, as glibc's wait */
	return r == ETIMEDOUT && abs ? ETIMEDOUT : 0;
}

/* A process-shared condvar with a mutex of hotlock's: slices of glibc's
 * wait with a private glibc mutex (see the top).  Cancellation is seen
 * between slices (cond_wait).  *quiet: the slice ended at its time (it
 * took no signal). */
static int wait_glibc_cond(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
			   const struct timespec *abstime, bool *quiet)
{
	int type = shim_mutex_type(m);
	if ((type == PTHREAD_MUTEX_RECURSIVE || type == PTHREAD_MUTEX_ERRORCHECK) &&
	    !hl__mutex_held_by(&SM(m)->hl, hl__tid()))
		return EPERM;
	pthread_mutex_t inner;
	memset(&inner, 0, sizeof(inner));
	REAL(R_MUTEX_LOCK, int (*)(pthread_mutex_t *))(&inner);
	/* A recursive mutex's whole count (another type's word is the
	 * deadlock detector's mark, shim_holds.c, and stays). */
	uint32_t count = type == PTHREAD_MUTEX_RECURSIVE ? SM(m)->count : 0;
	if (count)
		SM(m)->count = 0;
	/* Relaxed: as in wait_hotlock. */
	hl__fetch_add(&SM(m)->cond_waiters, 1, HL_RELAXED);
	hl__mutex_unlock_any(&SM(m)->hl);
	struct timespec slice;
	hl__clock_gettime(CLOCK_MONOTONIC, &slice);
	uint64_t until = hl__ts_to_ns(&slice) + GLIBC_COND_SLICE_NS;
	slice.tv_sec = (time_t)(until / HL_NSEC_PER_SEC);
	slice.tv_nsec = (long)(until % HL_NSEC_PER_SEC);
	int r = REAL(R_COND_CLOCKWAIT,
		     int (*)(pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *))(
		c, &inner, CLOCK_MONOTONIC, &slice);
	*quiet = r == ETIMEDOUT;
	REAL(R_MUTEX_UNLOCK, int (*)(pthread_mutex_t *))(&inner);
	hl__mutex_lock_any(&SM(m)->hl, NULL);
	hl__fetch_sub(&SM(m)->cond_waiters, 1, HL_RELAXED);
	if (count)
		SM(m)->count = count;
	struct hl__deadline dl;
	if (abstime && hl__deadline_init(&dl, clock, abstime) == 0 && hl__deadline_passed(&dl))
		return ETIMEDOUT;
	return 0;
}

/* Every wait: clock and abstime (NULL: none) already checked. */
static int cond_wait_now(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
			 const struct timespec *abstime)
{
	int type = shim_mutex_type(m);
	if (shim_cond_is_glibc(c)) {
		if (type < 0) {
			if (!abstime)
				return REAL(R_COND_WAIT, int (*)(pthread_cond_t *, pthread_mutex_t *))(c, m);
			return REAL(R_COND_CLOCKWAIT, int (*)(pthread_cond_t *, pthread_mutex_t *, clockid_t,
							      const struct timespec *))(c, m, clock, abstime);
		}
		int state;
		bool quiet = false;
		const _Atomic uint32_t *intr = shim_cancel_begin(&state);
		int err = wait_glibc_cond(c, m, clock, abstime, &quiet);
		/* Relaxed: see shim_cancel_end. */
		shim_cancel_end(intr && quiet && hl__load(intr, HL_RELAXED), state);
		return err;
	}
	int state;
	bool quiet;
	const _Atomic uint32_t *intr = shim_cancel_begin(&state);
	struct hl__deadline d;
	const struct hl__deadline *dl = wait_deadline(&d, clock, abstime, intr);
	struct stats_rec *r = NULL, *mr = NULL;
	uint64_t t0 = 0;
	if (hl__unlikely(shim_stats_on)) {
		r = shim_stats_track(c, &SC(c)->stats, ST_COND, clock == CLOCK_MONOTONIC);
		/* The mutex's hold ends with the wait's release of it. */
		if (type >= 0 && (mr = shim_mutex_stats(m))) {
			uint64_t until = 0, since = shim_hold_take(&SM(m)->held_since, &until);
			shim_hold_add(mr, since, until);
		}
		if (r)
			t0 = shim_cond_wait_begin(r, c, m, abstime != NULL);
	}
	int err;
	if (type >= 0) {
		err = wait_hotlock(SC(c), m, type, dl);
		quiet = err == ETIMEDOUT;       /* hl_cond gave the wait up */
	} else {
		err = wait_sequence(SC(c), m, dl, &quiet);
	}
	if (r)
		shim_cond_wait_end(r, t0, c, m, err);
	if (mr && (!err || err == ETIMEDOUT))
		/* Taken again: an acquisition whose wait was the condvar's. */
		shim_stats_acquired(&SM(m)->held_since);
	/* The cancel acts here only if it is what ended the wait: a wait that
	 * took a signal or a broadcast returns 0, and its cancel stays
	 * pending for the next cancellation point (the thread was woken
	 * before it was cancelled, as a glibc waiter can be; POSIX: a waiter
	 * ended by its cancel must not consume a signal).  So no cancelled
	 * wait touches the condvar after its wait, nor passes a signal on: a
	 * broadcast and a destroy may have come and gone.  An interrupt is no
	 * timeout.  Relaxed: see shim_cancel_end. */
	bool cancelled = intr && quiet && hl__load(intr, HL_RELAXED);
	if (cancelled && err == ETIMEDOUT &&
	    !(abstime && hl__deadline_passed(&(struct hl__deadline){ .clock = clock, .abs = *abstime })))
		err = 0;
	shim_cancel_end(cancelled, state);
	return err;
}

/* A wait called from site.  With the deadlock detector on, the mutex
 * leaves the thread's holds while the wait has released it, and comes
 * back when the wait has taken it again (a blocking acquisition: it
 * orders the mutex after the locks the thread still holds), whatever the
 * wait's answer but EPERM (a mutex the thread did not hold). */
static int cond_wait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
		     const struct timespec *abstime, uintptr_t site)
{
	if (hl__likely(!shim_holds_on))
		return cond_wait_now(c, m, clock, abstime);
	enum stats_lock how = shim_mutex_type(m) < 0 ? SL_GLIBC_MUTEX : SL_MUTEX;
	if (shim_mutex_listed)
		shim_hold_pop(m);
	if (shim_order_on)
		shim_order_before(m, how, site);
	shim_site = site;
	/* With the report on, cond_wait_now notes the wait; else here. */
	struct stats_thread *t = shim_stats_on ? NULL : shim_stats_thread();
	if (t)
		shim_wait_note(t, SL_COND, c, m, abstime != NULL);
	int err = cond_wait_now(c, m, clock, abstime);
	if (t)
		shim_wait_done(t);
	shim_site = 0;
	if (err == EPERM)
		return err;
	if (shim_mutex_listed)
		shim_hold_push(m, how, site);
	else if (how == SL_MUTEX)
		/* Relaxed: the holder's own (shim_mutex.c, mutex_held). */
		hl__store(&SM(m)->held_since, site, HL_RELAXED);
	return err;
}

/* EINVAL for a bad clock or time, checked before the wait, as glibc does. */
static int check_time(clockid_t clock, const struct timespec *abstime)
{
	if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
		return EINVAL;
	if (abstime->tv_nsec < 0 || abstime->tv_nsec >= (long)HL_NSEC_PER_SEC)
		return EINVAL;
	return 0;
}

int shim_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	return cond_wait(c, m, CLOCK_REALTIME, NULL, SHIM_CALLER());
}
SHIM_EXPORT(shim_cond_wait, pthread_cond_wait, "GLIBC_2.3.2");

int shim_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abstime)
{
	/* The clock bit is glibc's own, where glibc keeps the condvar too. */
	clockid_t clock = CLOCK_REALTIME;
	if (hl__load(&SC(c)->flags, HL_RELAXED) & SHIM_COND_MONOTONIC)
		clock = CLOCK_MONOTONIC;
	if (shim_cond_is_glibc(c) && shim_mutex_type(m) < 0)
		return REAL(R_COND_TIMEDWAIT,
			    int (*)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *))(c, m, abstime);
	int err = check_time(clock, abstime);
	return err ? err : cond_wait(c, m, clock, abstime, SHIM_CALLER());
}
SHIM_EXPORT(shim_cond_timedwait, pthread_cond_timedwait, "GLIBC_2.3.2");

int shim_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
			const struct timespec *abstime)
{
	int err = check_time(clock, abstime);
	return err ? err : cond_wait(c, m, clock, abstime, SHIM_CALLER());
}
SHIM_EXPORT2(shim_cond_clockwait, pthread_cond_clockwait, "GLIBC_2.34", "GLIBC_2.30");

/* ---- the GLIBC_2.2.5 ABI (see the top) ----------------------------------- */

/* The condvar an old-ABI object points to, allocated at first use. */
static pthread_cond_t *old_cond(void *obj)
{
	_Atomic(pthread_cond_t *) *slot = obj;
	/* Acquire: pairs with the release CAS below (the condvar's init). */
	pthread_cond_t *c = hl__load(slot, HL_ACQUIRE);
	if (hl__likely(c != NULL))
		return c;
	pthread_cond_t *fresh = calloc(1, sizeof(*fresh));
	if (!fresh)
		return NULL;
	/* Release: the zeroed condvar before its pointer; acquire on failure:
	 * the winner's condvar. */
	if (!hl__cas(slot, &c, fresh, HL_ACQ_REL)) {
		free(fresh);
		return c;
	}
	return fresh;
}

int shim_cond_init_old(void *obj, const pthread_condattr_t *attr)
{
	(void)attr;     /* glibc's old init ignores the attributes too */
	*(pthread_cond_t **)obj = NULL;
	return 0;
}
SHIM_EXPORT_OLD(shim_cond_init_old, pthread_cond_init, "GLIBC_2.2.5");

int shim_cond_destroy_old(void *obj)
{
	pthread_cond_t *c = *(pthread_cond_t **)obj;
	if (c) {
		int err = shim_cond_destroy(c);
		if (err)
			return err;
		free(c);
	}
	return 0;
}
SHIM_EXPORT_OLD(shim_cond_destroy_old, pthread_cond_destroy, "GLIBC_2.2.5");

int shim_cond_wait_old(void *obj, pthread_mutex_t *m)
{
	pthread_cond_t *c = old_cond(obj);
	return c ? shim_cond_wait(c, m) : ENOMEM;
}
SHIM_EXPORT_OLD(shim_cond_wait_old, pthread_cond_wait, "GLIBC_2.2.5");

int shim_cond_timedwait_old(void *obj, pthread_mutex_t *m, const struct timespec *abstime)
{
	pthread_cond_t *c = old_cond(obj);
	return c ? shim_cond_timedwait(c, m, abstime) : ENOMEM;
}
SHIM_EXPORT_OLD(shim_cond_timedwait_old, pthread_cond_timedwait, "GLIBC_2.2.5");

int shim_cond_signal_old(void *obj)
{
	pthread_cond_t *c = old_cond(obj);
	return c ? shim_cond_signal(c) : ENOMEM;
}
SHIM_EXPORT_OLD(shim_cond_signal_old, pthread_cond_signal, "GLIBC_2.2.5");

int shim_cond_broadcast_old(void *obj)
{
	pthread_cond_t *c = old_cond(obj);
	return c ? shim_cond_broadcast(c) : ENOMEM;
}
SHIM_EXPORT_OLD(shim_cond_broadcast_old, pthread_cond_broadcast, "GLIBC_2.2.5");

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
 */
#include <errno.h>
#include <string.h>

#include "morph.h"
#include "shim.h"
#include "shim_api.h"
#include "thread.h"

/* glibc 2.32+: whether the process has a single thread (shim_api.h,
 * hl__mutex_lock_fast). */
#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>
#define single_threaded() hl_unlikely(__libc_single_threaded != 0)
#else
#define single_threaded() false
#endif

static inline bool held_by_me(pthread_mutex_t *m)
{
	return hl__mutex_held_by(&SM(m)->hl, hl_tid());
}

int shim_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *attr)
{
	int type = PTHREAD_MUTEX_NORMAL;
	if (attr) {
		int robust, pshared, protocol;
		if (pthread_mutexattr_gettype(attr, &type) || pthread_mutexattr_getrobust(attr, &robust) ||
		    pthread_mutexattr_getpshared(attr, &pshared) ||
		    pthread_mutexattr_getprotocol(attr, &protocol) ||
		    robust != PTHREAD_MUTEX_STALLED || pshared != PTHREAD_PROCESS_PRIVATE ||
		    protocol != PTHREAD_PRIO_NONE || type < 0 || type > PTHREAD_MUTEX_ADAPTIVE_NP)
			return REAL(R_MUTEX_INIT, int (*)(pthread_mutex_t *, const pthread_mutexattr_t *))(m, attr);
	}
	memset(m, 0, sizeof(*m));
	/* Relaxed: the mutex is published to other threads by whatever
	 * shares it after init. */
	hl_store(&SM(m)->kind, type, HL_RELAXED);
	return 0;
}
SHIM_EXPORT(shim_mutex_init, pthread_mutex_init, "GLIBC_2.2.5");

int shim_mutex_destroy(pthread_mutex_t *m)
{
	if (shim_mutex_type(m) < 0)
		return REAL(R_MUTEX_DESTROY, int (*)(pthread_mutex_t *))(m);
	int err = hl_mutex_destroy(&SM(m)->hl);
	if (err)
		return err;
	/* As glibc: a destroyed mutex has kind -1, which every call then
	 * refuses (glibc's functions answer EINVAL). */
	hl_store(&SM(m)->kind, -1, HL_RELAXED);
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

int shim_mutex_lock(pthread_mutex_t *m)
{
	int type = shim_mutex_type(m);
	if (hl_likely(type == PTHREAD_MUTEX_NORMAL || type == PTHREAD_MUTEX_ADAPTIVE_NP)) {
		if (hl__mutex_lock_fast(&SM(m)->hl, hl_tid_known(), single_threaded()))
			return 0;
		int err = hl_mutex_lock(&SM(m)->hl);
		return hl_likely(err != EDEADLK) ? err : hl__mutex_lock_any(&SM(m)->hl, NULL);
	}
	if (type == PTHREAD_MUTEX_RECURSIVE && held_by_me(m))
		return recursive_again(m);
	if (type >= 0)
		return hl_mutex_lock(&SM(m)->hl);       /* errorcheck: EDEADLK */
	return REAL(R_MUTEX_LOCK, int (*)(pthread_mutex_t *))(m);
}
SHIM_EXPORT(shim_mutex_lock, pthread_mutex_lock, "GLIBC_2.2.5");

int shim_mutex_trylock(pthread_mutex_t *m)
{
	int type = shim_mutex_type(m);
	if (type == PTHREAD_MUTEX_RECURSIVE && held_by_me(m))
		return recursive_again(m);
	if (type >= 0)
		return hl_mutex_trylock(&SM(m)->hl);
	return REAL(R_MUTEX_TRYLOCK, int (*)(pthread_mutex_t *))(m);
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
	if (hl_mutex_trylock(&SM(m)->hl) == 0)
		return 0;
	struct hl_deadline dl;
	int err = hl_deadline_init(&dl, clock, abstime);
	return err ? err : hl__mutex_lock_any(&SM(m)->hl, &dl);
}

int shim_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime)
{
	int type = shim_mutex_type(m);
	if (type >= 0)
		return timed_lock(m, type, CLOCK_REALTIME, abstime);
	return REAL(R_MUTEX_TIMEDLOCK, int (*)(pthread_mutex_t *, const struct timespec *))(m, abstime);
}
SHIM_EXPORT2(shim_mutex_timedlock, pthread_mutex_timedlock, "GLIBC_2.34", "GLIBC_2.2.5");

int shim_mutex_clocklock(pthread_mutex_t *m, clockid_t clock, const struct timespec *abstime)
{
	int type = shim_mutex_type(m);
	if (type >= 0)
		return timed_lock(m, type, clock, abstime);
	return REAL(R_MUTEX_CLOCKLOCK, int (*)(pthread_mutex_t *, clockid_t, const struct timespec *))(
		m, clock, abstime);
}
SHIM_EXPORT2(shim_mutex_clocklock, pthread_mutex_clocklock, "GLIBC_2.34", "GLIBC_2.30");

int shim_mutex_unlock(pthread_mutex_t *m)
{
	int type = shim_mutex_type(m);
	if (hl_likely(type == PTHREAD_MUTEX_NORMAL || type == PTHREAD_MUTEX_ADAPTIVE_NP)) {
		if (hl__mutex_unlock_fast(&SM(m)->hl, hl_tid_known(), single_threaded()))
			return 0;
		int err = hl_mutex_unlock(&SM(m)->hl);
		return hl_likely(err != EPERM) ? err : hl__mutex_unlock_any(&SM(m)->hl);
	}
	if (type == PTHREAD_MUTEX_RECURSIVE) {
		if (!held_by_me(m))
			return EPERM;
		if (SM(m)->count) {
			SM(m)->count--;
			return 0;
		}
	}
	if (type >= 0)
		return hl_mutex_unlock(&SM(m)->hl);     /* errorcheck: EPERM */
	return REAL(R_MUTEX_UNLOCK, int (*)(pthread_mutex_t *))(m);
}
SHIM_EXPORT(shim_mutex_unlock, pthread_mutex_unlock, "GLIBC_2.2.5");

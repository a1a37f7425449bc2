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
 *     which glibc treats as the default)      treats these two alike)
 *   PTHREAD_RWLOCK_PREFER_WRITER_            HL_RWLOCK_PREFER_WRITER: a
 *     NONRECURSIVE_NP (2)                     waiting writer keeps new
 *                                             readers out
 *
 * A thread's recursive read lock is granted by hl_rwlock itself, whatever
 * waits (its count of the read locks each thread holds), in every kind.
 */
#include <errno.h>
#include <string.h>

#include "shim.h"
#include "shim_api.h"

static inline int hl_kind(pthread_rwlock_t *l)
{
	/* Relaxed: written by init before the lock was shared. */
	return hl_load(&SR(l)->kind, HL_RELAXED) == PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP
		       ? HL_RWLOCK_PREFER_WRITER
		       : HL_RWLOCK_PREFER_READER;
}

int shim_rwlock_init(pthread_rwlock_t *l, const pthread_rwlockattr_t *attr)
{
	int kind = PTHREAD_RWLOCK_PREFER_READER_NP;
	if (attr) {
		int pshared;
		if (pthread_rwlockattr_getkind_np(attr, &kind) ||
		    pthread_rwlockattr_getpshared(attr, &pshared) ||
		    pshared != PTHREAD_PROCESS_PRIVATE || kind < 0 ||
		    kind > PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP)
			return REAL(R_RWLOCK_INIT, int (*)(pthread_rwlock_t *, const pthread_rwlockattr_t *))(
				l, attr);
	}
	memset(l, 0, sizeof(*l));
	/* Relaxed: published with the rwlock by whatever shares it. */
	hl_store(&SR(l)->kind, (uint32_t)kind, HL_RELAXED);
	return 0;
}
SHIM_EXPORT2(shim_rwlock_init, pthread_rwlock_init, "GLIBC_2.34", "GLIBC_2.2.5");

/* glibc's destroy does nothing and returns 0, held or not; so does ours
 * (hl_rwlock_destroy would say EBUSY for a held one, an answer a program
 * written against glibc has never seen). */
int shim_rwlock_destroy(pthread_rwlock_t *l)
{
	if (shim_rwlock_is_glibc(l))
		return REAL(R_RWLOCK_DESTROY, int (*)(pthread_rwlock_t *))(l);
	return 0;
}
SHIM_EXPORT2(shim_rwlock_destroy, pthread_rwlock_destroy, "GLIBC_2.34", "GLIBC_2.2.5");

int shim_rwlock_rdlock(pthread_rwlock_t *l)
{
	if (shim_rwlock_is_glibc(l))
		return REAL(R_RWLOCK_RDLOCK, int (*)(pthread_rwlock_t *))(l);
	return hl__rwlock_rdlock_kind(&SR(l)->hl, hl_kind(l), NULL);
}
SHIM_EXPORT2(shim_rwlock_rdlock, pthread_rwlock_rdlock, "GLIBC_2.34", "GLIBC_2.2.5");

int shim_rwlock_tryrdlock(pthread_rwlock_t *l)
{
	if (shim_rwlock_is_glibc(l))
		return REAL(R_RWLOCK_TRYRDLOCK, int (*)(pthread_rwlock_t *))(l);
	return hl__rwlock_tryrdlock_kind(&SR(l)->hl, hl_kind(l));
}
SHIM_EXPORT2(shim_rwlock_tryrdlock, pthread_rwlock_tryrdlock, "GLIBC_2.34", "GLIBC_2.2.5");

/* glibc checks the clock and the time before anything else, even for a
 * share it could grant at once; so does hl_deadline_init. */
int shim_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *abstime)
{
	if (shim_rwlock_is_glibc(l))
		return REAL(R_RWLOCK_TIMEDRDLOCK, int (*)(pthread_rwlock_t *, const struct timespec *))(
			l, abstime);
	struct hl_deadline dl;
	if (hl_deadline_init(&dl, CLOCK_REALTIME, abstime))
		return EINVAL;
	return hl__rwlock_rdlock_kind(&SR(l)->hl, hl_kind(l), &dl);
}
SHIM_EXPORT2(shim_rwlock_timedrdlock, pthread_rwlock_timedrdlock, "GLIBC_2.34", "GLIBC_2.2.5");

int shim_rwlock_clockrdlock(pthread_rwlock_t *l, clockid_t clock, const struct timespec *abstime)
{
	if (shim_rwlock_is_glibc(l))
		return REAL(R_RWLOCK_CLOCKRDLOCK,
			    int (*)(pthread_rwlock_t *, clockid_t, const struct timespec *))(l, clock, abstime);
	struct hl_deadline dl;
	if (hl_deadline_init(&dl, clock, abstime))
		return EINVAL;
	return hl__rwlock_rdlock_kind(&SR(l)->hl, hl_kind(l), &dl);
}
SHIM_EXPORT2(shim_rwlock_clockrdlock, pthread_rwlock_clockrdlock, "GLIBC_2.34", "GLIBC_2.30");

int shim_rwlock_wrlock(pthread_rwlock_t *l)
{
	if (shim_rwlock_is_glibc(l))
		return REAL(R_RWLOCK_WRLOCK, int (*)(pthread_rwlock_t *))(l);
	return hl__rwlock_wrlock_kind(&SR(l)->hl, hl_kind(l), NULL);
}
SHIM_EXPORT2(shim_rwlock_wrlock, pthread_rwlock_wrlock, "GLIBC_2.34", "GLIBC_2.2.5");

int shim_rwlock_trywrlock(pthread_rwlock_t *l)
{
	if (shim_rwlock_is_glibc(l))
		return REAL(R_RWLOCK_TRYWRLOCK, int (*)(pthread_rwlock_t *))(l);
	return hl_rwlock_trywrlock(&SR(l)->hl);
}
SHIM_EXPORT2(shim_rwlock_trywrlock, pthread_rwlock_trywrlock, "GLIBC_2.34", "GLIBC_2.2.5");

int shim_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *abstime)
{
	if (shim_rwlock_is_glibc(l))
		return REAL(R_RWLOCK_TIMEDWRLOCK, int (*)(pthread_rwlock_t *, const struct timespec *))(
			l, abstime);
	struct hl_deadline dl;
	if (hl_deadline_init(&dl, CLOCK_REALTIME, abstime))
		return EINVAL;
	return hl__rwlock_wrlock_kind(&SR(l)->hl, hl_kind(l), &dl);
}
SHIM_EXPORT2(shim_rwlock_timedwrlock, pthread_rwlock_timedwrlock, "GLIBC_2.34", "GLIBC_2.2.5");

int shim_rwlock_clockwrlock(pthread_rwlock_t *l, clockid_t clock, const struct timespec *abstime)
{
	if (shim_rwlock_is_glibc(l))
		return REAL(R_RWLOCK_CLOCKWRLOCK,
			    int (*)(pthread_rwlock_t *, clockid_t, const struct timespec *))(l, clock, abstime);
	struct hl_deadline dl;
	if (hl_deadline_init(&dl, clock, abstime))
		return EINVAL;
	return hl__rwlock_wrlock_kind(&SR(l)->hl, hl_kind(l), &dl);
}
SHIM_EXPORT2(shim_rwlock_clockwrlock, pthread_rwlock_clockwrlock, "GLIBC_2.34", "GLIBC_2.30");

int shim_rwlock_unlock(pthread_rwlock_t *l)
{
	if (shim_rwlock_is_glibc(l))
		return REAL(R_RWLOCK_UNLOCK, int (*)(pthread_rwlock_t *))(l);
	return hl_rwlock_unlock(&SR(l)->hl);
}
SHIM_EXPORT2(shim_rwlock_unlock, pthread_rwlock_unlock, "GLIBC_2.34", "GLIBC_2.2.5");

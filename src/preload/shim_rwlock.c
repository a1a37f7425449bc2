/* pthread_rwlock_* for the shim (shim.c): hotlock's rwlocks on hl_rwlock,
 * process-shared ones (and kinds the shim does not know) on glibc's.
 *
 * Recursive read locks.  POSIX lets a thread that holds a read lock take it
 * again, and glibc's default kind (PTHREAD_RWLOCK_PREFER_READER_NP, and
 * PREFER_WRITER_NP, which glibc treats the same) grants it even while a
 * writer waits.  hl_rwlock is fair: a reader queues behind a waiting
 * writer, and a thread that already holds a share would wait for a writer
 * that waits for it.  So each thread keeps a record of the rwlocks it holds
 * for reading (thread-local, at most READ_HOLDS of them at once) and takes
 * a share of a lock it holds already directly (hl__rwlock_rdlock_held),
 * whatever waits.  PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP promises
 * no such recursion, and skips the record.  A thread that holds more than
 * READ_HOLDS rwlocks for reading at once takes the extra ones unrecorded:
 * a recursive read of those queues behind a waiting writer as hl_rwlock
 * does (docs/shim.md, Limits).
 *
 * Unlock does not say which hold it releases; the record does: a recorded
 * lock gives back a read hold, any other is hl_rwlock_unlock's to sort out
 * (the writer, or an unrecorded reader).
 */
#include <errno.h>
#include <string.h>

#include "shim.h"
#include "shim_api.h"

#define READ_HOLDS 32

struct read_hold {
	pthread_rwlock_t *lock;
	uint32_t holds;
};
static __thread struct read_hold read_held[READ_HOLDS] __attribute__((tls_model("initial-exec")));
static __thread unsigned read_held_used __attribute__((tls_model("initial-exec")));

static inline bool recursive_reads(pthread_rwlock_t *l)
{
	return hl_load(&SR(l)->kind, HL_RELAXED) != PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP;
}

static struct read_hold *read_hold_find(pthread_rwlock_t *l)
{
	for (unsigned i = 0; i < read_held_used; i++)
		if (read_held[i].lock == l)
			return &read_held[i];
	return NULL;
}

static void read_hold_add(pthread_rwlock_t *l)
{
	if (read_held_used < READ_HOLDS)
		read_held[read_held_used++] = (struct read_hold){ l, 1 };
}

/* Gives back one recorded read hold of l, if there is one. */
static void read_hold_drop(pthread_rwlock_t *l)
{
	struct read_hold *h = read_hold_find(l);
	if (h && --h->holds == 0)
		*h = read_held[--read_held_used];
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

/* A read lock of hotlock's rwlock l by `take` (hl_rwlock_rdlock and its
 * try and timed forms), or a share of one the caller holds already. */
#define READ_LOCK(l, take)                                                   \
	do {                                                                 \
		bool rec_ = recursive_reads(l);                              \
		struct read_hold *h_ = rec_ ? read_hold_find(l) : NULL;      \
		if (h_) {                                                    \
			int e_ = hl__rwlock_rdlock_held(&SR(l)->hl);          \
			if (!e_)                                             \
				h_->holds++;                                 \
			return e_;                                           \
		}                                                            \
		int err_ = (take);                                           \
		if (!err_ && rec_)                                           \
			read_hold_add(l);                                    \
		return err_;                                                 \
	} while (0)

int shim_rwlock_rdlock(pthread_rwlock_t *l)
{
	if (shim_rwlock_is_glibc(l))
		return REAL(R_RWLOCK_RDLOCK, int (*)(pthread_rwlock_t *))(l);
	READ_LOCK(l, hl_rwlock_rdlock(&SR(l)->hl));
}
SHIM_EXPORT2(shim_rwlock_rdlock, pthread_rwlock_rdlock, "GLIBC_2.34", "GLIBC_2.2.5");

int shim_rwlock_tryrdlock(pthread_rwlock_t *l)
{
	if (shim_rwlock_is_glibc(l))
		return REAL(R_RWLOCK_TRYRDLOCK, int (*)(pthread_rwlock_t *))(l);
	READ_LOCK(l, hl_rwlock_tryrdlock(&SR(l)->hl));
}
SHIM_EXPORT2(shim_rwlock_tryrdlock, pthread_rwlock_tryrdlock, "GLIBC_2.34", "GLIBC_2.2.5");

/* glibc checks the clock and the time before anything else, even for a
 * share it could grant at once. */
static inline int check_time(clockid_t clock, const struct timespec *abstime)
{
	struct hl_deadline dl;
	return hl_deadline_init(&dl, clock, abstime);
}

int shim_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *abstime)
{
	if (shim_rwlock_is_glibc(l))
		return REAL(R_RWLOCK_TIMEDRDLOCK, int (*)(pthread_rwlock_t *, const struct timespec *))(
			l, abstime);
	if (check_time(CLOCK_REALTIME, abstime))
		return EINVAL;
	READ_LOCK(l, hl_rwlock_timedrdlock(&SR(l)->hl, CLOCK_REALTIME, abstime));
}
SHIM_EXPORT2(shim_rwlock_timedrdlock, pthread_rwlock_timedrdlock, "GLIBC_2.34", "GLIBC_2.2.5");

int shim_rwlock_clockrdlock(pthread_rwlock_t *l, clockid_t clock, const struct timespec *abstime)
{
	if (shim_rwlock_is_glibc(l))
		return REAL(R_RWLOCK_CLOCKRDLOCK,
			    int (*)(pthread_rwlock_t *, clockid_t, const struct timespec *))(l, clock, abstime);
	if (check_time(clock, abstime))
		return EINVAL;
	READ_LOCK(l, hl_rwlock_timedrdlock(&SR(l)->hl, clock, abstime));
}
SHIM_EXPORT2(shim_rwlock_clockrdlock, pthread_rwlock_clockrdlock, "GLIBC_2.34", "GLIBC_2.30");

int shim_rwlock_wrlock(pthread_rwlock_t *l)
{
	if (shim_rwlock_is_glibc(l))
		return REAL(R_RWLOCK_WRLOCK, int (*)(pthread_rwlock_t *))(l);
	return hl_rwlock_wrlock(&SR(l)->hl);
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
	return hl_rwlock_timedwrlock(&SR(l)->hl, CLOCK_REALTIME, abstime);
}
SHIM_EXPORT2(shim_rwlock_timedwrlock, pthread_rwlock_timedwrlock, "GLIBC_2.34", "GLIBC_2.2.5");

int shim_rwlock_clockwrlock(pthread_rwlock_t *l, clockid_t clock, const struct timespec *abstime)
{
	if (shim_rwlock_is_glibc(l))
		return REAL(R_RWLOCK_CLOCKWRLOCK,
			    int (*)(pthread_rwlock_t *, clockid_t, const struct timespec *))(l, clock, abstime);
	return hl_rwlock_timedwrlock(&SR(l)->hl, clock, abstime);
}
SHIM_EXPORT2(shim_rwlock_clockwrlock, pthread_rwlock_clockwrlock, "GLIBC_2.34", "GLIBC_2.30");

int shim_rwlock_unlock(pthread_rwlock_t *l)
{
	if (shim_rwlock_is_glibc(l))
		return REAL(R_RWLOCK_UNLOCK, int (*)(pthread_rwlock_t *))(l);
	if (read_held_used)
		read_hold_drop(l);
	return hl_rwlock_unlock(&SR(l)->hl);
}
SHIM_EXPORT2(shim_rwlock_unlock, pthread_rwlock_unlock, "GLIBC_2.34", "GLIBC_2.2.5");

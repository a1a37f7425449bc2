/* hotlock: hl_mutex_t, a mutex with the throughput-optimized (TP) futex
 * protocol: owner TID in the lock word, an MCS queue of waiters of which only
 * the head watches the lock word, lock stealing until the head is due a
 * handoff.  See docs/mutex.md and the design comment in src/mutex.c. */
#ifndef HOTLOCK_MUTEX_H
#define HOTLOCK_MUTEX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h> /* clockid_t, also in strict ISO C mode */
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* All-zero bytes are an unlocked mutex.  The fields are private: they are
 * accessed atomically by the library only (src/mutex.c pins the layout). */
typedef struct hl_mutex {
	uint32_t word_;     /* owner TID | WAKE | HANDOFF */
	uint32_t tail_;     /* last queued waiter node (index | fork generation) */
	uint32_t head_;     /* queue head that waits for the unlocker's signal */
	uint32_t reserved_;
} hl_mutex_t;

#define HL_MUTEX_INIT { 0, 0, 0, 0 }

/* Every call returns 0 or an errno value, as pthread does. */
int hl_mutex_init(hl_mutex_t *m);
int hl_mutex_destroy(hl_mutex_t *m);        /* EBUSY if locked or waited on */
int hl_mutex_lock(hl_mutex_t *m);           /* EDEADLK if the caller holds it */
int hl_mutex_trylock(hl_mutex_t *m);        /* EBUSY if held (by anyone) */
/* Waits until the absolute time abstime on clock (CLOCK_REALTIME or
 * CLOCK_MONOTONIC).  EINVAL: unknown clock or tv_nsec outside [0, 1e9);
 * ETIMEDOUT: the time passed (also when it had passed already and the lock
 * is held); EDEADLK: the caller holds it. */
int hl_mutex_timedlock(hl_mutex_t *m, clockid_t clock,
		       const struct timespec *abstime);
int hl_mutex_unlock(hl_mutex_t *m);         /* EPERM if the caller is not the owner */

/* Diagnostics: the owner TID (0 when free) as read in one load. */
uint32_t hl_mutex_owner(const hl_mutex_t *m);
/* Diagnostics for watchdogs: writes one line describing the lock word and the
 * waiter queue (owner, flags, head, queued TIDs) into buf.  Racy by nature;
 * never blocks.  Returns the length snprintf would have written. */
int hl_mutex_describe(const hl_mutex_t *m, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif

/* SPDX-License-Identifier: MIT */
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
	uint32_t queue_;    /* hl_queue_policy_t chosen for this mutex */
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

/* The order of the waiter queue (docs/cna.md).  HL_QUEUE_DEFAULT (what an
 * all-zero mutex has) follows HOTLOCK_QUEUE=fifo|cna when set, else uses CNA
 * when the topology (topology.h) has more than one node and FIFO otherwise;
 * the choice is made at each handover, so it follows hl_topology_set. */
typedef enum hl_queue_policy {
	HL_QUEUE_DEFAULT = 0,
	HL_QUEUE_FIFO = 1,   /* first come, first served (after lock stealing) */
	HL_QUEUE_CNA = 2,    /* waiters on the holder's node first, bounded */
} hl_queue_policy_t;

/* Sets m's queue policy.  EINVAL: not a policy; EBUSY: m is locked or has
 * waiters (set it before the mutex is shared). */
int hl_mutex_set_queue(hl_mutex_t *m, hl_queue_policy_t policy);
/* The policy m's next handover uses: HL_QUEUE_FIFO or HL_QUEUE_CNA. */
hl_queue_policy_t hl_mutex_queue(const hl_mutex_t *m);

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

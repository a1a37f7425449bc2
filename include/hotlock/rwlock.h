/* SPDX-License-Identifier: MIT */
/* hotlock: hl_rwlock_t, a reader-writer lock whose whole state is one 64-bit
 * word (writer owner, reader count, waiters, handoff: seed 004), with the TP
 * policy of hl_mutex (readers and writers steal until the queue head is due a
 * handoff) and reader grouping (seed 000): readers queued behind writers are
 * granted together with the first of them.  Four kinds, chosen at init:
 * writer-preferring (the default), fair, reader-preferring (glibc's
 * default semantics) and writer-yields (writer-preferring, with a bound).
 * A thread's second read lock of a lock it holds for reading is granted
 * whatever waits, in every kind.  See docs/rwlock.md and the design
 * comment in src/rwlock.c. */
#ifndef HOTLOCK_RWLOCK_H
#define HOTLOCK_RWLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h> /* clockid_t, also in strict ISO C mode */
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* All-zero bytes are an unlocked rwlock.  The fields are private: accessed
 * atomically by the library only (src/rwlock.c pins the layout). */
typedef struct hl_rwlock {
	uint64_t state_;    /* writer TID | WAKE | HANDOFF | reader count */
	uint32_t tail_;     /* last queued waiter node (index | fork generation) */
	uint32_t head_;     /* queue head that waits for the releaser's signal */
} hl_rwlock_t;

#define HL_RWLOCK_INIT { 0, 0, 0 }

/* The most readers that may hold the lock at once; one more gets EAGAIN. */
#define HL_RWLOCK_MAX_READERS 0x7fffffffu

/* Kinds (hl_rwlock_init_kind; docs/rwlock.md has each one's promises and
 * the measurements that chose the default):
 *  - HL_RWLOCK_PREFER_WRITER (0: the default, and all-zero bytes): a
 *    waiting writer keeps new readers out at once and gets the lock when
 *    the readers drain.  Bounded for readers and writers (the queue is
 *    FIFO).
 *  - HL_RWLOCK_FAIR: readers share the lock while writers wait, until the
 *    first waiting writer has waited HOTLOCK_HANDOFF_NS (4 ms; at once for
 *    an RT thread): then new readers wait and it is handed the lock; readers
 *    queued behind writers that are not due are granted together (seed
 *    000's grouping).  Bounded for both.
 *  - HL_RWLOCK_PREFER_READER: glibc's default: a reader gets in whenever no
 *    writer holds the lock, writers waiting or not.  Writers may wait as
 *    long as read holds overlap.
 *  - HL_RWLOCK_WRITER_YIELDS: as PREFER_WRITER, but a writer whose readers
 *    have not drained within a bound (hl_config_t.rwlock_yield_ns, 10 ms;
 *    doubled at each yield of one wait, up to 64 times) lets the waiting
 *    readers in and claims again: a read holder that waits for another
 *    thread's read (which PREFER_WRITER would deadlock) stalls for the
 *    bound at most, and a writer gets in once the read holds present at
 *    a claim end within that claim's bound (glibc's bug 25619 without its
 *    deadlock). */
enum {
	HL_RWLOCK_PREFER_WRITER = 0,
	HL_RWLOCK_FAIR = 1,
	HL_RWLOCK_PREFER_READER = 2,
	HL_RWLOCK_WRITER_YIELDS = 3,
};

/* Every call returns 0 or an errno value, as pthread does. */
int hl_rwlock_init(hl_rwlock_t *l);         /* HL_RWLOCK_PREFER_WRITER */
int hl_rwlock_init_kind(hl_rwlock_t *l, int kind);  /* EINVAL for an unknown kind */
int hl_rwlock_kind(const hl_rwlock_t *l);   /* the kind it was initialised with */
int hl_rwlock_destroy(hl_rwlock_t *l);      /* EBUSY if held or waited on */
/* EDEADLK if the caller holds it for writing; EAGAIN if HL_RWLOCK_MAX_READERS
 * hold it already.  A thread that holds a read share of this lock and asks
 * for another is granted it whatever waits (each thread knows the read
 * shares it holds: docs/rwlock.md, "Nested reads"). */
int hl_rwlock_rdlock(hl_rwlock_t *l);
int hl_rwlock_wrlock(hl_rwlock_t *l);       /* EDEADLK if the caller holds it for writing */
int hl_rwlock_tryrdlock(hl_rwlock_t *l);    /* EBUSY if it cannot be had now; EAGAIN as rdlock */
int hl_rwlock_trywrlock(hl_rwlock_t *l);    /* EBUSY if held (by anyone) */
/* Wait until the absolute time abstime on clock (CLOCK_REALTIME or
 * CLOCK_MONOTONIC).  EINVAL: unknown clock or tv_nsec outside [0, 1e9);
 * ETIMEDOUT; EDEADLK and EAGAIN as above. */
int hl_rwlock_timedrdlock(hl_rwlock_t *l, clockid_t clock, const struct timespec *abstime);
int hl_rwlock_timedwrlock(hl_rwlock_t *l, clockid_t clock, const struct timespec *abstime);
/* Releases the caller's hold, read or write.  EPERM if the caller holds
 * neither the write lock nor a read share of it (each thread knows the read
 * shares it holds: docs/rwlock.md, "Nested reads"). */
int hl_rwlock_unlock(hl_rwlock_t *l);
/* The caller's write hold becomes a read hold, with no writer in between.
 * EPERM if the caller does not hold it for writing. */
int hl_rwlock_downgrade(hl_rwlock_t *l);

/* Diagnostics: the writer's TID (0 if none) and the reader count, as read
 * in one load. */
void hl_rwlock_holders(const hl_rwlock_t *l, uint32_t *writer_tid, uint32_t *readers);
/* One line describing the state word and the waiter queue into buf, for
 * watchdogs.  Racy by nature; never blocks.  Returns the length snprintf
 * would have written. */
int hl_rwlock_describe(const hl_rwlock_t *l, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif

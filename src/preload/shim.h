/* SPDX-License-Identifier: MIT */
/* The pthread shim's shared parts: the layout hotlock keeps inside each
 * pthread object, how an object is classified (hotlock's or glibc's), the
 * real glibc functions, and the symbol versions the shim exports.  See
 * shim.c for the design, docs/shim.md for the user's view. */
#ifndef HOTLOCK_SHIM_H
#define HOTLOCK_SHIM_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <hotlock/cond.h>
#include <hotlock/mutex.h>
#include <hotlock/rwlock.h>

#include "atomics.h"
#include "internal.h"

/* ---- layouts ------------------------------------------------------------ */

/* pthread_mutex_t (40 bytes) of one of hotlock's kinds.  glibc's static
 * initialisers put the type at byte 16 (__kind) and zeros elsewhere, so
 * hotlock's state sits in the bytes before it and the type stays where
 * glibc's initialisers and tools (gdb's pretty printers) look. */
struct shim_mutex {
	hl_mutex_t hl;          /* 0-15  the lock (glibc: __lock .. __nusers) */
	_Atomic int32_t kind;   /* 16    glibc's __kind: the type, 0-3, and
				 *       SHIM_MUTEX_TRACKED (shim_stats.c) */
	uint32_t count;         /* 20    recursive: holds beyond the first
				 *       (touched by the owner only); normal
				 *       and adaptive: the deadlock detector's
				 *       mark (shim_holds.c) */
	_Atomic uint32_t stats; /* 24    its contention record (shim_stats.c), 0 */
	_Atomic uint32_t cond_waiters; /* 28 condvar waits that released it
				 *       and take it again (glibc counts them
				 *       in __nusers: destroy says EBUSY) */
	_Atomic uint64_t held_since; /* 32 a tracked mutex: when it was taken */
};
_Static_assert(sizeof(struct shim_mutex) == sizeof(pthread_mutex_t), "pthread_mutex_t layout");
_Static_assert(sizeof(pthread_mutex_t) == 40, "glibc's pthread_mutex_t is 40 bytes");
_Static_assert(offsetof(struct shim_mutex, kind) == offsetof(pthread_mutex_t, __data.__kind),
	       "the mutex kind stays at glibc's byte 16");
_Static_assert(_Alignof(struct shim_mutex) <= _Alignof(pthread_mutex_t), "alignment");

/* pthread_rwlock_t (56 bytes) of one of hotlock's kinds.  glibc keeps
 * "process-shared" at byte 28 and the kind (reader or writer preference)
 * at byte 48, where PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP puts
 * it. */
struct shim_rwlock {
	hl_rwlock_t hl;         /* 0-15  the lock */
	uint32_t spare0[3];     /* 16-27 zero, but spare0[0]: the deadlock
				 *       detector's mark (shim_holds.c) */
	_Atomic int32_t shared; /* 28    glibc's __shared: 0 (hotlock's) */
	_Atomic uint32_t stats; /* 32    its contention record (shim_stats.c), 0 */
	_Atomic uint32_t writer; /* 36   a tracked rwlock: its writer's TID */
	_Atomic uint64_t held_since; /* 40 ... and when the writer took it */
	_Atomic uint32_t kind;  /* 48    glibc's __flags: PTHREAD_RWLOCK_PREFER_* */
	uint32_t spare2;        /* 52-55 zero */
};
_Static_assert(sizeof(struct shim_rwlock) == sizeof(pthread_rwlock_t), "pthread_rwlock_t layout");
_Static_assert(sizeof(pthread_rwlock_t) == 56, "glibc's pthread_rwlock_t is 56 bytes");
_Static_assert(offsetof(struct shim_rwlock, shared) == offsetof(pthread_rwlock_t, __data.__shared),
	       "rwlock __shared");
_Static_assert(offsetof(struct shim_rwlock, kind) == offsetof(pthread_rwlock_t, __data.__flags),
	       "rwlock __flags");

/* pthread_cond_t (48 bytes) of hotlock's.  glibc keeps the clock and
 * "process-shared" in the low bits of __wrefs (byte 36); the shim uses the
 * same bits, so a condvar glibc initialised is recognised.  fseq and
 * fwaiters serve waits with a mutex glibc keeps (shim_cond.c). */
#define SHIM_COND_SHARED    1u  /* glibc's __PTHREAD_COND_SHARED_MASK */
#define SHIM_COND_MONOTONIC 2u  /* glibc's __PTHREAD_COND_CLOCK_MONOTONIC_MASK */
struct shim_cond {
	hl_cond_t hl;                   /* 0-15  the condvar */
	_Atomic uint32_t fseq;          /* 16    foreign waits: sequence */
	_Atomic uint32_t fwaiters;      /* 20    foreign waits: how many */
	_Atomic uint32_t stats;         /* 24    its record (shim_stats.c), 0 */
	uint32_t spare0[2];             /* 28-35 zero */
	_Atomic uint32_t flags;         /* 36    glibc's __wrefs: SHIM_COND_* */
	uint32_t spare1[2];             /* 40-47 zero */
};
_Static_assert(sizeof(struct shim_cond) == sizeof(pthread_cond_t), "pthread_cond_t layout");
_Static_assert(sizeof(pthread_cond_t) == 48, "glibc's pthread_cond_t is 48 bytes");
_Static_assert(offsetof(struct shim_cond, flags) == offsetof(pthread_cond_t, __data.__wrefs),
	       "cond __wrefs");

/* ---- classification ------------------------------------------------------
 * Decided at init from the attributes, and kept in the object where glibc
 * keeps the same facts: a mutex whose kind has any bit beyond the type
 * (robust 16, priority inheritance 32, priority protect 64, process-shared
 * 128, glibc's elision bits, -1 after destroy), a process-shared rwlock or
 * one of an unknown kind, a process-shared condvar or one whose __wrefs has
 * other bits: each is glibc's, for its whole life.  The loads are relaxed:
 * the object was initialised before it was shared with this thread. */

static inline struct shim_mutex *SM(pthread_mutex_t *m) { return (struct shim_mutex *)m; }
static inline struct shim_rwlock *SR(pthread_rwlock_t *l) { return (struct shim_rwlock *)l; }
static inline struct shim_cond *SC(pthread_cond_t *c) { return (struct shim_cond *)c; }

/* A mutex of hotlock's whose acquisitions the report counts (shim_stats.c):
 * a bit glibc 2.36 never sets in __kind. */
#define SHIM_MUTEX_TRACKED 0x40000000

/* The mutex's type (PTHREAD_MUTEX_NORMAL .. ADAPTIVE_NP), or -1: glibc's. */
static inline int shim_mutex_type(pthread_mutex_t *m)
{
	uint32_t k = (uint32_t)hl__load(&SM(m)->kind, HL_RELAXED) & ~(uint32_t)SHIM_MUTEX_TRACKED;
	return k <= PTHREAD_MUTEX_ADAPTIVE_NP ? (int)k : -1;
}

static inline bool shim_rwlock_is_glibc(pthread_rwlock_t *l)
{
	return hl__load(&SR(l)->shared, HL_RELAXED) != 0 ||
	       hl__load(&SR(l)->kind, HL_RELAXED) > PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP;
}

static inline bool shim_cond_is_glibc(pthread_cond_t *c)
{
	return (hl__load(&SC(c)->flags, HL_RELAXED) & ~SHIM_COND_MONOTONIC) != 0;
}

/* ---- the real functions ---------------------------------------------------
 * glibc's own, looked up once with dlvsym (RTLD_NEXT) at the version a
 * program built on this glibc binds to, falling back to older versions on
 * an older glibc.  A missing one is a fatal error with a clear message. */
enum shim_real {
	R_MUTEX_INIT, R_MUTEX_DESTROY, R_MUTEX_LOCK, R_MUTEX_TRYLOCK, R_MUTEX_TIMEDLOCK,
	R_MUTEX_CLOCKLOCK, R_MUTEX_UNLOCK,
	R_RWLOCK_INIT, R_RWLOCK_DESTROY, R_RWLOCK_RDLOCK, R_RWLOCK_WRLOCK, R_RWLOCK_TRYRDLOCK,
	R_RWLOCK_TRYWRLOCK, R_RWLOCK_TIMEDRDLOCK, R_RWLOCK_TIMEDWRLOCK, R_RWLOCK_CLOCKRDLOCK,
	R_RWLOCK_CLOCKWRLOCK, R_RWLOCK_UNLOCK,
	R_COND_INIT, R_COND_DESTROY, R_COND_WAIT, R_COND_TIMEDWAIT, R_COND_CLOCKWAIT,
	R_COND_SIGNAL, R_COND_BROADCAST,
	R_CANCEL,
	R_CREATE, R_SETSCHEDPARAM, R_SCHED_SETSCHEDULER, R_SETAFFINITY, R_SCHED_SETAFFINITY,
	R_SETNAME, R_PRCTL,
	R_COUNT
};
HL_HIDDEN void *shim_real_lookup(enum shim_real which);
HL_HIDDEN extern void *_Atomic shim_real_fn[R_COUNT];

/* The real function `which`, of type `type`. */
#define REAL(which, type) ((type)shim_real(which))
static inline void *shim_real(enum shim_real which)
{
	/* Relaxed: a function pointer, the same whoever stores it. */
	void *f = hl__load(&shim_real_fn[which], HL_RELAXED);
	return hl__likely(f != NULL) ? f : shim_real_lookup(which);
}

/* ---- cancellation (shim_cond.c) ---------------------------------------- */

/* Makes the calling thread's condvar waits interruptible by pthread_cancel,
 * if its cancellation is enabled: returns the interrupt word to put in the
 * wait's deadline, or NULL.  Acts on a cancel already pending (the caller
 * holds the mutex, as its cleanup handlers expect).  *state gets the cancel
 * state to give back with shim_cancel_end. */
HL_HIDDEN const _Atomic uint32_t *shim_cancel_begin(int *state);
/* After a wait, the mutex held again: if act (the wait was ended by the
 * thread's cancel), acts on it (does not return).  Then restores the
 * cancel state. */
HL_HIDDEN void shim_cancel_end(bool act, int state);

/* ---- symbol versions --------------------------------------------------------
 * Each function is exported at every version glibc 2.36 exports it at, so
 * that a program binds to the shim whichever glibc it was linked against
 * (shim.map declares the versions).  `impl` is the shim's function. */
#define SHIM_EXPORT(impl, name, ver) __asm__(".symver " #impl ", " #name "@@" ver)
#define SHIM_EXPORT2(impl, name, ver, oldver)                                   \
	extern __typeof(impl) impl##_v_old __attribute__((alias(#impl)));       \
	__asm__(".symver " #impl ", " #name "@@" ver);                          \
	__asm__(".symver " #impl "_v_old, " #name "@" oldver)
/* A function glibc also keeps at an older version with other code (the
 * condvar's GLIBC_2.2.5 ABI): only that version. */
#define SHIM_EXPORT_OLD(impl, name, oldver) __asm__(".symver " #impl ", " #name "@" oldver)

#endif

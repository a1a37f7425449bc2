/* SPDX-License-Identifier: MIT */
/* Per-thread state: the cached TID, the thread record (futex counters, the
 * waiter nodes a thread waits on), and the node arena.
 *
 * Node and record memory comes from two arenas that grow by chunks (thread.c:
 * the first static, the others mapped outside lock calls where a thread
 * starts) and are never unmapped, so a node stays valid memory after its
 * thread moved on or exited.
 * A node is named by its index (u32; 0 is "none"), which lets a lock word or
 * queue tail hold a node in 32 bits.  Indices are recycled through lock-free
 * free lists.
 *
 * A thread owns HL_NEST nodes, one per nesting level of waits (a signal
 * handler may wait on a lock while its thread is already queued on another,
 * as the kernel's qspinlock keeps four nodes per CPU).  A node that was
 * abandoned in a queue (timed-out wait) stays there until the queue skips it
 * and recycles it; its thread takes a fresh node in its place.  No lock path
 * allocates memory: a thread takes its nodes where it starts (the shim's
 * pthread_create, hl_thread_init) or at its first slow path, from memory
 * the arenas hold ready.
 *
 * Nesting is safe against a handler that interrupts the thread anywhere,
 * because the level is claimed before its node is used and given back after
 * the node is done with: a wait at level d first moves `depth` to d + 1,
 * then takes nodes[d]; it ends by finishing with nodes[d] (marking it free,
 * or replacing it when the queue keeps it), then moves `depth` back to d.
 * A handler that runs between any two of these steps waits at level d + 1
 * or deeper, on another node, and has given its level back before the
 * interrupted code resumes.  Only this thread and its handlers touch
 * `depth` and `nodes`, so the steps are relaxed atomics ordered by signal
 * fences.  One thing is not reentrant: a thread's registration; a handler
 * that waits on a lock during it registers a second record, and one of the
 * two is never given back (a leak of one record and its nodes, not a
 * fault, and no deadlock: registration takes no lock).
 *
 * Layering.  The records sit at the bottom of src/, on the atomics
 * (atomics.h, internal.h) and the node's layout (node.h), and include
 * nothing above them.  The futex layer (futex.c, futex_hash.c) sits on the
 * records, whose counters it bumps, and the waiting core (wait.c) on both.
 * Where the records must let a layer above act, at a thread's registration
 * and in a fork child, they run that layer's hooks (struct hl__thread_hooks,
 * below), listed in a constant table in layers.c, and call no function
 * above them by name; what the layers above need of the records they ask
 * for (hl__thread_by_pthread, hl__thread_affinity_cpus).
 */
#ifndef HOTLOCK_THREAD_H
#define HOTLOCK_THREAD_H

#include <stdbool.h>
#include <stdint.h>

#include "atomics.h"
#include "internal.h"
#include "node.h"

#define HL_NEST 4
/* A thread's table of the read shares it holds (holds.h), thread-local,
 * written by the thread only (and its signal handlers); relaxed atomics, so
 * that a diagnostic may read another thread's. */
#define HL_READ_HOLDS 8
struct hl__read_holds {
	_Atomic uint64_t entry[HL_READ_HOLDS];
	_Atomic uint32_t untracked;
};
/* A thread record's counters: futex syscalls by kind (futex.c), then the
 * waiting policy's decisions (wait.c, hl_spin_stats_t), then handoffs. */
enum {
	HL_FX_WAIT, HL_FX_WAKE, HL_FX_WOKEN, HL_FX_OTHER,
	HL_SP_SPUN,             /* spin phases begun */
	HL_SP_WON,              /* ... that ended in what they waited for */
	HL_SP_LEARNED_OFF,      /* did not spin: the place's record said it does not pay */
	HL_LK_HANDED,           /* waits that ended with the lock handed over (HL_SIG_HANDED:
				 * mutex.c, rwlock.c), for the shim's report */
	HL_LK_PASSIVE,          /* passive sleeps of a mutex queue head (mutex.c, step 4b) */
	HL_LK_NUDGED,           /* moved waiters this thread nudged awake (wait.h, mutex.c 5b);
				 * not counted for a thread without a record */
	HL_COUNTERS
};
#define HL_NODE_INDEX_BITS 24           /* queue tails keep 8 bits for the fork generation */
#define HL_MAX_NODES (1u << 20)
#define HL_MAX_THREADS (1u << 17)
/* The arenas' chunks (thread.c): chunk k holds CHUNK0 << k elements, from
 * index CHUNK0 * (2^k - 1) on; chunk 0 is static. */
#define HL_NODE_CHUNK0 4096u            /* 256 KiB: a thousand threads' nodes */
#define HL_NODE_CHUNKS 9                /* 4096 * 511 >= HL_MAX_NODES */
#define HL_THREAD_CHUNK0 1024u
_Static_assert(HL_MAX_THREADS <= HL_THREAD_CHUNK0 * ((1u << HL_NODE_CHUNKS) - 1),
	       "the record chunks reach HL_MAX_THREADS");
/* A thread record's affinity mask: CPU_SETSIZE bits. */
#define HL_CPU_WORDS 16

struct hl__thread {
	uint32_t tid;
	uint32_t index;                 /* the record's index in its arena */
	_Atomic uint32_t depth;         /* waits in progress (nesting levels in use) */
	uint32_t nodes[HL_NEST];        /* node index per nesting level, 0 if none */
	_Atomic uint32_t in_use;
	_Atomic uint32_t pool_next;
	/* Futex syscall counters: written only by the owning thread
	 * (load + store, no RMW), read by anyone (relaxed).  They are never
	 * reset: a recycled record keeps counting, so the process total (the
	 * sum over all records) never goes down; a thread's own counts are the
	 * counters minus fx_base, taken when it got the record. */
	_Atomic uint64_t fx[HL_COUNTERS];
	uint64_t fx_base[HL_COUNTERS];
	/* SCHED_FIFO or SCHED_RR: read where the thread starts
	 * (hl_thread_init), written by the shim when the program changes a
	 * thread's policy (hl__thread_set_rt); false until then. */
	_Atomic bool rt;
	/* The thread's CPU affinity, for the spinner slots (wait.c): written
	 * where the thread starts and where the shim changes it
	 * (hl__machine_learn), all 0 until then; read by the thread that
	 * recomputes the slots (relaxed, a hint). */
	_Atomic uint64_t cpu_mask[HL_CPU_WORDS];
	/* The thread's pthread_t, and its interrupt word: 0, or 1 once
	 * another thread interrupted it (hl__thread_interrupt, wait.c), which
	 * ends its interruptible waits (internal.h, struct hl__deadline).  The
	 * pthread shim interrupts a thread that pthread_cancel cancels, and
	 * clears the word when the thread starts a wait that can be
	 * cancelled, before it looks for a pending cancel (src/preload/shim.c):
	 * an interrupt only ends waits that began before the cancel it stands
	 * for was seen. */
	_Atomic uintptr_t pthread_id;
	_Atomic uint32_t interrupt;
	/* The node of the thread's interruptible wait in progress, published
	 * before it parks (0: none; stale once the wait ended): where
	 * hl__thread_interrupt makes the node's word change (wait.h,
	 * "Interrupts"). */
	_Atomic uint32_t intr_node;
} __attribute__((aligned(64)));

/* Chunk k of the node arena, NULL until mapped (thread.c). */
HL_HIDDEN extern _Atomic(struct hl__node *) hl__node_chunks[HL_NODE_CHUNKS];
HL_HIDDEN extern __thread uint32_t hl__tid_cache __attribute__((tls_model("initial-exec")));
HL_HIDDEN extern __thread struct hl__thread *hl__self_ptr
	__attribute__((tls_model("initial-exec")));
HL_HIDDEN extern __thread struct hl__read_holds hl__reads
	__attribute__((tls_model("initial-exec")));
/* In a fork child: the TIDs the forking thread had in its parent, its
 * grandparent and so on (newest first, 0-terminated), which lock words it
 * held at those forks still carry; all 0 in other threads. */
#define HL_FORK_TIDS 8
HL_HIDDEN extern __thread uint32_t hl__prefork_tids[HL_FORK_TIDS]
	__attribute__((tls_model("initial-exec")));

HL_HIDDEN uint32_t hl__tid_slow(void);
HL_HIDDEN struct hl__thread *hl__thread_register(void);
/* What a thread's creator knows of it (the shim's pthread_create): its
 * scheduling policy and affinity, inherited or from its attributes, so
 * that the new thread need not ask the kernel. */
struct hl__thread_start {
	bool rt;                        /* SCHED_FIFO or SCHED_RR */
	bool have_mask;                 /* mask is known (else not counted) */
	uint64_t mask[HL_CPU_WORDS];
};
/* Registers the calling thread where it starts.  With `known` (the shim's
 * pthread_create), its policy and affinity are taken from it and no system
 * call is made but gettid; with NULL (the main thread at load), they are
 * asked of the kernel.  Either way without what is dearer to learn (the
 * cgroup quota: hl_thread_init). */
HL_HIDDEN int hl__thread_start(const struct hl__thread_start *known);

/* What the layers above the records do at a thread's registration and in a
 * fork child, so that thread.c, at the bottom, calls none of them by name.
 * Each layer has an entry; a hook it does not need is NULL.  thread.c runs
 * the entries in table order:
 *
 *   registered  in hl__thread_register, after record `index` is published
 *               and is the thread's own (hl__self_ptr), whether fresh or
 *               reused from a thread that exited.  It may run on a lock
 *               path: memory only, no system call.
 *   started     in hl_thread_init and hl__thread_start, where a thread
 *               starts (the shim's pthread_create, the constructor for the
 *               main thread, the program's own call), outside any lock
 *               call: what may make system calls (a thread's affinity, the
 *               futex hash's size); `how` (HL_STARTED_*) says whether the
 *               program asked for the quota too, and whether the record's
 *               policy and mask came from the thread's creator (then the
 *               hook reads them instead of asking the kernel).
 *   fork_child  in a fork child's update (fork_update), after the fork
 *               generation moved, in whichever thread makes the update.
 *
 * The table is constant, defined in layers.c, not filled in by constructors:
 * under LD_PRELOAD another library's constructor may lock a mutex before
 * hotlock's constructors run, so the hooks must be in place from the
 * process's first instruction (the loader's relocations put them there). */
/* What a `started` hook is asked to do (flags). */
enum {
	HL_STARTED_QUOTA = 1,   /* the program's hl_thread_init: learn the quota too */
	HL_STARTED_KNOWN = 2,   /* the record's policy and mask are filled in: no syscall */
};
struct hl__thread_hooks {
	void (*registered)(uint32_t index);
	void (*started)(unsigned how);
	void (*fork_child)(void);
};
HL_HIDDEN extern const struct hl__thread_hooks hl__thread_hooks[];
HL_HIDDEN extern const unsigned hl__thread_hooks_count;

/* The caller's TID: one TLS load once known (reset in a fork child). */
static inline uint32_t hl__tid(void)
{
	uint32_t t = hl__tid_cache;
	return hl__likely(t) ? t : hl__tid_slow();
}

/* The caller's TID if it has been looked up (by hl__tid) since the thread
 * started or forked, else 0, which is nobody's TID: a fast path given 0
 * goes the slow way, which looks it up.  One TLS load, no call, so that
 * the fast path needs no stack frame. */
static inline uint32_t hl__tid_known(void)
{
	return hl__tid_cache;
}

/* Whether owner, the owner field of a lock word, names the calling thread
 * (TID tid): its TID, or one it had before the last HL_FORK_TIDS forks.
 * Ownership is the kernel's TID, as with glibc's mutexes, so a thread that
 * later gets the TID of a thread that exited holding a lock counts as that
 * lock's owner (docs/core.md, "Owners"). */
static inline bool hl__owner_is_me(uint32_t owner, uint32_t tid)
{
	if (owner == tid)
		return true;
	for (int i = 0; owner && i < HL_FORK_TIDS && hl__prefork_tids[i]; i++)
		if (hl__prefork_tids[i] == owner)
			return true;
	return false;
}

/* The caller's record, registered at first use; NULL only when the arena is
 * exhausted or could not be mapped (callers then degrade, see mutex.c). */
static inline struct hl__thread *hl__self(void)
{
	struct hl__thread *t = hl__self_ptr;
	return hl__likely(t) ? t : hl__thread_register();
}

/* The chunk that holds index i of an arena whose chunk 0 holds chunk0
 * elements, and the first index of chunk k. */
static inline unsigned hl__chunk_of(uint32_t i, uint32_t chunk0)
{
	return 31u - (unsigned)__builtin_clz(i / chunk0 + 1);
}
static inline uint32_t hl__chunk_base(unsigned k, uint32_t chunk0)
{
	return chunk0 * ((1u << k) - 1);
}

static inline struct hl__node *hl__node_at(uint32_t index)
{
	unsigned k = hl__chunk_of(index, HL_NODE_CHUNK0);
	/* Relaxed: a node's index reaches a thread through a queue link, a
	 * lock word or the free list, whose own release/acquire pairs order
	 * it after the chunk's publication (thread.c, grow). */
	return hl__load_stable(&hl__node_chunks[k], HL_RELAXED) + (index - hl__chunk_base(k, HL_NODE_CHUNK0));
}
/* Whether p points into a node (the controlled-schedule build's names). */
HL_HIDDEN bool hl__node_index_of(const void *p, uint32_t *index, size_t *off);

/* The node for a new wait of self (nesting level self->depth), or NULL if
 * none is left; the matching hl__thread_node_put ends the wait. */
HL_HIDDEN struct hl__node *hl__thread_node_get(struct hl__thread *self);
HL_HIDDEN void hl__thread_node_put(struct hl__thread *self);
/* Ends a wait whose node was abandoned in a queue: the thread takes a fresh
 * node for that nesting level; the old one is recycled by the queue. */
HL_HIDDEN void hl__thread_node_abandoned(struct hl__thread *self);
/* Returns an abandoned node, now unlinked from every queue, to the arena. */
HL_HIDDEN void hl__node_recycle(struct hl__node *n);

/* Whether self runs under SCHED_FIFO or SCHED_RR, as learned where it
 * started or the shim last set it: memory only. */
static inline bool hl__thread_is_rt(struct hl__thread *self)
{
	/* Relaxed: a hint (struct hl__thread). */
	return hl__load_hint(&self->rt);
}
/* The shim's pthread_setschedparam and sched_setscheduler: the policy the
 * program gave a registered thread (t NULL: not registered, nothing). */
HL_HIDDEN void hl__thread_set_rt(struct hl__thread *t, bool rt);

/* Fork detection.  *hl__fork_canary is a word on a page mapped with
 * MADV_WIPEONFORK, set to 1 once the process's fork state is current: a
 * fork child finds it 0 (the kernel gives the child a zeroed page) before
 * anything of its own has run, so the first look after a fork, whoever makes
 * it, brings the child's state up to date (hl__fork_child, thread.c).  Other
 * libraries' atfork child handlers run before hotlock's when their
 * constructors ran first (always so under LD_PRELOAD), and _Fork() runs no
 * handler at all: the locks cannot wait for hotlock's handler
 * (docs/design.md invariant 6).  Until the page is mapped, and where the
 * kernel lacks MADV_WIPEONFORK (before 4.14), the pointer names a constant
 * 1: then only hotlock's own atfork handler updates the child. */
HL_HIDDEN extern _Atomic(_Atomic uint32_t *) hl__fork_canary;
HL_HIDDEN void hl__fork_child(_Atomic uint32_t *canary);
static inline void hl__fork_check(void)
{
	/* Acquire on the pointer: pairs with the release that publishes the
	 * page after its canary was set to 1, so a thread that finds the
	 * page reads 1 there until a fork wipes it.  Acquire on the canary:
	 * a 1 stored by a child's update (a release, thread.c) makes that
	 * update visible, also to a thread that did not make it.  Both are
	 * plain loads on x86. */
	_Atomic uint32_t *c = hl__load(&hl__fork_canary, HL_ACQUIRE);
	if (hl__unlikely(hl__load(c, HL_ACQUIRE) != 1))
		hl__fork_child(c);
}

/* The fork generation, in full (hl__fork_gen gives the bits the words
 * carry).  Bumped in a fork child (hl__fork_child): queue tails and lock flags
 * tagged with an older generation name nodes of threads that do not exist
 * in this process.  Every look at a generation first checks for a fork, so
 * no slow path acts on a parent's queue in a child, however early in the
 * child it runs. */
HL_HIDDEN extern _Atomic uint32_t hl__fork_count;
/* A generation as the lock words and queue tails carry it: its low bits. */
#define HL_FORK_GEN_BITS 8
#define HL_FORK_GEN_MASK ((UINT32_C(1) << HL_FORK_GEN_BITS) - 1)
static inline uint32_t hl__fork_gen(void)
{
	hl__fork_check();
	/* Relaxed: changed only by hl__fork_child, which the thread that
	 * calls this has run or waited for (hl__fork_check). */
	return hl__load(&hl__fork_count, HL_RELAXED) & HL_FORK_GEN_MASK;
}

/* The number of CPUs in the union of the affinity masks of the records in
 * use, counted until it reaches `enough` (for the waiting core's spinner
 * slots, wait.c). */
HL_HIDDEN int hl__thread_affinity_cpus(int enough);

/* The record in use whose pthread_t is pthread_id, or NULL if no
 * registered thread has it (for hl__thread_interrupt, wait.c). */
HL_HIDDEN struct hl__thread *hl__thread_by_pthread(uintptr_t pthread_id);
/* The record in use of the thread with TID tid, or NULL. */
HL_HIDDEN struct hl__thread *hl__thread_by_tid(uint32_t tid);

/* The calling thread's counters (zeros before its first slow path). */
HL_HIDDEN void hl__thread_stats(uint64_t out[HL_COUNTERS]);
/* The sum over every thread that ever ran (monotonic). */
HL_HIDDEN void hl__process_stats(uint64_t out[HL_COUNTERS]);

/* Counter bump, by the owning thread only. */
static inline void hl__counter_add(_Atomic uint64_t *c, uint64_t v)
{
	/* Relaxed load and store, not an RMW: only the owning thread writes;
	 * readers on other threads may see a slightly old value, never a torn
	 * one. */
	hl__store(c, hl__load(c, HL_RELAXED) + v, HL_RELAXED);
}

#endif

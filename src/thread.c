/* SPDX-License-Identifier: MIT */
/* Thread records and the node arena: see thread.h for the design.
 *
 * Each arena is a list of chunks: chunk k holds CHUNK0 << k elements, from
 * index CHUNK0 * (2^k - 1) on, so an index names its chunk by its highest
 * bit (hl__node_at).  Chunk 0 is static (.bss: no system call, no memory
 * until touched), big enough for the nodes of about a thousand threads;
 * the others are mapped as the arena grows and never unmapped, so a node
 * stays valid memory after its thread moved on or exited.
 *
 *   field     meaning                                 written by
 *   --------  --------------------------------------  ------------------
 *   chunk[k]  chunk k's memory, NULL until mapped     grow (the grower)
 *   capacity  elements in the chunks mapped so far    grow, after chunk[k]
 *   bump      next never-used index                   bump (CAS)
 *   pool      free list: tag << 32 | index            pool_push/pool_pop
 *   growing   1 while a thread grows the arena        grow (try-lock)
 *
 * An arena grows where a thread starts (hl_thread_init, which the shim
 * runs at every thread's start), outside lock calls, whenever fewer than
 * HEADROOM elements are left; a lock path takes an index from the free
 * list or below capacity, and maps a chunk itself only when both are
 * exhausted (a native thread that never called hl_thread_init, past the
 * static chunk: the lock's contract is promised for threads registered
 * outside lock calls: docs/core.md, "The lock's contract").
 *
 * Free lists are Treiber stacks whose head packs (tag << 32 | index); the tag
 * grows on every pop so that a pop racing with a pop-and-push of the same
 * index fails its CAS (no ABA).  Reading pool_next of an element another
 * thread just popped is harmless: arena memory is never unmapped, and the
 * tagged CAS then fails.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <hotlock/thread.h>

#include "thread.h"

_Static_assert(HL_NODE_CHUNK0 * ((1u << HL_NODE_CHUNKS) - 1) >= HL_MAX_NODES,
	       "the node chunks reach HL_MAX_NODES");

struct arena {
	_Atomic(char *) chunk[HL_NODE_CHUNKS];
	_Atomic uint32_t capacity;
	_Atomic uint32_t bump;          /* starts at 1: index 0 is "none" */
	_Atomic uint64_t pool;
	_Atomic uint32_t growing;
	uint32_t chunk0, max, elem;
	const char *what;
};

static struct hl__node node_chunk0[HL_NODE_CHUNK0];
static struct hl__thread thread_chunk0[HL_THREAD_CHUNK0];

static struct arena nodes_arena = {
	.chunk = { (char *)node_chunk0 }, .capacity = HL_NODE_CHUNK0, .bump = 1,
	.chunk0 = HL_NODE_CHUNK0, .max = HL_MAX_NODES, .elem = sizeof(struct hl__node),
	.what = "waiter nodes",
};
static struct arena threads_arena = {
	.chunk = { (char *)thread_chunk0 }, .capacity = HL_THREAD_CHUNK0, .bump = 1,
	.chunk0 = HL_THREAD_CHUNK0, .max = HL_MAX_THREADS, .elem = sizeof(struct hl__thread),
	.what = "thread records",
};
_Atomic(struct hl__node *) hl__node_chunks[HL_NODE_CHUNKS] = { node_chunk0 };

/* Element i of a (below capacity, so its chunk is mapped). */
static void *arena_at(struct arena *a, uint32_t i)
{
	unsigned k = hl__chunk_of(i, a->chunk0);
	/* Relaxed: chunk[k] was published before capacity covered i (the
	 * release in grow, the acquire in bump or the pool's), or the index
	 * came to us through a queue or a lock word whose own release and
	 * acquire order it. */
	char *c = hl__load_stable(&a->chunk[k], HL_RELAXED);
	return c + (size_t)(i - hl__chunk_base(k, a->chunk0)) * a->elem;
}

static struct hl__thread *thread_at(uint32_t i)
{
	return arena_at(&threads_arena, i);
}

/* Maps a's next chunk.  Returns whether the arena has more room than
 * before (this thread's chunk, or one another thread mapped meanwhile).
 * errno as it was. */
static bool grow(struct arena *a)
{
	uint32_t before = hl__load(&a->capacity, HL_ACQUIRE);
	/* Acquire: pairs with the release that gives `growing` back, so that
	 * the last grower's chunk and capacity are seen. */
	if (hl__xchg(&a->growing, 1, HL_ACQUIRE)) {
		/* Another thread grows it: wait for its answer.  Not on a
		 * lock path, except past every reserve (the top). */
		while (hl__load(&a->growing, HL_ACQUIRE))
			hl__cpu_yield();
		return hl__load(&a->capacity, HL_ACQUIRE) > before;
	}
	bool grew = false;
	uint32_t cap = hl__load(&a->capacity, HL_RELAXED);
	if (cap > before) {
		grew = true;
	} else if (cap < a->max && hl__chunk_of(cap, a->chunk0) < HL_NODE_CHUNKS) {
		unsigned k = hl__chunk_of(cap, a->chunk0);
		size_t bytes = (size_t)a->chunk0 << k;
		bytes *= a->elem;
		int saved = errno;
		void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED) {
			/* Relaxed: published by the release store of capacity. */
			hl__store(&a->chunk[k], (char *)p, HL_RELAXED);
			if (a == &nodes_arena)
				hl__store(&hl__node_chunks[k], (struct hl__node *)p, HL_RELAXED);
			/* Release: whoever sees the new capacity (acquire) sees
			 * the chunk's pointer. */
			hl__store(&a->capacity, cap + (a->chunk0 << k), HL_RELEASE);
			grew = true;
		} else {
			static _Atomic bool reported;
			/* Relaxed: only keeps the message to one. */
			if (!hl__xchg(&reported, true, HL_RELAXED))
				fprintf(stderr, "hotlock: out of memory for %s (%zu bytes more); "
					"a thread without them polls its locks\n", a->what, bytes);
		}
		errno = saved;
	}
	hl__store(&a->growing, 0, HL_RELEASE);
	return grew;
}

/* Whether a has fewer than `headroom` never-used elements left. */
static bool low(struct arena *a, uint32_t headroom)
{
	/* Relaxed: a hint; grow checks again under its try-lock. */
	uint32_t cap = hl__load(&a->capacity, HL_RELAXED), used = hl__load(&a->bump, HL_RELAXED);
	return cap < a->max && cap - (used < cap ? used : cap) < headroom;
}

/* The node chunk and offset of p, if p points into a mapped node chunk
 * (the controlled-schedule build names node addresses with it). */
bool hl__node_index_of(const void *p, uint32_t *index, size_t *off)
{
	for (unsigned k = 0; k < HL_NODE_CHUNKS; k++) {
		const char *c = (const char *)hl__load_stable(&hl__node_chunks[k], HL_RELAXED);
		size_t bytes = ((size_t)HL_NODE_CHUNK0 << k) * sizeof(struct hl__node);
		if (c && (const char *)p >= c && (const char *)p < c + bytes) {
			size_t d = (size_t)((const char *)p - c);
			*index = hl__chunk_base(k, HL_NODE_CHUNK0) + (uint32_t)(d / sizeof(struct hl__node));
			*off = d % sizeof(struct hl__node);
			return true;
		}
	}
	return false;
}

__thread uint32_t hl__tid_cache __attribute__((tls_model("initial-exec")));
__thread struct hl__thread *hl__self_ptr __attribute__((tls_model("initial-exec")));
__thread uint32_t hl__prefork_tids[HL_FORK_TIDS] __attribute__((tls_model("initial-exec")));
__thread struct hl__read_holds hl__reads __attribute__((tls_model("initial-exec")));
_Atomic uint32_t hl__fork_count;

static pthread_key_t exit_key;
static _Atomic bool exit_key_ok;

static uint32_t records_made(void);

uint32_t hl__tid_slow(void)
{
	uint32_t t = (uint32_t)syscall(SYS_gettid);
	/* Lock words keep the owner in 22 bits: Linux caps pid_max at
	 * PID_MAX_LIMIT = 2^22, so every TID fits. */
	if (t >= 1u << 22)
		hl__bug("thread ID does not fit in 22 bits", t);
	hl__tid_cache = t;
	return t;
}

/* ---- lock-free free lists ---------------------------------------------- */

static void pool_push(_Atomic uint64_t *pool, _Atomic uint32_t *link, uint32_t index)
{
	uint64_t old = hl__load(pool, HL_RELAXED);
	for (;;) {
		/* Relaxed: published by the release CAS below. */
		hl__store(link, (uint32_t)old, HL_RELAXED);
		uint64_t nw = (old & ~0xffffffffull) | index;
		/* Release: the element's contents (and link) are visible to the
		 * thread that pops it (acquire below). */
		if (hl__cas(pool, &old, nw, HL_RELEASE))
			return;
	}
}

static uint32_t pool_pop(_Atomic uint64_t *pool, _Atomic uint32_t *(*link_of)(uint32_t))
{
	/* Acquire: pairs with pool_push's release, so the link we read is the
	 * one written before the element was pushed. */
	uint64_t old = hl__load(pool, HL_ACQUIRE);
	for (;;) {
		uint32_t index = (uint32_t)old;
		if (!index)
			return 0;
		uint32_t next = hl__load(link_of(index), HL_RELAXED);
		uint64_t nw = (((old >> 32) + 1) << 32) | next;
		if (hl__cas(pool, &old, nw, HL_ACQUIRE))
			return index;
	}
}

static _Atomic uint32_t *node_link(uint32_t i) { return &hl__node_at(i)->pool_next; }
static _Atomic uint32_t *thread_link(uint32_t i) { return &thread_at(i)->pool_next; }

/* A never-used index of a, or 0 when the chunks mapped so far are used
 * up: then, with may_grow, a chunk more (past every reserve: the top). */
static uint32_t bump(struct arena *a, bool may_grow)
{
	for (;;) {
		uint32_t i = hl__load(&a->bump, HL_RELAXED);
		/* Acquire: pairs with grow's release, so that the chunk of
		 * every index below capacity is seen. */
		uint32_t cap = hl__load(&a->capacity, HL_ACQUIRE);
		if (cap > a->max)
			cap = a->max;
		while (i < cap)
			if (hl__cas(&a->bump, &i, i + 1, HL_RELAXED))
				return i;
		if (!may_grow || !grow(a))
			return 0;
	}
}

static uint32_t node_alloc(void)
{
	uint32_t i = pool_pop(&nodes_arena.pool, node_link);
	if (!i)
		i = bump(&nodes_arena, true);
	if (i) {
		struct hl__node *n = hl__node_at(i);
		n->index = i;
		hl__store(&n->state, HL_NODE_FREE, HL_RELAXED);
	}
	return i;
}

void hl__node_recycle(struct hl__node *n)
{
	/* Acquire: pairs with the release of the owner's abandon (wait.c), so
	 * that its last accesses to the node happen before those of the
	 * node's next owner.  A node some wait is using (armed, parked, kept,
	 * or claimed by a waker) must never be recycled: abandoned ones are, by
	 * the queue, and at thread exit those whose waits are over. */
	uint32_t s = hl__load(&n->state, HL_ACQUIRE);
	if (hl__node_armed(s) || s == HL_NODE_CLAIMED)
		hl__bug("recycling a node that a wait is using", s);
	hl__store(&n->state, HL_NODE_FREE, HL_RELAXED);
	pool_push(&nodes_arena.pool, &n->pool_next, n->index);
}

/* ---- set-up, exit and fork --------------------------------------------- */

static void release_record(struct hl__thread *t, bool free_nodes)
{
	if (free_nodes)
		for (int i = 0; i < HL_NEST; i++)
			if (t->nodes[i])
				hl__node_recycle(hl__node_at(t->nodes[i]));
	/* Relaxed: the record's reuse is ordered by pool_push's release. */
	hl__store(&t->in_use, 0, HL_RELAXED);
	pool_push(&threads_arena.pool, &t->pool_next, t->index);
}

/* pthread key destructor: the thread is exiting and waits on nothing, so
 * none of its nodes is in a queue (an abandoned one was replaced). */
static void thread_exit(void *arg)
{
	struct hl__thread *t = arg;
	hl__self_ptr = NULL;
	release_record(t, true);
}

/* ---- fork ------------------------------------------------------------------
 *
 * In the child of fork() only the forking thread exists, and its TID
 * changed.  The child's update (fork_update): the parent's TID joins those
 * of earlier generations, the fork generation is bumped (the flags and
 * queue tails of the parent's threads become stale), the spinner count
 * becomes this thread's own, and the records of the other threads are
 * released (their counts stay in the process total) but their nodes not
 * recycled: they may sit in the queue of some lock.
 *
 * It runs once per fork, in the first of: hotlock's atfork child handler,
 * or any look at the fork generation (hl__fork_check, thread.h), which every
 * slow path makes before it acts on a queue or a lock's flags, and every
 * thread's registration.  The canary (thread.h) says which: 1 in a process
 * that is up to date, 0 in a child (the kernel wipes the page), 2 while an
 * update runs.
 *
 * Normally the forking thread runs it, alone: in its own handler or in
 * another library's, or in its first hotlock call after _Fork().  A child
 * that called _Fork() or clone() (no handlers) and started threads before
 * any hotlock call may have one of those make the first look: the thread
 * that makes it waits for nobody; the forking thread's own TLS (its TID
 * cache) and the records are left alone then, as the forking thread is
 * not the caller (its TID in the child is the child's pid; ours is not),
 * and only the generation and the spinner count are updated.  The records
 * of the parent's threads then stay in use (a few records lost; no lock
 * touches them). */

static _Atomic uint32_t canary_const = 1;
_Atomic(_Atomic uint32_t *) hl__fork_canary = &canary_const;

static void fork_update(bool forking_thread)
{
	if (forking_thread) {
		/* A cache of 0: the thread has locked nothing since its last
		 * fork (every lock call reads its TID first), so it holds
		 * nothing under that TID. */
		if (hl__tid_cache) {
			for (int i = HL_FORK_TIDS - 1; i > 0; i--)
				hl__prefork_tids[i] = hl__prefork_tids[i - 1];
			hl__prefork_tids[0] = hl__tid_cache;
		}
		hl__tid_cache = 0;
	}
	/* Relaxed: the canary's release below publishes it. */
	hl__fetch_add(&hl__fork_count, 1, HL_RELAXED);
	for (unsigned k = 0; k < hl__thread_hooks_count; k++)
		if (hl__thread_hooks[k].fork_child)
			hl__thread_hooks[k].fork_child();
	if (!forking_thread)
		return;
	struct hl__thread *self = hl__self_ptr;
	if (self)
		self->tid = hl__tid_slow();
	/* Relaxed: the child has one thread, this one.  A parent's thread
	 * that was growing an arena at the fork never finishes here. */
	hl__store(&nodes_arena.growing, 0, HL_RELAXED);
	hl__store(&threads_arena.growing, 0, HL_RELAXED);
	uint32_t n = records_made();
	for (uint32_t i = 1; i < n; i++) {
		struct hl__thread *t = thread_at(i);
		if (t != self && hl__load(&t->in_use, HL_RELAXED))
			release_record(t, false);
	}
}

/* c: the canary page, found not 1 (canary_const is never anything else). */
void hl__fork_child(_Atomic uint32_t *c)
{
	uint32_t v = 0;
	/* Acquire on success: nothing to pair with (the wipe is the
	 * kernel's); relaxed would do, acquire keeps the update after the
	 * claim.  A failed CAS sees 2 (another thread updates: wait for its
	 * release store of 1) or 1 (done: acquire pairs with that store). */
	if (hl__cas(c, &v, 2, HL_ACQUIRE)) {
		pid_t pid = getpid();
		fork_update((pid_t)syscall(SYS_gettid) == pid);
		/* Release: a thread that reads 1 (acquire, below or in its
		 * next hl__fork_check via this page) sees the update. */
		hl__store(c, 1, HL_RELEASE);
		return;
	}
	while (hl__load(c, HL_ACQUIRE) != 1)
		sched_yield();
}

/* The canary's page, at load (the constructor).  Until then a fork is seen
 * by hotlock's atfork handler alone. */
static void canary_setup(void)
{
	int saved = errno;
	long pagesize = sysconf(_SC_PAGESIZE);
	size_t len = pagesize > 0 ? (size_t)pagesize : 4096;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18
#endif
	if (p != MAP_FAILED && madvise(p, len, MADV_WIPEONFORK) != 0) {
		/* Before Linux 4.14: hotlock's atfork handler alone. */
		munmap(p, len);
		p = MAP_FAILED;
	}
	if (p != MAP_FAILED) {
		_Atomic uint32_t *c = p;
		/* Relaxed: published by the release store of the pointer. */
		hl__store(c, 1, HL_RELAXED);
		hl__store(&hl__fork_canary, c, HL_RELEASE);
	}
	errno = saved;
}

static void atfork_child(void)
{
	/* The update ran already if another library's child handler, run
	 * before this one, used a lock's slow path. */
	hl__fork_check();
}

/* Registers the calling thread: a record and its nodes, from the arenas
 * (a chunk is mapped only past every reserve: the top).  On a lock path,
 * for a thread that was not registered where it started: it makes no
 * system call but gettid (its TID, once).  Not reentrant in one way only:
 * a signal handler that locks during it registers a record of its own,
 * which the interrupted registration then replaces (a leak of one record
 * and its nodes, not a fault; no lock is held here, so nothing can
 * deadlock). */
struct hl__thread *hl__thread_register(void)
{
	/* A thread started in a fork child registers after the child's update
	 * (thread.h, hl__fork_check), so that it is not released by it. */
	hl__fork_check();
	uint32_t i = pool_pop(&threads_arena.pool, thread_link);
	if (!i)
		i = bump(&threads_arena, true);
	if (!i)
		return NULL;
	struct hl__thread *t = thread_at(i);
	t->index = i;
	t->tid = hl__tid();
	hl__store(&t->depth, 0, HL_RELAXED);    /* not shared yet */
	for (int k = 0; k < HL_NEST; k++)
		t->nodes[k] = node_alloc();
	for (int k = 0; k < HL_COUNTERS; k++)
		t->fx_base[k] = hl__load(&t->fx[k], HL_RELAXED);
	/* Relaxed: published with the record by the release store below.
	 * What the record's previous thread left does not carry over: its
	 * interrupt, its scheduling policy, its affinity (learned again where
	 * the thread starts, hl_thread_init). */
	hl__store(&t->rt, false, HL_RELAXED);
	for (int k = 0; k < HL_CPU_WORDS; k++)
		hl__store(&t->cpu_mask[k], 0, HL_RELAXED);
	hl__store(&t->interrupt, 0, HL_RELAXED);
	hl__store(&t->intr_node, 0, HL_RELAXED);
	hl__store(&t->pthread_id, (uintptr_t)pthread_self(), HL_RELAXED);
	hl__store(&t->in_use, 1, HL_RELEASE);
	hl__self_ptr = t;
	/* Acquire: pairs with the constructor's release, after the key was
	 * made.  A thread that registers before (another library's
	 * constructor, under LD_PRELOAD) gets its destructor there. */
	if (hl__load(&exit_key_ok, HL_ACQUIRE))
		pthread_setspecific(exit_key, t);
	/* Record i is in use (fresh or reused) and the thread's own. */
	for (unsigned k = 0; k < hl__thread_hooks_count; k++)
		if (hl__thread_hooks[k].registered)
			hl__thread_hooks[k].registered(i);
	return t;
}

/* Nodes kept free for the threads to come, beyond those in use: a thread
 * start grows an arena below them, so that lock paths find their nodes
 * there.  64 threads' worth. */
#define NODE_HEADROOM (64 * HL_NEST)
#define THREAD_HEADROOM 64

static int thread_start(const struct hl__thread_start *known, unsigned how)
{
	int saved = errno;
	struct hl__thread *t = hl__self();
	if (low(&nodes_arena, NODE_HEADROOM))
		grow(&nodes_arena);
	if (low(&threads_arena, THREAD_HEADROOM))
		grow(&threads_arena);
	int err = 0;
	if (!t) {
		err = ENOMEM;
	} else {
		bool rt;
		if (known) {
			rt = known->rt;
			/* Relaxed: a hint (struct hl__thread); the shim's
			 * affinity is read by hl__thread_affinity_cpus. */
			for (int k = 0; known->have_mask && k < HL_CPU_WORDS; k++)
				hl__store(&t->cpu_mask[k], known->mask[k], HL_RELAXED);
			how |= HL_STARTED_KNOWN;
		} else {
			int pol = sched_getscheduler(0);
			rt = pol == SCHED_FIFO || pol == SCHED_RR;
		}
		/* Relaxed: a hint read by this thread's lock paths; the
		 * shim's sched calls may write it from other threads. */
		hl__store(&t->rt, rt, HL_RELAXED);
		for (unsigned k = 0; k < hl__thread_hooks_count; k++)
			if (hl__thread_hooks[k].started)
				hl__thread_hooks[k].started(how);
	}
	errno = saved;
	return err;
}

int hl__thread_start(const struct hl__thread_start *known)
{
	return thread_start(known, 0);
}

int hl_thread_init(void)
{
	return thread_start(NULL, HL_STARTED_QUOTA);
}

__attribute__((constructor)) static void thread_init(void)
{
	canary_setup();
	pthread_atfork(NULL, NULL, atfork_child);
	int saved = errno;
	if (pthread_key_create(&exit_key, thread_exit) == 0) {
		/* Release: a registration that reads true (acquire) uses the
		 * key. */
		hl__store(&exit_key_ok, true, HL_RELEASE);
		if (hl__self_ptr)
			pthread_setspecific(exit_key, hl__self_ptr);
	}
	errno = saved;
	/* The main thread, registered at load, outside any lock call. */
	hl__thread_start(NULL);
}

static uint32_t records_made(void)
{
	/* Relaxed: an index below it whose record is read is checked by its
	 * in_use (acquire) where that matters. */
	uint32_t n = hl__load(&threads_arena.bump, HL_RELAXED);
	/* Acquire: pairs with grow's release, so that every record below
	 * capacity has its chunk. */
	uint32_t cap = hl__load(&threads_arena.capacity, HL_ACQUIRE);
	return n < cap ? n : cap;
}

struct hl__thread *hl__thread_by_pthread(uintptr_t pthread_id)
{
	uint32_t n = records_made();
	for (uint32_t i = 1; i < n; i++) {
		struct hl__thread *t = thread_at(i);
		/* Acquire: pairs with the registration's release, so that
		 * pthread_id is the current thread's. */
		if (!hl__load(&t->in_use, HL_ACQUIRE) ||
		    hl__load(&t->pthread_id, HL_RELAXED) != pthread_id)
			continue;
		return t;
	}
	return NULL;
}

struct hl__thread *hl__thread_by_tid(uint32_t tid)
{
	uint32_t n = records_made();
	for (uint32_t i = 1; i < n; i++) {
		struct hl__thread *t = thread_at(i);
		/* Acquire: as in hl__thread_by_pthread. */
		if (hl__load(&t->in_use, HL_ACQUIRE) && t->tid == tid)
			return t;
	}
	return NULL;
}

/* ---- nodes ----------------------------------------------------------------- */

/* Level d of the nesting is claimed (depth d -> d + 1) before nodes[d] is
 * read, and given back (d + 1 -> d) after nodes[d] is done with (thread.h).
 * Relaxed: only this thread and its signal handlers touch depth and nodes;
 * the signal fences keep the compiler from moving the node accesses across
 * the claim and the give-back, which is all a handler on the same thread
 * needs. */
struct hl__node *hl__thread_node_get(struct hl__thread *self)
{
	if (!self)
		return NULL;
	uint32_t d = hl__load(&self->depth, HL_RELAXED);
	if (d >= HL_NEST)
		return NULL;
	hl__store(&self->depth, d + 1, HL_RELAXED);
	atomic_signal_fence(memory_order_seq_cst);
	uint32_t i = self->nodes[d];
	if (!i) {
		i = node_alloc();        /* a replacement failed earlier: retry */
		if (!i) {
			atomic_signal_fence(memory_order_seq_cst);
			hl__store(&self->depth, d, HL_RELAXED);
			return NULL;
		}
		self->nodes[d] = i;
	}
	struct hl__node *n = hl__node_at(i);
	n->tid = self->tid;
	return n;
}

void hl__thread_node_put(struct hl__thread *self)
{
	uint32_t d = hl__load(&self->depth, HL_RELAXED) - 1;
	hl__store(&hl__node_at(self->nodes[d])->state, HL_NODE_FREE, HL_RELAXED);
	atomic_signal_fence(memory_order_seq_cst);
	hl__store(&self->depth, d, HL_RELAXED);
}

void hl__thread_node_abandoned(struct hl__thread *self)
{
	uint32_t d = hl__load(&self->depth, HL_RELAXED) - 1;
	/* The abandoned node is the queue's now: never hand it out again. */
	self->nodes[d] = node_alloc();
	atomic_signal_fence(memory_order_seq_cst);
	hl__store(&self->depth, d, HL_RELAXED);
}

void hl__thread_set_rt(struct hl__thread *t, bool rt)
{
	if (t)
		/* Relaxed: see hl_thread_init. */
		hl__store(&t->rt, rt, HL_RELAXED);
}

/* ---- counters (futex syscalls, waiting policy) -------------------------------------------------------- */

void hl__thread_stats(uint64_t out[HL_COUNTERS])
{
	struct hl__thread *t = hl__self_ptr;
	for (int k = 0; k < HL_COUNTERS; k++)
		out[k] = t ? hl__load(&t->fx[k], HL_RELAXED) - t->fx_base[k] : 0;
}

void hl__process_stats(uint64_t out[HL_COUNTERS])
{
	for (int k = 0; k < HL_COUNTERS; k++)
		out[k] = 0;
	/* Every record ever handed out, live or not: counters never go down,
	 * so neither does the sum.  Relaxed: statistics, nothing published. */
	uint32_t n = records_made();
	for (uint32_t i = 1; i < n; i++)
		for (int k = 0; k < HL_COUNTERS; k++)
			out[k] += hl__load(&thread_at(i)->fx[k], HL_RELAXED);
}

/* ---- affinity (wait.c's spinner slots) ------------------------------------ */

int hl__thread_affinity_cpus(int enough)
{
	uint64_t out[HL_CPU_WORDS] = { 0 };
	int cpus = 0;
	/* Relaxed: the masks are hints (wait.c); a record that is being taken
	 * or given back is counted or not, either is fine until the next
	 * thread start. */
	uint32_t n = records_made();
	for (uint32_t i = 1; i < n && cpus < enough; i++) {
		struct hl__thread *t = thread_at(i);
		if (!hl__load(&t->in_use, HL_RELAXED))
			continue;
		bool grew = false;
		for (int k = 0; k < HL_CPU_WORDS; k++) {
			uint64_t w = hl__load(&t->cpu_mask[k], HL_RELAXED);
			grew |= (w & ~out[k]) != 0;
			out[k] |= w;
		}
		if (!grew)
			continue;
		cpus = 0;
		for (int k = 0; k < HL_CPU_WORDS; k++)
			cpus += __builtin_popcountll(out[k]);
	}
	return cpus;
}

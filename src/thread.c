/* SPDX-License-Identifier: MIT */
/* Thread records and the node arena: see thread.h for the design.
 *
 * Free lists are Treiber stacks whose head packs (tag << 32 | index); the tag
 * grows on every pop so that a pop racing with a pop-and-push of the same
 * index fails its CAS (no ABA).  Reading pool_next of an element another
 * thread just popped is harmless: arena memory is never unmapped, and the
 * tagged CAS then fails.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "thread.h"

struct hl_node *hl__nodes;
static struct hl_thread *threads;

__thread uint32_t hl__tid_cache __attribute__((tls_model("initial-exec")));
__thread struct hl_thread *hl__self_ptr __attribute__((tls_model("initial-exec")));
__thread uint32_t hl__prefork_tids[HL_FORK_TIDS] __attribute__((tls_model("initial-exec")));
_Atomic uint32_t hl__fork_gen;

static _Atomic uint32_t node_bump = 1;         /* next never-used node index */
static _Atomic uint32_t thread_bump = 1;       /* next never-used record index */
static _Atomic uint64_t node_pool;             /* tagged free-list heads */
static _Atomic uint64_t thread_pool;

static pthread_key_t exit_key;
static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
static bool arenas_ok;

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
	uint64_t old = hl_load(pool, HL_RELAXED);
	for (;;) {
		/* Relaxed: published by the release CAS below. */
		hl_store(link, (uint32_t)old, HL_RELAXED);
		uint64_t nw = (old & ~0xffffffffull) | index;
		/* Release: the element's contents (and link) are visible to the
		 * thread that pops it (acquire below). */
		if (hl_cas(pool, &old, nw, HL_RELEASE))
			return;
	}
}

static uint32_t pool_pop(_Atomic uint64_t *pool, _Atomic uint32_t *(*link_of)(uint32_t))
{
	/* Acquire: pairs with pool_push's release, so the link we read is the
	 * one written before the element was pushed. */
	uint64_t old = hl_load(pool, HL_ACQUIRE);
	for (;;) {
		uint32_t index = (uint32_t)old;
		if (!index)
			return 0;
		uint32_t next = hl_load(link_of(index), HL_RELAXED);
		uint64_t nw = (((old >> 32) + 1) << 32) | next;
		if (hl_cas(pool, &old, nw, HL_ACQUIRE))
			return index;
	}
}

static _Atomic uint32_t *node_link(uint32_t i) { return &hl__nodes[i].pool_next; }
static _Atomic uint32_t *thread_link(uint32_t i) { return &threads[i].pool_next; }

static uint32_t bump(_Atomic uint32_t *counter, uint32_t max)
{
	uint32_t i = hl_load(counter, HL_RELAXED);
	do {
		if (i >= max)
			return 0;
	} while (!hl_cas(counter, &i, i + 1, HL_RELAXED));
	return i;
}

static uint32_t node_alloc(void)
{
	uint32_t i = pool_pop(&node_pool, node_link);
	if (!i)
		i = bump(&node_bump, HL_MAX_NODES);
	if (i) {
		struct hl_node *n = &hl__nodes[i];
		n->index = i;
		hl_store(&n->state, HL_NODE_FREE, HL_RELAXED);
	}
	return i;
}

void hl_node_recycle(struct hl_node *n)
{
	/* Acquire: pairs with the release of the owner's abandon (wait.c), so
	 * that its last accesses to the node happen before those of the
	 * node's next owner.  A node some wait is using (armed, parked, kept,
	 * or claimed by a waker) must never be recycled: abandoned ones are, by
	 * the queue, and at thread exit those whose waits are over. */
	uint32_t s = hl_load(&n->state, HL_ACQUIRE);
	if (hl_node_armed(s) || s == HL_NODE_CLAIMED)
		hl__bug("recycling a node that a wait is using", s);
	hl_store(&n->state, HL_NODE_FREE, HL_RELAXED);
	pool_push(&node_pool, &n->pool_next, n->index);
}

/* ---- set-up, exit and fork --------------------------------------------- */

static void release_record(struct hl_thread *t, bool free_nodes)
{
	if (free_nodes)
		for (int i = 0; i < HL_NEST; i++)
			if (t->nodes[i])
				hl_node_recycle(&hl__nodes[t->nodes[i]]);
	/* Relaxed: the record's reuse is ordered by pool_push's release. */
	hl_store(&t->in_use, 0, HL_RELAXED);
	pool_push(&thread_pool, &t->pool_next, (uint32_t)(t - threads));
}

/* pthread key destructor: the thread is exiting and waits on nothing, so
 * none of its nodes is in a queue (an abandoned one was replaced). */
static void thread_exit(void *arg)
{
	struct hl_thread *t = arg;
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
 * or any look at the fork generation (hl_fork_check, thread.h), which every
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
static pthread_once_t canary_once = PTHREAD_ONCE_INIT;

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
	hl_fetch_add(&hl__fork_gen, 1, HL_RELAXED);
	for (unsigned k = 0; k < hl__thread_hooks_count; k++)
		if (hl__thread_hooks[k].fork_child)
			hl__thread_hooks[k].fork_child();
	if (!forking_thread)
		return;
	struct hl_thread *self = hl__self_ptr;
	if (self)
		self->tid = hl__tid_slow();
	if (!threads)
		return;
	uint32_t n = hl_load(&thread_bump, HL_RELAXED);
	for (uint32_t i = 1; i < n; i++) {
		struct hl_thread *t = &threads[i];
		if (t != self && hl_load(&t->in_use, HL_RELAXED))
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
	if (hl_cas(c, &v, 2, HL_ACQUIRE)) {
		pid_t pid = getpid();
		fork_update((pid_t)syscall(SYS_gettid) == pid);
		/* Release: a thread that reads 1 (acquire, below or in its
		 * next hl_fork_check via this page) sees the update. */
		hl_store(c, 1, HL_RELEASE);
		return;
	}
	while (hl_load(c, HL_ACQUIRE) != 1)
		sched_yield();
}

/* The canary's page; once, before the program's main (constructor) or at
 * the first registration, whichever comes first. */
static void canary_setup(void)
{
	long pagesize = sysconf(_SC_PAGESIZE);
	size_t len = pagesize > 0 ? (size_t)pagesize : 4096;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18
#endif
	if (madvise(p, len, MADV_WIPEONFORK) != 0) {
		/* Before Linux 4.14: hotlock's atfork handler alone. */
		munmap(p, len);
		return;
	}
	_Atomic uint32_t *c = p;
	/* Relaxed: published by the release store of the pointer. */
	hl_store(c, 1, HL_RELAXED);
	hl_store(&hl__fork_canary, c, HL_RELEASE);
}

static void atfork_child(void)
{
	/* The update ran already if another library's child handler, run
	 * before this one, used a lock's slow path. */
	hl_fork_check();
}

static void *reserve(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void setup(void)
{
	hl__nodes = reserve((size_t)HL_MAX_NODES * sizeof(struct hl_node));
	threads = reserve((size_t)HL_MAX_THREADS * sizeof(struct hl_thread));
	if (!hl__nodes || !threads) {
		fprintf(stderr, "hotlock: cannot reserve the waiter arena; "
			"contended locks fall back to polling\n");
		return;
	}
	if (pthread_key_create(&exit_key, thread_exit) != 0)
		return;
	arenas_ok = true;
}

__attribute__((constructor)) static void thread_init(void)
{
	pthread_once(&canary_once, canary_setup);
	pthread_atfork(NULL, NULL, atfork_child);
}

struct hl_thread *hl__thread_register(void)
{
	pthread_once(&canary_once, canary_setup);
	/* A thread started in a fork child registers after the child's update
	 * (thread.h, hl_fork_check), so that it is not released by it. */
	hl_fork_check();
	pthread_once(&setup_once, setup);
	if (!arenas_ok)
		return NULL;
	uint32_t i = pool_pop(&thread_pool, thread_link);
	bool fresh = !i;
	if (fresh)
		i = bump(&thread_bump, HL_MAX_THREADS);
	if (!i)
		return NULL;
	struct hl_thread *t = &threads[i];
	t->tid = hl_tid();
	hl_store(&t->depth, 0, HL_RELAXED);     /* not shared yet */
	for (int k = 0; k < HL_NEST; k++)
		t->nodes[k] = node_alloc();
	for (int k = 0; k < HL_COUNTERS; k++)
		t->fx_base[k] = hl_load(&t->fx[k], HL_RELAXED);
	t->rt_checked_ns = 0;
	t->rt = false;
	for (unsigned k = 0; k < hl__thread_hooks_count; k++)
		if (hl__thread_hooks[k].init)
			hl__thread_hooks[k].init(t);
	/* Relaxed: published with the record by the release store below.
	 * An interrupt of the record's previous thread does not carry over. */
	hl_store(&t->interrupt, 0, HL_RELAXED);
	hl_store(&t->pthread_id, (uintptr_t)pthread_self(), HL_RELAXED);
	hl_store(&t->in_use, 1, HL_RELEASE);
	hl__self_ptr = t;
	pthread_setspecific(exit_key, t);
	/* Record i is in use (fresh or reused) and the thread's own. */
	for (unsigned k = 0; k < hl__thread_hooks_count; k++)
		if (hl__thread_hooks[k].registered)
			hl__thread_hooks[k].registered(i);
	return t;
}

struct hl_thread *hl_thread_by_pthread(uintptr_t pthread_id)
{
	if (!threads)
		return NULL;
	uint32_t n = hl_load(&thread_bump, HL_RELAXED);
	for (uint32_t i = 1; i < n; i++) {
		struct hl_thread *t = &threads[i];
		/* Acquire: pairs with the registration's release, so that
		 * pthread_id is the current thread's. */
		if (!hl_load(&t->in_use, HL_ACQUIRE) ||
		    hl_load(&t->pthread_id, HL_RELAXED) != pthread_id)
			continue;
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
struct hl_node *hl_thread_node_get(struct hl_thread *self)
{
	if (!self)
		return NULL;
	uint32_t d = hl_load(&self->depth, HL_RELAXED);
	if (d >= HL_NEST)
		return NULL;
	hl_store(&self->depth, d + 1, HL_RELAXED);
	atomic_signal_fence(memory_order_seq_cst);
	uint32_t i = self->nodes[d];
	if (!i) {
		i = node_alloc();        /* a replacement failed earlier: retry */
		if (!i) {
			atomic_signal_fence(memory_order_seq_cst);
			hl_store(&self->depth, d, HL_RELAXED);
			return NULL;
		}
		self->nodes[d] = i;
	}
	struct hl_node *n = &hl__nodes[i];
	n->tid = self->tid;
	return n;
}

void hl_thread_node_put(struct hl_thread *self)
{
	uint32_t d = hl_load(&self->depth, HL_RELAXED) - 1;
	hl_store(&hl__nodes[self->nodes[d]].state, HL_NODE_FREE, HL_RELAXED);
	atomic_signal_fence(memory_order_seq_cst);
	hl_store(&self->depth, d, HL_RELAXED);
}

void hl_thread_node_abandoned(struct hl_thread *self)
{
	uint32_t d = hl_load(&self->depth, HL_RELAXED) - 1;
	/* The abandoned node is the queue's now: never hand it out again. */
	self->nodes[d] = node_alloc();
	atomic_signal_fence(memory_order_seq_cst);
	hl_store(&self->depth, d, HL_RELAXED);
}

bool hl_thread_is_rt(struct hl_thread *self, uint64_t now_ns)
{
	if (now_ns - self->rt_checked_ns >= 1000000 || !self->rt_checked_ns) {
		int pol = sched_getscheduler(0);
		self->rt = pol == SCHED_FIFO || pol == SCHED_RR;
		self->rt_checked_ns = now_ns;
	}
	return self->rt;
}

/* ---- counters (futex syscalls, waiting policy) -------------------------------------------------------- */

void hl_thread_stats(uint64_t out[HL_COUNTERS])
{
	struct hl_thread *t = hl__self_ptr;
	for (int k = 0; k < HL_COUNTERS; k++)
		out[k] = t ? hl_load(&t->fx[k], HL_RELAXED) - t->fx_base[k] : 0;
}

void hl_process_stats(uint64_t out[HL_COUNTERS])
{
	for (int k = 0; k < HL_COUNTERS; k++)
		out[k] = 0;
	if (!threads)
		return;
	/* Every record ever handed out, live or not: counters never go down,
	 * so neither does the sum.  Relaxed: statistics, nothing published. */
	uint32_t n = hl_load(&thread_bump, HL_RELAXED);
	for (uint32_t i = 1; i < n; i++)
		for (int k = 0; k < HL_COUNTERS; k++)
			out[k] += hl_load(&threads[i].fx[k], HL_RELAXED);
}

/* ---- affinity (wait.c's spinner slots) ------------------------------------ */

int hl_thread_affinity_cpus(int enough)
{
	uint64_t out[HL_CPU_WORDS] = { 0 };
	int cpus = 0;
	if (!threads)
		return 0;
	/* Relaxed: the masks are hints (wait.c); a record that is being taken
	 * or given back is counted or not, either is fine for 100 ms. */
	uint32_t n = hl_load(&thread_bump, HL_RELAXED);
	for (uint32_t i = 1; i < n && cpus < enough; i++) {
		struct hl_thread *t = &threads[i];
		if (!hl_load(&t->in_use, HL_RELAXED))
			continue;
		bool grew = false;
		for (int k = 0; k < HL_CPU_WORDS; k++) {
			uint64_t w = hl_load(&t->cpu_mask[k], HL_RELAXED);
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

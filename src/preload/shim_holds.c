/* SPDX-License-Identifier: MIT */
/* The shim's side of the deadlock detector (hotlock-run --deadlocks and
 * --lock-order, docs/deadlocks.md): what each thread waits for and holds,
 * kept in its record in the stats area (stats.h: struct stats_wait,
 * struct stats_hold), and the lock-order graph of the process
 * (stats_area.h: struct area_order).  The collector (tools/deadlock.c)
 * reads them from outside and finds the cycles; nothing here decides or
 * reports anything, and nothing runs at the process's end.
 *
 * The wait record.  Every report mode: a thread about to wait for a lock
 * writes what it waits for and where, then makes its seq odd (release);
 * when the wait ends it makes seq even (no clock: the collector times a
 * wait from the first time it sees it).  The collector reads
 * seq (acquire), the fields, then seq again after an acquire fence: the
 * same odd value twice means it read one wait whole, and that the thread
 * was in that wait the whole time.  Before the fields of the next wait are
 * written, a release fence orders the even seq of the last one before
 * them, so no reader can pair new fields with an old odd seq.
 *
 * The hold list (shim_holds_on: --deadlocks or --lock-order).  A lock is
 * pushed after the call that took it returns and removed before the call
 * that releases it, by the thread itself, so the list never names a lock
 * its thread does not hold (it may miss one in those two windows, or one
 * released by another thread: a normal mutex may be).  The collector trusts
 * it only while the thread is blocked in a wait (seq odd and unchanged
 * around the read), or where two reads agree.
 *
 * The lock-order graph (shim_order_on: --lock-order).  When a thread calls
 * for a lock B with a call that waits for it (lock, rdlock, wrlock, a
 * condvar's re-acquisition of its mutex; not a trylock or a timed lock,
 * which cannot wait forever), before it may wait (so that a call that
 * deadlocks is in the graph too), each lock A of its list gives the edge
 * A -> B, unless B is held already (a recursive relock, a nested read:
 * they cannot wait on another thread), or A is a mutex or write lock the
 * thread no longer owns (released by another thread: its word says so).
 * Each edge is recorded once per process: its key is looked up in, and
 * added to, a set in the slot (open addressing; a key is a hash of the
 * whole edge, so two edges with one key would lose the second, one chance
 * in 2^64), and the first thread to add a key appends the edge to the
 * slot's ring, which the collector drains into a graph of its own
 * (stats_area.h).  A lock is a node by its address and its generation
 * (node_gen).  The cost falls on acquisitions made while holding another
 * lock: a hash and a probe of the set, per lock held, in shared memory
 * that is read, not written, once the program's edges are known.  A new
 * edge also carries the call stack that took B (glibc's backtrace, once
 * per new edge, as lockdep saves one): a site is one return address, which
 * names a lock wrapper kept out of line (std::mutex::lock) rather than its
 * caller, and the stack lets the collector name the caller. */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "morph.h"
#include "shim.h"
#include "shim_holds.h"
#include "shim_stats.h"
#include "stats_area.h"
#include "thread.h"
#include "tpword.h"

bool shim_holds_on;
bool shim_order_on;
bool shim_mutex_sites;
bool shim_mutex_listed;
__thread uintptr_t shim_site __attribute__((tls_model("initial-exec")));

/* ---- the wait record ---- */

void shim_wait_note(struct stats_thread *t, enum stats_lock how, const void *obj, const void *mutex,
		    bool timed)
{
	struct stats_wait *w = &t->wait;
	/* Relaxed: the thread's own word. */
	uint32_t seq = hl__load(&w->seq, HL_RELAXED);
	/* The last wait's even seq before this one's fields (see the top). */
	atomic_thread_fence(memory_order_release);
	hl__store(&w->how, (uint32_t)how, HL_RELAXED);
	hl__store(&w->timed, timed, HL_RELAXED);
	hl__store(&w->obj, (uintptr_t)obj, HL_RELAXED);
	hl__store(&w->mutex, (uintptr_t)mutex, HL_RELAXED);
	hl__store(&w->site, shim_site, HL_RELAXED);
	/* Release: the fields before the odd seq that vouches for them.  A
	 * wait begun while another is on (a signal handler's, in a thread
	 * that waits) takes the next odd value, so that no reader takes the
	 * fields of the one for the other. */
	hl__store(&w->seq, (seq + 1) | 1, HL_RELEASE);
}

void shim_wait_done(struct stats_thread *t)
{
	uint32_t seq = hl__load(&t->wait.seq, HL_RELAXED);
	if (seq & 1)
		/* Release: a reader that sees the wait over saw it whole. */
		hl__store(&t->wait.seq, seq + 1, HL_RELEASE);
}

/* ---- the lock-order graph ---- */

static inline struct area_order *order(void)
{
	return shim_slot ? area_order(shim_slot) : NULL;
}

void shim_order_forget(const void *obj)
{
	struct area_order *o = order();
	if (o)
		/* Relaxed: init and destroy come before the object is shared
		 * (again), and whatever shares it orders them. */
		hl__fetch_add(&o->gens[area_order_bucket((uintptr_t)obj)], 1, HL_RELAXED);
}

/* The word of obj that holds the generation of its current life: a word
 * that is zero in a new object, however it was made (pthread_*_init, a
 * static initializer, a C++ constructor, memset) and that nothing else
 * writes: a normal or adaptive mutex's recursion count (byte 20; only a
 * recursive mutex counts there, and an errorcheck one reads it), an
 * rwlock's first spare word (byte 16).  NULL for the others. */
static uint32_t *life_mark(const void *obj, enum stats_lock how)
{
	if (how == SL_READ || how == SL_WRITE)
		return &SR((pthread_rwlock_t *)obj)->spare0[0];
	int type = how == SL_MUTEX ? shim_mutex_type((pthread_mutex_t *)obj) : -1;
	if (type == PTHREAD_MUTEX_NORMAL || type == PTHREAD_MUTEX_ADAPTIVE_NP)
		return &SM((pthread_mutex_t *)obj)->count;
	return NULL;
}

/* Generations of lives, from 2^31 up: apart from the buckets' (below). */
static _Atomic uint32_t lives = 1u << 31;

/* The generation of obj's node, so that a lock made where a freed one lay
 * (malloc reuses addresses; a C++ mutex is neither initialised nor
 * destroyed by a call) is a new node, whose edges never meet the old
 * one's.  A lock with a mark word (life_mark) is given a generation of its
 * own the first time it is met in its life: the first thread to find the
 * word zero stores a new one there (a CAS: threads that do not hold the
 * lock may race for it), and every later meeting reads it.  Another lock
 * takes its bucket's generation, which init and destroy move on (such
 * locks are made by pthread_*_init: a recursive or errorcheck mutex, one
 * glibc keeps); two addresses of one bucket only split a lock into more
 * nodes, which can lose a cycle, never make one. */
static uint32_t node_gen(struct area_order *o, const void *obj, enum stats_lock how)
{
	uint32_t *mark = life_mark(obj, how);
	if (!mark)
		/* Relaxed: see shim_order_forget. */
		return hl__load(&o->gens[area_order_bucket((uintptr_t)obj)], HL_RELAXED);
	/* Relaxed: the mark publishes nothing but itself. */
	uint32_t gen = __atomic_load_n(mark, __ATOMIC_RELAXED);
	if (gen)
		return gen;
	uint32_t fresh = hl__fetch_add(&lives, 1, HL_RELAXED) | 1u << 31;
	return __atomic_compare_exchange_n(mark, &gen, fresh, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)
		       ? fresh
		       : gen;
}

static uint64_t edge_key(const struct area_edge *e)
{
	uint64_t h = 1469598103934665603ull;
	const uint64_t part[] = { e->from, e->to, (uint64_t)e->from_gen << 32 | e->to_gen,
				  (uint64_t)e->from_how << 16 | e->to_how };
	for (size_t i = 0; i < sizeof(part) / sizeof(part[0]); i++) {
		h = (h ^ part[i]) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	return h ? h : 1;               /* 0 marks a free entry */
}

/* An edge is left out: the collector says the graph is incomplete.
 * Relaxed, and stored once. */
static void edge_lost(struct area_order *o)
{
	if (!hl__load(&o->lost, HL_RELAXED))
		hl__store(&o->lost, 1, HL_RELAXED);
}

/* The call stack that takes the edges' `to`, taken at the first new edge
 * of the call, and once per thread at a time (libgcc's unwinder may take
 * a mutex of its own, through this shim). */
struct to_stack {
	bool taken;
	uintptr_t pcs[AREA_EDGE_FRAMES];
};
static __thread bool taking_stack __attribute__((tls_model("initial-exec")));

static void to_stack_take(struct to_stack *st)
{
	if (st->taken)
		return;
	st->taken = true;
	if (taking_stack)
		return;
	taking_stack = true;
	int saved = errno, cs;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
	shim_stats_stack(st->pcs, AREA_EDGE_FRAMES);
	pthread_setcancelstate(cs, NULL);
	errno = saved;
	taking_stack = false;
}

/* Adds e to the set, and to the ring if it is new (with st's stack). */
static void edge_add(struct area_order *o, const struct area_edge *e, struct to_stack *st)
{
	uint64_t key = edge_key(e);
	uint32_t h = (uint32_t)(key >> 17) % AREA_ORDER_KEYS;
	for (uint32_t probe = 0; probe < 64; probe++, h = (h + 1) % AREA_ORDER_KEYS) {
		/* Relaxed: the set publishes nothing but the keys themselves;
		 * the edge is published by its log entry's `ready`. */
		uint64_t k = hl__load(&o->keys[h], HL_RELAXED);
		if (k == key)
			return;
		if (k != 0 || !hl__cas(&o->keys[h], &k, key, HL_RELAXED)) {
			if (k == key)
				return;         /* another thread added it first */
			continue;
		}
		/* An entry of the ring, once the collector has drained it
		 * (acquire: its reads of the entry before our writes). */
		uint32_t i = hl__load(&o->used, HL_RELAXED);
		do {
			if (i - hl__load(&o->drained, HL_ACQUIRE) >= AREA_ORDER_EDGES) {
				edge_lost(o);
				return;
			}
		} while (!hl__cas(&o->used, &i, i + 1, HL_RELAXED));
		struct area_edge *slot = &o->edges[i % AREA_ORDER_EDGES];
		to_stack_take(st);
		slot->from = e->from;
		slot->to = e->to;
		slot->from_site = e->from_site;
		slot->to_site = e->to_site;
		memcpy(slot->to_stack, st->pcs, sizeof(slot->to_stack));
		slot->from_gen = e->from_gen;
		slot->to_gen = e->to_gen;
		slot->from_how = e->from_how;
		slot->to_how = e->to_how;
		slot->tid = e->tid;
		/* Release: the entry before its `ready` (the collector
		 * acquires it). */
		hl__store(&slot->ready, 1, HL_RELEASE);
		return;
	}
	edge_lost(o);
}

/* Whether the calling thread (tid) still owns a lock of its list (a
 * mutex or write lock may have been released by another thread; a read
 * share cannot be told from another thread's, and is trusted). */
static bool still_mine(const struct stats_hold *h, uint32_t tid)
{
	uintptr_t obj = hl__load(&h->obj, HL_RELAXED);
	switch (hl__load(&h->how, HL_RELAXED)) {
	case SL_MUTEX:
		return hl__mutex_held_by(&SM((pthread_mutex_t *)obj)->hl, tid);
	case SL_GLIBC_MUTEX:
		/* glibc's own word; relaxed, as glibc's trylock reads it. */
		return (uint32_t)__atomic_load_n(&((pthread_mutex_t *)obj)->__data.__owner,
						 __ATOMIC_RELAXED) == tid;
	case SL_WRITE:
		/* Relaxed: the writer's own TID, as hl_rwlock's own checks
		 * read it (a fork child's forking thread counts as the
		 * writer of the locks it held in the parent). */
		return hl__tp_owned_by_me((uint32_t)__atomic_load_n(&SR((pthread_rwlock_t *)obj)->hl.state_,
								    __ATOMIC_RELAXED),
					  tid);
	default:
		return true;
	}
}

/* The edges to obj from each lock of t's list (listed of them). */
static void order_edges(struct area_order *o, struct stats_thread *t, uint32_t listed, const void *obj,
			enum stats_lock how, uintptr_t site)
{
	for (uint32_t i = 0; i < listed; i++)
		if (hl__load(&t->holds[i].obj, HL_RELAXED) == (uintptr_t)obj)
			return;         /* held already: a relock waits for nobody */
	uint32_t tid = hl__tid();
	struct to_stack st = { .taken = false };
	for (uint32_t i = 0; i < listed; i++) {
		const struct stats_hold *h = &t->holds[i];
		const void *from = (const void *)hl__load(&h->obj, HL_RELAXED);
		if (!from || !still_mine(h, tid))
			continue;
		enum stats_lock from_how = hl__load(&h->how, HL_RELAXED);
		struct area_edge e = {
			.from = (uintptr_t)from, .to = (uintptr_t)obj,
			.from_site = hl__load(&h->site, HL_RELAXED), .to_site = site,
			.from_gen = node_gen(o, from, from_how), .to_gen = node_gen(o, obj, how),
			.from_how = (uint16_t)from_how, .to_how = (uint16_t)how,
			.tid = tid,
		};
		edge_add(o, &e, &st);
	}
}

/* ---- the hold list ---- */

void shim_order_before(const void *obj, enum stats_lock how, uintptr_t site)
{
	struct stats_thread *t = shim_me;
	struct area_order *o = order();
	/* Relaxed: the thread's own count. */
	uint32_t n = t ? hl__load(&t->nholds, HL_RELAXED) : 0;
	if (n && o)     /* no record, or an empty list: it holds nothing */
		order_edges(o, t, n < STATS_HOLDS ? n : STATS_HOLDS, obj, how, site);
}

void shim_hold_push_slow(const void *obj, enum stats_lock how, uintptr_t site)
{
	struct stats_thread *t = shim_stats_thread();
	if (!t)
		return;
	/* Relaxed: the thread's own count. */
	uint32_t n = hl__load(&t->nholds, HL_RELAXED);
	if (n < STATS_HOLDS)
		shim_hold_list(t, n, obj, how, site);
	else
		hl__store(&t->nholds, n + 1, HL_RELEASE);       /* counted, not listed */
}

void shim_hold_pop_slow(struct stats_thread *t, const void *obj)
{
	uint32_t n = hl__load(&t->nholds, HL_RELAXED);
	uint32_t listed = n < STATS_HOLDS ? n : STATS_HOLDS;
	for (uint32_t i = listed; i-- > 0;) {
		if (hl__load(&t->holds[i].obj, HL_RELAXED) != (uintptr_t)obj)
			continue;
		/* The latest hold of obj goes; those above move down.  With
		 * more holds than listed, the last listed entry has no
		 * successor to take its place: it is left empty (obj 0). */
		for (uint32_t k = i; k + 1 < listed; k++) {
			struct stats_hold *to = &t->holds[k], *from = &t->holds[k + 1];
			hl__store(&to->obj, hl__load(&from->obj, HL_RELAXED), HL_RELAXED);
			hl__store(&to->site, hl__load(&from->site, HL_RELAXED), HL_RELAXED);
			hl__store(&to->how, hl__load(&from->how, HL_RELAXED), HL_RELAXED);
		}
		if (n > STATS_HOLDS)
			hl__store(&t->holds[listed - 1].obj, 0, HL_RELAXED);
		hl__store(&t->nholds, n - 1, HL_RELEASE);
		return;
	}
	/* Not listed: one of the holds beyond the list, if there are any;
	 * else a lock this thread did not take (another thread's, a normal
	 * mutex unlocked for it), which changes nothing here. */
	if (n > STATS_HOLDS)
		hl__store(&t->nholds, n - 1, HL_RELEASE);
}

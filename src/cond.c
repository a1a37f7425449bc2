/* SPDX-License-Identifier: MIT */
/* hl_cond_t: a condition variable for hl_mutex_t with wait morphing.
 *
 * A waiter waits on its own node (wait.h).  A broadcast does not wake its
 * waiters to race for the mutex, and most of them to sleep again on it: it
 * moves their nodes, still asleep, onto the mutex's waiter queue with one
 * exchange of the queue's tail (morph.h), and the mutex's own handovers
 * wake them one at a time.  So a broadcast to any number of waiters costs
 * at most one futex call (none when the broadcaster holds the mutex: its
 * unlock wakes the first of them) and never wakes a crowd.  A signal wakes
 * the one waiter it chose, which then takes the mutex as any thread does
 * (stealing it, spinning for it, or queueing): a single waiter moved to
 * the end of a mutex queue of sleepers would wait for every one of them to
 * be woken in turn, while running threads keep the mutex (docs/cond.md,
 * Signal, has the measurements).
 *
 * State (16 bytes, all-zero = no waiters):
 *
 *   field   bits    meaning
 *   ------  ------  ----------------------------------------------------
 *   lock    0       LOCKED: a thread works on the list (below)
 *           8-15    the fork generation it was taken in (thread.h); a
 *                   lock taken in a fork parent is free in the child
 *   first   0-23    first waiter's node index (the longest waiting)
 *           24-31   the fork generation it was listed in; 0: no waiters
 *   last    0-23    last waiter's node index (valid while first is)
 *   refs    0-23    waiters that may still touch the condvar: listed, or
 *                   timed out and not yet done with the list
 *           24-31   the fork generation of the count
 *
 * The list is doubly linked through the nodes: next (the node's queue
 * link, free while it waits on a condvar) and cond_prev; cond_listed says
 * whether the node is on it.  All of it, and refs, change only under the
 * list lock; first is also read without it, as a hint that the list is
 * empty.  The list lock is held for a few list operations; a thread that
 * finds it held spins briefly, then yields, then sleeps (1 us doubling to
 * 1 ms), so that a holder that was preempted, even by a real-time thread
 * on its CPU, gets to run.
 *
 * Wait (the caller holds the mutex m):
 *  1. Stamp and arm this thread's node; record m in it.
 *  2. Under the list lock: EINVAL if the first waiter waits with another
 *     mutex (every listed node then has the first one's mutex); append the
 *     node; refs += 1.
 *  3. Unlock m.  A signal from now on finds the node on the list: a waiter
 *     is on the list before it lets anyone take m, so no signal sent under
 *     m after that is lost.
 *  4. Wait on the node.  A timed wait may give up when the deadline passes
 *     (the node becomes ABANDONED), unless a signaller kept it first.
 *  5a. RETRY (a signal chose it): give the node back, take m as
 *     hl_mutex_lock does; return 0.
 *  5b. A signal of m's queue (a broadcast moved the node there: morph.h):
 *     take m as any queued waiter of m does, with the same node, however
 *     late; return 0.
 *  6. Gave up: under the list lock, unlink the node if it is still listed,
 *     refs -= 1.  That unlock is the thread's last access to the condvar.
 *     Take m as hl_mutex_lock does; return ETIMEDOUT.
 *
 * Signal (the caller need not hold m):
 *  1. If first is 0, return: nobody was waiting when m was last released
 *     to the caller (or to whatever ordered the signal after the waits).
 *  2. Under the list lock: take the first node off the list and keep it
 *     (hl__node_keep: its wait can no longer be given up); if it had given
 *     up already, its thread cleans up (step 6) and the next one is taken.
 *     A kept node's thread is done with the condvar: refs -= 1.
 *  3. After the unlock, which is the signaller's last access to the
 *     condvar (it may be destroyed and freed at once): signal the node
 *     RETRY (one futex call if it sleeps).
 * Broadcast: step 2 for every listed node, in order, linking the kept
 * ones into one chain (those that gave up are left out) and stamping them
 * for the mutex queue; step 3 appends the chain to m's queue at once
 * (hl__mutex_enqueue_moved).  If the first of it became the queue's head,
 * a broadcaster holding m leaves it for its unlock to wake; any other
 * wakes it now.  The rest wait in m's queue for their turn.
 *
 * Why no signal is stolen (glibc bug 13165): a signal takes the waiter that
 * has waited longest, which was on the list before the signaller took the
 * list lock; a thread that starts waiting later is appended behind it.  Why
 * no waiter is woken twice or lost: keep and give-up are one CAS on the
 * node's state each (wait.h), so exactly one of them wins; a kept waiter is
 * signalled, or in m's queue, where every waiter is woken in turn; one
 * that gave up is skipped.  Spurious wake-ups: none, except for a thread
 * with no node left (waits nested deeper than HL_NEST, an exhausted
 * arena), which sleeps 1 ms and returns 0 (cond_wait_without_node).
 *
 * Destroy: EBUSY while a waiter is listed; while refs says a waiter that
 * gave up is still cleaning up (step 6), destroy waits for it, as a
 * signaller's or broadcaster's waiters can be freed with the condvar the
 * moment destroy returns (POSIX: destroy as soon as nobody is blocked).
 */
#include <stddef.h>
#include <string.h>

#include <hotlock/cond.h>

#include "morph.h"
#include "queue.h"
#include "shim_api.h"
#include "thread.h"
#include "wait.h"

struct cond {
	_Atomic uint32_t lock;
	_Atomic uint32_t first;
	_Atomic uint32_t last;
	_Atomic uint32_t refs;
};

_Static_assert(sizeof(struct cond) == sizeof(hl_cond_t), "layout");
_Static_assert(_Alignof(struct cond) == _Alignof(hl_cond_t), "layout");
_Static_assert(offsetof(struct cond, lock) == offsetof(hl_cond_t, lock_), "layout");
_Static_assert(offsetof(struct cond, first) == offsetof(hl_cond_t, first_), "layout");
_Static_assert(offsetof(struct cond, last) == offsetof(hl_cond_t, last_), "layout");
_Static_assert(offsetof(struct cond, refs) == offsetof(hl_cond_t, refs_), "layout");
_Static_assert(sizeof(hl_cond_t) <= 16, "hl_cond_t must fit in 16 bytes");

static inline struct cond *C(hl_cond_t *c) { return (struct cond *)c; }

#define LIST_LOCKED 1u
#define LOCK_GEN_SHIFT 8
#define REFS_MASK HL_QUEUE_INDEX_MASK

/* ---- the list lock --------------------------------------------------- */

/* Steps of spinning and yielding before a thread that waits for the list
 * lock sleeps. */
#define LIST_SPINS 320

/* One step of waiting for a thread that holds the list lock (or, in
 * destroy, is still leaving the condvar): spin, then yield, then sleep. */
static void list_backoff(unsigned *spins, long *sleep_ns)
{
	if (*spins < LIST_SPINS)
		hl__wait_for_peer(spins);
	else
		hl__poll_backoff(NULL, sleep_ns);
}

static void list_lock(struct cond *c)
{
	const uint32_t held = LIST_LOCKED | hl__fork_gen() << LOCK_GEN_SHIFT;
	unsigned spins = 0;
	long sleep_ns = 1000;
	/* Relaxed: only the CAS below acquires. */
	uint32_t w = hl__load(&c->lock, HL_RELAXED);
	for (;;) {
		/* Free, or taken in a fork parent by a thread that does not
		 * exist here. */
		if (w != held) {
			/* Acquire: pairs with list_unlock's release; the list
			 * is as the last holder left it. */
			if (hl__cas(&c->lock, &w, held, HL_ACQUIRE))
				return;
			continue;
		}
		list_backoff(&spins, &sleep_ns);
		w = hl__load(&c->lock, HL_RELAXED);
	}
}

static void list_unlock(struct cond *c)
{
	/* Release: the list changes happen before the next holder's
	 * acquire. */
	hl__store(&c->lock, 0, HL_RELEASE);
}

/* ---- the waiter list (under the list lock) ----------------------------- */
/* Relaxed throughout: the list lock orders these accesses; first is also
 * read without it, as a hint (hl_cond_signal step 1). */

static inline struct hl__node *list_first(struct cond *c)
{
	/* NULL also for a list of a fork parent's threads: they do not
	 * exist here (the child starts with an empty list). */
	return hl__queue_node(hl__load(&c->first, HL_RELAXED));
}

static inline struct hl__node *node_or_null(uint32_t index)
{
	return index ? hl__node_at(index) : NULL;
}

/* refs, or 0 if it was counted in a fork parent. */
static inline uint32_t refs_now(struct cond *c)
{
	uint32_t r = hl__load(&c->refs, HL_RELAXED);
	return r >> HL_NODE_INDEX_BITS == hl__fork_gen() ? r & REFS_MASK : 0;
}

static inline void refs_add(struct cond *c, int delta)
{
	uint32_t r = refs_now(c) + (uint32_t)delta;
	hl__store(&c->refs, (r & REFS_MASK) | hl__fork_gen() << HL_NODE_INDEX_BITS, HL_RELAXED);
}

static void list_append(struct cond *c, struct hl__node *first, struct hl__node *n)
{
	hl__store(&n->next, 0, HL_RELAXED);
	if (first) {
		uint32_t last = hl__load(&c->last, HL_RELAXED);
		n->cond_prev = last;
		hl__store(&hl__node_at(last)->next, n->index, HL_RELAXED);
	} else {
		n->cond_prev = 0;
		hl__store(&c->first, hl__queue_word(n), HL_RELAXED);
	}
	hl__store(&c->last, n->index, HL_RELAXED);
	n->cond_listed = 1;
	refs_add(c, 1);
}

static void list_unlink(struct cond *c, struct hl__node *n)
{
	uint32_t next = hl__load(&n->next, HL_RELAXED), prev = n->cond_prev;
	if (prev)
		hl__store(&hl__node_at(prev)->next, next, HL_RELAXED);
	else
		hl__store(&c->first, next ? hl__queue_word(hl__node_at(next)) : 0, HL_RELAXED);
	if (next)
		hl__node_at(next)->cond_prev = prev;
	else
		hl__store(&c->last, prev, HL_RELAXED);
	n->cond_listed = 0;
}

/* ---- wait ------------------------------------------------------------- */

/* A thread with no node: releases m, sleeps 1 ms (or until the deadline),
 * takes m again and returns: a spurious wake-up, correct for a caller that
 * tests its predicate, and never expected in practice (hl_cond_wait). */
static int cond_wait_without_node(hl_mutex_t *m, const struct hl__deadline *dl)
{
	hl_mutex_unlock(m);
	long sleep_ns = 1000000;
	bool passed = hl__poll_backoff(dl, &sleep_ns);
	hl_mutex_lock(m);
	return passed || hl__deadline_passed(dl) ? ETIMEDOUT : 0;
}

static int cond_wait(struct cond *c, hl_mutex_t *m, const struct hl__deadline *dl)
{
	struct hl__thread *self = hl__self();
	if (!hl__mutex_held_by(m, hl__tid()))
		return EPERM;
	struct hl__node *n = hl__thread_node_get(self);
	if (hl__unlikely(!n))
		return cond_wait_without_node(m, dl);
	/* Step 1. */
	hl__queue_node_init(n, self, hl__now_ns());
	hl__node_arm(n);
	n->cond_mutex = m;
	/* Step 2. */
	list_lock(c);
	struct hl__node *first = list_first(c);
	if (first && first->cond_mutex != m) {
		list_unlock(c);
		hl__thread_node_put(self);
		return EINVAL;
	}
	list_append(c, first, n);
	list_unlock(c);
	/* Step 3.  Cannot fail: we hold m. */
	hl_mutex_unlock(m);
	/* Step 4.  No spinning: the wake-up waits for another thread to take
	 * m, change what we wait for and signal, longer than a spin lasts; a
	 * broadcast's waiter waits for m's handovers besides. */
	uint32_t sig = hl__node_wait(n, dl, 0);
	if (sig == HL_SIG_RETRY) {                              /* step 5a */
		hl__thread_node_put(self);
		return hl_mutex_lock(m);
	}
	if (sig != HL_WAIT_TIMEDOUT)
		return hl__mutex_lock_moved(m, self, n, sig);   /* step 5b */
	/* Step 6.  The node is ours again once it is off the list. */
	list_lock(c);
	if (n->cond_listed)
		list_unlink(c, n);
	refs_add(c, -1);
	list_unlock(c);
	hl__thread_node_put(self);
	hl_mutex_lock(m);
	return ETIMEDOUT;
}

int hl_cond_wait(hl_cond_t *c, hl_mutex_t *m)
{
	return cond_wait(C(c), m, NULL);
}

int hl_cond_timedwait(hl_cond_t *c, hl_mutex_t *m, clockid_t clock, const struct timespec *abstime)
{
	struct hl__deadline dl;
	int err = hl__deadline_init(&dl, clock, abstime);
	return err ? err : cond_wait(C(c), m, &dl);
}

int hl__cond_wait_dl(hl_cond_t *c, hl_mutex_t *m, const struct hl__deadline *dl)
{
	return cond_wait(C(c), m, dl);
}

/* ---- signal and broadcast ---------------------------------------------- */

bool hl__cond_has_waiters(hl_cond_t *c)
{
	return list_first(C(c)) != NULL;
}

uint32_t hl__cond_waiters(hl_cond_t *c)
{
	return list_first(C(c)) ? refs_now(C(c)) : 0;
}

/* Step 2 for listed node n, taken off the list: keeps it, or leaves it to
 * its thread, which gave up (and does its own step 6).  Returns whether it
 * was kept. */
static bool take_waiter(struct cond *c, struct hl__node *n)
{
	n->cond_listed = 0;
	if (!hl__node_keep(n))
		return false;
	refs_add(c, -1);
	return true;
}

int hl_cond_signal(hl_cond_t *pc)
{
	struct cond *c = C(pc);
	/* Step 1.  Relaxed: see the design comment; a waiter that released m
	 * to us listed itself before. */
	if (!list_first(c))
		return 0;
	struct hl__node *n;
	list_lock(c);
	while ((n = list_first(c))) {
		list_unlink(c, n);
		if (take_waiter(c, n))
			break;
	}
	list_unlock(c);
	/* Step 3.  Cannot be refused: n is kept. */
	if (n)
		hl__node_signal(n, HL_SIG_RETRY);
	return 0;
}

int hl_cond_broadcast(hl_cond_t *pc)
{
	struct cond *c = C(pc);
	if (!list_first(c))
		return 0;
	uint64_t now = hl__now_ns();
	struct hl__node *first = NULL, *last = NULL, *next;
	list_lock(c);
	for (struct hl__node *n = list_first(c); n; n = next) {
		/* Read before take_waiter: a node that gave up is its
		 * thread's again once we unlock. */
		next = node_or_null(hl__load(&n->next, HL_RELAXED));
		if (!take_waiter(c, n))
			continue;
		hl__queue_node_moved(n, now);
		if (last)
			hl__store(&last->next, n->index, HL_RELAXED);
		else
			first = n;
		last = n;
	}
	hl__store(&c->first, 0, HL_RELAXED);
	hl__store(&c->last, 0, HL_RELAXED);
	list_unlock(c);
	if (first)
		hl__mutex_enqueue_moved(first->cond_mutex, first, last, hl__tid());
	return 0;
}

/* ---- init and destroy -------------------------------------------------- */

int hl_cond_init(hl_cond_t *c)
{
	memset(c, 0, sizeof(*c));
	return 0;
}

int hl_cond_destroy(hl_cond_t *pc)
{
	struct cond *c = C(pc);
	unsigned spins = 0;
	long sleep_ns = 1000;
	for (;;) {
		list_lock(c);
		bool listed = list_first(c) != NULL;
		uint32_t refs = refs_now(c);
		list_unlock(c);
		if (listed)
			return EBUSY;
		if (!refs)
			return 0;
		/* A waiter that gave up is finishing its step 6. */
		list_backoff(&spins, &sleep_ns);
	}
}

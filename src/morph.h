/* SPDX-License-Identifier: MIT */
/* Wait morphing: what hl_cond (cond.c) asks of hl_mutex (mutex.c).
 *
 * A condvar broadcast does not wake its waiters to fight for the mutex: it
 * moves their nodes, whose waits go on (kept: wait.h), onto the mutex's
 * waiter queue, where each waits as any waiter of the mutex and is woken by
 * the mutex's own handovers, one at a time.  A waiter's thread, when its
 * node is signalled there, goes on with the mutex's lock as a queued waiter
 * would.  The policy of the mutex (order, handoff, stealing)
 * stays in mutex.c; the condvar only chooses whom to move.
 */
#ifndef HOTLOCK_MORPH_H
#define HOTLOCK_MORPH_H

#include <stdbool.h>
#include <stdint.h>

#include <hotlock/mutex.h>

#include "thread.h"
#include "wait.h"

/* Whether thread tid owns m (a fork child's thread also owns what it held
 * in its parent).  Only tid's own answer is stable. */
HL_HIDDEN bool hl__mutex_held_by(const hl_mutex_t *m, uint32_t tid);

/* Appends the chain first..last of nodes whose waits are kept
 * (hl__node_keep), stamped with hl__queue_node_moved and linked through their
 * next fields, to m's waiter queue.  If first becomes the queue's head it
 * must compete for the lock: when the caller, thread tid, owns m, its
 * unlock will wake first (as for a parked head it found when it took the
 * lock); otherwise first is signalled HL_SIG_HEAD now.  The others are
 * woken by the handovers. */
HL_HIDDEN void hl__mutex_enqueue_moved(hl_mutex_t *m, struct hl__node *first, struct hl__node *last,
				       uint32_t tid);

/* The calling thread's node n, moved onto m's queue, was signalled sig
 * there (HL_SIG_HEAD, HL_SIG_RELEASED or HL_SIG_HANDED): takes m as any
 * queued waiter does, with no deadline, and gives n back to self.
 * Returns 0 with m held. */
HL_HIDDEN int hl__mutex_lock_moved(hl_mutex_t *m, struct hl__thread *self, struct hl__node *n,
				   uint32_t sig);

#endif

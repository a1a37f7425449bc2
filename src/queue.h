/* SPDX-License-Identifier: MIT */
/* The waiter queue: an MCS queue of waiter nodes (wait.h), in FIFO order or
 * in the CNA order (compact NUMA-aware: waiters on the holder's node first).
 *
 * A lock keeps a 32-bit tail word; the queue is the chain of nodes linked by
 * their `next` fields from the head to the tail.  The tail word holds the
 * last node's index in its low 24 bits and the fork generation (thread.h) in
 * its high 8 bits: after fork() a tail of an older generation names a node of
 * a thread that no longer exists, and is treated as an empty queue.
 *
 *   tail: [ gen:8 | index:24 ]   0 = empty
 *
 *   primary:    head --next--> n2 --next--> n3 ... --next--> tail node
 *   secondary:  head.sec_head --next--> ... --> head.sec_tail   (CNA only)
 *
 * The queue decides order only; the lock decides what headship means (for
 * hl_mutex: watching the lock word).  The head leaves the queue when it takes
 * the lock (hl__queue_pass_head), so the owner of a lock holds no node.  The
 * CNA policy acts in hl__queue_pass_head only: the leaving head chooses its
 * successor and hands it the secondary queue (queue.c has the protocol).
 */
#ifndef HOTLOCK_QUEUE_H
#define HOTLOCK_QUEUE_H

#include <stdbool.h>
#include <stdint.h>

#include "thread.h"
#include "wait.h"

#define HL_QUEUE_INDEX_MASK ((1u << HL_NODE_INDEX_BITS) - 1)
_Static_assert(HL_NODE_INDEX_BITS + HL_FORK_GEN_BITS == 32,
	       "a tail word is a node index and a fork generation");

/* The node a tail word names, or NULL (empty, or left by a fork parent). */
static inline struct hl__node *hl__queue_node(uint32_t tail)
{
	if (!tail || tail >> HL_NODE_INDEX_BITS != hl__fork_gen())
		return NULL;
	return hl__node_at(tail & HL_QUEUE_INDEX_MASK);
}

/* The tail word that names n, in this fork generation. */
static inline uint32_t hl__queue_word(const struct hl__node *n)
{
	return n->index | hl__fork_gen() << HL_NODE_INDEX_BITS;
}

/* Stamps n for a new wait by the calling thread (self): the start time, the
 * RT and prioritized flags, the thread's node, an empty secondary queue.
 * Then arm n (wait.h) and enqueue it. */
HL_HIDDEN void hl__queue_node_init(struct hl__node *n, struct hl__thread *self, uint64_t now_ns);

/* Appends n (stamped and armed).  Returns n's predecessor, or NULL if n is
 * now the head. */
HL_HIDDEN struct hl__node *hl__queue_enqueue(_Atomic uint32_t *tail, struct hl__node *n);

/* Enqueueing on behalf of other threads (hl_cond's broadcast moves its
 * waiters onto a mutex's queue).  hl__queue_node_moved stamps n, a node
 * whose wait is in progress (armed, and kept: wait.h), for a new wait in a
 * queue: it begins now, with an empty secondary queue; its thread, flags
 * and node stay as its owner stamped them.  hl__queue_enqueue_chain appends
 * the chain first..last, linked through their next fields (relaxed stores,
 * published by the enqueue), at once; it returns first's predecessor, or
 * NULL if first is now the head. */
HL_HIDDEN void hl__queue_node_moved(struct hl__node *n, uint64_t now_ns);
HL_HIDDEN struct hl__node *hl__queue_enqueue_chain(_Atomic uint32_t *tail, struct hl__node *first,
						 struct hl__node *last);

/* hl__queue_pass_head options. */
enum {
	HL_PASS_DEFER_WAKE = 1u << 0,   /* leave a parked new head asleep: below */
	HL_PASS_CNA = 1u << 1,          /* choose the successor by node */
};

/* Takes head n out of the queue and makes a successor the head: the next
 * node in FIFO order, or with HL_PASS_CNA the next on n's node (queue.c).
 * The new head is signalled HL_SIG_HEAD; successors that were abandoned are
 * skipped (they are recycled, as is n itself if it was abandoned).  With
 * HL_PASS_DEFER_WAKE, a new head that is parked is not woken but returned
 * (a "deferred" head): the caller must arrange for it to be signalled later
 * (the locks do so through their lock word).  Returns NULL otherwise.  The
 * caller holds headship for n, and the lock (or a share of it) whenever a
 * release could otherwise free the lock under it. */
HL_HIDDEN struct hl__node *hl__queue_pass_head(_Atomic uint32_t *tail, struct hl__node *n,
					     unsigned opts);

/* Whether waiter n is due a handoff: an RT thread, or one that has waited
 * handoff_ns since it queued. */
static inline bool hl__node_due(const struct hl__node *n, uint64_t now, uint64_t handoff_ns)
{
	return (n->flags & HL_NODE_F_RT) || now - n->wait_start_ns >= handoff_ns;
}

/* The head n has acquired its lock and leaves the queue (hl__queue_pass_head
 * with HL_PASS_DEFER_WAKE).  A new head that is parked is returned, for the
 * caller to record in its lock word so that its release wakes it; but one
 * for which the lock's wake_now(d, arg) says so (one that is due already,
 * say, and must be awake to claim its handoff) is signalled HL_SIG_HEAD at
 * once instead (passed over if it gave up), and NULL returned. */
HL_HIDDEN struct hl__node *hl__queue_head_acquired(_Atomic uint32_t *tail, struct hl__node *n,
						 unsigned opts,
						 bool (*wake_now)(const struct hl__node *d, void *arg),
						 void *arg);

/* What hl__queue_extract does with a waiter behind the head. */
enum {
	HL_EXTRACT_SKIP,        /* leave it in the queue, look further */
	HL_EXTRACT_TAKE,        /* take it out */
	HL_EXTRACT_STOP,        /* leave it and everything behind it */
};

/* Head n (the caller holds headship) takes out of the queue, in order, the
 * waiters behind it that classify() says to take, until one it says to stop
 * at, the last node, or max taken.  The last node stays (its next field is
 * the enqueuers' to write) unless the caller passes the queue's tail word:
 * then a last node classify() takes is taken too, by a CAS of the tail that
 * makes its predecessor the last node (an enqueuer that comes meanwhile
 * makes it an interior node, taken as any other), and a link that an
 * enqueuer has yet to write (it swapped the tail past that node) is waited
 * for, so that nobody behind is missed.  Abandoned waiters met on
 * the way are unlinked and recycled (an abandoned last node stays).  The
 * waiters taken are not signalled: they are returned as a list linked
 * through their next fields, from *first (0-terminated), and now belong to
 * the caller, who must signal each of them (or recycle it if the signal is
 * refused).  Returns how many were taken. */
HL_HIDDEN uint32_t hl__queue_extract(struct hl__node *n, int (*classify)(const struct hl__node *w,
									void *arg),
				    void *arg, uint32_t max, uint32_t *first,
				    _Atomic uint32_t *tail);
/* Diagnostics for a lock's describe(): writes the waiters from node index
 * head to tail (at most 16), then the secondary queue head carries, as
 * " tid@node:state" items (R before a reader's TID), into buf (len >= 64).
 * Racy by nature; never blocks.  Returns the length written. */
HL_HIDDEN size_t hl__queue_describe(char *buf, size_t len, uint32_t head,
				   const struct hl__node *tail);

/* Whether a queue of policy p (hl_queue_policy_t) orders by node now:
 * HL_QUEUE_DEFAULT resolves through HOTLOCK_QUEUE and the topology. */
HL_HIDDEN bool hl__queue_policy_is_cna(uint32_t policy);

/* For white-box tests: every hl__queue_pass_head that makes a new head
 * reports it here, from the passing thread, while that thread still owns the
 * secondary queue (it may be walked through the nodes' next fields, from
 * sec_head, until sec_tail).  NULL (the default) costs one load per pass. */
struct hl__queue_event {
	uint32_t from_node;     /* the node preferred by the head that left */
	uint32_t to_node;       /* the node of the new head */
	struct hl__node *head;  /* the new head */
	uint32_t sec_head, sec_tail;    /* secondary queue handed to it */
	bool cna;               /* the pass ordered by node */
	bool searched;          /* it looked for a waiter on from_node */
	bool flushed;           /* it put the secondary queue back in front */
	uint32_t moved;         /* waiters it moved to the secondary queue */
};
HL_HIDDEN extern void (*_Atomic hl__queue_observer)(const struct hl__queue_event *ev);
/* For white-box tests of hl_rwlock (rwlock.c, step 5): the parked
 * successor that a thread leaving the queue is about to record as head. */
HL_HIDDEN extern void (*_Atomic hl__rwlock_recording_observer)(const struct hl__node *d);

#endif

/* The waiter queue: an MCS queue of waiter nodes (wait.h).
 *
 * A lock keeps a 32-bit tail word; the queue is the chain of nodes linked by
 * their `next` fields from the head to the tail.  The tail word holds the
 * last node's index in its low 24 bits and the fork generation (thread.h) in
 * its high 8 bits: after fork() a tail of an older generation names a node of
 * a thread that no longer exists, and is treated as an empty queue.
 *
 *   tail: [ gen:8 | index:24 ]   0 = empty
 *
 *   head --next--> n2 --next--> n3 ... --next--> tail node
 *
 * The queue decides order only; the lock decides what headship means (for
 * hl_mutex: watching the lock word).  The head leaves the queue when it takes
 * the lock (hl_queue_pass_head), so the owner of a lock holds no node.
 * Policies that reorder the queue (CNA) choose the successor in
 * hl_queue_pass_head; everything else stays as it is.
 */
#ifndef HOTLOCK_QUEUE_H
#define HOTLOCK_QUEUE_H

#include <stdbool.h>
#include <stdint.h>

#include "thread.h"
#include "wait.h"

#define HL_QUEUE_INDEX_MASK ((1u << HL_NODE_INDEX_BITS) - 1)

/* The node a tail word names, or NULL (empty, or left by a fork parent). */
static inline struct hl_node *hl_queue_node(uint32_t tail)
{
	if (!tail || tail >> HL_NODE_INDEX_BITS != hl_fork_gen())
		return NULL;
	return hl_node_at(tail & HL_QUEUE_INDEX_MASK);
}

/* Appends n (armed, its fields set).  Returns n's predecessor, or NULL if n
 * is now the head. */
HL_HIDDEN struct hl_node *hl_queue_enqueue(_Atomic uint32_t *tail, struct hl_node *n);

/* Takes head n out of the queue and makes its successor the head: signals it
 * HL_SIG_HEAD, skipping successors that were abandoned (they are recycled,
 * as is n itself if it was abandoned).  With may_defer, a successor that is
 * parked is not woken but returned: the caller must arrange for it to be
 * signalled later (the mutex does so through its lock word).  Returns NULL
 * otherwise. */
HL_HIDDEN struct hl_node *hl_queue_pass_head(_Atomic uint32_t *tail, struct hl_node *n,
					     bool may_defer);

#endif

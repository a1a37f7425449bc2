/* The MCS waiter queue (see queue.h).
 *
 * Enqueue: (1) the node's next is cleared; (2) xchg(tail, node) takes the
 * place at the end; (3) the predecessor's next is set to the node.  Between
 * (2) and (3) the predecessor cannot reach its successor: a head that wants
 * to leave then waits for (3), spinning briefly and then yielding (the
 * enqueuer may have been preempted between two instructions).
 *
 * Leaving (head only): if tail still names the head, CAS it to 0 and the
 * queue is empty; otherwise wait for next and signal it.
 */

#include "queue.h"

static inline uint32_t tail_of(const struct hl_node *n)
{
	return n->index | hl_fork_gen() << HL_NODE_INDEX_BITS;
}

struct hl_node *hl_queue_enqueue(_Atomic uint32_t *tail, struct hl_node *n)
{
	/* Relaxed: ordered before the xchg's release. */
	hl_store(&n->next, 0, HL_RELAXED);
	/* Release: n's fields (tid, flags, wait start, state) are visible to
	 * whoever reaches n through the tail.  Acquire: pairs with the
	 * predecessor's own xchg, so its clearing of its next field (step 1)
	 * happens before our link below and cannot overwrite it. */
	uint32_t old = hl_xchg(tail, tail_of(n), HL_ACQ_REL);
	struct hl_node *pred = hl_queue_node(old);
	if (pred)
		/* Release: pairs with the acquire load in wait_next; n's fields
		 * are visible to the head that hands over to n. */
		hl_store(&pred->next, n->index, HL_RELEASE);
	return pred;
}

/* n's successor, waiting for its link if it is being enqueued; NULL if n is
 * the tail, in which case the queue is now empty. */
static struct hl_node *dequeue(_Atomic uint32_t *tail, struct hl_node *n)
{
	uint32_t me = tail_of(n);
	/* Relaxed: emptying the queue publishes nothing; the next enqueuer
	 * finds 0 and becomes head on its own. */
	if (hl_load(tail, HL_RELAXED) == me && hl_cas(tail, &me, 0, HL_RELAXED))
		return NULL;
	uint32_t next;
	unsigned spins = 0;
	/* Acquire: pairs with the enqueuer's release store of the link. */
	while (!(next = hl_load(&n->next, HL_ACQUIRE)))
		hl_wait_for_peer(&spins);
	return hl_node_at(next);
}

struct hl_node *hl_queue_pass_head(_Atomic uint32_t *tail, struct hl_node *n, bool may_defer)
{
	for (;;) {
		struct hl_node *next = dequeue(tail, n);
		/* Relaxed: ABANDONED was written by n's owner before n was
		 * reached here through acquire loads (signal failure). */
		if (hl_load(&n->state, HL_RELAXED) == HL_NODE_ABANDONED)
			hl_node_recycle(n);
		if (!next)
			return NULL;
		/* Relaxed: a hint; if next parks or gives up meanwhile, the
		 * signal or the caller's later signal sees it. */
		if (may_defer && hl_load(&next->state, HL_RELAXED) == HL_NODE_PARKED)
			return next;
		if (hl_node_signal(next, HL_SIG_HEAD))
			return NULL;
		n = next;       /* abandoned: it leaves the queue too */
	}
}

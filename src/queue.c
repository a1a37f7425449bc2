/* SPDX-License-Identifier: MIT */
/* The MCS waiter queue (see queue.h), in FIFO or CNA order.
 *
 * Enqueue: (1) the node's next is cleared; (2) xchg(tail, node) takes the
 * place at the end; (3) the predecessor's next is set to the node.  Between
 * (2) and (3) the predecessor cannot reach its successor: a head that wants
 * to leave then waits for (3), spinning briefly and then yielding (the
 * enqueuer may have been preempted between two instructions).  A chain of
 * nodes already linked to each other (hl_cond's broadcast) is enqueued the
 * same way, with its last node in (1) and (2) and its first in (3).
 *
 * Leaving (head only, hl__queue_pass_head): if tail still names the head, CAS
 * it to 0 and the queue is empty; otherwise wait for next and make it the
 * head (signal HL_SIG_HEAD).  Abandoned nodes met on the way are unlinked
 * and recycled: their owners have left and nobody else refers to them.
 *
 * CNA order (compact NUMA-aware, seed 001; docs/cna.md).  Only the head that
 * leaves reorders, so the reordering needs no atomics beyond those of FIFO
 * leaving: the interior of the chain (every link but the one the last
 * enqueuer is about to write) belongs to the head, and so does a second,
 * private queue of waiters set aside because they are on other nodes:
 *
 *   primary:    H --> a1 --> b1 --> a2 --> b2 --> ... --> tail
 *   secondary:  (empty)
 *      H (node A) leaves: a1 is on A, it becomes the head as in FIFO.
 *   primary:    a1 --> b1 --> a2 --> b2 --> ... --> tail
 *      a1 leaves: b1 is on B, a2 after it is on A: b1 moves to the
 *      secondary queue and a2 becomes the head.
 *   primary:    a2 --> b2 --> ... --> tail
 *   secondary:  b1                   (carried by a2: a2.sec_head/sec_tail)
 *
 * The secondary queue belongs to the head: the leaving head writes it into
 * the new head's node before it signals it (the signal's release publishes
 * it), and a thread passing headship on for an abandoned head reads it from
 * that node.  So it is carried through every handover, never rebuilt.
 *
 * Passing from head n, which prefers node P (n.pref_node, step 4):
 *  1. Flush: if the secondary queue is not empty and its first waiter has
 *     waited (since its lock call) at least the CNA threshold, it goes back
 *     in front: sec_tail.next = n.next, and sec_head is the new head, so the
 *     preference moves to its node.  If n was the last node of the primary
 *     queue and the secondary one is not empty, the secondary queue becomes
 *     the queue: CAS(tail, n -> sec_tail), with sec_tail.next cleared
 *     before (the release CAS orders that store before the link an enqueuer
 *     writes once its xchg returns sec_tail).  Nobody is lost when the
 *     primary queue empties.
 *  2. Otherwise search, unless SRO skips it: from n's successor on, find
 *     the first waiter on P, or a
 *     prioritized one (RT or hl_thread_set_prioritized).  If there is one,
 *     the waiters before it move to the end of the secondary queue in
 *     order, and it becomes the head.  If there is none, nobody moves: a
 *     non-empty secondary queue goes back in front (its first waiter, the
 *     one set aside longest, becomes the head), else the successor becomes
 *     the head, as in FIFO order.  Only waiters with a successor are ever
 *     moved, so the last node's next field stays the enqueuers' to write.
 *  3. SRO (shuffle reduction): while the secondary queue is empty the search
 *     runs with probability 1/128 only (a per-thread xorshift), so a lock
 *     whose waiters are all on one node pays one branch for CNA.  Once
 *     something was set aside, every pass searches.
 *  4. The new head prefers its own node at its pass, except a prioritized
 *     waiter found by the search on another node: it keeps P, so that a
 *     prioritized waiter does not move the lock's preference.
 * Parked waiters are moved between the queues without being woken: a waiter
 * is signalled once, when it is made the head.
 *
 * Bounded waiting: a waiter set aside is back in front at the first pass
 * after the first waiter of the secondary queue has waited the threshold,
 * or at the first pass that finds nobody on P.  Each pass still hands the
 * lock on; the bound is worked out in docs/cna.md.
 */

#include <stdio.h>

#include <hotlock/mutex.h> /* hl_queue_policy_t */

#include "config.h"
#include "queue.h"
#include "topology.h"

void (*_Atomic hl__queue_observer)(const struct hl__queue_event *ev);

/* SRO's random numbers: xorshift32, seeded from the TID at first use (from
 * the schedule's seed in the controlled-schedule build). */
static __thread uint32_t sro_state __attribute__((tls_model("initial-exec")));

void hl__queue_node_init(struct hl__node *n, struct hl__thread *self, uint64_t now_ns)
{
	uint32_t flags = 0;
	if (hl__thread_is_rt(self))
		flags |= HL_NODE_F_RT;
	if (hl__thread_prio)
		flags |= HL_NODE_F_PRIO;
	n->flags = flags;
	n->wait_start_ns = now_ns;
	n->topo_node = hl__topo_node();
	/* Relaxed: published by the enqueue's release. */
	hl__store(&n->pref_node, n->topo_node, HL_RELAXED);
	hl__store(&n->sec_head, 0, HL_RELAXED);
	hl__store(&n->sec_tail, 0, HL_RELAXED);
}

bool hl__queue_policy_is_cna(uint32_t policy)
{
	if (policy == HL_QUEUE_DEFAULT)
		policy = hl__load(&hl__queue_env, HL_RELAXED);
	if (policy == HL_QUEUE_DEFAULT)
		return hl__topo_nodes() > 1;
	return policy == HL_QUEUE_CNA;
}

void hl__queue_node_moved(struct hl__node *n, uint64_t now_ns)
{
	n->wait_start_ns = now_ns;
	/* Relaxed: published by the enqueue's release. */
	hl__store(&n->pref_node, n->topo_node, HL_RELAXED);
	hl__store(&n->sec_head, 0, HL_RELAXED);
	hl__store(&n->sec_tail, 0, HL_RELAXED);
}

struct hl__node *hl__queue_enqueue_chain(_Atomic uint32_t *tail, struct hl__node *first,
				       struct hl__node *last)
{
	/* Relaxed: ordered before the xchg's release. */
	hl__store(&last->next, 0, HL_RELAXED);
	/* Release: the chain's fields (tid, flags, node, wait start, state,
	 * the links inside it) are visible to whoever reaches it through the
	 * tail.  Acquire: pairs with the predecessor's own xchg, so its
	 * clearing of its next field (step 1) happens before our link below
	 * and cannot overwrite it; and with the CAS that made a secondary
	 * queue the queue (pass step 1), whose clearing of sec_tail's next
	 * happens before our link. */
	uint32_t old = hl__xchg(tail, hl__queue_word(last), HL_ACQ_REL);
	struct hl__node *pred = hl__queue_node(old);
	if (pred)
		/* Release: pairs with the acquire loads of the link by the
		 * head that leaves; the chain's fields are visible to it. */
		hl__store(&pred->next, first->index, HL_RELEASE);
	return pred;
}

struct hl__node *hl__queue_enqueue(_Atomic uint32_t *tail, struct hl__node *n)
{
	return hl__queue_enqueue_chain(tail, n, n);
}

/* The secondary queue, as carried from head to head (node indices). */
struct secq {
	uint32_t head, tail;
};

static inline bool sro_search(void)
{
	uint32_t x = sro_state;
	if (hl__unlikely(!x)) {
#ifndef HOTLOCK_SCHED
		x = hl__tid() * 2654435761u | 1;
#else
		x = hl__sched_thread_seed() | 1;        /* TIDs differ at each run */
#endif
	}
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	sro_state = x;
	return x >> 25 == 0;            /* 7 bits of 0: 1 in 128 */
}

static struct hl__node *splice_front(struct hl__node *next, struct secq *sec);

/* n's successor, waiting for its link if it is being enqueued; NULL when n
 * was the last node and the secondary queue is empty (the queue is empty
 * now).  With flush, or when n was the last node, a non-empty secondary
 * queue goes in front (step 1): its first node is returned, *sec is emptied
 * and *flushed set. */
static struct hl__node *leave(_Atomic uint32_t *tail, struct hl__node *n, struct secq *sec,
			     bool flush, bool *flushed)
{
	uint32_t me = hl__queue_word(n);
	/* Relaxed: n is the last node only if nobody enqueued since; the CAS
	 * decides. */
	if (hl__load(tail, HL_RELAXED) == me) {
		if (!sec->head) {
			/* Relaxed: emptying the queue publishes nothing; the
			 * next enqueuer finds 0 and becomes head on its own. */
			if (hl__cas(tail, &me, 0, HL_RELAXED))
				return NULL;
		} else {
			struct hl__node *st = hl__node_at(sec->tail);
			/* Relaxed: ordered by the release CAS below. */
			hl__store(&st->next, 0, HL_RELAXED);
			/* Release: pairs with the acq_rel xchg of the next
			 * enqueuer, which links itself behind sec_tail. */
			if (hl__cas(tail, &me, hl__queue_word(st), HL_RELEASE)) {
				struct hl__node *h = hl__node_at(sec->head);
				*sec = (struct secq){ 0, 0 };
				*flushed = true;
				return h;
			}
		}
	}
	uint32_t next;
	unsigned spins = 0;
	/* Acquire: pairs with the enqueuer's release store of the link. */
	while (!(next = hl__load(&n->next, HL_ACQUIRE)))
		hl__wait_for_peer(&spins);
	if (flush && sec->head) {
		*flushed = true;
		return splice_front(hl__node_at(next), sec);
	}
	return hl__node_at(next);
}

static inline bool prioritized(const struct hl__node *n)
{
	return n->flags & (HL_NODE_F_RT | HL_NODE_F_PRIO);
}

/* Step 2: from cur on, the first waiter on node pref or prioritized; NULL if
 * there is none. */
static struct hl__node *find_preferred(struct hl__node *cur, uint32_t pref)
{
	for (;;) {
		if (cur->topo_node == pref || prioritized(cur))
			return cur;
		/* Acquire: pairs with the enqueuer's release store of the
		 * link; the successor's fields are visible. */
		uint32_t nx = hl__load(&cur->next, HL_ACQUIRE);
		if (!nx)
			return NULL;
		cur = hl__node_at(nx);
	}
}

/* Step 2: the waiters from cur up to (not including) found go to the end of
 * the secondary queue; abandoned ones among them are unlinked and
 * recycled. */
static void set_aside(struct hl__node *cur, const struct hl__node *found, struct secq *sec,
		      uint32_t *moved)
{
	while (cur != found) {
		/* Relaxed: read with acquire by find_preferred already, and
		 * only the head changes a link that has been written. */
		struct hl__node *nx = hl__node_at(hl__load(&cur->next, HL_RELAXED));
		/* Relaxed: ABANDONED is final, and its owner no longer
		 * touches the node. */
		if (hl__load(&cur->state, HL_RELAXED) == HL_NODE_ABANDONED) {
			hl__node_recycle(cur);
		} else {
			/* Relaxed: the secondary queue is private to the
			 * heads; see the signals' chain in leave(). */
			if (sec->tail)
				hl__store(&hl__node_at(sec->tail)->next, cur->index, HL_RELAXED);
			else
				sec->head = cur->index;
			sec->tail = cur->index;
			++*moved;
		}
		cur = nx;
	}
}

/* Step 2 without a waiter on the preferred node: the secondary queue goes
 * in front of next (n's successor); its first waiter is returned. */
static struct hl__node *splice_front(struct hl__node *next, struct secq *sec)
{
	/* Relaxed: as in leave(). */
	hl__store(&hl__node_at(sec->tail)->next, next->index, HL_RELAXED);
	struct hl__node *h = hl__node_at(sec->head);
	*sec = (struct secq){ 0, 0 };
	return h;
}

struct hl__node *hl__queue_head_acquired(_Atomic uint32_t *tail, struct hl__node *n, unsigned opts,
				       bool (*wake_now)(const struct hl__node *d, void *arg),
				       void *arg)
{
	struct hl__node *d = hl__queue_pass_head(tail, n, opts | HL_PASS_DEFER_WAKE);
	if (!d)
		return NULL;
	if (wake_now(d, arg)) {
		if (!hl__node_signal(d, HL_SIG_HEAD))
			hl__queue_pass_head(tail, d, opts);     /* it gave up */
		return NULL;
	}
	return d;
}

/* Takes w, the last node, out of the queue behind pred (extract's take_last
 * case): pred becomes the last node.  Nobody else writes pred->next while
 * the tail names w (an enqueuer links only the node it swapped out of the
 * tail), so the link is cleared first; the CAS of the tail then makes pred
 * the node the next enqueuer links to.  Returns false, with the link put
 * back, if an enqueuer came after w meanwhile (w is not the last node). */
static bool take_last(_Atomic uint32_t *tail, struct hl__node *pred, struct hl__node *w)
{
	/* Relaxed: published by the release of the CAS below to the next
	 * enqueuer, whose exchange of the tail reads it. */
	hl__store(&pred->next, 0, HL_RELAXED);
	uint32_t expect = hl__queue_word(w);
	/* Release: pred's cleared link happens before the link the next
	 * enqueuer writes there.  Acquire on failure: nothing, we retry
	 * through w's link (acquire). */
	if (hl__cas(tail, &expect, hl__queue_word(pred), HL_ACQ_REL))
		return true;
	/* Relaxed: as the clearing store; the link is the head's again. */
	hl__store(&pred->next, w->index, HL_RELAXED);
	return false;
}

/* The link out of node p: 0 if p is the last node; with the queue's tail
 * word, a link still being written (an enqueuer has swapped the tail past
 * p and is about to store it) is waited for, so that no node behind p is
 * missed.  Acquire: pairs with the enqueuer's release store of the link;
 * the waiter's fields are visible. */
static uint32_t link_out(struct hl__node *p, _Atomic uint32_t *tail)
{
	uint32_t idx = hl__load(&p->next, HL_ACQUIRE);
	/* Relaxed: the tail names p or a node enqueued after it; only the
	 * link, read with acquire, publishes anything. */
	if (idx || !tail || hl__load(tail, HL_RELAXED) == hl__queue_word(p))
		return idx;
	unsigned spins = 0;
	while (!(idx = hl__load(&p->next, HL_ACQUIRE)))
		hl__wait_for_peer(&spins);
	return idx;
}

uint32_t hl__queue_extract(struct hl__node *n, int (*classify)(const struct hl__node *w, void *arg),
			  void *arg, uint32_t max, uint32_t *first, _Atomic uint32_t *tail)
{
	uint32_t taken = 0, last = 0;
	struct hl__node *pred = n;
	*first = 0;
	while (taken < max) {
		uint32_t idx = link_out(pred, tail);
		if (!idx)
			break;
		struct hl__node *w = hl__node_at(idx);
		uint32_t nx = link_out(w, tail);
		/* Relaxed: ABANDONED is final (see search's set_aside). */
		bool gone = hl__load(&w->state, HL_RELAXED) == HL_NODE_ABANDONED;
		if (!nx) {
			/* The last node: it stays, unless the caller passed
			 * the tail and wants it (an abandoned one stays too:
			 * whoever passes headship to it recycles it). */
			if (!tail || gone || classify(w, arg) != HL_EXTRACT_TAKE)
				break;
			if (!take_last(tail, pred, w)) {
				/* Not the last any more: its successor is
				 * linking itself; look at w again then. */
				unsigned spins = 0;
				while (!hl__load(&w->next, HL_ACQUIRE))
					hl__wait_for_peer(&spins);
				continue;
			}
		} else {
			int what = gone ? HL_EXTRACT_TAKE : classify(w, arg);
			if (what == HL_EXTRACT_STOP)
				break;
			if (what == HL_EXTRACT_SKIP) {
				pred = w;
				continue;
			}
			/* Relaxed: the interior of the chain is the head's;
			 * the successors the head reaches later were
			 * published to it by acquire loads already. */
			hl__store(&pred->next, nx, HL_RELAXED);
			if (gone) {
				hl__node_recycle(w);
				continue;
			}
		}
		/* Relaxed: w is the caller's now; its signal publishes. */
		hl__store(&w->next, 0, HL_RELAXED);
		if (last)
			hl__store(&hl__node_at(last)->next, w->index, HL_RELAXED);
		else
			*first = w->index;
		last = w->index;
		taken++;
		if (!nx)
			break;
	}
	return taken;
}

struct hl__node *hl__queue_pass_head(_Atomic uint32_t *tail, struct hl__node *n, unsigned opts)
{
	const bool cna = opts & HL_PASS_CNA;
	/* Relaxed: written by whoever made n the head, before the signal (or
	 * the lock-word release, HL_PASS_DEFER_WAKE) through which this thread
	 * came to pass headship on from n. */
	struct secq sec = { hl__load(&n->sec_head, HL_RELAXED),
			    hl__load(&n->sec_tail, HL_RELAXED) };
	const uint32_t pref = hl__load(&n->pref_node, HL_RELAXED);    /* as sec */
	for (;;) {
		struct hl__queue_event ev = { .from_node = pref, .cna = cna };
		/* Without CNA (the policy changed while waiters were set
		 * aside) the secondary queue goes back at once. */
		bool flush = sec.head &&
			(!cna || hl__now_ns() - hl__node_at(sec.head)->wait_start_ns >=
				 hl__cna_threshold_ns());
		struct hl__node *next = leave(tail, n, &sec, flush, &ev.flushed);
		/* Relaxed: ABANDONED was written by n's owner before n was
		 * reached here through acquire loads (a refused signal), or
		 * by this thread's own caller (timeout of the head). */
		if (hl__load(&n->state, HL_RELAXED) == HL_NODE_ABANDONED)
			hl__node_recycle(n);
		if (!next)
			return NULL;
		uint32_t next_pref = next->topo_node;
		if (cna && !ev.flushed && (sec.head || sro_search())) {
			ev.searched = true;
			struct hl__node *found = find_preferred(next, pref);
			if (found) {
				set_aside(next, found, &sec, &ev.moved);
				next = found;
				next_pref = pref;       /* its node, or kept (step 4) */
			} else if (sec.head) {
				next = splice_front(next, &sec);
				next_pref = next->topo_node;
				ev.flushed = true;
			}
		}
		/* Relaxed: published by the signal below, or by the caller's
		 * release of the lock word (HL_PASS_DEFER_WAKE). */
		hl__store(&next->pref_node, next_pref, HL_RELAXED);
		hl__store(&next->sec_head, sec.head, HL_RELAXED);
		hl__store(&next->sec_tail, sec.tail, HL_RELAXED);
		/* Acquire: pairs with the test's release store of its
		 * observer, whose state is set up before. */
		void (*observe)(const struct hl__queue_event *) =
			hl__load(&hl__queue_observer, HL_ACQUIRE);
		if (hl__unlikely(observe != NULL)) {
			ev.to_node = next->topo_node;
			ev.head = next;
			ev.sec_head = sec.head;
			ev.sec_tail = sec.tail;
			observe(&ev);
		}
		/* Relaxed: a hint; if next parks or gives up meanwhile, the
		 * signal or the caller's later signal sees it. */
		if ((opts & HL_PASS_DEFER_WAKE) && hl__node_parked(hl__load(&next->state, HL_RELAXED)))
			return next;
		if (hl__node_signal(next, HL_SIG_HEAD))
			return NULL;
		n = next;       /* abandoned: it leaves the queue too */
	}
}

static const char *state_name(uint32_t s)
{
	switch (s) {
	case HL_NODE_FREE: return "free";
	case HL_NODE_WAITING: return "spin";
	case HL_NODE_PARKED: return "park";
	case HL_NODE_ABANDONED: return "gone";
	case HL_NODE_CLAIMED: return "claimed";
	case HL_NODE_WAITING_KEPT: return "kept-spin";
	case HL_NODE_PARKED_KEPT: return "kept-park";
	case HL_NODE_PARKED_INTR: return "park-intr";
	case HL_SIG_HEAD: return "head";
	case HL_SIG_RELEASED: return "released";
	case HL_SIG_HANDED: return "handed";
	case HL_SIG_GROUP: return "group";
	case HL_SIG_RETRY: return "retry";
	default: return "?";
	}
}

/* One waiter, " tid@node:state", R before the TID for a reader. */
__attribute__((no_sanitize("thread")))
static size_t describe_node(char *buf, size_t len, const char *sep, const struct hl__node *n)
{
	/* Relaxed: a racy snapshot (see hl__queue_describe). */
	int w = snprintf(buf, len, "%s%s%u@%u:%s", sep,
			 (n->flags & HL_NODE_F_READER) ? "R" : "", n->tid, n->topo_node,
			 state_name(hl__load(&n->state, HL_RELAXED)));
	return w < 0 ? 0 : (size_t)w < len ? (size_t)w : len - 1;
}

/* Reads node fields other threads write: racy on purpose, for a watchdog
 * that must print something whatever state the lock is in. */
__attribute__((no_sanitize("thread")))
size_t hl__queue_describe(char *buf, size_t len, uint32_t head, const struct hl__node *tail)
{
	size_t used = 0;
	buf[0] = 0;
	if (!head || !tail || len < 64)
		return 0;
	const struct hl__node *h = hl__node_at(head), *n = h;
	for (int k = 0; n && k < 16 && used < len - 64; k++) {
		used += describe_node(buf + used, len - used, k ? " -> " : " ", n);
		if (n == tail)
			break;
		/* Relaxed: as above. */
		uint32_t nx = hl__load(&n->next, HL_RELAXED);
		n = nx ? hl__node_at(nx) : NULL;
	}
	uint32_t sh = hl__load(&h->sec_head, HL_RELAXED), st = hl__load(&h->sec_tail, HL_RELAXED);
	for (int k = 0; sh && k < 16 && used < len - 64; k++) {
		n = hl__node_at(sh);
		used += describe_node(buf + used, len - used, k ? " -> " : " secondary:", n);
		sh = sh == st ? 0 : hl__load(&n->next, HL_RELAXED);
	}
	return used;
}

/* SPDX-License-Identifier: MIT */
/* White-box test of the waiter queue's extraction (src/queue.c,
 * hl__queue_extract): a link that an enqueuer has yet to write is waited
 * for, not taken for the end of the queue (issue 37, fault 5: a reader of
 * a reader-preferring rwlock that the head's group grant did not reach
 * slept while the lock was read-held).
 *
 * The queue is built by hand from this thread's nodes: head H, a writer X
 * linked behind it, then P, which has swapped the tail past X but not yet
 * written X's link (an enqueuer preempted between its two stores), and a
 * reader R linked behind P.  A second thread extracts every reader behind
 * H (skipping writers, as the reader-preferring grant does) while the
 * main thread writes X's link 50 ms later.  Asserted: the extraction
 * returns after the link is written, with P and R taken, in order (before
 * the fix it returned at once with nothing taken: it stopped at X, whose
 * link read 0); and with the tail at the last node, an extraction returns
 * at once. */
#include "common.h"

#include <hotlock/hotlock.h>

#include "queue.h"
#include "thread.h"
#include "wait.h"

#include <pthread.h>
#include <stdatomic.h>

static int take_readers(const struct hl__node *w, void *arg)
{
	(void)arg;
	return (w->flags & HL_NODE_F_READER) ? HL_EXTRACT_TAKE : HL_EXTRACT_SKIP;
}

struct extraction {
	struct hl__node *head;
	_Atomic uint32_t *tail;
	uint32_t taken, first;
	_Atomic bool done;
};

static void *extract_main(void *p)
{
	struct extraction *e = p;
	e->taken = hl__queue_extract(e->head, take_readers, NULL, HL_MAX_NODES, &e->first, e->tail);
	atomic_store(&e->done, true);
	return NULL;
}

static struct hl__node *node(struct hl__thread *self, bool reader)
{
	struct hl__node *n = hl__thread_node_get(self);
	REQUIRE(n, "no node left");
	hl__queue_node_init(n, self, (uint64_t)now_ns());
	n->flags = reader ? HL_NODE_F_READER : 0;
	hl__node_arm(n);
	return n;
}

int main(void)
{
	struct hl__thread *self = hl__self();
	REQUIRE(self, "no thread record");
	static _Atomic uint32_t tail;
	struct hl__node *h = node(self, false), *x = node(self, false);
	struct hl__node *p = node(self, true), *r = node(self, true);
	CHECK(hl__queue_enqueue(&tail, h) == NULL, "H is not the head");
	CHECK(hl__queue_enqueue(&tail, x) == h, "X is not behind H");
	/* P's enqueue, first store only: the tail names it, X's link does
	 * not yet. */
	atomic_store(&p->next, 0);
	uint32_t before = atomic_exchange(&tail, hl__queue_word(p));
	CHECK(before == hl__queue_word(x), "the tail named %u, not X", before);
	CHECK(hl__queue_enqueue(&tail, r) == p, "R is not behind P");

	struct extraction e = { h, &tail, 0, 0, false };
	pthread_t t;
	REQUIRE(pthread_create(&t, NULL, extract_main, &e) == 0, "pthread_create");
	sleep_ns(50 * NSEC_PER_MSEC);
	bool early = atomic_load(&e.done);
	atomic_store(&x->next, p->index);       /* P's second store */
	pthread_join(t, NULL);
	printf("extraction behind a link still being written: %u taken%s\n", e.taken,
	       early ? ", returned before the link was written" : "");
	CHECK(!early && e.taken == 2 && e.first == p->index && atomic_load(&p->next) == r->index,
	      "the extraction took %u waiters (first %u) %s the link was written; expected P "
	      "(%u) and R (%u), after it", e.taken, e.first, early ? "before" : "after",
	      p->index, r->index);
	CHECK(atomic_load(&h->next) == x->index && atomic_load(&x->next) == 0 &&
	      atomic_load(&tail) == hl__queue_word(x),
	      "after the extraction the queue is not H -> X with X last");

	/* X is the last node now, the tail names it: nothing to wait for. */
	struct extraction e2 = { h, &tail, 0, 0, false };
	extract_main(&e2);
	CHECK(e2.taken == 0, "an extraction from H -> X (a writer) took %u", e2.taken);
	printf("extraction at the end of the queue: returned at once\n");
	return test_finish("test_queue");
}

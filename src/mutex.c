/* SPDX-License-Identifier: MIT */
/* hl_mutex_t: the throughput-optimized (TP) futex protocol of seed 000 in
 * user space, on the waiting core (wait.h) and the MCS waiter queue
 * (queue.h).
 *
 * State (16 bytes, all-zero = unlocked):
 *
 *   word  (u32)   the TP word (tpword.h):
 *                 bits  0-21  owner TID, 0 when free (Linux TIDs < 2^22)
 *                 bits 22-29  GEN: the fork generation (thread.h) in which
 *                             the flags were set; flags of another generation
 *                             were set by threads of a fork parent and mean
 *                             nothing (treated as absent)
 *                 bit  30     WAKE: the queue head waits on its node for the
 *                             unlocker's signal
 *                 bit  31     HANDOFF: the head is due the lock; the unlocker
 *                             must hand it over (no stealing)
 *   tail  (u32)   last queued waiter node (queue.h), 0 when none
 *   head  (u32)   the node that set WAKE/HANDOFF (valid while either is set)
 *   queue (u32)   bits  0-7   the queue order, hl_queue_policy_t (0: FIFO
 *                             or CNA as the topology and HOTLOCK_QUEUE say,
 *                             decided at each handover)
 *                 bits  8-23  with CNA, 1 + the node of the last slow-path
 *                             owner: a hint for contenders (step 1b)
 *                 bits 24-26  the spin record (wait.h): what spinning
 *                             achieved on this lock lately (steps 1b, 3)
 *                 bit  27     SATURATED: the head sleeps passive (step 4b)
 *
 *   word value              meaning
 *   ----------------------  -------------------------------------------------
 *   0                       free (waiters may be queued: the head is active)
 *   tid                     owned; no waiter needs the unlocker
 *   tid|WAKE                owned; the head sleeps until the unlock signals it
 *   tid|WAKE|HANDOFF        owned; the unlock must hand the lock to the head
 *   (the flags always carry GEN; flags of another GEN count as absent)
 *
 * The flags are only ever set while the word has an owner, and the unlock
 * clears them, so a free word is exactly 0 and the only way to take a free
 * lock is CAS(0 -> tid).
 *
 * Lock:
 *  1. Fast path: CAS(word, 0 -> tid).  Newcomers take a free lock even when
 *     waiters are queued: lock stealing, the TP protocol's throughput.
 *  1b. Optimistic spinning: with a spinner slot (wait.h), and unless the
 *     lock is SATURATED, spin on the word for the spin budget, taking it
 *     with CAS(0 -> tid) when free.  Nobody can take it while a handoff is
 *     due (the word is never 0 then).  A spinner first leaves a free word
 *     to the thread that freed it for a grace of about half a microsecond
 *     (OWNER_GRACE_POLLS); taken back within it, the lock is saturated by
 *     running threads, and the spinner stops and queues (step 4b).  With
 *     CNA, a contender on another node than the holder's gives a free word
 *     a grace of a microsecond instead, and so does a queue head until it
 *     has waited the CNA threshold (gives_way_to_holder).  RT and
 *     prioritized threads give no grace.
 *  2. Otherwise take this thread's node, stamp it (TID, start time, RT flag)
 *     and enqueue it.  With a predecessor, park on the node until made head,
 *     or handed the lock if we were made head while parked (step 5).  Only
 *     the head spins: a waiter further back cannot get the lock before the
 *     head does, and its CPU is better used by a thread with work to do.
 *  3. As head, spin on the word (bounded by the spin budget, with a spinner
 *     slot), taking it with CAS(0 -> tid) whenever it is free.
 *  4. When the budget is spent, or at once when due a handoff, publish the
 *     node in `head`, arm it, and CAS WAKE (and HANDOFF when due) into the
 *     owned word; then wait on the node.  HANDED: we own the lock.
 *     RELEASED: the lock was freed; go back to 3 with a new budget.  Due
 *     (hl__tp_head_due, tpword.h): a SCHED_FIFO/RR thread at once; any other once it has
 *     waited the handoff threshold since step 2 and competed as the head
 *     (steps 3-4, from becoming head or waking up as the recorded head)
 *     for an eighth of it.
 *  4b. Concurrency restriction.  A head that is not due and has lost (the
 *     owner took a free word back within the grace of 1b; or, with no
 *     spinner slot to see that with, woken by RELEASED it found the lock
 *     taken again) does not set WAKE: the running
 *     threads keep the lock busy without it, and an unlock that woke it
 *     would pay a syscall for a thread that loses again.  It sets
 *     SATURATED, so that newcomers queue behind it instead of spinning, and
 *     sleeps passive on its node, recorded nowhere, until a timer: 50 us,
 *     doubling with each loss in a row up to T/16, and never past the
 *     moment it becomes due (sleep_passive).  Then it clears SATURATED
 *     and competes again (step 3), a head that an unlock must wake (step
 *     4) until it loses again.  So it rejoins by time, and is due exactly
 *     when it would have been.
 *  5. Having the lock, leave the queue: the successor becomes head (the next
 *     in FIFO order, or with CNA the next on this thread's node: queue.c;
 *     stealing and handoff work the same on either order).  If it is
 *     parked it is not woken now (that would cost a syscall per acquisition);
 *     instead the new owner records it in `head` and sets WAKE in its own
 *     word (a CAS: see the end of this comment), so that its unlock wakes
 *     the successor, exactly as if the successor had done step 4 itself.  Except when the successor is due
 *     at once (an RT thread): then it is woken now, to set HANDOFF itself
 *     when it runs (a lock handed to a sleeper stays idle for a wake-up).
 *  5b. Waiters moved here by a condvar broadcast (below) are a burst of
 *     lock calls that is certain to come: if the successor is one, then
 *     right after the unlock that ends this hold, nudge the moved waiters
 *     behind it awake (hl__node_nudge), as many as there are spinner slots
 *     (the CPUs the owner and the spinning head leave).  Each then polls
 *     its node, yielding, for up to the spin budget: by the time headship
 *     reaches it, it runs, and the signal that makes it head costs no
 *     syscall and no wake-up latency.  Without it, each moved waiter is
 *     woken by its predecessor's unlock and the handovers wait for one
 *     wake-up after another (docs/cond.md, Broadcast).  The nudge's
 *     futex_wake comes after the unlock, not inside the critical section.
 *
 * Unlock:
 *  1. Fast path: CAS(word, tid -> 0); no syscall.
 *  2. Otherwise the word has WAKE.  Read `head` (valid: its writer set WAKE
 *     with a release CAS after writing it, and cannot leave the queue until
 *     signalled) and claim the head's node, so that it can no longer give
 *     up.  With HANDOFF: write its TID into the word and post HANDED.
 *     Otherwise store 0 and post RELEASED, however long the head has
 *     waited: it races for the free lock when it runs, and sets HANDOFF
 *     itself once due.  A
 *     head that gave up (timed out) refuses the claim; the unlocker then
 *     passes headship on in its place while it still owns the word, and
 *     serves the new head's flags if it set any meanwhile.
 *  3. The store of step 2 (or the CAS of step 1) is the last access to the
 *     mutex: after it another thread may take the lock, release it and free
 *     its memory (docs/design.md invariant 7, glibc bug 13690).  Only the
 *     head's node is touched after it, and nodes are never unmapped.
 *
 * Bounded waiting: a head that has set HANDOFF is served at the next unlock:
 * nobody takes the lock before it.  A head sets it once it has waited the
 * threshold T since it queued and competed as the head for T/8; a head
 * asleep is woken by every unlock, so it competes from the first unlock
 * after it became head, and a passive one (step 4b) by its timer, which
 * never runs past the moment it is due, so it competes then.  Every
 * waiter queued ahead of a thread has waited longer than it, so a
 * waiter's wait is at most T plus, per waiter ahead of it, T/8, a wake-up
 * and a critical section.  The T/8 is what a
 * waiter pays for throughput: measured from the enqueue alone, every head
 * of a long queue is due as it becomes head, and the lock is handed from
 * sleeper to sleeper while running threads could take it (docs/mutex.md,
 * Bounds).  T is the configured threshold, whatever else runs on the
 * machine.
 *
 * Timeouts: a waiter that gives up abandons its node in place (wait.h); the
 * queue skips and recycles it when headship reaches it.
 *
 * Waiters moved here by hl_cond (wait morphing, morph.h): a condvar
 * broadcast appends the nodes of its waiters, asleep and kept (their waits
 * can no longer be given up), on their threads' behalf.  From then on each
 * is a queued waiter like any other (steps 3-5 once signalled, with no
 * deadline).  One that becomes the head at once is left for the
 * broadcaster's unlock to wake if the broadcaster owns the mutex, exactly
 * as step 5 leaves a parked successor; any other broadcaster signals it
 * the head now.  The moved waiters behind it are nudged (step 5b) after
 * the broadcaster's unlock, or at once by a broadcaster that does not own
 * the mutex.
 *
 * A thread that exits holding the mutex leaves it locked (docs/core.md,
 * "Owners"), as glibc does for a normal mutex.
 *
 * The owner holds no node, so any thread can run the unlock (the pthread
 * shim relies on it); hl_mutex_unlock itself checks ownership (EPERM).
 * Such an unlock may come while the owner is still in its lock call, right
 * after the CAS that took the word (a normal mutex used as a binary
 * semaphore, which glibc allows as well): step 5's recording of a parked
 * successor, and a broadcaster's of the first waiter it moved, is a CAS
 * that finds a freed word and then serves the successor itself, as the
 * unlock would have (record_head); WAKE never goes into a word with no
 * owner, where no lock could take it and no unlock release it.  Two
 * unlocks of one hold are undefined (glibc's too) and not guarded.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <hotlock/mutex.h>
#include <hotlock/topology.h>

#include "config.h"
#include "morph.h"
#include "queue.h"
#include "shim_api.h"
#include "thread.h"
#include "topology.h"
#include "tpword.h"
#include "wait.h"

/* The word is the TP word of tpword.h. */
#define OWNER_MASK HL_TP_OWNER_MASK
#define WAKE       HL_TP_WAKE
#define HANDOFF    HL_TP_HANDOFF
#define FLAGS      HL_TP_FLAGS
#define flags_now(due) hl__tp_flags_now(due)
#define has_live_flags(w) hl__tp_live_flags(w)

struct mutex {
	_Atomic uint32_t word;
	_Atomic uint32_t tail;
	_Atomic uint32_t head;
	_Atomic uint32_t queue;         /* policy | holder node (above) */
};

_Static_assert(sizeof(struct mutex) == sizeof(hl_mutex_t), "layout");
_Static_assert(_Alignof(struct mutex) == _Alignof(hl_mutex_t), "layout");
_Static_assert(offsetof(struct mutex, word) == offsetof(hl_mutex_t, word_), "layout");
_Static_assert(offsetof(struct mutex, tail) == offsetof(hl_mutex_t, tail_), "layout");
_Static_assert(offsetof(struct mutex, head) == offsetof(hl_mutex_t, head_), "layout");
_Static_assert(offsetof(struct mutex, queue) == offsetof(hl_mutex_t, queue_), "layout");
_Static_assert(sizeof(hl_mutex_t) <= 16, "hl_mutex_t must fit in 16 bytes");

static inline struct mutex *M(hl_mutex_t *m) { return (struct mutex *)m; }

#define owned_by_me(w, tid) hl__tp_owned_by_me(w, tid)


/* Fallback when this thread has no node (waits nested deeper than HL_NEST,
 * or an exhausted arena): poll the word with exponential back-off.  Correct
 * but unfair; never expected in practice. */
static int lock_poll(struct mutex *m, uint32_t tid, const struct hl__deadline *dl)
{
	long sleep_ns = 1000;
	for (;;) {
		uint32_t w = 0;
		/* Acquire: the critical section starts here. */
		if (hl__cas(&m->word, &w, tid, HL_ACQUIRE))
			return 0;
		if (hl__poll_backoff(dl, &sleep_ns))
			return ETIMEDOUT;
	}
}

/* The queue word: the policy (hl_queue_policy_t) in bits 0-7; with CNA,
 * 1 + the node of the thread that last took the lock on a slow path in bits
 * 8-23 (0: not known), a hint for step 1b; the spin record in bits 24-26.
 * The two hints are changed by a single CAS each, which fails, and leaves
 * the hint as it is, if the word changed meanwhile: either hint is only a
 * hint, and the policy bits are never changed once the mutex is shared. */
#define QUEUE_POLICY      0xffu
#define HOLDER_NODE_SHIFT 8
#define HOLDER_NODE_MASK  0xffffu
#define SPIN_REC_SHIFT    24
#define SATURATED         (1u << 27)
_Static_assert(HL_TOPOLOGY_MAX_NODES < HOLDER_NODE_MASK, "1 + a node fits in bits 8-23");

static inline uint32_t queue_word(struct mutex *m)
{
	/* Relaxed: the policy is set before the mutex is shared
	 * (hl_mutex_set_queue); the holder's node is a hint that publishes
	 * nothing. */
	return hl__load(&m->queue, HL_RELAXED);
}

/* The order of m's next handover: HL_PASS_CNA or 0. */
static inline unsigned queue_opts(uint32_t q)
{
	return hl__queue_policy_is_cna(q & QUEUE_POLICY) ? HL_PASS_CNA : 0;
}

/* A slow path took the lock: with CNA, record the new holder's node.  The
 * fast path does not (an uncontended lock pays nothing); a thread that took
 * a free lock with it leaves the previous holder's node in the hint. */
static void note_holder_node(struct mutex *m)
{
	uint32_t q = queue_word(m);
	if (!(queue_opts(q) & HL_PASS_CNA))
		return;
	uint32_t nq = (q & ~(HOLDER_NODE_MASK << HOLDER_NODE_SHIFT)) |
		      ((hl__topo_node() + 1) & HOLDER_NODE_MASK) << HOLDER_NODE_SHIFT;
	if (nq != q)
		hl__cas(&m->queue, &q, nq, HL_RELAXED); /* relaxed: see queue_word */
}

/* m's spin record (wait.h), for hl__spin_begin.  A CNA mutex keeps none
 * (always 0, spinning pays): there a contender on another node than the
 * holder's gives way by design (gives_way_to_holder), so a lost spin is
 * not evidence that spinning fails, and with the record on, too few queue
 * passes search for tests/cna.c to judge the order by (docs/cna.md,
 * "Contenders on other nodes give way"). */
static inline unsigned spin_rec(struct mutex *m)
{
	uint32_t q = queue_word(m);
	return queue_opts(q) & HL_PASS_CNA ? 0 : hl__spin_rec_at(q, SPIN_REC_SHIFT);
}

/* Ends a spin phase on m that ended as `outcome`: the slot goes back and
 * the record learns (wait.h, hl__spin_rec_learn). */
static void spin_done(struct mutex *m, int outcome)
{
	hl__spin_end(outcome);
	uint32_t q = queue_word(m);
	if (!(queue_opts(q) & HL_PASS_CNA))
		hl__spin_rec_learn(&m->queue, q, SPIN_REC_SHIFT, outcome);
}

/* hl__queue_pass_head in m's order. */
static inline struct hl__node *pass_head(struct mutex *m, struct hl__node *n, unsigned opts)
{
	return hl__queue_pass_head(&m->tail, n, queue_opts(queue_word(m)) | opts);
}

/* Whether m's head sleeps passive (step 4b): the running threads keep the
 * lock busy without it, and a newcomer that spun would only take the lock
 * from one of them.  The bit counts only while a queue of this fork
 * generation exists: a head asleep in a fork parent left it set. */
static inline bool saturated(struct mutex *m)
{
	/* Relaxed: hints (queue_word). */
	return (queue_word(m) & SATURATED) && hl__queue_node(hl__load(&m->tail, HL_RELAXED));
}

/* Polls of a free word by which a contender on another node than the
 * holder's lets the holder's node's spinners go first: about a microsecond,
 * several times what a spinner takes to see the word free and CAS it. */
#define LOCAL_GRACE_POLLS 32

/* With CNA: whether a contender on node `node` that has waited waited_ns
 * should leave a free word to the holder's node for LOCAL_GRACE_POLLS polls
 * before it takes it.  Most acquisitions of a contended TP lock are not
 * handovers through the queue but CAS races on the word (the queue head,
 * optimistic spinners); ordering the queue alone would leave them to
 * whoever races fastest, and a remote thread that wins one moves the lock
 * to its node.  So remote contenders give way while someone on the holder's
 * node is there to take the lock, and take it when nobody is (the lock is
 * never left idle for more than the grace), until they have waited the CNA
 * threshold.  Prioritized waiters never give way (docs/cna.md). */
static bool gives_way_to_holder(struct mutex *m, uint32_t node, uint32_t node_flags,
				uint64_t waited_ns)
{
	uint32_t q = queue_word(m), holder_node = (q >> HOLDER_NODE_SHIFT) & HOLDER_NODE_MASK;
	return holder_node && holder_node - 1 != node &&
	       !(node_flags & (HL_NODE_F_RT | HL_NODE_F_PRIO)) &&
	       waited_ns < hl__cna_threshold_ns() && (queue_opts(q) & HL_PASS_CNA);
}

/* Polls of a free word by which a spinner lets the thread that released
 * it take it back (step 1b): about half a microsecond.  An owner that
 * comes back within it keeps a saturated lock on its CPU, and the spinner
 * learns that it would only have taken the lock from a running thread:
 * the lock is saturated (step 4b).  A spinner that an owner leaves the
 * lock to takes it, later by the grace. */
#define OWNER_GRACE_POLLS 16

/* The polls a spinner leaves a free word to others: with CNA, a contender
 * on another node than the holder's gives way (above); an RT or
 * prioritized one none; any other the owner's grace. */
static inline unsigned free_grace(bool give_way, uint32_t node_flags)
{
	if (give_way)
		return LOCAL_GRACE_POLLS;
	return node_flags & (HL_NODE_F_RT | HL_NODE_F_PRIO) ? 0 : OWNER_GRACE_POLLS;
}

/* Seen the word free for *free_polls polls: whether to try the CAS now,
 * or leave it to others for one more poll (free_grace). */
static inline bool try_free_word(unsigned grace, unsigned *free_polls)
{
	if (*free_polls >= grace)
		return true;
	++*free_polls;
	hl__cpu_relax();
	return false;
}

/* Whether held word w, seen after free_polls polls of a free word within
 * the owner's grace, was taken back by its owner before that, last_owner:
 * the lock is saturated (step 4b).  Another thread that took it won a race
 * that says nothing of the running threads' need for the lock. */
static inline bool taken_back(uint32_t w, uint32_t last_owner, unsigned grace,
			      unsigned free_polls)
{
	return free_polls && grace == OWNER_GRACE_POLLS && (w & OWNER_MASK) == last_owner;
}

/* Step 1b: optimistic spinning.  A newcomer that found the lock held spins
 * on the word for the spin budget, if it gets a spinner slot, and takes the
 * lock when it is free (with CNA, after a grace if it is on another node
 * than the holder: gives_way_to_holder), before it would queue and sleep.
 * Returns 0 or EAGAIN (go and queue). */
static int lock_spin(struct mutex *m, uint32_t tid, const struct hl__deadline *dl,
		     bool *retaken)
{
	if (saturated(m))
		return EAGAIN;
	uint64_t budget = hl__spin_begin(spin_rec(m));
	if (!budget)
		return EAGAIN;
	int err = EAGAIN, outcome = HL_SPIN_LOST;
	uint64_t start = hl__now_ns();
	struct hl__thread *self = hl__self();
	uint32_t node_flags = (hl__thread_prio ? HL_NODE_F_PRIO : 0) |
			      (self && hl__thread_is_rt(self) ? HL_NODE_F_RT : 0);
	unsigned grace = free_grace(gives_way_to_holder(m, hl__topo_node(), node_flags, 0), node_flags);
	unsigned free_polls = 0;
	uint32_t last_owner = 0;
	for (unsigned i = 1;; i++) {
		uint32_t w = hl__load(&m->word, HL_RELAXED);
		if (!w) {
			/* Acquire: pairs with the unlock's release. */
			if (try_free_word(grace, &free_polls) &&
			    hl__cas(&m->word, &w, tid, HL_ACQUIRE)) {
				err = 0;
				break;
			}
			continue;
		}
		if (taken_back(w, last_owner, grace, free_polls)) {
			*retaken = true;
			outcome = HL_SPIN_CUT;
			break;
		}
		free_polls = 0;
		last_owner = w & OWNER_MASK;
		hl__cpu_relax();
		if (i % HL_SPIN_CLOCK_EVERY)
			continue;
		if (hl__now_ns() - start >= budget)
			break;
		if (hl__deadline_passed(dl)) {
			outcome = HL_SPIN_CUT;
			break;
		}
	}
	spin_done(m, err ? outcome : HL_SPIN_WON);
	if (!err)
		note_holder_node(m);
	return err;
}

/* Step 5's test of a new head that sleeps: woken now only if it is due the
 * moment it becomes head (an RT thread, or any with a zero threshold), to
 * set HANDOFF itself when it runs: handed the lock asleep, it would leave
 * the lock idle for a wake-up. */
static bool wake_new_head(const struct hl__node *d, void *arg)
{
	(void)arg;
	uint64_t now = hl__now_ns();
	return hl__tp_head_due(d, now, hl__handoff_ns(), now);
}

/* Records d, a parked head that nobody has signalled, for the unlock of m
 * (step 5, and a broadcaster's deferred head): WAKE in the owned word,
 * after `head` = d.  The word is ours, yet it may change under us: the
 * pthread shim lets any thread unlock a normal mutex (glibc does too: a
 * mutex used as a binary semaphore), so an unlock may free it before WAKE
 * is in.  WAKE in a word with no owner would be stuck for good (no lock
 * takes a non-zero word, no unlock finds an owner to release), so a CAS:
 * if the word was freed meanwhile, d is served now as that unlock would
 * have served it (claimed and told RELEASED, or, if it gave up, headship
 * passed on); if another thread took it since, WAKE goes into its word and
 * its unlock serves d.  Only the head sets flags and d waits, so any flags
 * in the word are a fork parent's, replaced. */
static void record_head(struct mutex *m, struct hl__node *d)
{
	uint32_t w = hl__load(&m->word, HL_RELAXED);
	for (;;) {
		if (!(w & OWNER_MASK)) {
			bool parked;
			if (hl__node_claim(d, &parked))
				hl__node_post(d, HL_SIG_RELEASED, parked);
			else
				pass_head(m, d, 0);
			return;
		}
		/* Release: pairs with the unlocker's acquire load of the
		 * word, which then reads `head`.  Relaxed on failure: the
		 * loop decides again from the word alone. */
		if (hl__cas(&m->word, &w, (w & OWNER_MASK) | flags_now(false), HL_RELEASE))
			return;
	}
}

/* Whether s is the state of a kept wait: a waiter moved here by a
 * condvar broadcast, waiting on in its condvar wait (morph.h). */
static inline bool kept_wait(uint32_t s)
{
	return s == HL_NODE_PARKED_KEPT || s == HL_NODE_WAITING_KEPT;
}

/* Step 5b: nudges awake (hl__node_nudge) up to hl__nudge_ahead() moved
 * waiters queued behind node d, so that each runs by the time headship
 * reaches it.  Called after an unlock, so the links may have changed
 * meanwhile (d and those behind it taking the lock in turn, their nodes
 * reused): a stale link names a node of the arena all the same, and a
 * nudge that reaches a wait it was not meant for costs that wait one
 * poll (wait.h). */
static void nudge_behind(struct hl__node *d)
{
	for (int k = hl__nudge_ahead(); k > 0; k--) {
		/* Relaxed: a hint (above). */
		uint32_t i = hl__load(&d->next, HL_RELAXED);
		if (!i)
			return;
		d = hl__node_at(i);
		if (!kept_wait(hl__load(&d->state, HL_RELAXED)))
			return;
		hl__node_nudge(d);
	}
}

/* A moved waiter behind which this thread nudges after its next unlock
 * (step 5b); 0: none.  The end of every unlock, the shim's inline one too
 * (shim_api.h), looks at it: hl__mutex_nudge_if_due. */
__thread uint32_t hl__nudge_after_unlock __attribute__((tls_model("initial-exec")));

HL_NOINLINE void hl__mutex_nudge_now(void)
{
	struct hl__node *d = hl__node_at(hl__nudge_after_unlock);
	hl__nudge_after_unlock = 0;
	nudge_behind(d);
}

/* Step 5: the lock is ours; n leaves the queue. */
static void leave_queue(struct mutex *m, struct hl__node *n)
{
	/* Step 5b: whether the successor in FIFO order is a moved waiter.
	 * Relaxed: hints. */
	uint32_t si = hl__load(&n->next, HL_RELAXED);
	if (si && kept_wait(hl__load(&hl__node_at(si)->state, HL_RELAXED)))
		hl__nudge_after_unlock = si;
	struct hl__node *d = hl__queue_head_acquired(&m->tail, n, queue_opts(queue_word(m)),
						   wake_new_head, NULL);
	if (d) {
		/* Relaxed: published by the release CAS below. */
		hl__store(&m->head, d->index, HL_RELAXED);
		record_head(m, d);
	}
}

/* Step 5 and the return of a lock that took the lock with node n. */
static int lock_owned(struct mutex *m, struct hl__thread *self, struct hl__node *n)
{
	note_holder_node(m);
	leave_queue(m, n);
	hl__thread_node_put(self);
	return 0;
}

/* Step 4b's passive sleeps: the first, in nanoseconds, and the longest
 * as a shift of the handoff threshold (T/16: 250 us with the default T).
 * Each sleep in a row doubles, so a head that a saturated lock keeps
 * losing costs a wake-up per 250 us at most, while one that lost once by
 * chance sleeps 50 us, about what a wake-up takes on a busy machine. */
#define PASSIVE_FIRST_NS 50000u
#define PASSIVE_MAX_SHIFT 4

/* Step 4b: head n sleeps on its armed node, recorded nowhere, so no
 * unlock wakes it: until *passive_ns from now, but not past the moment it
 * becomes due (hl__tp_head_due) nor past its deadline.  Nobody can signal n
 * meanwhile: an unlock signals the node in `head` only while the word has
 * the flags that n alone would set, and headship is n's already. */
static void sleep_passive(struct mutex *m, struct hl__node *n, const struct hl__deadline *dl,
			  uint64_t now, uint64_t head_since, uint64_t handoff_ns,
			  uint64_t *passive_ns)
{
	uint64_t wake = now + *passive_ns;
	uint64_t due_at = hl__tp_head_due_at(n, handoff_ns, head_since);
	if (due_at < wake)
		wake = due_at;
	uint64_t longest = handoff_ns >> PASSIVE_MAX_SHIFT;
	*passive_ns = *passive_ns * 2 < longest ? *passive_ns * 2 :
		      longest > PASSIVE_FIRST_NS ? longest : PASSIVE_FIRST_NS;
	if (wake <= now || hl__deadline_passed(dl))
		return;
	struct hl__thread *self = hl__self();
	if (self)
		hl__counter_add(&self->fx[HL_LK_PASSIVE], 1);
	hl__node_arm(n);
	/* Relaxed: a hint (saturated). */
	hl__fetch_or(&m->queue, SATURATED, HL_RELAXED);
	/* The deadline wakes us on its own clock, as wake does. */
	uint32_t sig = hl__node_wait_woken(n, 0, wake, dl);
	hl__fetch_and(&m->queue, ~SATURATED, HL_RELAXED);
	if (sig != HL_WAIT_WOKEN)
		hl__bug("a signal to a passive mutex head", sig);
}

/* Steps 3 and 4 for node n, queued by lock_slow (step 2) or moved onto the
 * queue by hl_cond (morph.h), once its first wait in the queue returned
 * sig: HL_SIG_HEAD or HL_SIG_RELEASED (n is the head), HL_SIG_HANDED (the
 * lock is ours) or HL_WAIT_TIMEDOUT (n was abandoned in the queue). */
static int lock_queued(struct mutex *m, uint32_t tid, struct hl__thread *self, struct hl__node *n,
		       uint32_t sig, const struct hl__deadline *dl, bool lost)
{
	if (sig == HL_SIG_HANDED) {
		hl__counter_add(&self->fx[HL_LK_HANDED], 1);
		return lock_owned(m, self, n);
	}
	if (sig == HL_WAIT_TIMEDOUT) {
		hl__thread_node_abandoned(self);
		return ETIMEDOUT;
	}
	const uint64_t handoff_ns = hl__handoff_ns();
	/* n is the head, competing since head_since; budget != 0 while we
	 * hold a spinner slot (wait.h). */
	uint64_t budget = hl__spin_begin(spin_rec(m));
	uint64_t spin_start = hl__now_ns(), head_since = spin_start, now;
	/* Restriction (step 4b): `woken` while this phase began with an
	 * unlock's RELEASED; `lost` (from the caller: step 1b saw it) once
	 * the lock was seen saturated; passive_ns: the next passive sleep. */
	bool woken = sig == HL_SIG_RELEASED;
	uint64_t passive_ns = PASSIVE_FIRST_NS;
	bool give_way = gives_way_to_holder(m, n->topo_node, n->flags, spin_start - n->wait_start_ns);
	unsigned free_polls = 0, grace = free_grace(give_way, n->flags);
	uint32_t last_owner = 0;
	int err = 0;
	/* Whether this spin phase found the lock held: one that finds it free
	 * at once (a head woken by RELEASED) did not wait by spinning, and
	 * teaches the record nothing. */
	bool held_seen = false;
	for (unsigned i = 1;; i++) {
		uint32_t w = hl__load(&m->word, HL_RELAXED);
		if (!w) {
			if (!try_free_word(grace, &free_polls))
				continue;
			/* Acquire: pairs with the unlock's release; the
			 * critical section starts here. */
			if (hl__cas(&m->word, &w, tid, HL_ACQUIRE))
				break;
			continue;
		}
		/* Lost: taken back by its owner within the grace, or, without
		 * a slot to spin and see that, taken by another after an
		 * unlock woke us. */
		lost |= taken_back(w, last_owner, grace, free_polls) || (woken && !budget);
		free_polls = 0;
		last_owner = w & OWNER_MASK;
		held_seen = true;
		if (budget && !lost && i % HL_SPIN_CLOCK_EVERY) {
			hl__cpu_relax();
			continue;
		}
		now = hl__now_ns();
		if (give_way && !gives_way_to_holder(m, n->topo_node, n->flags, now - n->wait_start_ns)) {
			give_way = false;
			grace = free_grace(false, n->flags);
		}
		bool due = hl__tp_head_due(n, now, handoff_ns, head_since);
		if (hl__deadline_passed(dl)) {
			err = ETIMEDOUT;
			break;
		}
		if (!due && !lost && now - spin_start < budget)
			continue;
		if (!due && lost) {
			/* Step 4b: saturated; sleep passive, unknown to the
			 * unlocks, then compete again as a head that was not
			 * woken (an owned word gets WAKE). */
			if (budget)     /* not a spin that failed: cut */
				spin_done(m, HL_SPIN_CUT);
			sleep_passive(m, n, dl, now, head_since, handoff_ns, &passive_ns);
			budget = hl__spin_begin(spin_rec(m));
			spin_start = hl__now_ns();
			held_seen = woken = lost = false;
			continue;
		}
		/* Relaxed: published by the release CAS below. */
		hl__store(&m->head, n->index, HL_RELAXED);
		hl__node_arm(n);
		/* Release: `head` and the armed node are visible to the
		 * unlocker, whose acquire load of the word sees the flags.
		 * The flags replace any in the word: those can only be stale
		 * ones of a fork parent (the head is the only setter). */
		if (!hl__cas(&m->word, &w, (w & OWNER_MASK) | flags_now(due), HL_RELEASE))
			continue;
		/* Not due: spun out already, park at once.  Due: the handover
		 * comes at the owner's next unlock, likely within the spin
		 * budget, and then costs no syscall. */
		sig = hl__node_wait(n, dl, due ? budget : 0);
		/* Not due: the spin ran out and we parked.  Due: we wait for
		 * a handover, which says nothing of what spinning achieves. */
		if (budget)
			spin_done(m, due ? HL_SPIN_CUT : HL_SPIN_LOST);
		budget = 0;
		if (sig == HL_SIG_HANDED) {
			hl__counter_add(&self->fx[HL_LK_HANDED], 1);
			break;
		}
		if (sig == HL_WAIT_TIMEDOUT) {
			/* The unlocker passes headship on. */
			hl__thread_node_abandoned(self);
			return ETIMEDOUT;
		}
		/* RELEASED: race for it again, with a new budget. */
		budget = hl__spin_begin(spin_rec(m));
		spin_start = hl__now_ns();
		held_seen = false;
		woken = true;
		give_way = gives_way_to_holder(m, n->topo_node, n->flags, spin_start - n->wait_start_ns);
		grace = free_grace(give_way, n->flags);
	}
	if (budget)
		spin_done(m, !err && held_seen ? HL_SPIN_WON : HL_SPIN_CUT);
	/* Only a head sets SATURATED, and clears it when it wakes; one left
	 * by a fork parent's head goes here.  Relaxed: a hint. */
	if (hl__unlikely(queue_word(m) & SATURATED))
		hl__fetch_and(&m->queue, ~SATURATED, HL_RELAXED);
	if (!err)
		return lock_owned(m, self, n);
	/* Timed out as the head, no flag of ours in the word: hand headship
	 * on. */
	pass_head(m, n, 0);
	hl__thread_node_put(self);
	return err;
}

/* self_waits: a caller that owns m waits for its unlock (shim_api.h)
 * instead of EDEADLK. */
static HL_NOINLINE int lock_slow(struct mutex *m, uint32_t tid, uint32_t w, const struct hl__deadline *dl,
				 bool self_waits)
{
	if (owned_by_me(w, tid) && !self_waits)
		return EDEADLK;
	bool retaken = false;   /* step 1b saw the lock saturated */
	if (lock_spin(m, tid, dl, &retaken) == 0)
		return 0;
	if (hl__deadline_passed(dl))
		return ETIMEDOUT;
	struct hl__thread *self = hl__self();
	struct hl__node *n = hl__thread_node_get(self);
	if (hl__unlikely(!n))
		return lock_poll(m, tid, dl);

	hl__queue_node_init(n, self, hl__now_ns());
	hl__node_arm(n);
	/* Step 2.  Behind another waiter: park at once.  Only the head has a
	 * use for a spinner slot (wait.h), and a parked successor costs
	 * nothing until it is due (step 5). */
	uint32_t sig = HL_SIG_HEAD;
	if (hl__queue_enqueue(&m->tail, n)) {
		sig = hl__node_wait(n, dl, 0);
		retaken = false;        /* news from before it waited */
	}
	return lock_queued(m, tid, self, n, sig, dl, retaken);
}

/* Unlock step 2; the caller owns the word, which has live WAKE (w).  The
 * rule of every release (docs/core.md): after the store that lets another
 * thread take the lock, touch nothing of the lock object, since its last
 * user may free it at once; only the head's node (arena memory, never
 * unmapped).  So whatever needs `head`, `tail` or `queue` is done while the
 * word is still ours: the claim that keeps the head from leaving, and, for a
 * head that has left, passing headship on. */
static void unlock_to_head(struct mutex *m, uint32_t w)
{
	for (;;) {
		/* Relaxed: the acquire load (or failed CAS) that showed WAKE
		 * synchronized with the release that set it, which followed
		 * the store to `head`. */
		struct hl__node *h = hl__node_at(hl__load(&m->head, HL_RELAXED));
		bool parked;
		if (hl__node_claim(h, &parked)) {
			/* h can no longer leave, and the word stays as it is
			 * until our store: only a head sets flags, and h waits.
			 * Only HANDOFF hands it over: a head that sleeps without
			 * it, however long it has waited, is woken to race for
			 * the free lock, and sets HANDOFF itself once it has
			 * competed for a while (hl__tp_head_due); handed the lock
			 * asleep, it would leave the lock idle until it gets a
			 * CPU. */
			bool handoff = w & HANDOFF;
			uint32_t tid = h->tid;
			/* Release: the critical section happens before the next
			 * owner's acquire (h through the post as well).  A plain
			 * store: nobody else changes the word now. */
			hl__store(&m->word, handoff ? tid : 0, HL_RELEASE);
			/* From here on, only h's node. */
			hl__node_post(h, handoff ? HL_SIG_HANDED : HL_SIG_RELEASED, parked);
			return;
		}
		/* h gave up (timed out): headship is ours to pass on, now,
		 * while the lock is still held.  First drop h's flags (nobody
		 * else changes the word meanwhile; relaxed: nothing is
		 * published by it): a new head may set flags while we pass,
		 * and they must not be mistaken for h's (the same bits) by the
		 * CAS below, or that head would sleep unsignalled. */
		w &= OWNER_MASK;
		hl__store(&m->word, w, HL_RELAXED);
		pass_head(m, h, 0);
		/* Release: as above; acquire on failure: the new head's flags,
		 * then `head`, are read as at the start. */
		for (;;) {
			if (hl__cas(&m->word, &w, 0, HL_ACQ_REL))
				return;
			if (has_live_flags(w))
				break;          /* a new head's flags: serve it */
		}
	}
}

/* hl_mutex_timedlock, and hl_mutex_lock for a thread whose TID is not known
 * yet: out of line, so that hl_mutex_lock's fast path needs no stack
 * frame. */
static HL_NOINLINE int lock_lookup(struct mutex *m, const struct hl__deadline *dl, bool self_waits)
{
	uint32_t tid = hl__tid();
	uint32_t w = 0;
	/* Acquire: as in hl_mutex_lock. */
	if (hl__cas(&m->word, &w, tid, HL_ACQUIRE))
		return 0;
	if (owned_by_me(w, tid) && !self_waits)
		return EDEADLK;
	if (hl__deadline_passed(dl))
		return ETIMEDOUT;
	return lock_slow(m, tid, w, dl, self_waits);
}

int hl_mutex_lock(hl_mutex_t *pm)
{
	struct mutex *m = M(pm);
	uint32_t tid = hl__tid_known();
	uint32_t w = 0;
	if (hl__unlikely(!tid))
		return lock_lookup(m, NULL, false);     /* looks the TID up */
	/* Acquire: pairs with the previous owner's release in unlock. */
	if (hl__likely(hl__cas(&m->word, &w, tid, HL_ACQUIRE)))
		return 0;
	return lock_slow(m, tid, w, NULL, false);
}

int hl_mutex_trylock(hl_mutex_t *pm)
{
	uint32_t w = 0;
	/* Acquire: as in hl_mutex_lock. */
	return hl__cas(&M(pm)->word, &w, hl__tid(), HL_ACQUIRE) ? 0 : EBUSY;
}

int hl_mutex_timedlock(hl_mutex_t *pm, clockid_t clock, const struct timespec *abstime)
{
	struct hl__deadline dl;
	int err = hl__deadline_init(&dl, clock, abstime);
	return err ? err : lock_lookup(M(pm), &dl, false);
}

/* hl_mutex_unlock when the word is not just our TID (flags, a fork
 * parent's TID, another owner, no owner), or our TID is not known; with
 * anyone, the unlock of whoever owns the word (hl__mutex_unlock_any): the
 * owner holds no node, and the head waits for any unlock. */
static HL_NOINLINE int unlock_slow(struct mutex *m, bool anyone)
{
	uint32_t tid = anyone ? 0 : hl__tid();
	/* Acquire: if the word has WAKE, this synchronizes with the head's
	 * release CAS so that `head` can be read. */
	uint32_t w = hl__load(&m->word, HL_ACQUIRE);
	for (;;) {
		if (anyone ? !(w & OWNER_MASK) : !owned_by_me(w, tid))
			return anyone ? 0 : EPERM;
		if (has_live_flags(w))
			break;
		/* No flags, or a fork parent's (a new head may be replacing
		 * those right now, hence a CAS).  Release: as the fast path;
		 * acquire on failure: as above. */
		if (hl__cas(&m->word, &w, 0, HL_ACQ_REL))
			return 0;
	}
	unlock_to_head(m, w);
	return 0;
}

int hl_mutex_unlock(hl_mutex_t *pm)
{
	struct mutex *m = M(pm);
	/* 0 (not known) is nobody's TID and owns nothing: unlock_slow says
	 * EPERM, or finds the TID this thread had before a fork. */
	uint32_t w = hl__tid_known();
	/* Release: the critical section happens before the next owner's
	 * acquire. */
	if (hl__likely(w) && hl__likely(hl__cas(&m->word, &w, 0, HL_RELEASE))) {
		hl__mutex_nudge_if_due();
		return 0;
	}
	int err = unlock_slow(m, false);
	hl__mutex_nudge_if_due();
	return err;
}

int hl_mutex_init(hl_mutex_t *pm)
{
	memset(pm, 0, sizeof(*pm));
	return 0;
}

int hl_mutex_set_queue(hl_mutex_t *pm, hl_queue_policy_t policy)
{
	struct mutex *m = M(pm);
	if (policy != HL_QUEUE_DEFAULT && policy != HL_QUEUE_FIFO && policy != HL_QUEUE_CNA)
		return EINVAL;
	/* Relaxed: a mutex in use is refused, best effort; the policy of a
	 * mutex that is not shared yet is published with the mutex itself. */
	if (hl__load(&m->word, HL_RELAXED) || hl__queue_node(hl__load(&m->tail, HL_RELAXED)))
		return EBUSY;
	hl__store(&m->queue, (uint32_t)policy, HL_RELAXED); /* holder node: not known */
	return 0;
}

hl_queue_policy_t hl_mutex_queue(const hl_mutex_t *pm)
{
	return queue_opts(queue_word((struct mutex *)pm)) ? HL_QUEUE_CNA : HL_QUEUE_FIFO;
}

int hl_mutex_destroy(hl_mutex_t *pm)
{
	struct mutex *m = M(pm);
	/* Acquire: a destroy that returns 0 happens after the last unlock. */
	if (hl__load(&m->word, HL_ACQUIRE) || hl__queue_node(hl__load(&m->tail, HL_ACQUIRE)))
		return EBUSY;
	return 0;
}

uint32_t hl_mutex_owner(const hl_mutex_t *pm)
{
	/* Relaxed: a diagnostic snapshot. */
	return hl__load(&((struct mutex *)pm)->word, HL_RELAXED) & OWNER_MASK;
}

/* A racy snapshot, for watchdogs (see hl__queue_describe). */
int hl_mutex_describe(const hl_mutex_t *pm, char *buf, size_t len)
{
	struct mutex *m = (struct mutex *)pm;
	/* Relaxed throughout: a racy snapshot for diagnostics. */
	uint32_t w = hl__load(&m->word, HL_RELAXED);
	uint32_t tail = hl__load(&m->tail, HL_RELAXED);
	uint32_t head = hl__load(&m->head, HL_RELAXED);
	uint32_t qw = hl__load(&m->queue, HL_RELAXED);
	char q[512];
	struct hl__node *t = hl__queue_node(tail);
	/* From the recorded head, if the word says it is current. */
	size_t used = t && has_live_flags(w) ? hl__queue_describe(q, sizeof(q), head, t) : 0;
	q[used] = 0;
	return snprintf(buf, len, "hl_mutex word=0x%08x owner=%u%s%s%s tail=%s%u head=%u %s spin-record=%u%s%s%s",
			w, w & OWNER_MASK, (w & WAKE) ? " WAKE" : "", (w & HANDOFF) ? " HANDOFF" : "",
			(w & FLAGS) && !has_live_flags(w) ? " (stale: fork parent's)" : "",
			t ? "" : "none:", tail & HL_QUEUE_INDEX_MASK, head,
			queue_opts(qw) ? "cna" : "fifo", hl__spin_rec_at(qw, SPIN_REC_SHIFT),
			t && (qw & SATURATED) ? " saturated (head passive)" : "",
			used ? " queue (tid@node:state):" : (t ? " queue: (head active, not recorded)" : ""),
			q);
}

/* ---- what the pthread shim asks of the mutex (shim_api.h) --------------- */

int hl__mutex_lock_any(hl_mutex_t *pm, const struct hl__deadline *dl)
{
	return lock_lookup(M(pm), dl, true);
}

int hl__mutex_unlock_any(hl_mutex_t *pm)
{
	int err = unlock_slow(M(pm), true);
	hl__mutex_nudge_if_due();
	return err;
}

/* ---- what hl_cond asks of the mutex (morph.h) --------------------------- */

bool hl__mutex_held_by(const hl_mutex_t *pm, uint32_t tid)
{
	/* Relaxed: only the owner itself can make this true or false. */
	return owned_by_me(hl__load(&((struct mutex *)pm)->word, HL_RELAXED), tid);
}

void hl__mutex_enqueue_moved(hl_mutex_t *pm, struct hl__node *first, struct hl__node *last,
			     uint32_t tid)
{
	struct mutex *m = M(pm);
	if (hl__queue_enqueue_chain(&m->tail, first, last))
		return;         /* behind a head: woken by the handovers */
	/* first is the head.  The queue was empty, so no head has flags in
	 * the word, and none can set any until first's thread runs. */
	uint32_t w = hl__load(&m->word, HL_RELAXED);
	if (owned_by_me(w, tid) && !wake_new_head(first, NULL)) {
		/* The caller owns m, as a broadcaster usually does: first is a
		 * deferred head of step 5, which the caller's unlock wakes
		 * when the lock is free, instead of now only to find it held
		 * (record_head: also if another thread's unlock frees it
		 * meanwhile).  Relaxed: published by record_head's release. */
		hl__store(&m->head, first->index, HL_RELAXED);
		record_head(m, first);
		/* Step 5b, as if the caller had taken m from first's
		 * predecessor. */
		hl__nudge_after_unlock = first->index;
		return;
	}
	/* Free, or another's: first competes for it now.  It cannot have given
	 * up: it is kept (hl__node_keep).  Step 5b at once: the caller holds
	 * no lock that the nudges would delay. */
	hl__node_signal(first, HL_SIG_HEAD);
	nudge_behind(first);
}

int hl__mutex_lock_moved(hl_mutex_t *pm, struct hl__thread *self, struct hl__node *n, uint32_t sig)
{
	return lock_queued(M(pm), hl__tid(), self, n, sig, NULL, false);
}

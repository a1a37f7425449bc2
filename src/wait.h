/* SPDX-License-Identifier: MIT */
/* The waiting core: how a thread waits and how it is woken.
 *
 * Every wait in hotlock is a wait on the waiter's own node: a cache-line
 * sized record that belongs to one thread for the duration of one wait.  The
 * node's state word is the only thing a waiter watches, first spinning on it
 * (bounded by the spin budget, config.h), then parking on it with a private
 * futex.  A waker changes the state word to a signal value and calls
 * futex_wake only if the waiter had parked: a waiter that is still spinning
 * is woken without a syscall.  The lock words themselves are never futexes,
 * so they can hold whatever the lock needs.
 *
 * Node state word (the values, and the node's layout, are in node.h: the
 * arena in thread.c holds nodes):
 *
 *   value         set by        meaning
 *   ------------  ------------  ------------------------------------------
 *   FREE      0   owner         not waiting
 *   WAITING   1   owner         armed; the owner spins on the word
 *   PARKED    2   owner         the owner sleeps in futex_wait(PARKED)
 *   ABANDONED 3   owner         the owner timed out and left; the node stays
 *                               where it is (say in a queue) and whoever
 *                               would have signalled it inherits its duties
 *   CLAIMED   4   a waker       a waker has committed to signal; the owner
 *                               can no longer abandon and waits a moment
 *   WAITING_KEPT 5  a keeper    WAITING or PARKED, but the wait may no
 *   PARKED_KEPT  6  (or owner)  longer be given up: the waiter's deadline
 *                               no longer applies (hl_cond moves a waiter
 *                               it signalled onto a mutex's queue, where it
 *                               must wait for the mutex however late)
 *   PARKED_INTR  7  an          PARKED, and the owner's thread was
 *                   interrupter interrupted since (hl__thread_interrupt):
 *                               the owner wakes and looks at its interrupt
 *                               word; a waker treats it as PARKED
 *   >= 8          a waker       a signal (HL_SIG_*): the wait is over
 *
 * Transitions: WAITING -> PARKED, WAITING_KEPT -> PARKED_KEPT,
 * WAITING|PARKED|PARKED_INTR -> ABANDONED, PARKED_INTR -> PARKED (owner,
 * CAS); WAITING -> WAITING_KEPT, PARKED|PARKED_INTR -> PARKED_KEPT (keeper,
 * CAS: hl__node_keep); PARKED -> PARKED_INTR (interrupter, CAS);
 * PARKED_KEPT -> WAITING_KEPT (nudger, CAS, then futex_wake: hl__node_nudge;
 * the owner, woken, polls and CASes it back to PARKED_KEPT); any armed
 * state -> CLAIMED or signal (waker, CAS); CLAIMED -> signal (the claiming
 * waker, store).  A CAS decides every race between a waiter giving up and
 * a waker or keeper, so a signal is delivered to exactly one live wait or
 * refused (and then the waker knows the node was abandoned), and a wait
 * that was kept is never given up.
 *
 * Interrupts (the shim's pthread_cancel ends a condvar wait) go through
 * the node's own word, so that an interruptible wait sleeps in a plain
 * futex_wait, the call any sandbox that lets glibc lock allows.  An
 * interruptible wait (a deadline with an interrupt word: the interrupt word
 * of the waiter's own thread record) publishes its node in the record
 * (intr_node), then parks (WAITING -> PARKED), then reads the interrupt
 * word; the interrupter sets the word, then reads intr_node and moves that
 * node PARKED -> PARKED_INTR and wakes it.  All four seq_cst: store
 * buffering, so either the waiter sees the interrupt before it sleeps, or
 * the interrupter sees the node parked and changes the word it sleeps on.
 * A stale intr_node (the wait ended, the node waits again or belongs to
 * another thread now) costs that wait a wake-up: it finds its own
 * interrupt word clear and parks again.
 *
 * Node memory lives in an arena that is never unmapped (thread.c), so a waker
 * may call futex_wake on a node whose owner has already seen the signal and
 * moved on: the worst case is a spurious wake-up of the node's next wait,
 * which every wait loop tolerates by re-reading the state word.
 *
 * Correctness never depends on the futex: a parked waiter re-reads the state
 * word after every return of futex_wait.  Where the kernel refuses the wait
 * (a seccomp filter: EPERM, ENOSYS), the waiter sleeps between looks
 * instead, 1 us doubling to 1 ms, and the library says so once on stderr.
 */
#ifndef HOTLOCK_WAIT_H
#define HOTLOCK_WAIT_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#include "atomics.h"
#include "internal.h"
#include "node.h"

/* Signals.  The waiting core does not interpret them; locks define their
 * meaning.  HL_WAIT_TIMEDOUT is returned by hl__node_wait, never posted. */
enum {
	HL_SIG_HEAD = 8,        /* you are the head of the waiter queue */
	HL_SIG_RELEASED = 9,    /* the lock you wait for was released: retry */
	HL_SIG_HANDED = 10,     /* the lock was handed to you: you own it */
	HL_SIG_GROUP = 11,      /* hl_rwlock: a read share was granted to you
				   with your group; you are out of the queue */
	HL_SIG_RETRY = 12,      /* hl_cond: a signal chose you; take the
				   mutex anew */
	HL_WAIT_TIMEDOUT = 0xffffffffu,
	HL_WAIT_WOKEN = 0xfffffffeu,    /* hl__node_wait_until's wake-up time */
};

/* The waiting policy, in one place: whether a waiter spins, and for how
 * long.  hl__spin_begin(rec) returns a budget in nanoseconds, 0 for "park at
 * once"; every call that returned a budget is matched by hl__spin_end.  A
 * waiter spins only if rules 1-3 allow it (wait.c has the steps):
 *
 *  1. The configured budget (HOTLOCK_SPIN_NS) is not 0.
 *  2. The place's spin record `rec` (below) has not learned that spinning
 *     fails there: at HL_SPIN_REC_OFF only a probe every
 *     HL_SPIN_PROBE_EVERY-th wait of a thread spins.
 *  3. A spinner slot is free: the CPUs this process may use, less one.
 *     "May use": the union of the affinity masks of its threads, capped by
 *     the CPU quota of its cgroup (cgroup v2 cpu.max or v1
 *     cpu.cfs_quota_us, the smallest along the path to the root, rounded
 *     up).  Learned outside lock calls (hl__machine_learn): at load and
 *     where a thread starts (the shim's pthread_create, hl_thread_init,
 *     which a program calls again after changing a thread's affinity).  So
 *     one thread pinned to a CPU does not stop the others from spinning,
 *     and on one CPU nobody spins.
 *
 * The policy reads nothing of the host inside a lock call: not its load,
 * not other processes (docs/core.md, "The lock's contract").
 * What it knows of CPUs being scarce it learns from the lock itself: a
 * spin that loses moves the lock's record towards OFF.
 *
 * A spin record is HL_SPIN_REC_BITS bits that a lock keeps in its own bytes
 * (all-zero: spinning pays), updated with hl__spin_learn after each spin
 * phase: a spin that ended in what it waited for moves it a step towards
 * 0, one that ran out of budget and parked a step towards HL_SPIN_REC_OFF,
 * and at OFF no waiter spins but the probes, a won one of which starts
 * spinning again.  So a lock whose holders block or hold it longer than
 * the budget stops spinning after a few failed spins (and then costs a
 * spin of a budget per HL_SPIN_PROBE_EVERY waits of a thread), while one
 * where at least half the spins win keeps spinning.  The record decides
 * whether to spin, not how long: a spin ends as soon as the lock is free,
 * so the budget is only ever spent in full by a spin that loses, and a
 * budget cut in steps was measured to turn spinning off on locks where it
 * pays (docs/core.md, "The waiting policy").
 *
 * A fork child gets its slots back (hl__spin_atfork_child, run by thread.c's
 * fork check as a hook, layers.c): the parent's spinners do not exist
 * there. */
#define HL_SPIN_REC_BITS 3
#define HL_SPIN_REC_MASK ((1u << HL_SPIN_REC_BITS) - 1)
#define HL_SPIN_REC_OFF HL_SPIN_REC_MASK
#define HL_SPIN_PROBE_EVERY 16

/* How a spin phase ended, for hl__spin_end and hl__spin_learn. */
enum {
	HL_SPIN_WON,    /* the waiter got what it spun for (the lock, a signal) */
	HL_SPIN_LOST,   /* the budget ran out: it parks */
	HL_SPIN_CUT,    /* neither (a deadline, a handoff due): nothing learned */
};

HL_HIDDEN uint64_t hl__spin_begin(unsigned rec);
/* Ends the spin phase; `outcome` is counted (HL_SP_WON). */
HL_HIDDEN void hl__spin_end(int outcome);
/* Learns what the policy needs of the machine (rule 3), outside lock
 * calls: at load and where a thread starts.  The calling thread's affinity
 * is asked of the kernel unless mask_known (its record has it from its
 * creator); with quota, the cgroup's CPU quota too.  errno as it was; no
 * allocation. */
HL_HIDDEN void hl__machine_learn(bool quota, bool mask_known);
/* The CPU quota of this process's cgroup, in CPUs rounded up (0: none or
 * not known), read from root's /proc/self/cgroup and cgroup tree ("": the
 * real ones).  Only while hl__machine_learn is not running (its buffers). */
HL_HIDDEN int hl__cgroup_quota_cpus(const char *root);
/* The thread hook (thread.h, started): hl__machine_learn as `how` says. */
HL_HIDDEN void hl__spin_thread_started(unsigned how);

/* The record after a spin phase that ended as `outcome`. */
static inline unsigned hl__spin_learn(unsigned rec, int outcome)
{
	if (outcome == HL_SPIN_WON)
		return rec ? rec - 1 : 0;
	if (outcome == HL_SPIN_LOST)
		return rec < HL_SPIN_REC_OFF ? rec + 1 : rec;
	return rec;
}

/* A record kept in bits [shift, shift + HL_SPIN_REC_BITS) of a lock word
 * w, as loaded from `word`. */
static inline unsigned hl__spin_rec_at(uint32_t w, unsigned shift)
{
	return (w >> shift) & HL_SPIN_REC_MASK;
}

/* Teaches that record (loaded as w) a spin phase's outcome, as hl__spin_end
 * returned it: one CAS, relaxed, because the record is a hint and nothing
 * is published through it.  The CAS fails, and the record stays as it
 * was, if the word changed since w was loaded; and a writer of the word's
 * other bits that read it before this CAS may put the old record back: a
 * lost update of a hint. */
static inline void hl__spin_rec_learn(_Atomic uint32_t *word, uint32_t w, unsigned shift,
				     int outcome)
{
	unsigned rec = hl__spin_rec_at(w, shift), nrec = hl__spin_learn(rec, outcome);
	if (nrec != rec)
		hl__cas(word, &w, (w & ~(HL_SPIN_REC_MASK << shift)) | nrec << shift, HL_RELAXED);
}

/* A wait for one peer's reply rather than for a lock (hl_swap,
 * hl_wait_self, hl_channel's calls; swap.c has the reasons and docs/swap.md
 * the measurements): the spin budget (0: park at once) from `budget`, the
 * most the caller would spin, if
 *  - in a swap, the peer did not last wait on this CPU (peer_cpu1 and
 *    my_cpu1: CPU + 1, 0 when unknown or no peer): a peer preempted or
 *    parked there needs this CPU;
 *  - the waiter's reply record *slow says its last wait was answered
 *    within the budget (hl__reply_learn);
 *  - this process may use two CPUs or more (rule 3's count).
 * The lock spinner slots are not taken: a peer is one thread, whose CPU
 * the first rule looks at; with one slot on a 2-CPU machine, a swap could
 * never spin while its peer finishes its own spin. */
HL_HIDDEN uint64_t hl__reply_spin_ns(_Atomic uint32_t *slow, uint64_t budget, uint32_t peer_cpu1,
				    uint32_t my_cpu1);

/* Records in a reply record whether a wait took longer than the budget
 * (every wait is timed from its start to its wake, parked or not).  The
 * record is one word that only the waiting thread reads and writes. */
static inline void hl__reply_learn(_Atomic uint32_t *slow, bool was_slow)
{
	/* Relaxed: the waiting thread's own record, written by no other
	 * thread; it orders nothing.  Stored only when it changes (a swap
	 * point's record shares its cache line with the state word that
	 * wakers write). */
	if (hl__load(slow, HL_RELAXED) != (uint32_t)was_slow)
		hl__store(slow, (uint32_t)was_slow, HL_RELAXED);
}

HL_HIDDEN void hl__spin_atfork_child(void);

/* One step of waiting for another thread that is a few instructions away
 * from publishing something (an enqueuer about to link its node, a waker
 * about to post its signal): pause for a while, then yield the CPU, in case
 * that thread was preempted between the two instructions.  *spins counts
 * the steps; start it at 0. */
static inline void hl__wait_for_peer(unsigned *spins)
{
	if (++*spins < 256)
		hl__cpu_relax();
	else
		hl__cpu_yield();
}

/* Arms n for a new wait: the owner calls it before publishing n anywhere a
 * waker can find it (the publication must be a release operation). */
static inline void hl__node_arm(struct hl__node *n)
{
	/* Relaxed: nobody may signal n until it is published; the publishing
	 * release (a queue link, a lock word CAS) orders this store. */
	hl__store(&n->state, HL_NODE_WAITING, HL_RELAXED);
}

/* Waits until n is signalled, spinning up to spin_ns (a budget from
 * hl__spin_begin, or 0), then parked.  With a deadline, gives up when it
 * passes: the node is then ABANDONED and HL_WAIT_TIMEDOUT returned, unless a
 * waker won the race, in which case its signal is returned, or the wait was
 * kept (hl__node_keep), in which case it waits on for the signal.  Returns
 * the signal (acquire: the signaller's writes before the signal are
 * visible). */
HL_HIDDEN uint32_t hl__node_wait(struct hl__node *n, const struct hl__deadline *dl,
				uint64_t spin_ns);

/* hl__node_wait, and also returns HL_WAIT_WOKEN once CLOCK_MONOTONIC passes
 * wake_ns (0: never) while n is parked and unsignalled: the node is then
 * WAITING (or WAITING_KEPT) again, still armed (a waker may signal it at any time), and the
 * caller waits again when it has done what it woke up for. */
HL_HIDDEN uint32_t hl__node_wait_until(struct hl__node *n, const struct hl__deadline *dl,
				      uint64_t spin_ns, uint64_t wake_ns);

/* hl__node_wait_until with no deadline of its own to give up at: returns
 * HL_WAIT_WOKEN, n still armed, once CLOCK_MONOTONIC passes wake_ns (0:
 * never) or wake_dl passes on its own clock (NULL: never), whichever comes
 * first.  A CLOCK_REALTIME wake_dl ends the sleep when the clock is set
 * past it, as the kernel's absolute timers on that clock do. */
HL_HIDDEN uint32_t hl__node_wait_woken(struct hl__node *n, uint64_t spin_ns, uint64_t wake_ns,
				      const struct hl__deadline *wake_dl);

/* The owner gives up the wait on n (armed, never kept) at once, where
 * hl__node_wait gives it up when its deadline passes: n becomes ABANDONED
 * and HL_WAIT_TIMEDOUT is returned, unless a waker got there first, whose
 * signal is then returned (acquire, as hl__node_wait).  For a lock that
 * must do something of its own before it gives up a wait (hl_rwlock takes
 * its flags back out of the lock word), and so waits with no deadline of
 * the core's and a wake-up time instead. */
HL_HIDDEN uint32_t hl__node_give_up(struct hl__node *n);
/* Delivers sig to n: no syscall if the waiter was spinning, one futex_wake if
 * it had parked.  Returns false, and changes nothing, if n was abandoned.
 * Release: the caller's writes before it are visible to the woken waiter. */
HL_HIDDEN bool hl__node_signal(struct hl__node *n, uint32_t sig);

/* Takes away the waiter's right to give up its wait: from now on its
 * deadline no longer applies and it waits until signalled.  No wake-up, no
 * syscall.  Returns false, and changes nothing, if n was abandoned already.
 * Relaxed: it publishes nothing; the caller publishes n (a queue link) with
 * a release of its own. */
HL_HIDDEN bool hl__node_keep(struct hl__node *n);

/* Nudges n, a kept wait whose owner sleeps (PARKED_KEPT), awake ahead of
 * its signal: n becomes WAITING_KEPT and its owner is woken, and polls the
 * node, yielding, for up to the spin budget before it parks again
 * (wait.c, poll_nudged).  So the signal that follows soon finds it running:
 * no syscall for the signaller, no wake-up latency for the waiter.  A hint:
 * a node in any other state is left alone, and a nudge to a wait it was
 * not meant for costs that wait one poll.  Returns whether it woke n. */
HL_HIDDEN bool hl__node_nudge(struct hl__node *n);
/* How many waiters may be nudged awake ahead of their turn: the spinner
 * slots (wait.h, rule 3), the CPUs that the owner and the head leave. */
HL_HIDDEN int hl__nudge_ahead(void);

/* Interrupts the registered thread whose pthread_t is pthread_id: sets its
 * interrupt word and wakes it if it waits on it.  Returns whether such a
 * thread was found.  The caller orders the interrupt after what the
 * interrupted thread must see (a seq_cst fence: src/preload/shim.c). */
HL_HIDDEN bool hl__thread_interrupt(uintptr_t pthread_id);

/* Two-step signal, for a waker that must do something between committing to
 * wake n and waking it (the mutex writes the new owner into the lock word):
 * claim takes n out of the waiter's hands (false if it was abandoned); post
 * delivers the signal. */
HL_HIDDEN bool hl__node_claim(struct hl__node *n, bool *was_parked);
HL_HIDDEN void hl__node_post(struct hl__node *n, uint32_t sig, bool was_parked);

#endif

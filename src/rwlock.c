/* SPDX-License-Identifier: MIT */
/* hl_rwlock_t: a reader-writer lock whose whole state is one 64-bit word
 * (seed 004: owner, reader count and flags read in one load), with the TP
 * policy of hl_mutex (seed 000: stealing until the queue head is due a
 * handoff) and reader grouping (seed 000: readers queued behind writers are
 * granted together).  It waits on the waiting core (wait.h) and the MCS
 * waiter queue (queue.h), in FIFO order.
 *
 * State (16 bytes, all-zero = unlocked, the default kind: PREFER_WRITER):
 *
 *   state (u64)  bits  0-31: the TP word (tpword.h)
 *                bits  0-21  writer TID, 0 when no writer
 *                bits 22-29  GEN: the fork generation in which the flags
 *                            were set (flags of another one count as absent)
 *                bit  30     WAKE: the queue head waits on its node for the
 *                            signal of whoever releases the last hold
 *                bit  31     HANDOFF: the head is due the lock; the last
 *                            release hands it over, nobody steals
 *                bits 32-63  reader count
 *   tail  (u32)  last queued waiter node (queue.h), 0 when none
 *   head  (u32)  bits 0-23: the node that set WAKE/HANDOFF (valid while
 *                either is set); bits 24-27: the kind, written by init
 *                only; bits 28-30: the spin record (wait.h), what spinning
 *                achieved on this lock lately (steps 1b, 3)
 *
 *   state                      meaning
 *   -------------------------  ----------------------------------------------
 *   0                          free (waiters may be queued: the head is active)
 *   tid                        write-held
 *   k << 32                    read-held by k readers
 *   ... | WAKE                 held; the head sleeps until the last release
 *   ... | WAKE | HANDOFF       held; the last release hands the lock to the
 *                              head (its TID, or a count of 1 for a reader)
 *   WAKE [| HANDOFF], no holder  a release in progress: the last holder has
 *                              left (its decrement or its CAS) and is about
 *                              to signal the head; nobody else may act
 *   (never a writer and readers at once; the flags always carry GEN)
 *
 * Kinds (rwlock.h): what a reader may take (take()) and when a writer is
 * due.  PREFER_WRITER (the default): a writer is due as soon as it heads
 * the queue, so its HANDOFF keeps new readers out at once (and a writer
 * that finds readers queues without spinning first, to get there); a
 * reader group stops at the first writer.  WRITER_YIELDS: as
 * PREFER_WRITER, and a writer head whose claim has not got it the lock
 * within the yield bound yields (step 4c).  FAIR: a reader shares a
 * read-held or free word unless HANDOFF is set; a head is due by
 * hl_mutex's handoff rule (hl__tp_head_due: RT at once, any other once it
 * has waited the threshold and competed as the head for an eighth of it),
 * and a reader group stops at a writer that has waited the threshold.
 * PREFER_READER: a reader shares any word without a writer, HANDOFF or not
 * (glibc's default); waiting readers are never left asleep while the lock
 * is read-held (steps 2b, 4b, 5).  The shim passes glibc's kind
 * with each call (shim_api.h); the public calls read it from `head`.
 *
 * Lock:
 *  0. Nested read: a reader that holds a read share of this lock already
 *     (its thread's table, below) and finds it read-held adds its share
 *     whatever waits.
 *  1. Fast path.  Write: CAS(0 -> tid).  Read: CAS(s -> s + 1 reader) when
 *     take() allows it.
 *  1b. Optimistic spinning, with a spinner slot, for the spin budget, on
 *     any holder, as long as no handoff is due.
 *  1c. A reader that did not get the lock so, while one write at most
 *     stands before it (nobody queued, or only the head that set the
 *     flags), waits that write out with a few pauses and then yields
 *     (reader_wait_out), without a slot: asleep in the queue it would make
 *     the next writer wait for its wake-up.
 *  2. Queue: stamp this thread's node (a reader's carries HL_NODE_F_READER)
 *     and enqueue it; behind another waiter, park until made head, or until
 *     handed the lock (a handoff, or a reader group granted by its head).
 *  2b. PREFER_READER, a reader behind another waiter: after linking, read
 *     the word by an RMW (fetch_or 0: the newest value); if a share can be
 *     taken, take it, then give the node up (it stays, abandoned, for the
 *     queue to skip; a group that took it meanwhile gave it a second share,
 *     which goes; made head meanwhile, it goes on as step 5).  In that
 *     order, so that the wait never starts anew.  With step 4b's CAS and scan this is a store-
 *     buffering pair: either the reader sees the read-held word or the head
 *     sees the reader in the queue.
 *  3. As head, spin on the word, taking it when take() allows.
 *  4. Spun out, or due: publish the node in `head`, arm it, CAS WAKE (and
 *     HANDOFF when due) into the held word, and wait: HANDED, the lock is
 *     ours; RELEASED, back to 3.
 *  4b. PREFER_READER, a writer head about to set its flags on a read-held
 *     word: it takes a read share (the lock stays read-held meanwhile),
 *     grants the queued readers (step 5's group, every reader in the
 *     queue), and gives the share back in the CAS that sets its flags
 *     (its share the last, it gives it back alone and looks again): from
 *     its look at the queue to its flags the word stays read-held, so a
 *     reader that linked itself after the look takes a share in step 2b.
 *  4c. WRITER_YIELDS, a writer head whose flags have stood in a held word
 *     for the yield bound (hl__rwlock_yield_ns; doubled at each yield of
 *     one wait, up to 64 times): it takes its flags back out (as a timed
 *     waiter gives up, a and b below), and for as long as that claim
 *     lasted leaves the word open: it grants the queued readers as in 4b,
 *     sleeps, grants those queued since, and claims again (step 4) with
 *     the doubled bound.  Readers of every form (tryrdlock too) get in
 *     meanwhile; a read holder that waits for another thread's read so
 *     stalls for a claim at most, not for ever.
 *  5. Having the lock: a reader takes the readers queued behind it out of
 *     the queue (FAIR: up to a writer that is due; PREFER_WRITER: up to any
 *     writer; PREFER_READER: all of them; the last node too, by a CAS of
 *     the tail), adds them to the reader count and signals them HANDED.
 *     Then leave the queue as hl_mutex does: a parked successor is recorded
 *     in `head` with WAKE set, so the last release wakes it; a due one is
 *     woken now.
 *
 * Unlock (the last hold goes, with WAKE): the release first commits: the
 * last reader's decrement, or the writer's CAS that clears its TID, leaves
 * the flags in a word with no holder.  Then claim the head's node, so that
 * it can no longer give up; with HANDOFF write its TID (or one reader) into
 * the word and post HANDED, without it store 0 and post RELEASED.  A head
 * that gave up refuses the claim; the releaser then passes headship on in
 * its place, before it releases the word.  Only the last hold sees WAKE at
 * 0: a reader's release that leaves others holding is a plain decrement.
 * The word with flags and no holder gives nobody a share or a write hold
 * (take), and no head sets flags on it, so the committed releaser alone
 * acts on the head.  The releasing CAS is the last access to the lock
 * object, which its last user may free at once (docs/design.md invariant
 * 7); only the head's node is touched after it.
 *
 * Giving up (a timed wait whose deadline passes; the core's own deadline is
 * not used, so that the node stays armed until we decide): whoever removes
 * a head's live flags from the word owns the head's node: a committed
 * releaser (above), a downgrade (which commits as a release does), or the
 * head itself withdrawing them.  So a waiter whose deadline passed:
 *  a. if the word holds flags naming its node and a holder: CAS the flags
 *     out (readers blocked only by its HANDOFF get in at once), pass
 *     headship on (it is the queue head) and return ETIMEDOUT;
 *  b. if they name it and there is no holder: a release (or downgrade) has
 *     committed, its signal comes; wait for it (the lock may be handed
 *     over: success), looking again every millisecond (a downgrade leaves
 *     a writer head's flags in place beside its new read share: then a);
 *  c. otherwise give the node up (the core's CAS decides against a
 *     signal).  A node made head by step 5 just before it was given up may
 *     be recorded in the word before or after its owner's second look at
 *     it, and a downgrade may put a holder beside its flags after that
 *     look: a dead head (withdraw_dead_head), which the owner's look, or
 *     the look of whoever put the flags into a held word for it (step 5, a
 *     downgrade), finds and withdraws as in a.  With no holder it is left
 *     to a committed releaser as in b.
 *
 * Nested reads: each thread knows the read shares it holds, exactly, in its
 * table (holds.h): a share is counted there before it is taken and
 * uncounted after it is given back, so a signal handler never finds one
 * of its thread's shares uncounted.  A read unlock by a thread with no
 * share of the lock is EPERM (the shim's releases one all the same, as
 * glibc's does: hl__rwlock_unlock_foreign).  Past the table's capacity a
 * thread's untracked shares count as a share of every lock (admitted as
 * nested: never a deadlock of a genuine nested read).
 *
 * Bounded waiting: as hl_mutex; in addition a reader queued behind a due
 * writer is never granted ahead of it (FAIR, PREFER_WRITER), and readers do
 * not steal while HANDOFF is set (except PREFER_READER, which promises
 * writers nothing while read holds overlap).
 *
 * Downgrade: the writer's TID becomes one reader in one CAS when no flags
 * are set.  With a head's flags it commits first, as a release does, then
 * serves the head: a writer head keeps its flags and waits on for the
 * readers; a reader head due the lock is handed a share, one not due
 * races again (PREFER_READER: a writer head too, to grant the readers
 * behind it); a head that gave up has headship passed on.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <hotlock/rwlock.h>

#include "config.h"
#include "holds.h"
#include "queue.h"
#include "shim_api.h"
#include "thread.h"
#include "tpword.h"
#include "wait.h"

/* The low 32 bits are the TP word of tpword.h; the reader count is above
 * them. */
#define WRITER_MASK ((uint64_t)HL_TP_OWNER_MASK)
#define GEN_MASK    ((uint64_t)HL_TP_GEN_MASK)
#define WAKE        ((uint64_t)HL_TP_WAKE)
#define HANDOFF     ((uint64_t)HL_TP_HANDOFF)
#define FLAGS       (WAKE | HANDOFF)
#define ONE_READER  (1ull << 32)

struct rwlock {
	_Atomic uint64_t state;
	_Atomic uint32_t tail;
	_Atomic uint32_t head;
};

_Static_assert(sizeof(struct rwlock) == sizeof(hl_rwlock_t), "layout");
_Static_assert(_Alignof(struct rwlock) == _Alignof(hl_rwlock_t), "layout");
_Static_assert(offsetof(struct rwlock, state) == offsetof(hl_rwlock_t, state_), "layout");
_Static_assert(offsetof(struct rwlock, tail) == offsetof(hl_rwlock_t, tail_), "layout");
_Static_assert(offsetof(struct rwlock, head) == offsetof(hl_rwlock_t, head_), "layout");
_Static_assert(sizeof(hl_rwlock_t) <= 16, "hl_rwlock_t must fit in 16 bytes");
_Static_assert(HL_RWLOCK_MAX_READERS + (uint64_t)HL_MAX_NODES <= 0xffffffffull,
	       "a reader group granted at the maximum cannot overflow the count");

static inline struct rwlock *R(hl_rwlock_t *l) { return (struct rwlock *)l; }

static inline uint32_t writer(uint64_t s) { return (uint32_t)(s & WRITER_MASK); }
static inline uint32_t readers(uint64_t s) { return (uint32_t)(s >> 32); }
static inline bool held(uint64_t s) { return writer(s) || readers(s); }

static inline bool has_live_flags(uint64_t s)
{
	return hl__tp_live_flags((uint32_t)s);
}

/* s without flags of a fork parent (they mean nothing here). */
static inline uint64_t clean(uint64_t s)
{
	return has_live_flags(s) ? s : s & ~(FLAGS | GEN_MASK);
}

/* The flags a head sets now: WAKE, HANDOFF if due, this generation. */
static inline uint64_t flags_now(bool due)
{
	return hl__tp_flags_now(due);
}

static inline bool owned_by_me(uint64_t s, uint32_t tid)
{
	return hl__tp_owned_by_me((uint32_t)s, tid);
}

static inline bool is_reader(const struct hl__node *n)
{
	return n->flags & HL_NODE_F_READER;
}

/* ---- `head`: the recorded head's node index, and the kind ---------------- */

#define KIND_SHIFT HL_NODE_INDEX_BITS
#define KIND_MASK 0xfu
#define SPIN_REC_SHIFT (KIND_SHIFT + 4)

static inline int lock_kind(struct rwlock *l)
{
	/* Relaxed: the kind bits are written by init only, before the lock is
	 * shared. */
	return (int)((hl__load(&l->head, HL_RELAXED) >> KIND_SHIFT) & KIND_MASK);
}

/* l's spin record (wait.h), for hl__spin_begin. */
static inline unsigned spin_rec(struct rwlock *l)
{
	/* Relaxed: a hint. */
	return hl__spin_rec_at(hl__load(&l->head, HL_RELAXED), SPIN_REC_SHIFT);
}

/* Ends a spin phase on l that ended as `outcome`: the slot goes back and
 * the record learns (wait.h, hl__spin_rec_learn: its CAS fails if set_head
 * changed the word meanwhile, and a racing set_head may put back the
 * record it read). */
static void spin_done(struct rwlock *l, int outcome)
{
	hl__spin_end(outcome);
	/* Relaxed: a hint, as above. */
	hl__spin_rec_learn(&l->head, hl__load(&l->head, HL_RELAXED), SPIN_REC_SHIFT, outcome);
}

static inline uint32_t head_index(struct rwlock *l)
{
	/* Relaxed: ordered by the caller's acquire load of a word with live
	 * flags, which the head's recorder set with a release after this. */
	return hl__load(&l->head, HL_RELAXED) & HL_QUEUE_INDEX_MASK;
}

static inline void set_head(struct rwlock *l, uint32_t index)
{
	/* Relaxed: published by the release that sets the flags; the kind
	 * and record bits are kept (only one thread records a head at a
	 * time: the one that is about to set flags on a word that has none;
	 * spin_done's CAS fails if this store comes between its load and
	 * its CAS). */
	uint32_t h = hl__load(&l->head, HL_RELAXED);
	hl__store(&l->head, (h & ~HL_QUEUE_INDEX_MASK) | index, HL_RELAXED);
}

/* Whether a writer is due as soon as it heads the queue in a lock of this
 * kind (its HANDOFF keeps new readers out at once). */
static inline bool writer_first(int kind)
{
	return kind == HL_RWLOCK_PREFER_WRITER || kind == HL_RWLOCK_WRITER_YIELDS;
}

/* Whether head n, at the head since head_since, is due a handoff in a lock
 * of this kind: a writer of a writer-first kind at once, any other by the
 * handoff rule the mutex keeps (hl__tp_head_due). */
static inline bool head_due(const struct hl__node *n, int kind, uint64_t now, uint64_t handoff_ns,
			    uint64_t head_since)
{
	return (writer_first(kind) && !is_reader(n)) || hl__tp_head_due(n, now, handoff_ns, head_since);
}

/* ---- nested reads: the read shares this thread holds (holds.h) ----------- */

/* Step 0: a read lock by a thread that holds a share of l already (or may:
 * untracked shares, holds.h), from s, a load of the word: a share added
 * whatever waits, while l is read-held (our hold keeps it so).  Returns 0,
 * EAGAIN at the maximum, or -1: not for this step. */
static int nested_read(struct rwlock *l, uint64_t s)
{
	while (!writer(clean(s)) && readers(s)) {
		if (readers(s) >= HL_RWLOCK_MAX_READERS)
			return EAGAIN;
		/* Acquire: as any read lock (an untracked share may have been
		 * another lock's: then the critical section starts here). */
		if (hl__cas(&l->state, &s, s + ONE_READER, HL_ACQUIRE))
			return 0;
	}
	return -1;
}

/* The state after taking the lock from s, or 0 if it cannot be taken now
 * (0 is never a held state).  A reader may share it with readers unless a
 * handoff is due (PREFER_READER: even then); a writer needs it free.  A
 * queue head's own flags are never in s when it looks: the releaser that
 * woke it cleared them. */
static inline uint64_t take(uint64_t s, bool reader, uint32_t tid, int kind)
{
	s = clean(s);
	if (reader)
		/* Not from live flags with no holder either: a release is in
		 * progress (release_to_head).  A share taken then would make
		 * a second "last reader out" of the same flags, and both
		 * would act on the head (found by tests/models/rwlock.pml). */
		return !writer(s) && readers(s) < HL_RWLOCK_MAX_READERS &&
		       (!(s & HANDOFF) || kind == HL_RWLOCK_PREFER_READER) &&
		       (readers(s) || !(s & FLAGS)) ? s + ONE_READER : 0;
	return s ? 0 : tid;
}

/* Fallback when this thread has no node (see mutex.c's lock_poll). */
static int lock_poll(struct rwlock *l, bool reader, uint32_t tid, int kind,
		     const struct hl__deadline *dl)
{
	long sleep_ns = 1000;
	for (;;) {
		uint64_t s = hl__load(&l->state, HL_RELAXED), ns = take(s, reader, tid, kind);
		/* Acquire: the critical section starts here. */
		if (ns && hl__cas(&l->state, &s, ns, HL_ACQUIRE))
			return 0;
		if (hl__poll_backoff(dl, &sleep_ns))
			return ETIMEDOUT;
	}
}

/* Step 1b.  Returns 0, or EAGAIN: go and queue. */
static int lock_spin(struct rwlock *l, bool reader, uint32_t tid, int kind,
		     const struct hl__deadline *dl)
{
	uint64_t budget = hl__spin_begin(spin_rec(l));
	if (!budget)
		return EAGAIN;
	int err = EAGAIN, outcome = HL_SPIN_LOST;
	uint64_t start = hl__now_ns();
	for (unsigned i = 1;; i++) {
		uint64_t s = hl__load(&l->state, HL_RELAXED), ns = take(s, reader, tid, kind);
		/* Acquire: pairs with the release of the last hold. */
		if (ns && hl__cas(&l->state, &s, ns, HL_ACQUIRE)) {
			err = 0;
			break;
		}
		/* A due handoff is not for us.  A writer spins on readers too,
		 * for the budget like any spin: their holds have no bound, but
		 * short ones drain within it, and a writer that queued instead
		 * would sleep behind the queue (docs/rwlock.md). */
		if ((clean(s) & HANDOFF) && !(reader && kind == HL_RWLOCK_PREFER_READER)) {
			outcome = HL_SPIN_CUT;
			break;
		}
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
	spin_done(l, err ? outcome : HL_SPIN_WON);
	return err;
}

/* Step 1c's looks: PAUSE_ROUNDS of 4, 8, 16 pauses, then yields. */
#define PAUSE_ROUNDS 3
#define WAIT_ROUNDS 10

/* Whether s, a load of the word that refuses a reader, stands for one
 * write at most before a reader may come in: nobody is queued, or the only
 * waiter is the head whose flags s carries (a writer about to be handed the
 * lock as the holders drain).  Relaxed: a hint. */
static bool one_write_ahead(struct rwlock *l, uint64_t s)
{
	uint32_t tail = hl__load(&l->tail, HL_RELAXED);
	return !hl__queue_node(tail) ||
	       (has_live_flags(s) && (tail & HL_QUEUE_INDEX_MASK) == head_index(l));
}

/* Step 1c: a reader that could not have the lock by spinning (no spinner
 * slot, a handoff due, the budget spent) waits out a write before it
 * queues, while one write at most stands before it (one_write_ahead): a
 * few short pauses, then yields of its CPU, WAIT_ROUNDS looks in all.  A
 * reader asleep in the queue would make the next writer, queued behind it,
 * wait for its wake-up, on a busy machine much longer than the write.  A
 * yield takes no spinner slot (the writer may need it) and, on a busy
 * machine, runs the threads that hold or want the lock; the rounds are
 * counted, not timed, so that where nothing else is runnable (a yield
 * returns at once) the wait stays short.  Behind a longer queue the reader
 * queues at once, as the waiters ahead of it did.  take() decides, as
 * everywhere: a due writer's HANDOFF keeps this reader out.  Returns 0, or
 * EAGAIN: go and queue. */
static int reader_wait_out(struct rwlock *l, int kind, const struct hl__deadline *dl)
{
	for (unsigned round = 0; round < WAIT_ROUNDS;) {
		uint64_t s = hl__load(&l->state, HL_RELAXED), ns = take(s, true, 0, kind);
		/* Acquire: pairs with the release of the last write hold. */
		if (ns && hl__cas(&l->state, &s, ns, HL_ACQUIRE))
			return 0;
		if (ns)
			continue;       /* another reader came or went */
		if (hl__deadline_passed(dl) || !one_write_ahead(l, s))
			break;
		if (round < PAUSE_ROUNDS)
			for (unsigned i = 0; i < 4u << round; i++)
				hl__cpu_relax();
		else
			hl__cpu_yield();
		round++;
	}
	return EAGAIN;
}

/* Step 5, the reader group: which waiters behind the head go with it. */
struct group {
	uint64_t now, handoff_ns;
	int kind;
};

static int group_member(const struct hl__node *w, void *arg)
{
	const struct group *g = arg;
	if (is_reader(w))
		return HL_EXTRACT_TAKE;
	/* A writer: readers behind it may pass it unless it is due
	 * (PREFER_READER: always). */
	if (g->kind == HL_RWLOCK_PREFER_READER)
		return HL_EXTRACT_SKIP;
	bool due = writer_first(g->kind) || hl__node_due(w, g->now, g->handoff_ns);
	return due ? HL_EXTRACT_STOP : HL_EXTRACT_SKIP;
}

/* Steps 4b and 5: head n, whose thread holds a read share (its own, or one
 * taken for the purpose), grants the queued readers of its group. */
static void grant_group(struct rwlock *l, struct hl__node *n, int kind)
{
	struct group g = { hl__now_ns(), hl__handoff_ns(), kind };
	uint32_t first;
	uint32_t count = hl__queue_extract(n, group_member, &g, HL_MAX_NODES, &first, &l->tail);
	if (!count)
		return;
	/* The count covers every member before any of them runs (its unlock
	 * decrements it).  Relaxed: we hold a read share, so the lock stays
	 * read-held and no writer can come in meanwhile; each member
	 * synchronizes with its signal's release.  No overflow: see the
	 * static assertion on HL_RWLOCK_MAX_READERS. */
	hl__fetch_add(&l->state, count * ONE_READER, HL_RELAXED);
	for (uint32_t idx = first; idx;) {
		struct hl__node *w = hl__node_at(idx);
		/* Relaxed: the list is ours (hl__queue_extract); read before
		 * the signal hands the node back to its owner. */
		idx = hl__load(&w->next, HL_RELAXED);
		if (!hl__node_signal(w, HL_SIG_GROUP)) {
			/* It gave up: its share goes (ours keeps the count
			 * above 0, so nobody needs waking), and the node is
			 * ours to recycle, out of the queue. */
			hl__fetch_sub(&l->state, ONE_READER, HL_RELAXED);
			hl__node_recycle(w);
		}
	}
}

/* Steps 4b and 4c: writer head n, with s, a read-held word with no live
 * flags (we are the head), takes a read share of its own and grants every
 * reader queued behind it.  Returns whether it took the share, which it
 * then holds (false: the word changed; look again). */
static bool grant_with_share(struct rwlock *l, struct hl__node *n, uint64_t s)
{
	/* Acquire and release: the share is a read hold like any other (our
	 * release lets a waiting reader's RMW in step 2b see the queue as we
	 * do; see the design comment).  Stale flags of a fork parent go, as
	 * in any take. */
	if (!hl__cas(&l->state, &s, clean(s) + ONE_READER, HL_ACQ_REL))
		return false;
	grant_group(l, n, HL_RWLOCK_PREFER_READER);
	return true;
}

/* Step 4c: grant_with_share, and the share given back at once.  Release:
 * as any read unlock.  No flags are live (only the head, n, sets them), so
 * this is never the last release that owes a head a signal; a word it
 * leaves free is taken by n's next look. */
static bool grant_readers_behind(struct rwlock *l, struct hl__node *n, uint64_t s)
{
	if (!grant_with_share(l, n, s))
		return false;
	hl__fetch_sub(&l->state, ONE_READER, HL_RELEASE);
	return true;
}

/* Whether s, a load of the word, holds live flags of the head whose node
 * index is idx. */
static inline bool names(struct rwlock *l, uint64_t s, uint32_t idx)
{
	return has_live_flags(s) && head_index(l) == idx;
}

/* A dead head: live flags in a held word that name node idx, node d,
 * given up by its owner after the queue made it head.  Nobody but the last
 * release would take them back, and while read holds overlap (readers
 * share a word whose flags have no HANDOFF, and only d could add it) no
 * last release comes, and the writers queued behind starve.
 * Two threads look for one: d's owner, after it gave d up (give_up's c),
 * and whoever put the flags into a held word for d (leave_queue,
 * a downgrade that keeps them).  Each writes first (ABANDONED; the flags or
 * the holder) and then reads what the other writes, with a seq_cst fence
 * in between: at least one of them sees the dead head.  Whoever removes
 * the flags (the CAS decides) passes headship on from d.  d's state is
 * read after the word: had d been recycled by whoever passed over it and
 * reused for flags of a new owner, the release that set those flags would
 * show its FREE state or a later one; if the new owner gave d up again,
 * those flags call for the same withdrawal.  Returns whether we removed
 * them. */
static bool withdraw_dead_head(struct rwlock *l, uint32_t idx, const struct hl__node *d)
{
	hl__fence_seq_cst();
	/* Acquire: pairs with the release that set the flags after `head`. */
	uint64_t s = hl__load(&l->state, HL_ACQUIRE);
	/* Acquire on the node: its give-up (a release) happened before. */
	while (names(l, s, idx) && held(clean(s)) &&
	       hl__load(&d->state, HL_ACQUIRE) == HL_NODE_ABANDONED) {
		/* Acquire: as the load; nothing is published (readers that
		 * come in now synchronize with the holders, not with us). */
		if (hl__cas(&l->state, &s, s & ~(FLAGS | GEN_MASK), HL_ACQUIRE))
			return true;
	}
	return false;
}

/* Once the waiter n that set WAKE (as head, or recorded as head by step 5)
 * is due while the lock stays held, it adds HANDOFF: otherwise readers that
 * keep stealing the lock would keep it read-held, and the last release that
 * wakes the head would never come. */
static void mark_due(struct rwlock *l, const struct hl__node *n)
{
	/* Acquire: pairs with the release that set WAKE after `head`. */
	uint64_t s = hl__load(&l->state, HL_ACQUIRE);
	/* Live flags naming n are n's: there is one head at a time, and the
	 * release that ended an earlier wait of the same node cleared its
	 * flags. */
	while (!(s & HANDOFF) && names(l, s, n->index)) {
		/* Release: as the head's own flag CAS (step 4). */
		if (hl__cas(&l->state, &s, s | HANDOFF, HL_ACQ_REL))
			return;
	}
}

/* How often a due waiter that is not signalled looks again (mark_due). */
#define DUE_RECHECK_NS 1000000ull

/* wait_node's answer when its yield time passes: a value no signal and no
 * other wait answer takes. */
#define WAIT_YIELD (HL_WAIT_WOKEN - 1)
_Static_assert(WAIT_YIELD > HL_SIG_RETRY && WAIT_YIELD != HL_WAIT_TIMEDOUT, "WAIT_YIELD");

/* Waits on n for a signal (steps 2 and 4).  A head that is not due yet
 * wakes up at due_at (0: it is due already), when it becomes due
 * (hl__tp_head_due_at), and every DUE_RECHECK_NS or handoff threshold after
 * that, to mark it so (mark_due).  A waiter queued behind the head
 * (queued) may be recorded as head by step 5 at any time, even between two
 * of its looks, and does not know when: it looks from due_at (its enqueue
 * plus the threshold) at the same interval, and the first look that finds
 * it recorded starts its time as the head.  The deadline is not the
 * core's (it would give the node up): the wait wakes up at it and returns
 * HL_WAIT_TIMEDOUT with n still armed, for give_up.  Likewise at yield_at (0: never), returning WAIT_YIELD (step
 * 4c). */
static uint32_t wait_node(struct rwlock *l, struct hl__node *n, const struct hl__deadline *dl,
			  uint64_t spin_ns, uint64_t due_at, bool queued, uint64_t handoff_ns,
			  uint64_t yield_at)
{
	const uint64_t every = handoff_ns > DUE_RECHECK_NS ? handoff_ns : DUE_RECHECK_NS;
	uint64_t mark = due_at;
	for (;;) {
		/* The deadline wakes us on its own clock (a CLOCK_REALTIME
		 * one follows the clock when it is set, as glibc's waits do). */
		uint64_t wake = mark && (!yield_at || mark < yield_at) ? mark : yield_at;
		uint32_t sig = hl__node_wait_woken(n, spin_ns, wake, dl);
		if (sig != HL_WAIT_WOKEN)
			return sig;
		if (hl__deadline_passed(dl))
			return HL_WAIT_TIMEDOUT;
		spin_ns = 0;
		uint64_t now = hl__now_ns();
		if (yield_at && now >= yield_at)
			return WAIT_YIELD;
		if (!mark || now < mark)
			continue;
		if (!queued) {
			mark_due(l, n);
			mark = hl__now_ns() + every;
		} else if (names(l, hl__load(&l->state, HL_ACQUIRE), n->index)) {
			/* Acquire: pairs with the release that set the flags
			 * after `head` (names reads it). */
			queued = false;
			mark = hl__tp_head_due_at(n, handoff_ns, now);
		} else {
			mark = now + every;
		}
	}
}

/* withdraw_flags's answers besides a signal: values no signal takes. */
#define FLAGS_WITHDRAWN HL_WAIT_TIMEDOUT
#define FLAGS_NOT_NAMED HL_WAIT_WOKEN

/* Head n, armed and unsignalled, takes its flags back out of a held word
 * (design comment, "Giving up", a and b; step 4c).  Returns
 * FLAGS_WITHDRAWN (done: n is still armed and ours, and nobody will signal
 * it), FLAGS_NOT_NAMED (the word holds no flags of n: it set none, or a
 * committed release claimed n, whose signal comes), or the signal that
 * came first (the wait is over as that signal says). */
static uint32_t withdraw_flags(struct rwlock *l, struct hl__node *n)
{
	/* Acquire: pairs with the release that set the flags after `head`. */
	uint64_t s = hl__load(&l->state, HL_ACQUIRE);
	for (;;) {
		if (!names(l, s, n->index))
			return FLAGS_NOT_NAMED;
		/* Acquire: the same word again, so that `head` was read while
		 * these flags were in it. */
		uint64_t again = hl__load(&l->state, HL_ACQUIRE);
		if (again != s) {
			s = again;
			continue;
		}
		/* b: a release (or a downgrade) committed, or n was claimed
		 * (a claim comes before the flags are cleared): its signal
		 * comes, unless a downgrade leaves the flags with a share
		 * (a writer head waits on for the readers); look again every
		 * DUE_RECHECK_NS, then withdraw as in a. */
		if (!held(clean(s)) || !hl__node_armed(hl__load(&n->state, HL_ACQUIRE))) {
			uint32_t sig = hl__node_wait_until(n, NULL, 0,
							   hl__now_ns() + DUE_RECHECK_NS);
			if (sig != HL_WAIT_WOKEN)
				return sig;
			s = hl__load(&l->state, HL_ACQUIRE);
			continue;
		}
		/* a.  Acquire: as the load; nothing is published (readers that
		 * come in now synchronize with the holders, not with us). */
		if (hl__cas(&l->state, &s, s & ~(FLAGS | GEN_MASK), HL_ACQUIRE))
			return FLAGS_WITHDRAWN;
	}
}

/* How a wait was given up (give_up). */
enum gave_up {
	WITHDRAWN,              /* a, or a head with no flags: pass headship on */
	ABANDONED_HEAD,         /* c, then a: n abandoned, we pass headship on */
	ABANDONED,              /* c: n abandoned, the queue's to deal with */
};

/* The deadline of n's wait passed, n armed and unsignalled (design
 * comment, "Giving up").  Returns the signal that won (the wait goes on
 * as if it had not timed out), or HL_WAIT_TIMEDOUT: given up, as *how
 * says.  An abandoned node may be recycled and reused at once: nothing
 * may read its state afterwards to find out how it was given up. */
static uint32_t give_up(struct rwlock *l, struct hl__node *n, enum gave_up *how)
{
	*how = WITHDRAWN;
	uint32_t sig = withdraw_flags(l, n);
	if (sig == FLAGS_WITHDRAWN)
		return HL_WAIT_TIMEDOUT;
	if (sig != FLAGS_NOT_NAMED)
		return sig;
	/* c. */
	const uint32_t idx = n->index;  /* n is not ours to read once given up */
	sig = hl__node_give_up(n);
	if (sig != HL_WAIT_TIMEDOUT)
		return sig;
	/* Recorded as head just before, with a holder?  (With no holder, a
	 * committed release or downgrade deals with it.) */
	*how = withdraw_dead_head(l, idx, n) ? ABANDONED_HEAD : ABANDONED;
	return HL_WAIT_TIMEDOUT;
}

/* Step 5's test of a new head that sleeps: woken now if it is due (to set
 * HANDOFF itself when it runs: handed the lock asleep, it would leave the
 * lock idle for a wake-up), or if it is a reader behind a reader (one the
 * group could not take: it may share the lock now rather than sleep until
 * the last reader leaves). */
struct new_head {
	bool reader_owner;
	int kind;
};

static bool wake_new_head(const struct hl__node *d, void *arg)
{
	const struct new_head *h = arg;
	uint64_t now = hl__now_ns();
	return head_due(d, h->kind, now, hl__handoff_ns(), now) ||
	       (h->reader_owner && is_reader(d));
}

/* For white-box tests (tests/rwlock_dead_head.c): called by step 5
 * with the parked successor it is about to record as head, before the
 * flags go into the word.  NULL (the default) costs one load per
 * recording. */
void (*_Atomic hl__rwlock_recording_observer)(const struct hl__node *d);

/* Step 5: the lock is ours; n leaves the queue. */
static void leave_queue(struct rwlock *l, struct hl__node *n, bool reader, int kind)
{
	struct new_head h = { reader, kind };
	struct hl__node *d = hl__queue_head_acquired(&l->tail, n, 0, wake_new_head, &h);
	if (!d)
		return;
	/* Acquire: pairs with the test's release store of its observer. */
	void (*observe)(const struct hl__node *) = hl__load(&hl__rwlock_recording_observer,
							   HL_ACQUIRE);
	if (hl__unlikely(observe != NULL))
		observe(d);
	const uint32_t idx = d->index;
	set_head(l, idx);
	/* Release: pairs with the acquire load of the releaser, which then
	 * reads `head`.  We hold the lock, so it stays held until then; no
	 * other live flags can be in the word (only a head sets them, and the
	 * release that woke us cleared ours). */
	hl__fetch_or(&l->state, flags_now(false), HL_RELEASE);
	/* d gave up after the pass, too late for its own look to see the
	 * flags? */
	if (withdraw_dead_head(l, idx, d))
		hl__queue_pass_head(&l->tail, d, 0);
}

/* Step 4c: a writer's claim lasts the yield bound, doubled at each yield
 * of one wait up to 64 times it. */
#define YIELD_MAX_NS(bound) ((bound) << 6)

/* Step 2b's answers. */
enum { ADMIT_WAIT, ADMIT_TAKEN, ADMIT_HEAD };

/* Step 2b: reader n, queued behind another waiter in a PREFER_READER lock,
 * takes a share at once if the word allows it, and only then gives its
 * place in the queue up: a reader that gave its node up first and then
 * found the share gone would start its wait anew, and could do so for
 * ever (tests/models/rwlock.pml, -DLIVE, found such a reader starving).
 * Returns ADMIT_WAIT (no share: wait in the queue, as queued), ADMIT_TAKEN
 * (the share is ours and n is out of our hands), or ADMIT_HEAD (the share
 * is ours and n was made the queue head meanwhile: the caller goes on as a
 * reader that has the lock, step 5). */
static int reader_admit(struct rwlock *l, struct hl__node *n, struct hl__thread *self)
{
	/* Acq_rel: the newest value of the word (an RMW reads the last one
	 * in its modification order), after our link; see the design
	 * comment for the pair it makes with step 4b. */
	uint64_t s = hl__fetch_or(&l->state, 0, HL_ACQ_REL), ns;
	do {
		ns = take(s, true, 0, HL_RWLOCK_PREFER_READER);
		if (!ns)
			return ADMIT_WAIT;
		/* Acquire: the critical section starts here. */
	} while (!hl__cas(&l->state, &s, ns, HL_ACQUIRE));
	switch (hl__node_give_up(n)) {
	case HL_WAIT_TIMEDOUT:
		/* Given up: the queue skips it.  Never a dead head: n never
		 * parked, and leave_queue records only a parked successor. */
		hl__thread_node_abandoned(self);
		return ADMIT_TAKEN;
	case HL_SIG_GROUP:
		/* A group took us first: a second share, which goes (ours
		 * keeps the count above 0, so this is never the last
		 * release).  Release: as any read unlock. */
		hl__fetch_sub(&l->state, ONE_READER, HL_RELEASE);
		hl__thread_node_put(self);
		return ADMIT_TAKEN;
	case HL_SIG_HEAD:
		return ADMIT_HEAD;
	default:
		/* HANDED and RELEASED go to a head that set flags; n never
		 * did. */
		hl__bug("rwlock: an unexpected signal to a reader in step 2b", 0);
	}
}

/* How a wait in the queue ended, or what comes next (steps 2 to 4c). */
enum wait_end {
	END_OWNED,              /* the lock is ours, n still queued: step 5 */
	END_GRANTED,            /* a read share; n out of our hands: done */
	END_HEAD,               /* n heads the queue: steps 3 and 4 */
	END_GAVE_UP,            /* the deadline, n given up as `how` says */
	END_LOOK,               /* step 4: the word changed, look again */
	END_RACE,               /* step 4: RELEASED, race again */
	END_YIELDED,            /* step 4c: our claim is taken back */
};

/* Step 2: n waits queued behind another waiter.  Returns END_HEAD (made
 * head), END_OWNED (handed the lock, or step 2b's share with n made head
 * meanwhile), END_GRANTED or END_GAVE_UP. */
static enum wait_end wait_queued(struct rwlock *l, struct hl__node *n, bool reader, int kind,
				 const struct hl__deadline *dl, uint64_t handoff_ns,
				 struct hl__thread *self, enum gave_up *how)
{
	if (reader && kind == HL_RWLOCK_PREFER_READER) {
		int admit = reader_admit(l, n, self);
		if (admit == ADMIT_TAKEN)
			return END_GRANTED;
		if (admit == ADMIT_HEAD)
			return END_OWNED;
	}
	uint32_t sig = wait_node(l, n, dl, 0, n->wait_start_ns + handoff_ns, true, handoff_ns, 0);
	if (sig == HL_WAIT_TIMEDOUT && (sig = give_up(l, n, how)) == HL_WAIT_TIMEDOUT)
		return END_GAVE_UP;
	if (sig == HL_SIG_GROUP || sig == HL_SIG_HANDED)
		hl__counter_add(&self->fx[HL_LK_HANDED], 1);
	if (sig == HL_SIG_GROUP) {
		/* A read share granted with our group: we are out of the
		 * queue, with nothing to pass on. */
		hl__thread_node_put(self);
		return END_GRANTED;
	}
	return sig == HL_SIG_HANDED ? END_OWNED : END_HEAD;
}

/* Step 4 (with 4b, and 4c's withdrawal): head n found s held (no live
 * flags: we are the head since head_since) and is spun out or due: it
 * sets its flags and waits.  *budget is its spin phase's slot (0: none),
 * ended here if it waits.  Returns END_OWNED (handed), END_RACE, END_LOOK, END_YIELDED or
 * END_GAVE_UP. */
static enum wait_end claim(struct rwlock *l, struct hl__node *n, bool reader, int kind,
			   const struct hl__deadline *dl, uint64_t s, bool due, uint64_t head_since,
			   uint64_t *budget, uint64_t handoff_ns, uint64_t yield_ns,
			   enum gave_up *how)
{
	/* Step 4b.  Always, not only when a link is seen: the share's CAS is
	 * what orders our look at the queue after the links of the readers
	 * whose step 2b saw the word before it; and the share stays until
	 * the flags are in, so that the word stays read-held from our look
	 * to our flags, and a reader that linked itself after the look
	 * finds it so in step 2b. */
	const bool share = !reader && kind == HL_RWLOCK_PREFER_READER && readers(clean(s));
	if (share) {
		if (!grant_with_share(l, n, s))
			return END_LOOK;
		/* Relaxed: the CAS below decides. */
		s = hl__load(&l->state, HL_RELAXED);
	}
	set_head(l, n->index);
	hl__node_arm(n);
	/* Release: `head` and the armed node are visible to the last
	 * releaser, whose acquire load sees the flags (and, with our share,
	 * it goes as a read unlock's).  The flags replace stale ones of a
	 * fork parent (the head is the only setter of live ones). */
	for (;;) {
		uint64_t flagged = (clean(s) & ~FLAGS & ~GEN_MASK) | flags_now(due);
		if (share && readers(s) == 1) {
			/* Our share is the last: it goes alone (no flags are
			 * live, so no signal is owed), and the free word is
			 * taken at our next look. */
			hl__fetch_sub(&l->state, ONE_READER, HL_RELEASE);
			return END_LOOK;
		}
		if (hl__cas(&l->state, &s, share ? flagged - ONE_READER : flagged, HL_RELEASE))
			break;
		if (!share)
			return END_LOOK;        /* the word changed: look again */
	}
	const bool yields = kind == HL_RWLOCK_WRITER_YIELDS && !reader;
	uint32_t sig = wait_node(l, n, dl, due ? *budget : 0,
				 due ? 0 : hl__tp_head_due_at(n, handoff_ns, head_since), false,
				 handoff_ns, yields ? hl__now_ns() + yield_ns : 0);
	/* Not due: the spin ran out and we parked.  Due: we wait for a
	 * handover, which says nothing of what spinning achieves. */
	if (*budget)
		spin_done(l, due ? HL_SPIN_CUT : HL_SPIN_LOST);
	*budget = 0;
	if (sig == WAIT_YIELD) {
		/* Step 4c. */
		sig = withdraw_flags(l, n);
		if (sig == FLAGS_WITHDRAWN)
			return END_YIELDED;
		if (sig == FLAGS_NOT_NAMED)     /* a release's signal comes */
			sig = wait_node(l, n, dl, 0, 0, false, handoff_ns, 0);
	}
	if (sig == HL_WAIT_TIMEDOUT && (sig = give_up(l, n, how)) == HL_WAIT_TIMEDOUT)
		return END_GAVE_UP;
	if (sig != HL_SIG_HANDED)
		return END_RACE;
	hl__counter_add(&hl__self()->fx[HL_LK_HANDED], 1);
	return END_OWNED;
}

/* Step 4c: head n's claim is down until *open_until.  Grant the readers
 * queued behind it, now and as the window closes (s, a load of the word,
 * has no live flags: we are the head); sleep the window out (nobody
 * signals a head without flags); 0 in *open_until once it is over. */
static void yield_window(struct rwlock *l, struct hl__node *n, uint64_t s, uint64_t now,
			 uint64_t *open_until, const struct hl__deadline *dl)
{
	if (readers(clean(s)) && !grant_readers_behind(l, n, s))
		return;         /* the word changed: look again */
	if (now >= *open_until)
		*open_until = 0;
	else if (hl__node_wait_woken(n, 0, *open_until, dl) != HL_WAIT_WOKEN)
		hl__bug("rwlock: a signal to a head without flags", 0);
}

/* Steps 3 to 4c: n heads the queue.  Returns END_OWNED or END_GAVE_UP
 * (WITHDRAWN when the deadline found n with no flags). */
static enum wait_end head_wait(struct rwlock *l, struct hl__node *n, bool reader, uint32_t tid,
			       int kind, const struct hl__deadline *dl, uint64_t handoff_ns,
			       enum gave_up *how)
{
	uint64_t budget = hl__spin_begin(spin_rec(l));  /* != 0: a spinner slot */
	uint64_t spin_start = hl__now_ns(), head_since = spin_start;
	/* Step 4c: how long our next claim lasts, and until when it is down
	 * (0: it is not). */
	uint64_t yield_ns = hl__rwlock_yield_ns(), open_until = 0;
	unsigned peer_spins = 0;
	/* Whether this spin phase found the lock taken: one that gets it at
	 * its first look (a head woken by RELEASED) teaches the record
	 * nothing. */
	bool held_seen = false;
	for (unsigned i = 1;; i++) {
		uint64_t s = hl__load(&l->state, HL_RELAXED), ns = take(s, reader, tid, kind);
		/* Acquire: pairs with the release of the last hold; the
		 * critical section starts here. */
		if (ns && hl__cas(&l->state, &s, ns, HL_ACQUIRE)) {
			if (budget)
				spin_done(l, held_seen ? HL_SPIN_WON : HL_SPIN_CUT);
			return END_OWNED;
		}
		if (ns)
			continue;
		held_seen = true;
		if (budget && i % HL_SPIN_CLOCK_EVERY) {
			hl__cpu_relax();
			continue;
		}
		uint64_t now = hl__now_ns();
		bool due = head_due(n, kind, now, handoff_ns, head_since);
		if (hl__deadline_passed(dl)) {
			if (budget)
				spin_done(l, HL_SPIN_CUT);
			*how = WITHDRAWN;
			return END_GAVE_UP;
		}
		if (open_until) {
			yield_window(l, n, s, now, &open_until, dl);
			continue;
		}
		if (!due && now - spin_start < budget)
			continue;
		if (!held(clean(s))) {
			/* Flags with no holder (a free word was taken above):
			 * a release is in progress. */
			hl__wait_for_peer(&peer_spins);
			continue;
		}
		enum wait_end end = claim(l, n, reader, kind, dl, s, due, head_since, &budget,
					  handoff_ns, yield_ns, how);
		if (end == END_YIELDED) {
			open_until = hl__now_ns() + yield_ns;
			if (yield_ns < YIELD_MAX_NS(hl__rwlock_yield_ns()))
				yield_ns *= 2;
		} else if (end == END_RACE) {
			budget = hl__spin_begin(spin_rec(l));
			spin_start = hl__now_ns();
			held_seen = false;
		} else if (end != END_LOOK) {
			return end;
		}
	}
}

/* A wait given up as `how` says (give_up): headship passed on if it is
 * ours to do, the node put back or left to the queue.  Returns ETIMEDOUT. */
static int given_up(struct rwlock *l, struct hl__node *n, enum gave_up how, struct hl__thread *self)
{
	if (how == WITHDRAWN) {
		/* Our flags withdrawn, or none set: we are the head. */
		hl__queue_pass_head(&l->tail, n, 0);
		hl__thread_node_put(self);
		return ETIMEDOUT;
	}
	/* The node is the queue's: a new one for this thread, then (if it is
	 * ours to do) headship passed on from it, which recycles it. */
	hl__thread_node_abandoned(self);
	if (how == ABANDONED_HEAD)
		hl__queue_pass_head(&l->tail, n, 0);
	return ETIMEDOUT;
}

static int lock_slow(struct rwlock *l, bool reader, uint32_t tid, int kind,
		     const struct hl__deadline *dl)
{
	/* PREFER_WRITER, WRITER_YIELDS: a writer that finds readers goes to
	 * the queue at once, where at its head it is due and keeps new
	 * readers out with its HANDOFF (it spins there, on its node, for the
	 * readers to drain); spinning here first would let readers stream
	 * past it for the whole budget.  Relaxed: a hint. */
	if (!(writer_first(kind) && !reader && readers(hl__load(&l->state, HL_RELAXED))) &&
	    lock_spin(l, reader, tid, kind, dl) == 0)
		return 0;
	if (reader && reader_wait_out(l, kind, dl) == 0)
		return 0;
	if (hl__deadline_passed(dl))
		return ETIMEDOUT;
	struct hl__thread *self = hl__self();
	struct hl__node *n = hl__thread_node_get(self);
	if (hl__unlikely(!n))
		return lock_poll(l, reader, tid, kind, dl);

	hl__queue_node_init(n, self, hl__now_ns());
	if (reader)
		n->flags |= HL_NODE_F_READER;
	hl__node_arm(n);
	const uint64_t handoff_ns = hl__handoff_ns();
	enum gave_up how = WITHDRAWN;
	/* Step 2 behind another waiter, steps 3 to 4c at the head. */
	enum wait_end end = hl__queue_enqueue(&l->tail, n)
				    ? wait_queued(l, n, reader, kind, dl, handoff_ns, self, &how)
				    : END_HEAD;
	if (end == END_HEAD)
		end = head_wait(l, n, reader, tid, kind, dl, handoff_ns, &how);
	switch (end) {
	case END_GRANTED:
		return 0;
	case END_OWNED:
		if (reader)
			grant_group(l, n, kind);
		leave_queue(l, n, reader, kind);
		hl__thread_node_put(self);
		return 0;
	case END_GAVE_UP:
		return given_up(l, n, how, self);
	default:
		hl__bug("rwlock: a wait that ended in a step", (unsigned long)end);
	}
}

/* The last hold went, and s, the word it left behind, has live flags and no
 * holder (the release committed): hand the lock to the head or wake it (see
 * Unlock above).  mine is what the word keeps of the caller's: 0 for a
 * release, ONE_READER for a downgrade (hl_rwlock_downgrade), whose share
 * stays beside whatever the head is handed (a reader head its own share; a
 * writer head only a wake-up, since the lock stays read-held).  Nobody else
 * can take the lock or set flags until the CAS below, so every access to
 * the lock object is made before it; after it, only the head's node
 * (docs/design.md invariant 7: the lock may be freed at once). */
static void release_to_head(struct rwlock *l, uint64_t s, uint64_t mine)
{
	/* The acquire that showed the flags synchronized with the release
	 * that set them, which followed the store to `head`. */
	struct hl__node *h = hl__node_at(head_index(l));
	bool parked;
	if (hl__node_claim(h, &parked)) {
		/* h can no longer leave.  The word can still change in one
		 * way: h, woken by its timer just before our claim, may add
		 * HANDOFF (mark_due); then it is handed the lock.  Release:
		 * our critical section is visible to the next holder (to h
		 * through the post as well); acquire: the other readers'
		 * releases (the RMWs we read from) reach it too, through us. */
		uint64_t ns, seen = s;
		for (;;) {
			ns = mine;
			if ((s & HANDOFF) && (is_reader(h) || !mine))
				ns += is_reader(h) ? ONE_READER : h->tid;
			if (hl__cas(&l->state, &s, ns, HL_ACQ_REL))
				break;
			if ((s & ~HANDOFF) != (seen & ~HANDOFF) || !(s & HANDOFF))
				hl__bug("rwlock: the word changed during a release", (unsigned long)s);
		}
		/* From here on, only h's node. */
		hl__node_post(h, ns != mine ? HL_SIG_HANDED : HL_SIG_RELEASED, parked);
		return;
	}
	/* h gave up (its deadline passed just after a step 5 recorded it):
	 * headship is ours to pass on, while nobody can take the lock (the
	 * flags, no holder). */
	hl__queue_pass_head(&l->tail, h, 0);
	/* Release: as above.  The only change the word may see meanwhile is
	 * HANDOFF from a mark_due that read the stale `head` (a later wait
	 * on h's recycled node): cleared with the rest, since no head is
	 * recorded (found by tests/models/rwlock.pml). */
	while (!hl__cas(&l->state, &s, mine, HL_ACQ_REL))
		;
}

int hl_rwlock_init(hl_rwlock_t *l)
{
	memset(l, 0, sizeof(*l));
	return 0;
}

int hl_rwlock_init_kind(hl_rwlock_t *pl, int kind)
{
	if (kind != HL_RWLOCK_FAIR && kind != HL_RWLOCK_PREFER_READER &&
	    kind != HL_RWLOCK_PREFER_WRITER && kind != HL_RWLOCK_WRITER_YIELDS)
		return EINVAL;
	memset(pl, 0, sizeof(*pl));
	/* Relaxed: published with the lock by whatever shares it. */
	hl__store(&R(pl)->head, (uint32_t)kind << KIND_SHIFT, HL_RELAXED);
	return 0;
}

int hl_rwlock_kind(const hl_rwlock_t *pl)
{
	return lock_kind((struct rwlock *)pl);
}

int hl_rwlock_destroy(hl_rwlock_t *pl)
{
	struct rwlock *l = R(pl);
	/* Acquire: a destroy that returns 0 happens after the last unlock. */
	uint64_t s = clean(hl__load(&l->state, HL_ACQUIRE));
	if (s || hl__queue_node(hl__load(&l->tail, HL_ACQUIRE)))
		return EBUSY;
	return 0;
}

/* Whether s, a load of the word, lets a reader in by adding a share and
 * nothing else: no writer, no flags (none of a fork parent's either: the
 * low 32 bits are all zero) and room for one more reader.  The common case
 * of take(s, true, ...) in every kind, which gives s + ONE_READER for it. */
static inline bool read_free(uint64_t s)
{
	return (uint32_t)s == 0 && readers(s) < HL_RWLOCK_MAX_READERS;
}

/* rdlock's steps from 0 on, for a share already counted (holds.h); held:
 * the thread held a share of l before. */
static int rdlock_counted(struct rwlock *l, int kind, const struct hl__deadline *dl, uint64_t s,
			  bool held)
{
	uint32_t tid;
	uint64_t ns;
	/* A CAS that fails because another reader came or went is retried
	 * here: only a writer or a due handoff sends a reader on.  Acquire:
	 * pairs with the release of the last write hold.  take() needs no
	 * TID for a reader: it is read only once the lock cannot be had now. */
	while ((ns = take(s, true, 0, kind)))
		if (hl__cas(&l->state, &s, ns, HL_ACQUIRE))
			return 0;
	int err = held ? nested_read(l, s) : -1;
	if (err >= 0)
		return err;
	tid = hl__tid();
	if (owned_by_me(s, tid))
		return EDEADLK;
	if (readers(s) >= HL_RWLOCK_MAX_READERS)
		return EAGAIN;
	if (hl__deadline_passed(dl))
		return ETIMEDOUT;
	return lock_slow(l, true, tid, kind, dl);
}

/* rdlock and its timed and deadline-less forms, from s, a load of the
 * word, with the share counted at `at` (holds.h), uncounted here if it is
 * not taken; held: the thread held a share of l in its table.  kind < 0:
 * l's own. */
static HL_NOINLINE int rdlock(struct rwlock *l, int kind, const struct hl__deadline *dl, uint64_t s,
			      int at, bool held)
{
	if (kind < 0)
		kind = lock_kind(l);
	int err = rdlock_counted(l, kind, dl, s, held || hl__reads_untracked());
	if (err)
		hl__reads_drop(at);
	return err;
}

/* A read lock whose share is not in entry 0 of the table: counted by the
 * table's full look, then rdlock (whose take() loop is the fast path's
 * CAS too).  Relaxed: the first look; the CAS orders the acquisition. */
static HL_NOINLINE int rdlock_add(struct rwlock *l, int kind, const struct hl__deadline *dl)
{
	bool held;
	int at = hl__reads_add(l, &held);
	return rdlock(l, kind, dl, hl__load(&l->state, HL_RELAXED), at, held);
}

/* Every read lock (kind < 0: l's own): count the share in the table's
 * entry 0 (holds.h), then the fast path's CAS when the word lets a reader
 * in by adding a share; the rest is out of line. */
static inline int read_lock(struct rwlock *l, int kind, const struct hl__deadline *dl)
{
	uint64_t w;
	if (hl__unlikely(!hl__reads_first(l, &w)))
		return rdlock_add(l, kind, dl);
	hl__reads_set_first(w + 1);
	uint64_t s = hl__load(&l->state, HL_RELAXED);
	/* Acquire: pairs with the release of the last write hold.  Anything
	 * else (flags, a writer, a CAS lost to another reader) is rdlock's. */
	if (hl__likely(read_free(s)) && hl__cas(&l->state, &s, s + ONE_READER, HL_ACQUIRE))
		return 0;
	return rdlock(l, kind, dl, s, 0, w & HL_HOLD_COUNT_MASK);
}

/* A write lock whose first CAS found s, not 0. */
static HL_NOINLINE int wrlock_contended(struct rwlock *l, int kind, const struct hl__deadline *dl,
					uint32_t tid, uint64_t s)
{
	if (owned_by_me(s, tid))
		return EDEADLK;
	if (hl__deadline_passed(dl))
		return ETIMEDOUT;
	return lock_slow(l, false, tid, kind, dl);
}

/* wrlock and its timed and deadline-less forms; the untimed one first
 * tries the fast path inline (hl_rwlock_wrlock). */
static HL_NOINLINE int wrlock(struct rwlock *l, int kind, const struct hl__deadline *dl)
{
	uint32_t tid = hl__tid();
	uint64_t s = 0;
	/* Acquire: pairs with the release of the last hold. */
	if (hl__likely(hl__cas(&l->state, &s, tid, HL_ACQUIRE)))
		return 0;
	return wrlock_contended(l, kind, dl, tid, s);
}

int hl_rwlock_rdlock(hl_rwlock_t *pl)
{
	return read_lock(R(pl), -1, NULL);
}

int hl_rwlock_wrlock(hl_rwlock_t *pl)
{
	struct rwlock *l = R(pl);
	uint32_t tid = hl__tid_known();
	uint64_t s = 0;
	if (hl__unlikely(!tid))
		return wrlock(l, lock_kind(l), NULL);   /* looks the TID up */
	/* Acquire: as wrlock.  The rest is out of line, so that this path
	 * needs no stack frame. */
	if (hl__likely(hl__cas(&l->state, &s, tid, HL_ACQUIRE)))
		return 0;
	return wrlock_contended(l, lock_kind(l), NULL, tid, s);
}

int hl_rwlock_timedrdlock(hl_rwlock_t *l, clockid_t clock, const struct timespec *abstime)
{
	struct hl__deadline dl;
	int err = hl__deadline_init(&dl, clock, abstime);
	return err ? err : read_lock(R(l), -1, &dl);
}

int hl_rwlock_timedwrlock(hl_rwlock_t *l, clockid_t clock, const struct timespec *abstime)
{
	struct hl__deadline dl;
	int err = hl__deadline_init(&dl, clock, abstime);
	return err ? err : wrlock(R(l), lock_kind(R(l)), &dl);
}

/* tryrdlock for a share counted already (holds.h); held: as rdlock. */
static int tryrdlock_counted(struct rwlock *l, int kind, bool held)
{
	uint64_t s = hl__load(&l->state, HL_RELAXED);
	for (;;) {
		uint64_t ns = take(s, true, 0, kind);
		if (!ns) {
			int err = held ? nested_read(l, s) : -1;
			if (err >= 0)
				return err;
			return readers(s) >= HL_RWLOCK_MAX_READERS ? EAGAIN : EBUSY;
		}
		/* Acquire: as rdlock.  A failed CAS (another reader came or
		 * went) is retried: tryrdlock fails only when a reader could
		 * not have the lock now. */
		if (hl__cas(&l->state, &s, ns, HL_ACQUIRE))
			return 0;
	}
}

static int tryrdlock(struct rwlock *l, int kind)
{
	bool held;
	int at = hl__reads_add(l, &held);
	int err = tryrdlock_counted(l, kind, held);
	if (err)
		hl__reads_drop(at);
	return err;
}

int hl_rwlock_tryrdlock(hl_rwlock_t *pl)
{
	return tryrdlock(R(pl), lock_kind(R(pl)));
}

int hl_rwlock_trywrlock(hl_rwlock_t *pl)
{
	struct rwlock *l = R(pl);
	uint32_t tid = hl__tid();
	uint64_t s = 0;
	/* Acquire: as wrlock.  A word that holds only a fork parent's flags
	 * is free here, as for every other call (take()). */
	do {
		if (hl__cas(&l->state, &s, tid, HL_ACQUIRE))
			return 0;
	} while (take(s, false, tid, 0));
	return EBUSY;
}

/* The unlock of a write hold, or EPERM (no hold, or another thread's), from
 * s, a load of the word.  Out of line: the read release needs no TID and
 * no stack frame. */
static HL_NOINLINE int unlock_writer(struct rwlock *l, uint64_t s)
{
	uint32_t tid = hl__tid();
	for (;;) {
		if (!owned_by_me(s, tid))
			return EPERM;
		if (has_live_flags(s)) {
			/* Commit: the TID goes, the flags stay (a release in
			 * progress: Unlock above).  Release: our critical
			 * section happens before the next holder's acquire;
			 * acquire: `head` is read next.  A failed CAS (the
			 * head withdrew its flags, or added HANDOFF) decides
			 * again. */
			uint64_t committed = s & ~WRITER_MASK;
			if (hl__cas(&l->state, &s, committed, HL_ACQ_REL)) {
				release_to_head(l, committed, 0);
				return 0;
			}
			continue;
		}
		/* No flags, or a fork parent's: the word becomes 0.  Release:
		 * the critical section happens before the next holder's
		 * acquire; acquire on failure, as the loads. */
		if (hl__cas(&l->state, &s, 0, HL_ACQ_REL))
			return 0;
	}
}

/* The last reader out, which took the count to 0 with live flags in old. */
static HL_NOINLINE int last_reader_out(struct rwlock *l, uint64_t old)
{
	/* A fork parent's flags left alone with no holder are dropped by
	 * the next acquisition (take).  Looked at here, out of line: the
	 * look at the fork generation (a fork check, thread.h) would cost
	 * every read unlock a stack frame. */
	if (has_live_flags(old))
		release_to_head(l, old - ONE_READER, 0);
	return 0;
}

/* Gives back a read share: one RMW.  Release: our reads happen before a
 * later writer's acquire.  Acquire: the last reader out carries the other
 * readers' releases on to a head it hands the lock to (release_to_head).
 * Returns the word before. */
static inline uint64_t give_back_share(struct rwlock *l)
{
	return hl__fetch_sub(&l->state, ONE_READER, HL_ACQ_REL);
}

/* A read unlock whose share is not in entry 0 of the table (holds.h), or
 * by a thread that holds no share (EPERM, unless foreign: rw_unlock). */
static HL_NOINLINE int read_unlock_slow(struct rwlock *l, bool foreign)
{
	int at = hl__reads_release_at(l);
	if (at == HL_HOLD_NONE && !foreign)
		return EPERM;
	uint64_t old = give_back_share(l);
	if (at != HL_HOLD_NONE)
		hl__reads_drop(at);
	if (readers(old) == 1 && (old & FLAGS))
		return last_reader_out(l, old);
	return 0;
}

/* hl_rwlock_unlock; foreign: a read unlock by a thread that holds no
 * share of l releases one all the same (glibc's, for the shim), where the
 * native call says EPERM. */
static inline int rw_unlock(struct rwlock *l, bool foreign)
{
	/* Acquire on every (re)load: a WAKE seen synchronizes with the head's
	 * release CAS, so that `head` can be read. */
	uint64_t s = hl__load(&l->state, HL_ACQUIRE);
	if (hl__likely(!writer(s) && readers(s))) {
		/* A share of ours (in entry 0, the common case), uncounted
		 * after it is given back (holds.h).  A handler that runs in
		 * between leaves the entry as it found it. */
		uint64_t w;
		if (hl__unlikely(!hl__reads_first_held(l, &w)))
			return read_unlock_slow(l, foreign);
		uint64_t old = give_back_share(l);
		hl__reads_set_first(w - 1);
		if (hl__unlikely(readers(old) == 1 && (old & FLAGS)))
			return last_reader_out(l, old);
		return 0;
	}
	/* Write-held by us, with no flags: the word becomes 0.  Release and
	 * acquire on failure: as unlock_writer, which takes every other case
	 * (flags, a fork parent's TID, another thread's hold, no hold). */
	if (hl__likely(s && s == hl__tid_known()) && hl__cas(&l->state, &s, 0, HL_ACQ_REL))
		return 0;
	return unlock_writer(l, s);
}

int hl_rwlock_unlock(hl_rwlock_t *pl)
{
	return rw_unlock(R(pl), false);
}

/* A downgrade whose commit left s, the head's flags with no holder (see
 * hl_rwlock_downgrade): the head, fixed meanwhile, is served as a release
 * serves it, except that the word keeps our read share. */
static void downgrade_to_head(struct rwlock *l, uint64_t s, int kind)
{
	/* Acquire (the commit's): the release that set the flags followed
	 * the store to `head`. */
	const uint32_t idx = head_index(l);
	struct hl__node *h = hl__node_at(idx);
	if (!is_reader(h) && kind != HL_RWLOCK_PREFER_READER) {
		/* A writer head keeps waiting, now for the readers: the flags
		 * stay, with our share beside them.  Release: as unlock.  The
		 * word changes meanwhile only by h's mark_due adding HANDOFF:
		 * nobody takes a word with flags and no holder, and h cannot
		 * withdraw from it. */
		while (!hl__cas(&l->state, &s, s + ONE_READER, HL_ACQ_REL))
			;
		/* h gave up just before, its own look too early to see a
		 * holder beside its flags? */
		if (withdraw_dead_head(l, idx, h))
			hl__queue_pass_head(&l->tail, h, 0);
		return;
	}
	/* A reader head due the lock is handed its share beside ours; any
	 * other (a reader not due; PREFER_READER: a writer head too, which
	 * then grants the readers queued behind it, step 4b) races again; a
	 * head that gave up has headship passed on. */
	release_to_head(l, s, ONE_READER);
}

int hl_rwlock_downgrade(hl_rwlock_t *pl)
{
	struct rwlock *l = R(pl);
	uint32_t tid = hl__tid();
	/* The share to come is counted first (holds.h). */
	bool held;
	int at = hl__reads_add(l, &held);
	/* Acquire: as in unlock. */
	uint64_t s = hl__load(&l->state, HL_ACQUIRE);
	for (;;) {
		if (!writer(s) || !owned_by_me(s, tid)) {
			hl__reads_drop(at);
			return EPERM;
		}
		if (!has_live_flags(s)) {
			/* Release: as unlock. */
			if (hl__cas(&l->state, &s, ONE_READER, HL_ACQ_REL))
				break;
			continue;
		}
		/* With a head's flags: commit first, as a release does (the
		 * TID goes, the flags stay), so that the head read next is the
		 * one the flags belong to (a head may withdraw its flags from a
		 * held word, and a new one set the same bits: found by
		 * tests/models/rwlock.pml).  Acquire and release: as
		 * unlock_writer's commit. */
		uint64_t committed = s & ~WRITER_MASK;
		if (hl__cas(&l->state, &s, committed, HL_ACQ_REL)) {
			downgrade_to_head(l, committed, lock_kind(l));
			break;
		}
	}
	return 0;
}

void hl_rwlock_holders(const hl_rwlock_t *pl, uint32_t *writer_tid, uint32_t *nreaders)
{
	/* Relaxed: a diagnostic snapshot, in one load. */
	uint64_t s = hl__load(&((struct rwlock *)pl)->state, HL_RELAXED);
	if (writer_tid)
		*writer_tid = writer(s);
	if (nreaders)
		*nreaders = readers(s);
}

/* A racy snapshot, for watchdogs (see hl__queue_describe). */
int hl_rwlock_describe(const hl_rwlock_t *pl, char *buf, size_t len)
{
	struct rwlock *l = (struct rwlock *)pl;
	/* Relaxed throughout: a racy snapshot for diagnostics. */
	uint64_t s = hl__load(&l->state, HL_RELAXED);
	uint32_t tail = hl__load(&l->tail, HL_RELAXED);
	uint32_t head = head_index(l);
	char q[512];
	struct hl__node *t = hl__queue_node(tail);
	/* From the recorded head, if the word says it is current. */
	size_t used = t && has_live_flags(s) ? hl__queue_describe(q, sizeof(q), head, t) : 0;
	q[used] = 0;
	return snprintf(buf, len,
			"hl_rwlock state=0x%016llx writer=%u readers=%u%s%s%s tail=%s%u head=%u "
			"spin-record=%u%s%s",
			(unsigned long long)s, writer(s), readers(s), (s & WAKE) ? " WAKE" : "",
			(s & HANDOFF) ? " HANDOFF" : "",
			(s & FLAGS) && !has_live_flags(s) ? " (stale: fork parent's)" : "",
			t ? "" : "none:", tail & HL_QUEUE_INDEX_MASK, head, spin_rec(l),
			used ? " queue (tid@node:state):" :
			       (t ? " queue: (head active, not recorded)" : ""), q);
}

/* ---- what the pthread shim asks of the rwlock (shim_api.h) ------------- */

int hl__rwlock_rdlock_kind(hl_rwlock_t *pl, int kind, const struct hl__deadline *dl)
{
	return read_lock(R(pl), kind, dl);
}

int hl__rwlock_tryrdlock_kind(hl_rwlock_t *pl, int kind)
{
	return tryrdlock(R(pl), kind);
}

int hl__rwlock_unlock_foreign(hl_rwlock_t *pl)
{
	return rw_unlock(R(pl), true);
}

int hl__rwlock_wrlock_kind(hl_rwlock_t *pl, int kind, const struct hl__deadline *dl)
{
	return wrlock(R(pl), kind, dl);
}

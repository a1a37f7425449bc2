/* hl_rwlock_t: a reader-writer lock whose whole state is one 64-bit word
 * (seed 004: owner, reader count and flags read in one load), with the TP
 * policy of hl_mutex (seed 000: stealing until the queue head is due a
 * handoff) and reader grouping (seed 000: readers queued behind writers are
 * granted together).  It waits on the waiting core (wait.h) and the MCS
 * waiter queue (queue.h), in FIFO order.
 *
 * State (16 bytes, all-zero = unlocked):
 *
 *   state (u64)  bits  0-21  writer TID, 0 when no writer
 *                bits 22-29  GEN: the fork generation in which the flags
 *                            were set (flags of another one count as absent)
 *                bit  30     WAKE: the queue head waits on its node for the
 *                            signal of whoever releases the last hold
 *                bit  31     HANDOFF: the head is due the lock; the last
 *                            release hands it over, nobody steals
 *                bits 32-63  reader count
 *   tail  (u32)  last queued waiter node (queue.h), 0 when none
 *   head  (u32)  the node that set WAKE/HANDOFF (valid while either is set)
 *
 *   state                      meaning
 *   -------------------------  ----------------------------------------------
 *   0                          free (waiters may be queued: the head is active)
 *   tid                        write-held
 *   k << 32                    read-held by k readers
 *   ... | WAKE                 held; the head sleeps until the last release
 *   ... | WAKE | HANDOFF       held; the last release hands the lock to the
 *                              head (its TID, or a count of 1 for a reader)
 *   (never a writer and readers at once; the flags always carry GEN)
 *
 * The low 32 bits are hl_mutex's word (src/mutex.c) with the reader count
 * above them; the protocol is hl_mutex's with a read side.
 *
 * Lock:
 *  1. Fast path.  Write: CAS(0 -> tid).  Read: CAS(s -> s + 1 reader) when
 *     there is no writer and no live HANDOFF: readers steal from queued
 *     writers until one is due.
 *  1b. Optimistic spinning, with a spinner slot, for the spin budget, on
 *     any holder, as long as no handoff is due.
 *  2. Queue: stamp this thread's node (a reader's carries HL_NODE_F_READER)
 *     and enqueue it; behind another waiter, park until made head, or until
 *     handed the lock (a handoff, or a reader group granted by its head).
 *  3. As head, spin on the word, taking it when it can (write: nobody holds
 *     it; read: no writer holds it).
 *  4. Spun out, or due (waited longer than the handoff threshold, or an RT
 *     thread): publish the node in `head`, arm it, CAS WAKE (and HANDOFF
 *     when due) into the held word, and wait: HANDED, the lock is ours;
 *     RELEASED, back to 3.
 *  5. Having the lock: a reader takes the readers queued behind it out of
 *     the queue (up to a writer that is due, or the last node, whose link
 *     is the enqueuers'), adds them to the reader count and signals them
 *     HANDED: a queue R W R W R W is served R R R, then W W W.  Then leave
 *     the queue as hl_mutex does: a parked successor is recorded in `head`
 *     with WAKE set, so the last release wakes it; a due one is woken now.
 *
 * Unlock (the last hold goes, with WAKE): claim the head's node, so that it
 * can no longer give up; then with HANDOFF write its TID (or one reader)
 * into the word and post HANDED, without it store 0 and post RELEASED.  A
 * head that gave up refuses the claim; the releaser then passes headship on
 * in its place, before it releases the word.  Only the last hold sees WAKE
 * at 0: a reader's release that leaves others holding is a plain
 * decrement.  The last reader out holds the lock until its release CAS: a
 * word with live flags and no holder gives nobody a share (take).  The
 * releasing CAS is the last access to the lock object, which its last user
 * may free at once (DESIGN.md invariant 7); only the head's node is touched
 * after it.  A thread that exits holding a write lock leaves it locked
 * (docs/core.md, "Owners"); a read hold is not tracked per thread.
 *
 * Bounded waiting: as hl_mutex; in addition a reader queued behind a due
 * writer is never granted ahead of it (step 5 stops there), and readers do
 * not steal while HANDOFF is set.
 *
 * Downgrade: the writer's TID becomes one reader in one CAS; if the head is
 * a reader waiting for the writer, it is woken to take its share now.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <hotlock/rwlock.h>

#include "config.h"
#include "queue.h"
#include "shim_api.h"
#include "thread.h"
#include "wait.h"

#define WRITER_MASK 0x003fffffull
#define GEN_SHIFT   22
#define GEN_MASK    (0xffull << GEN_SHIFT)
#define WAKE        (1ull << 30)
#define HANDOFF     (1ull << 31)
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
	return (s & FLAGS) && ((s >> GEN_SHIFT) & 0xff) == hl_fork_gen();
}

/* s without flags of a fork parent (they mean nothing here). */
static inline uint64_t clean(uint64_t s)
{
	return has_live_flags(s) ? s : s & ~(FLAGS | GEN_MASK);
}

/* The flags a head sets now: WAKE, HANDOFF if due, this generation. */
static inline uint64_t flags_now(bool due)
{
	return WAKE | (due ? HANDOFF : 0) | (uint64_t)hl_fork_gen() << GEN_SHIFT;
}

static inline bool owned_by_me(uint64_t s, uint32_t tid)
{
	/* In a fork child the forking thread's TID changed (see mutex.c). */
	return hl_owner_is_me(writer(s), tid);
}

static inline bool is_reader(const struct hl_node *n)
{
	return n->flags & HL_NODE_F_READER;
}


/* The state after taking the lock from s, or 0 if it cannot be taken now
 * (0 is never a held state).  A reader may share it with readers unless a
 * handoff is due (a queue head's own flags are never in s when it looks:
 * the releaser that woke it cleared them); a writer needs it free. */
static inline uint64_t take(uint64_t s, bool reader, uint32_t tid)
{
	s = clean(s);
	if (reader)
		/* Not from live flags with no holder either: the last reader
		 * out is between its decrement and its release to the head
		 * (release_to_head).  A share taken then would make a second
		 * "last reader out" of the same flags, and both would act on
		 * the head (found by tests/models/rwlock.pml). */
		return !writer(s) && !(s & HANDOFF) && readers(s) < HL_RWLOCK_MAX_READERS &&
		       (readers(s) || !(s & FLAGS)) ? s + ONE_READER : 0;
	return s ? 0 : tid;
}

/* Fallback when this thread has no node (see mutex.c's lock_poll). */
static int lock_poll(struct rwlock *l, bool reader, uint32_t tid, const struct hl_deadline *dl)
{
	long sleep_ns = 1000;
	for (;;) {
		uint64_t s = hl_load(&l->state, HL_RELAXED), ns = take(s, reader, tid);
		/* Acquire: the critical section starts here. */
		if (ns && hl_cas(&l->state, &s, ns, HL_ACQUIRE))
			return 0;
		if (hl_poll_backoff(dl, &sleep_ns))
			return ETIMEDOUT;
	}
}

/* Step 1b.  Returns 0, or EAGAIN: go and queue. */
static int lock_spin(struct rwlock *l, bool reader, uint32_t tid, const struct hl_deadline *dl)
{
	uint64_t budget = hl_spin_begin();
	if (!budget)
		return EAGAIN;
	int err = EAGAIN;
	uint64_t start = hl_now_ns();
	for (unsigned i = 1;; i++) {
		uint64_t s = hl_load(&l->state, HL_RELAXED), ns = take(s, reader, tid);
		/* Acquire: pairs with the release of the last hold. */
		if (ns && hl_cas(&l->state, &s, ns, HL_ACQUIRE)) {
			err = 0;
			break;
		}
		/* A due handoff is not for us.  A writer spins on readers too,
		 * for the budget like any spin: their holds have no bound, but
		 * short ones drain within it, and a writer that queued instead
		 * would sleep behind the queue (docs/rwlock.md). */
		if (clean(s) & HANDOFF)
			break;
		hl_cpu_relax();
		if (i % HL_SPIN_CLOCK_EVERY == 0 &&
		    (hl_now_ns() - start >= budget || hl_deadline_passed(dl)))
			break;
	}
	hl_spin_end();
	return err;
}

/* Step 5, the reader group: which waiters behind the head go with it. */
struct group {
	uint64_t now, handoff_ns;
};

static int group_member(const struct hl_node *w, void *arg)
{
	const struct group *g = arg;
	if (is_reader(w))
		return HL_EXTRACT_TAKE;
	/* A writer: readers behind it may pass it unless it is due. */
	return hl_node_due(w, g->now, g->handoff_ns) ? HL_EXTRACT_STOP : HL_EXTRACT_SKIP;
}

static void grant_group(struct rwlock *l, struct hl_node *n)
{
	struct group g = { hl_now_ns(), hl_handoff_ns() };
	uint32_t first;
	uint32_t count = hl_queue_extract(n, group_member, &g, HL_MAX_NODES, &first);
	if (!count)
		return;
	/* The count covers every member before any of them runs (its unlock
	 * decrements it).  Relaxed: we hold a read share, so the lock stays
	 * read-held and no writer can come in meanwhile; each member
	 * synchronizes with its signal's release.  No overflow: see the
	 * static assertion on HL_RWLOCK_MAX_READERS. */
	hl_fetch_add(&l->state, count * ONE_READER, HL_RELAXED);
	for (uint32_t idx = first; idx;) {
		struct hl_node *w = hl_node_at(idx);
		/* Relaxed: the list is ours (hl_queue_extract); read before
		 * the signal hands the node back to its owner. */
		idx = hl_load(&w->next, HL_RELAXED);
		if (!hl_node_signal(w, HL_SIG_GROUP)) {
			/* It gave up: its share goes (ours keeps the count
			 * above 0, so nobody needs waking), and the node is
			 * ours to recycle, out of the queue. */
			hl_fetch_sub(&l->state, ONE_READER, HL_RELAXED);
			hl_node_recycle(w);
		}
	}
}

/* Once the waiter n that set WAKE (as head, or recorded as head by step 5)
 * is due while the lock stays held, it adds HANDOFF: otherwise readers that
 * keep stealing the lock would keep it read-held, and the last release that
 * wakes the head would never come. */
static void mark_due(struct rwlock *l, const struct hl_node *n)
{
	/* Acquire: pairs with the release that set WAKE after `head`. */
	uint64_t s = hl_load(&l->state, HL_ACQUIRE);
	/* Relaxed `head`: ordered by that acquire.  Live flags naming n are
	 * n's: there is one head at a time, and the release that ended an
	 * earlier wait of the same node cleared its flags. */
	while (has_live_flags(s) && !(s & HANDOFF) && hl_load(&l->head, HL_RELAXED) == n->index) {
		/* Release: as the head's own flag CAS (step 4). */
		if (hl_cas(&l->state, &s, s | HANDOFF, HL_ACQ_REL))
			return;
	}
}

/* How often a due waiter that is not signalled looks again (mark_due). */
#define DUE_RECHECK_NS 1000000ull

/* Waits on n for a signal (steps 2 and 4).  A wait that is not due yet
 * wakes up when it becomes due, and every DUE_RECHECK_NS or handoff
 * threshold after that, to mark it so (mark_due): a queued waiter may be
 * recorded as head by step 5 at any time, even between two of its looks. */
static uint32_t wait_node(struct rwlock *l, struct hl_node *n, const struct hl_deadline *dl,
			  uint64_t spin_ns, bool due, uint64_t handoff_ns)
{
	const uint64_t every = handoff_ns > DUE_RECHECK_NS ? handoff_ns : DUE_RECHECK_NS;
	uint64_t wake = due ? 0 : n->wait_start_ns + handoff_ns;
	for (;;) {
		uint32_t sig = hl_node_wait_until(n, dl, spin_ns, wake);
		if (sig != HL_WAIT_WOKEN)
			return sig;
		mark_due(l, n);
		wake = hl_now_ns() + every;
		spin_ns = 0;
	}
}

/* Step 5's test of a new head that sleeps: woken now if it is due (to set
 * HANDOFF itself when it runs: handed the lock asleep, it would leave the
 * lock idle for a wake-up), or if it is a reader behind a reader (the last
 * node, which its group could not take: it may share the lock now rather
 * than sleep until the last reader leaves). */
static bool wake_new_head(const struct hl_node *d, void *arg)
{
	bool reader_owner = *(const bool *)arg;
	return hl_node_due(d, hl_now_ns(), hl_handoff_ns()) || (reader_owner && is_reader(d));
}

/* Step 5: the lock is ours; n leaves the queue. */
static void leave_queue(struct rwlock *l, struct hl_node *n, bool reader)
{
	struct hl_node *d = hl_queue_head_acquired(&l->tail, n, 0, wake_new_head, &reader);
	if (!d)
		return;
	/* Relaxed: published by the release fetch_or below. */
	hl_store(&l->head, d->index, HL_RELAXED);
	/* Release: pairs with the acquire load of the releaser, which then
	 * reads `head`.  We hold the lock, so it stays held until then; no
	 * other live flags can be in the word (only a head sets them, and the
	 * release that woke us cleared ours). */
	hl_fetch_or(&l->state, flags_now(false), HL_RELEASE);
}

static int lock_slow(struct rwlock *l, bool reader, uint32_t tid, const struct hl_deadline *dl)
{
	if (lock_spin(l, reader, tid, dl) == 0)
		return 0;
	if (hl_deadline_passed(dl))
		return ETIMEDOUT;
	struct hl_thread *self = hl_self();
	struct hl_node *n = hl_thread_node_get(self);
	if (hl_unlikely(!n))
		return lock_poll(l, reader, tid, dl);

	uint64_t now = hl_now_ns();
	hl_queue_node_init(n, self, now);
	if (reader)
		n->flags |= HL_NODE_F_READER;
	hl_node_arm(n);
	const uint64_t handoff_ns = hl_handoff_ns();
	uint64_t budget = 0;    /* != 0 while we hold a spinner slot */
	uint32_t sig;

	/* Step 2. */
	if (hl_queue_enqueue(&l->tail, n)) {
		sig = wait_node(l, n, dl, 0, false, handoff_ns);
		if (sig == HL_WAIT_TIMEDOUT)
			goto abandoned;
		if (sig == HL_SIG_GROUP) {
			/* A read share granted with our group: we are out of
			 * the queue, with nothing to pass on. */
			hl_thread_node_put(self);
			return 0;
		}
		if (sig == HL_SIG_HANDED)
			goto owned;
	}

	/* Steps 3 and 4: n is the head. */
	budget = hl_spin_begin();
	uint64_t spin_start = hl_now_ns();
	unsigned peer_spins = 0;
	for (unsigned i = 1;; i++) {
		uint64_t s = hl_load(&l->state, HL_RELAXED), ns = take(s, reader, tid);
		if (ns) {
			/* Acquire: pairs with the release of the last hold;
			 * the critical section starts here. */
			if (hl_cas(&l->state, &s, ns, HL_ACQUIRE))
				goto owned;
			continue;
		}
		if (budget && i % HL_SPIN_CLOCK_EVERY) {
			hl_cpu_relax();
			continue;
		}
		now = hl_now_ns();
		bool due = hl_node_due(n, now, handoff_ns);
		if (hl_deadline_passed(dl))
			goto timeout_head;
		if (!due && now - spin_start < budget)
			continue;
		if (!held(clean(s))) {
			/* Flags with no holder (a free word was taken above):
			 * the last reader out is about to release the word. */
			hl_wait_for_peer(&peer_spins);
			continue;
		}
		/* Relaxed: published by the release CAS below. */
		hl_store(&l->head, n->index, HL_RELAXED);
		hl_node_arm(n);
		/* Release: `head` and the armed node are visible to the last
		 * releaser, whose acquire load sees the flags.  The flags
		 * replace stale ones of a fork parent (the head is the only
		 * setter of live ones). */
		uint64_t flagged = (clean(s) & ~FLAGS & ~GEN_MASK) | flags_now(due);
		if (!hl_cas(&l->state, &s, flagged, HL_RELEASE))
			continue;
		sig = wait_node(l, n, dl, due ? budget : 0, due, handoff_ns);
		if (budget)
			hl_spin_end();
		budget = 0;
		if (sig == HL_SIG_HANDED)
			goto owned;
		if (sig == HL_WAIT_TIMEDOUT)
			goto abandoned;         /* the releaser passes headship on */
		budget = hl_spin_begin();       /* RELEASED: race again */
		spin_start = hl_now_ns();
	}

owned:
	if (budget)
		hl_spin_end();
	if (reader)
		grant_group(l, n);
	leave_queue(l, n, reader);
	hl_thread_node_put(self);
	return 0;

timeout_head:
	if (budget)
		hl_spin_end();
	hl_queue_pass_head(&l->tail, n, 0);
	hl_thread_node_put(self);
	return ETIMEDOUT;

abandoned:
	/* Flags of ours in the word stay until the last release, which finds
	 * the node abandoned and passes headship on (a due writer that gave up
	 * keeps new readers out until then, as if it still waited: see
	 * docs/rwlock.md). */
	hl_thread_node_abandoned(self);
	return ETIMEDOUT;
}

/* The last hold goes, and s has live WAKE: hand the lock to the head or wake
 * it (see Unlock above).  The caller is the write holder, or the reader that
 * took the count to 0: in either case nobody else can take the lock until
 * the CAS below (take() gives no share from flags with no holder), so every
 * access to the lock object is made before it; after it, only the head's
 * node (DESIGN.md invariant 7: the lock may be freed at once). */
static void release_to_head(struct rwlock *l, uint64_t s)
{
	for (;;) {
		/* Relaxed: the acquire load that showed WAKE synchronized with
		 * the release that set it, which followed the store to `head`. */
		struct hl_node *h = hl_node_at(hl_load(&l->head, HL_RELAXED));
		bool parked;
		if (hl_node_claim(h, &parked)) {
			/* h can no longer leave.  The word can still change in
			 * one way: h, woken by its timer just before our claim,
			 * may add HANDOFF (mark_due); then it is handed the
			 * lock.  Release: our critical section is visible to
			 * the next holder (to h through the post as well);
			 * acquire: the other readers' releases (the RMWs we read
			 * from) reach it too, through us. */
			uint64_t ns, seen = s;
			for (;;) {
				ns = !(s & HANDOFF) ? 0 : is_reader(h) ? ONE_READER : h->tid;
				if (hl_cas(&l->state, &s, ns, HL_ACQ_REL))
					break;
				if ((s & ~HANDOFF) != (seen & ~HANDOFF) || !(s & HANDOFF))
					hl__bug("rwlock: the word changed during a release",
						(unsigned long)s);
			}
			/* From here on, only h's node. */
			hl_node_post(h, ns ? HL_SIG_HANDED : HL_SIG_RELEASED, parked);
			return;
		}
		/* h gave up (timed out): headship is ours to pass on, while
		 * the lock is still ours.  A write holder first drops h's
		 * flags (nobody else changes the word meanwhile; relaxed:
		 * nothing is published by it): the new head may set flags on
		 * the held word while we pass, and they must not be mistaken
		 * for h's (the same bits) by the CAS below, or that head would
		 * sleep unsignalled.  The last reader out keeps them: they are
		 * what keeps others out, and a word with no holder gets no new
		 * flags (the head waits for it to be free). */
		if (writer(s)) {
			s &= ~(FLAGS | GEN_MASK);
			hl_store(&l->state, s, HL_RELAXED);
		}
		hl_queue_pass_head(&l->tail, h, 0);
		/* Release: as above; acquire on failure: the new head's flags,
		 * then `head`, are read as at the start. */
		for (;;) {
			if (hl_cas(&l->state, &s, 0, HL_ACQ_REL))
				return;
			if (writer(s) && has_live_flags(s))
				break;          /* a new head's flags: serve it */
			/* No holder: nobody set new flags, but a mark_due that
			 * read the stale `head` may have added HANDOFF (h itself,
			 * woken by its timer before it gave up, or a later wait
			 * on h's recycled node): cleared with the rest, since
			 * no head is recorded.  Serving it would claim h again
			 * (found by tests/models/rwlock.pml). */
		}
	}
}

int hl_rwlock_init(hl_rwlock_t *l)
{
	memset(l, 0, sizeof(*l));
	return 0;
}

int hl_rwlock_destroy(hl_rwlock_t *pl)
{
	struct rwlock *l = R(pl);
	/* Acquire: a destroy that returns 0 happens after the last unlock. */
	uint64_t s = clean(hl_load(&l->state, HL_ACQUIRE));
	if (s || hl_queue_node(hl_load(&l->tail, HL_ACQUIRE)))
		return EBUSY;
	return 0;
}

/* rdlock and its timed and deadline-less forms, from s, a load of the
 * word.  The untimed rdlock first tries the common case inline (read_free). */
static HL_NOINLINE int rdlock(struct rwlock *l, const struct hl_deadline *dl, uint64_t s)
{
	uint32_t tid;
	uint64_t ns;
	/* A CAS that fails because another reader came or went is retried
	 * here: only a writer or a due handoff sends a reader to the slow
	 * path.  Acquire: pairs with the release of the last write hold.
	 * take() needs no TID for a reader: it is read only once the lock
	 * cannot be had now. */
	while ((ns = take(s, true, 0)))
		if (hl_cas(&l->state, &s, ns, HL_ACQUIRE))
			return 0;
	tid = hl_tid();
	if (owned_by_me(s, tid))
		return EDEADLK;
	if (readers(s) >= HL_RWLOCK_MAX_READERS)
		return EAGAIN;
	if (hl_deadline_passed(dl))
		return ETIMEDOUT;
	return lock_slow(l, true, tid, dl);
}

/* A write lock whose first CAS found s, not 0. */
static HL_NOINLINE int wrlock_contended(struct rwlock *l, const struct hl_deadline *dl,
					uint32_t tid, uint64_t s)
{
	if (owned_by_me(s, tid))
		return EDEADLK;
	if (hl_deadline_passed(dl))
		return ETIMEDOUT;
	return lock_slow(l, false, tid, dl);
}

/* wrlock and its timed and deadline-less forms; the untimed one first
 * tries the fast path inline (hl_rwlock_wrlock). */
static HL_NOINLINE int wrlock(struct rwlock *l, const struct hl_deadline *dl)
{
	uint32_t tid = hl_tid();
	uint64_t s = 0;
	/* Acquire: pairs with the release of the last hold. */
	if (hl_likely(hl_cas(&l->state, &s, tid, HL_ACQUIRE)))
		return 0;
	return wrlock_contended(l, dl, tid, s);
}

/* Whether s, a load of the word, lets a reader in by adding a share and
 * nothing else: no writer, no flags (none of a fork parent's either: the
 * low 32 bits are all zero) and room for one more reader.  The common case
 * of take(s, true, ...), which gives s + ONE_READER for it. */
static inline bool read_free(uint64_t s)
{
	return (uint32_t)s == 0 && readers(s) < HL_RWLOCK_MAX_READERS;
}

int hl_rwlock_rdlock(hl_rwlock_t *pl)
{
	struct rwlock *l = R(pl);
	uint64_t s = hl_load(&l->state, HL_RELAXED);
	/* Acquire: pairs with the release of the last write hold.  Anything
	 * else (flags, a writer, a CAS lost to another reader) is rdlock's. */
	if (hl_likely(read_free(s)) && hl_cas(&l->state, &s, s + ONE_READER, HL_ACQUIRE))
		return 0;
	return rdlock(l, NULL, s);
}

int hl_rwlock_wrlock(hl_rwlock_t *pl)
{
	struct rwlock *l = R(pl);
	uint32_t tid = hl_tid_known();
	uint64_t s = 0;
	if (hl_unlikely(!tid))
		return wrlock(l, NULL);         /* looks the TID up */
	/* Acquire: as wrlock.  The rest is out of line, so that this path
	 * needs no stack frame. */
	if (hl_likely(hl_cas(&l->state, &s, tid, HL_ACQUIRE)))
		return 0;
	return wrlock_contended(l, NULL, tid, s);
}

int hl_rwlock_timedrdlock(hl_rwlock_t *l, clockid_t clock, const struct timespec *abstime)
{
	struct hl_deadline dl;
	int err = hl_deadline_init(&dl, clock, abstime);
	/* Relaxed: the first look; rdlock's CAS orders the acquisition. */
	return err ? err : rdlock(R(l), &dl, hl_load(&R(l)->state, HL_RELAXED));
}

int hl_rwlock_timedwrlock(hl_rwlock_t *l, clockid_t clock, const struct timespec *abstime)
{
	struct hl_deadline dl;
	int err = hl_deadline_init(&dl, clock, abstime);
	return err ? err : wrlock(R(l), &dl);
}

int hl_rwlock_tryrdlock(hl_rwlock_t *pl)
{
	struct rwlock *l = R(pl);
	uint64_t s = hl_load(&l->state, HL_RELAXED);
	for (;;) {
		uint64_t ns = take(s, true, 0);
		if (!ns)
			return readers(s) >= HL_RWLOCK_MAX_READERS ? EAGAIN : EBUSY;
		/* Acquire: as rdlock.  A failed CAS (another reader came or
		 * went) is retried: tryrdlock fails only when a reader could
		 * not have the lock now. */
		if (hl_cas(&l->state, &s, ns, HL_ACQUIRE))
			return 0;
	}
}

int hl_rwlock_trywrlock(hl_rwlock_t *pl)
{
	struct rwlock *l = R(pl);
	uint64_t s = 0;
	/* Acquire: as wrlock. */
	return hl_cas(&l->state, &s, hl_tid(), HL_ACQUIRE) ? 0 : EBUSY;
}

/* The unlock of a write hold, or EPERM (no hold, or another thread's), from
 * s, a load of the word.  Out of line: the read release needs no TID and
 * no stack frame. */
static HL_NOINLINE int unlock_writer(struct rwlock *l, uint64_t s)
{
	uint32_t tid = hl_tid();
	for (;;) {
		if (!owned_by_me(s, tid))
			return EPERM;
		if (has_live_flags(s)) {
			release_to_head(l, s);
			return 0;
		}
		/* No flags, or a fork parent's: the word becomes 0.  Release:
		 * the critical section happens before the next holder's
		 * acquire; acquire on failure, as the loads. */
		if (hl_cas(&l->state, &s, 0, HL_ACQ_REL))
			return 0;
	}
}

/* The last reader out, which took the count to 0 with live flags in old. */
static HL_NOINLINE int last_reader_out(struct rwlock *l, uint64_t old)
{
	release_to_head(l, old - ONE_READER);
	return 0;
}

int hl_rwlock_unlock(hl_rwlock_t *pl)
{
	struct rwlock *l = R(pl);
	/* Acquire on every (re)load: a WAKE seen synchronizes with the head's
	 * release CAS, so that `head` can be read. */
	uint64_t s = hl_load(&l->state, HL_ACQUIRE);
	if (hl_likely(!writer(s) && readers(s))) {
		/* A read share: one RMW.  Release: our reads happen before a
		 * later writer's acquire.  Acquire: the last reader out carries
		 * the other readers' releases on to a head it hands the lock
		 * to (release_to_head). */
		uint64_t old = hl_fetch_sub(&l->state, ONE_READER, HL_ACQ_REL);
		if (hl_unlikely(readers(old) == 1 && has_live_flags(old)))
			return last_reader_out(l, old);
		/* A fork parent's flags left alone with no holder are
		 * dropped by the next acquisition (take). */
		return 0;
	}
	/* Write-held by us, with no flags: the word becomes 0.  Release and
	 * acquire on failure: as unlock_writer, which takes every other case
	 * (flags, a fork parent's TID, another thread's hold, no hold). */
	if (hl_likely(s && s == hl_tid_known()) && hl_cas(&l->state, &s, 0, HL_ACQ_REL))
		return 0;
	return unlock_writer(l, s);
}

int hl_rwlock_downgrade(hl_rwlock_t *pl)
{
	struct rwlock *l = R(pl);
	uint32_t tid = hl_tid();
	/* Acquire: as in unlock. */
	uint64_t s = hl_load(&l->state, HL_ACQUIRE);
	for (;;) {
		if (!writer(s) || !owned_by_me(s, tid))
			return EPERM;
		/* Relaxed: the acquire load that showed WAKE ordered it. */
		struct hl_node *h = has_live_flags(s) ? hl_node_at(hl_load(&l->head, HL_RELAXED)) : NULL;
		if (h && is_reader(h)) {
			/* The head is a reader waiting for us: readers may
			 * come in now.  Clear the flags and let it race again
			 * (release: as unlock). */
			if (!hl_cas(&l->state, &s, ONE_READER, HL_ACQ_REL))
				continue;
			if (!hl_node_signal(h, HL_SIG_RELEASED))
				hl_queue_pass_head(&l->tail, h, 0);     /* h gave up */
			return 0;
		}
		/* A writer head (or none) keeps waiting, for the readers now.
		 * Release: our writes are visible to the readers that come in
		 * and to the next writer. */
		uint64_t ns = (h ? s & (FLAGS | GEN_MASK) : 0) | ONE_READER;
		if (hl_cas(&l->state, &s, ns, HL_ACQ_REL))
			return 0;
	}
}

void hl_rwlock_holders(const hl_rwlock_t *pl, uint32_t *writer_tid, uint32_t *nreaders)
{
	/* Relaxed: a diagnostic snapshot, in one load. */
	uint64_t s = hl_load(&((struct rwlock *)pl)->state, HL_RELAXED);
	if (writer_tid)
		*writer_tid = writer(s);
	if (nreaders)
		*nreaders = readers(s);
}

/* A racy snapshot, for watchdogs (see hl_queue_describe). */
int hl_rwlock_describe(const hl_rwlock_t *pl, char *buf, size_t len)
{
	struct rwlock *l = (struct rwlock *)pl;
	/* Relaxed throughout: a racy snapshot for diagnostics. */
	uint64_t s = hl_load(&l->state, HL_RELAXED);
	uint32_t tail = hl_load(&l->tail, HL_RELAXED);
	uint32_t head = hl_load(&l->head, HL_RELAXED);
	char q[512];
	struct hl_node *t = hl_queue_node(tail);
	/* From the recorded head, if the word says it is current. */
	size_t used = t && has_live_flags(s) ? hl_queue_describe(q, sizeof(q), head, t) : 0;
	q[used] = 0;
	return snprintf(buf, len,
			"hl_rwlock state=0x%016llx writer=%u readers=%u%s%s%s tail=%s%u head=%u%s%s",
			(unsigned long long)s, writer(s), readers(s), (s & WAKE) ? " WAKE" : "",
			(s & HANDOFF) ? " HANDOFF" : "",
			(s & FLAGS) && !has_live_flags(s) ? " (stale: fork parent's)" : "",
			t ? "" : "none:", tail & HL_QUEUE_INDEX_MASK, head,
			used ? " queue (tid@node:state):" :
			       (t ? " queue: (head active, not recorded)" : ""), q);
}

/* ---- what the pthread shim asks of the rwlock (shim_api.h) ------------- */

int hl__rwlock_rdlock_held(hl_rwlock_t *pl)
{
	struct rwlock *l = R(pl);
	/* Relaxed: the caller's own read hold keeps the count above zero
	 * and any writer out; the critical section it enters is the one it
	 * is in already. */
	uint64_t s = hl_load(&l->state, HL_RELAXED);
	do {
		if (readers(s) >= HL_RWLOCK_MAX_READERS)
			return EAGAIN;
	} while (!hl_cas(&l->state, &s, s + ONE_READER, HL_RELAXED));
	return 0;
}

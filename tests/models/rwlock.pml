/* Model of hl_rwlock (src/rwlock.c) on the FIFO waiter queue (src/queue.c)
 * and the waiting core (src/wait.c).
 *
 * Modelled functions: rdlock / wrlock (fast paths; optimistic spinning,
 * lock_spin, as repeated attempts), lock_slow (enqueue, wait on the node:
 * HEAD, HANDED and GROUP; the head loop with take and the WAKE or
 * WAKE|HANDOFF CAS into a held word; RELEASED: race again; a head's
 * timeout), wait_node with hl_node_wait_until's timed wake-up and
 * mark_due, grant_group with hl_queue_extract and group_member,
 * leave_queue (pass_head with HL_PASS_DEFER_WAKE, a parked successor recorded
 * in `head` with WAKE, a due one or a reader behind a reader owner woken at
 * once), hl_rwlock_unlock (the writer's CAS to 0 or release_to_head, the
 * reader's fetch_sub and, for the last reader out, release_to_head),
 * release_to_head (claim the head's node first; then CAS the word to the
 * head's TID or one reader with HANDOFF, else to 0, recomputing when the
 * head's mark_due added HANDOFF, and post HANDED or RELEASED; a head that
 * gave up: a write holder drops its flags, headship is passed on while the
 * lock is still held, then the CAS to 0, serving a new head whose flags
 * made it fail), hl_rwlock_downgrade (-DDOWNGRADE), hl_queue_enqueue,
 * hl_queue_pass_head (FIFO, recycling abandoned nodes), hl_node_signal,
 * hl_node_claim + hl_node_post.
 *
 * The protocol modelled is src/rwlock.c as of 82caaed: release_to_head as
 * above (cd7e9af; last_reader_out is gone), with the fix that spin showed
 * to be needed: when the last reader out finds the head gone, its CAS to 0
 * after the pass may fail because that head, before it gave up, added
 * HANDOFF (mark_due, after the fetch_sub that read the word); it tries
 * again (on a word with no holder nobody else sets flags).  At cd7e9af it
 * took the word for a new head's flags and claimed the recycled node again
 * (BUG_LAST_READER_SERVES_GONE_HEAD: hl__bug, or the claim of another wait
 * if the node was reused).  take() has the fix of
 * cac37cf that spin showed to be needed: it refuses a reader a word with
 * live flags and no holder (the last reader out is releasing it to the
 * head, and holds it until its CAS); BUG_STEAL_FROM_RELEASE is take()
 * without it.  BUG_WITHDRAW_FLAGS reproduces src/rwlock.c at 5b504ba (a
 * head that gives up takes its flags back, with the release code of then),
 * and BUG_RELEASE_BEFORE_PASS the release code before cd7e9af.  See
 * docs/verification.md.
 *
 * Abstractions:
 *  - Sequential consistency, as in the other models.
 *  - The state word is its fields (writer, reader count, WAKE, HANDOFF),
 *    changed together in one step wherever the C code uses one CAS or RMW;
 *    a CAS compares every field.  GEN, the fork generation, is left out
 *    (flags are always live within one process), and so are the spinner
 *    slots, lock_poll (the take retried, as the fast path here) and the
 *    reader count's limit.
 *  - Time is not modelled: whether a waiter is due (at the head's flag
 *    CAS, in group_member's look at a writer, in leave_queue), whether a
 *    spin budget is spent and whether a deadline passed are free choices,
 *    so every timing is explored.  Going to the queue is a free choice at
 *    every fast-path attempt (a stale load, a spent budget), as in
 *    mutex.pml.
 *  - The waiting core is the node's state, as in cna.pml (parking and
 *    futex wake-ups are checked in wait.pml): a parked waiter returns when
 *    its node leaves PARKED, and a deadline is taken after parking (giving
 *    up before it shows others nothing that giving up right after parking
 *    does not).  hl_node_wait_until's wake-up (HL_WAIT_WOKEN: the waiter
 *    turned due, or looks again) happens only while live flags name the
 *    waiter's node without HANDOFF, i.e. when its mark_due has something
 *    to do.  Any other wake-up takes the node from PARKED back to WAITING
 *    and parks it again: the states on the way are those of a waiter that
 *    has not parked yet, so no interleaving is lost, and a waiter that can
 *    never be signalled stays blocked (an invalid end state) instead of
 *    waking for ever.
 *  - Steps merged, each one with a single read or write of shared state:
 *    the node's fields with the enqueue's xchg (private until then); the
 *    head's load of a held word, `head`, the arming and the flag CAS (a CAS
 *    that fails is a retry, and nobody reads `head` or the node while no
 *    flags are set); mark_due's load, its look at `head` and its CAS
 *    (`head` does not change while flags naming n are set: only n in its
 *    head loop, or the holder recording n, writes it); hl_queue_extract's
 *    reads of the link into a waiter, its own
 *    link and its state (a non-zero link changes only by the head's hand,
 *    so the reads act as if at the moment of the last one), with the
 *    unlinking of the interior of the chain, which is the head's.
 *  - release_to_head's read of `head`, its claim and its first try of the
 *    CAS are one step (with h's flags dropped by a write holder when the
 *    claim is refused): nobody else writes `head` or the word meanwhile
 *    but h's mark_due, which commutes with the claim (h's wake-up precedes
 *    the claim, which needs a node that is not woken), so that a mark_due
 *    between the claim and the CAS is the same run as one before the
 *    claim: the CAS fails and is tried again either way.  A node CLAIMED
 *    is waited on until the post (wait_until), without a look that sees
 *    CLAIMED or a deadline that finds it: neither changes anything that
 *    another thread sees.
 *  - Each lock call uses a fresh node (node reuse is the waiting core's
 *    business); READERS reader threads and WRITERS writer threads make
 *    ITER lock calls each.  A node whose life ended (put back by its owner,
 *    or recycled) must not be signalled, claimed or recycled again: in the
 *    C code it may be in use for another wait by then.
 *  - A lock call's locals are forgotten once its critical section starts
 *    and when it has ended (FORGET_CALL): nobody reads them again, so
 *    states that differ only in them are one.
 *
 * The liveness variant (-DLIVE, no timeouts, no downgrades) asks whether a
 * thread can wait for ever while the others keep taking the lock: above
 * all a writer at the queue head while readers keep coming and stealing
 * shares past it.  That is an infinite run, not an end state, so R2 cannot
 * see it; here each thread locks and unlocks for ever, and spin looks for
 * an acceptance cycle of the negated formula (R6) under weak fairness, as
 * in mutex.pml's M5.  It runs with 2 readers and 1 writer (334,841 states
 * before the fairness product).  What changes:
 *  - Time passes.  With "due" a free choice, a run could answer "not yet"
 *    for ever, which no clock allows.  Timer(t) stands for the clock
 *    instead: it may set due_t[t] at any step after t enqueued (when the C
 *    code stamps the node's start time) until t holds the lock, and weak
 *    fairness makes it fire, since it stays enabled until it does.  The
 *    head's flag CAS (HANDOFF or not), group_member's look at a writer
 *    (stop or skip) and leave_queue's look at a deferred successor read
 *    due_t; hl_node_wait_until's wake-up happens only once the waiter's
 *    timer fired (its deadline is the threshold), so that a waiter is not
 *    woken to find itself not yet due.  A timer firing early or late is
 *    one more interleaving.
 *  - The head's load and CAS are one step already (see "Steps merged"),
 *    which here also assumes that the head's CAS loop on the word succeeds
 *    in the end (lock-free, not wait-free), as mutex.pml's M5 states; and
 *    so is a take.
 *  - Each thread reuses one node, as the C code does: put() starts its
 *    life again.  Values nobody reads again are forgotten so that rounds
 *    differing only in them are one state: the round's locals, `head` in
 *    the step that clears the flags (it is read only while flags are set),
 *    and a node's state and link when its owner puts it back (its
 *    successor was read, and a late access trips the life assertions).
 *  - The assertions R1, R3 and R5 are checked as in the other rows.
 *
 * Properties:
 *  R1 exclusion: a writer in its critical section is alone there, readers
 *     share it; the word agrees: a writer in its critical section is the
 *     word's writer with no readers, and the reader count covers every
 *     thread that holds a read share (the ghost rholders, from the
 *     acquisition to the unlock's decrement) at every acquisition, grant
 *     and release (assert);
 *  R2 no lost wake-up and no deadlock: every thread finishes (no invalid end
 *     state), timed-out waiters and heads included;
 *  R3 handoff: once HANDOFF is in the word, or the waiter that the flags
 *     name has woken up due (its mark_due returned), the next holder is
 *     that waiter: no reader steals a share, no writer or head takes the
 *     lock, no group is granted first (the ghost handoff_to, checked at
 *     every acquisition), and the handoff goes to that waiter; the CAS of a
 *     release to a claimed head fails only because HANDOFF was added by
 *     that head's mark_due (the hl__bug check of release_to_head), and then
 *     hands the lock over; the CAS after a pass fails only because a new
 *     head set its flags on a write holder's word, or, on the last reader
 *     out's, because the head that gave up had added HANDOFF.  The debt is
 *     dropped only when the waiter gave up (the release passes headship
 *     on), or by a downgrade that wakes a reader head (by design woken to
 *     race for its share, not handed one);
 *  R4 clean end state: the word free (no writer, no readers, no flags), the
 *     queue empty, and every node's life ended exactly once (put back by
 *     its owner, or abandoned and recycled) (assert);
 *  R5 reader groups: a member is a live, waiting reader node queued behind
 *     the granting head, never the last node; after the extraction no
 *     member is reachable from the head; the granter holds a read share,
 *     and no writer and no flags are in the word while the group is
 *     counted and signalled; a queue head never finds flags in the word
 *     (only a head sets them, and the release that woke it cleared its
 *     own), and neither does leave_queue's fetch_or (assert);
 *  R6 (-DLIVE) no starvation: under weak fairness, with time as the timer
 *     processes above, every thread enters its critical section infinitely
 *     often, []<>(cs_who == t) for each thread t (ltl, pan -a -f): in
 *     particular a writer at the queue head behind readers that keep
 *     coming (its timer fires, mark_due adds HANDOFF, stealing stops and
 *     the last reader out hands it the lock), and a reader head behind a
 *     writer that keeps stealing the free word;
 *  R7 (not with -DLIVE) the last user may free the lock (DESIGN.md
 *     invariant 7, glibc bug 13690): each thread holds a reference (the
 *     ghost refs) and drops it in the critical section of its last lock
 *     call (a downgrading writer in its write hold), or when that call
 *     times out.  The thread whose drop in its critical section takes refs
 *     to 0 unlocks; if that released a read share, it takes the write lock
 *     and releases it (other readers may still hold theirs; here the fast
 *     path once the word is free, one step with the destroy, as nobody is
 *     left to queue); then hl_rwlock_destroy must succeed (word 0, no
 *     flags, tail 0: nobody holds it or waits, no abandoned node is left
 *     queued) and it sets the ghost freed.  Every access to the word,
 *     `tail` or `head` by any thread asserts !freed (LOCK_ACCESS, LK), so a
 *     releaser that still touches the lock after the CAS or store that let
 *     another thread take it is caught as a use after free, or before that
 *     as a destroy that fails.  A drop at a timeout frees nothing (a holder
 *     may still be inside).
 *
 * Seeded bugs (-D):
 *  BUG_STEAL_FROM_RELEASE        a reader takes a share from a word with
 *                                live flags and no holder (take() in
 *                                src/rwlock.c before cac37cf): the last
 *                                reader out, which holds the lock through
 *                                those flags until its CAS, finds a reader
 *                                in the word (release_to_head's check that
 *                                only HANDOFF was added; the hl__bug check
 *                                of the C code looks only for HANDOFF, and
 *                                its retry would write the writer's TID
 *                                over the stolen share; with the release
 *                                code of then, two releasers handed the
 *                                lock to the same head);
 *  BUG_READER_IGNORES_HANDOFF    a reader's take ignores HANDOFF (R3);
 *  BUG_LAST_READER_NO_WAKE       the last reader out does not run
 *                                release_to_head: the head that set WAKE
 *                                sleeps for good (R2);
 *  BUG_CLAIMED_BLIND_STORE       release_to_head, having claimed the head,
 *                                computes the new word once and stores it
 *                                without a compare: HANDOFF added by the
 *                                head's mark_due just before the claim is
 *                                lost, the word is released and the due
 *                                head is only woken, so a reader steals
 *                                the lock owed to it (R3);
 *  BUG_RELEASE_BEFORE_PASS       release_to_head and last_reader_out as
 *                                before cd7e9af: the word is released
 *                                first, and headship is passed on from a
 *                                head that gave up afterwards (-DTIMED:
 *                                R7, the last user's destroy finds the gone
 *                                head's node still queued; without the
 *                                tail test, the pass's access to `tail`
 *                                after the free);
 *  BUG_PASS_KEEPS_FLAGS          a write holder passes headship on from a
 *                                head that gave up without dropping its
 *                                flags: the new head finds them (R5; in
 *                                the C code its CAS replaces them, and
 *                                flags the same as the gone head's are
 *                                cleared by the holder's CAS to 0 unseen);
 *  BUG_LAST_READER_SERVES_GONE_HEAD  src/rwlock.c at cd7e9af: the last
 *                                reader out, whose CAS to 0 after passing
 *                                headship on from a head that gave up
 *                                fails because that head had added HANDOFF
 *                                before it gave up, takes the flags for a
 *                                new head's and claims the gone head's
 *                                recycled node (-DTIMED: R4, a node whose
 *                                life ended is claimed; hl__bug in the C
 *                                code, or the claim of another wait if the
 *                                node was reused);
 *  BUG_GROUP_COUNT_AFTER_SIGNAL  grant_group adds the group to the count
 *                                after signalling the members: a member
 *                                holds a share the word does not count (R1;
 *                                without that check, 2 readers and 2
 *                                writers show the member's unlock taking
 *                                the count to 0 under the granter and a
 *                                writer coming in);
 *  BUG_NO_MARK_DUE               a due waiter's wake-up does not add
 *                                HANDOFF: readers keep stealing past it
 *                                (R3: the starvation that mark_due
 *                                prevents, seen at its first steal; with
 *                                -DLIVE, where R3 records no debt for it,
 *                                R6: an acceptance cycle in which two
 *                                readers overlap for ever while the due
 *                                writer head wakes up, marks nothing and
 *                                parks again);
 *  BUG_RECORD_PLAIN_STORE        leave_queue sets WAKE with a load and a
 *                                store instead of a fetch_or: a reader
 *                                owner overwrites a concurrent reader's
 *                                release, the count never drains and the
 *                                recorded writer sleeps for good (R2);
 *  BUG_GROUP_TAKES_LAST          hl_queue_extract takes the last node too,
 *                                whose link is the enqueuers' (R5; without
 *                                that check, the next enqueuer links behind
 *                                a node that left the queue and is never
 *                                woken, R2);
 *  BUG_GROUP_REFUSED_KEEPS_COUNT a group member that gave up (-DTIMED)
 *                                keeps its share in the count: the lock
 *                                stays read-held (R4);
 *  BUG_DOWNGRADE_DROPS_FLAGS     a downgrade writes one reader without the
 *                                flags of a writer head (-DDOWNGRADE, 2
 *                                writers): a due head is overtaken (R3),
 *                                one that is not due sleeps for good;
 *  BUG_WITHDRAW_FLAGS            withdraw_flags as in src/rwlock.c at
 *                                5b504ba (-DTIMED): a waiter that gave up
 *                                with its flags in the word CASes them away
 *                                and passes headship on from its node,
 *                                which recycles it.  A holder that read the
 *                                flags and `head` before that then claims
 *                                or signals the recycled node (R4; hl__bug
 *                                in the C code), or, once a new head has
 *                                set flags that make the word equal to
 *                                what it read, succeeds in its CAS and
 *                                signals the old node while the new head
 *                                is never woken.

 *
 * Variants: READERS (default 2), WRITERS (default 1), ITER (default 1);
 * -DTIMED lets each lock call be timed or not (a queued waiter may abandon
 * its node, a head may time out while spinning or waiting); -DDOWNGRADE
 * lets a writer downgrade or not before it unlocks; -DLIVE checks R6
 * (threads loop for ever, ITER is ignored); -DREACH=k turns
 * reachability marker k into an assertion (listed in docs/verification.md).
 */

#ifndef READERS
#define READERS 2
#endif
#ifndef WRITERS
#define WRITERS 1
#endif
#ifndef ITER
#define ITER 1
#endif
#define NTHREADS (READERS + WRITERS)
#ifdef LIVE
#if defined(TIMED) || defined(DOWNGRADE) || defined(BUG_WITHDRAW_FLAGS)
#error "LIVE is checked without timeouts and downgrades"
#endif
#define NNODES NTHREADS         /* one node per thread, reused */
/* Values nobody reads again are forgotten (see the header). */
#define FORGET_HEAD ; head = 0
/* hl_node_wait_until wakes a waiter up only once it is due (its timer) */
#define WOKEN_DUE(x) && due_t[nowner[x]]
#else
#define NNODES (NTHREADS * ITER)
#define FORGET_HEAD
#define WOKEN_DUE(x)
#endif

/* node states (wait.h) */
#define N_FREE      0
#define N_WAITING   1
#define N_PARKED    2
#define N_ABANDONED 3
#define N_CLAIMED   4
#define S_HEAD      8
#define S_RELEASED  9
#define S_HANDED    10
#define S_GROUP     11
#define S_WOKEN     254
#define S_TIMEDOUT  255

/* node life (ghost) */
#define L_NEW  0
#define L_USED 1        /* enqueued, not yet put back or recycled */
#define L_GONE 2

#ifdef REACH
#define reach(k) assert(REACH != k)
#else
#define reach(k) skip
#endif

/* The state word (writer TID, reader count, WAKE, HANDOFF), the tail and
 * head words. */
byte w_writer = 0;
byte w_readers = 0;
bool w_wake = false;
bool w_handoff = false;
byte tail = 0;          /* node index, 0 = empty */
byte head = 0;          /* node that set (or was given) WAKE */

/* Nodes 1..NNODES. */
byte nstate[NNODES + 1];
byte nnext[NNODES + 1];
byte nowner[NNODES + 1];        /* thread that owns the node */
bool nreader[NNODES + 1];       /* HL_NODE_F_READER */

/* ghosts */
byte life[NNODES + 1];
bool member[NNODES + 1];        /* R5: taken into the group being granted */
byte in_w = 0;                  /* R1: writers in the critical section */
byte in_r = 0;                  /*     readers in it */
byte rholders = 0;              /* R1: threads holding a read share */
byte handoff_to = 0;            /* R3: the thread the lock is owed to */
byte finished = 0;

#ifdef LIVE
#define LOCK_ACCESS skip
#define LK(c) (c)
#else
/* R7: the lock's last user frees it.  refs: the threads that will still
 * lock it (each drops its reference in the critical section of its last
 * lock call, or when that call times out); the thread whose drop in its
 * critical section takes refs to 0 checks, after its unlock (and, if that
 * released a read share, a write lock and unlock of its own: other readers
 * may still hold theirs), that the lock can be destroyed
 * (hl_rwlock_destroy: the word 0, no node queued) and frees it; from then
 * on any access to the lock's fields by any thread is a use after free.
 * LOCK_ACCESS opens every atomic step that reads or writes the word,
 * `tail` or `head`; LK(c) is a guard on them. */
byte refs = NTHREADS;
bool freed = false;
#define LOCK_ACCESS assert(!freed)
#define LK(c) (freed || (c)) -> LOCK_ACCESS
/* a thread's reference (the local myref) */
#define REF_HELD    0
#define REF_DROPPED 1   /* dropped, not the last */
#define REF_LAST    2   /* dropped the last one: destroys the lock */
#define REF_LAST_RD 3   /* the same, after releasing a read share */
#endif

/* A lock call's locals, dead once its critical section starts and when it
 * has timed out or the unlock has ended: forgotten (see the header). */
#define FORGET_CALL \
	sig = 0; pred = 0; nx = 0; d = 0; cur = 0; h = 0; first = 0; last = 0; \
	i = 0; j = 0; k = 0; sw_writer = 0; sw_readers = 0; \
	ok = false; due = false; rt = false; timed = false; sw_wake = false; sw_handoff = false

/* The release code as it was before cd7e9af (release first, then signal
 * or pass headship on; last_reader_out): BUG_RELEASE_BEFORE_PASS, and
 * BUG_WITHDRAW_FLAGS, which reproduces src/rwlock.c at 5b504ba. */
#if defined(BUG_RELEASE_BEFORE_PASS) || defined(BUG_WITHDRAW_FLAGS)
#define OLD_RELEASE
#endif

#ifdef LIVE
/* R6: the passage of time.  queued[t]: thread t's node was stamped with its
 * start time at the enqueue and t does not hold the lock yet; due_t[t]: the
 * handoff threshold has passed since then.  Timer(t) sets due_t[t] at any
 * step while t is queued, and under weak fairness it must do so eventually
 * (it stays enabled until it does). */
bool queued[NTHREADS + 1];
bool due_t[NTHREADS + 1];
byte cs_who = 0;        /* R6: the thread that entered its critical
                         * section last; 0 once it leaves */

proctype Timer(byte t)
{
	do
	:: atomic { queued[t] && !due_t[t] -> due_t[t] = true }
	od
}

/* R6: every thread enters its critical section infinitely often. */
#if NTHREADS == 2
ltl starvation_free { []<> (cs_who == 1) && []<> (cs_who == 2) }
#elif NTHREADS == 3
ltl starvation_free { []<> (cs_who == 1) && []<> (cs_who == 2) && []<> (cs_who == 3) }
#else
#error "LIVE: 2 or 3 threads"
#endif
#endif

#define FLAGS_SET (w_wake || w_handoff)

/* take() for a reader: no writer, no HANDOFF, and not a word that the
 * last reader out is releasing to the head (no holder, live flags). */
#if defined(BUG_READER_IGNORES_HANDOFF)
#define READER_TAKE (w_writer == 0 && (w_readers != 0 || !w_wake))
#elif defined(BUG_STEAL_FROM_RELEASE)
#define READER_TAKE (w_writer == 0 && !w_handoff)
#else
#define READER_TAKE (w_writer == 0 && !w_handoff && (w_readers != 0 || !w_wake))
#endif

/* R3: at every acquisition by thread t */
#define R3_OK(t) (handoff_to == 0 || handoff_to == (t))

/* ---- waiting core ---------------------------------------------------------- */

/* hl_node_wait_until(n, ...): park (the spin phase of a due head is a
 * waiter that has not parked yet), return the signal; with a deadline give
 * up; wake up (S_WOKEN, node WAITING again) only when mark_due has
 * something to do (see the header). */
inline wait_until(wu_n, wu_sig, wu_timed)
{
	/* A node CLAIMED by a releaser is waited on until the post: it can
	 * no longer give up, and the waiter does nothing else meanwhile, so
	 * it returns only once the node is neither WAITING/PARKED nor
	 * CLAIMED (the look that sees CLAIMED and the deadline that finds it
	 * change nothing that anyone else sees). */
	do
	:: atomic { nstate[wu_n] != N_WAITING && nstate[wu_n] != N_CLAIMED -> wu_sig = nstate[wu_n] }; break
	:: atomic { nstate[wu_n] == N_WAITING -> nstate[wu_n] = N_PARKED };
	   do
	   :: atomic { nstate[wu_n] != N_PARKED && nstate[wu_n] != N_CLAIMED -> wu_sig = nstate[wu_n] }; break
	   :: atomic {
		LK(nstate[wu_n] == N_PARKED && w_wake && !w_handoff && head == wu_n WOKEN_DUE(wu_n)) ->
			nstate[wu_n] = N_WAITING; wu_sig = S_WOKEN
	      };
	      break
#ifdef TIMED
	   :: atomic {
		wu_timed && nstate[wu_n] != N_CLAIMED ->
			if
			:: nstate[wu_n] == N_PARKED -> nstate[wu_n] = N_ABANDONED; wu_sig = S_TIMEDOUT
			:: else -> wu_sig = nstate[wu_n]
			fi
	      };
	      break
#endif
	   od;
	   break
	od
}

/* mark_due(n): n woke up due; if live flags name it without HANDOFF, add
 * HANDOFF (one step, see the header).  R3: from now on the lock is owed to
 * n's owner while the flags name n. */
inline mark_due(md_n)
{
	atomic {
		LOCK_ACCESS;
#ifndef BUG_NO_MARK_DUE
		if
		:: w_wake && !w_handoff && head == md_n -> reach(6); w_handoff = true
		:: else -> skip
		fi;
#endif
#if !(defined(LIVE) && defined(BUG_NO_MARK_DUE))
		/* (with -DLIVE the bug is R6's to find: no debt is recorded
		 * for R3, as nothing marked it) */
		if
		:: w_wake && head == md_n ->
			assert(handoff_to == 0 || handoff_to == nowner[md_n]);
			handoff_to = nowner[md_n]
		:: else -> skip
		fi
#else
		skip
#endif
	}
}

/* wait_node: wait, and mark due at every wake-up. */
inline wait_node(wn_n, wn_sig, wn_timed)
{
	do
	:: wait_until(wn_n, wn_sig, wn_timed);
	   if
	   :: wn_sig == S_WOKEN -> mark_due(wn_n)
	   :: else -> break
	   fi
	od
}

/* hl_node_signal(x, s): ok = false if x was abandoned. */
inline node_signal(ns_x, ns_s, ns_ok)
{
	atomic {
		assert(life[ns_x] == L_USED);
		assert(nstate[ns_x] == N_WAITING || nstate[ns_x] == N_PARKED || nstate[ns_x] == N_ABANDONED);
		if
		:: nstate[ns_x] == N_ABANDONED -> ns_ok = false
		:: else -> nstate[ns_x] = ns_s; ns_ok = true
		fi
	}
}

/* hl_node_recycle(x): x was abandoned and nobody refers to it any more. */
inline recycle(rc_x)
{
	atomic {
		assert(life[rc_x] == L_USED && nstate[rc_x] == N_ABANDONED);
		life[rc_x] = L_GONE;
		nstate[rc_x] = N_FREE
	}
}

/* hl_thread_node_put: the owner is done with its node. */
inline put(pt_x)
{
	atomic {
		assert(life[pt_x] == L_USED);
#ifdef LIVE
		/* reused for the owner's next lock call: its life starts again,
		 * and its state and link are read by nobody until then */
		life[pt_x] = L_NEW; nstate[pt_x] = N_FREE; nnext[pt_x] = 0
#else
		life[pt_x] = L_GONE
#endif
	}
}

/* ---- queue (FIFO) ---------------------------------------------------------- */

/* hl_queue_pass_head(ph_n, ph_defer ? HL_PASS_DEFER_WAKE : 0) -> d: the
 * successor, unsignalled, if deferred (it was parked); 0 otherwise. */
inline pass_head(ph_n, ph_defer)
{
	cur = ph_n;
	d = 0;
	assert(life[cur] == L_USED);    /* R4: not a node that was recycled */
	do
	:: atomic {
		LOCK_ACCESS;
		if
		:: tail == cur -> tail = 0; nx = 0
		:: else -> nx = 255
		fi
	   };
	   if
	   :: nx == 255 -> atomic { nnext[cur] != 0 -> nx = nnext[cur] }
	   :: else -> skip
	   fi;
	   atomic {
		if
		:: nstate[cur] == N_ABANDONED -> recycle(cur)
		:: else -> skip
		fi
	   };
	   if
	   :: nx == 0 -> break
	   :: else -> skip
	   fi;
	   atomic {
		if
		:: ph_defer && nstate[nx] == N_PARKED -> d = nx
		:: else -> skip
		fi
	   };
	   if
	   :: d != 0 -> break
	   :: else -> skip
	   fi;
	   node_signal(nx, S_HEAD, ok);
	   if
	   :: ok -> break
	   :: else -> cur = nx      /* abandoned: it leaves the queue too */
	   fi
	od;
	cur = 0;
	nx = 0;
	ok = false
}

/* ---- the rwlock ------------------------------------------------------------ */

#ifdef OLD_RELEASE
/* release_to_head(s) before cd7e9af (OLD_RELEASE), s = (sw_writer, 0
 * readers, sw_wake, sw_handoff), with live WAKE: hand the lock to the
 * head, or release the word and then wake the head or pass headship on.
 * rt = false if the word changed under us (mark_due added HANDOFF, or,
 * with -DBUG_WITHDRAW_FLAGS, the head gave up and took its flags back). */
inline release_to_head(rt)
{
	/* Relaxed load of `head`, before the claim or the CAS, as in the C
	 * code. */
	atomic { LOCK_ACCESS; h = head };
	ok = false;
	if
	:: sw_handoff ->
		/* hl_node_claim */
		atomic {
			assert(life[h] == L_USED);
			if
			:: nstate[h] == N_WAITING || nstate[h] == N_PARKED -> nstate[h] = N_CLAIMED; ok = true
			:: else -> assert(nstate[h] == N_ABANDONED)
			fi
		}
	:: else -> skip
	fi;
	if
	:: ok ->
		/* the CAS to the head's TID or one reader cannot fail */
		atomic {
			LOCK_ACCESS;
			assert(w_writer == sw_writer && w_readers == 0 && w_wake && w_handoff);
			assert(handoff_to == nowner[h]);
			handoff_to = 0;
			if
			:: nreader[h] -> reach(8); w_writer = 0; w_readers = 1; rholders++
			:: else -> w_writer = nowner[h]
			fi;
			w_wake = false;
			w_handoff = false FORGET_HEAD
		};
		nstate[h] = S_HANDED;   /* hl_node_post */
		rt = true
	:: else ->
		atomic {
			LOCK_ACCESS;
			if
			:: w_writer == sw_writer && w_readers == 0 && w_wake == sw_wake && w_handoff == sw_handoff ->
				w_writer = 0; w_wake = false; w_handoff = false; rt = true FORGET_HEAD;
				if
				:: sw_handoff ->
					/* the claim was refused: h gave up */
					reach(13);
					assert(handoff_to == nowner[h]); handoff_to = 0
				:: else -> skip
				fi
			:: else ->
#ifndef BUG_WITHDRAW_FLAGS
				assert(!sw_handoff);    /* nobody changes a word with HANDOFF */
#endif
				rt = false
			fi
		};
		if
		:: rt && sw_handoff -> pass_head(h, false)
		:: rt && !sw_handoff ->
			node_signal(h, S_RELEASED, ok);
			if
			:: !ok -> pass_head(h, false)   /* h gave up */
			:: else -> skip
			fi
		:: else -> skip
		fi
	fi;
	h = 0;
	ok = false
}

/* last_reader_out(s) before cd7e9af: the last share went with live WAKE. */
inline last_reader_out()
{
	do
	:: release_to_head(rt);
	   if
	   :: rt -> break
	   :: else -> skip
	   fi;
	   /* The word changed: mark_due added HANDOFF (with the fix in take,
	    * a reader cannot steal a share here, so the first branch is never
	    * taken; it is the C code's defence). */
	   atomic {
		LOCK_ACCESS;
		if
		:: w_writer != 0 || w_readers != 0 || !FLAGS_SET -> break
		:: else -> sw_wake = w_wake; sw_handoff = w_handoff
		fi
	   }
	od;
	rt = false
}
#else
/* release_to_head's CAS(s -> ns) on a claimed head h: ns is h's TID or one
 * reader with HANDOFF, else 0.  rt = false if it failed: that happens only
 * when h, woken by its timer just before the claim, added HANDOFF
 * (mark_due); s then has it, for the next try.  Inside an atomic step. */
inline claimed_cas()
{
	if
	:: w_writer == sw_writer && w_readers == 0 && w_wake == sw_wake && w_handoff == sw_handoff ->
		if
		:: sw_handoff ->
			assert(handoff_to == nowner[h]);
			handoff_to = 0;
			if
			:: nreader[h] -> reach(8); w_writer = 0; w_readers = 1; rholders++
			:: else -> w_writer = nowner[h]
			fi
		:: else -> w_writer = 0
		fi;
		w_wake = false;
		w_handoff = false FORGET_HEAD;
		rt = true
	:: else ->
		reach(7);
		/* the hl__bug check: only HANDOFF was added */
		assert(!sw_handoff && w_handoff && w_wake && w_writer == sw_writer && w_readers == 0);
#ifdef BUG_CLAIMED_BLIND_STORE
		/* ns computed once and stored without a compare */
		w_writer = 0; w_wake = false; w_handoff = false FORGET_HEAD;
		rt = true
#else
		sw_handoff = true;
		rt = false
#endif
	fi
}

/* release_to_head(s), s = (sw_writer, 0 readers, sw_wake, sw_handoff) with
 * live WAKE: the caller is the write holder (sw_writer = me) or the reader
 * whose fetch_sub took the count to 0 (sw_writer = 0); either way nobody
 * else can take the lock until the release CAS (take gives no share from
 * flags with no holder, a writer needs 0).  Claim the head's node; if it
 * is ours, CAS the word to the head's TID or one reader (HANDOFF) or to 0,
 * recomputing if h's mark_due added HANDOFF, and post; if h gave up, pass
 * headship on first (a write holder dropping h's flags before), then CAS
 * the word to 0, and serve a new head whose flags made that CAS fail. */
inline release_to_head()
{
	do
	:: /* Read `head` (nobody writes it while flags are set), claim h,
	    * and if it is ours make the first try of the CAS; if h gave up,
	    * its R3 debt goes, and a write holder drops its flags (a plain
	    * store: nobody else changes the word, and nobody but a new
	    * head, after the pass, reads them).  One step: the only thing
	    * that can happen between the claim and the CAS and touch what
	    * either touches is h's mark_due (h's wake-up came before the
	    * claim, which needs a node that is not woken), and mark_due
	    * commutes with the claim, so it happens before it here (the
	    * CAS then fails just the same). */
	   atomic {
		LOCK_ACCESS;
		h = head;
		assert(life[h] == L_USED);
		if
		:: nstate[h] == N_WAITING || nstate[h] == N_PARKED ->
			nstate[h] = N_CLAIMED; ok = true;
			claimed_cas()
		:: else ->
			assert(nstate[h] == N_ABANDONED); ok = false;
			if
			:: sw_handoff -> reach(13)
			:: else -> skip
			fi;
			assert(handoff_to == 0 || handoff_to == nowner[h]);
			handoff_to = 0;
			if
			:: sw_writer != 0 ->
#ifndef BUG_PASS_KEEPS_FLAGS
				w_wake = false; w_handoff = false; sw_wake = false; sw_handoff = false
#else
				skip
#endif
			:: else -> reach(16)    /* the last reader out keeps them */
			fi
		fi
	   };
	   if
	   :: ok ->
		do
		:: rt -> break
		:: else -> atomic { LOCK_ACCESS; claimed_cas() }
		od;
		/* hl_node_post: from here on, only h's node */
		if
		:: sw_handoff -> nstate[h] = S_HANDED
		:: else -> nstate[h] = S_RELEASED
		fi;
		break
	   :: else ->
		pass_head(h, false);
		/* CAS(s -> 0).  On the write holder's word it fails only if a
		 * new head set its flags: serve that head.  On the last reader
		 * out's it fails only if h, before it gave up, added HANDOFF
		 * (mark_due, after the fetch_sub that read s): nobody else sets
		 * flags on a word with no holder, so try again (see
		 * BUG_LAST_READER_SERVES_GONE_HEAD). */
		do
		:: atomic {
			LOCK_ACCESS;
			if
			:: w_writer == sw_writer && w_readers == 0 && w_wake == sw_wake && w_handoff == sw_handoff ->
				w_writer = 0; w_wake = false; w_handoff = false FORGET_HEAD;
				ok = true;
				break
			:: else ->
				ok = false;
				if
				:: sw_writer != 0 ->
					reach(17);
					assert(w_writer == sw_writer && w_readers == 0 && w_wake && !sw_wake);
					sw_wake = w_wake; sw_handoff = w_handoff;
					break
				:: else ->
					reach(18);
					assert(w_writer == 0 && w_readers == 0 && w_wake && sw_wake && w_handoff && !sw_handoff);
					sw_handoff = true
#ifdef BUG_LAST_READER_SERVES_GONE_HEAD
					; break
#endif
				fi
			fi
		   }
		od;
		if
		:: ok -> break
		:: else -> skip
		fi
	   fi
	od;
	h = 0;
	ok = false;
	rt = false;
	sw_wake = false;
	sw_handoff = false
}
#endif

/* grant_group(n): hl_queue_extract of the readers behind n (stopping at a
 * due writer, skipping the others, leaving the last node), the count, the
 * signals. */
inline grant_group(gg_n)
{
	pred = gg_n;
	first = 0;
	last = 0;
	k = 0;
	do
	:: atomic {
		LOCK_ACCESS;    /* (reads tail, for R5) */
		i = nnext[pred];
		if
		:: i == 0 -> break
		:: else -> skip
		fi;
		j = nnext[i];           /* i's successor */
#ifndef BUG_GROUP_TAKES_LAST
		if
		:: j == 0 -> break      /* the last node stays */
		:: else -> skip
		fi;
#endif
		assert(life[i] == L_USED);
		if
		:: nstate[i] == N_ABANDONED ->
			reach(4);
			nnext[pred] = j;        /* unlinked and recycled */
			recycle(i)
		:: nstate[i] != N_ABANDONED && nreader[i] ->
			/* R5: a live reader waiting behind the head */
			assert(nstate[i] == N_WAITING || nstate[i] == N_PARKED);
			assert(tail != i);
			nnext[pred] = j;
			nnext[i] = 0;
			if
			:: last != 0 -> nnext[last] = i
			:: else -> first = i
			fi;
			last = i;
			member[i] = true;
			k++;
			if
			:: pred != gg_n -> reach(14)    /* behind a skipped writer */
			:: else -> skip
			fi;
			if
			:: k == 2 -> reach(15)
			:: else -> skip
			fi
		:: nstate[i] != N_ABANDONED && !nreader[i] ->
			if
#ifdef LIVE
			:: !due_t[nowner[i]] -> reach(2); pred = i
			:: due_t[nowner[i]] -> reach(3); break
#else
			:: reach(2); pred = i   /* a writer that is not due: skip it */
			:: reach(3); break      /* a due writer: stop */
#endif
			fi
		fi
	   }
	od;
	skip;   /* the loop's breaks land here, not in the d_step */
	/* R5: no member is reachable from the head any more */
	d_step {
		i = nnext[gg_n];
		do
		:: i == 0 -> break
		:: else -> assert(!member[i]); i = nnext[i]
		od;
		i = 0; j = 0; pred = 0; last = 0
	};
	if
	:: k != 0 ->
		reach(1);
#ifndef BUG_GROUP_COUNT_AFTER_SIGNAL
		atomic {
			LOCK_ACCESS;
			assert(w_writer == 0 && w_readers >= 1 && !FLAGS_SET);
			w_readers = w_readers + k
		};
#endif
		i = first;
		do
		:: i == 0 -> break
		:: else ->
			atomic {
				LOCK_ACCESS;
				j = nnext[i];   /* read before the signal hands i back */
				assert(member[i]);
				member[i] = false;
				/* R5: granted while we hold a share, no writer,
				 * no flags */
				assert(w_writer == 0 && !FLAGS_SET);
				node_signal(i, S_GROUP, ok);
				if
				:: ok -> rholders++; assert(R3_OK(nowner[i]) && w_readers >= rholders)
				:: else -> skip
				fi
			};
			if
			:: !ok ->
				/* it gave up: its share goes, the node is ours */
				reach(5);
#ifndef BUG_GROUP_REFUSED_KEEPS_COUNT
				atomic { LOCK_ACCESS; assert(w_readers >= 2); w_readers-- };
#endif
				recycle(i)
			:: else -> skip
			fi;
			i = j
		od;
#ifdef BUG_GROUP_COUNT_AFTER_SIGNAL
		atomic { LOCK_ACCESS; w_readers = w_readers + k };
#endif
		skip
	:: else -> skip
	fi;
	i = 0; j = 0; k = 0; first = 0; ok = false
}

/* leave_queue(n): the lock is ours; n leaves the queue. */
inline leave_queue(lq_n)
{
	pass_head(lq_n, true);
	if
	:: d != 0 ->
#ifdef LIVE
		due = due_t[nowner[d]];
#else
		if
		:: due = true
		:: due = false
		fi;
#endif
		if
		:: due || (rd && nreader[d]) ->
			/* a due successor, or a reader behind a reader owner,
			 * is woken now */
			if
			:: !due -> reach(9)
			:: else -> skip
			fi;
			node_signal(d, S_HEAD, ok);
			if
			:: !ok -> h = d; pass_head(h, false); h = 0
			:: else -> skip
			fi
		:: else ->
			reach(10);
			atomic { LOCK_ACCESS; head = d };
#ifdef BUG_RECORD_PLAIN_STORE
			atomic { LOCK_ACCESS; sw_writer = w_writer; sw_readers = w_readers };
			atomic { LOCK_ACCESS; assert(!FLAGS_SET); w_writer = sw_writer; w_readers = sw_readers; w_wake = true };
			sw_writer = 0; sw_readers = 0
#else
			atomic { LOCK_ACCESS; assert(!FLAGS_SET); w_wake = true }
#endif
		fi;
		due = false;
		d = 0;
		ok = false
	:: else -> skip
	fi
}

proctype Thread(byte me)
{
	byte it = 0, n, sig, pred, nx, d, cur, h, first, last, i, j, k;
	byte sw_writer, sw_readers;
	bool ok, due, rt, timed, rd, sw_wake, sw_handoff;
#ifndef LIVE
	byte myref = REF_HELD;  /* R7 */
#endif

	rd = me <= READERS;
#ifdef LIVE
	n = me;
#endif
	do
#ifdef LIVE
	:: true ->      /* lock calls for ever, on one node */
#else
	:: it == ITER && myref == REF_DROPPED -> break
	:: atomic {
		it == ITER && myref != REF_DROPPED &&
		(myref != REF_LAST_RD || (w_writer == 0 && w_readers == 0 && !FLAGS_SET)) ->
		/* R7: after the last lock call.  The thread that dropped the
		 * last reference in its critical section destroys the lock
		 * (hl_rwlock_destroy must succeed: the word free, no flags,
		 * no node queued) and frees it; if it released a read share
		 * last, it first takes the write lock and releases it (other
		 * readers may still hold theirs): here, once the word is
		 * free, the fast path's CAS and the unlock's, in one step
		 * with the destroy (nobody else is left to queue).  A last
		 * call that timed out drops the reference now, after it
		 * returned (nobody frees the lock then: a holder may still
		 * be inside). */
		if
		:: myref == REF_HELD -> refs--
		:: else ->
			assert(w_writer == 0 && w_readers == 0 && !FLAGS_SET && tail == 0 && handoff_to == 0);
			freed = true
		fi
	   };
	   break
	:: it < ITER ->
		n = (me - 1) * ITER + it + 1;
		it++;
		timed = false;
#endif
#ifdef TIMED
		if
		:: timed = true
		:: skip
		fi;
#endif
		/* Step 1 fast path, and 1b optimistic spinning: the take, tried
		 * any number of times (a reader's CAS that fails because of
		 * another reader is retried in the C code, which is one more
		 * try here). */
		do
		:: atomic {
			LK(rd && READER_TAKE) ->
				assert(R3_OK(me)); handoff_to = 0;
				w_readers++; rholders++;
				goto holding
		   }
		:: atomic {
			LK(!rd && w_writer == 0 && w_readers == 0 && !FLAGS_SET) ->
				assert(R3_OK(me)); handoff_to = 0;
				w_writer = me;
				goto holding
		   }
		:: break
		od;

		/* Step 2: hl_queue_node_init, hl_node_arm, hl_queue_enqueue:
		 * the node's fields are private until the xchg publishes it. */
		atomic {
			LOCK_ACCESS;
			assert(life[n] == L_NEW);
			nowner[n] = me; nreader[n] = rd; nnext[n] = 0;
			nstate[n] = N_WAITING; life[n] = L_USED;
#ifdef LIVE
			queued[me] = true; due_t[me] = false;   /* the start time */
#endif
			pred = tail; tail = n
		};
		if
		:: pred != 0 ->
			nnext[pred] = n;
			pred = 0;
			wait_node(n, sig, timed);
			if
			:: sig == S_TIMEDOUT -> goto abandoned
			:: sig == S_GROUP ->
#ifdef LIVE
				atomic { queued[me] = false; due_t[me] = false };
#endif
				put(n); goto holding
			:: sig == S_HANDED -> goto owned
			:: else -> assert(sig == S_HEAD || sig == S_RELEASED)
			fi
		:: else -> skip
		fi;

		/* Steps 3 and 4: n is the head. */
		do
		:: atomic {
			LK(rd && READER_TAKE) ->
				assert(!FLAGS_SET && R3_OK(me)); handoff_to = 0;
				w_readers++; rholders++;
				goto owned
		   }
		:: atomic {
			LK(!rd && w_writer == 0 && w_readers == 0 && !FLAGS_SET) ->
				assert(R3_OK(me)); handoff_to = 0;
				w_writer = me;
				goto owned
		   }
		:: /* Spun out (or due, a free choice): publish n in `head`, arm
		    * it, CAS WAKE (WAKE|HANDOFF when due) into the held word.
		    * One step: the load that saw the word held and the CAS that
		    * succeeds on the same value act as if at the CAS (a CAS that
		    * fails is a retry), and `head` and the node are read by
		    * nobody until the flags are set. */
		   atomic {
			LK(w_writer != 0 || (!rd && w_readers != 0)) ->
				assert(!FLAGS_SET);     /* R5: the head never finds flags */
				head = n;
				nstate[n] = N_WAITING;          /* hl_node_arm */
				w_wake = true;
				if
#ifdef LIVE
				:: due_t[me] ->
#else
				::
#endif
				   w_handoff = true;            /* due */
				   assert(handoff_to == 0); handoff_to = me
#ifdef LIVE
				:: else ->
#else
				::
#endif
				   w_handoff = false
				fi
		   };
		   wait_node(n, sig, timed);
		   if
		   :: sig == S_HANDED -> goto owned
		   :: sig == S_TIMEDOUT -> goto abandoned  /* the releaser passes headship on */
		   :: else -> assert(sig == S_RELEASED)     /* race again */
		   fi
#ifdef TIMED
		:: timed ->
			/* deadline while spinning as head: pass headship on */
			pass_head(n, false);
			put(n);
			goto timed_out
#endif
		od;

owned:
#ifdef LIVE
		atomic { sig = 0; queued[me] = false; due_t[me] = false };
#else
		sig = 0;
#endif
		if
		:: rd -> grant_group(n)
		:: else -> skip
		fi;
		leave_queue(n);
		put(n);

holding:
		sig = 0;
		if
		:: !rd ->
#ifdef LIVE
			atomic { in_w++; cs_who = me; assert(in_w == 1 && in_r == 0 && w_writer == me && w_readers == 0) };
			atomic { in_w--; cs_who = 0 };
#else
			atomic {
				LOCK_ACCESS;
				in_w++; assert(in_w == 1 && in_r == 0 && w_writer == me && w_readers == 0);
				FORGET_CALL;
				/* R7: the last lock call drops the reference */
				if
				:: it == ITER -> refs--; myref = (refs == 0 -> REF_LAST : REF_DROPPED)
				:: else -> skip
				fi
			};
			in_w--;
#endif
#ifdef DOWNGRADE
			if
			:: skip         /* hl_rwlock_unlock */
			:: /* hl_rwlock_downgrade */
			   do
			   :: atomic {
				LOCK_ACCESS;
				assert(w_writer == me && w_readers == 0);
				sw_wake = w_wake; sw_handoff = w_handoff;
				if
				:: w_wake -> h = head
				:: else -> h = 0
				fi
			      };
			      if
			      :: h != 0 && nreader[h] ->
				/* a reader head waits for us: clear the flags and
				 * let it race again */
				atomic {
					LOCK_ACCESS;
					if
					:: w_writer == me && w_readers == 0 && w_wake == sw_wake && w_handoff == sw_handoff ->
						reach(11);
						w_writer = 0; w_readers = 1; rholders++;
						w_wake = false; w_handoff = false;
						handoff_to = 0; /* R3: woken, not handed (by design) */
						ok = true
					:: else -> ok = false
					fi
				};
				if
				:: ok ->
					node_signal(h, S_RELEASED, ok);
					if
					:: !ok -> pass_head(h, false)   /* h gave up */
					:: else -> skip
					fi;
					break
				:: else -> skip
				fi
			      :: else ->
				/* a writer head (or none) keeps waiting, now for
				 * the readers */
				atomic {
					LOCK_ACCESS;
					if
					:: w_writer == me && w_readers == 0 && w_wake == sw_wake && w_handoff == sw_handoff ->
						w_writer = 0; w_readers = 1; rholders++;
#ifdef BUG_DOWNGRADE_DROPS_FLAGS
						w_wake = false; w_handoff = false;
#endif
						if
						:: h != 0 -> reach(12)
						:: else -> skip
						fi;
						ok = true
					:: else -> ok = false
					fi
				};
				if
				:: ok -> break
				:: else -> skip
				fi
			      fi;
			      h = 0
			   od;
			   h = 0; ok = false; sw_wake = false; sw_handoff = false;
			   atomic { LOCK_ACCESS; in_r++; assert(in_w == 0 && w_writer == 0 && w_readers >= rholders) };
			   in_r--;
			   goto read_unlock
			fi;
#endif
			/* hl_rwlock_unlock, the write side */
#ifdef OLD_RELEASE
			do
			:: atomic {
				LOCK_ACCESS;
				assert(w_writer == me && w_readers == 0);
				if
				:: !FLAGS_SET -> w_writer = 0; break
				:: else -> sw_wake = w_wake; sw_handoff = w_handoff
				fi
			   };
			   sw_writer = me;
			   release_to_head(rt);
			   if
			   :: rt -> break
			   :: else -> skip
			   fi
			od
#else
			/* CAS(me -> 0) without flags, or release_to_head */
			atomic {
				LOCK_ACCESS;
				assert(w_writer == me && w_readers == 0);
				if
				:: !FLAGS_SET -> w_writer = 0; ok = false
				:: else -> sw_wake = w_wake; sw_handoff = w_handoff; ok = true
				fi
			};
			if
			:: ok -> sw_writer = me; release_to_head(); sw_writer = 0
			:: else -> skip
			fi
#endif
		:: rd ->
#ifdef LIVE
			atomic { in_r++; cs_who = me; assert(in_w == 0 && w_writer == 0 && w_readers >= rholders) };
			atomic { in_r--; cs_who = 0 };
#else
			atomic {
				LOCK_ACCESS;
				in_r++; assert(in_w == 0 && w_writer == 0 && w_readers >= rholders);
				FORGET_CALL;
				/* R7: the last lock call drops the reference */
				if
				:: it == ITER -> refs--; myref = (refs == 0 -> REF_LAST : REF_DROPPED)
				:: else -> skip
				fi
			};
			in_r--;
#endif
read_unlock:
			/* hl_rwlock_unlock, the read side: fetch_sub */
			atomic {
				LOCK_ACCESS;
				assert(w_writer == 0 && w_readers >= 1 && w_readers >= rholders);
				k = w_readers;
				w_readers--; rholders--;
				sw_wake = w_wake; sw_handoff = w_handoff;
#ifndef LIVE
				if
				:: myref == REF_LAST -> myref = REF_LAST_RD
				:: else -> skip
				fi
#endif
			};
#ifndef BUG_LAST_READER_NO_WAKE
			if
			:: k == 1 && sw_wake ->
				sw_writer = 0;
#ifdef OLD_RELEASE
				last_reader_out()
#else
				release_to_head()       /* the last reader out */
#endif
			:: else -> skip
			fi;
#endif
			k = 0
		fi;
		goto done;

abandoned:
#ifdef BUG_WITHDRAW_FLAGS
		/* withdraw_flags(n): if the flags in the word name n, take them
		 * back (CAS of the word as loaded) and pass headship on from n,
		 * which recycles it; the CAS decides between this and the last
		 * release.  The load and the look at `head` are one step; the
		 * CAS is another (it compares the word only). */
		do
		:: atomic {
			LOCK_ACCESS;
			sw_writer = w_writer; sw_readers = w_readers;
			sw_wake = w_wake; sw_handoff = w_handoff;
			ok = FLAGS_SET && head == n
		   };
		   if
		   :: !ok -> break
		   :: else -> skip
		   fi;
		   atomic {
			LOCK_ACCESS;
			if
			:: w_writer == sw_writer && w_readers == sw_readers &&
			   w_wake == sw_wake && w_handoff == sw_handoff ->
				w_wake = false; w_handoff = false;
				/* R3: the debt goes with the waiter that gave up */
				assert(handoff_to == 0 || handoff_to == me);
				handoff_to = 0;
				rt = true
			:: else -> rt = false
			fi
		   };
		   if
		   :: rt -> pass_head(n, false); break
		   :: else -> skip
		   fi
		od;
		ok = false; rt = false; sw_writer = 0; sw_readers = 0;
#endif
		/* hl_thread_node_abandoned: whoever meets the node recycles it */
		skip;
timed_out:
		skip;
done:
#ifdef LIVE
		skip;   /* the gotos land here, not in the d_step */
		/* forget this round's locals, so that rounds that differ only
		 * in them are one state */
		d_step {
			sig = 0; pred = 0; nx = 0; d = 0; cur = 0; h = 0; first = 0; last = 0;
			i = 0; j = 0; k = 0; sw_writer = 0; sw_readers = 0;
			ok = false; due = false; rt = false; sw_wake = false; sw_handoff = false
		}
#else
		skip;   /* the gotos land here, not in the d_step */
		d_step { FORGET_CALL }
#endif
	od;
	finished++
}

init
{
	byte t;
	atomic {
		for (t : 1 .. NTHREADS) {
			run Thread(t)
#ifdef LIVE
			; run Timer(t)
#endif
		}
	}
	(finished == NTHREADS);
	/* R4 */
	assert(w_writer == 0 && w_readers == 0 && !FLAGS_SET && tail == 0);
	assert(in_w == 0 && in_r == 0 && rholders == 0 && handoff_to == 0);
	for (t : 1 .. NNODES) {
		assert(life[t] != L_USED)
	}
}

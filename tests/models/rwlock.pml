/* SPDX-License-Identifier: MIT */
/* Model of hl_rwlock (src/rwlock.c) on the FIFO waiter queue (src/queue.c)
 * and the waiting core (src/wait.c).
 *
 * The protocol modelled is src/rwlock.c as of 535f186 (the kinds, giving
 * up, nested reads and reader groups of b4c5acc, 2b/4b of a2eb59f, the
 * downgrade and give_up's re-look of 1590b83, 535f186's step 2b, which
 * takes the share before it gives the node up, and the look for a dead
 * head after leave_queue's recording and a downgrade's kept flags, R9);
 * 9c79438's prefer-writer
 * writer that queues without spinning first is one of the runs here
 * (going to the queue is a free choice).  Modelled functions: rdlock /
 * wrlock and their timed forms (fast paths; optimistic spinning, lock_spin,
 * and lock_poll, as repeated attempts of take; step 0, a nested read,
 * with -DNESTED), lock_slow (enqueue; step 2b, reader_admit, in a
 * prefer-reader lock: if take() allows a share, take it, then give the
 * node up: abandoned, or a GROUP signal that came first, whose second
 * share goes, or a HEAD signal, and the reader goes on as step 5 holding
 * its share; refused, wait with the node; wait on the node: HEAD, HANDED and GROUP; the head
 * loop with take, step 4b (grant_readers_behind) for a prefer-reader
 * writer head on a read-held word, and the WAKE or WAKE|HANDOFF CAS into
 * a held word; RELEASED: race again; a head's timeout), wait_node with
 * hl__node_wait_until's timed wake-up and mark_due, give_up (a: withdraw
 * our flags from a held word and pass headship on; b: a committed release
 * or downgrade, wait for its signal, looking again at any wake-up; c: give
 * the node up, with the second look for a node recorded as head just
 * before), grant_group with hl__queue_extract (the last node too, by
 * take_last's tail CAS) and group_member for each kind, leave_queue
 * (pass_head with HL_PASS_DEFER_WAKE, a parked successor recorded in
 * `head` with WAKE, a due one or a reader behind a reader owner woken at
 * once), hl_rwlock_unlock (a writer's CAS to 0, or its commit and
 * release_to_head; a reader's fetch_sub and, for the last reader out,
 * release_to_head), release_to_head (claim the head's node; CAS the word
 * to the head's TID or one reader with HANDOFF, else to 0, recomputing
 * when the head's mark_due added HANDOFF, and post HANDED or RELEASED; a
 * head that gave up: headship passed on, then the CAS to 0),
 * hl_rwlock_downgrade (-DDOWNGRADE: with no flags CAS(tid -> one reader);
 * with a head's flags the commit, then downgrade_to_head: a writer head
 * keeps its flags beside our share, not in a prefer-reader lock; else
 * claim the head: a reader head with HANDOFF is handed a share beside
 * ours, any other races again; a head that gave up has headship passed
 * on), hl__queue_enqueue, hl__queue_pass_head (FIFO, recycling abandoned
 * nodes), hl__node_signal, hl__node_claim + hl__node_post, hl__node_give_up.
 *
 * Kinds (-DKIND=K_PREFER_WRITER, K_FAIR, K_PREFER_READER or
 * K_WRITER_YIELDS: 0 to 3, as HL_RWLOCK_*; the default here is fair, the
 * C code's prefer-writer).  Writer-yields is prefer-writer with step 4c: a
 * writer head's wait may end with its yield time at any moment its flags
 * stand in a held word (time is not modelled); it then takes them back as
 * give_up's a and b do (flags that no longer name it: the signal of the
 * release that claimed it comes), grants the queued readers through a
 * share of its own (grant_group skipping writers, as 4b), and races again;
 * the window in which it leaves the word open is time, a free choice.
 * What a reader may take (take), which writers a group skips or stops at,
 * and when a writer is due (a prefer-writer writer always; otherwise a
 * free choice) follow them.
 *
 * History (each found by this model, or kept as a seeded bug):
 *  - take() refuses a reader a word with live flags and no holder
 *    (cac37cf; BUG_STEAL_FROM_RELEASE is take without it);
 *  - the release order of cd7e9af (claim the head first, pass headship on
 *    before the release CAS; BUG_RELEASE_BEFORE_PASS is the order before);
 *  - a writer's release commits (its CAS clears its TID and keeps the
 *    flags) before it reads `head`, since b4c5acc, when a head that gives
 *    up withdraws its flags from a held word itself (give_up's a);
 *    BUG_WITHDRAW_FLAGS is that withdrawal with a writer's release that
 *    does not commit (the code of 82caaed: read the flags and `head`, then
 *    one CAS from the word read);
 *  - the downgrade commits in the same way (1590b83).  At b4c5acc it read
 *    the flags and `head`, then made one CAS from the word read, clearing
 *    the flags of a reader head (prefer-reader: any head) and signalling
 *    it RELEASED (BUG_DOWNGRADE_NO_COMMIT).  Spin finds (1 reader + 1
 *    writer x 2, timeouts, downgrades): the writer holds the lock, R1 is
 *    head with WAKE|HANDOFF; the writer's downgrade reads the flags and
 *    `head`; R1's deadline passes, it withdraws its flags (a), passes
 *    headship on and puts its node back; R1's next lock call queues on a
 *    new node, heads the queue and sets WAKE|HANDOFF again: the word is
 *    what the downgrade read, its CAS succeeds, clears the new head's
 *    flags and signals the old node (R4: a node whose life ended; in the
 *    C code the signal of a recycled node, hl__bug, or of another wait,
 *    and the new head sleeps with nobody to wake it).  After the commit
 *    the head's flags can no longer be withdrawn (no holder: give_up's b),
 *    so the head read is the one the flags belong to.  A downgrade leaves
 *    a writer head's flags beside its read share, with no signal to come:
 *    give_up's b therefore looks again at every wake-up (1590b83), and
 *    finding a holder beside its flags, withdraws them as in a;
 *  - step 2b takes the share first and gives the node up after (535f186).
 *    From b4c5acc to a2eb59f it gave the node up first and then tried
 *    the take; a reader that found the share gone meanwhile went to the
 *    queue again with a new node and a new start time
 *    (BUG_ADMIT_GIVE_UP_FIRST).  With -DLIVE spin finds (prefer-reader, 2
 *    readers + 1 writer) an acceptance cycle: reader 2, queued behind
 *    reader 1's node, sees a free word in step 2b and gives its node up;
 *    the writer takes and releases the word, reader 1, head, takes a
 *    share and leaves the queue to the writer, which borrows a share (4b)
 *    and sets WAKE|HANDOFF; reader 1's unlock is a committed release, and
 *    reader 2's take, tried only now, is refused: it queues again, and so
 *    on for ever: behind another waiter its wait
 *    restarts at every round, so it is never head and never due.  Now the
 *    reader either holds its share or waits with its first node.
 *
 * Abstractions:
 *  - Sequential consistency, as in the other models.
 *  - The state word is its fields (writer, reader count, WAKE, HANDOFF),
 *    changed together in one step wherever the C code uses one CAS or RMW;
 *    a CAS compares every field.  GEN, the fork generation, is left out
 *    (flags are always live within one process), and so are the spinner
 *    slots and the reader count's limit (EAGAIN).
 *  - Time is not modelled: whether a waiter is due (at the head's flag
 *    CAS, in group_member's look at a writer, in leave_queue), whether a
 *    spin budget is spent and whether a deadline passed are free choices,
 *    so every timing is explored.  Going to the queue is a free choice at
 *    every fast-path attempt (a stale load, a spent budget, a prefer-writer
 *    writer that finds readers), as in mutex.pml.
 *  - The waiting core is the node's state, as in cna.pml (parking and
 *    futex wake-ups are checked in wait.pml): a parked waiter returns when
 *    its node leaves PARKED, and a deadline is taken after parking (giving
 *    up before it shows others nothing that giving up right after parking
 *    does not).  wait_node's wake-up (HL_WAIT_WOKEN: the waiter turned due,
 *    or looks again) happens only while live flags name the waiter's node
 *    without HANDOFF, i.e. when its mark_due has something to do.  Any
 *    other wake-up takes the node from PARKED back to WAITING and parks it
 *    again: the states on the way are those of a waiter that has not
 *    parked yet, so no interleaving is lost, and a waiter that can never
 *    be signalled stays blocked (an invalid end state) instead of waking
 *    for ever.  give_up's b wait wakes up at any moment while the node is
 *    armed (the look after it is a step of its own, as in the C code).
 *  - Steps merged, each one with a single read or write of shared state:
 *    the node's fields with the enqueue's xchg (private until then); the
 *    head's load of a held word, `head`, the arming and the flag CAS (a CAS
 *    that fails is a retry, and nobody reads `head` or the node while no
 *    flags are set); step 4b's load and the CAS of its share; mark_due's
 *    load, its look at `head` and its CAS (`head` does not change while
 *    flags naming n are set: only n in its head loop, or the holder
 *    recording n, writes it); give_up's loads of the word and `head`, its
 *    look at its node and a's CAS (the CAS compares the whole word, and
 *    what changes the node's state or `head` also changes the word);
 *    hl__queue_extract's reads of the link into a waiter, its own link and
 *    its state (a non-zero link changes only by the head's hand, so the
 *    reads act as if at the moment of the last one), with the unlinking of
 *    the interior of the chain, which is the head's; take_last's clearing
 *    of the link and its tail CAS (nobody else reads or writes that link
 *    while the tail names the last node); a writer's or a downgrade's load
 *    of the word and its commit CAS.
 *  - release_to_head's and downgrade_to_head's read of `head`, claim and
 *    first try of the CAS are one step: nobody else writes `head` or the
 *    word meanwhile but h's mark_due, which commutes with the claim (h's
 *    wake-up precedes the claim, which needs a node that is not woken), so
 *    a mark_due between the claim and the CAS is the same run as one
 *    before the claim: the CAS fails and is tried again either way.  A node
 *    CLAIMED is waited on until the post (wait_until), without a look that
 *    sees CLAIMED or a deadline that finds it: neither changes anything
 *    that another thread sees.
 *  - Each lock call uses a fresh node (node reuse is the waiting core's
 *    business): NPT per thread, one per lock call (with
 *    BUG_ADMIT_GIVE_UP_FIRST a prefer-reader thread has one more, for
 *    step 2b's new start); a thread that has used them
 *    all polls (lock_poll: the take, tried any number of times).  READERS
 *    reader threads and WRITERS writer threads make ITER lock calls each
 *    (thread 1, a reader, ITER1).  A node whose life ended (put back by its
 *    owner, or recycled) must not be signalled, claimed or recycled again:
 *    in the C code it may be in use for another wait by then.
 *  - Nested reads (-DNESTED): thread 1, holding a read share, locks for
 *    reading again (step 0) and then releases both shares; the per-thread
 *    count of read holds is exact here (no hash collisions).
 *  - A lock call's locals are forgotten once its critical section starts
 *    and when it has ended (FORGET_CALL): nobody reads them again, so
 *    states that differ only in them are one.
 *
 * The liveness variant (-DLIVE, no timeouts, downgrades or nested reads)
 * asks whether a thread can wait for ever while the others keep taking the
 * lock: above all a writer at the queue head while readers keep coming
 * and stealing shares past it.  That is an infinite run, not an end state,
 * so R2 cannot see it; here each thread locks and unlocks for ever, and
 * spin looks for an acceptance cycle of the negated formula (R6) under
 * weak fairness, as in mutex.pml's M5.  It runs with 2 readers and 1
 * writer, for each kind.  What changes:
 *  - Time passes.  With "due" a free choice, a run could answer "not yet"
 *    for ever, which no clock allows.  Timer(t) stands for the clock
 *    instead: it may set due_t[t] at any step after t enqueued (when the C
 *    code stamps the node's start time) until t holds the lock, and weak
 *    fairness makes it fire, since it stays enabled until it does.  The
 *    head's flag CAS (HANDOFF or not), group_member's look at a writer
 *    (stop or skip) and leave_queue's look at a deferred successor read
 *    due_t (a prefer-writer writer is due at once); hl__node_wait_until's
 *    wake-up happens only once the waiter's timer fired (its deadline is
 *    the threshold), so that a waiter is not woken to find itself not yet
 *    due.  A timer firing early or late is one more interleaving.
 *  - The head's load and CAS are one step already (see "Steps merged"),
 *    which here also assumes that the head's CAS loop on the word succeeds
 *    in the end (lock-free, not wait-free), as mutex.pml's M5 states; and
 *    so is a take.
 *  - Each thread reuses its nodes, as the C code does: put() and a
 *    recycle start a node's life again (a prefer-reader reader has two: one
 *    it gave up in step 2b may still be queued while it takes the other).
 *  - A prefer-reader reader goes to the queue only in a step at which
 *    take() refuses it (LIVE_MAY_QUEUE), as the C code goes there only
 *    after a load at which take() refused (a reader's fast path retries a
 *    CAS that fails, it does not queue).  Without that guard the free
 *    choice to queue could be made while a share is there for the taking,
 *    again and again: spin then finds a reader head in grant_group whose
 *    take_last loses its tail CAS for ever to the other reader, which
 *    queues behind it, takes its share in step 2b and abandons the node,
 *    round after round.  In the C code that reader cannot find the word
 *    refusing it while the granter holds its share (a load after its own
 *    fetch_sub reads that share), so the cycle is the guard's to exclude,
 *    not the lock's.
 *    Values nobody reads again are forgotten so that rounds differing only
 *    in them are one state: the round's locals, `head` in the step that
 *    clears the flags (it is read only while flags are set), and a node's
 *    state and link when its owner puts it back (its successor was read,
 *    and a late access trips the life assertions).
 *  - The assertions R1, R3 and R5 are checked as in the other rows.
 *
 * Properties:
 *  R1 exclusion: a writer in its critical section is alone there, readers
 *     share it; the word agrees: a writer in its critical section is the
 *     word's writer with no readers, and the reader count covers every
 *     read share held (the ghost rholders, from the acquisition to the
 *     unlock's decrement; a nested reader holds two) at every acquisition,
 *     grant and release (assert);
 *  R2 no lost wake-up and no deadlock: every thread finishes (no invalid end
 *     state), timed-out waiters and heads included; with -DNESTED a reader
 *     that locks again while holding a share, whatever waits; with
 *     -DREADER_DEPENDS (prefer-reader, writer-yields) R8 below;
 *  R3 handoff: once HANDOFF is in the word, or the waiter that the flags
 *     name has woken up due (its mark_due returned), the next holder is
 *     that waiter: no reader steals a share (prefer-reader: readers may, by
 *     design, and take no debt away), no writer or head takes the lock, no
 *     group is granted first (the ghost handoff_to, checked at every
 *     acquisition), and the handoff goes to that waiter; the CAS of a
 *     release or a downgrade to a claimed head fails only because HANDOFF
 *     was added by that head's mark_due (the hl__bug check of
 *     release_to_head), and then hands the lock over; the CAS after a pass
 *     fails only because the head that gave up had added HANDOFF.  The
 *     debt is dropped only when the waiter gave up (it withdraws its flags,
 *     or the release or downgrade passes headship on), or by a downgrade
 *     that releases a prefer-reader writer head to race again (by design:
 *     it grants the readers queued behind it, step 4b);
 *  R4 clean end state: the word free (no writer, no readers, no flags), the
 *     queue empty, and every node's life ended exactly once (put back by
 *     its owner, or abandoned and recycled) (assert);
 *  R5 reader groups: a member is a live, waiting reader node queued behind
 *     the granting head, out of the queue once taken (the tail does not
 *     name it); after the extraction no member is reachable from the head;
 *     the granter holds a read share (its own, or step 4b's), and no
 *     writer and no flags are in the word while the group is counted and
 *     signalled; a queue head never finds flags in the word (only a head
 *     sets them, and the release that woke it cleared its own), and
 *     neither does leave_queue's fetch_or (assert);
 *  R6 (-DLIVE) no starvation: under weak fairness, with time as the timer
 *     processes above, every thread enters its critical section infinitely
 *     often, []<>(cs_who == t) for each thread t (ltl, pan -a -f): in
 *     particular a writer at the queue head behind readers that keep
 *     coming (its timer fires, mark_due adds HANDOFF, stealing stops and
 *     the last reader out hands it the lock), and a reader head behind a
 *     writer that keeps stealing the free word.  In a prefer-reader lock
 *     for the readers only: its writers may starve while read holds
 *     overlap, which is that kind's promise (glibc's default); with
 *     -DLIVE_WRITER the formula asks for the writer too, and spin finds
 *     the cycle;
 *  R7 (not with -DLIVE) the last user may free the lock (docs/design.md
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
 *     may still be inside);
 *  R8 (-DREADER_DEPENDS, prefer-reader, writer-yields) a reader may wait
 *     for another reader while it holds a share: reader 1, in the critical
 *     section of its last lock call, waits until reader 2 has had a share
 *     (prefer-reader: a reader queued behind a writer is never left asleep
 *     while the lock is read-held, steps 2b, 4b and 5; writer-yields: the
 *     writer head's yield, step 4c, lets it in).  A lock that breaks the
 *     promise leaves them blocked for good (R2).  Writer-yields keeps it
 *     only as a safety property: a yield is always possible, and whether
 *     yields come often enough is time, not modelled.
 *  R9 (not with -DLIVE) no dead head: live flags in a held word never
 *     name a node that its owner gave up, unless someone's look at it is
 *     still to come (its owner's second look in give_up's c, or the look
 *     of whoever put those flags into a held word for it: leave_queue's
 *     recording, a downgrade that keeps a writer head's flags).  Such
 *     flags are taken back by the last release only, and while read
 *     holds overlap (readers share a word whose flags have no HANDOFF,
 *     and only the node's owner could add it) none comes, and the
 *     writers queued behind starve: the liveness runs have no timeouts,
 *     so the state is checked instead, by the DeadHead process (assert).
 *     Found by this check: a waiter that gave up between leave_queue's
 *     pass and its recording, and one that gave up between a downgrade's
 *     commit and its share (both fixed by the recorder's look).
 *
 * Seeded bugs (-D); each must be rejected (tests/models/run.sh):
 *  BUG_STEAL_FROM_RELEASE        a reader takes a share from a word with
 *                                live flags and no holder (take() before
 *                                cac37cf): the last reader out, which holds
 *                                the lock through those flags until its
 *                                CAS, finds a reader in the word (R3:
 *                                release_to_head's check that only HANDOFF
 *                                was added);
 *  BUG_READER_IGNORES_HANDOFF    a reader's take ignores HANDOFF (R3);
 *  BUG_LAST_READER_NO_WAKE       the last reader out does not run
 *                                release_to_head: the head that set WAKE
 *                                sleeps for good (R2);
 *  BUG_LAST_READER_IGNORES_HANDOFF  the last reader out runs
 *                                release_to_head only for WAKE without
 *                                HANDOFF: a due head sleeps for good (R2);
 *  BUG_CLAIMED_BLIND_STORE       release_to_head, having claimed the head,
 *                                computes the new word once and stores it
 *                                without a compare: HANDOFF added by the
 *                                head's mark_due just before the claim is
 *                                lost, the word is released and the due
 *                                head is only woken, so a reader steals
 *                                the lock owed to it (R3);
 *  BUG_HANDOFF_OTHER_HEAD        mark_due adds HANDOFF to live flags
 *                                without checking that they name its node:
 *                                a waiter recorded as head earlier (its
 *                                wait not over) marks the flags of the
 *                                head that followed it (R3: the debt is
 *                                owed to the wrong waiter);
 *  BUG_RELEASE_BEFORE_PASS       release_to_head as before cd7e9af: the
 *                                word is released first, and headship is
 *                                passed on from a head that gave up
 *                                afterwards (-DTIMED: R4 or R7);
 *  BUG_GROUP_COUNT_AFTER_SIGNAL  grant_group adds the group to the count
 *                                after signalling the members: a member
 *                                holds a share the word does not count (R1);
 *  BUG_NO_MARK_DUE               a due waiter's wake-up does not add
 *                                HANDOFF: readers keep stealing past it
 *                                (R3: the starvation that mark_due
 *                                prevents, seen at its first steal; with
 *                                -DLIVE, where R3 records no debt for it,
 *                                R6: an acceptance cycle);
 *  BUG_RECORD_PLAIN_STORE        leave_queue sets WAKE with a load and a
 *                                store instead of a fetch_or: a reader
 *                                owner overwrites a concurrent reader's
 *                                release, the count never drains and the
 *                                recorded writer sleeps for good (R2);
 *  BUG_GROUP_TAKES_LAST          hl__queue_extract takes the last node
 *                                without take_last's tail CAS: the tail
 *                                still names a member (R5; without that
 *                                check, the next enqueuer links behind a
 *                                node that left the queue, R2);
 *  BUG_GROUP_REFUSED_KEEPS_COUNT a group member that gave up (-DTIMED)
 *                                keeps its share in the count: the lock
 *                                stays read-held (R4);
 *  BUG_DOWNGRADE_DROPS_FLAGS     a downgrade's share replaces a writer
 *                                head's flags instead of joining them
 *                                (-DDOWNGRADE, 2 writers): a due head is
 *                                overtaken (R3), one that is not due
 *                                sleeps for good;
 *  BUG_DOWNGRADE_NO_COMMIT       the downgrade of b4c5acc (see History):
 *                                a node whose life ended is signalled (R4);
 *  BUG_WITHDRAW_FLAGS            a writer's release without its commit, as
 *                                at 82caaed, beside give_up's withdrawal
 *                                (-DTIMED): the releaser reads the flags
 *                                and `head`, and the head withdraws them
 *                                and goes; a new head's flags then make
 *                                the releaser's CAS fail in a way the
 *                                claimed head's mark_due cannot (R3: the
 *                                hl__bug check), or its refused claim
 *                                passes headship on from a node that left;
 *  BUG_WITHDRAW_NO_PASS          a head that withdraws its flags (a) does
 *                                not pass headship on: the waiter behind
 *                                it sleeps (R7: the destroy finds the
 *                                queue not empty; it would sleep for good);
 *  BUG_WITHDRAW_COMMITTED        give_up's a also withdraws from a word
 *                                with no holder: a committed release is
 *                                under way, and its CAS on the claimed
 *                                head finds the flags gone (R3: the
 *                                hl__bug check);
 *  BUG_NO_NESTED                 a nested read (-DNESTED) queues as any
 *                                read lock: behind a writer's HANDOFF, or
 *                                behind a queued writer, it waits for its
 *                                own share to go (R2);
 *  BUG_ADMIT_GIVE_UP_FIRST       step 2b as from b4c5acc to a2eb59f: the
 *                                node given up first, then the take; a
 *                                reader that finds the share gone queues
 *                                again with a new node (see History:
 *                                -DLIVE, R6, an acceptance cycle);
 *  BUG_ADMIT_KEEPS_GROUP_SHARE   step 2b keeps the second share that a
 *                                group gave its node before the give-up:
 *                                the lock stays read-held (R7's destroy
 *                                waits for a free word for good, R2);
 *  BUG_NO_ADMIT                  prefer-reader without step 2b: a reader
 *                                queued behind a writer head sleeps while
 *                                the lock is read-held (-DREADER_DEPENDS:
 *                                R8, R2);
 *  BUG_NO_GRANT_BEHIND           prefer-reader without step 4b: a writer
 *                                head sets its flags on a read-held word
 *                                and sleeps ahead of the readers queued
 *                                behind it (-DREADER_DEPENDS -DITER1=2:
 *                                R8, R2);
 *  BUG_LEAVE_NO_DEAD_CHECK       leave_queue records a parked successor
 *                                without looking at it afterwards: one
 *                                that gave up between the pass and the
 *                                recording stays recorded (-DTIMED: R9);
 *  BUG_DOWNGRADE_NO_DEAD_CHECK   a downgrade that keeps a writer head's
 *                                flags does not look at the head after
 *                                its share: a head that gave up after the
 *                                commit stays recorded (-DREADERS=1
 *                                -DWRITERS=2 -DTIMED -DDOWNGRADE: R9);
 *  BUG_NO_YIELD                  writer-yields without step 4c: that is,
 *                                prefer-writer (-DREADER_DEPENDS: R8,
 *                                R2).
 *
 * Variants: READERS (default 2), WRITERS (default 1), ITER (default 1),
 * ITER1 (thread 1's lock calls, default ITER); KIND (above); -DTIMED lets
 * each lock call be timed or not (a queued waiter may give up, a head may
 * time out while spinning or waiting); -DDOWNGRADE lets a writer downgrade
 * or not before it unlocks; -DNESTED lets thread 1 lock for reading again
 * while it holds a share; -DREADER_DEPENDS checks R8; -DLIVE checks R6
 * (threads loop for ever, ITER is ignored; -DLIVE_ANY_QUEUE drops the
 * LIVE_MAY_QUEUE guard, and spin finds the cycle described above); -DREACH=k turns reachability
 * marker k into an assertion (listed in docs/verification.md).
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
#ifndef ITER1
#define ITER1 ITER
#endif
/* Kinds, numbered as in rwlock.h (cf9daa3). */
#define K_PREFER_WRITER 0
#define K_FAIR          1
#define K_PREFER_READER 2
#define K_WRITER_YIELDS 3
/* Whether a writer is due as soon as it heads the queue (writer_first). */
#define WRITER_FIRST (KIND == K_PREFER_WRITER || KIND == K_WRITER_YIELDS)
/* Fair unless told: its free choices include every run of prefer-writer
 * (a writer waiter always due, a group stopping at every writer). */
#ifndef KIND
#define KIND K_FAIR
#endif
#if KIND != K_PREFER_WRITER && KIND != K_FAIR && KIND != K_PREFER_READER && KIND != K_WRITER_YIELDS
#error "KIND is K_PREFER_WRITER, K_FAIR, K_PREFER_READER or K_WRITER_YIELDS"
#endif
#define NTHREADS (READERS + WRITERS)
/* Lock calls of thread t (thread 1, a reader, may make ITER1). */
#define ITERS(t) ((t) == 1 -> ITER1 : ITER)
#if ITER1 > ITER
#define CALLS ITER1
#else
#define CALLS ITER
#endif
#if defined(NESTED) || defined(READER_DEPENDS)
#if READERS < 2 && defined(READER_DEPENDS)
#error "READER_DEPENDS: 2 readers"
#endif
#if READERS < 1
#error "NESTED: a reader"
#endif
#endif
#if defined(READER_DEPENDS) && KIND != K_PREFER_READER && KIND != K_WRITER_YIELDS
#error "READER_DEPENDS is prefer-reader's and writer-yields' promise"
#endif

#ifdef LIVE
#if defined(TIMED) || defined(DOWNGRADE) || defined(NESTED) || defined(READER_DEPENDS) || defined(BUG_WITHDRAW_FLAGS)
#error "LIVE is checked without timeouts, downgrades, nested reads and dependencies"
#endif
/* Nodes per thread, reused: a prefer-reader reader gives a node up in
 * step 2b and takes another while the first is still queued. */
#if KIND == K_PREFER_READER
#define NPT 2
#else
#define NPT 1
#endif
/* A prefer-reader reader goes to the queue only after a look at which it
 * could not take a share (see the header). */
#if KIND == K_PREFER_READER && !defined(LIVE_ANY_QUEUE)
#define LIVE_MAY_QUEUE (!rd || !READER_TAKE)
#else
#define LIVE_MAY_QUEUE true
#endif
/* Values nobody reads again are forgotten (see the header). */
#define FORGET_HEAD ; head = 0
/* hl__node_wait_until wakes a waiter up only once it is due (its timer) */
#define WOKEN_DUE(x) && due_t[OWNER(x)]
#else
/* Fresh nodes per thread: one per lock call (two with BUG_NO_NESTED: the
 * nested call queues too; with BUG_ADMIT_GIVE_UP_FIRST a prefer-reader
 * thread one more for step 2b's new start); a thread that has used them
 * all polls (lock_poll). */
#ifdef BUG_NO_NESTED
#define NPT_CALLS (2 * CALLS)
#else
#define NPT_CALLS CALLS
#endif
#if KIND == K_PREFER_READER && defined(BUG_ADMIT_GIVE_UP_FIRST)
#define NPT (NPT_CALLS + 1)
#else
#define NPT NPT_CALLS
#endif
#define FORGET_HEAD
#define WOKEN_DUE(x)
#endif
#define NNODES (NTHREADS * NPT)
/* Node x belongs to thread OWNER(x); threads 1..READERS are readers. */
#define OWNER(x) (((x) - 1) / NPT + 1)
#define ISREADER(x) (OWNER(x) <= READERS)
/* A writer waiter of a prefer-writer lock is due at once (head_due). */
#define PW_WRITER(x) (WRITER_FIRST && !ISREADER(x))

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
#define S_YIELD     253      /* wait_node's yield time (step 4c) */
#define S_WOKEN     254
#define S_TIMEDOUT  255

/* node life (ghost) */
#define L_NEW  0
#define L_USED 1        /* enqueued, not yet put back or recycled */
#define L_GONE 2

/* how a wait was given up (give_up) */
#define G_WITHDRAWN      1      /* a: flags taken back, n armed: pass on */
#define G_WAIT           2      /* b: a committed release's signal comes */
#define G_ABANDONED      3      /* c: n abandoned, the queue's */
#define G_ABANDONED_HEAD 4      /* c, then a: flags taken back, pass on from n */

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

/* ghosts */
byte life[NNODES + 1];
bool member[NNODES + 1];        /* R5: taken into the group being granted */
byte in_w = 0;                  /* R1: writers in the critical section */
byte in_r = 0;                  /*     readers in it */
byte rholders = 0;              /* R1: read shares held (a thread may hold two) */
byte handoff_to = 0;            /* R3: the thread the lock is owed to */
byte finished = 0;
bool look_due[NNODES + 1];      /* R9: n's owner gave n up (give_up's c) and
                                 * has its second look at the word to come */
byte recording = 0;             /* R9: the node leave_queue records as head,
                                 * until its look at that node's state */
#ifdef READER_DEPENDS
byte others_got = 0;            /* R8: readers 2.. that have had a share */
#endif

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
	n = 0; sig = 0; pred = 0; nx = 0; d = 0; cur = 0; h = 0; first = 0; last = 0; \
	i = 0; j = 0; k = 0; sw_writer = 0; sw_readers = 0; how = 0; \
	ok = false; due = false; rt = false; timed = false; late = false; \
	sw_wake = false; sw_handoff = false; grant_all = false

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

/* R6: every thread enters its critical section infinitely often; in a
 * prefer-reader lock every reader (a writer may starve: LIVE_WRITER asks
 * for it too, and spin finds the cycle). */
#if NTHREADS != 3 || READERS != 2
#error "LIVE: 2 readers and 1 writer"
#endif
#if KIND == K_PREFER_READER && !defined(LIVE_WRITER)
ltl starvation_free { []<> (cs_who == 1) && []<> (cs_who == 2) }
#else
ltl starvation_free { []<> (cs_who == 1) && []<> (cs_who == 2) && []<> (cs_who == 3) }
#endif
#endif

#define FLAGS_SET (w_wake || w_handoff)
#define HELD (w_writer != 0 || w_readers != 0)

/* take() for a reader: no writer; no HANDOFF (but in a prefer-reader
 * lock); and not a word with live flags and no holder (a committed
 * release: the releaser holds the lock through the flags until its CAS). */
#if KIND == K_PREFER_READER
#define NO_HANDOFF_OR_PR true
#else
#define NO_HANDOFF_OR_PR (!w_handoff)
#endif
#if defined(BUG_READER_IGNORES_HANDOFF)
#define READER_TAKE (w_writer == 0 && (w_readers != 0 || !w_wake))
#elif defined(BUG_STEAL_FROM_RELEASE)
#define READER_TAKE (w_writer == 0 && NO_HANDOFF_OR_PR)
#else
#define READER_TAKE (w_writer == 0 && NO_HANDOFF_OR_PR && (w_readers != 0 || !w_wake))
#endif

/* R3: at every acquisition by thread t; a reader of a prefer-reader lock
 * passes a writer's HANDOFF by design (R3_RD), and takes no debt away. */
#define R3_OK(t) (handoff_to == 0 || handoff_to == (t))
#if KIND == K_PREFER_READER
#define R3_RD(t) true
#else
#define R3_RD(t) R3_OK(t)
#endif
#define R3_PAID(t) if :: handoff_to == (t) -> handoff_to = 0 :: else -> skip fi

/* ---- waiting core ---------------------------------------------------------- */

/* mark_due's look (names(), HANDOFF not yet set): whether it has
 * something to do for node x. */
#ifdef BUG_HANDOFF_OTHER_HEAD
#define MARKS(x) (w_wake && !w_handoff)
#else
#define MARKS(x) (w_wake && !w_handoff && head == (x))
#endif

/* hl__node_wait_until(n, NULL, ...) as wait_node calls it: park (the spin
 * phase of a due head is a waiter that has not parked yet), return the
 * signal; wake up (S_WOKEN, node WAITING again) only when mark_due has
 * something to do (see the header); with a deadline, wake up at it
 * (S_TIMEDOUT, node WAITING again: still armed, for give_up). */
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
		LK(nstate[wu_n] == N_PARKED && MARKS(wu_n) WOKEN_DUE(wu_n)) ->
			nstate[wu_n] = N_WAITING; wu_sig = S_WOKEN
	      };
	      break
#if KIND == K_WRITER_YIELDS && !defined(BUG_NO_YIELD)
	   :: /* step 4c: a writer head's yield time, at any moment while
	       * its flags stand in a held word (at other times it looks,
	       * finds nothing to withdraw and waits for its signal: a
	       * wait that has not ended) */
	      atomic {
		LK(!rd && nstate[wu_n] == N_PARKED && FLAGS_SET && head == wu_n && HELD) ->
			nstate[wu_n] = N_WAITING; wu_sig = S_YIELD
	      };
	      break
#endif
#ifdef TIMED
	   :: atomic { wu_timed && nstate[wu_n] == N_PARKED -> nstate[wu_n] = N_WAITING; wu_sig = S_TIMEDOUT };
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
		:: MARKS(md_n) -> reach(6); w_handoff = true
		:: else -> skip
		fi;
#endif
#if !(defined(LIVE) && defined(BUG_NO_MARK_DUE))
		/* (with -DLIVE the bug is R6's to find: no debt is recorded
		 * for R3, as nothing marked it) */
		if
		:: w_wake && head == md_n ->
			assert(handoff_to == 0 || handoff_to == OWNER(md_n));
			handoff_to = OWNER(md_n)
		:: else -> skip
		fi
#else
		skip
#endif
	}
}

/* wait_node: wait, and mark due at every wake-up; returns a signal or
 * S_TIMEDOUT (the deadline: n still armed). */
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

/* hl__node_signal(x, s): ok = false if x was abandoned. */
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

/* hl__node_recycle(x): x was abandoned and nobody refers to it any more. */
inline recycle(rc_x)
{
	atomic {
		assert(life[rc_x] == L_USED && nstate[rc_x] == N_ABANDONED);
#ifdef LIVE
		/* back to its owner's pool (reused; see put) */
		life[rc_x] = L_NEW; nnext[rc_x] = 0;
#else
		life[rc_x] = L_GONE;
#endif
		nstate[rc_x] = N_FREE
	}
}

/* hl__thread_node_put: the owner is done with its node. */
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

/* hl__queue_pass_head(ph_n, ph_defer ? HL_PASS_DEFER_WAKE : 0) -> d: the
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
			assert(handoff_to == OWNER(h));
			handoff_to = 0;
			if
			:: ISREADER(h) -> reach(8); w_writer = 0; w_readers = 1; rholders++
			:: else -> w_writer = OWNER(h)
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

/* release_to_head(s), s = (sw_writer, 0 readers, sw_wake, sw_handoff), the
 * word that the committed release left: live flags and no holder (the
 * write holder's CAS took its TID out, or the last reader's fetch_sub took
 * the count to 0), so that nobody else can take the lock or set flags
 * until the release CAS.  Claim the head's node; if it is ours, CAS the
 * word to the head's TID or one reader (HANDOFF) or to 0, recomputing if
 * h's mark_due added HANDOFF, and post; if h gave up, pass headship on
 * first, then CAS the word to 0 (retried only for a HANDOFF that a stale
 * mark_due added).  With BUG_WITHDRAW_FLAGS the write holder does not
 * commit (sw_writer = its TID) and runs the release code of 82caaed: a
 * refused claim drops h's flags, and a failed CAS after the pass serves
 * the new head whose flags made it fail. */
inline release_to_head()
{
	do
	:: /* Read `head` (nobody writes it while flags are set), claim h,
	    * and if it is ours make the first try of the CAS.  One step:
	    * the only thing that can happen between the claim and the CAS
	    * and touch what either touches is h's mark_due (h's wake-up came
	    * before the claim, which needs a node that is not woken), and
	    * mark_due commutes with the claim, so it happens before it here
	    * (the CAS then fails just the same).  A head that gave up: its
	    * R3 debt goes. */
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
			reach(16);
			if
			:: sw_handoff -> reach(13)
			:: else -> skip
			fi;
			assert(handoff_to == 0 || handoff_to == OWNER(h));
			handoff_to = 0;
#ifdef BUG_WITHDRAW_FLAGS
			if
			:: sw_writer != 0 ->
				/* 82caaed: a write holder drops h's flags (a
				 * plain store) before the pass */
				w_wake = false; w_handoff = false; sw_wake = false; sw_handoff = false
			:: else -> skip
			fi;
#endif
			skip
		fi
	   };
	   if
	   :: ok ->
		do
		:: rt -> break
		:: else -> atomic { LOCK_ACCESS; claimed_cas() }
		od;
		/* hl__node_post: from here on, only h's node */
		if
		:: sw_handoff -> nstate[h] = S_HANDED
		:: else -> nstate[h] = S_RELEASED
		fi;
		break
	   :: else ->
#ifndef BUG_RELEASE_BEFORE_PASS
		pass_head(h, false);
#endif
		/* CAS(s -> 0).  It fails only if a mark_due that read a stale
		 * `head` added HANDOFF (a later wait on h's recycled node: not
		 * modelled, so here it never fails); then it is made again. */
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
#ifdef BUG_WITHDRAW_FLAGS
				if
				:: sw_writer != 0 ->
					/* 82caaed: a new head's flags; serve it */
					assert(w_writer == sw_writer && w_readers == 0 && w_wake && !sw_wake);
					sw_wake = w_wake; sw_handoff = w_handoff;
					break
				:: else -> skip
				fi;
#endif
				assert(w_writer == 0 && w_readers == 0 && w_wake && sw_wake && w_handoff && !sw_handoff);
				sw_handoff = true
			fi
		   }
		od;
#ifdef BUG_RELEASE_BEFORE_PASS
		/* the release order before cd7e9af: the word first */
		pass_head(h, false);
#endif
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

#ifdef DOWNGRADE
/* downgrade_to_head's CAS loops, inside an atomic step: s = (no holder,
 * sw_wake, sw_handoff), the word the commit left; rt = false if the CAS
 * failed, which happens only when h's mark_due added HANDOFF (nobody takes
 * a word with flags and no holder, no head sets flags on it, and h cannot
 * withdraw from it: give_up's b); s then has it, for the next try.
 * DG_KEEP: a writer head keeps its flags, our share beside them.
 * DG_CLAIMED: h claimed: a reader head with HANDOFF is handed a share
 * beside ours, any other (a reader not due; prefer-reader: a writer head)
 * races again.  DG_PASS: h gave up and headship was passed on: one
 * reader, no flags. */
#define DG_KEEP    1
#define DG_CLAIMED 2
#define DG_PASS    3
#define DG_WORD_AS_READ (w_writer == 0 && w_readers == 0 && w_wake == sw_wake && w_handoff == sw_handoff)
inline downgrade_cas()
{
	if
	:: DG_WORD_AS_READ ->
		if
		:: how == DG_KEEP ->
			w_readers = 1; rholders++
#ifdef BUG_DOWNGRADE_DROPS_FLAGS
			; w_wake = false; w_handoff = false
#endif
		:: how == DG_CLAIMED && sw_handoff && ISREADER(h) ->
			/* handed: h's share and ours */
			reach(11);
			assert(handoff_to == OWNER(h));
			handoff_to = 0;
			w_readers = 2; rholders = rholders + 2; sw_readers = 2;
			w_wake = false; w_handoff = false FORGET_HEAD
		:: how == DG_CLAIMED && !(sw_handoff && ISREADER(h)) ->
			/* released: h races again (R3: a prefer-reader writer
			 * head's debt goes, by design: it grants the readers
			 * behind it, step 4b) */
			reach(27);
			assert(handoff_to == 0 || (KIND == K_PREFER_READER && !ISREADER(h) && handoff_to == OWNER(h)));
			handoff_to = 0;
			w_readers = 1; rholders++;
			w_wake = false; w_handoff = false FORGET_HEAD
		:: how == DG_PASS ->
			w_readers = 1; rholders++;
			w_wake = false; w_handoff = false FORGET_HEAD
		fi;
		rt = true
	:: else ->
		reach(28);
		/* only HANDOFF was added */
		assert(!sw_handoff && w_handoff && w_wake && w_writer == 0 && w_readers == 0);
		sw_handoff = true;
		rt = false
	fi
}

/* downgrade_to_head(s): a downgrade whose commit left s, the head's flags
 * with no holder.  Read `head`; a writer head (not prefer-reader) keeps
 * its flags: CAS(s -> s + one reader).  Else claim h: refused (h gave
 * up), pass headship on from it, then CAS(s -> one reader); claimed,
 * CAS(s -> two readers) for a reader head with HANDOFF and post HANDED,
 * else CAS(s -> one reader) and post RELEASED.  The read of `head`, the
 * claim and the first try of the CAS are one step, as in release_to_head
 * (see the header). */
inline downgrade_to_head()
{
	atomic {
		LOCK_ACCESS;
		h = head;
		assert(life[h] == L_USED);
		rt = false;
		if
		:: !ISREADER(h) && KIND != K_PREFER_READER ->
			reach(12);
			how = DG_KEEP;
			recording = h;
			downgrade_cas()
		:: else ->
			if
			:: nstate[h] == N_WAITING || nstate[h] == N_PARKED ->
				nstate[h] = N_CLAIMED;
				how = DG_CLAIMED;
				downgrade_cas()
			:: else ->
				/* h gave up: its R3 debt goes */
				assert(nstate[h] == N_ABANDONED);
				reach(30);
				assert(handoff_to == 0 || handoff_to == OWNER(h));
				handoff_to = 0;
				how = DG_PASS
			fi
		fi
	};
	if
	:: how == DG_PASS -> pass_head(h, false)
	:: else -> skip
	fi;
	do
	:: rt -> break
	:: else -> atomic { LOCK_ACCESS; downgrade_cas() }
	od;
	if
	:: how == DG_KEEP ->
#ifndef BUG_DOWNGRADE_NO_DEAD_CHECK
		/* h gave up, its second look (give_up's c) too early to see a
		 * holder beside its flags?  Then they are ours to take back
		 * (R9), and headship ours to pass on from h, as in
		 * leave_queue */
		atomic {
			LOCK_ACCESS;
			if
			:: FLAGS_SET && head == h && HELD && nstate[h] == N_ABANDONED ->
				reach(34);
				w_wake = false; w_handoff = false;
				assert(handoff_to == 0);
				ok = true
			:: else -> ok = false
			fi;
			recording = 0
		};
		if
		:: ok -> pass_head(h, false)
		:: else -> skip
		fi
#else
		recording = 0
#endif
	:: else -> skip
	fi;
	if
	:: how == DG_CLAIMED ->
		/* hl__node_post: from here on, only h's node */
		if
		:: sw_readers == 2 -> nstate[h] = S_HANDED
		:: else -> nstate[h] = S_RELEASED
		fi
	:: else -> skip
	fi;
	sw_readers = 0
}
#endif

/* hl__queue_extract takes waiter i into the group: it goes on the list
 * from `first`, linked through its next field. */
#define TAKE_MEMBER \
	nnext[i] = 0; \
	if \
	:: last != 0 -> nnext[last] = i \
	:: else -> first = i \
	fi; \
	last = i; \
	member[i] = true; \
	k++; \
	if \
	:: pred != gg_n -> reach(14)    /* behind a skipped writer */ \
	:: else -> skip \
	fi; \
	if \
	:: k == 2 -> reach(15) \
	:: else -> skip \
	fi

/* link_out's wait: node x's link is written, or x is the last node.
 * BUG_WALK_STOPS_AT_UNLINKED: the walk before issue 37 took a link still
 * to be written for the end of the queue (fault 5). */
#ifdef BUG_WALK_STOPS_AT_UNLINKED
#define LINKED(x) true
#else
#define LINKED(x) (nnext[x] != 0 || tail == (x))
#endif

/* grant_group(n): hl__queue_extract of the readers behind n (group_member:
 * fair, stopping at a due writer and skipping the others; prefer-writer,
 * stopping at any writer; prefer-reader, skipping every writer), the last
 * node too, by the tail CAS of take_last; then the count and the signals.
 * Called by a reader head that owns the lock (step 5) and by a writer head
 * of a prefer-reader lock through a borrowed share (step 4b). */
inline grant_group(gg_n)
{
	pred = gg_n;
	first = 0;
	last = 0;
	k = 0;
	do
	:: atomic {
		/* link_out: a link still to be written (the tail is past the
		 * node) is waited for, both links read here.  (Reads tail, for
		 * R5 too.) */
		LK(LINKED(pred) && (nnext[pred] == 0 || LINKED(nnext[pred])));
		i = nnext[pred];
		if
		:: i == 0 -> break
		:: else -> skip
		fi;
		j = nnext[i];           /* i's successor */
		assert(life[i] == L_USED);
		ok = false;
		if
		:: j == 0 ->
			/* the last node: it stays unless it is a live reader,
			 * taken by take_last (its tail CAS is the next step;
			 * an abandoned one stays for whoever passes headship
			 * to it) */
			if
			:: nstate[i] != N_ABANDONED && ISREADER(i) ->
#ifdef BUG_GROUP_TAKES_LAST
				/* taken without the tail CAS */
				nnext[pred] = 0; ok = true
#else
				rt = true
#endif
			:: else -> break
			fi
		:: j != 0 && nstate[i] == N_ABANDONED ->
			reach(4);
			nnext[pred] = j;        /* unlinked and recycled */
			recycle(i)
		:: j != 0 && nstate[i] != N_ABANDONED && ISREADER(i) ->
			nnext[pred] = j;
			ok = true
		:: j != 0 && nstate[i] != N_ABANDONED && !ISREADER(i) ->
			if
#if KIND == K_PREFER_READER
			:: reach(2); pred = i   /* prefer-reader: skip every writer */
#elif WRITER_FIRST
			:: grant_all -> reach(36); pred = i     /* step 4c: skip every writer */
			:: !grant_all -> reach(3); break        /* stop at any writer */
#elif defined(LIVE)
			:: !due_t[OWNER(i)] -> reach(2); pred = i
			:: due_t[OWNER(i)] -> reach(3); break
#else
			:: reach(2); pred = i   /* a writer that is not due: skip it */
			:: reach(3); break      /* a due writer: stop */
#endif
			fi
		fi;
		if
		:: ok ->
			/* R5: a live reader waiting behind the head, out of
			 * the queue (the tail does not name it) */
			assert(nstate[i] == N_WAITING || nstate[i] == N_PARKED);
			assert(tail != i);
			TAKE_MEMBER;
			if
			:: j == 0 -> break
			:: else -> skip
			fi
		:: else -> skip
		fi
	   };
	   if
	   :: rt ->
		/* take_last(pred, i), i the last node seen above:
		 * pred->next = 0 and CAS(tail, i -> pred) in one step (nobody
		 * else reads or writes pred->next while the tail names i); if
		 * an enqueuer came, the link is put back and i, interior now,
		 * is looked at again once its successor has linked itself. */
		atomic {
			LOCK_ACCESS;
			rt = false;
			if
			:: tail == i ->
				reach(17);
				nnext[pred] = 0;
				tail = pred;
				TAKE_MEMBER;    /* (i may have given up since the look:
				                 * its signal is then refused) */
				break
			:: else -> reach(18)
			fi
		};
		atomic { nnext[i] != 0 }
	   :: else -> skip
	   fi
	od;
	skip;   /* the loop's breaks land here, not in the d_step */
	/* R5: no member is reachable from the head any more */
	d_step {
		i = nnext[gg_n];
		do
		:: i == 0 -> break
		:: else -> assert(!member[i]); i = nnext[i]
		od;
		i = 0; j = 0; pred = 0; last = 0; ok = false
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
				:: ok -> rholders++; assert(R3_OK(OWNER(i)) && w_readers >= rholders)
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
		due = due_t[OWNER(d)] || PW_WRITER(d);
#else
		if
		:: PW_WRITER(d) -> due = true
		:: else ->
			if
			:: due = true
			:: due = false
			fi
		fi;
#endif
		if
		:: due || (rd && ISREADER(d)) ->
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
			atomic { LOCK_ACCESS; head = d; recording = d };
#ifdef BUG_RECORD_PLAIN_STORE
			atomic { LOCK_ACCESS; sw_writer = w_writer; sw_readers = w_readers };
			atomic { LOCK_ACCESS; assert(!FLAGS_SET); w_writer = sw_writer; w_readers = sw_readers; w_wake = true };
			sw_writer = 0; sw_readers = 0
#else
			atomic { LOCK_ACCESS; assert(!FLAGS_SET); w_wake = true }
#endif
			;
#ifndef BUG_LEAVE_NO_DEAD_CHECK
			/* d gave up after the pass (c), too late for its second
			 * look to see these flags?  Then they are ours to take
			 * back, and headship ours to pass on from d (the look
			 * at the word and d's state, and the CAS: one step) */
			atomic {
				LOCK_ACCESS;
				if
				:: FLAGS_SET && head == d && HELD && nstate[d] == N_ABANDONED ->
					reach(33);
					w_wake = false; w_handoff = false;
					assert(handoff_to == 0);
					ok = true
				:: else -> ok = false
				fi;
				recording = 0
			};
			if
			:: ok -> h = d; pass_head(h, false); h = 0
			:: else -> skip
			fi
#else
			recording = 0
#endif
		fi;
		due = false;
		d = 0;
		ok = false
	:: else -> skip
	fi
}

/* Step 4's flag CAS, inside the head's atomic step: `head` = n, n armed,
 * WAKE, and HANDOFF when due (a free choice; a prefer-writer writer is
 * always due; with -DLIVE its timer says). */
#ifdef LIVE
#define DUE_NOW (due_t[me] || PW_WRITER(n))
#endif
inline set_flags()
{
	head = n;
	nstate[n] = N_WAITING;          /* hl__node_arm */
	w_wake = true;
	if
#ifdef LIVE
	:: DUE_NOW ->
#else
	:: true ->
#endif
		w_handoff = true;       /* due */
		assert(handoff_to == 0); handoff_to = me
#ifdef LIVE
	:: !DUE_NOW ->
#else
	:: !PW_WRITER(n) ->
#endif
		w_handoff = false
	fi
}

/* give_up(n): the deadline of n's wait passed, n armed and unsignalled
 * (design comment, "Giving up").  sig = S_TIMEDOUT, given up as `how`
 * says, or the signal that won (the wait goes on as if it had not timed
 * out). */
#ifdef BUG_WITHDRAW_COMMITTED
#define WITHDRAW_OK true                /* a word with no holder too */
#else
#define WITHDRAW_OK HELD
#endif
inline give_up()
{
	how = 0;
	do
	:: /* The loads of the word and `head`, the look at n's state and
	    * the CAS of a: one step (the CAS compares the whole word;
	    * nothing that changes n's state or `head` meanwhile leaves the
	    * word as it was: see the header). */
	   atomic {
		LOCK_ACCESS;
		if
		:: FLAGS_SET && head == n && WITHDRAW_OK && (nstate[n] == N_WAITING || nstate[n] == N_PARKED) ->
			/* a. our flags in a held word: take them back */
			reach(19);
			if
			:: how == G_WAIT -> reach(29)   /* after b: a downgrade's share */
			:: else -> skip
			fi;
			w_wake = false; w_handoff = false;
			assert(handoff_to == 0 || handoff_to == me);
			handoff_to = 0;
			how = G_WITHDRAWN; sig = S_TIMEDOUT
		:: FLAGS_SET && head == n && !(WITHDRAW_OK && (nstate[n] == N_WAITING || nstate[n] == N_PARKED)) ->
			/* b. a committed release or downgrade (or one that
			 * claimed n) */
			how = G_WAIT
		:: !(FLAGS_SET && head == n) -> how = G_ABANDONED
		fi
	   };
	   if
	   :: how == G_WAIT ->
		/* hl__node_wait_until(n, NULL, 0, now + DUE_RECHECK_NS): the
		 * signal (a claim is waited out), or a wake-up while n is
		 * still armed and unsignalled, at any moment: then look again
		 * (a downgrade leaves a writer head's flags beside its
		 * share) */
		reach(20);
		if
		:: atomic { nstate[n] != N_WAITING && nstate[n] != N_PARKED && nstate[n] != N_CLAIMED -> sig = nstate[n] };
		   break
		:: atomic { nstate[n] == N_WAITING || nstate[n] == N_PARKED -> skip }
		fi
	   :: else -> break
	   fi
	od;
	if
	:: how == G_ABANDONED ->
		/* c. hl__node_give_up: the core's CAS to ABANDONED decides
		 * against a signal (a claim is waited out) */
		atomic {
			if
			:: nstate[n] == N_WAITING || nstate[n] == N_PARKED ->
				nstate[n] = N_ABANDONED; sig = S_TIMEDOUT; look_due[n] = true
			:: else -> sig = 0
			fi
		};
		if
		:: sig == 0 -> reach(22); atomic { nstate[n] != N_CLAIMED -> sig = nstate[n] }
		:: else ->
			/* recorded as head just before?  (n's TID is ours: nodes
			 * are not reused here.)  The load and the CAS are one
			 * step, as above. */
			atomic {
				LOCK_ACCESS;
				if
				:: FLAGS_SET && head == n && HELD ->
					reach(21);
					w_wake = false; w_handoff = false;
					assert(handoff_to == 0 || handoff_to == me);
					handoff_to = 0;
					how = G_ABANDONED_HEAD
				:: else -> skip
				fi;
				look_due[n] = false
			}
		fi
	:: else -> skip
	fi
}

/* Step 4c (writer-yields): withdraw_flags, as give_up's a and b; flags
 * that no longer name n (a committed release claimed it) leave n to its
 * signal.  sig stays S_YIELD if we took our flags back (n armed, nobody
 * signals it), else it is 0 (wait for the signal). */
inline yield_claim()
{
	how = 0;
	do
	:: atomic {
		LOCK_ACCESS;
		if
		:: FLAGS_SET && head == n && HELD && (nstate[n] == N_WAITING || nstate[n] == N_PARKED) ->
			reach(35);
			w_wake = false; w_handoff = false;
			assert(handoff_to == 0 || handoff_to == me);
			handoff_to = 0;
			how = G_WITHDRAWN
		:: FLAGS_SET && head == n && !(HELD && (nstate[n] == N_WAITING || nstate[n] == N_PARKED)) ->
			how = G_WAIT
		:: !(FLAGS_SET && head == n) -> how = G_ABANDONED
		fi
	   };
	   if
	   :: how == G_WAIT ->
		/* as give_up's b */
		if
		:: atomic { nstate[n] != N_WAITING && nstate[n] != N_PARKED && nstate[n] != N_CLAIMED -> sig = nstate[n] };
		   how = 0;
		   break
		:: atomic { nstate[n] == N_WAITING || nstate[n] == N_PARKED -> skip }
		fi
	   :: else -> break
	   fi
	od;
	if
	:: how == G_WITHDRAWN -> sig = S_YIELD
	:: how == G_ABANDONED -> sig = 0        /* not named: the signal comes */
	:: else -> skip                         /* b's signal */
	fi;
	how = 0
}

proctype Thread(byte me)
{
	byte it = 0, n, sig, pred, nx, d, cur, h, first, last, i, j, k, how;
	byte sw_writer, sw_readers;
	bool ok, due, rt, timed, late, rd, sw_wake, sw_handoff, grant_all;
#ifndef LIVE
	byte myref = REF_HELD;  /* R7 */
	byte nused = 0;         /* nodes taken from this thread's NPT */
#endif
#ifdef NESTED
	bool nested = false;    /* holds the nested (second) share */
#endif

	rd = me <= READERS;
	do
#ifdef LIVE
	:: true ->      /* lock calls for ever */
#else
	:: it == ITERS(me) && myref == REF_DROPPED -> break
	:: atomic {
		it == ITERS(me) && myref != REF_DROPPED &&
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
	:: it < ITERS(me) ->
		it++;
		timed = false;
#endif
#ifdef TIMED
		if
		:: timed = true
		:: skip
		fi;
#endif
again:
		/* Step 1 fast path, 1b optimistic spinning, and (with no node
		 * left) lock_poll: the take, tried any number of times (a
		 * reader's CAS that fails because of another reader is retried
		 * in the C code, which is one more try here); going to the
		 * queue takes a node. */
		do
		:: atomic {
			LK(rd && READER_TAKE) ->
				assert(R3_RD(me)); R3_PAID(me);
				w_readers++; rholders++;
				goto holding
		   }
		:: atomic {
			LK(!rd && w_writer == 0 && w_readers == 0 && !FLAGS_SET) ->
				assert(R3_OK(me)); handoff_to = 0;
				w_writer = me;
				goto holding
		   }
#ifdef LIVE
		:: atomic {
			LIVE_MAY_QUEUE &&
			(life[(me - 1) * NPT + 1] != L_USED || (NPT > 1 && life[me * NPT] != L_USED)) ->
				if
				:: life[(me - 1) * NPT + 1] != L_USED -> n = (me - 1) * NPT + 1
				:: else -> n = me * NPT
				fi
		   };
		   break
#else
		:: atomic { nused < NPT -> nused++; n = (me - 1) * NPT + nused };
		   break
#ifdef TIMED
		:: timed && nused == NPT -> goto timed_out     /* lock_poll's deadline */
#endif
#endif
		od;

		/* Step 2: hl__queue_node_init, hl__node_arm, hl__queue_enqueue:
		 * the node's fields are private until the xchg publishes it. */
		atomic {
			LOCK_ACCESS;
			assert(life[n] == L_NEW);
			nnext[n] = 0;
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
			sig = 0;
#if KIND == K_PREFER_READER && !defined(BUG_NO_ADMIT)
			/* Step 2b (reader_admit, 535f186): the word by an RMW
			 * after the link; if take() allows a share, take it
			 * (the CAS loop: its load and a CAS that succeeds on the
			 * same value act as one step; a refusal on any value it
			 * reads is a wait), and only then give n up: abandoned,
			 * n stays for the queue to skip; a group that reached n
			 * first gave a second share, which goes (never the last
			 * release: ours remains); made head first, we go on as
			 * step 5 with our share.  Refused: wait in the queue
			 * with n.  BUG_ADMIT_GIVE_UP_FIRST: b4c5acc..a2eb59f, n
			 * given up first, then the share taken, or, gone, the
			 * wait started again with a new node. */
			if
			:: rd ->
#ifdef BUG_ADMIT_GIVE_UP_FIRST
				atomic { LOCK_ACCESS; ok = READER_TAKE };
#else
				atomic {
					LOCK_ACCESS;
					if
					:: READER_TAKE -> reach(23); w_readers++; rholders++; ok = true
					:: else -> reach(24); ok = false
					fi
				};
#endif
				if
				:: ok ->
					atomic {
						assert(nstate[n] != N_PARKED && nstate[n] != N_CLAIMED);
						if
						:: nstate[n] == N_WAITING ->
							nstate[n] = N_ABANDONED; sig = S_TIMEDOUT
						:: else -> sig = nstate[n]      /* a signal came first */
						fi
					};
#ifdef BUG_ADMIT_GIVE_UP_FIRST
					if
					:: sig == S_TIMEDOUT ->
						atomic {
							LOCK_ACCESS;
							if
							:: READER_TAKE -> w_readers++; rholders++; ok = true
							:: else -> ok = false
							fi
						};
						if
						:: ok ->
#ifdef LIVE
							atomic { queued[me] = false; due_t[me] = false };
#endif
							goto holding
						:: else -> sig = 0; goto again
						fi
					:: else -> skip         /* the signal is waited on below */
					fi
#else
					if
					:: sig == S_TIMEDOUT ->
						/* hl__thread_node_abandoned: n is the queue's.
						 * Never a dead head (R9): it never parked,
						 * and leave_queue records only a parked
						 * successor */
#ifdef LIVE
						atomic { queued[me] = false; due_t[me] = false };
#endif
						goto holding
					:: sig == S_GROUP ->
						/* the group's share, a second one, goes */
						reach(31);
#ifndef BUG_ADMIT_KEEPS_GROUP_SHARE
						atomic {
							LOCK_ACCESS;
							assert(w_writer == 0 && w_readers >= 2 && rholders >= 2);
							w_readers--; rholders--
						};
#endif
#ifdef LIVE
						atomic { queued[me] = false; due_t[me] = false };
#endif
						put(n); goto holding
					:: sig == S_HEAD -> reach(32); goto owned
					:: else -> assert(false)        /* HANDED, RELEASED: never */
					fi
#endif
				:: else -> skip
				fi;
				ok = false
			:: else -> skip
			fi;
#endif
			if
			:: sig == 0 -> wait_node(n, sig, timed)
			:: else -> skip
			fi;
			if
			:: sig == S_TIMEDOUT ->
				late = true;
				give_up();
				if
				:: sig == S_TIMEDOUT -> goto gave_up
				:: else -> skip
				fi
			:: else -> skip
			fi;
			if
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
				assert(!FLAGS_SET && R3_RD(me)); R3_PAID(me);
				w_readers++; rholders++;
				goto owned
		   }
		:: atomic {
			LK(!rd && w_writer == 0 && w_readers == 0 && !FLAGS_SET) ->
				assert(R3_OK(me)); handoff_to = 0;
				w_writer = me;
				goto owned
		   }
		:: /* Spun out (or due, a free choice; a prefer-writer writer is
		    * always due): publish n in `head`, arm it, CAS WAKE
		    * (WAKE|HANDOFF when due) into the held word.  One step:
		    * the load that saw the word held and the CAS that succeeds
		    * on the same value act as if at the CAS (a CAS that fails
		    * is a retry), and `head` and the node are read by nobody
		    * until the flags are set.  Not once the deadline passed
		    * (it is checked first).  A prefer-reader writer on a
		    * read-held word takes step 4b first. */
		   atomic {
			LK(!late && (w_writer != 0 || (!rd && w_readers != 0))) ->
				assert(!FLAGS_SET);     /* R5: the head never finds flags */
#if KIND == K_PREFER_READER && !defined(BUG_NO_GRANT_BEHIND)
				if
				:: !rd && w_readers != 0 ->
					/* step 4b: a read share of our own, by a
					 * CAS from s (merged with the load) */
					sw_readers = w_readers;
					w_readers++; rholders++;
					ok = false
				:: else -> set_flags(); ok = true
				fi
#else
				set_flags(); ok = true
#endif
		   };
#if KIND == K_PREFER_READER && !defined(BUG_NO_GRANT_BEHIND)
		   if
		   :: !ok ->
			/* Step 4b (grant_and_claim): grant the readers
			 * queued behind us (all of them, the last one too);
			 * then give the share back and set the flags in one
			 * CAS, while other shares keep the word read-held (the
			 * CAS loop: the one that succeeds), or, ours the last,
			 * give it back alone (never the last release owing a
			 * signal: no flags can be live, we are the head) and
			 * look again.  BUG_4B_STALE_FLAGS: the code before
			 * issue 37's third session, the share given back, then
			 * the flag CAS from the word read before the share,
			 * which succeeds if the word is that again. */
			grant_group(n);
#ifdef BUG_4B_STALE_FLAGS
			atomic {
				LOCK_ACCESS;
				assert(w_writer == 0 && w_readers >= 1 && !FLAGS_SET);
				w_readers--; rholders--
			};
			atomic {
				LOCK_ACCESS;
				if
				:: w_writer == 0 && w_readers == sw_readers && !FLAGS_SET -> set_flags(); ok = true
				:: else -> reach(25); ok = false
				fi;
				sw_readers = 0
			}
#else
			atomic {
				LOCK_ACCESS;
				assert(w_writer == 0 && w_readers >= 1 && !FLAGS_SET);
				w_readers--; rholders--;
				if
				:: w_readers != 0 -> set_flags(); ok = true
				:: else -> reach(25); ok = false
				fi;
				sw_readers = 0
			}
#endif
		   :: else -> skip
		   fi;
#endif
		   if
		   :: ok ->
			ok = false;
			wait_node(n, sig, timed);
#if KIND == K_WRITER_YIELDS
			if
			:: sig == S_YIELD ->
				yield_claim();
				if
				:: sig == S_YIELD ->
					/* taken back: grant the queued readers
					 * through a share of our own when the
					 * word is read-held (4b's way), then
					 * (after the window, time) claim again */
					atomic {
						LOCK_ACCESS;
						if
						:: w_writer == 0 && w_readers != 0 && !FLAGS_SET ->
							w_readers++; rholders++; ok = true
						:: else -> ok = false
						fi
					};
					if
					:: ok ->
						grant_all = true;
						grant_group(n);
						grant_all = false;
						atomic {
							LOCK_ACCESS;
							assert(w_writer == 0 && w_readers >= 1 && !FLAGS_SET);
							w_readers--; rholders--
						}
					:: else -> skip
					fi;
					ok = false;
					sig = S_RELEASED        /* look again */
				:: sig == 0 ->
					wait_node(n, sig, timed)
				:: else -> skip
				fi
			:: else -> skip
			fi;
#endif
			if
			:: sig == S_TIMEDOUT ->
				late = true;
				give_up();
				if
				:: sig == S_TIMEDOUT -> goto gave_up
				:: else -> skip
				fi
			:: else -> skip
			fi;
			if
			:: sig == S_HANDED -> goto owned
			:: else -> assert(sig == S_RELEASED)     /* race again */
			fi
		   :: else -> skip      /* look again */
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
				:: it == ITERS(me) -> refs--; myref = (refs == 0 -> REF_LAST : REF_DROPPED)
				:: else -> skip
				fi
			};
			in_w--;
#endif
#ifdef DOWNGRADE
			if
			:: skip         /* hl_rwlock_unlock */
			:: /* hl_rwlock_downgrade */
#ifdef BUG_DOWNGRADE_NO_COMMIT
			   /* b4c5acc: read the flags and `head`, then one CAS
			    * from the word read: a reader head (prefer-reader:
			    * any head) has the flags cleared and is signalled
			    * RELEASED (or, refused, headship passed on from
			    * it); a writer head keeps its flags beside the
			    * share */
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
			      :: h != 0 && (ISREADER(h) || KIND == K_PREFER_READER) ->
				atomic {
					LOCK_ACCESS;
					if
					:: w_writer == me && w_readers == 0 && w_wake == sw_wake && w_handoff == sw_handoff ->
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
				atomic {
					LOCK_ACCESS;
					if
					:: w_writer == me && w_readers == 0 && w_wake == sw_wake && w_handoff == sw_handoff ->
						w_writer = 0; w_readers = 1; rholders++;
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
#else
			   /* With no flags, CAS(tid -> one reader).  With a
			    * head's flags, the commit: CAS(s -> s without our
			    * TID), the flags stay (the load and the CAS: one
			    * step, the CAS compares the word); then
			    * downgrade_to_head. */
			   atomic {
				LOCK_ACCESS;
				assert(w_writer == me && w_readers == 0);
				w_writer = 0;
				if
				:: !FLAGS_SET -> w_readers = 1; rholders++; ok = false
				:: else -> sw_wake = w_wake; sw_handoff = w_handoff; ok = true
				fi
			   };
			   if
			   :: ok -> downgrade_to_head()
			   :: else -> skip
			   fi;
#endif
			   h = 0; ok = false; rt = false; how = 0; sw_wake = false; sw_handoff = false; sw_readers = 0;
			   atomic { LOCK_ACCESS; in_r++; assert(in_w == 0 && w_writer == 0 && w_readers >= rholders) };
			   in_r--;
			   goto read_unlock
			fi;
#endif
			/* hl_rwlock_unlock, the write side: CAS(me -> 0) without
			 * flags; with them, the commit CAS(s -> s without our TID)
			 * and release_to_head (the load and the CAS: one step,
			 * the CAS compares the word) */
			atomic {
				LOCK_ACCESS;
				assert(w_writer == me && w_readers == 0);
				if
				:: !FLAGS_SET -> w_writer = 0; ok = false
				:: else ->
					sw_wake = w_wake; sw_handoff = w_handoff; ok = true;
#ifdef BUG_WITHDRAW_FLAGS
					sw_writer = me          /* no commit */
#else
					w_writer = 0; sw_writer = 0
#endif
				fi
			};
			if
			:: ok -> release_to_head(); sw_writer = 0
			:: else -> skip
			fi
		:: rd ->
#ifdef NESTED
			if
			:: me == 1 && !nested ->
				/* a second read lock while holding this one */
				nested = true;
#ifdef BUG_NO_NESTED
				goto again      /* as any read lock: take, or queue */
#else
				/* Step 0: a share added whatever waits, while
				 * the lock is read-held (ours keeps it so) */
				atomic {
					LOCK_ACCESS;
					assert(w_writer == 0 && w_readers >= 1);
					if
					:: !READER_TAKE -> reach(26)
					:: else -> skip
					fi;
					w_readers++; rholders++
				}
#endif
			:: else -> skip
			fi;
#endif
#ifdef LIVE
			atomic { in_r++; cs_who = me; assert(in_w == 0 && w_writer == 0 && w_readers >= rholders) };
			atomic { in_r--; cs_who = 0 };
#else
			atomic {
				LOCK_ACCESS;
				in_r++; assert(in_w == 0 && w_writer == 0 && w_readers >= rholders);
				FORGET_CALL;
#ifdef READER_DEPENDS
				if
				:: me >= 2 && !(others_got & (1 << me)) -> others_got = others_got | (1 << me)
				:: else -> skip
				fi;
#endif
				/* R7: the last lock call drops the reference */
				if
				:: it == ITERS(me) -> refs--; myref = (refs == 0 -> REF_LAST : REF_DROPPED)
				:: else -> skip
				fi
			};
#ifdef READER_DEPENDS
			/* R8: reader 1, holding its share in its last call,
			 * waits until every other reader has had a share */
			if
			:: me == 1 && it == ITERS(me) -> others_got == (((1 << (READERS + 1)) - 1) & ~3)
			:: else -> skip
			fi;
#endif
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
#ifdef BUG_LAST_READER_IGNORES_HANDOFF
				if
				:: sw_handoff -> skip   /* a plain decrement */
				:: else -> sw_writer = 0; release_to_head()
				fi
#else
				sw_writer = 0;
				release_to_head()       /* the last reader out */
#endif
			:: else -> skip
			fi;
#endif
			k = 0;
#ifdef NESTED
			if
			:: nested -> nested = false; goto read_unlock
			:: else -> skip
			fi;
#endif
			skip
		fi;
		goto done;

gave_up:
		/* give_up returned S_TIMEDOUT: pass headship on where it is
		 * ours to (withdrawn: n armed, the head; abandoned head: from
		 * n, which recycles it); an abandoned node is the queue's */
		if
		:: how == G_WITHDRAWN ->
#ifndef BUG_WITHDRAW_NO_PASS
			pass_head(n, false);
#endif
			put(n)
		:: how == G_ABANDONED_HEAD -> pass_head(n, false)
		:: else -> assert(how == G_ABANDONED)
		fi;
timed_out:
		skip;
done:
#ifdef LIVE
		skip;   /* the gotos land here, not in the d_step */
		/* forget this round's locals, so that rounds that differ only
		 * in them are one state */
		d_step { FORGET_CALL }
#else
		skip;   /* the gotos land here, not in the d_step */
		d_step { FORGET_CALL }
#endif
	od;
	finished++
}

#ifndef LIVE
/* R9: no dead head.  Live flags in a held word name a node whose owner
 * gave it up, and neither that owner's second look (give_up's c) nor the
 * recorder's look (leave_queue) is still to come: nobody but the last
 * release would take them back, and while read holds overlap (a fair
 * lock's readers steal past WAKE) no last release comes, nobody can set
 * HANDOFF, and the writers queued behind starve. */
#define DEAD_HEAD \
	(FLAGS_SET && HELD && head != 0 && nstate[head] == N_ABANDONED && \
	 !look_due[head] && recording != head)
proctype DeadHead()
{
end:	atomic { DEAD_HEAD -> assert(!DEAD_HEAD) }
}
#endif

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
#ifndef LIVE
		; run DeadHead()
#endif
	}
	(finished == NTHREADS);
	/* R4 */
	assert(w_writer == 0 && w_readers == 0 && !FLAGS_SET && tail == 0);
	assert(in_w == 0 && in_r == 0 && rholders == 0 && handoff_to == 0);
	for (t : 1 .. NNODES) {
		assert(life[t] != L_USED)
	}
}

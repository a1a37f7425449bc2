/* SPDX-License-Identifier: MIT */
/* Model of hl_mutex (src/mutex.c) on the MCS waiter queue (src/queue.c) and
 * the waiting core (src/wait.c).
 *
 * Modelled functions: hl_mutex_lock / hl_mutex_timedlock (fast path,
 * optimistic spinning as repeated CAS attempts, lock_slow: enqueue, wait on
 * the node, the head loop with WAKE/HANDOFF, leave_queue with its deferred
 * and early wake-ups, the abandoned-head and timed-out-head paths),
 * hl_mutex_unlock (fast path, unlock_to_head: read `head` and claim the
 * head's node first; then with HANDOFF store its TID and post HANDED,
 * otherwise store 0 and post RELEASED; a head that gave up
 * refuses the claim, and the unlocker drops its flags, passes headship on
 * while it still owns the word, and CASes the word to 0, serving a new
 * head whose flags made the CAS fail), hl__queue_enqueue,
 * hl__queue_pass_head (with skipping of abandoned nodes), hl__node_wait,
 * hl__node_signal, hl__node_claim + hl__node_post.  The protocol is
 * src/mutex.c with cd7e9af's release order and issue 12's handoff rule: only
 * HANDOFF hands the lock over (a head that sleeps without it is woken
 * RELEASED, however long it has waited), and a head is due once it has
 * also competed as head for a while (head_due), so a new head is woken
 * at once only if it is due at once (an RT thread); -DBUG_RELEASE_BEFORE_PASS is
 * unlock_to_head as it was before cd7e9af (release first, then signal or
 * pass headship on).
 *
 * Abstractions:
 *  - Sequential consistency, as in wait.pml.
 *  - Time is not modelled: whether a head is due a handoff, whether its
 *    spin budget is spent and whether a deadline has passed are free
 *    nondeterministic choices, so every timing is explored.
 *  - Each lock attempt uses a fresh node (node reuse is the waiting core's
 *    business, checked in wait.pml); NTHREADS threads make ITER attempts.
 *  - The fork generation, the spinner slots and the futex counters are left
 *    out; the GEN bits play no part within one process.
 *  - unlock_to_head's read of `head`, its claim and its store of the word
 *    (h's TID, 0, or the owner alone when h gave up) are one step: nobody
 *    else writes `head` or the word while the flags are set and the word
 *    is ours, and between the claim and the store only h's owner can act
 *    on what the claim changed (it finds its node CLAIMED and waits, or
 *    fails to give up), which commutes with the store.  hl__node_post's
 *    store and futex_wake are one step, as node_signal's CAS and wake.
 *  - Values nobody reads again are forgotten: a lock call's locals when
 *    its critical section starts or it times out, the unlock's when it
 *    ends, so that states differing only in them are one.
 *
 * The liveness variant (-DLIVE, no timeouts) asks whether a thread can
 * wait for ever while the others keep locking.  With a bounded number of
 * lock calls that is not an invalid end state but an infinite run, so here
 * each thread locks and unlocks for ever, and spin looks for an acceptance
 * cycle of the negated formula (M5) under weak fairness: a process that
 * stays able to move does move.  It runs with 2 threads in run.sh; with 3
 * (1.39 million states before the fairness product) it passes too, in 21 s
 * of search with pan -m3000000 (docs/verification.md).
 * What changes:
 *  - Time passes.  A free choice of "due" at every step would let a run
 *    say "not yet" for ever, a head overtaken for good that no real clock
 *    allows.  Instead Timer(t) stands for the clock: it may set due_t[t] at
 *    any step while t competes as the head (from the start of steps 3-4,
 *    when it became head or woke up as the recorded head, until it owns
 *    the lock: head_due's head_since, which comes after the enqueue's
 *    start time, so both of its conditions hold once it fires), and since
 *    it stays enabled until it does, weak fairness makes it fire.  The
 *    head's test and leave_queue's test of a new head read due_t (a timer
 *    that fires late or early is just another interleaving; a new head
 *    does not compete yet, so it is never due at once here: no RT thread
 *    is modelled); acquiring the lock resets it.
 *  - The head's load of the word and its CAS are one step.  Kept apart,
 *    they allow two endless runs that weak fairness does not exclude and
 *    that are not this protocol's doing: the head loads a free word and
 *    never tries the CAS (a choice within one process), or a stealer
 *    releases and retakes the lock between the head's load and its CAS,
 *    every time, so that the CAS always fails (spin finds this one at
 *    once).  A CAS loop on one word is lock-free, not wait-free; merging
 *    the two steps assumes that it succeeds in the end.  Nobody else
 *    writes `head` or the head's node while no flags are set, so
 *    publishing and arming it in the same step loses nothing.
 *  - The waiting core returns when the node is signalled, having parked or
 *    not: no spurious wake-ups and no spin loop that stays in one state
 *    (both are wait.pml's business, and would only add runs in which the
 *    waiter looks again).
 *  - Each thread reuses one node, as the C code does.  Values nobody reads
 *    again are forgotten so that rounds differing only in them are one state
 *    (the round's locals, `head` once the flags are cleared, a node's link
 *    once its successor was read, its state once its owner has the lock: a
 *    late signal to it would then trip node_signal's assertion).
 *  - Only the fast path's CAS and the queue decide who gets the lock; the
 *    assertions M1-M3 are checked as in the other rows.
 *
 * Properties:
 *  M1 mutual exclusion: at most one thread in the critical section (assert);
 *  M2 no lost wake-up and no deadlock: every thread finishes (no invalid end
 *     state);
 *  M3 handoff: once an unlock has found a due head that has not left, the
 *     next owner is that head: nobody else takes the lock first (assert on
 *     every CAS acquisition, through the ghost variable handed_to);
 *  M4 the word and the queue agree at the end: the lock is free, the queue
 *     empty, no flags (assert);
 *  M5 (-DLIVE) no starvation: every thread enters its critical section
 *     infinitely often, []<>(cs_who == t) for each thread t, under weak
 *     fairness, with the timers above.  Each thread may take a free lock
 *     on the fast path (steal) or queue, so this covers a head overtaken by
 *     a stealer that keeps coming back: once its timer fires it sets
 *     HANDOFF and the next unlock hands it the lock.  A waiter behind the
 *     head becomes head in FIFO order.
 *  M7 a head that sleeps passive (step 4b: no flag in the word, only its
 *     timer ends the sleep) is signalled by nobody: no unlock finds it in
 *     `head`, no pass of headship reaches it (assert).  Any head that is
 *     not due may sleep passive at any point of its loop (a superset of
 *     the C code's rule: after it lost a race), which leaves M1-M6 to hold
 *     for every timing of the timers.
 *  M6 (not with -DLIVE) the last user may free the lock (docs/design.md
 *     invariant 7, glibc bug 13690): each thread holds a reference (the
 *     ghost refs) and drops it in the critical section of its last lock
 *     call, or when that call times out.  The thread whose drop in its
 *     critical section takes refs to 0 unlocks and then destroys the lock:
 *     hl_mutex_destroy must succeed (word 0, no flags, tail 0: nobody
 *     holds it, nobody waits, and no node is left in the queue, not even
 *     one that a timed-out waiter abandoned), and it sets the ghost freed.
 *     Every access to the word, `tail` or `head` by any thread asserts
 *     !freed (LOCK_ACCESS, LK), so an unlocker still touching the lock
 *     after the store that let another thread take it is caught as a use
 *     after free, or, before that, as a destroy that fails.  A drop at a
 *     timeout frees nothing (a holder may still be inside).
 *
 * Reachability markers (-DREACH=k turns marker k into an assertion): 1
 * leave_queue wakes a new head that is due at once instead of recording it,
 * 2 the claim is refused (the head gave up) and headship is passed on
 * while the word is owned, 3 the CAS after that pass fails because the new
 * head set its flags, and the unlocker serves it.
 *
 * Seeded bugs (-D):
 *  BUG_DEFER_NO_WAKE     leave_queue defers a parked successor without
 *                        setting WAKE: nobody ever wakes it (M2);
 *  BUG_FAST_UNLOCK       the unlock clears the word without looking at the
 *                        flags: a parked head is never woken (M2);
 *  BUG_HANDOFF_NO_CLAIM  the handoff writes the head's TID into the word
 *                        without claiming its node: with -DTIMED the lock is
 *                        given to a thread that has left and stays owned
 *                        (M4);
 *  BUG_HANDOFF_RELEASES  a due head's unlock releases the word and wakes the
 *                        head instead of handing the lock over, so another
 *                        thread can take it first (M3);
 *  BUG_IGNORE_DUE        hl__node_due always says "not due": a head never
 *                        sets HANDOFF, so a stealer that keeps coming
 *                        overtakes it for ever (with -DLIVE: M5, an
 *                        acceptance cycle; the safety rows pass with it);
 *  BUG_HEAD_MIN_RESTARTS  a head's time at the head starts again at every
 *                        RELEASED wake-up (head_since reset): a head woken
 *                        by each unlock and overtaken each time is never
 *                        due (with -DLIVE: M5, an acceptance cycle);
 *  BUG_UNLOCK_IGNORES_HANDOFF  the unlock never hands over (HANDOFF read
 *                        as WAKE): it releases
 *                        the word and posts RELEASED, and the head races
 *                        the stealers again, and loses for ever (with
 *                        -DLIVE: M5; no assertion sees it, as nothing was
 *                        handed);
 *  BUG_RELEASE_BEFORE_PASS  unlock_to_head as before cd7e9af: the word is
 *                        released (0) first, and only then is the head
 *                        signalled RELEASED or, if it gave up, headship
 *                        passed on (-DTIMED: M6, the last user's destroy
 *                        finds the gone head's node still queued; without
 *                        the tail test, the pass's access to `tail` after
 *                        the free);
 *  BUG_PASSIVE_NEVER_REJOINS  a passive head's timer never rings: it sleeps
 *                        for good at the head of the queue (M2: the
 *                        others queue behind it; with -DLIVE, M5: the other
 *                        thread keeps the lock for ever);
 *  BUG_PASS_KEEPS_FLAGS  the unlock passes headship on from a head that
 *                        gave up without dropping its flags first: a new
 *                        head that sets the same flags is cleared by the
 *                        CAS to 0 unseen and sleeps unsignalled (-DTIMED:
 *                        M4, the sleeper's deadline passes and its node is
 *                        left in the queue with nobody to pass headship on
 *                        from it; an untimed one would sleep for good, M2).
 */

#ifndef NTHREADS
#define NTHREADS 2
#endif
#ifndef ITER
#define ITER 2
#endif
#ifdef LIVE
#ifdef TIMED
#error "LIVE is checked without timeouts"
#endif
#define NNODES NTHREADS         /* one node per thread, reused */
/* Values nobody reads again are forgotten (see the header). */
#define FORGET_HEAD ; head = 0
#define FORGET_LINK(x) ; nnext[x] = 0
#else
#define FORGET_HEAD
#define FORGET_LINK(x)
#define NNODES (NTHREADS * ITER)
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
#define S_TIMEDOUT  255

/* The lock word: owner thread (0 free) and the two flags. */
byte w_owner = 0;
bool w_wake = false;
bool w_handoff = false;
byte tail = 0;          /* node index, 0 = empty */
byte head = 0;          /* node that set (or got) WAKE */

/* Nodes 1..NNODES. */
byte nstate[NNODES + 1];
byte nnext[NNODES + 1];
bool asleep[NNODES + 1];
bool passive[NNODES + 1];       /* M7: its head sleeps passive (step 4b) */
byte nowner[NNODES + 1];        /* thread that owns the node */

byte in_cs = 0;
byte handed_to = 0;     /* M3: thread the lock was handed to, until it owns it */
byte finished = 0;

#ifdef REACH
#define reach(k) assert(REACH != k)
#else
#define reach(k) skip
#endif

#ifdef LIVE
#define LOCK_ACCESS skip
#define LK(c) (c)
#else
/* M6: the lock's last user frees it.  refs: the threads that will still
 * lock it (each drops its reference in the critical section of its last
 * lock call, or when that call times out); the thread whose drop in its
 * critical section takes refs to 0 checks after its unlock that the lock
 * can be destroyed (hl_mutex_destroy: the word 0, no node queued) and
 * frees it: from then on any access to the lock's fields by any thread is
 * a use after free.  LOCK_ACCESS opens every atomic step that reads or
 * writes the word, `tail` or `head`; LK(c) is a guard on them. */
byte refs = NTHREADS;
bool freed = false;
#define LOCK_ACCESS assert(!freed)
#define LK(c) (freed || (c)) -> LOCK_ACCESS
#endif

#ifdef LIVE
/* M5: the passage of time.  competing[t]: thread t competes as the queue
 * head (steps 3-4) and does not own the lock yet; due_t[t]: it has waited
 * the handoff threshold since it queued and competed as the head for an
 * eighth of it (head_due).  Timer(t) sets due_t[t] at any step while t
 * competes, and under weak fairness it must do so eventually (it stays
 * enabled until it does). */
bool competing[NTHREADS + 1];
bool due_t[NTHREADS + 1];
byte cs_who = 0;        /* M5: the thread in its critical section */

proctype Timer(byte t)
{
	do
	:: atomic { competing[t] && !due_t[t] -> due_t[t] = true }
	od
}

/* M5: every thread enters its critical section infinitely often. */
#if NTHREADS == 2
ltl starvation_free { []<> (cs_who == 1) && []<> (cs_who == 2) }
#elif NTHREADS == 3
ltl starvation_free { []<> (cs_who == 1) && []<> (cs_who == 2) && []<> (cs_who == 3) }
#else
#error "LIVE: NTHREADS 2 or 3"
#endif
#endif

/* head_due: whether thread t is due a handoff (v = the answer).  A free
 * choice, or with LIVE the timer's flag. */
#if defined(BUG_IGNORE_DUE)
#define choose_due(v, t) v = false
#elif defined(LIVE)
#define choose_due(v, t) v = due_t[t]
#else
#define choose_due(v, t) if :: v = true :: v = false fi
#endif

/* ---- waiting core --------------------------------------------------------- */

#ifdef LIVE
/* hl__node_wait(n) for the liveness check: return once the node is
 * signalled, having parked or not; no timeouts, no spurious wake-ups (see
 * the header).  Result in sig. */
inline node_wait(nw_n, nw_sig, nw_may_time_out)
{
	if
	:: atomic { nstate[nw_n] != N_WAITING -> nw_sig = nstate[nw_n] }
	:: atomic { nstate[nw_n] == N_WAITING -> nstate[nw_n] = N_PARKED };
	   atomic { nstate[nw_n] != N_PARKED -> nw_sig = nstate[nw_n] }
	fi;
	if
	:: nw_sig == N_CLAIMED -> atomic { nstate[nw_n] != N_CLAIMED -> nw_sig = nstate[nw_n] }
	:: else -> skip
	fi
}
#else
/* hl__node_wait(n): spin (any number of looks), park, sleep until woken;
 * with TIMED, give up at any point.  Result in sig. */
inline node_wait(nw_n, nw_sig, nw_may_time_out)
{
	do
	:: nw_sig = nstate[nw_n];
	   if
	   :: nw_sig != N_WAITING -> break
	   :: else -> skip
	   fi
	:: atomic { nstate[nw_n] == N_WAITING -> nstate[nw_n] = N_PARKED };
	   do
	   :: atomic { if :: nstate[nw_n] == N_PARKED -> asleep[nw_n] = true :: else -> skip fi };
#ifdef TIMED
	      if
	      :: !asleep[nw_n] -> skip
	      :: nw_may_time_out && asleep[nw_n] -> asleep[nw_n] = false   /* deadline */
	      fi;
#else
	      (!asleep[nw_n]);
#endif
	      nw_sig = nstate[nw_n];
	      if
	      :: nw_sig != N_PARKED -> break
	      :: else -> skip
	      fi;
#ifdef TIMED
	      if
	      :: nw_may_time_out -> atomic {
			if
			:: nstate[nw_n] == N_PARKED -> nstate[nw_n] = N_ABANDONED; nw_sig = S_TIMEDOUT
			:: else -> nw_sig = nstate[nw_n]
			fi
		 };
		 break
	      :: skip
	      fi
#endif
	   od;
	   break
#ifdef TIMED
	:: nw_may_time_out -> atomic {
		if
		:: nstate[nw_n] == N_WAITING -> nstate[nw_n] = N_ABANDONED; nw_sig = S_TIMEDOUT
		:: else -> nw_sig = nstate[nw_n]
		fi
	   };
	   break
#endif
	od;
	if
	:: nw_sig == N_CLAIMED -> (nstate[nw_n] != N_CLAIMED); nw_sig = nstate[nw_n]
	:: else -> skip
	fi
}
#endif

/* hl__node_signal(n, s): ok = false if n was abandoned. */
inline node_signal(ns_n, ns_s, ns_ok)
{
	atomic {
		assert(!passive[ns_n]);         /* M7 */
		assert(nstate[ns_n] == N_WAITING || nstate[ns_n] == N_PARKED || nstate[ns_n] == N_ABANDONED);
		if
		:: nstate[ns_n] == N_ABANDONED -> ns_ok = false
		:: nstate[ns_n] == N_WAITING -> nstate[ns_n] = ns_s; ns_ok = true
		:: nstate[ns_n] == N_PARKED -> nstate[ns_n] = ns_s; ns_ok = true; asleep[ns_n] = false
		fi
	}
}

/* ---- queue ---------------------------------------------------------------- */

/* dequeue(n) -> nx (0: queue now empty) */
inline dequeue(dq_n, dq_nx)
{
	atomic {
		LOCK_ACCESS;
		if
		:: tail == dq_n -> tail = 0; dq_nx = 0
		:: else -> dq_nx = 255
		fi
	};
	if
	:: dq_nx == 255 -> (nnext[dq_n] != 0); dq_nx = nnext[dq_n] FORGET_LINK(dq_n)
	:: else -> skip
	fi
}

/* hl__queue_pass_head(n, may_defer) -> deferred successor in d (0: none) */
inline pass_head(ph_n, ph_may_defer, ph_d, ph_nx, ph_ok, ph_cur)
{
	ph_cur = ph_n;
	ph_d = 0;
	do
	:: dequeue(ph_cur, ph_nx);
	   if
	   :: ph_nx == 0 -> break
	   :: else -> skip
	   fi;
	   if
	   :: ph_may_defer && nstate[ph_nx] == N_PARKED -> ph_d = ph_nx; break
	   :: else -> skip
	   fi;
	   node_signal(ph_nx, S_HEAD, ph_ok);
	   if
	   :: ph_ok -> break
	   :: else -> ph_cur = ph_nx      /* abandoned: skip it too */
	   fi
	od
}

/* Step 4b: the head sleeps passive, on its armed node, recorded nowhere
 * (the word keeps no flag of it), until its timer; nobody may signal it
 * meanwhile (M7).  The timer is any step later (time is not modelled); with
 * LIVE it rings at the latest when the head is due (the caller's guard
 * keeps a due head from sleeping), so weak fairness ends every sleep. */
inline passive_sleep(ps_n)
{
	atomic { nstate[ps_n] = N_PARKED; passive[ps_n] = true };
#ifdef BUG_PASSIVE_NEVER_REJOINS
	(false);
#endif
	atomic { assert(nstate[ps_n] == N_PARKED); passive[ps_n] = false; nstate[ps_n] = N_WAITING }
}

/* ---- the mutex --------------------------------------------------------------- */

proctype Thread(byte me)
{
	byte it = 0, n, sig, pred, nx, d, cur, h, owner_seen;
	bool ok, due, timed, was_parked, wake_seen, handoff_seen, handoff;
#ifndef LIVE
	bool dropped = false;   /* M6: this thread dropped its reference */
	bool lastref = false;   /*     and it was the last one */
#endif

	do
#ifdef LIVE
	:: true ->
		n = me;
#else
	:: atomic {
		it == ITER ->
		/* M6: after the last lock call.  The thread that dropped the
		 * last reference in its critical section destroys the lock
		 * (hl_mutex_destroy must succeed: nobody holds it, nobody
		 * waits, no node is left in the queue) and frees it.  A last
		 * call that timed out drops the reference now, after it
		 * returned (and nobody frees the lock then: a holder may
		 * still be inside). */
		if
		:: lastref ->
			assert(w_owner == 0 && !w_wake && !w_handoff && tail == 0);
			freed = true
		:: !dropped -> refs--
		:: else -> skip
		fi
	   };
	   break
	:: it < ITER ->
		n = (me - 1) * ITER + it + 1;
		it++;
#endif
		timed = false;
#ifdef TIMED
		if
		:: timed = true
		:: skip
		fi;
#endif
		/* Fast path, and optimistic spinning: CAS(0 -> me), tried a
		 * few times. */
		do
		:: atomic { LK(w_owner == 0) -> assert(handed_to == 0 || handed_to == me); handed_to = 0; w_owner = me; goto owned_fast }
		:: break
		od;

		/* Step 2: enqueue. */
#ifdef LIVE
		/* the node's fields are private until the xchg publishes
		 * it; the start time is stamped here (the timer starts) */
		atomic {
			nowner[n] = me; nnext[n] = 0; nstate[n] = N_WAITING;
			pred = tail; tail = n
		};
#else
		nowner[n] = me;
		nnext[n] = 0;
		nstate[n] = N_WAITING;
		atomic { LOCK_ACCESS; pred = tail; tail = n };
#endif
		if
		:: pred != 0 ->
			nnext[pred] = n;
			node_wait(n, sig, timed);
			if
			:: sig == S_TIMEDOUT -> goto timed_out
			:: sig == S_HANDED -> goto owned
			:: else -> assert(sig == S_HEAD || sig == S_RELEASED)
			fi
		:: else -> skip
		fi;

		/* Steps 3 and 4: head. */
#ifdef LIVE
		/* The head's load of the word and its CAS are one step (see
		 * the header): a free word is taken, an owned one gets WAKE,
		 * and HANDOFF when the timer says the head is due.  It
		 * competes from here on (head_since). */
		competing[me] = true;
		do
		:: atomic {
			if
			:: w_owner == 0 ->
				assert(handed_to == 0 || handed_to == me); handed_to = 0; w_owner = me;
				goto owned
			:: else ->
				head = n; nstate[n] = N_WAITING;
				choose_due(due, me);
				w_wake = true; w_handoff = due; due = false
			fi
		   };
		   node_wait(n, sig, timed);
		   if
		   :: sig == S_HANDED -> goto owned
		   :: else -> assert(sig == S_RELEASED)
#ifdef BUG_HEAD_MIN_RESTARTS
		      ; due_t[me] = false
#endif
		   fi
		:: atomic { !due_t[me] && w_owner != 0 -> skip };     /* step 4b */
		   passive_sleep(n)
		od;
#else
		do
		:: atomic { LK(w_owner == 0) -> assert(handed_to == 0 || handed_to == me); handed_to = 0; w_owner = me; goto owned }
		:: atomic { LOCK_ACCESS; owner_seen = w_owner };
		   if
		   :: owner_seen == 0 -> skip        /* free now: try again */
		   :: else ->
			choose_due(due, me);
			atomic { LOCK_ACCESS; head = n };
			nstate[n] = N_WAITING;
			atomic {
				LOCK_ACCESS;
				if
				:: w_owner == owner_seen && w_owner != 0 ->
					w_wake = true; w_handoff = due; ok = true
				:: else -> ok = false
				fi
			};
			if
			:: ok ->
				node_wait(n, sig, timed);
				if
				:: sig == S_HANDED -> goto owned
				:: sig == S_TIMEDOUT -> goto timed_out
				:: else -> assert(sig == S_RELEASED)
				fi
			:: else -> skip
			fi
		   fi
		:: passive_sleep(n)     /* step 4b: any time the head is not due */
#ifdef TIMED
		:: timed -> /* deadline while spinning as head: hand headship on */
			pass_head(n, false, d, nx, ok, cur);
			goto timed_out
#endif
		od;
#endif

owned:
#ifdef LIVE
		atomic { competing[me] = false; due_t[me] = false; nstate[n] = N_FREE };
#endif
		/* leave_queue */
		pass_head(n, true, d, nx, ok, cur);
		if
		:: d != 0 ->
			choose_due(due, nowner[d]);
			if
			:: due ->
				reach(1);
				node_signal(d, S_HEAD, ok);
				if
				:: !ok -> pass_head(d, false, h, nx, ok, cur); assert(h == 0)
				:: else -> skip
				fi
			:: else ->
				atomic { LOCK_ACCESS; head = d };
#ifndef BUG_DEFER_NO_WAKE
				atomic { LOCK_ACCESS; w_wake = true }
#endif
			fi
		:: else -> skip
		fi;
owned_fast:
		if
		:: handed_to == me -> handed_to = 0
		:: else -> skip
		fi;
#ifdef LIVE
		atomic { in_cs++; cs_who = me };
		assert(in_cs == 1);
		atomic { in_cs--; cs_who = 0 };
#else
		/* M6: the last lock call drops the thread's reference here */
		atomic {
			in_cs++;
			/* the lock call's locals are dead */
			sig = 0; pred = 0; nx = 0; d = 0; cur = 0; h = 0; owner_seen = 0;
			ok = false; due = false; timed = false; was_parked = false;
			if
			:: it == ITER -> refs--; dropped = true; lastref = refs == 0
			:: else -> skip
			fi
		};
		assert(in_cs == 1);
		in_cs--;
#endif

		/* Unlock.  Fast path: CAS(me -> 0). */
		atomic {
			LOCK_ACCESS;
			assert(w_owner == me);
#ifdef BUG_FAST_UNLOCK
			if
			:: true -> w_owner = 0; w_wake = false; w_handoff = false FORGET_HEAD; goto unlocked
			fi;
#endif
			if
			:: !w_wake && !w_handoff -> w_owner = 0; goto unlocked
			:: else -> wake_seen = w_wake; handoff_seen = w_handoff
			fi
		};
#ifdef BUG_RELEASE_BEFORE_PASS
		/* unlock_to_head before cd7e9af: claim only with HANDOFF;
		 * otherwise release the word first, then signal the head
		 * RELEASED or, if it gave up, pass headship on (M6) */
		atomic { LOCK_ACCESS; h = head };
		if
		:: handoff_seen ->
			atomic {
				if
				:: nstate[h] == N_WAITING || nstate[h] == N_PARKED ->
					was_parked = nstate[h] == N_PARKED; nstate[h] = N_CLAIMED; ok = true;
					handed_to = nowner[h]
				:: else -> assert(nstate[h] == N_ABANDONED); ok = false
				fi
			};
			if
			:: ok ->
				atomic { LOCK_ACCESS; w_owner = nowner[h]; w_wake = false; w_handoff = false FORGET_HEAD };
				nstate[h] = S_HANDED;
				if
				:: was_parked -> asleep[h] = false
				:: else -> skip
				fi;
				goto unlocked
			:: else -> skip
			fi
		:: else -> skip
		fi;
		atomic { LOCK_ACCESS; w_owner = 0; w_wake = false; w_handoff = false FORGET_HEAD };
		if
		:: handoff_seen -> ok = false   /* the claim failed: h left */
		:: else -> node_signal(h, S_RELEASED, ok)
		fi;
		if
		:: !ok -> pass_head(h, false, d, nx, ok, cur)   /* h gave up */
		:: else -> skip
		fi;
#else
		/* unlock_to_head: the word has WAKE.  Read `head`, claim h
		 * (hl__node_claim: h can no longer give up), and store the
		 * word: h's TID with HANDOFF, else 0; or, if h gave up, the
		 * owner alone (h's flags dropped).  One step, in that order:
		 * nobody else writes `head` or the word while the flags are
		 * set and the word is ours, and between the claim and the
		 * store only h's owner can act on what changed (it finds its
		 * node CLAIMED and waits), which commutes with the store. */
		do
		:: atomic {
			LOCK_ACCESS;
			h = head;
			assert(!passive[h]);            /* M7 */
#ifdef BUG_HANDOFF_NO_CLAIM
			if
			:: handoff_seen -> was_parked = nstate[h] == N_PARKED; ok = true
			:: else ->
#endif
			if
			:: nstate[h] == N_WAITING || nstate[h] == N_PARKED ->
				was_parked = nstate[h] == N_PARKED; nstate[h] = N_CLAIMED; ok = true
			:: else -> assert(nstate[h] == N_ABANDONED); ok = false
			fi;
#ifdef BUG_HANDOFF_NO_CLAIM
			fi;
#endif
			if
			:: ok ->
				handoff = handoff_seen;
#ifdef BUG_UNLOCK_IGNORES_HANDOFF
				handoff = false;        /* released and signalled RELEASED */
#endif
#ifdef BUG_HANDOFF_RELEASES
				if
				:: handoff -> handed_to = nowner[h]; handoff = false   /* owed, but released */
				:: else -> skip
				fi;
#endif
				if
				:: handoff -> w_owner = nowner[h]; handed_to = nowner[h]
				:: else -> w_owner = 0
				fi;
				w_wake = false; w_handoff = false FORGET_HEAD
			:: else ->
				/* h gave up: headship is passed on below while
				 * the word is still ours; first h's flags go
				 * (the owner alone is stored), so that a new
				 * head's flags are not taken for them by the
				 * CAS after the pass */
				reach(2);
#ifndef BUG_PASS_KEEPS_FLAGS
				w_wake = false; w_handoff = false;
				wake_seen = false; handoff_seen = false
#else
				skip
#endif
			fi
		   };
		   if
		   :: ok ->
			/* hl__node_post (its store and futex_wake in one step, as
			 * node_signal's): from here on, only h's node */
			atomic {
				if
				:: handoff -> nstate[h] = S_HANDED
				:: else -> nstate[h] = S_RELEASED
				fi;
				if
				:: was_parked -> asleep[h] = false
				:: else -> skip
				fi;
				/* values nobody reads again */
				h = 0; was_parked = false; handoff = false; handoff_seen = false; wake_seen = false
			};
			break
		   :: else ->
			pass_head(h, false, d, nx, ok, cur);
			/* CAS(the word as we left it -> 0); it fails if a new head
			 * set its flags: serve that head */
			atomic {
				LOCK_ACCESS;
				assert(w_owner == me);
				if
				:: w_wake == wake_seen && w_handoff == handoff_seen ->
					w_owner = 0; w_wake = false; w_handoff = false; ok = true;
					h = 0; wake_seen = false; handoff_seen = false
				:: else ->
					reach(3);
					assert(w_wake);
					wake_seen = w_wake; handoff_seen = w_handoff; ok = false
				fi
			};
			if
			:: ok -> break
			:: else -> skip
			fi
		   fi
		od;
#endif
#ifdef LIVE
unlocked:
		skip;
timed_out:
		skip;
		/* forget this round's locals, so that rounds that differ only
		 * in them are one state */
		d_step {
			sig = 0; pred = 0; nx = 0; d = 0; cur = 0; h = 0; owner_seen = 0;
			ok = false; due = false; was_parked = false;
			wake_seen = false; handoff_seen = false; handoff = false
		}
#else
unlocked:
		skip;
timed_out:
		skip;   /* the gotos land here, not in the d_step */
		/* forget this call's locals (values nobody reads again), so
		 * that states differing only in them are one */
		d_step {
			sig = 0; pred = 0; nx = 0; d = 0; cur = 0; h = 0; owner_seen = 0;
			ok = false; due = false; timed = false; was_parked = false;
			wake_seen = false; handoff_seen = false; handoff = false
		}
#endif
	od;
	finished++
}

init
{
	byte i;
	atomic {
		for (i : 1 .. NTHREADS) {
			run Thread(i)
#ifdef LIVE
			; run Timer(i)
#endif
		}
	}
	(finished == NTHREADS);
	/* M4 */
	assert(w_owner == 0 && !w_wake && !w_handoff && tail == 0 && in_cs == 0)
}

/* SPDX-License-Identifier: MIT */
/* Model of hl_cond (src/cond.c) with wait morphing, on hl_mutex (src/mutex.c,
 * as in mutex.pml), the MCS queue (src/queue.c) and the waiting core with
 * kept waits (src/wait.c, src/wait.h).
 *
 * Modelled: hl_cond_wait / hl_cond_timedwait (arm and stamp the node, list
 * it under the list lock, unlock m, wait on the node, then: RETRY -> give the
 * node back and hl_mutex_lock; a signal of m's queue (HEAD, RELEASED, HANDED)
 * -> hl__mutex_lock_moved, i.e. lock_queued with that node and signal, no
 * deadline; timed out -> under the list lock unlink the node if it is still
 * listed and drop refs, give the node back, hl_mutex_lock, ETIMEDOUT),
 * hl_cond_signal (the unlocked hint read of `first`; under the list lock
 * take the first listed node off, keep it (hl__node_keep), skipping nodes
 * that gave up; then signal it RETRY), hl_cond_broadcast (take the whole
 * list, keep each node, chain the kept ones, hl__mutex_enqueue_moved: one
 * xchg of m's tail; a first node that became m's head is recorded in `head`
 * with WAKE when the caller owns m, else signalled HEAD), hl_cond_destroy
 * (waits while refs says a waiter that gave up still cleans up; EBUSY
 * while a waiter is listed) and the parts of hl_mutex they use: the fast
 * path, enqueue, the head loop (WAKE/HANDOFF, park), leave_queue (the
 * successor is signalled HEAD or, parked, recorded in `head` with WAKE for
 * the unlock to wake: the deferred head), the unlock (fast path; else
 * claim the recorded head, store its TID with HANDOFF or 0, post HANDED or
 * RELEASED).  The node states WAITING_KEPT and PARKED_KEPT: a kept wait
 * can no longer be given up; mutex wakers accept kept nodes alike and wake
 * the futex of PARKED and PARKED_KEPT ones.
 *
 * Variant -DNUDGE: mutex.c's step 5b.  After an unlock (and after a
 * broadcaster that does not own m signalled the moved head), the thread
 * may nudge one node that is PARKED_KEPT, any one, since the C code
 * follows links that may have changed meanwhile (maybe_nudge; one nudge
 * per run).  A woken waiter that finds its node WAITING_KEPT polls, then
 * CASes it back to PARKED_KEPT and parks again.
 *
 * Variant -DSIGNAL_MOVES: hl_cond_signal as first designed (the issue's
 * design, and src/cond.c before 9ca8342): the kept node is not woken but
 * moved onto m's queue as broadcast moves its chain (queue fields reset,
 * xchg of the tail, link; head recorded with WAKE if the caller owns m,
 * else signalled HEAD).
 *
 * Configuration: NW waiters (2; thread 1 waits untimed, thread 2 timed, its
 * deadline a free choice at any moment while it sleeps unkept) and one
 * signaller (thread NW+1) that also takes m.  Clients:
 *  default  (signals)  each waiter: lock m; begun++; cond_wait; unlock m.
 *           The signaller, NW rounds: wait until `begun` reaches the round
 *           (a client that learns of waits some other way: a blocking
 *           guard, so that a thread blocked for good is an invalid end
 *           state, not a cycle); lock m; signal under m or after the
 *           unlock (a free choice each round); unlock m.  Each wait that
 *           began gets a signal sent after it, so a correct condvar
 *           releases every untimed waiter.
 *  -DBCAST  each waiter: lock m; while (!ready) { cond_wait; a timed one
 *           stops waiting after ETIMEDOUT }; unlock m.  The signaller: lock
 *           m; ready = 1; broadcast under m or after the unlock; unlock m.
 *  -DMIXED  as the default, but the last round broadcasts: woken (RETRY)
 *           and moved waiters meet on m.
 * Then the signaller destroys the condvar (hl_cond_destroy, retried until
 * it returns 0: a blocking guard) and frees it: any later access to the
 * condvar by anyone is a use after free (the ghost cfreed).
 *
 * Abstractions:
 *  - Sequential consistency, as in wait.pml and mutex.pml.
 *  - Each section under the condvar's list lock is one atomic step, so the
 *    lock itself needs no variable.  Sound by reduction: inside a section
 *    every access is to data only the list lock's holders touch (the list
 *    links, first/last, cond_listed, refs), except the keep CASes and a
 *    read of `next` by the broadcaster; a keep races only with the kept
 *    node's owner (its park and abandon CASes), which touches no other
 *    node and nothing under the list lock, so the owners' steps commute
 *    with the rest of the section and every interleaving has an
 *    equivalent one with the section in one piece.  The unlocked hint
 *    read of `first` is its own step.
 *  - Each mutex lock that queues, and each cond wait, takes a fresh node
 *    (K per thread); a node given back is FREE, and any signal, claim,
 *    keep or listing of a FREE node fails an assertion (in the C code the
 *    node would be reused: a use of a freed node).
 *  - Mutex locks are untimed here (mutex.pml checks timed ones), so no
 *    abandoned node may ever be in m's queue: a mutex waker that meets one
 *    fails an assertion.
 *  - Waiters behind the head and cond waiters park at once (spin budget 0,
 *    as in the C code); a head's spinning is stutter.  No spurious
 *    wake-ups (wait.pml checks them).  A futex_wait is "if the state is
 *    parked, sleep" and sleeps until a wake clears `asleep`.  A signal's
 *    CAS and its futex_wake are one step, as hl__node_post's store and wake.
 *  - Time is not modelled: whether a head is due a handoff, whether a new
 *    head is due at once (wake_new_head) and when a deadline passes are
 *    free choices.
 *  - Values nobody reads again are forgotten (zeroed) so that states that
 *    differ only in them are one.
 *
 * Properties:
 *  C1 mutual exclusion on m (assert on every entry to a critical section);
 *  C2 no lost wake-up: every thread finishes (no invalid end state); with
 *     the clients above a correct condvar releases every untimed waiter;
 *  C3 no stolen signal: when a signal keeps a node that was listed after
 *     the signal was sent (its hint read), no node listed before the signal
 *     was sent is still listed and waiting (not given up): the signal went
 *     to a waiter that began after it while an older waiter still waits
 *     (glibc bug 13165) (assert, on the ghost sequence numbers of appends);
 *  C4 a waiter is released at most once per wait, and only by the condvar:
 *     every mutex waker (signal, claim) and condvar signal meets an armed
 *     node (WAITING, PARKED, or kept), never a signalled, abandoned or FREE
 *     one; a keep meets WAITING, PARKED or ABANDONED; a wait that returns 0
 *     was kept by a signal or broadcast; a wait that returns ETIMEDOUT was
 *     never kept (asserts);
 *  C5 clean end: m free, its queue empty, the condvar's list empty and refs
 *     0, every node FREE and nobody asleep; a node is never given back
 *     while still listed (asserts);
 *  C6 destroy: after the condvar's destroy returned 0 (it waits for refs),
 *     nobody touches it (every access asserts !cfreed): neither the
 *     signaller after its list section, nor a kept or moved waiter, nor a
 *     waiter that gave up;
 *  C7 hl__mutex_enqueue_moved's premise: when it records the moved head
 *     in an owned word, the word has no flags (the queue was empty).
 *
 * Seeded bugs (-D), each caught (tests/models/run.sh):
 *  BUG_UNLOCK_BEFORE_LIST  the waiter unlocks m before it lists its node:
 *                        the signaller takes m, its signals find nobody
 *                        listed, it destroys the condvar, and the waiter
 *                        then lists itself on the freed condvar (C6; were
 *                        it not freed, the waiter would sleep for good);
 *  BUG_NO_KEEP           signal and broadcast take a listed node without
 *                        the keep CAS (a plain read skips one already
 *                        ABANDONED): a waiter whose deadline passes after
 *                        that still gives up, and the RETRY signal (or,
 *                        moved, m's HEAD signal) meets an abandoned node
 *                        and is refused: the chosen waiter is lost (C4);
 *  BUG_LIFO              signal takes the newest listed waiter: a signal
 *                        sent after its unlock goes to a waiter that began
 *                        after it (C3);
 *  BUG_RECORD_NOT_OWNER  enqueue_moved records the moved head with WAKE
 *                        even when the caller does not own m: on a free
 *                        word the flag blocks every CAS(0 -> tid) and
 *                        nobody wakes the head (-DBCAST: C2);
 *  BUG_TIMEOUT_NO_UNLINK the timed-out waiter gives its node back without
 *                        unlinking it (C5: a listed node freed);
 *  BUG_KEPT_NOT_PARKED   mutex wakers treat PARKED_KEPT as not parked: a
 *                        moved waiter asleep is signalled without a
 *                        futex_wake (-DBCAST: C2);
 *  BUG_UNCOUNT_ABANDONED the signaller drops refs also for a node that gave
 *                        up: destroy returns 0 while that waiter has still
 *                        to unlink itself (-DBCAST: C6; in the default
 *                        client spin first finds refs wrapped below 0 and
 *                        destroy waiting for ever, C2);
 *  BUG_CHAIN_NO_CLEAR    the moved chain's last node keeps its stale list
 *                        link (enqueue_chain does not clear it): a leaving
 *                        head, whose successor has swapped the tail but
 *                        not linked yet, follows it to the node that gave
 *                        up, freed by now (-DBCAST: C4);
 *  BUG_NUDGE_NO_WAKE     the nudge changes the state without the
 *                        futex_wake: the signal that follows sees the
 *                        waiter running and wakes nobody (-DBCAST -DNUDGE:
 *                        C2);
 *  BUG_NUDGED_AS_SIGNAL  a waiter that parked unkept, and was kept and
 *                        nudged while asleep, takes WAITING_KEPT for its
 *                        signal (-DBCAST -DNUDGE: C4; written so first in
 *                        src/wait.c, and caught by the bench's internal
 *                        error).
 *
 * Reachability markers (-DREACH=k turns marker k into an assertion; each
 * was seen to fail): 1 enqueue_moved records the moved head in the
 * caller's owned word (-DBCAST, -DSIGNAL_MOVES); 2 an unlock claims a
 * PARKED_KEPT node (a moved waiter asleep, woken by m's unlock); 3 a
 * signal skips a node that gave up; 4 a timed-out waiter finds its node
 * already taken off the list; 5 leave_queue defers a PARKED_KEPT successor
 * (-DBCAST); 6 the timed waiter is kept while asleep; 7 a signal finds a
 * nudged node whose owner still sleeps, which the nudger's futex_wake
 * then wakes (-DBCAST -DNUDGE).
 *
 * Sizes (pan -DCOLLAPSE, exhaustive): default 9.6 million states; -DBCAST
 * 1.4 million; -DSIGNAL_MOVES 6.2 million; -DMIXED 10.9 million;
 * -DBCAST -DNUDGE 14.3 million (16 s); -DMIXED -DNUDGE 96 million (154 s,
 * 4.5 GB: not in run.sh); -DBCAST -DNW=3 84 million (164 s, 4.8 GB: not in
 * run.sh).
 */

#ifndef NW
#define NW 2                    /* waiters: threads 1..NW */
#endif
#define TIMED_WAITER 2          /* thread 2's cond waits are timed */
#define SIGNALLER (NW + 1)
#define NTHREADS (NW + 1)
#ifndef K
#define K 3                     /* fresh nodes per thread */
#endif
#define NNODES (NTHREADS * K)
#define NOWNER(x) (((x) - 1) / K + 1)
#ifdef BCAST
#define NROUNDS 1
#else
#define NROUNDS NW
#endif

/* node states (wait.h) */
#define N_FREE         0
#define N_WAITING      1
#define N_PARKED       2
#define N_ABANDONED    3
#define N_CLAIMED      4
#define N_WAITING_KEPT 5
#define N_PARKED_KEPT  6
#define S_HEAD         8
#define S_RELEASED     9
#define S_HANDED       10
#define S_RETRY        12
#define S_TIMEDOUT     255

#define ARMED(s) ((s) == N_WAITING || (s) == N_PARKED || (s) == N_WAITING_KEPT || (s) == N_PARKED_KEPT)
/* hl__node_parked, as a waker sees it: it wakes the futex of such a node */
#ifdef BUG_KEPT_NOT_PARKED
#define WAKER_PARKED(s) ((s) == N_PARKED)
#else
#define WAKER_PARKED(s) ((s) == N_PARKED || (s) == N_PARKED_KEPT)
#endif

/* The mutex: word = owner thread (0: free) | WAKE | HANDOFF, as one byte so
 * that every CAS compares the whole word, as the C code's do. */
#define WAKE    16
#define HANDOFF 32
#define OWNER(v) ((v) & 15)
byte word = 0;
byte tail = 0;          /* node index, 0: empty */
byte head = 0;          /* node that set (or was given) WAKE */

/* Nodes 1..NNODES; thread t owns (t-1)*K+1 .. t*K. */
byte nstate[NNODES + 1];
byte nnext[NNODES + 1];         /* m's queue link, and the condvar list's */
bool asleep[NNODES + 1];        /* the owner sleeps in futex_wait */
byte cprev[NNODES + 1];         /* cond_prev */
bool clisted[NNODES + 1];       /* cond_listed */
byte nseq[NNODES + 1];          /* ghost: its append's sequence number */
bool chosen[NNODES + 1];        /* ghost: kept by a signal or broadcast */

/* The condvar. */
byte cfirst = 0, clast = 0, refs = 0;
bool cfreed = false;            /* ghost: destroyed and freed */
byte appends = 0;               /* ghost: appends so far */
#define CACCESS assert(!cfreed)

#ifdef REACH
#define reach(k) assert(REACH != k)
#else
#define reach(k) skip
#endif

/* The client. */
byte in_cs = 0;
byte begun = 0;                 /* waits begun (default client) */
bool ready = false;             /* the predicate (-DBCAST) */
byte finished = 0;

/* ---- waiting core --------------------------------------------------------- */

/* hl__node_wait(n) with spin budget 0: park (CAS WAITING -> PARKED or
 * WAITING_KEPT -> PARKED_KEPT) unless signalled, sleep until woken; with
 * tmo, the deadline may pass while n sleeps unkept: CAS PARKED ->
 * ABANDONED (it fails once kept: then it sleeps on).  Result in sig. */
inline node_wait(nw_n, nw_sig, nw_tmo)
{
	atomic {
		if
		:: nstate[nw_n] == N_WAITING -> nstate[nw_n] = N_PARKED; nw_sig = 0; pk = false
		:: nstate[nw_n] == N_WAITING_KEPT -> nstate[nw_n] = N_PARKED_KEPT; nw_sig = 0; pk = true
		:: else -> nw_sig = nstate[nw_n]
		fi
	};
	do
	:: nw_sig != 0 -> break
	:: else ->
		/* futex_wait(&state, parked), and the look after it: a
		 * WAITING_KEPT node was nudged (kept meanwhile if it parked
		 * unkept): it polls, then CASes itself back to PARKED_KEPT
		 * and parks again (the poll is stutter; a signal that ends it
		 * is the else branch at the next look) */
		atomic {
			if
			:: nstate[nw_n] == N_PARKED || nstate[nw_n] == N_PARKED_KEPT -> asleep[nw_n] = true
#ifdef BUG_NUDGED_AS_SIGNAL
			:: nstate[nw_n] == N_WAITING_KEPT && pk ->
				nstate[nw_n] = N_PARKED_KEPT
			:: nstate[nw_n] == N_WAITING_KEPT && !pk -> nw_sig = nstate[nw_n]
#else
			:: nstate[nw_n] == N_WAITING_KEPT ->
				nstate[nw_n] = N_PARKED_KEPT; pk = true
#endif
			:: else -> nw_sig = nstate[nw_n]
			fi
		};
		if
		:: nw_sig != 0 -> skip
		:: atomic { nw_sig == 0 && !asleep[nw_n] -> skip }      /* woken: look again */
		:: atomic { nw_sig == 0 && nw_tmo && asleep[nw_n] && nstate[nw_n] == N_PARKED ->
			asleep[nw_n] = false; nstate[nw_n] = N_ABANDONED; nw_sig = S_TIMEDOUT }
		fi
	od;
	if
	:: nw_sig == N_CLAIMED -> atomic { nstate[nw_n] != N_CLAIMED -> nw_sig = nstate[nw_n] }
	:: else -> skip
	fi;
	pk = false;
	assert(nw_sig >= S_HEAD)
}

/* hl__node_nudge(n) (mutex.c step 5b), as the unlocking thread does it
 * after an unlock, or a broadcaster that does not own m after its signal:
 * through links that may have changed since, so on any node that is
 * PARKED_KEPT: a CAS to WAITING_KEPT, then (a later step) futex_wake.  At
 * most NUDGES in a run (the state space). */
#ifdef NUDGE
#ifndef NUDGES
#define NUDGES 1
#endif
byte nudges = 0;
inline maybe_nudge()
{
	if
	:: nudges < NUDGES ->
		atomic {
			nudges++;
			select(nn : 1 .. NNODES);
			if
			:: nstate[nn] == N_PARKED_KEPT -> nstate[nn] = N_WAITING_KEPT
			:: else -> nn = 0
			fi
		};
#ifndef BUG_NUDGE_NO_WAKE
		if
		:: nn != 0 -> asleep[nn] = false
		:: else -> skip
		fi;
#endif
		nn = 0
	:: skip
	fi
}
#else
#define maybe_nudge() skip
#endif

/* hl__node_signal(n, s): ok = false if n gave up. */
inline node_signal(ns_n, ns_s, ns_ok)
{
	atomic {
		assert(ARMED(nstate[ns_n]) || nstate[ns_n] == N_ABANDONED);
		if
		:: nstate[ns_n] == N_ABANDONED -> ns_ok = false
		:: else ->
			if
			:: WAKER_PARKED(nstate[ns_n]) -> asleep[ns_n] = false
			:: else -> if :: nstate[ns_n] == N_WAITING_KEPT && asleep[ns_n] -> reach(7) :: else -> skip fi
			fi;
			nstate[ns_n] = ns_s; ns_ok = true
		fi
	}
}

/* hl__node_keep(n): WAITING -> WAITING_KEPT, PARKED -> PARKED_KEPT; false if
 * ABANDONED; anything else is hl__bug. */
inline node_keep(nk_n, nk_ok)
{
	assert(nstate[nk_n] == N_WAITING || nstate[nk_n] == N_PARKED || nstate[nk_n] == N_ABANDONED);
	if
	:: nstate[nk_n] == N_WAITING -> nstate[nk_n] = N_WAITING_KEPT; nk_ok = true
	:: nstate[nk_n] == N_PARKED -> nstate[nk_n] = N_PARKED_KEPT; nk_ok = true;
		if :: NOWNER(nk_n) == TIMED_WAITER -> reach(6) :: else -> skip fi
	:: nstate[nk_n] == N_ABANDONED -> nk_ok = false
	fi
}

/* hl__thread_node_put: the node is its thread's again. */
inline free_node(fn_n)
{
	assert(!clisted[fn_n] && !asleep[fn_n]);
	nstate[fn_n] = N_FREE; nnext[fn_n] = 0; cprev[fn_n] = 0; nseq[fn_n] = 0; chosen[fn_n] = false
}

inline new_node(nn_n)
{
	nused++;
	assert(nused <= K);
	nn_n = (me - 1) * K + nused
}

/* ---- the condvar's list (each caller runs it under the list lock) --------- */

inline list_append(la_n)
{
	nnext[la_n] = 0;
	if
	:: cfirst != 0 -> cprev[la_n] = clast; nnext[clast] = la_n
	:: else -> cprev[la_n] = 0; cfirst = la_n
	fi;
	clast = la_n;
	clisted[la_n] = true;
	refs++;
	appends++;
	nseq[la_n] = appends
}

/* list_unlink(n); its list links are dead afterwards (forgotten). */
inline list_unlink(lu_n, lu_t)
{
	lu_t = nnext[lu_n];
	if
	:: cprev[lu_n] != 0 -> nnext[cprev[lu_n]] = lu_t
	:: else -> cfirst = lu_t
	fi;
	if
	:: lu_t != 0 -> cprev[lu_t] = cprev[lu_n]
	:: else -> clast = cprev[lu_n]
	fi;
	clisted[lu_n] = false;
	cprev[lu_n] = 0;
	lu_t = 0
}

/* take_waiter(n), n already off the list: keep it, or leave it to its
 * thread, which gave up. */
inline take_waiter(tw_n, tw_ok)
{
	clisted[tw_n] = false;
#ifdef BUG_NO_KEEP
	assert(nstate[tw_n] == N_WAITING || nstate[tw_n] == N_PARKED || nstate[tw_n] == N_ABANDONED);
	tw_ok = nstate[tw_n] != N_ABANDONED;
#else
	node_keep(tw_n, tw_ok);
#endif
	if
	:: tw_ok -> refs--; chosen[tw_n] = true
	:: else ->
#ifdef BUG_UNCOUNT_ABANDONED
		refs--
#else
		skip
#endif
	fi
}

/* C3: signal kept node k, listed after the signal was sent (sent: appends
 * at its hint read): then no waiter listed before it may still be listed
 * and waiting. */
inline stolen_check(sc_k, sc_j)
{
	if
	:: nseq[sc_k] > sent ->
		sc_j = cfirst;
		do
		:: sc_j == 0 -> break
		:: else -> assert(nseq[sc_j] > sent || nstate[sc_j] == N_ABANDONED); sc_j = nnext[sc_j]
		od
	:: else -> skip
	fi
}

/* ---- what hl_cond asks of the mutex (morph.h) ------------------------------ */

/* hl__mutex_enqueue_moved(m, first, last, me) */
inline enqueue_moved(em_first, em_last)
{
	/* hl__queue_enqueue_chain: clear last's link, xchg the tail */
	atomic {
#ifndef BUG_CHAIN_NO_CLEAR
		nnext[em_last] = 0;
#endif
		pred = tail; tail = em_last
	};
	if
	:: pred != 0 -> nnext[pred] = em_first      /* behind a head */
	:: else ->
		/* first is the head.  Owned by the caller and not due at
		 * once (wake_new_head, a free choice): record it, with WAKE,
		 * for the caller's unlock; else signal it HEAD. */
		atomic {
			if
			:: true -> ok = false   /* wake_new_head: due at once */
#ifdef BUG_RECORD_NOT_OWNER
			:: true ->
				head = em_first; word = OWNER(word) | WAKE; ok = true
#else
			:: OWNER(word) == me ->
				assert((word & (WAKE | HANDOFF)) == 0);  /* C7 */
				head = em_first; word = word | WAKE; ok = true;
				reach(1)
			:: OWNER(word) != me -> ok = false
#endif
			fi
		};
		if
		:: !ok -> node_signal(em_first, S_HEAD, ok); assert(ok); maybe_nudge()
		:: else -> skip
		fi
	fi;
	atomic { pred = 0; ok = false }
}

/* ---- the condvar ------------------------------------------------------------ */

inline cond_signal()
{
	/* step 1: the hint (sent: when the signal was sent, for C3) */
	atomic { CACCESS; sent = appends; ok = (cfirst != 0) };
	if
	:: ok ->
		/* step 2, under the list lock */
		atomic {
			CACCESS;
			k = 0;
			do
			:: cfirst == 0 -> break
			:: else ->
#ifdef BUG_LIFO
				k = clast;
#else
				k = cfirst;
#endif
				list_unlink(k, nx);
				take_waiter(k, ok);
				if
				:: ok -> stolen_check(k, nx); nx = 0; break
				:: else -> k = 0; reach(3)
				fi
			od
		};
		/* step 3: the condvar is not touched again */
		if
		:: k != 0 ->
#ifdef SIGNAL_MOVES
			enqueue_moved(k, k)
#else
			node_signal(k, S_RETRY, ok); assert(ok)
#endif
		:: else -> skip
		fi
	:: else -> skip
	fi;
	atomic { k = 0; ok = false; sent = 0 }
}

inline cond_broadcast()
{
	atomic { CACCESS; ok = (cfirst != 0) };
	if
	:: ok ->
		atomic {
			CACCESS;
			first = 0; last = 0; k = cfirst;
			do
			:: k == 0 -> break
			:: else ->
				nx = nnext[k];  /* before take_waiter */
				cprev[k] = 0;
				take_waiter(k, ok);
				if
				:: ok ->
					if
					:: last != 0 -> nnext[last] = k
					:: else -> first = k
					fi;
					last = k
				:: else -> skip
				fi;
				k = nx
			od;
			cfirst = 0; clast = 0; nx = 0; ok = false
		};
		if
		:: first != 0 -> enqueue_moved(first, last)
		:: else -> skip
		fi
	:: else -> skip
	fi;
	atomic { first = 0; last = 0; ok = false }
}

#if defined(BCAST)
#define COND_OP cond_broadcast()
#define SET_PRED ready = true
#elif defined(MIXED)
/* the last round broadcasts, the others signal */
#define COND_OP if :: round == NROUNDS -> cond_broadcast() :: else -> cond_signal() fi
#define SET_PRED skip
#else
#define COND_OP cond_signal()
#define SET_PRED skip
#endif

/* return points of the mutex's lock and unlock (RET) */
#define RC_W_LOCKED    1
#define RC_W_UNLOCKED  2
#define RC_W_RELOCKED  3
#define RC_W_DONE      4
#define RC_S_LOCKED    5
#define RC_S_UNLOCKED  6

proctype Thread(byte me)
{
	byte n, cn, sig, pred, nx, d, h, w, ret, nused, k, first, last, sent, round;
	byte nn;
	bool ok, tmo, was_parked, inside, gaveup, pk;

	if
	:: me <= NW -> goto waiter
	:: else -> goto signaller
	fi;

/* ---- the waiters ---- */
waiter:
	ret = RC_W_LOCKED; goto lock;
r_w_locked:
	atomic {
		in_cs++; assert(in_cs == 1);                    /* C1 */
#ifndef BCAST
		begun++
#endif
	};
w_check:
#ifdef BCAST
	if
	:: atomic { (ready || gaveup) -> in_cs--; goto w_leave }
	:: atomic { !(ready || gaveup) -> skip }
	fi;
#endif
	/* hl_cond_wait: steps 1 and 2 (arm, stamp; list it under the list
	 * lock), and out of the critical section */
	new_node(cn);
#ifndef BUG_UNLOCK_BEFORE_LIST
	atomic { CACCESS; nstate[cn] = N_WAITING; list_append(cn); in_cs-- };
#else
	atomic { nstate[cn] = N_WAITING; in_cs-- };
#endif
	/* step 3: unlock m */
	ret = RC_W_UNLOCKED; goto unlock;
r_w_unlocked:
#ifdef BUG_UNLOCK_BEFORE_LIST
	atomic { CACCESS; list_append(cn) };
#endif
	/* step 4 */
	tmo = (me == TIMED_WAITER);
	node_wait(cn, sig, tmo);
	tmo = false;
	if
	:: sig == S_TIMEDOUT ->
		/* step 6: under the list lock, unlink if still listed; the
		 * node is ours again; then hl_mutex_lock */
		atomic {
			CACCESS;
			assert(!chosen[cn]);                    /* C4 */
#ifndef BUG_TIMEOUT_NO_UNLINK
			if
			:: clisted[cn] -> list_unlink(cn, nx)
			:: else -> reach(4)
			fi;
#endif
			refs--;
			free_node(cn); cn = 0; sig = 0
		};
		gaveup = true;
		ret = RC_W_RELOCKED; goto lock
	:: sig == S_RETRY ->
		/* step 5a */
		atomic { assert(chosen[cn]); free_node(cn); cn = 0; sig = 0 };   /* C4 */
		ret = RC_W_RELOCKED; goto lock
	:: else ->
		/* step 5b: moved onto m's queue, signalled there */
		assert(chosen[cn]);                             /* C4 */
		assert(sig == S_HEAD || sig == S_RELEASED || sig == S_HANDED);
		n = cn; cn = 0;
		ret = RC_W_RELOCKED; goto lock_moved
	fi;
r_w_relocked:
	atomic { in_cs++; assert(in_cs == 1) };                 /* C1 */
#ifdef BCAST
	goto w_check;
#endif
	atomic { in_cs-- };
w_leave:
	ret = RC_W_DONE; goto unlock;
r_w_done:
	goto finish;

/* ---- the signaller ---- */
signaller:
	if
	:: round == NROUNDS -> goto s_destroy
	:: else -> round++
	fi;
#ifndef BCAST
	/* the client learns that the round-th wait began */
	(begun >= round);
#endif
	ret = RC_S_LOCKED; goto lock;
r_s_locked:
	atomic { in_cs++; assert(in_cs == 1); SET_PRED };       /* C1 */
	if
	:: inside = true; COND_OP
	:: inside = false
	fi;
	atomic { in_cs-- };
	ret = RC_S_UNLOCKED; goto unlock;
r_s_unlocked:
	if
	:: inside -> skip
	:: else -> COND_OP
	fi;
	inside = false;
	goto signaller;
s_destroy:
	/* hl_cond_destroy until it returns 0 (EBUSY while a waiter is
	 * listed; it waits while refs says a waiter that gave up still
	 * cleans up), then free: C6 */
	atomic { cfirst == 0 && refs == 0 -> CACCESS; cfreed = true };
	goto finish;

/* ---- hl_mutex_lock (ret: where to return) ---- */
lock:
	/* fast path and optimistic spinning: CAS(0 -> me) */
	do
	:: atomic { word == 0 -> word = me; goto locked }
	:: break
	od;
	/* step 2: enqueue a fresh node (its fields are private until the
	 * xchg publishes it) */
	new_node(n);
	atomic { nstate[n] = N_WAITING; nnext[n] = 0; pred = tail; tail = n };
	if
	:: pred != 0 ->
		nnext[pred] = n;
		pred = 0;
		node_wait(n, sig, false);
		if
		:: sig == S_HANDED -> goto owned
		:: else -> assert(sig == S_HEAD || sig == S_RELEASED)
		fi
	:: else -> skip
	fi;
	goto queued;
lock_moved:
	/* hl__mutex_lock_moved: lock_queued with the moved node and its
	 * signal, no deadline */
	if
	:: sig == S_HANDED -> goto owned
	:: else -> skip
	fi;
queued:
	/* steps 3 and 4: n is the head */
	sig = 0;
	do
	:: atomic { word == 0 -> word = me; goto owned }
	:: atomic { word != 0 -> w = word; head = n; nstate[n] = N_WAITING };  /* load; publish, arm */
	   /* CAS(w -> owner | WAKE [| HANDOFF when due, a free choice]) */
	   atomic {
		if
		:: word == w -> ok = true;
			if
			:: word = OWNER(w) | WAKE
			:: word = OWNER(w) | WAKE | HANDOFF
			fi
		:: else -> ok = false
		fi
	   };
	   if
	   :: ok ->
		node_wait(n, sig, false);
		if
		:: sig == S_HANDED -> goto owned
		:: else -> assert(sig == S_RELEASED)
		fi
	   :: else -> skip
	   fi;
	   atomic { w = 0; ok = false; sig = 0 }
	od;
owned:
	/* step 5: leave_queue */
	atomic {
		if
		:: tail == n -> tail = 0; nx = 0
		:: else -> nx = 255
		fi
	};
	if
	:: nx == 255 -> atomic { nnext[n] != 0 -> nx = nnext[n] }
	:: else -> skip
	fi;
	if
	:: nx != 0 ->
		if
		:: WAKER_PARKED(nstate[nx]) -> d = nx;        /* deferred */
			if :: nstate[nx] == N_PARKED_KEPT -> reach(5) :: else -> skip fi
		:: else -> node_signal(nx, S_HEAD, ok); assert(ok)
		fi
	:: else -> skip
	fi;
	if
	:: d != 0 ->
		if
		:: node_signal(d, S_HEAD, ok); assert(ok)      /* due at once */
		:: atomic { head = d; word = word | WAKE }      /* the unlock wakes it */
		fi
	:: else -> skip
	fi;
	atomic { free_node(n); n = 0; nx = 0; d = 0; ok = false; sig = 0 };
locked:
	goto ret_to;

/* ---- hl_mutex_unlock ---- */
unlock:
	atomic {
		assert(OWNER(word) == me);
		if
		:: word == me -> word = 0; goto unlocked
		:: else -> w = word
		fi
	};
	/* unlock_to_head: read `head`, claim it (no mutex waiter gives up
	 * here), store the word: h's owner with HANDOFF, else 0 */
	atomic {
		assert(w & WAKE);
		h = head;
		assert(ARMED(nstate[h]));                       /* C4 */
		if :: nstate[h] == N_PARKED_KEPT -> reach(2) :: else -> skip fi;
		was_parked = WAKER_PARKED(nstate[h]);
		nstate[h] = N_CLAIMED;
		if
		:: (w & HANDOFF) != 0 -> word = NOWNER(h)
		:: else -> word = 0
		fi;
		head = 0
	};
	/* hl__node_post: from here on, only h's node */
	atomic {
		if
		:: (w & HANDOFF) != 0 -> nstate[h] = S_HANDED
		:: else -> nstate[h] = S_RELEASED
		fi;
		if
		:: was_parked -> asleep[h] = false
		:: else -> skip
		fi;
		h = 0; w = 0; was_parked = false
	};
unlocked:
	maybe_nudge();
ret_to:
	if
	:: ret == RC_W_LOCKED -> ret = 0; goto r_w_locked
	:: ret == RC_W_UNLOCKED -> ret = 0; goto r_w_unlocked
	:: ret == RC_W_RELOCKED -> ret = 0; goto r_w_relocked
	:: ret == RC_W_DONE -> ret = 0; goto r_w_done
	:: ret == RC_S_LOCKED -> ret = 0; goto r_s_locked
	:: ret == RC_S_UNLOCKED -> ret = 0; goto r_s_unlocked
	fi;
finish:
	finished++
}

init
{
	byte i;
	atomic {
		for (i : 1 .. NTHREADS) {
			run Thread(i)
		}
	};
	(finished == NTHREADS);
	/* C5 */
	assert(word == 0 && tail == 0 && in_cs == 0 && cfirst == 0 && refs == 0 && cfreed);
	for (i : 1 .. NNODES) {
		assert(nstate[i] == N_FREE && !asleep[i] && !clisted[i])
	}
}

/* Model of hl_mutex (src/mutex.c) on the MCS waiter queue (src/queue.c) and
 * the waiting core (src/wait.c).
 *
 * Modelled functions: hl_mutex_lock / hl_mutex_timedlock (fast path,
 * optimistic spinning as repeated CAS attempts, lock_slow: enqueue, wait on
 * the node, the head loop with WAKE/HANDOFF, leave_queue with its deferred
 * and early wake-ups, the abandoned-head and timed-out-head paths),
 * hl_mutex_unlock (fast path, unlock_to_head), hl_queue_enqueue,
 * hl_queue_pass_head (with skipping of abandoned nodes), hl_node_wait,
 * hl_node_signal, hl_node_claim + hl_node_post.
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
 *
 * Properties:
 *  M1 mutual exclusion: at most one thread in the critical section (assert);
 *  M2 no lost wake-up and no deadlock: every thread finishes (no invalid end
 *     state);
 *  M3 handoff: once an unlock has found a due head that has not left, the
 *     next owner is that head: nobody else takes the lock first (assert on
 *     every CAS acquisition, through the ghost variable handed_to);
 *  M4 the word and the queue agree at the end: the lock is free, the queue
 *     empty, no flags (assert).
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
 *                        thread can take it first (M3).
 */

#ifndef NTHREADS
#define NTHREADS 2
#endif
#ifndef ITER
#define ITER 2
#endif
#define NNODES (NTHREADS * ITER)

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
byte nowner[NNODES + 1];        /* thread that owns the node */

byte in_cs = 0;
byte handed_to = 0;     /* M3: thread the lock was handed to, until it owns it */
byte finished = 0;

/* ---- waiting core --------------------------------------------------------- */

/* hl_node_wait(n): spin (any number of looks), park, sleep until woken;
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

/* hl_node_signal(n, s): ok = false if n was abandoned. */
inline node_signal(ns_n, ns_s, ns_ok)
{
	atomic {
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
		if
		:: tail == dq_n -> tail = 0; dq_nx = 0
		:: else -> dq_nx = 255
		fi
	};
	if
	:: dq_nx == 255 -> (nnext[dq_n] != 0); dq_nx = nnext[dq_n]
	:: else -> skip
	fi
}

/* hl_queue_pass_head(n, may_defer) -> deferred successor in d (0: none) */
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

/* ---- the mutex --------------------------------------------------------------- */

proctype Thread(byte me)
{
	byte it = 0, n, sig, pred, nx, d, cur, h, owner_seen;
	bool ok, due, timed, was_parked, wake_seen, handoff_seen;

	do
	:: it == ITER -> break
	:: it < ITER ->
		n = (me - 1) * ITER + it + 1;
		it++;
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
		:: atomic { w_owner == 0 -> assert(handed_to == 0 || handed_to == me); handed_to = 0; w_owner = me; goto owned_fast }
		:: break
		od;

		/* Step 2: enqueue. */
		nowner[n] = me;
		nnext[n] = 0;
		nstate[n] = N_WAITING;
		atomic { pred = tail; tail = n };
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
		do
		:: atomic { w_owner == 0 -> assert(handed_to == 0 || handed_to == me); handed_to = 0; w_owner = me; goto owned }
		:: owner_seen = w_owner;
		   if
		   :: owner_seen == 0 -> skip        /* free now: try again */
		   :: else ->
			if
			:: due = true
			:: due = false
			fi;
			head = n;
			nstate[n] = N_WAITING;
			atomic {
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
#ifdef TIMED
		:: timed -> /* deadline while spinning as head: hand headship on */
			pass_head(n, false, d, nx, ok, cur);
			goto timed_out
#endif
		od;

owned:
		/* leave_queue */
		pass_head(n, true, d, nx, ok, cur);
		if
		:: d != 0 ->
			if
			:: due = true
			:: due = false
			fi;
			if
			:: due ->
				node_signal(d, S_HEAD, ok);
				if
				:: !ok -> pass_head(d, false, h, nx, ok, cur); assert(h == 0)
				:: else -> skip
				fi
			:: else ->
				head = d;
#ifndef BUG_DEFER_NO_WAKE
				w_wake = true
#endif
			fi
		:: else -> skip
		fi;
owned_fast:
		if
		:: handed_to == me -> handed_to = 0
		:: else -> skip
		fi;
		in_cs++;
		assert(in_cs == 1);
		in_cs--;

		/* Unlock. */
		atomic {
			assert(w_owner == me);
#ifdef BUG_FAST_UNLOCK
			if
			:: true -> w_owner = 0; w_wake = false; w_handoff = false; goto unlocked
			fi;
#endif
			if
			:: !w_wake && !w_handoff -> w_owner = 0; goto unlocked
			:: else -> wake_seen = w_wake; handoff_seen = w_handoff
			fi
		};
		h = head;
		if
		:: handoff_seen ->
#ifdef BUG_HANDOFF_RELEASES
			/* the head is due the lock (unless it left), but the word
			 * is released instead */
			atomic {
				if
				:: nstate[h] != N_ABANDONED -> handed_to = nowner[h]
				:: else -> skip
				fi
			};
			ok = false;
#else
#ifdef BUG_HANDOFF_NO_CLAIM
			was_parked = nstate[h] == N_PARKED; ok = true;
#else
			atomic {
				if
				:: nstate[h] == N_WAITING || nstate[h] == N_PARKED ->
					was_parked = nstate[h] == N_PARKED; nstate[h] = N_CLAIMED; ok = true;
					handed_to = nowner[h]
				:: else -> assert(nstate[h] == N_ABANDONED); ok = false
				fi
			};
#endif
#endif
			if
			:: ok ->
				atomic { w_owner = nowner[h]; w_wake = false; w_handoff = false };
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
		atomic { w_owner = 0; w_wake = false; w_handoff = false };
#ifdef BUG_HANDOFF_RELEASES
		node_signal(h, S_RELEASED, ok);
#else
		if
		:: handoff_seen -> ok = false   /* the claim failed: h left */
		:: else -> node_signal(h, S_RELEASED, ok)
		fi;
#endif
		if
		:: !ok -> pass_head(h, false, d, nx, ok, cur)   /* h gave up */
		:: else -> skip
		fi;
unlocked:
		skip;
timed_out:
		skip
	od;
	finished++
}

init
{
	byte i;
	atomic {
		for (i : 1 .. NTHREADS) {
			run Thread(i)
		}
	}
	(finished == NTHREADS);
	/* M4 */
	assert(w_owner == 0 && !w_wake && !w_handoff && tail == 0 && in_cs == 0)
}

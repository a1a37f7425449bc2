/* SPDX-License-Identifier: MIT */
/* Model of hotlock's waiting core (src/wait.c, src/wait.h).
 *
 * Models hl__node_wait (spin, park with futex_wait, give up at a deadline by
 * abandoning the node), hl__node_signal (CAS in a signal, futex_wake if the
 * waiter had parked) and hl__node_claim + hl__node_post (the two-step signal
 * that hl_mutex uses to hand the lock over), on one node.
 *
 * Abstractions:
 *  - Sequential consistency: every statement is atomic and the interleaving
 *    is free.  The C code's orders (acquire on the waiter's loads and failed
 *    CASes, release on the waker's CAS and post) are argued in the comments
 *    there; this model checks the protocol, not the orders.
 *  - futex_wait(v) is an atomic "if state == v, sleep" followed by a block
 *    until a futex_wake clears `asleep`; with a deadline (-DTIMED) it may
 *    also return ETIMEDOUT at any time.  A stray process calls futex_wake
 *    at any moment, any number of times: spurious wake-ups, and the late
 *    wake of a previous waker on a reused node (the arena is never
 *    unmapped, wait.h).
 *  - The spin phase is any number of loads of the state word.
 *
 * Properties (each checked by spin, and each proved able to fail by a
 * seeded-bug variant, see tests/models/run.sh):
 *  P1 no lost wake-up: with a waker, the waiter always returns (no invalid
 *     end state: the waiter is never left asleep);
 *  P2 a signal is delivered to exactly one outcome: either the waiter
 *     returns the signal and the waker's signal succeeded, or the waiter
 *     timed out and the waker was refused (assert at the end);
 *  P3 no syscall for a waiter that never parked, and at most one wake per
 *     signal (assert at the end);
 *  P4 a waker only ever meets WAITING, PARKED (or PARKED_INTR) or ABANDONED (the `wakeable`
 *     check in wait.c; assert in the waker).
 *
 * Seeded bugs (-D on the spin command line):
 *  BUG_PARK_NO_RECHECK  the waiter parks with a plain store instead of a CAS
 *                       from WAITING, overwriting a signal that just came
 *                       (P1 fails);
 *  BUG_SIGNAL_NO_WAKE   the waker never calls futex_wake (P1 fails);
 *  BUG_SIGNAL_BLIND     the waker stores the signal without checking for
 *                       ABANDONED (P2 fails);
 *  BUG_POST_NO_WAKE     claim + post forgets that the waiter had parked
 *                       (P1 fails, in the CLAIM variant).
 *  BUG_INTR_NO_RECHECK  an interruptible waiter parks without reading its
 *                       interrupt word after the CAS to PARKED: an interrupt
 *                       that came between its publication of the node and
 *                       the CAS finds the node WAITING, changes nothing, and
 *                       the waiter sleeps for ever (P5 fails);
 *  BUG_INTR_NO_CAS      the interrupter sets the word and wakes nobody, as
 *                       a futex_wake on the interrupt word alone would
 *                       (P5 fails).
 * Variants: -DCLAIM uses hl__node_claim + hl__node_post instead of
 * hl__node_signal; -DTIMED gives the waiter a deadline; -DINTR makes the
 * wait interruptible (wait.h, "Interrupts"): an Interrupter sets the
 * waiter's interrupt word, then moves its published node PARKED ->
 * PARKED_INTR and wakes it; with -DNO_WAKER nobody signals, so that only
 * the interrupt can end the wait:
 *  P5 an interrupt is never lost: the interrupted waiter returns (no
 *     invalid end state), as a timeout, unless a signal won.
 */

#define WAITING   1
#define PARKED    2
#define ABANDONED 3
#define CLAIMED   4
#define PARKED_INTR 7
#define SIG       8
#define TIMEDOUT  255

byte state = WAITING;   /* the node's state word, armed */
bool asleep = false;    /* the waiter is inside futex_wait */
byte result = 0;        /* what hl__node_wait returned */
bool signal_ok = false; /* what hl__node_signal / hl__node_claim returned */
byte wakes = 0;         /* futex_wake calls by the waker */
bool ever_parked = false;
bool timed_out = false;
bool waiter_done = false;
bool waker_done = false;
bool interrupt = false; /* the waiter's thread's interrupt word */
bool intr_node = false; /* the node published in the waiter's record */

inline futex_wake_all()
{
	asleep = false
}

proctype Waiter()
{
	byte s;
	/* Spin phase: a number of loads, then the budget runs out (or, with a
	 * deadline, the deadline passes while spinning). */
	do
	:: s = state;
	   if
	   :: s != WAITING -> goto signalled
	   :: else -> skip
	   fi
	:: break
#ifdef TIMED
	:: s = WAITING; goto give_up    /* the deadline passed while spinning */
#endif
	od;

#ifdef INTR
	intr_node = true;       /* published before the CAS to PARKED */
#endif
	/* Park: CAS(WAITING -> PARKED). */
#ifdef BUG_PARK_NO_RECHECK
	state = PARKED;
	ever_parked = true;
#else
	atomic {
		if
		:: state == WAITING -> state = PARKED; ever_parked = true
		:: else -> s = state; goto signalled
		fi
	}
#endif
	do
	:: 
#if defined(INTR) && !defined(BUG_INTR_NO_RECHECK)
	   if
	   :: interrupt -> s = PARKED; goto give_up
	   :: else -> skip
	   fi;
#endif
	   /* futex_wait(&state, PARKED) */
	   atomic {
		if
		:: state == PARKED -> asleep = true
		:: else -> skip
		fi
	   };
#ifdef TIMED
	   if
	   :: !asleep -> skip           /* woken, or the value had changed */
	   :: asleep -> asleep = false; timed_out = true  /* ETIMEDOUT */
	   fi;
#else
	   (!asleep);                   /* until a futex_wake (waker or stray) */
#endif
	   s = state;
#ifdef INTR
	   /* PARKED_INTR: back to PARKED; the loop's first step reads the
	    * interrupt word. */
	   atomic {
		if
		:: s == PARKED_INTR && state == PARKED_INTR -> state = PARKED; s = PARKED
		:: s == PARKED_INTR && state != PARKED_INTR -> s = state
		:: else -> skip
		fi
	   };
#endif
	   if
	   :: s != PARKED -> goto signalled
	   :: else -> skip
	   fi;
	   if
	   :: timed_out -> goto give_up
	   :: else -> skip
	   fi
	od;

give_up:
	/* abandon(): CAS(seen -> ABANDONED) until it succeeds or a signal
	 * (or a claim) is seen. */
	do
	:: atomic {
		if
		:: state == s -> state = ABANDONED; result = TIMEDOUT; goto done
		:: else -> s = state
		fi
	   };
	   if
	   :: s == WAITING || s == PARKED || s == PARKED_INTR -> skip
	   :: else -> goto signalled
	   fi
	od;

signalled:
	if
	:: s == CLAIMED -> (state != CLAIMED); s = state   /* wait_claimed() */
	:: else -> skip
	fi;
	assert(s == SIG);
	result = s;
done:
	waiter_done = true
}

proctype Waker()
{
	byte s;
	bool was_parked;
	s = state;
#ifdef BUG_SIGNAL_BLIND
	atomic { s = state; state = SIG };
	signal_ok = true;
	if
	:: s == PARKED -> wakes++; futex_wake_all()
	:: else -> skip
	fi;
#else
	do
	:: assert(s == WAITING || s == PARKED || s == PARKED_INTR || s == ABANDONED);  /* P4 */
	   if
	   :: s == ABANDONED -> signal_ok = false; break
	   :: else -> skip
	   fi;
	   atomic {
		if
#ifdef CLAIM
		:: state == s -> state = CLAIMED; signal_ok = true
#else
		:: state == s -> state = SIG; signal_ok = true
#endif
		:: else -> s = state
		fi
	   };
	   if
	   :: signal_ok -> break
	   :: else -> skip
	   fi
	od;
	was_parked = signal_ok && (s == PARKED || s == PARKED_INTR);
#ifdef CLAIM
	/* hl__node_post: the signal, then the wake if the claim found PARKED. */
	if
	:: signal_ok -> state = SIG
	:: else -> skip
	fi;
#ifdef BUG_POST_NO_WAKE
	was_parked = false;
#endif
#endif
#ifndef BUG_SIGNAL_NO_WAKE
	if
	:: was_parked -> atomic { wakes++; futex_wake_all() }
	:: else -> skip
	fi;
#endif
#endif
	waker_done = true
}

/* hl__thread_interrupt: the word, then the published node's word. */
proctype Interrupter()
{
	bool flipped = false;
	interrupt = true;
#ifndef BUG_INTR_NO_CAS
	if
	:: intr_node ->
	   atomic {
		if
		:: state == PARKED -> state = PARKED_INTR; flipped = true
		:: else -> skip
		fi
	   };
	   if
	   :: flipped -> futex_wake_all()
	   :: else -> skip
	   fi
	:: else -> skip
	fi
#endif
}

/* Late futex_wakes on the node from an earlier waker (node reuse). */
proctype Stray()
{
	do
	:: futex_wake_all()
	:: break
	od
}

/* P2 and P3, once both sides are done. */
proctype Check()
{
#ifdef NO_WAKER
	waiter_done;
	assert(result == TIMEDOUT)
#else
	(waiter_done && waker_done);
	assert((result == SIG && signal_ok) || (result == TIMEDOUT && !signal_ok));
	assert(wakes <= 1);
	assert(ever_parked || wakes == 0)
#endif
}

init
{
	atomic {
		run Waiter();
#ifndef NO_WAKER
		run Waker();
#endif
#ifdef INTR
		run Interrupter();
#endif
		run Stray();
		run Check()
	}
}

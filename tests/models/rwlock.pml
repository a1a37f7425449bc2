/* placeholder header */

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
/* Fair unless told: its free choices include every run of prefer-writer
 * (a writer waiter always due, a group stopping at every writer). */
#ifndef KIND
#define KIND K_FAIR
#endif
#if KIND != K_PREFER_WRITER && KIND != K_FAIR && KIND != K_PREFER_READER
#error "KIND is K_PREFER_WRITER, K_FAIR or K_PREFER_READER"
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
#if defined(READER_DEPENDS) && KIND != K_PREFER_READER
#error "READER_DEPENDS is prefer-reader's promise"
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
#if KIND == K_PREFER_READER
#define LIVE_MAY_QUEUE (!rd || !READER_TAKE)
#else
#define LIVE_MAY_QUEUE true
#endif
/* Values nobody reads again are forgotten (see the header). */
#define FORGET_HEAD ; head = 0
/* hl_node_wait_until wakes a waiter up only once it is due (its timer) */
#define WOKEN_DUE(x) && due_t[OWNER(x)]
#else
/* Fresh nodes per thread: one per lock call (two with BUG_NO_NESTED: the
 * nested call queues too), and a prefer-reader thread one more for step
 * 2b's new start; a thread that has used them all polls (lock_poll). */
#ifdef BUG_NO_NESTED
#define NPT_CALLS (2 * CALLS)
#else
#define NPT_CALLS CALLS
#endif
#if KIND == K_PREFER_READER
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
/* A writer waiter of a prefer-writer lock is due at once (due_now). */
#define PW_WRITER(x) (KIND == K_PREFER_WRITER && !ISREADER(x))

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
#ifdef READER_DEPENDS
bool r2_got = false;            /* R8: reader 2 has had a share */
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
	sw_wake = false; sw_handoff = false

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

/* hl_node_wait_until(n, NULL, ...) as wait_node calls it: park (the spin
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
#ifdef LIVE
		/* back to its owner's pool (reused; see put) */
		life[rc_x] = L_NEW; nnext[rc_x] = 0;
#else
		life[rc_x] = L_GONE;
#endif
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
		/* hl_node_post: from here on, only h's node */
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
	:: how == DG_CLAIMED ->
		/* hl_node_post: from here on, only h's node */
		if
		:: sw_readers == 2 -> nstate[h] = S_HANDED
		:: else -> nstate[h] = S_RELEASED
		fi
	:: else -> skip
	fi;
	sw_readers = 0
}
#endif

/* hl_queue_extract takes waiter i into the group: it goes on the list
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

/* grant_group(n): hl_queue_extract of the readers behind n (group_member:
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
		LOCK_ACCESS;    /* (reads tail, for R5) */
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
#elif KIND == K_PREFER_WRITER
			:: reach(3); break      /* prefer-writer: stop at any writer */
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

/* Step 4's flag CAS, inside the head's atomic step: `head` = n, n armed,
 * WAKE, and HANDOFF when due (a free choice; a prefer-writer writer is
 * always due; with -DLIVE its timer says). */
#ifdef LIVE
#define DUE_NOW (due_t[me] || PW_WRITER(n))
#endif
inline set_flags()
{
	head = n;
	nstate[n] = N_WAITING;          /* hl_node_arm */
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
		/* hl_node_wait_until(n, NULL, 0, now + DUE_RECHECK_NS): the
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
		/* c. hl_node_give_up: the core's CAS to ABANDONED decides
		 * against a signal (a claim is waited out) */
		atomic {
			if
			:: nstate[n] == N_WAITING || nstate[n] == N_PARKED -> nstate[n] = N_ABANDONED; sig = S_TIMEDOUT
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
				fi
			}
		fi
	:: else -> skip
	fi
}

proctype Thread(byte me)
{
	byte it = 0, n, sig, pred, nx, d, cur, h, first, last, i, j, k, how;
	byte sw_writer, sw_readers;
	bool ok, due, rt, timed, late, rd, sw_wake, sw_handoff;
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

		/* Step 2: hl_queue_node_init, hl_node_arm, hl_queue_enqueue:
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
			/* Step 2b (reader_admit): the word by an RMW after the
			 * link; if a share can be taken, give the node up (it
			 * stays in the queue, abandoned) and take it, or, if the
			 * word changed so that it cannot, start again. */
			if
			:: rd ->
				atomic { LOCK_ACCESS; ok = READER_TAKE };
				if
				:: ok ->
					atomic {
						assert(nstate[n] != N_PARKED && nstate[n] != N_CLAIMED);
						if
						:: nstate[n] == N_WAITING -> nstate[n] = N_ABANDONED; sig = S_TIMEDOUT
						:: else -> sig = nstate[n]      /* a signal came first */
						fi
					};
					if
					:: sig == S_TIMEDOUT ->
						/* hl_thread_node_abandoned: n is the queue's */
						atomic {
							LOCK_ACCESS;
							if
							:: READER_TAKE ->
								reach(23);
								w_readers++; rholders++;
								ok = true
							:: else ->
								reach(24);
								ok = false
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
					:: else -> skip
					fi
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
			/* Step 4b (grant_readers_behind): grant the readers
			 * queued behind us (all of them, the last one too);
			 * give the share back (never the last release owing
			 * a signal: no flags can be live, we are the head);
			 * then the flag CAS from s, which fails (a retry)
			 * unless the word is s again. */
			grant_group(n);
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
		   :: else -> skip
		   fi;
#endif
		   if
		   :: ok ->
			ok = false;
			wait_node(n, sig, timed);
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
				:: me == 2 -> r2_got = true
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
			 * waits until reader 2 has had a share */
			if
			:: me == 1 && it == ITERS(me) -> r2_got
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

/* SPDX-License-Identifier: MIT */
/* Model of the CNA waiter queue (src/queue.c): hl__queue_enqueue and
 * hl__queue_pass_head with HL_PASS_CNA (leave, search, the secondary queue
 * carried from head to head, flush, SRO, prioritized waiters, skipping and
 * recycling of abandoned nodes), with and without HL_PASS_DEFER_WAKE.
 *
 * One queue and no lock: the queue head is the holder.  A thread enqueues a
 * node; if the queue was empty it is the head at once, otherwise it waits
 * on its node until it is signalled HEAD (or, with -DTIMED, abandons it and
 * leaves).  As head it runs its critical section and calls pass_head, which
 * makes another node the head.  The lock layer's part (hl_mutex's
 * leave_queue and unlock_to_head, checked in mutex.pml with FIFO passes) is
 * reduced to what it does with the queue: a pass with HL_PASS_DEFER_WAKE may
 * return the new head unsignalled, and the passer then signals it later
 * itself, calling pass_head again from it (hl__queue_pass_head(d, 0), which
 * reads the secondary queue from d's node) if it was abandoned meanwhile.
 *
 * Abstractions:
 *  - Sequential consistency, as in wait.pml and mutex.pml.
 *  - Time is not modelled: whether the secondary queue's first waiter has
 *    waited the CNA threshold (flush), whether SRO searches while the
 *    secondary queue is empty, and whether a new head is parked (a deferred
 *    pass) are free nondeterministic choices at every pass, so every timing
 *    is explored.  This covers FIFO passes and a policy change too: without
 *    HL_PASS_CNA a pass flushes a non-empty secondary queue and does not
 *    search, one of the choices here.
 *  - The waiting core is a node state with CAS transitions, as in wait.pml
 *    (checked there): WAITING -> HEAD by the signal, WAITING -> ABANDONED by
 *    the owner (-DTIMED); parking and futexes are left out.
 *  - Each wait uses a fresh node (node reuse is the waiting core's
 *    business); NTHREADS threads make ITER waits each.  A node whose life
 *    ended (its owner finished its pass, or it was recycled) is marked
 *    GONE, and touching it again is an error: in the C code its owner, or
 *    the node pool, may have reused it.
 *  - The topology: even threads run on node 0, odd ones on node 1 (so a
 *    thread of one node passing headship may find waiters of the other
 *    before one of its own, the case that sets waiters aside); with -DPRIO,
 *    thread PRIO_THREAD (default 2) is prioritized (HL_NODE_F_PRIO;
 *    RT works the same).
 *  - Steps that read only fields the passer owns (the secondary queue, the
 *    interior of the chain, node and flags) are merged with the one read of
 *    shared state next to them; each merge is argued where it is made.
 *  - The fork generation in the tail word, the observer hook and the
 *    queue-event counters are left out.
 *
 * The liveness variant (-DLIVE, no timeouts, 3 threads) asks whether the
 * flush bounds the wait of a waiter set aside.  Threads 1 and 3 run on
 * node 1 and thread 2 on node 0, and each thread enqueues, becomes head
 * and passes headship on for ever, so that a head on node 1 can keep
 * finding the other node-1 thread queued behind thread 2 and move thread 2
 * to the secondary queue, over and over.  Spin looks for an acceptance
 * cycle of the negated formula (L1) under weak fairness: a process that
 * stays able to move does move.  What changes:
 *  - Time passes.  The flush is no longer a free choice (which a run could
 *    refuse for ever): Timer(t) stands for the clock and may set tdue[t] at
 *    any step while t's node is in the secondary queue; since it stays
 *    enabled until it does, weak fairness makes it fire.  A pass flushes
 *    exactly when the secondary queue's first waiter's tdue is set, as the
 *    C code compares that waiter's start time with the threshold.  Starting
 *    the timer at the move rather than at the enqueue loses no flush
 *    decision: the earliest pass that can read it is the next one, and the
 *    timer may fire at any step before.  SRO's search and HL_PASS_DEFER_WAKE
 *    stay free choices: the property holds however they are made, against
 *    the waiter for ever included.
 *  - Each thread reuses one node, as the C code does (OWNER(x) is x).
 *    When a node's life as head ends its fields are cleared, so that rounds
 *    differing only in stale values are one state; nobody reads them again
 *    (an enqueuer links only into the tail, and C5 asserts that).
 *
 * Properties:
 *  C1 exclusive headship: the ghost `holder` names the one thread that is
 *     the head (or passes headship on for an abandoned head); every handover
 *     (signal, tail CAS to 0, enqueue into an empty queue) asserts that it
 *     comes from the holder, and at most one thread is in its critical
 *     section (assert);
 *  C2 no lost waiter: every thread terminates (no invalid end state), and a
 *     node is signalled only while WAITING or ABANDONED (assert), so every
 *     waiter that did not abandon became head exactly once;
 *  C3 a prioritized waiter never enters the secondary queue (assert at every
 *     move);
 *  C4 clean end: tail 0, no holder, every node's life ended exactly once,
 *     as a head that passed headship on or as an abandoned node recycled
 *     (no node recycled twice, none leaked, nothing left in the secondary
 *     queue: assert);
 *  C5 one queue at a time: a ghost `where` puts every node in at most one
 *     of the two queues, every move asserts where the node was, and at every
 *     pass the secondary queue handed to the new head is a chain from
 *     sec_head to sec_tail holding exactly the nodes marked secondary, and
 *     the primary chain from the new head holds only primary nodes; an
 *     enqueuer links into a next field that nobody else wrote, of a node
 *     still in use (assert);
 *  L1 (-DLIVE) no starvation: every thread is the head (runs its critical
 *     section) infinitely often, []<>(cs_who == t) for each thread t,
 *     under weak fairness with the timers above; in particular thread 2,
 *     set aside again and again while threads 1 and 3 re-enqueue on the
 *     preferred node, becomes head once its timer fires (the flush).
 *
 * Seeded bugs (-D):
 *  BUG_MOVE_TAIL             the search goes past the last node, waiting
 *                            for its link as leave() does, instead of
 *                            stopping at it: with no waiter on the
 *                            preferred node queued, the passer waits for an
 *                            enqueuer that never comes (C2, deadlock);
 *  BUG_EMPTY_DROPS_SECONDARY leave() empties the queue (tail CAS to 0) when
 *                            the primary queue empties, as a FIFO leave
 *                            does, dropping the secondary queue: its waiters
 *                            are never signalled (C2, deadlock);
 *  BUG_SPLICE_NO_CLEAR       leave() makes the secondary queue the queue
 *                            (tail CAS to sec_tail) without clearing
 *                            sec_tail's next first: the link it kept from
 *                            the primary queue leads to the head that just
 *                            left (C5, assert at that pass; without the C5
 *                            check, the next leave() follows it while an
 *                            enqueuer's link is pending, and signals a node
 *                            that already left, losing the enqueuer);
 *  BUG_MOVE_PRIORITIZED      search ignores the prioritized flag (C3,
 *                            assert);
 *  BUG_DEFER_NO_SECONDARY    a deferred pass returns the new head before
 *                            writing the secondary queue into its node, so
 *                            the next pass from it starts with an empty one
 *                            (C2, deadlock);
 *  BUG_NO_FLUSH              the threshold is never checked (no flush): with
 *                            -DLIVE, threads 1 and 3 pass headship between
 *                            them for ever while thread 2 stays in the
 *                            secondary queue (L1, an acceptance cycle; the
 *                            safety rows pass with it, since the secondary
 *                            queue still goes back when the primary one
 *                            empties or holds nobody on the head's node).
 *
 * Variants: NTHREADS threads (default 3) x ITER waits (default 2); -DTIMED
 * lets waiters abandon their nodes; -DPRIO prioritizes thread PRIO_THREAD;
 * -DREACH=k turns reachability marker k into an assertion (below); -DLIVE
 * the liveness variant above (ITER is then unbounded).
 */

#ifndef NTHREADS
#define NTHREADS 3
#endif
#ifndef ITER
#define ITER 2
#endif
#ifndef PRIO_THREAD
#define PRIO_THREAD 2
#endif
#ifdef LIVE
#ifdef TIMED
#error "LIVE is checked without timeouts"
#endif
#define NNODES NTHREADS         /* one node per thread, reused */
#define OWNER(x) (x)
#else
#define NNODES (NTHREADS * ITER)
#define OWNER(x) (((x) - 1) / ITER + 1)
#endif

/* node states (wait.h); HEAD is the signal HL_SIG_HEAD */
#define FREE      0
#define WAITING   1
#define ABANDONED 3
#define HEAD      8

/* ghost: where a node is */
#define W_NEW  0        /* not enqueued yet */
#define W_PRI  1        /* in the primary queue (tail chain) */
#define W_SEC  2        /* in the secondary queue */
#define W_LEFT 3        /* the head left the queue, its pass is running */
#define W_GONE 4        /* life ended: passed on, or recycled */

#define TOPO(x)  (OWNER(x) % 2 == 0 -> 0 : 1)
#ifdef PRIO
#define ISPRIO(x) (OWNER(x) == PRIO_THREAD)
#else
#define ISPRIO(x) false
#endif

byte tail = 0;                  /* node index, 0 = empty */

/* Nodes 1..NNODES. */
byte nnext[NNODES + 1];
byte nstate[NNODES + 1];
byte nsech[NNODES + 1];         /* sec_head, sec_tail: written into a new */
byte nsect[NNODES + 1];         /* head's node by the pass that made it */
byte npref[NNODES + 1];         /* pref_node: the same, or its own node */

/* ghosts */
byte where[NNODES + 1];
byte holder = 0;                /* C1: the thread that is the head */
byte in_cs = 0;
byte finished = 0;

#ifdef LIVE
/* L1: the passage of time.  tdue[t]: thread t's wait has lasted the CNA
 * threshold.  Timer(t) may set it at any step while t's node is in the
 * secondary queue, and under weak fairness it must do so eventually (it
 * stays enabled until it does); it is cleared when t enqueues. */
bool tdue[NTHREADS + 1];
byte cs_who = 0;        /* L1: the thread in its critical section */

proctype Timer(byte t)
{
	do
	:: atomic { where[t] == W_SEC && !tdue[t] -> tdue[t] = true }
	od
}

/* L1: every thread is the head (runs its critical section) infinitely
 * often. */
#if NTHREADS == 3
ltl starvation_free { []<> (cs_who == 1) && []<> (cs_who == 2) && []<> (cs_who == 3) }
#elif NTHREADS == 4
ltl starvation_free { []<> (cs_who == 1) && []<> (cs_who == 2) && []<> (cs_who == 3) && []<> (cs_who == 4) }
#else
#error "LIVE: NTHREADS 3 or 4"
#endif
#endif

/* ---- checks ------------------------------------------------------------ */

/* Reachability: with -DREACH=k, reaching marker k fails an assertion, so
 * that a path the properties rely on can be shown to be explored (the
 * markers are listed in docs/verification.md). */
#ifdef REACH
#define reach(k) assert(REACH != k)
#else
#define reach(k) skip
#endif

/* C4/C5: recycle an abandoned node that is no longer linked from the
 * queue (hl__node_recycle). */
inline recycle(rc_x)
{
	assert(nstate[rc_x] == ABANDONED);
	assert(where[rc_x] == W_PRI || where[rc_x] == W_LEFT);
	where[rc_x] = W_GONE;
	nstate[rc_x] = FREE
}

/* C5: the secondary queue (sech..sect) goes back into the primary queue. */
inline sec_to_primary()
{
	i = sech;
	cnt = 0;
	do
	:: assert(i != 0 && where[i] == W_SEC && cnt < NNODES);
	   where[i] = W_PRI;
	   cnt++;
	   if
	   :: i == sect -> break
	   :: else -> i = nnext[i]
	   fi
	od;
	i = 0;
	cnt = 0
}

/* C5: the queues as handed to new head h. */
inline check_queues(cq_h)
{
	/* the secondary queue is the chain sech..sect, and holds every node
	 * marked secondary */
	cnt = 0;
	if
	:: sech == 0 -> assert(sect == 0)
	:: else ->
		i = sech;
		do
		:: assert(i != 0 && where[i] == W_SEC && cnt < NNODES);
		   assert(!ISPRIO(i));
		   cnt++;
		   if
		   :: i == sect -> break
		   :: else -> i = nnext[i]
		   fi
		od
	fi;
	for (i : 1 .. NNODES) {
		if
		:: where[i] == W_SEC -> cnt--
		:: else -> skip
		fi
	}
	assert(cnt == 0);
	/* the primary chain from h holds only primary nodes */
	i = cq_h;
	do
	:: i == 0 -> break
	:: else ->
		assert(where[i] == W_PRI && cnt < NNODES);
		cnt++;
		i = nnext[i]
	od;
	i = 0;
	cnt = 0
}

/* ---- the queue (src/queue.c) --------------------------------------------- */

/* hl__node_signal(x, HL_SIG_HEAD): ok = false if x was abandoned.  C1: the
 * holder hands headship to x's owner. */
inline signal(sg_x)
{
	atomic {
		assert(where[sg_x] == W_PRI);
		assert(nstate[sg_x] == WAITING || nstate[sg_x] == ABANDONED);
		if
		:: nstate[sg_x] == ABANDONED -> ok = false
		:: else ->
			nstate[sg_x] = HEAD; ok = true;
			assert(holder == me); holder = OWNER(sg_x)
		fi
	}
}

/* leave(cn) -> nx: cn's successor (0: the queue is empty now); with flush,
 * or when cn was the last node, a non-empty secondary queue goes in front
 * (flushed). */
inline leave()
{
	/* The relaxed load of tail and the CAS are one step: a load that does
	 * not find cn and a CAS that fails both go on to wait for the link.
	 * The clearing of sec_tail's next is merged into the CAS too: before
	 * the CAS nobody but the passer writes that field (sec_tail had a
	 * successor when it was moved, so no enqueuer links behind it), and
	 * when the CAS fails the cleared link is overwritten before it is
	 * read (splice, or a move behind it). */
	atomic {
		assert(where[cn] == W_PRI);
		if
		:: tail == cn && sech == 0 ->
			tail = 0; nx = 0;
			assert(holder == me); holder = 0
#ifdef BUG_EMPTY_DROPS_SECONDARY
		:: tail == cn && sech != 0 ->
			tail = 0; nx = 0;
			assert(holder == me); holder = 0
#else
		:: tail == cn && sech != 0 ->
#ifndef BUG_SPLICE_NO_CLEAR
			nnext[sect] = 0;
#endif
			tail = sect;
			reach(4);
			sec_to_primary();
			nx = sech; sech = 0; sect = 0; flushed = true
#endif
		:: else -> nx = 255
		fi;
		where[cn] = W_LEFT
	};
	if
	:: nx == 255 ->
		/* acquire load of the link, until the enqueuer wrote it */
		atomic { nnext[cn] != 0 -> nx = nnext[cn] };
		/* flush: the secondary queue's first waiter has waited the
		 * threshold.  Time is not modelled: a free choice, made here
		 * rather than before leave() as in the C code, since it is
		 * used only here and depends on nothing in between.  With
		 * LIVE, the timer of the secondary queue's first waiter. */
		if
#if defined(BUG_NO_FLUSH)
		:: false ->
#elif defined(LIVE)
		:: sech != 0 && tdue[OWNER(sech)] ->
#else
		:: sech != 0 ->
#endif
			/* splice: sec_tail.next = next, sec_head is the head */
			d_step {
				reach(5);
				sec_to_primary();
				nnext[sect] = nx;
				nx = sech; sech = 0; sect = 0; flushed = true
			}
#ifdef LIVE
		:: else -> skip
#else
		:: true -> skip
#endif
		fi
	:: else -> skip
	fi
}

/* search(nx, pref) -> nx, np (the new head's preference): find_preferred,
 * then set_aside or, when nobody on pref is queued, splice_front. */
inline search()
{
	/* find_preferred: from nx on, the first waiter on pref or
	 * prioritized; 0 if there is none.  topo_node and flags are constant,
	 * and the link is read in one step with them. */
	cur = nx;
	found = 0;
	do
	:: atomic {
		assert(where[cur] == W_PRI);
		if
		:: TOPO(cur) == pref -> found = cur; break
#ifndef BUG_MOVE_PRIORITIZED
		:: ISPRIO(cur) -> reach(9); found = cur; break
#endif
		:: else -> skip
		fi;
#ifdef BUG_MOVE_TAIL
		nnext[cur] != 0;        /* waits for the link, as leave() */
#else
		if
		:: nnext[cur] == 0 -> reach(10); break  /* nobody on pref */
		:: else -> skip
		fi;
#endif
		cur = nnext[cur]
	   }
	od;
	if
	:: found != 0 ->
		/* set_aside: the waiters before found move to the secondary
		 * queue in order (abandoned ones are recycled).  Each has a
		 * successor (seen above), so its link no longer changes; its
		 * state may (its owner abandons), hence a step per node. */
		cur = nx;
		do
		:: cur == found -> break
		:: else ->
		   atomic {
			sx = nnext[cur];
			assert(sx != 0);
			if
			:: nstate[cur] == ABANDONED -> reach(3); recycle(cur)
			:: else ->
				/* C3, C5 */
				assert(where[cur] == W_PRI && !ISPRIO(cur));
				where[cur] = W_SEC;
				if
				:: sect != 0 -> reach(2); nnext[sect] = cur
				:: else -> reach(1); sech = cur
				fi;
				sect = cur
			fi;
			cur = sx; sx = 0
		   }
		od;
		nx = found;
		np = pref               /* its node, or kept (prioritized) */
	:: found == 0 && sech != 0 ->
		/* splice_front: the secondary queue goes in front of nx */
		d_step {
			reach(12);
			sec_to_primary();
			nnext[sect] = nx;
			nx = sech; sech = 0; sect = 0; flushed = true;
			np = TOPO(nx)
		}
	:: else -> skip
	fi;
	cur = 0;
	found = 0
}

/* hl__queue_pass_head(ph_n, HL_PASS_CNA | (ph_defer ? HL_PASS_DEFER_WAKE : 0))
 * -> d: the deferred new head, or 0. */
inline pass_head(ph_n, ph_defer)
{
	cn = ph_n;
	d = 0;
	assert(holder == me);
	d_step {
		sech = nsech[cn]; sect = nsect[cn];
		pref = npref[cn]
	};
	do
	:: flushed = false;
	   leave();
	   /* n was abandoned: recycle it (nobody refers to it any more) */
	   atomic {
		if
		:: nstate[cn] == ABANDONED -> reach(6); recycle(cn)
		:: else -> skip
		fi
	   };
	   if
	   :: nx == 0 -> break
	   :: else -> skip
	   fi;
	   np = TOPO(nx);
	   if
	   :: flushed -> skip
	   :: !flushed && sech != 0 -> search()
	   :: !flushed && sech == 0 -> search()     /* SRO: 1 in 128 */
	   :: !flushed && sech == 0 -> skip
	   fi;
	   flushed = false;
#ifdef BUG_DEFER_NO_SECONDARY
	   if
	   :: ph_defer && nstate[nx] == WAITING -> d = nx; break
	   :: true -> skip
	   fi;
#endif
	   d_step {
		nsech[nx] = sech; nsect[nx] = sect; npref[nx] = np;
		check_queues(nx);
		sech = 0; sect = 0
	   };
#ifndef BUG_DEFER_NO_SECONDARY
	   /* HL_PASS_DEFER_WAKE and next is parked (not modelled: a free choice
	    * while it waits): returned unsignalled */
	   if
	   :: ph_defer && nstate[nx] == WAITING ->
		if
		:: nsech[nx] != 0 -> reach(11)
		:: else -> skip
		fi;
		d = nx; break
	   :: true -> skip
	   fi;
#endif
	   signal(nx);
	   if
	   :: ok -> break
	   :: else ->
		reach(7);
		/* abandoned: it leaves the queue too; the secondary queue
		 * is the one just written into it */
		cn = nx;
		d_step { sech = nsech[cn]; sect = nsect[cn] }
	   fi
	od;
	cn = 0; nx = 0; ok = false; pref = 0; np = 0; sech = 0; sect = 0
}

/* ---- the threads --------------------------------------------------------- */

proctype Thread(byte me)
{
	byte it = 0, n, pred, cn, nx, cur, sx, found, sech, sect, pref, np, d, i, cnt;
	bool ok, flushed;

	do
#ifdef LIVE
	:: true ->
		n = me;
#else
	:: it == ITER -> break
	:: it < ITER ->
		n = (me - 1) * ITER + it + 1;
		it++;
#endif
		/* hl__queue_node_init, hl__node_arm, hl__queue_enqueue: the
		 * node's fields are private until the xchg publishes it */
		atomic {
#ifdef LIVE
			assert(where[n] == W_NEW || where[n] == W_GONE);
			tdue[me] = false;
#else
			assert(where[n] == W_NEW);
#endif
			nnext[n] = 0; nsech[n] = 0; nsect[n] = 0; npref[n] = TOPO(n);
			nstate[n] = WAITING;
			pred = tail; tail = n;
			where[n] = W_PRI;
			if
			:: pred == 0 -> assert(holder == 0); holder = me; nstate[n] = HEAD
			:: else -> skip
			fi
		};
		if
		:: pred != 0 ->
			/* the link: release store into pred's next */
			atomic {
				assert(where[pred] != W_GONE && where[pred] != W_NEW);
				assert(nnext[pred] == 0);
				nnext[pred] = n
			};
			pred = 0;
			/* wait on the node: signalled HEAD, or (TIMED) abandon it
			 * with a CAS from WAITING */
			if
			:: atomic { nstate[n] == HEAD -> assert(holder == me) }
#ifdef TIMED
			:: atomic { nstate[n] == WAITING -> nstate[n] = ABANDONED };
			   goto done_iter
#endif
			fi
		:: else -> skip
		fi;

		/* head: the critical section, then pass headship on */
#ifdef LIVE
		atomic { in_cs++; assert(in_cs == 1 && holder == me); cs_who = me };
		atomic { in_cs--; cs_who = 0 };
#else
		atomic { in_cs++; assert(in_cs == 1 && holder == me) };
		in_cs--;
#endif
		pass_head(n, true);
		assert(where[n] == W_LEFT);
		where[n] = W_GONE;      /* hl__thread_node_put: reused now */
#ifdef LIVE
		/* forget what nobody reads again (see the header) */
		d_step { nnext[n] = 0; nstate[n] = FREE; nsech[n] = 0; nsect[n] = 0; npref[n] = 0 };
#endif
		if
		:: d != 0 ->
			/* the lock layer signals the deferred head later (at
			 * once when it is due, or at its unlock) */
			signal(d);
			if
			:: !ok -> reach(8); pass_head(d, false)      /* it gave up */
			:: else -> skip
			fi;
			d = 0; ok = false
		:: else -> skip
		fi;
done_iter:
		n = 0
	od;
	finished++
}

init
{
	byte k;
	atomic {
		for (k : 1 .. NTHREADS) {
			run Thread(k)
#ifdef LIVE
			; run Timer(k)
#endif
		}
	}
	(finished == NTHREADS);
	/* C4 */
	assert(tail == 0 && holder == 0 && in_cs == 0);
	for (k : 1 .. NNODES) {
		assert(where[k] == W_GONE);
		assert(nstate[k] == HEAD || nstate[k] == FREE)
	}
}

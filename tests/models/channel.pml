/* SPDX-License-Identifier: MIT */
/* Model of hl_channel (src/channel.c) on hl_swap's wait points (src/swap.c).
 *
 * Modelled: the wait point (state word IDLE / WOKEN / SPINNING / PARKED, the
 * futex on it): wake = exchange to WOKEN, then futex_wake if the old state
 * was PARKED (two steps); wait = CAS IDLE -> SPINNING or PARKED (a free
 * choice: the spin policy) or take a kept WOKEN, spin (loads) until WOKEN
 * or the budget is spent, CAS SPINNING -> PARKED, futex_wait(PARKED) until
 * the word is WOKEN, a deadline (timed waits) that gives up by CAS of the
 * state seen -> IDLE; taking a wake is a plain store of IDLE after the load
 * that saw WOKEN.  On top of them: hl_channel_call / call_timed (append
 * under the lock, take server_waiting, hl__swap(server, own point) or wait;
 * timed out: unlink, or take back `current` with current_gone, or wait for
 * the finisher's wake with no deadline), the server's loop as
 * hl_channel_serve runs it (hl_channel_receive, then reply_receive after
 * every call: take_reply, receive_locked with its swap of the replied
 * call's point and the server point; ECANCELED: receive again), and
 * hl_channel_shutdown (closed, unlink the waiting calls with ESHUTDOWN,
 * take server_waiting; after the unlock wake each, reading `next` first,
 * and the server).
 *
 * Configuration: clients 1 and 2 (client 1 untimed, client 2 timed; with
 * -DBOTH_TIMED both), each making CALLS calls (1; its record, on its stack,
 * is the same each time); the server, whose receives are timed with
 * -DRECV_TIMED (an ETIMEDOUT receive is retried); and a third party that
 * shuts the channel down: after both clients have returned (so that the
 * server's loop ends), or with -DSHUTDOWN at any moment.  A deadline may
 * pass at any moment of a timed wait.
 *
 * Abstractions:
 *  - Sequential consistency, as in wait.pml: this model checks the
 *    protocol, not the memory orders (swap.c argues those).
 *  - Each section under the channel's mutex is one atomic step (the mutex
 *    itself is mutex.pml's subject).  Sound by reduction: inside a section
 *    every access is to the channel's fields or to a record that is on the
 *    list or `current` (its owner reads its status and response only after
 *    its wake, and its `next` only under the lock); the wait points are
 *    not touched inside a section.
 *  - futex_wait is "if the word is PARKED, sleep" and then a block until a
 *    futex_wake clears `asleep` (or, timed, ETIMEDOUT at any moment).  No
 *    spurious wake-ups (wait.pml has them), but a futex_wake that lands
 *    after its waiter returned wakes the point's next wait (-DCALLS=2).
 *  - Values nobody reads again are forgotten (zeroed).
 *
 * Properties:
 *  H1 every call returns, once, with the response to its own request (0),
 *     ETIMEDOUT only if it was timed, ESHUTDOWN only if the channel was
 *     shut down and the server never took its request (asserts at the
 *     return); every reply the server made was delivered (end);
 *  H2 no thread touches a record after its client returned: a ghost
 *     `freed` is set at the return, and every write to a record (its
 *     `next` on the list, its response and status), every read of its
 *     request, and every wake's exchange on its point asserts it is clear
 *     (the futex_wake after the exchange may land late: the design allows
 *     it, and the point's next wait tolerates it, -DCALLS=2);
 *  H3 a record is woken at most once per call, and the client returns with
 *     its point IDLE (no wake kept for a dead record);
 *  H4 the server's ECANCELED count equals the number of calls taken back
 *     from `current` by a client that timed out, and the channel ends
 *     empty (no call listed, none current, no flag left);
 *  H5 nobody is blocked for good (no invalid end state).
 *
 * Seeded bugs (-D), each caught (tests/models/run.sh):
 *  BUG_TIMEOUT_NO_GONE     a client that times out while its call is
 *                          `current` returns without taking it back: the
 *                          server's reply writes and wakes the record of
 *                          a client that returned (H3: its wake is kept
 *                          on the dead record; H2 when it lands after);
 *  BUG_NO_WAKE_SERVER      a caller that finds the server waiting clears
 *                          server_waiting but does not wake it (H5);
 *  BUG_REQ_AFTER_UNLOCK    the server reads the request after its unlock:
 *                          the client may have timed out, taken its call
 *                          back and returned (H2);
 *  BUG_PARK_STORE          the wait point parks with a plain store of
 *                          PARKED instead of a CAS from SPINNING: a wake
 *                          that came during the spin is overwritten (H5);
 *  BUG_WAKE_NO_FUTEX       the wake never calls futex_wake (H5);
 *  BUG_SHUTDOWN_NO_WAKE    the shutdown unlinks the waiting calls but does
 *                          not wake them (H5);
 *  BUG_REPLY_WAKE_FIRST    the reply wakes the client before it writes the
 *                          response (outside the lock): the client returns
 *                          and the write lands on a freed record (H2).
 */

#ifndef CALLS
#define CALLS 1
#endif
#define NCLIENTS 2
#define SERVER 0

/* wait point states (swap.c), and a wait's outcome */
#define IDLE     0
#define WOKEN    1
#define SPINNING 2
#define PARKED   3
#define GAVE_UP  4

/* return codes */
#define OK        0
#define ETIMEDOUT 1
#define ESHUTDOWN 2
#define ECANCELED 3
#define WAIT      9     /* receive_locked: the server must wait */

#define REQ(c, n)  ((c) * 4 + (n))
#define RESP(r)    ((r) + 64)

#ifdef BOTH_TIMED
#define TIMED(c) true
#else
#define TIMED(c) ((c) == 2)
#endif

/* the wait points: 0 the server's, c the record of client c */
byte pst[NCLIENTS + 1];
bool asleep[NCLIENTS + 1];

/* the channel */
byte first = 0, last = 0, current = 0;
bool current_gone = false, server_waiting = false, closed = false, receiving = false;

/* the records (one per client, on its stack) */
byte nxt[NCLIENTS + 1];
byte req[NCLIENTS + 1];
byte resp[NCLIENTS + 1];
byte status[NCLIENTS + 1];
bool freed[NCLIENTS + 1];       /* ghost: its client returned */
bool taken[NCLIENTS + 1];       /* ghost: the server took this call */

/* ghosts for the end */
byte cancelled = 0;             /* ECANCELED replies */
byte gone_taken = 0;            /* calls taken back from `current` */
byte replies = 0;               /* replies made */
byte served = 0;                /* calls that returned 0 */
byte returned = 0;              /* clients done with all their calls */
bool server_done = false, shutter_done = false;

#define RECORD(c) assert(!freed[c])

/* -DREACH=k: assert that point k is not reached (to show it is). */
#ifdef REACH
#define reach(k) assert(REACH != k)
#else
#define reach(k) skip
#endif

/* ---- the wait point (swap.c) ----------------------------------------------- */

/* wake(p): exchange to WOKEN, then futex_wake if it was PARKED. */
inline wake(wk_p, wk_old)
{
	atomic {
		if
		:: wk_p != SERVER -> RECORD(wk_p)                       /* H2 */
		:: else -> skip
		fi;
		wk_old = pst[wk_p];
		pst[wk_p] = WOKEN;
		assert(wk_p == SERVER || wk_old != WOKEN)                /* H3 */
	};
#ifndef BUG_WAKE_NO_FUTEX
	if
	:: wk_old == PARKED -> asleep[wk_p] = false;                    /* futex_wake */
		if :: wk_p != SERVER && freed[wk_p] -> reach(5) :: else -> skip fi
	:: else -> skip
	fi;
#endif
	wk_old = 0
}

/* wait_self(p) with a deadline if tmo: wr = OK or ETIMEDOUT. */
inline wait_self(ws_p, ws_tmo, wr, ws)
{
	/* 1. CAS IDLE -> SPINNING | PARKED, or a kept wake */
	atomic {
		assert(pst[ws_p] == IDLE || pst[ws_p] == WOKEN);        /* else EBUSY: hl__bug */
		if
		:: pst[ws_p] == WOKEN -> ws = WOKEN
		:: else ->
			if
			:: ws = SPINNING
			:: ws = PARKED
			fi;
			pst[ws_p] = ws
		fi
	};
	/* 2. spin: loads until WOKEN, the budget, or the deadline */
	if
	:: ws == SPINNING ->
		do
		:: pst[ws_p] == WOKEN -> ws = WOKEN; break
		:: break
		:: ws_tmo ->
			atomic {
				if
				:: pst[ws_p] == SPINNING -> pst[ws_p] = IDLE; ws = GAVE_UP
				:: else -> ws = WOKEN
				fi
			};
			break
		od;
		if
		:: ws == SPINNING ->
#ifdef BUG_PARK_STORE
			pst[ws_p] = PARKED; ws = PARKED
#else
			atomic {
				if
				:: pst[ws_p] == SPINNING -> pst[ws_p] = PARKED; ws = PARKED
				:: else -> ws = WOKEN
				fi
			}
#endif
		:: else -> skip
		fi
	:: else -> skip
	fi;
	/* 3. futex_wait(PARKED) until WOKEN; 4. the deadline */
	do
	:: ws != PARKED -> break
	:: else ->
		atomic {
			if
			:: pst[ws_p] == PARKED -> asleep[ws_p] = true
			:: else -> skip
			fi
		};
		if
		:: !asleep[ws_p] -> skip
		:: atomic { ws_tmo && asleep[ws_p] -> asleep[ws_p] = false }   /* ETIMEDOUT */
		fi;
		if
		:: pst[ws_p] == WOKEN -> ws = WOKEN
		:: else ->
			if
			:: ws_tmo ->                    /* the deadline passed: give up */
				atomic {
					if
					:: pst[ws_p] == PARKED -> pst[ws_p] = IDLE; ws = GAVE_UP
					:: else -> ws = WOKEN
					fi
				}
			:: skip                         /* look again */
			fi
		fi
	od;
	/* take the wake (a plain store), or time out */
	if
	:: ws == WOKEN -> pst[ws_p] = IDLE; wr = OK
	:: ws == GAVE_UP -> wr = ETIMEDOUT
	fi;
	ws = 0
}

/* ---- the client (channel.c: call) ------------------------------------------ */

proctype Client(byte c)
{
	byte n, wr, ws, old, k, prev, res;
	bool tmo, wake_server;

	tmo = TIMED(c);
	do
	:: n == CALLS -> break
	:: else ->
		/* 1. under the lock: ESHUTDOWN if closed; append; take
		 * server_waiting.  The record is fresh (zeroed, on the stack). */
		atomic {
			if
			:: closed -> res = ESHUTDOWN; taken[c] = false; reach(7)
			:: else ->
				freed[c] = false; taken[c] = false; pst[c] = IDLE;
				nxt[c] = 0; resp[c] = 0; status[c] = OK; req[c] = REQ(c, n);
				if
				:: last != 0 -> RECORD(last); nxt[last] = c
				:: else -> first = c
				fi;
				last = c;
				wake_server = server_waiting;
				server_waiting = false;
				res = WAIT
			fi
		};
		if
		:: res == WAIT ->
#ifdef BUG_NO_WAKE_SERVER
			wake_server = false;
#endif
			/* 2. hl__swap(server, own point) or wait on it */
			if
			:: wake_server -> wake(SERVER, old)
			:: else -> skip
			fi;
			wake_server = false;
			wait_self(c, tmo, wr, ws);
			if
			:: wr == ETIMEDOUT ->
				/* 3. timed out: under the lock, unlink, or take
				 * back `current`, or leave it to its finisher */
				atomic {
					k = first; prev = 0;
					do
					:: k == 0 -> break
					:: k == c ->
						if
						:: prev != 0 -> RECORD(prev); nxt[prev] = nxt[c]
						:: else -> first = nxt[c]
						fi;
						if
						:: last == c -> last = prev
						:: else -> skip
						fi;
						assert(!taken[c]);
						res = ETIMEDOUT;
						break
					:: else -> prev = k; k = nxt[k]
					od;
					k = 0; prev = 0;
					if
					:: res == WAIT && current == c ->
#ifndef BUG_TIMEOUT_NO_GONE
						current = 0;
						current_gone = true;
						gone_taken++;
#endif
						reach(1);
						res = ETIMEDOUT
					:: else -> skip
					fi
				};
				if
				:: res == WAIT ->
					/* finished: its wake is coming */
					reach(3);
					wait_self(c, false, wr, ws);
					assert(wr == OK)
				:: else -> skip
				fi
			:: else -> skip
			fi;
			if
			:: res == WAIT -> res = status[c]
			:: else -> skip
			fi
		:: else -> skip
		fi;
		/* the return: H1, H3; from here on the record is dead (H2) */
		atomic {
			if
			:: res == OK ->
				assert(taken[c] && resp[c] == RESP(REQ(c, n)));
				served++
			:: res == ETIMEDOUT -> assert(tmo)
			:: res == ESHUTDOWN -> assert(closed && !taken[c])
			fi;
			assert(pst[c] == IDLE);
			freed[c] = true;
			res = 0; wr = 0; old = 0;
			n++
		}
	od;
	returned++
}

/* ---- the server (channel.c: receive, reply_receive, as hl_channel_serve) --- */

/* receive_locked's loop body, under the lock: take the first call (c,
 * rq), or ESHUTDOWN, or WAIT with server_waiting set.  err: the outcome. */
inline receive_step()
{
	c = first;
	if
	:: c != 0 ->
		first = nxt[c];
		if
		:: first == 0 -> last = 0
		:: else -> skip
		fi;
		current = c;
		taken[c] = true;
#ifndef BUG_REQ_AFTER_UNLOCK
		RECORD(c); rq = req[c];
#endif
		receiving = false;
		server_waiting = false;
		err = OK
	:: c == 0 && closed ->
		receiving = false;
		server_waiting = false;
		err = ESHUTDOWN
	:: c == 0 && !closed ->
		server_waiting = true;
		err = WAIT
	fi
}

proctype Server()
{
	byte c, rq, rp, replied, err, wr, ws, old;
	bool tmo;
#ifdef RECV_TIMED
	tmo = true;
#endif
receive:
	/* hl_channel_receive: begin_receive, receive_locked */
	atomic {
		assert(!receiving && current == 0 && !current_gone);
		receiving = true;
		receive_step()
	};
after_step:
	/* the lock is free here */
#ifdef BUG_REQ_AFTER_UNLOCK
	if
	:: err == OK -> RECORD(c); rq = req[c]
	:: else -> skip
	fi;
#endif
	if
	:: replied != 0 -> wake(replied, old); replied = 0     /* hl__swap's wake */
	:: else -> skip
	fi;
	if
	:: err == WAIT ->
		wait_self(SERVER, tmo, wr, ws);
		atomic {
			if
			:: wr == ETIMEDOUT && first == 0 ->
				server_waiting = false;
				receiving = false;
				err = ETIMEDOUT;
				reach(6)
			:: else ->
				if :: first == 0 && !closed -> reach(8) :: else -> skip fi;
				receive_step()
			fi;
			wr = 0
		};
		goto after_step
	:: err == ETIMEDOUT -> goto receive
	:: err == ESHUTDOWN -> goto done
	:: err == OK -> skip
	fi;
	/* serve the call: the handler's response */
	rp = RESP(rq);
	c = 0; rq = 0;
	/* hl_channel_reply_receive: take_reply, then receive_locked */
#ifdef BUG_REPLY_WAKE_FIRST
	/* a reply that wakes before it writes the response */
	atomic { assert(!receiving); c = current };
	if
	:: !current_gone && c != 0 -> wake(c, old)
	:: else -> skip
	fi;
#endif
	atomic {
		assert(!receiving);
		if
		:: current_gone ->
			current_gone = false;
			cancelled++;
			reach(2);
			err = ECANCELED
		:: else ->
			assert(current != 0);
			c = current;
			current = 0;
			RECORD(c);                                      /* H2 */
			resp[c] = rp;
			status[c] = OK;
			replies++;
#ifndef BUG_REPLY_WAKE_FIRST
			replied = c;
#endif
			receiving = true;
			receive_step()
		fi;
		rp = 0
	};
	if
	:: err == ECANCELED -> goto receive
	:: else -> goto after_step
	fi;
done:
	server_done = true
}

/* ---- the shutdown (channel.c: hl_channel_shutdown) ------------------------- */

proctype Shutter()
{
	byte w, nx, old;
	bool wake_server;
#ifndef SHUTDOWN
	(returned == NCLIENTS);         /* after the last call: the server's loop ends */
#endif
	atomic {
		closed = true;
		w = first;
		first = 0; last = 0;
		nx = w;
		do
		:: nx == 0 -> break
		:: else -> RECORD(nx); status[nx] = ESHUTDOWN; nx = nxt[nx]; reach(4)
		od;
		wake_server = server_waiting;
		server_waiting = false
	};
	do
	:: w == 0 -> break
	:: else ->
		RECORD(w);
		nx = nxt[w];                    /* before the wake frees it */
#ifndef BUG_SHUTDOWN_NO_WAKE
		wake(w, old);
#endif
		w = nx
	od;
	if
	:: wake_server -> wake(SERVER, old)
	:: else -> skip
	fi;
	shutter_done = true
}

init
{
	atomic {
		run Client(1);
		run Client(2);
		run Server();
		run Shutter()
	};
	(returned == NCLIENTS && server_done && shutter_done);
	/* H1, H4 */
	assert(replies == served);
	assert(cancelled == gone_taken);
	assert(first == 0 && last == 0 && current == 0 && !current_gone && !receiving &&
	       !server_waiting && closed)
}

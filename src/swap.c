/* SPDX-License-Identifier: MIT */
/* hl_swap: wake a chosen thread and wait, in one call (seed 003's
 * FUTEX_SWAP, in user space).
 *
 * A wait point (hl_swap_point_t) is one thread's place to wait; its state
 * word is also the futex word the thread parks on:
 *
 *   state         set by    meaning
 *   ------------  --------  ----------------------------------------------
 *   IDLE      0   owner     nobody waits, no wake kept
 *   WOKEN     1   a waker   a wake arrived: the waiter (now or next) takes it
 *   SPINNING  2   owner     the owner waits, spinning on the word
 *   PARKED    3   owner     the owner sleeps in futex_wait(PARKED)
 *
 * Wake (hl_wake): exchange the state for WOKEN; if it was PARKED, one
 * futex_wake.  A spinning owner sees WOKEN within a cache-line transfer,
 * with no syscall on either side; a wake with nobody waiting stays as
 * WOKEN for the next wait (a permit, as binary as a semaphore at 1).  The
 * exchange is release: what the waker wrote before is visible to the
 * waiter that reads WOKEN with acquire.
 *
 * Wait (hl_wait_self, the second half of hl_swap), by the point's owner:
 *  1. CAS IDLE -> SPINNING (or PARKED when it will not spin).  WOKEN
 *     instead: take it (store IDLE) and return.  SPINNING or PARKED: another
 *     thread waits here, EBUSY.
 *  2. Spin, if the policy below allows, for up to the spin budget; WOKEN
 *     ends it.  Then CAS SPINNING -> PARKED (failure: it is WOKEN).
 *  3. futex_wait(PARKED) until WOKEN, re-reading the word after every
 *     return (spurious wake-ups are harmless).
 *  4. Deadline: CAS SPINNING|PARKED -> IDLE.  If the CAS fails the word is
 *     WOKEN: the wake won the race and the wait returns 0.  A wake that
 *     comes after a timed-out wait is kept for the next one.
 * Taking a wake is a plain store of IDLE by the owner: a second wake that
 * lands between the owner's load of WOKEN and its store merges with the
 * first, which the permit semantics allow (two wakes, one permit).
 *
 * After its exchange a waker touches the point only with futex_wake, which
 * for a private futex reads no memory: the woken thread may free its point
 * as soon as its wait returns (at worst a later futex at that address gets
 * a spurious wake-up, which every futex user must tolerate).
 *
 * When to spin (docs/swap.md, "When to spin", has the measurements): a
 * round trip whose two sides spin costs a fraction of a microsecond, one
 * through two futex wake-ups tens of microseconds; but a spinner on the
 * CPU its peer needs delays the peer by a whole time slice, which is worse
 * than sleeping.  So a wait spins only when each of these holds, and parks
 * at once otherwise:
 *  - the budget (HOTLOCK_SPIN_NS, twice it for a swap: a parked peer's
 *    wake-up alone takes about as long as the default budget) is not 0;
 *  - in a swap, the peer does not wait on the caller's CPU (the CPU each
 *    waiter last waited on is recorded in its point): a peer preempted
 *    there, or parked there and about to be woken there, needs this CPU;
 *  - the waiting core's rule 3 (wait.h): the process may use two CPUs or
 *    more (affinity, cgroup quota);
 *  - the waiter's own record: its last wait was answered within the
 *    budget (a wake taken at once, during the spin, or after a park that
 *    lasted no longer than the budget).  Every wait is timed from its
 *    start to its wake, parked or not, so a pair whose replies take
 *    milliseconds (schbench's workers: 30 ms of work) never spins, and one
 *    whose replies come within the budget spins from its next wait on.
 *    The record is one word that only the waiting thread reads and
 *    writes: for hl_swap and hl_wait_self the point's own (a point
 *    persists from wait to wait), for hl_channel's calls, whose points
 *    live one call each, one the caller keeps per thread and channel
 *    (channel.c); the internal calls take it as an argument.  A record
 *    rather than a back-off after each failed spin: a back-off still
 *    spins now and then in waits that never pay, and each failed spin can
 *    hold back a thread the kernel queued on the spinner's CPU
 *    (docs/swap.md, schbench).
 * The rules live in the waiting core with the locks' (wait.h,
 * hl__reply_spin_ns and hl__reply_learn); this point supplies the CPUs and
 * keeps the record.
 * The lock spinner slots (wait.c) are not used here: they ration spinning
 * among many waiters of one lock so that its owner keeps a CPU, whereas a
 * swap's peer is one thread, whose CPU the rules above look at directly;
 * with one slot on a 2-CPU machine, a swap could never spin while its
 * peer finishes its own spin.
 *
 * Other single-syscall forms were tried (docs/swap.md has the numbers):
 * io_uring's FUTEX_WAKE linked to a FUTEX_WAIT in one io_uring_enter, and
 * why FUTEX_WAKE_OP and futex_waitv cannot express a swap.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>

#include <hotlock/futex.h>
#include <hotlock/swap.h>

#include "atomics.h"
#include "config.h"
#include "internal.h"
#include "swap.h"
#include "wait.h"

enum { IDLE = 0, WOKEN = 1, SPINNING = 2, PARKED = 3 };

struct point {
	_Atomic uint32_t state;
	_Atomic uint32_t cpu;   /* 1 + CPU; written by the owner, read by wakers (a hint) */
	_Atomic uint32_t slow;  /* the reply record (wait.h), for waits that bring none of their own */
	uint32_t unused;
};
_Static_assert(sizeof(struct point) == sizeof(hl_swap_point_t), "hl_swap_point_t layout");
_Static_assert(_Alignof(hl_swap_point_t) >= _Alignof(_Atomic uint32_t), "alignment");

static struct point *pt(hl_swap_point_t *p)
{
	return (struct point *)p;
}

/* ---- the policy ----------------------------------------------------------- */

static uint32_t current_cpu1(void)
{
#ifdef HOTLOCK_SCHED
	return 0;               /* unknown: the schedule has no CPUs */
#else
	int c = sched_getcpu();  /* glibc reads rseq's cpu_id: no syscall */
	return c < 0 ? 0 : (uint32_t)c + 1;
#endif
}

/* ---- wake and wait -------------------------------------------------------- */

int hl_swap_point_init(hl_swap_point_t *p)
{
	if (!p)
		return EINVAL;
	*p = (hl_swap_point_t)HL_SWAP_POINT_INIT;
	return 0;
}

int hl_swap_point_destroy(hl_swap_point_t *p)
{
	if (!p)
		return EINVAL;
	struct point *q = pt(p);
	/* Relaxed: a waiter that is there now makes it EBUSY; the caller
	 * orders its destroy after the waits it knows of. */
	uint32_t s = hl__load(&q->state, HL_RELAXED);
	if (s == SPINNING || s == PARKED)
		return EBUSY;
	hl__store(&q->state, IDLE, HL_RELAXED);
	return 0;
}

/* The wake; returns the state it replaced. */
static uint32_t wake(struct point *peer)
{
	/* Release: the waker's writes before the wake are visible to the
	 * waiter that reads WOKEN with acquire.  Acquire is not needed: the
	 * old value only says whether to call futex_wake. */
	uint32_t old = hl__xchg(&peer->state, WOKEN, HL_RELEASE);
	if (old == PARKED)
		hl_futex_wake((uint32_t *)&peer->state, 1);
	return old;
}

int hl_wake(hl_swap_point_t *peer)
{
	if (!peer)
		return EINVAL;
	wake(pt(peer));
	return 0;
}

/* Takes the wake the owner saw (WOKEN, read with acquire). */
static int take(struct point *self)
{
	/* Relaxed: only the owner leaves WOKEN; the acquire that saw it
	 * ordered the waker's writes already. */
	hl__store(&self->state, IDLE, HL_RELAXED);
	return 0;
}

/* Gives up a wait in state `seen` (SPINNING or PARKED) at its deadline:
 * ETIMEDOUT, or 0 if a wake got there first. */
static int give_up(struct point *self, uint32_t seen)
{
	/* Acquire on failure: the word is WOKEN, and the wake's writes must
	 * be visible.  Relaxed on success: giving up publishes nothing. */
	if (hl__cas(&self->state, &seen, IDLE, HL_ACQUIRE))
		return ETIMEDOUT;
	return take(self);
}

/* The wait of an owner.  spin_ns: its spin budget (0: park at once);
 * quick_ns: the budget it would have had, against which the wait is
 * recorded as quick or slow in *slow (hl__reply_learn). */
static int wait_self(struct point *self, _Atomic uint32_t *slow, const struct hl__deadline *dl,
		     uint64_t spin_ns, uint64_t quick_ns, uint32_t my_cpu1)
{
	uint32_t s = IDLE;
	uint32_t first = spin_ns ? SPINNING : PARKED;
	/* Acquire on failure (WOKEN: the wake's writes).  Relaxed on success:
	 * beginning to wait publishes nothing. */
	if (!hl__cas(&self->state, &s, first, HL_ACQUIRE)) {
		if (s != WOKEN)
			return EBUSY;
		hl__reply_learn(slow, false);
		return take(self);
	}
	/* Relaxed: a hint for wakers' spin decisions. */
	if (my_cpu1)
		hl__store(&self->cpu, my_cpu1, HL_RELAXED);
	uint64_t start = hl__now_ns();
	if (spin_ns) {
		for (unsigned i = 1;; i++) {
			/* Acquire: pairs with the waker's release exchange. */
			if (hl__load(&self->state, HL_ACQUIRE) == WOKEN) {
				hl__reply_learn(slow, false);
				return take(self);
			}
			hl__cpu_relax();
			if (i % HL_SPIN_CLOCK_EVERY == 0) {
				if (hl__deadline_passed(dl)) {
					hl__reply_learn(slow, true);
					return give_up(self, SPINNING);
				}
				if (hl__now_ns() - start >= spin_ns)
					break;
			}
		}
		s = SPINNING;
		/* Relaxed on success: going to sleep publishes nothing.
		 * Acquire on failure: the word is WOKEN. */
		if (!hl__cas(&self->state, &s, PARKED, HL_ACQUIRE))
			return take(self);
	}
	clockid_t clock = dl ? dl->clock : CLOCK_MONOTONIC;
	const struct timespec *abs = dl && !dl->forever ? &dl->abs : NULL;
	long failed_sleep_ns = 1000;
	for (;;) {
		int r = hl_futex_wait((uint32_t *)&self->state, PARKED, clock, abs);
		/* Acquire: pairs with the waker's release exchange. */
		if (hl__load(&self->state, HL_ACQUIRE) == WOKEN) {
			hl__reply_learn(slow, hl__now_ns() - start > quick_ns);
			return take(self);
		}
		if (r == ETIMEDOUT || hl__deadline_passed(dl)) {
			hl__reply_learn(slow, true);
			return give_up(self, PARKED);
		}
		if (r && r != EAGAIN && r != EINTR)
			hl__poll_backoff(NULL, &failed_sleep_ns); /* a refused futex: poll */
	}
}

static int deadline_of(struct hl__deadline *dl, clockid_t clock, const struct timespec *abstime)
{
	if (!abstime)
		return EINVAL;
	return hl__deadline_init(dl, clock, abstime);
}

/* The record a wait keeps: the caller's, or else the point's own. */
static _Atomic uint32_t *record_of(struct point *self, _Atomic uint32_t *slow)
{
	return slow ? slow : &self->slow;
}

int hl__swap_wait(hl_swap_point_t *self, const struct hl__deadline *dl, _Atomic uint32_t *slow)
{
	struct point *me = pt(self);
	uint32_t cpu1 = current_cpu1();
	uint64_t budget = hl__spin_ns();
	slow = record_of(me, slow);
	return wait_self(me, slow, dl, hl__reply_spin_ns(slow, budget, 0, cpu1), budget, cpu1);
}

void hl__swap_wake(hl_swap_point_t *peer)
{
	wake(pt(peer));
}

int hl__swap(hl_swap_point_t *peer, hl_swap_point_t *self, const struct hl__deadline *dl,
	     _Atomic uint32_t *slow)
{
	struct point *me = pt(self), *other = pt(peer);
	/* Relaxed: where the peer last waited, a hint.  Read before the wake:
	 * after it the peer may return and free its point. */
	uint32_t peer_cpu1 = hl__load(&other->cpu, HL_RELAXED);
	wake(other);
	uint32_t cpu1 = current_cpu1();
	uint64_t budget = 2 * hl__spin_ns();
	slow = record_of(me, slow);
	return wait_self(me, slow, dl, hl__reply_spin_ns(slow, budget, peer_cpu1, cpu1), budget, cpu1);
}

int hl_wait_self(hl_swap_point_t *self)
{
	return self ? hl__swap_wait(self, NULL, NULL) : EINVAL;
}

int hl_wait_self_timed(hl_swap_point_t *self, clockid_t clock, const struct timespec *abstime)
{
	struct hl__deadline dl;
	int err = deadline_of(&dl, clock, abstime);
	if (err || !self)
		return err ? err : EINVAL;
	return hl__swap_wait(self, &dl, NULL);
}

int hl_swap(hl_swap_point_t *peer, hl_swap_point_t *self)
{
	if (!peer || !self || peer == self)
		return EINVAL;
	return hl__swap(peer, self, NULL, NULL);
}

int hl_swap_timed(hl_swap_point_t *peer, hl_swap_point_t *self, clockid_t clock,
		  const struct timespec *abstime)
{
	struct hl__deadline dl;
	int err = deadline_of(&dl, clock, abstime);
	if (err || !peer || !self || peer == self)
		return err ? err : EINVAL;
	return hl__swap(peer, self, &dl, NULL);
}

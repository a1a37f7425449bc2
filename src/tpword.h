/* SPDX-License-Identifier: MIT */
/* The TP lock word (seed 000): the 32 bits whose protocol hl_mutex (its
 * whole word, mutex.c) and hl_rwlock (the low half of its state word,
 * rwlock.c) share, written once here.
 *
 *   bits  0-21  owner: the holder's TID, 0 when none (Linux TIDs are below
 *               PID_MAX_LIMIT, 2^22)
 *   bits 22-29  GEN: the fork generation (thread.h) in which the flags were
 *               set; flags of another generation were set by threads of a
 *               fork parent and count as absent
 *   bit  30     WAKE: the queue head, recorded in the lock's `head`, waits
 *               on its node for the signal of whoever releases the lock
 *   bit  31     HANDOFF: the head is due the lock; the release hands it
 *               over, nobody steals
 *
 * Only the queue head sets flags (or the holder that records a parked head
 * for its release to wake), with a release after it wrote `head`; whoever
 * removes live flags from the word owns the head's node (mutex.c and
 * rwlock.c each say how). */
#ifndef HOTLOCK_TPWORD_H
#define HOTLOCK_TPWORD_H

#include <stdbool.h>
#include <stdint.h>

#include "thread.h"

#define HL_TP_OWNER_BITS 22
#define HL_TP_OWNER_MASK ((UINT32_C(1) << HL_TP_OWNER_BITS) - 1)
#define HL_TP_GEN_SHIFT HL_TP_OWNER_BITS
#define HL_TP_GEN_MASK ((uint32_t)HL_FORK_GEN_MASK << HL_TP_GEN_SHIFT)
#define HL_TP_WAKE (UINT32_C(1) << (HL_TP_GEN_SHIFT + HL_FORK_GEN_BITS))
#define HL_TP_HANDOFF (HL_TP_WAKE << 1)
#define HL_TP_FLAGS (HL_TP_WAKE | HL_TP_HANDOFF)

_Static_assert(HL_TP_OWNER_MASK >= 4194304 - 1, "the owner field holds any Linux TID");
_Static_assert((HL_TP_OWNER_MASK & HL_TP_GEN_MASK) == 0 && (HL_TP_GEN_MASK & HL_TP_FLAGS) == 0,
	       "owner, generation and flags do not overlap");
_Static_assert(HL_TP_HANDOFF == UINT32_C(1) << 31, "the fields fill the 32 bits exactly");

/* The flags a head sets now: WAKE, HANDOFF if it is due, this generation. */
static inline uint32_t hl__tp_flags_now(bool due)
{
	return HL_TP_WAKE | (due ? HL_TP_HANDOFF : 0) | hl__fork_gen() << HL_TP_GEN_SHIFT;
}

/* Whether w carries flags set in this process (see GEN above). */
static inline bool hl__tp_live_flags(uint32_t w)
{
	return (w & HL_TP_FLAGS) && ((w >> HL_TP_GEN_SHIFT) & HL_FORK_GEN_MASK) == hl__fork_gen();
}

/* Whether w's owner is the calling thread, whose TID is tid (in a fork
 * child the forking thread's TID changed, and locks it held in the parent
 * carry the old one: hl__owner_is_me). */
static inline bool hl__tp_owned_by_me(uint32_t w, uint32_t tid)
{
	return hl__owner_is_me(w & HL_TP_OWNER_MASK, tid);
}

/* The handoff rule, step 4 of both locks: whether head n, which became the
 * head (or woke up as the recorded head) at head_since, is due: an RT
 * thread at once; any other once it has waited handoff_ns since it queued
 * and competed as the head for handoff_ns >> HL_TP_HEAD_MIN_SHIFT.  Counted
 * from the enqueue alone, every head of a queue that has been long for a
 * while would be due the moment it became head, and the lock would go from
 * sleeper to sleeper while running threads could take it (docs/mutex.md,
 * Bounds); this way a lock makes at most one handoff per an eighth of the
 * threshold, as parking_lot's eventual fairness makes one per 0.5 ms on
 * average.  hl__tp_head_due_at: the moment a head that is not RT becomes
 * due. */
#define HL_TP_HEAD_MIN_SHIFT 3

static inline uint64_t hl__tp_head_due_at(const struct hl__node *n, uint64_t handoff_ns,
					 uint64_t head_since)
{
	uint64_t queued = n->wait_start_ns + handoff_ns;
	uint64_t competed = head_since + (handoff_ns >> HL_TP_HEAD_MIN_SHIFT);
	return queued > competed ? queued : competed;
}

static inline bool hl__tp_head_due(const struct hl__node *n, uint64_t now, uint64_t handoff_ns,
				  uint64_t head_since)
{
	return (n->flags & HL_NODE_F_RT) || now >= hl__tp_head_due_at(n, handoff_ns, head_since);
}

#endif

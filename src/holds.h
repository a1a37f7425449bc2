/* SPDX-License-Identifier: MIT */
/* The read shares a thread holds, known exactly: which rwlocks, and how
 * many shares of each.  hl_rwlock (rwlock.c) asks it whether a read is
 * nested (granted past waiting writers only to a thread that holds a share
 * of that lock) and whether a read unlock releases a share of the caller's.
 *
 * The table is thread-local (hl__reads, thread.h: one TLS access on the
 * fast paths), HL_READ_HOLDS entries of one word each,
 *
 *   bits  0-15  the shares of the lock held; 0: the entry is free
 *   bits 16-63  the lock's address (one of more than 48 bits has no entry)
 *
 * probed by address, entry 0 first.  A free entry keeps its lock's
 * address, and a lock is given entry 0 when that is free, so a thread
 * that takes one rwlock at a time finds its entry at the first look.
 * Each address is in one entry at most: a lock gets a free entry only if
 * no entry, free or not, has its address.
 *
 * Past the table (every entry in use, an address of more than 48 bits, a
 * count at 65535) the shares are counted without their lock
 * (`untracked`), and the rule is the safe one: a thread with
 * untracked shares is taken to hold a share of every rwlock for nesting
 * (its reads of a read-held lock pass waiting writers: never a deadlock of
 * a genuine nested read), and a read unlock of a lock it has no entry for
 * releases one of them.
 *
 * Signals: only the thread writes its table, each change one load and one
 * store of one word (relaxed atomics: a diagnostic may read another
 * thread's table).
 * A handler that interrupts a change between the two runs its own read
 * locks and unlocks to completion, so the word is as it was when the
 * interrupted change stores (a handler that returns still holding a share
 * it took may have its count overwritten: a read lock that outlives the
 * handler that took it is beyond what POSIX allows of rwlocks in handlers
 * anyway).  A share is counted before it is taken and uncounted after it
 * is given back, so a handler never finds a share its thread holds
 * uncounted: its nested read is recognised.
 */
#ifndef HOTLOCK_HOLDS_H
#define HOTLOCK_HOLDS_H

#include <stdbool.h>
#include <stdint.h>

#include "atomics.h"
#include "thread.h"

#define HL_HOLD_COUNT_BITS 16
#define HL_HOLD_COUNT_MASK ((UINT64_C(1) << HL_HOLD_COUNT_BITS) - 1)

/* Where a share was counted: an entry of the table, or untracked; and
 * hl__reads_release_at's "none". */
#define HL_HOLD_UNTRACKED (-1)
#define HL_HOLD_NONE (-2)

/* Whether entry w is `lock`'s (free or not). */
static inline bool hl__reads_is(uint64_t w, const void *lock)
{
	return w >> HL_HOLD_COUNT_BITS == (uintptr_t)lock;
}

/* Whether entry 0 of the calling thread's table is `lock`'s with room for
 * one more share: the first look of a read lock (*w: the entry). */
static inline bool hl__reads_first(const void *lock, uint64_t *w)
{
	/* Relaxed: the thread's own word (above). */
	*w = hl__load(&hl__reads.entry[0], HL_RELAXED);
	return hl__reads_is(*w, lock) && (*w & HL_HOLD_COUNT_MASK) != HL_HOLD_COUNT_MASK;
}

/* Whether entry 0 of the calling thread's table is `lock`'s with a share
 * counted: the first look of a read unlock (*w: the entry). */
static inline bool hl__reads_first_held(const void *lock, uint64_t *w)
{
	/* Relaxed: the thread's own word (above). */
	*w = hl__load(&hl__reads.entry[0], HL_RELAXED);
	return hl__reads_is(*w, lock) && (*w & HL_HOLD_COUNT_MASK);
}

/* Stores entry 0 (after hl__reads_first or hl__reads_first_held). */
static inline void hl__reads_set_first(uint64_t w)
{
	/* Relaxed: the thread's own word (above). */
	hl__store(&hl__reads.entry[0], w, HL_RELAXED);
}

/* Counts one more share of `lock` for the calling thread, before it takes
 * it (holds.c); returns where, for hl__reads_drop.  *held: whether the
 * thread held a share of it already, or untracked shares. */
HL_HIDDEN int hl__reads_add(const void *lock, bool *held);
/* Where the calling thread counted a share of `lock` that it can release:
 * its entry, HL_HOLD_UNTRACKED (one of its untracked shares) or
 * HL_HOLD_NONE. */
HL_HIDDEN int hl__reads_release_at(const void *lock);

/* Whether the calling thread has untracked shares. */
static inline bool hl__reads_untracked(void)
{
	/* Relaxed: the thread's own word (above). */
	return hl__load(&hl__reads.untracked, HL_RELAXED) != 0;
}

/* Uncounts the share counted at `where` (after it was given back, or when
 * it was not taken after all). */
static inline void hl__reads_drop(int where)
{
	/* Relaxed: the thread's own words (above). */
	if (hl__likely(where != HL_HOLD_UNTRACKED))
		hl__store(&hl__reads.entry[where],
			  hl__load(&hl__reads.entry[where], HL_RELAXED) - 1, HL_RELAXED);
	else
		hl__store(&hl__reads.untracked, hl__load(&hl__reads.untracked, HL_RELAXED) - 1,
			 HL_RELAXED);
}

#endif

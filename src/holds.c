/* SPDX-License-Identifier: MIT */
/* The read shares a thread holds: the table's full looks (holds.h has the
 * design).  Relaxed loads and stores throughout: the calling thread's own
 * table, which other threads only read (holds.h, "Signals"). */
#include "holds.h"

int hl__reads_add(const void *lock, bool *held)
{
	struct hl__read_holds *r = &hl__reads;
	uintptr_t key = (uintptr_t)lock;
	int at = -1, free_at = -1;
	uint64_t w = 0;
	/* The entry with the lock's address, free or not; else the first
	 * free one (entry 0 when it is: the next look finds it first). */
	for (int i = 0; i < HL_READ_HOLDS && at < 0; i++) {
		uint64_t e = hl__load(&r->entry[i], HL_RELAXED);
		if (hl__reads_is(e, lock))
			at = i, w = e;
		else if (!(e & HL_HOLD_COUNT_MASK) && free_at < 0)
			free_at = i;
	}
	/* An address of more than 48 bits gets no entry. */
	if (at < 0 && free_at >= 0 && hl__reads_is((uint64_t)key << HL_HOLD_COUNT_BITS, lock))
		at = free_at, w = (uint64_t)key << HL_HOLD_COUNT_BITS;
	uint32_t untracked = hl__load(&r->untracked, HL_RELAXED);
	*held = (w & HL_HOLD_COUNT_MASK) || untracked;
	if (at >= 0 && (w & HL_HOLD_COUNT_MASK) != HL_HOLD_COUNT_MASK) {
		hl__store(&r->entry[at], w + 1, HL_RELAXED);
		return at;
	}
	/* Past the table (holds.h). */
	hl__store(&r->untracked, untracked + 1, HL_RELAXED);
	return HL_HOLD_UNTRACKED;
}

int hl__reads_release_at(const void *lock)
{
	struct hl__read_holds *r = &hl__reads;
	for (int i = 0; i < HL_READ_HOLDS; i++) {
		uint64_t e = hl__load(&r->entry[i], HL_RELAXED);
		if (hl__reads_is(e, lock) && (e & HL_HOLD_COUNT_MASK))
			return i;
	}
	return hl__load(&r->untracked, HL_RELAXED) ? HL_HOLD_UNTRACKED : HL_HOLD_NONE;
}

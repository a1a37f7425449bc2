/* SPDX-License-Identifier: MIT */
/* What the deadlock detector needs from the program (hotlock-run
 * --deadlocks and --lock-order, docs/deadlocks.md): the shim's side, in
 * shim_holds.c.  The collector (tools/deadlock.c) does the rest, from
 * outside. */
#ifndef HOTLOCK_SHIM_HOLDS_H
#define HOTLOCK_SHIM_HOLDS_H

#include <stdbool.h>
#include <stdint.h>

#include "atomics.h"
#include "internal.h"
#include "stats.h"

/* Set once, at load, from the stats area's `detect` (AREA_DETECT_*):
 * whether lock calls list the thread's holds, and whether they record the
 * lock-order graph. */
HL_HIDDEN extern bool shim_holds_on;
HL_HIDDEN extern bool shim_order_on;
/* AREA_DETECT_SITES (--deadlocks alone): a mutex of hotlock's is not
 * listed, but keeps the site that took it in its held_since (unused
 * without the report: shim.h), a store to the line its lock word is on;
 * its unlock writes nothing.  The collector reads the site beside the
 * owner.  Otherwise (--lock-order, or the report on) mutexes are listed
 * as rwlocks are. */
HL_HIDDEN extern bool shim_mutex_sites;
/* shim_holds_on and not shim_mutex_sites: mutexes are listed. */
HL_HIDDEN extern bool shim_mutex_listed;

/* The return address of the lock call the thread is in, while holds are
 * listed (0 otherwise): where a wait begun inside it waits. */
HL_HIDDEN extern __thread uintptr_t shim_site __attribute__((tls_model("initial-exec")));

/* The calling thread's record (shim_stats.c), NULL until it has one. */
HL_HIDDEN extern __thread struct stats_thread *shim_me __attribute__((tls_model("initial-exec")));
/* ... made now if it has none (the slot goes LIVE at its first); NULL
 * where there is no room or no report. */
HL_HIDDEN struct stats_thread *shim_stats_thread(void);

/* The thread calls for obj (how: enum stats_lock) at site with a call that
 * waits until it gets it: the lock-order edges from the locks it holds
 * (with shim_order_on only; a trylock or a timed lock, which cannot wait
 * forever, orders nothing). */
HL_HIDDEN void shim_order_before(const void *obj, enum stats_lock how, uintptr_t site);
HL_HIDDEN void shim_hold_push_slow(const void *obj, enum stats_lock how, uintptr_t site);
HL_HIDDEN void shim_hold_pop_slow(struct stats_thread *t, const void *obj);

/* Lists obj as t's hold n (n < STATS_HOLDS, its count now): relaxed
 * stores of the thread's own entry, then a release of the count that
 * lists it (the collector acquires the count). */
static inline void shim_hold_list(struct stats_thread *t, uint32_t n, const void *obj, enum stats_lock how,
				  uintptr_t site)
{
	hl__store(&t->holds[n].obj, (uintptr_t)obj, HL_RELAXED);
	hl__store(&t->holds[n].site, site, HL_RELAXED);
	hl__store(&t->holds[n].how, (uint32_t)how, HL_RELAXED);
	hl__store(&t->nholds, n + 1, HL_RELEASE);
}

/* The thread took obj at site.  Inline, the common case: a thread with a
 * record and room in its list. */
static inline void shim_hold_push(const void *obj, enum stats_lock how, uintptr_t site)
{
	struct stats_thread *t = shim_me;
	uint32_t n;
	if (hl__likely(t != NULL) && hl__likely((n = hl__load(&t->nholds, HL_RELAXED)) < STATS_HOLDS)) {
		shim_hold_list(t, n, obj, how, site);
		return;
	}
	shim_hold_push_slow(obj, how, site);
}

/* The thread is about to release obj.  Inline, the common case: obj is
 * its latest hold, which goes (release: as in push). */
static inline void shim_hold_pop(const void *obj)
{
	struct stats_thread *t = shim_me;
	if (!t)
		return;         /* no record: it listed nothing */
	uint32_t n = hl__load(&t->nholds, HL_RELAXED);
	if (hl__likely(n && n <= STATS_HOLDS && hl__load(&t->holds[n - 1].obj, HL_RELAXED) == (uintptr_t)obj)) {
		hl__store(&t->nholds, n - 1, HL_RELEASE);
		return;
	}
	shim_hold_pop_slow(t, obj);
}
/* obj is initialised or destroyed: a lock found at its address from now on
 * is another node of the lock-order graph. */
HL_HIDDEN void shim_order_forget(const void *obj);

/* The thread's wait record (struct stats_wait): it begins a wait for obj
 * (a condvar wait: for cond, with its mutex), and ends it. */
HL_HIDDEN void shim_wait_note(struct stats_thread *t, enum stats_lock how, const void *obj,
			      const void *mutex, bool timed);
HL_HIDDEN void shim_wait_done(struct stats_thread *t);

/* The caller's return address, in an exported function. */
#define SHIM_CALLER() ((uintptr_t)__builtin_return_address(0))

#endif

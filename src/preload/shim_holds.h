/* SPDX-License-Identifier: MIT */
/* What the deadlock detector needs from the program (hotlock-run
 * --deadlocks and --lock-order, docs/deadlocks.md): the shim's side, in
 * shim_holds.c.  The collector (tools/deadlock.c) does the rest, from
 * outside. */
#ifndef HOTLOCK_SHIM_HOLDS_H
#define HOTLOCK_SHIM_HOLDS_H

#include <stdbool.h>
#include <stdint.h>

#include "internal.h"
#include "stats.h"

/* Set once, at load, from the stats area's `detect` (AREA_DETECT_*):
 * whether lock calls list the thread's holds, and whether they record the
 * lock-order graph. */
HL_HIDDEN extern bool shim_holds_on;
HL_HIDDEN extern bool shim_order_on;

/* The return address of the lock call the thread is in, while holds are
 * listed (0 otherwise): where a wait begun inside it waits. */
HL_HIDDEN extern __thread uintptr_t shim_site __attribute__((tls_model("initial-exec")));

/* The calling thread's record, made now if it has none (the slot goes
 * LIVE at its first); NULL where there is no room or no report
 * (shim_stats.c). */
HL_HIDDEN struct stats_thread *shim_stats_thread(void);
/* ... or NULL where it has none yet. */
HL_HIDDEN struct stats_thread *shim_stats_thread_now(void);

/* The thread calls for obj (how: enum stats_lock) at site with a call that
 * waits until it gets it: the lock-order edges from the locks it holds
 * (with shim_order_on only; a trylock or a timed lock, which cannot wait
 * forever, orders nothing). */
HL_HIDDEN void shim_order_before(const void *obj, enum stats_lock how, uintptr_t site);
/* The thread took obj at site. */
HL_HIDDEN void shim_hold_push(const void *obj, enum stats_lock how, uintptr_t site);
/* The thread is about to release obj. */
HL_HIDDEN void shim_hold_pop(const void *obj);
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

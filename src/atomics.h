/* SPDX-License-Identifier: MIT */
/* Every atomic operation of the library goes through this header.
 *
 * The wrappers are thin: each expands to the <stdatomic.h> call with the
 * memory order spelled at the call site, where a comment says what the order
 * pairs with.  Keeping them in one place gives a controlled-schedule build
 * one spot to turn each atomic into a scheduling point, and gives readers one
 * vocabulary:
 *
 *   hl__load(p, mo)               atomic_load_explicit
 *   hl__store(p, v, mo)           atomic_store_explicit
 *   hl__xchg(p, v, mo)            atomic_exchange_explicit
 *   hl__cas(p, &expected, v, mo)  strong compare-exchange; the failure order
 *                                 is the success order weakened to what C11
 *                                 allows (no release on a failed CAS)
 *   hl__fetch_or/and/add(p, v, mo)
 *   hl__load_stable(p, mo)        atomic_load_explicit of a value that never
 *                                 changes once the reader may use it (an
 *                                 arena chunk's address): no scheduling point
 *                                 in the controlled-schedule build, where no
 *                                 interleaving can change what it reads
 *   hl__load_hint(p)              a relaxed load of a hint that another
 *                                 thread may change at any time and that no
 *                                 protocol step depends on for correctness
 *                                 (a thread's RT flag): no scheduling point
 *                                 either, since interleaving it would add
 *                                 schedules without covering a protocol step
 *   hl__cpu_relax()               the pause instruction, inside spin loops
 *   hl__cpu_yield()               sched_yield, inside spin loops
 *
 * In the controlled-schedule build (-DHOTLOCK_SCHED, src/controlled.h) each of
 * them is also a scheduling point.
 */
#ifndef HOTLOCK_ATOMICS_H
#define HOTLOCK_ATOMICS_H

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>

#define HL_RELAXED memory_order_relaxed
#define HL_ACQUIRE memory_order_acquire
#define HL_RELEASE memory_order_release
#define HL_ACQ_REL memory_order_acq_rel
#define HL_SEQ_CST memory_order_seq_cst

#define hl__load_stable(p, mo)  atomic_load_explicit((p), (mo))
#define hl__load_hint(p)        atomic_load_explicit((p), memory_order_relaxed)

/* The strongest order C11 allows on the failure path of a CAS whose success
 * order is mo: release parts are dropped. */
#define hl__cas_fail_order(mo)                                              \
	((mo) == memory_order_acq_rel ? memory_order_acquire :              \
	 (mo) == memory_order_release ? memory_order_relaxed : (mo))

#ifndef HOTLOCK_SCHED

#define hl__load(p, mo)         atomic_load_explicit((p), (mo))
#define hl__store(p, v, mo)     atomic_store_explicit((p), (v), (mo))
#define hl__xchg(p, v, mo)      atomic_exchange_explicit((p), (v), (mo))
#define hl__cas(p, expp, v, mo)                                             \
	atomic_compare_exchange_strong_explicit((p), (expp), (v), (mo),     \
						hl__cas_fail_order(mo))
#define hl__fetch_or(p, v, mo)  atomic_fetch_or_explicit((p), (v), (mo))
#define hl__fetch_and(p, v, mo) atomic_fetch_and_explicit((p), (v), (mo))
#define hl__fetch_add(p, v, mo) atomic_fetch_add_explicit((p), (v), (mo))
#define hl__fetch_sub(p, v, mo) atomic_fetch_sub_explicit((p), (v), (mo))

static inline void hl__cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	atomic_signal_fence(memory_order_seq_cst);
#endif
}

/* Give the CPU away inside a spin loop (the thread waited for is probably
 * preempted). */
#define hl__cpu_yield()         sched_yield()

#else /* HOTLOCK_SCHED: the controlled-schedule build (src/controlled.h) */

/* Each atomic is a scheduling point: the scheduler may run another thread
 * before it, and then it executes with no other thread running (the
 * schedules explored are interleavings of sequentially consistent steps).
 * The call site's file and line name the step in a printed schedule. */
#include "controlled.h"
#define hl__sp(kind, p) hl__sched_point((kind), (p), __FILE__, __LINE__)
#define hl__load(p, mo)         (hl__sp(HL_SP_LOAD, (p)), atomic_load_explicit((p), (mo)))
#define hl__store(p, v, mo)     (hl__sp(HL_SP_STORE, (p)), atomic_store_explicit((p), (v), (mo)))
#define hl__xchg(p, v, mo)      (hl__sp(HL_SP_XCHG, (p)), atomic_exchange_explicit((p), (v), (mo)))
#define hl__cas(p, expp, v, mo)                                             \
	(hl__sp(HL_SP_CAS, (p)),                                            \
	 atomic_compare_exchange_strong_explicit((p), (expp), (v), (mo),    \
						 hl__cas_fail_order(mo)))
#define hl__fetch_or(p, v, mo)  (hl__sp(HL_SP_RMW, (p)), atomic_fetch_or_explicit((p), (v), (mo)))
#define hl__fetch_and(p, v, mo) (hl__sp(HL_SP_RMW, (p)), atomic_fetch_and_explicit((p), (v), (mo)))
#define hl__fetch_add(p, v, mo) (hl__sp(HL_SP_RMW, (p)), atomic_fetch_add_explicit((p), (v), (mo)))
#define hl__fetch_sub(p, v, mo) (hl__sp(HL_SP_RMW, (p)), atomic_fetch_sub_explicit((p), (v), (mo)))
#define hl__cpu_relax()         hl__sp(HL_SP_PAUSE, NULL)
#define hl__cpu_yield()         hl__sp(HL_SP_YIELD, NULL)

#endif

/* A sequentially consistent fence: between a write and a later read of
 * another location, where two threads each write one and read the other
 * (store buffering), so that at least one of them sees the other's write.
 * The controlled-schedule build runs sequentially consistent steps, where
 * it changes nothing. */
#define hl__fence_seq_cst()     atomic_thread_fence(memory_order_seq_cst)

/* Pause iterations between two clock reads in a spin loop: often enough
 * that a budget is overshot by at most 64 pauses, seldom enough that the
 * clock is a small share of the spin (docs/core.md, "The waiting policy",
 * has the costs measured).  In the controlled-schedule build every pause
 * is a step of virtual time, and the clock is read more often so that a
 * spin ends within a few steps of its budget. */
#ifndef HOTLOCK_SCHED
#define HL_SPIN_CLOCK_EVERY 64
#else
#define HL_SPIN_CLOCK_EVERY 4
#endif

#endif

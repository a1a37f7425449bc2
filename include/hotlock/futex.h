/* SPDX-License-Identifier: MIT */
/* hotlock: the futex layer.  Private futex wait/wake (futex2 where the
 * running kernel has it) and counters of every futex syscall the library
 * makes.  The NUMA node of the calling CPU (hl_cpu_node) is in topology.h. */
#ifndef HOTLOCK_FUTEX_H
#define HOTLOCK_FUTEX_H

#include <stdint.h>
#include <sys/types.h> /* clockid_t, also in strict ISO C mode */
#include <time.h>

#include <hotlock/topology.h> /* hl_cpu_node, for users of this header */

#ifdef __cplusplus
extern "C" {
#endif

/* Futex syscalls made, by kind.  Counted per thread, always on. */
typedef struct hl_futex_stats {
	uint64_t wait;          /* wait calls (whatever they returned) */
	uint64_t wake;          /* wake calls */
	uint64_t woken;         /* threads those wake calls reported woken */
	uint64_t other;         /* any other futex or futex-hash syscall */
} hl_futex_stats_t;

/* The calling thread's counters since it started. */
void hl_futex_stats_thread(hl_futex_stats_t *out);
/* The whole process: threads alive now plus every thread that has exited. */
void hl_futex_stats_total(hl_futex_stats_t *out);
static inline uint64_t hl_futex_stats_calls(const hl_futex_stats_t *s)
{
	return s->wait + s->wake + s->other;
}
/* hl_futex_stats_calls of the calling thread's counters, read in a few
 * loads: cheap enough to call around every lock operation (a profiler's
 * count by operation). */
uint64_t hl_futex_calls_thread(void);

/* Waits while *addr == val, until woken or until the absolute time abstime
 * on clock (CLOCK_MONOTONIC or CLOCK_REALTIME; abstime NULL waits forever).
 * Private futex.  Returns 0 when woken (or spuriously), EAGAIN when *addr !=
 * val, ETIMEDOUT (also at once for a negative tv_sec), EINTR, EINVAL for
 * another clock or a tv_nsec outside [0, 1e9), or else the errno of the
 * failed syscall as the kernel gave it: EPERM or ENOSYS where a seccomp
 * filter refuses futex(2) (a refused futex2 is retried with futex(2) and the
 * process keeps to futex(2)), EFAULT for a bad addr. */
int hl_futex_wait(uint32_t *addr, uint32_t val, clockid_t clock,
		  const struct timespec *abstime);
/* Wakes up to n waiters of addr; returns how many were woken. */
int hl_futex_wake(uint32_t *addr, int n);

/* Which futex interface the library uses: "futex2" (futex_wait/futex_wake
 * syscalls, Linux 6.7+, when a probe call succeeds) or "futex" (the
 * multiplexed futex syscall).  It can change from "futex2" to "futex" once,
 * when the kernel starts refusing futex2 (a seccomp filter). */
const char *hl_futex_interface(void);

/* The kernel's futex hash for this process (PR_FUTEX_HASH, Linux 6.16+).
 * Every futex word a thread waits on is looked up in a hash table; by
 * default a process gets its own ("private") table of 16 slots when it
 * creates its first thread, larger with more CPUs, and before that, or
 * after a switch, uses the kernel's global one.  hotlock parks every
 * waiter on a word of its own, so a program with many parked threads
 * puts as many words in the table: docs/futex-hash.md measures what the
 * size costs and which policy HOTLOCK_FUTEX_HASH=auto applies.
 *
 * hl_futex_hash_get: *slots = the private table's slots, or 0 when the
 * process uses the global table (as a single-threaded process does until
 * its first thread, unless it set a size).
 * hl_futex_hash_set: slots a power of two >= 2 makes (or resizes) the
 * private table; 0 switches to the global table for good: the kernel then
 * refuses every later set with EBUSY (one-way).
 * Errors: EINVAL, slots neither 0 nor a power of two >= 2 (checked before
 * the kernel is asked); ENOSYS, the kernel has no private futex hash
 * (before 6.16, built without it, a seccomp filter that refuses the prctl,
 * or HOTLOCK_FUTEX=futex, which makes the library behave as on a kernel
 * before futex2); EBUSY, after a switch to the global table; ENOMEM, a
 * size the kernel cannot allocate.  Each call is one prctl, counted as an
 * "other" futex syscall. */
int hl_futex_hash_get(unsigned *slots);
int hl_futex_hash_set(unsigned slots);

#ifdef __cplusplus
}
#endif
#endif

/* SPDX-License-Identifier: MIT */
/* The futex layer: private wait/wake through the multiplexed futex(2)
 * syscall, the one glibc's own locks make, so that any sandbox that lets a
 * glibc program lock lets hotlock's locks wait (a seccomp allowlist in
 * OpenSSH's style lists futex and kills anything else); futex2's
 * futex_wait and futex_wake (Linux 6.7+) when HOTLOCK_FUTEX=futex2 asks for
 * them.  Every syscall is counted in the calling thread's record.
 *
 * Whatever is probed is probed at load (a constructor), never in a lock
 * call: with HOTLOCK_FUTEX=futex2, a futex_wake of nobody (nr_wake = 0)
 * says whether the kernel has futex2 (any error: no, and futex(2) is used);
 * and, unless HOTLOCK_FUTEX=futex, a futex_waitv of no futexes says whether
 * the two-word wait of hl__futex_wait_either can use it (EINVAL: the call
 * exists).  The probes are no lock's calls and are not counted.  A call
 * made before the constructor (another library's constructor, under
 * LD_PRELOAD) uses futex(2) and the two-word wait's fallback, probing
 * nothing.
 *
 * A filter may also be installed after the probes: a futex2 call that
 * fails with ENOSYS or EPERM switches the process to futex(2) for good and
 * is retried with it at once (both calls counted; a wake too, since a lost
 * wake would leave a waiter asleep).  Any other failure of a wait is
 * returned as the kernel's errno; the waiting core then backs off with
 * sleeps instead of parking (wait.c), so that a futex the kernel refuses
 * costs a CPU nothing.
 *
 *   iface          meaning
 *   -------------  ----------------------------------------------
 *   IFACE_FUTEX    futex(2): the default, forced, or switched to
 *   IFACE_FUTEX2   futex_wait/futex_wake (HOTLOCK_FUTEX=futex2)
 *   IFACE_SCHED    the controlled-schedule build (never stored)
 */
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <hotlock/futex.h>

#include "futex.h"
#include "thread.h"

/* Newer than the 6.1 headers this may be built with: guarded. */
#ifndef __NR_futex_wake
#define __NR_futex_wake 454
#endif
#ifndef __NR_futex_wait
#define __NR_futex_wait 455
#endif
#ifndef FUTEX2_SIZE_U32
#define FUTEX2_SIZE_U32 0x02
#endif
#ifndef FUTEX2_PRIVATE
#define FUTEX2_PRIVATE FUTEX_PRIVATE_FLAG
#endif
#ifndef FUTEX_BITSET_MATCH_ANY
#define FUTEX_BITSET_MATCH_ANY 0xffffffff
#endif

/* IFACE_SCHED: the controlled-schedule build (src/controlled.h), whose scheduler
 * puts threads to sleep and wakes them itself, in virtual time. */
enum { IFACE_FUTEX, IFACE_FUTEX2, IFACE_SCHED };
/* Relaxed: no data is published with it.  FUTEX -> FUTEX2 once, by the
 * constructor's probe; FUTEX2 -> FUTEX once futex2 is refused; never back. */
static _Atomic int iface = IFACE_FUTEX;

static void count(int kind, uint64_t woken)
{
	struct hl__thread *t = hl__self();
	if (!t)
		return;
	hl__counter_add(&t->fx[kind], 1);
	if (kind == HL_FX_WAKE)
		hl__counter_add(&t->fx[HL_FX_WOKEN], woken);
}

static int interface(void)
{
#ifdef HOTLOCK_SCHED
	return IFACE_SCHED;
#endif
	/* Relaxed: see iface. */
	return hl__load(&iface, HL_RELAXED);
}

/* A futex2 call failed with err: true if that means futex2 is refused (no
 * such syscall, or a seccomp filter installed after the probe), in which
 * case the process uses futex(2) from now on and the caller retries. */
static bool futex2_refused(int err)
{
	if (err != ENOSYS && err != EPERM)
		return false;
	/* Relaxed: see iface. */
	hl__store(&iface, IFACE_FUTEX, HL_RELAXED);
	return true;
}

const char *hl_futex_interface(void)
{
	int i = interface();
	return i == IFACE_FUTEX2 ? "futex2" : i == IFACE_SCHED ? "sched" : "futex";
}

int hl_futex_wait(uint32_t *addr, uint32_t val, clockid_t clock,
		  const struct timespec *abstime)
{
	if (clock != CLOCK_MONOTONIC && clock != CLOCK_REALTIME)
		return EINVAL;
	if (abstime && (abstime->tv_nsec < 0 || abstime->tv_nsec >= (long)HL_NSEC_PER_SEC))
		return EINVAL;
	if (abstime && abstime->tv_sec < 0)
		return ETIMEDOUT;       /* the kernel rejects negative times */
	int saved = errno, err;
	int i = interface();
#ifdef HOTLOCK_SCHED
	/* Counted after: the thread's last step before the wait stays the
	 * lock's, in a printed schedule. */
	int sched_err = hl__sched_futex_wait(addr, val, clock, abstime);
	count(HL_FX_WAIT, 0);
	return sched_err;
#endif
	if (i == IFACE_FUTEX2) {
		err = syscall(__NR_futex_wait, addr, (unsigned long)val,
			      (unsigned long)FUTEX_BITSET_MATCH_ANY,
			      FUTEX2_SIZE_U32 | FUTEX2_PRIVATE, abstime, clock) < 0 ? errno : 0;
		count(HL_FX_WAIT, 0);
		if (!err || !futex2_refused(err))
			goto out;
	}
	int op = FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG;
	if (clock == CLOCK_REALTIME)
		op |= FUTEX_CLOCK_REALTIME;
	err = syscall(SYS_futex, addr, op, val, abstime, NULL, FUTEX_BITSET_MATCH_ANY) < 0 ? errno : 0;
	count(HL_FX_WAIT, 0);
out:
	errno = saved;
	return err;
}

int hl_futex_wake(uint32_t *addr, int n)
{
	long r;
	int saved = errno;
	int i = interface();
#ifdef HOTLOCK_SCHED
	r = hl__sched_futex_wake(addr, n);
	count(HL_FX_WAKE, (uint64_t)r);
	return (int)r;
#endif
	if (i == IFACE_FUTEX2) {
		r = syscall(__NR_futex_wake, addr, (unsigned long)FUTEX_BITSET_MATCH_ANY,
			    n, FUTEX2_SIZE_U32 | FUTEX2_PRIVATE);
		if (r >= 0 || !futex2_refused(errno))
			goto out;
		count(HL_FX_WAKE, 0);   /* the refused call; the retry is counted below */
	}
	r = syscall(SYS_futex, addr, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, n, NULL, NULL, 0);
out:
	errno = saved;
	if (r < 0)
		r = 0;
	count(HL_FX_WAKE, (uint64_t)r);
	return (int)r;
}

/* futex_waitv (Linux 5.16), newer than the 6.1 headers may say. */
#ifndef __NR_futex_waitv
#define __NR_futex_waitv 449
#endif
struct waitv_entry {            /* struct futex_waitv */
	uint64_t val;
	uint64_t uaddr;
	uint32_t flags;
	uint32_t reserved;
};
#ifndef HOTLOCK_SCHED
/* Whether futex_waitv may be used: set by the constructor's probe, cleared
 * when the kernel refuses it later.  Relaxed: nothing is published with
 * it. */
static _Atomic bool waitv_ok;

/* The probes, at load (see the top). */
__attribute__((constructor)) static void futex_probe(void)
{
	int saved = errno;
	const char *force = getenv("HOTLOCK_FUTEX");
	bool legacy = force && strcmp(force, "futex") == 0;
	if (force && *force && !legacy && strcmp(force, "futex2") != 0)
		fprintf(stderr, "hotlock: ignoring HOTLOCK_FUTEX=%s (expected futex or futex2)\n",
			force);
	if (force && strcmp(force, "futex2") == 0) {
		uint32_t dummy = 0;
		long r = syscall(__NR_futex_wake, &dummy, (unsigned long)FUTEX_BITSET_MATCH_ANY,
				 0, FUTEX2_SIZE_U32 | FUTEX2_PRIVATE);
		if (r >= 0)
			hl__store(&iface, IFACE_FUTEX2, HL_RELAXED);
	}
	if (!legacy) {
		long r = syscall(__NR_futex_waitv, NULL, 0u, 0u, NULL, CLOCK_MONOTONIC);
		hl__store(&waitv_ok, r < 0 && errno == EINVAL, HL_RELAXED);
	}
	errno = saved;
}
#endif
/* How long the fallback of hl__futex_wait_either sleeps before it looks at
 * b again. */
#define EITHER_POLL_NS 10000000ull

int hl__futex_wait_either(uint32_t *a, uint32_t va, const uint32_t *b, uint32_t vb,
			  clockid_t clock, const struct timespec *abstime)
{
	if (clock != CLOCK_MONOTONIC && clock != CLOCK_REALTIME)
		return EINVAL;
	if (abstime && (abstime->tv_nsec < 0 || abstime->tv_nsec >= (long)HL_NSEC_PER_SEC))
		return EINVAL;
	if (abstime && abstime->tv_sec < 0)
		return ETIMEDOUT;
#ifndef HOTLOCK_SCHED
	/* futex_waitv, where the probe found it and nothing refused it
	 * since. */
	if (hl__load(&waitv_ok, HL_RELAXED)) {
		struct waitv_entry w[2] = {
			{ va, (uintptr_t)a, FUTEX2_SIZE_U32 | FUTEX2_PRIVATE, 0 },
			{ vb, (uintptr_t)b, FUTEX2_SIZE_U32 | FUTEX2_PRIVATE, 0 },
		};
		int saved = errno;
		long r = syscall(__NR_futex_waitv, w, 2u, 0u, abstime, clock);
		int err = r < 0 ? errno : 0;
		errno = saved;
		count(HL_FX_WAIT, 0);
		if (err != ENOSYS && err != EPERM)
			return err;     /* r >= 0: the index of the word woken */
		hl__store(&waitv_ok, false, HL_RELAXED);
	}
#endif
	/* No futex_waitv: wait on a alone, in slices, and look at b between
	 * them.  A slice that ends before the caller's time is a spurious
	 * wake-up, not a timeout. */
	/* Relaxed: the interrupt publishes nothing but itself. */
	if (hl__load((const _Atomic uint32_t *)b, HL_RELAXED) != vb)
		return EAGAIN;
	struct timespec now, slice;
	hl__clock_gettime(clock, &now);
	uint64_t until = hl__add_sat(hl__ts_to_ns(&now), EITHER_POLL_NS);
	bool caller_time = false;
	if (abstime && hl__ts_to_ns_sat(abstime) <= until) {
		slice = *abstime;
		caller_time = true;
	} else {
		slice.tv_sec = (time_t)(until / HL_NSEC_PER_SEC);
		slice.tv_nsec = (long)(until % HL_NSEC_PER_SEC);
	}
	int err = hl_futex_wait(a, va, clock, &slice);
	return err == ETIMEDOUT && !caller_time ? 0 : err;
}

static void to_stats(const uint64_t c[HL_COUNTERS], hl_futex_stats_t *out)
{
	memset(out, 0, sizeof(*out));
	out->wait = c[HL_FX_WAIT];
	out->wake = c[HL_FX_WAKE];
	out->woken = c[HL_FX_WOKEN];
	out->other = c[HL_FX_OTHER];
}

void hl_futex_stats_thread(hl_futex_stats_t *out)
{
	uint64_t c[HL_COUNTERS];
	hl__thread_stats(c);
	to_stats(c, out);
}

uint64_t hl_futex_calls_thread(void)
{
	struct hl__thread *t = hl__self_ptr;
	if (!t)
		return 0;
	/* Relaxed: statistics (the thread's own counters). */
	uint64_t n = 0;
	static const int calls[] = { HL_FX_WAIT, HL_FX_WAKE, HL_FX_OTHER };
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		n += hl__load(&t->fx[calls[i]], HL_RELAXED) - t->fx_base[calls[i]];
	return n;
}

void hl_futex_stats_total(hl_futex_stats_t *out)
{
	uint64_t c[HL_COUNTERS];
	hl__process_stats(c);
	to_stats(c, out);
}

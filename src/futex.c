/* The futex layer: private wait/wake through futex2 (futex_wait and
 * futex_wake, Linux 6.7+) when the running kernel has them, the multiplexed
 * futex syscall otherwise; every syscall counted in the calling thread's
 * record.
 *
 * The interface is chosen once, on first use, by a futex_wake of nobody
 * (nr_wake = 0): ENOSYS means no futex2.  The probe itself is counted as
 * "other".  HOTLOCK_FUTEX=futex skips the probe and uses the old call.
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
enum { IFACE_UNKNOWN, IFACE_FUTEX, IFACE_FUTEX2, IFACE_SCHED };
/* Relaxed: a racing first use probes twice and stores the same answer. */
static _Atomic int iface;

static void count(int kind, uint64_t woken)
{
	struct hl_thread *t = hl_self();
	if (!t)
		return;
	hl_counter_add(&t->fx[kind], 1);
	if (kind == HL_FX_WAKE)
		hl_counter_add(&t->fx[HL_FX_WOKEN], woken);
}

static int interface(void)
{
#ifdef HOTLOCK_SCHED
	return IFACE_SCHED;
#endif
	int i = hl_load(&iface, HL_RELAXED);
	if (hl_likely(i != IFACE_UNKNOWN))
		return i;
	/* HOTLOCK_FUTEX=futex forces the multiplexed syscall: a way around a
	 * misbehaving futex2, and how the tests cover the fallback. */
	const char *force = getenv("HOTLOCK_FUTEX");
	if (force && strcmp(force, "futex") == 0) {
		i = IFACE_FUTEX;
	} else {
		if (force && *force && strcmp(force, "futex2") != 0)
			fprintf(stderr, "hotlock: ignoring HOTLOCK_FUTEX=%s (expected futex or futex2)\n",
				force);
		uint32_t dummy = 0;
		int saved = errno;
		long r = syscall(__NR_futex_wake, &dummy, (unsigned long)FUTEX_BITSET_MATCH_ANY,
				 0, FUTEX2_SIZE_U32 | FUTEX2_PRIVATE);
		count(HL_FX_OTHER, 0);
		i = (r < 0 && errno == ENOSYS) ? IFACE_FUTEX : IFACE_FUTEX2;
		errno = saved;
	}
	hl_store(&iface, i, HL_RELAXED);
	return i;
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
	long r;
	int saved = errno;
	int i = interface();
#ifdef HOTLOCK_SCHED
	/* Counted after: the thread's last step before the wait stays the
	 * lock's, in a printed schedule. */
	int sched_err = hl__sched_futex_wait(addr, val, clock, abstime);
	count(HL_FX_WAIT, 0);
	return sched_err;
#endif
	if (i == IFACE_FUTEX2) {
		r = syscall(__NR_futex_wait, addr, (unsigned long)val,
			    (unsigned long)FUTEX_BITSET_MATCH_ANY,
			    FUTEX2_SIZE_U32 | FUTEX2_PRIVATE, abstime, clock);
	} else {
		int op = FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG;
		if (clock == CLOCK_REALTIME)
			op |= FUTEX_CLOCK_REALTIME;
		r = syscall(SYS_futex, addr, op, val, abstime, NULL, FUTEX_BITSET_MATCH_ANY);
	}
	count(HL_FX_WAIT, 0);
	int err = r < 0 ? errno : 0;
	errno = saved;
	switch (err) {
	case 0: case EAGAIN: case ETIMEDOUT: case EINTR:
		return err;
	default:
		return EINVAL;
	}
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
	if (i == IFACE_FUTEX2)
		r = syscall(__NR_futex_wake, addr, (unsigned long)FUTEX_BITSET_MATCH_ANY,
			    n, FUTEX2_SIZE_U32 | FUTEX2_PRIVATE);
	else
		r = syscall(SYS_futex, addr, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, n, NULL, NULL, 0);
	errno = saved;
	if (r < 0)
		r = 0;
	count(HL_FX_WAKE, (uint64_t)r);
	return (int)r;
}

static void to_stats(const uint64_t c[HL_FX_KINDS], hl_futex_stats_t *out)
{
	memset(out, 0, sizeof(*out));
	out->wait = c[HL_FX_WAIT];
	out->wake = c[HL_FX_WAKE];
	out->woken = c[HL_FX_WOKEN];
	out->other = c[HL_FX_OTHER];
}

void hl_futex_stats_thread(hl_futex_stats_t *out)
{
	uint64_t c[HL_FX_KINDS];
	hl_thread_stats(c);
	to_stats(c, out);
}

void hl_futex_stats_total(hl_futex_stats_t *out)
{
	uint64_t c[HL_FX_KINDS];
	hl_process_stats(c);
	to_stats(c, out);
}

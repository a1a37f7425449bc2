/* SPDX-License-Identifier: MIT */
/* The futex layer's internal calls (futex.c), beside the public ones of
 * <hotlock/futex.h>.  Not to be confused with that header: this one is
 * "futex.h" from src/ (and src/preload/, whose include path has src/ and
 * include/, where the public one is hotlock/futex.h). */
#ifndef HOTLOCK_FUTEX_INTERNAL_H
#define HOTLOCK_FUTEX_INTERNAL_H

#include <stdint.h>
#include <time.h>

#include "internal.h"

/* Waits while *a == va and *b == vb (futex_waitv on both: woken by a wake
 * of either), until the absolute time abstime on clock (NULL: no time).
 * Returns as hl_futex_wait does.  Where the kernel refuses futex_waitv
 * (before Linux 5.16, or a seccomp filter) or the library uses futex(2)
 * only (futex.c: no futex2), it waits on a alone and looks at b every
 * 10 ms.  The waiting core's interruptible waits use it (wait.c), and so
 * does the pthread shim's condvar wait with a mutex glibc keeps
 * (src/preload/shim_cond.c, wait_sequence). */
HL_HIDDEN int hl__futex_wait_either(uint32_t *a, uint32_t va, const uint32_t *b, uint32_t vb,
				    clockid_t clock, const struct timespec *abstime);

#endif

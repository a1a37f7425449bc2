/* SPDX-License-Identifier: MIT */
/* hotlock-bench adapters: the futex words of the hand-written futex locks
 * (futex3, futex-cv, ww-rw), atomics to C and plain 32-bit words to the
 * kernel. */
#ifndef HOTLOCK_BENCH_FUTEX_WORD_H
#define HOTLOCK_BENCH_FUTEX_WORD_H

#include <stdatomic.h>
#include <stdint.h>

_Static_assert(sizeof(_Atomic uint32_t) == sizeof(uint32_t),
	       "a futex word is handed to the kernel as a plain uint32_t");

/* The word w as hl_futex_wait and hl_futex_wake take it: the kernel reads
 * it, and _Atomic uint32_t has uint32_t's layout. */
static inline uint32_t *futex_word(_Atomic uint32_t *w)
{
	return (uint32_t *)w;
}

#endif

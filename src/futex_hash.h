/* The futex hash inside the library (futex_hash.c has the policy). */
#ifndef HOTLOCK_FUTEX_HASH_INTERNAL_H
#define HOTLOCK_FUTEX_HASH_INTERNAL_H

#include <stdint.h>

#include "internal.h"

/* thread.c, after registering a record never used before: `threads` is
 * the number of records ever in use at once (a high-water mark).  With
 * HOTLOCK_FUTEX_HASH=auto, may resize the process's futex hash (one
 * prctl, at most once per doubling). */
HL_HIDDEN void hl__futex_hash_threads(uint32_t threads);

#endif

/* SPDX-License-Identifier: MIT */
/* The futex hash inside the library (futex_hash.c has the policy). */
#ifndef HOTLOCK_FUTEX_HASH_INTERNAL_H
#define HOTLOCK_FUTEX_HASH_INTERNAL_H

#include <stdint.h>

#include "internal.h"

/* Run by thread.c (a registration hook, layers.c) after registering record
 * `record` (its index; a fresh one or one reused from a thread that
 * exited), possibly on a lock path, after its hl__fork_check (a fork
 * child's generation is then current).  With HOTLOCK_FUTEX_HASH=auto,
 * counts the thread, in memory only (futex_hash.c, step 1). */
HL_HIDDEN void hl__futex_hash_threads(uint32_t record);
/* Run by thread.c where a thread starts (hl_thread_init), outside lock
 * calls: once per doubling of the counted threads, may resize the
 * process's futex hash: a GET and a SET prctl, and the SET waits in the
 * kernel for the old table to drain (steps 2-7).  Never sleeps otherwise. */
HL_HIDDEN void hl__futex_hash_look(unsigned how);

#endif

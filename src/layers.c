/* SPDX-License-Identifier: MIT */
/* The wiring of the bottom layers: atomics -> thread records (thread.c) ->
 * futex layer (futex.c, futex_hash.c) -> waiting core (wait.c).  A lower
 * layer calls none above it by name; it runs the hooks of this table
 * (thread.h, struct hl__thread_hooks), which is constant, so that they are
 * in place before any constructor runs. */
#include "futex_hash.h"
#include "thread.h"
#include "wait.h"

const struct hl__thread_hooks hl__thread_hooks[] = {
	/* The waiting core: a starting thread's affinity, for the spinner
	 * slots; a fork child gets its slots back (wait.c). */
	{ .started = hl__spin_thread_started, .fork_child = hl__spin_atfork_child },
	/* The futex layer: counts the thread; where a thread starts, may
	 * resize the process's futex hash (futex_hash.c). */
	{ .registered = hl__futex_hash_threads, .started = hl__futex_hash_look },
};
const unsigned hl__thread_hooks_count = sizeof(hl__thread_hooks) / sizeof(hl__thread_hooks[0]);

/* SPDX-License-Identifier: MIT */
/* hotlock-bench: the adapter interface for condition variables, and the
 * registry of those the cond scenario can compare (--locks).
 *
 * An adapter is a condition variable and the mutex it waits with.  The
 * mutex is one of the mutual-exclusion adapters of locks.h (its lock and
 * unlock, its size, init and destroy), so that a condvar's mutex is the
 * very lock the mutex scenario measures and no mutex is written twice; the
 * condvar half is the adapter's own.  As for the locks: every call goes
 * through a function pointer, so every condvar pays the same indirect call;
 * the scenario allocates `size` bytes for each condvar (and the mutex's size
 * for the mutex), aligned to a cache line and zeroed, and calls init before
 * a run and destroy after it; every function returns 0 or an errno value.
 *
 * Adding one: its adapter file in locks/ (in bench/CMakeLists.txt), defining
 * `const struct bench_cond bench_cond_NAME`; its extern line below; its line
 * in bench_conds[] in conds.c. */
#ifndef HOTLOCK_BENCH_CONDS_H
#define HOTLOCK_BENCH_CONDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "locks.h"

struct bench_cond {
	const char *name;       /* what --locks takes */
	const char *summary;    /* one line for --list and --help */
	const struct bench_lock *mutex; /* the mutex wait releases and retakes */
	size_t size;            /* bytes of the condvar object */
	int (*init)(void *c);
	int (*destroy)(void *c);
	/* m is a mutex of `mutex`, held by the caller; returns with it held.
	 * A spurious return is allowed: callers test their predicate in a
	 * loop. */
	int (*wait)(void *c, void *m);
	int (*signal)(void *c);
	int (*broadcast)(void *c);
	/* True when hl_futex_stats sees every futex syscall of the condvar
	 * and of its mutex; false for glibc: the tables print "-" and the
	 * JSON null. */
	bool futex_counted;
	/* The condvar programs use instead of hotlock's (--locks peers). */
	bool peer;
};

extern const struct bench_cond bench_cond_glibc;
extern const struct bench_cond bench_cond_hotlock;
extern const struct bench_cond bench_cond_futex_cv;

/* The condvars the cond scenario compares by default; the first, glibc, is
 * the baseline of its ratios. */
#define BENCH_COND_DEFAULTS "glibc,hotlock,futex-cv"

/* Every registered condvar, in the order --list shows them; --locks lists
 * parsed as bench_locks_parse does mutexes (errors exit 2). */
BENCH_REGISTRY_DECLARE(bench_cond, bench_conds, bench_nconds, bench_cond_registry,
		       bench_conds_parse, bench_conds_print);

#endif

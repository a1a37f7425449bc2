/* SPDX-License-Identifier: MIT */
/* hotlock-bench: the adapter interface for reader-writer locks, and the
 * registry of those the rwlock and rwsem scenarios can compare (--locks).
 *
 * As for the mutual-exclusion locks of locks.h: an adapter wraps one
 * implementation behind function pointers, so that every lock pays the same
 * indirect call per operation; the scenario allocates `size` bytes, aligned
 * to a cache line and zeroed, and calls init before a run and destroy after
 * it; every function returns 0 or an errno value.  The unlock is split by
 * side, so that a lock whose unlock must be told which side it releases can
 * be wrapped; one that finds out itself (pthread, hl_rwlock) gives the same
 * function for both.
 *
 * Adding a lock (hotlock-rw, say): its adapter in a file of locks/ (listed
 * in bench/CMakeLists.txt), defining `const struct bench_rwlock
 * bench_rwlock_hotlock`; its extern line below; its line in bench_rwlocks[]
 * in rwlocks.c; and, if it is one of the locks programs use instead of
 * hotlock's, .peer = true (it then runs by default, in the group "peers"). */
#ifndef HOTLOCK_BENCH_RWLOCKS_H
#define HOTLOCK_BENCH_RWLOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "locks.h"

struct bench_rwlock {
	const char *name;       /* what --locks takes */
	const char *summary;    /* one line for --list and --help */
	size_t size;            /* bytes of the lock object */
	int (*init)(void *l);
	int (*destroy)(void *l);
	int (*rdlock)(void *l);
	int (*wrlock)(void *l);
	int (*rdunlock)(void *l);  /* releases a read hold */
	int (*wrunlock)(void *l);  /* releases the write hold */
	/* Optional: one line describing the lock's state, for the watchdog's
	 * report when a run does not stop.  NULL when the lock has none. */
	int (*describe)(const void *l, char *buf, size_t len);
	/* True when hl_futex_stats sees every futex syscall the lock makes
	 * (the scenarios then count them by operation); false for glibc, whose
	 * futex calls are its own: the tables print "-" and the JSON null. */
	bool futex_counted;
	/* One of the locks a program would use instead of hotlock's (--locks
	 * peers): parking_lot, Rust std, abseil, glibc's default rwlock. */
	bool peer;
};

extern const struct bench_rwlock bench_rwlock_hotlock;
extern const struct bench_rwlock bench_rwlock_hotlock_reader;
extern const struct bench_rwlock bench_rwlock_hotlock_yields;
extern const struct bench_rwlock bench_rwlock_hotlock_fair;
extern const struct bench_rwlock bench_rwlock_glibc;
extern const struct bench_rwlock bench_rwlock_glibc_writer;
extern const struct bench_rwlock bench_rwlock_ww;
extern const struct bench_rwlock bench_rwlock_ww_writer;
extern const struct bench_rwlock bench_rwlock_parking_lot;
extern const struct bench_rwlock bench_rwlock_rust_std;
extern const struct bench_rwlock bench_rwlock_absl;

/* The locks the rwlock and rwsem scenarios compare by default: hotlock-rw,
 * the baseline of their ratios, against its peers. */
#define BENCH_RWLOCK_DEFAULTS "hotlock-rw,peers"

/* Every registered reader-writer lock, in the order --list shows them;
 * --locks lists parsed as bench_locks_parse does mutexes (errors exit 2). */
BENCH_REGISTRY_DECLARE(bench_rwlock, bench_rwlocks, bench_nrwlocks, bench_rwlock_registry,
		       bench_rwlocks_parse, bench_rwlocks_print);

#endif

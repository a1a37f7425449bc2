/* hotlock-bench: the adapter interface for mutual-exclusion locks, and the
 * registry of the locks a scenario can compare (--locks).
 *
 * An adapter wraps one lock implementation behind function pointers, so the
 * scenarios treat hotlock's own mutex and its peers alike: every lock pays the
 * same indirect call per operation.  The harness allocates `size` bytes,
 * aligned to a cache line and zeroed, and calls init before a run and destroy
 * after it.  Every function returns 0 or an errno value.
 *
 * Adapters for other kinds of lock (reader-writer locks, semaphores) get
 * their own struct and registry in the same manner, next to this one. */
#ifndef HOTLOCK_BENCH_LOCKS_H
#define HOTLOCK_BENCH_LOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct bench_lock {
	const char *name;       /* what --locks takes */
	const char *summary;    /* one line for --list and --help */
	size_t size;            /* bytes of the lock object */
	int (*init)(void *l);
	int (*destroy)(void *l);
	int (*lock)(void *l);
	int (*unlock)(void *l);
	/* Optional: one line describing the lock's state, for the watchdog's
	 * report when a run does not stop.  NULL when the lock has none. */
	int (*describe)(const void *l, char *buf, size_t len);
	/* True when hl_futex_stats sees every futex syscall the lock makes
	 * (hotlock, futex3; mcs makes none, so its counters read 0 truthfully).
	 * False for glibc: its futex calls are its own and not counted; the
	 * tables print "-" and the JSON null. */
	bool futex_counted;
};

extern const struct bench_lock bench_lock_hotlock;
extern const struct bench_lock bench_lock_hotlock_fifo;
extern const struct bench_lock bench_lock_hotlock_cna;
extern const struct bench_lock bench_lock_glibc;
extern const struct bench_lock bench_lock_glibc_adaptive;
extern const struct bench_lock bench_lock_futex3;
extern const struct bench_lock bench_lock_mcs;

/* Every registered lock, in the order --list shows them. */
extern const struct bench_lock *const bench_locks[];
extern const size_t bench_nlocks;

/* The lock registered under name, or NULL. */
const struct bench_lock *bench_lock_find(const char *name);
/* Parses a comma-separated list of lock names into out[] (at most max, no
 * duplicates); on bad input prints an error naming the valid locks and
 * exits 2 (see bench_usage_error).  Returns how many it stored. */
size_t bench_locks_parse(const char *scenario, const char *list,
			 const struct bench_lock **out, size_t max);
/* Writes "name  summary" lines, one per registered lock. */
void bench_locks_print(FILE *f, const char *indent);

#endif

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

/* ---- registries ------------------------------------------------------ */

/* The adapters of one kind that a --locks list may name, seen through the
 * name and summary of entry i: the functions below parse and list every
 * kind of adapter (these mutexes, the reader-writer locks of rwlocks.h)
 * alike. */
struct bench_registry {
	size_t n;
	const char *(*name)(size_t i);
	const char *(*summary)(size_t i);
};

/* The index of the entry registered under name, or r->n. */
size_t bench_registry_find(const struct bench_registry *r, const char *name);
/* Parses a comma-separated list of names into the indices out[] (at most
 * max, no duplicates); on bad input prints an error naming the valid
 * entries and exits 2 (see bench_usage_error).  Returns how many it
 * stored. */
size_t bench_registry_parse(const char *scenario, const struct bench_registry *r,
			    const char *list, size_t *out, size_t max);
/* Writes "name  summary" lines, one per entry. */
void bench_registry_print(const struct bench_registry *r, FILE *f, const char *indent);

/* Defines, over `arr`, an array of pointers to adapters of struct `type`
 * (which has name and summary members), its length `count`, the registry
 * `reg` and the functions
 *   size_t parse(const char *scenario, const char *list,
 *                const struct type **out, size_t max);
 *   void print(FILE *f, const char *indent);
 * which parse a --locks list into adapters (as bench_registry_parse) and
 * list them.  Used where arr is defined; needs harness.h. */
#define BENCH_REGISTRY_DEFINE(type, arr, count, reg, parse, print)		\
	const size_t count = sizeof arr / sizeof arr[0];			\
	static const char *reg##_name(size_t i) { return arr[i]->name; }	\
	static const char *reg##_summary(size_t i) { return arr[i]->summary; } \
	static const struct bench_registry reg = {				\
		.n = sizeof arr / sizeof arr[0],				\
		.name = reg##_name,						\
		.summary = reg##_summary,					\
	};									\
	size_t parse(const char *scenario, const char *list,			\
		     const struct type **out, size_t max)			\
	{									\
		size_t idx_[BENCH_MAX_LOCKS];					\
		size_t n_ = bench_registry_parse(scenario, &reg, list, idx_,	\
						 max < BENCH_MAX_LOCKS ? max :	\
						 BENCH_MAX_LOCKS);		\
										\
		for (size_t i_ = 0; i_ < n_; i_++)				\
			out[i_] = arr[idx_[i_]];				\
		return n_;							\
	}									\
	void print(FILE *f, const char *indent)					\
	{									\
		bench_registry_print(&reg, f, indent);				\
	}

/* ---- the mutual-exclusion locks --------------------------------------- */

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

/* SPDX-License-Identifier: MIT */
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
	/* One of the locks a program would use instead of hotlock's, the ones
	 * hotlock is judged against (--locks peers; "peer" in the JSON's
	 * lock_roles): parking_lot, Rust std, abseil, glibc-adaptive. */
	bool peer;
};

extern const struct bench_lock bench_lock_hotlock;
extern const struct bench_lock bench_lock_hotlock_fifo;
extern const struct bench_lock bench_lock_hotlock_cna;
extern const struct bench_lock bench_lock_glibc;
extern const struct bench_lock bench_lock_glibc_adaptive;
extern const struct bench_lock bench_lock_futex3;
extern const struct bench_lock bench_lock_mcs;
extern const struct bench_lock bench_lock_parking_lot;
extern const struct bench_lock bench_lock_rust_std;
extern const struct bench_lock bench_lock_absl;

/* static int name(void *l): the adapter function that passes l on to fn, a
 * function of the lock's own library that takes a pointer to its lock type
 * and returns 0 or an errno value.  l converts to that pointer as any
 * argument does: fn is called as what it is, never through a pointer of
 * another type, and the compiler makes the call a jump, so the adapter
 * costs the one indirect call into it.  For every kind of adapter (the
 * reader-writer locks and condvars too); one line an operation. */
#define BENCH_FORWARD(name, fn)			\
	static int name(void *l)		\
	{					\
		return fn(l);			\
	}

/* ---- registries ------------------------------------------------------ */

/* A peer this hotlock-bench was built without, and why: bench/CMakeLists.txt
 * leaves out the Rust peers without cargo (or their crates) and abseil's
 * without libabsl-dev. */
struct bench_missing {
	const char *name;
	const char *why;
};

/* Defined by bench/CMakeLists.txt: HOTLOCK_BENCH_RUST_PEERS and
 * HOTLOCK_BENCH_ABSL where those peers are built, else the reason they are
 * not (the defaults are for a build that says nothing). */
#ifndef HOTLOCK_BENCH_RUST_MISSING
#define HOTLOCK_BENCH_RUST_MISSING "not configured"
#endif
#ifndef HOTLOCK_BENCH_ABSL_MISSING
#define HOTLOCK_BENCH_ABSL_MISSING "not configured"
#endif

/* The adapters of one kind that a --locks list may name, seen through the
 * name, summary and peer flag of entry i: the functions below parse and list
 * every kind of adapter (these mutexes, the reader-writer locks of
 * rwlocks.h) alike.  Besides the names, a list may give two groups: "all"
 * (every registered lock) and "peers" (those with the peer flag); a lock
 * already in the list is not added twice by a group. */
struct bench_registry {
	size_t n;
	const char *(*name)(size_t i);
	const char *(*summary)(size_t i);
	bool (*peer)(size_t i);
	const struct bench_missing *missing;    /* not built: named in errors */
	size_t nmissing;
};

/* The role of entry i in the JSON's lock_roles: "hotlock" (the name starts
 * with "hotlock"), "peer" or "reference" (textbook locks and glibc's other
 * kinds, for the seeds' tables). */
const char *bench_registry_role(const struct bench_registry *r, size_t i);
/* The role of the lock named name, of either kind ("hotlock-rw/wlock": the
 * part before '/'); "reference" for a name no registry has. */
const char *bench_lock_role(const char *name);

/* The index of the entry registered under name, or r->n. */
size_t bench_registry_find(const struct bench_registry *r, const char *name);
/* Parses a comma-separated list of names into the indices out[] (at most
 * max, no duplicates); on bad input prints an error naming the valid
 * entries and exits 2 (see bench_usage_error).  Returns how many it
 * stored. */
size_t bench_registry_parse(const char *scenario, const struct bench_registry *r,
			    const char *list, size_t *out, size_t max);
/* Writes "name  summary" lines, one per entry, and a line naming the peers
 * not built and why. */
void bench_registry_print(const struct bench_registry *r, FILE *f, const char *indent);

/* Declares what BENCH_REGISTRY_DEFINE defines (its arguments but the
 * missing peers): the array of adapters `arr`, in the order --list shows
 * them, its length `count`, the registry `reg` and the functions
 *   size_t parse(const char *scenario, const char *list,
 *                const struct type **out, size_t max);
 *   void print(FILE *f, const char *indent);
 * parse stores in out[] the adapters a --locks list names (at most max, no
 * duplicates) and returns how many; on bad input it prints an error naming
 * the valid ones and exits 2 (see bench_usage_error).  print writes "name
 * summary" lines, one per registered adapter, and the peers not built. */
#define BENCH_REGISTRY_DECLARE(type, arr, count, reg, parse, print)		\
	extern const struct type *const arr[];					\
	extern const size_t count;						\
	extern const struct bench_registry reg;					\
	size_t parse(const char *scenario, const char *list,			\
		     const struct type **out, size_t max);			\
	void print(FILE *f, const char *indent)

/* Defines what BENCH_REGISTRY_DECLARE declares, where `arr` is defined (an
 * array of pointers to adapters of struct `type`, which has name, summary
 * and peer members), given `missing_arr`, an array of struct bench_missing
 * (at least one entry; a NULL name ends it): the peers not built.  Needs
 * harness.h. */
#define BENCH_REGISTRY_DEFINE(type, arr, missing_arr, count, reg, parse, print) \
	const size_t count = sizeof arr / sizeof arr[0];			\
	static const char *reg##_name(size_t i) { return arr[i]->name; }	\
	static const char *reg##_summary(size_t i) { return arr[i]->summary; } \
	static bool reg##_peer(size_t i) { return arr[i]->peer; }		\
	const struct bench_registry reg = {					\
		.n = sizeof arr / sizeof arr[0],				\
		.name = reg##_name,						\
		.summary = reg##_summary,					\
		.peer = reg##_peer,						\
		.missing = missing_arr,						\
		.nmissing = sizeof missing_arr / sizeof missing_arr[0] - 1,	\
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

BENCH_REGISTRY_DECLARE(bench_lock, bench_locks, bench_nlocks, bench_lock_registry,
		       bench_locks_parse, bench_locks_print);

#endif

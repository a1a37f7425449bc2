/* SPDX-License-Identifier: MIT */
/* hotlock-bench: what the rwlock and rwsem scenarios share: the workload of
 * one measurement, its body, its checks, its figures (bench_sample.extra),
 * its table columns and its JSON (rwbench.c, rwbench_report.c).
 *
 * Each of T threads loops { lock for reading or writing; CS; unlock; NCS }:
 *   which side: mixed, each op a read with probability readers_pct %, drawn
 *     from a per-thread generator (thread i draws the same sequence under
 *     every lock); split, threads 0 .. readers-1 only read and the others
 *     only write.
 *   CS: `load` iterations of { pause; and on each of two shared cache lines
 *     (A, B), a reader reads a counter, a writer increments it }.
 *   NCS: `ncs` iterations of { pause; increment a thread-private counter }.
 * Exclusion is checked in every critical section: a writer makes a version
 * word on line A odd on entry and even again on exit, and checks that
 * nobody changed it meanwhile (another writer inside); a reader checks that
 * the version is even on entry and unchanged on exit, and that the two
 * counters are equal (a writer inside).  After the run both counters must
 * equal load x the write ops (a lost update: two writers inside).  Either
 * failure exits 1, naming the lock.
 *
 * Futex calls by operation: the calling thread's hotlock futex counters are
 * read after each lock and unlock call, and the calls each made are added to
 * its operation's count (write lock, write unlock, read lock, read unlock).
 * That costs two counter reads per op (about 15 ns on the README's VM, 10-15%
 * of an uncontended op there), so every lock pays it, also those whose futex
 * calls hotlock cannot see (glibc: their counts are reported unknown), and
 * the ratios between locks stay fair; --no-futex-by-op turns it off for
 * all. */
#ifndef HOTLOCK_BENCH_RWBENCH_H
#define HOTLOCK_BENCH_RWBENCH_H

#include <stdbool.h>
#include <stdint.h>

#include "harness.h"
#include "rwlocks.h"

/* The futex calls are counted by operation, in the seed's order. */
enum rw_op { RW_WRLOCK, RW_WRUNLOCK, RW_RDLOCK, RW_RDUNLOCK, RW_NOPS };

enum rw_side { RW_READ, RW_WRITE, RW_NSIDES };

struct rw_workload {
	const char *mode;       /* rwsem's "wlock" or "mixed"; NULL for rwlock */
	bool split;             /* readers and writers are separate threads */
	unsigned readers_pct;   /* mixed: chance of a read, % */
	unsigned readers, writers; /* split: how many of each (the run's T) */
	unsigned long load, ncs;
	bool load_given;        /* while parsing: --load or --cs seen */
	bool no_futex_by_op;    /* --no-futex-by-op */
	int fifo_priority;      /* > 0: the workers under SCHED_FIFO */
};

/* The figures of one run beyond the harness's: bench_sample.extra. */
struct rw_extra {
	const char *lock;       /* the lock's name */
	struct rw_workload w;
	uint64_t ops[RW_NSIDES];        /* read ops, write ops */
	/* The lock's futex calls are counted and were counted by operation
	 * (futex_counted and not --no-futex-by-op). */
	bool futex_counted;
	uint64_t futex[RW_NOPS];        /* futex calls by operation */
	/* Split runs: per-thread ops of each side's threads, min and max
	 * (0 for a side without threads). */
	uint64_t side_min[RW_NSIDES], side_max[RW_NSIDES];
	unsigned threads;
	uint64_t thread_ops[][RW_NSIDES]; /* [threads]: each thread's of each */
};

/* Runs lock lk for one measurement of workload w at `threads` threads
 * (w->readers + w->writers when split) and fills out, its extra an
 * rw_extra.  Exits 1 on broken exclusion or a lock error. */
void rw_measure(const struct bench_rwlock *lk, const struct rw_workload *w,
		unsigned threads, double duration_s, struct bench_sample *out);

/* Table columns, from a result's rw_extra. */
extern const struct bench_column rw_col_rd_mops, rw_col_wr_mops;
extern const struct bench_column rw_col_futex[RW_NOPS];
/* Split runs: per-thread kops/s of each side, and writer avg / reader avg. */
extern const struct bench_column rw_col_side[RW_NSIDES][3]; /* avg, min, max */
extern const struct bench_column rw_col_wr_rd;
/* Summaries: per-thread average and total rate in kops/s. */
extern const struct bench_column rw_col_thr_avg_k, rw_col_total_k;

/* --load L and --cs L (one option, two names): at is the workload. */
void rw_parse_load(void *at, const char *scenario, const char *v);

/* The workload options both scenarios take, for the table of a context of
 * struct type whose workload is member field. */
#define RW_WORKLOAD_OPTIONS(type, field)					\
	{ "--load", "L", BENCH_OPT_CALL, offsetof(type, field),			\
	  .parse = rw_parse_load, .default_text = "1", .help =			\
	  "the critical section: L iterations of { pause; read (reader) or "	\
	  "increment (writer) a counter on each of two shared cache lines }, "	\
	  "0 or more.  One unit costs a pause (a few to tens of ns, by CPU) "	\
	  "and two shared-line accesses" },					\
	{ "--cs", "L", BENCH_OPT_CALL, offsetof(type, field),			\
	  .parse = rw_parse_load, .help =					\
	  "the same as --load L (the mutex scenario's name)" },			\
	{ "--ncs", "N", BENCH_OPT_ULONG, offsetof(type, field.ncs), 0, 1e9,	\
	  .help = "pause iterations outside the lock" },			\
	{ "--no-futex-by-op", NULL, BENCH_OPT_FLAG,				\
	  offsetof(type, field.no_futex_by_op), .help =				\
	  "do not count futex calls by operation (fx-* columns '-'): saves "	\
	  "every lock's loop two calls per op that read hotlock's per-thread "	\
	  "counters" }

/* The rwlock and rwsem --help text on the checks, the futex columns and
 * the JSON members these scenarios add. */
void rw_help_common(FILE *f);
/* bench_suite.json_sample for these scenarios. */
void rw_json_sample(void *ctx, struct bench_json *j, const struct bench_sample *s);
/* The workload's members of the JSON "config" (load, ncs, and for rwlock
 * readers_pct or split). */
void rw_json_workload(struct bench_json *j, const struct rw_workload *w);

#endif

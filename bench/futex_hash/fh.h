/* SPDX-License-Identifier: MIT */
/* hotlock-bench-futex-hash: what its files share (see main.c for the design):
 * the command line as parsed, a run's own figures, the child that makes
 * each run, and the tables and JSON made of the runs. */
#ifndef HOTLOCK_BENCH_FUTEX_HASH_H
#define HOTLOCK_BENCH_FUTEX_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "harness.h"

#define FH_ME           "futex-hash"
#define FH_MAX_SIZES    32u
#define FH_MAX_SLOTS    (1u << 20)
#define FH_MAX_FUTEXES  (1u << 20)
#define FH_MAX_PARKED   8192    /* no suffix: --help quotes it (FH_TEXT) */
#define FH_MAX_HOT      64u
#define FH_PROBE_EVERY  64      /* likewise */
#define FH_PROBE_WORDS  64u
#define FH_PROBE_CAP    (1u << 20)      /* samples kept per hot thread */
#define FH_PARKED_STACK (64u * 1024u)
#define FH_WAITERS_PER_MUTEX 4u

/* A number's digits, for a help text. */
#define FH_TEXT_(x) #x
#define FH_TEXT(x) FH_TEXT_(x)

enum fh_scenario { FH_HASH, FH_PARKED };
enum { FH_SIZE_GLOBAL = -1, FH_SIZE_DEFAULT = -2 };

struct fh_size {
	long slots;             /* FH_SIZE_GLOBAL, FH_SIZE_DEFAULT or a power of two */
	char name[24];          /* "global", "default", "256" */
	bool skipped;           /* the kernel refused it, or reported another size */
	char why[200];
};

/* A list option's values (--threads, --parked): distinct, ascending once
 * parsed. */
struct fh_list {
	unsigned v[BENCH_MAX_THREAD_COUNTS];
	size_t n;
};

/* The scenario's context: its own options, then the shared ones and --hash
 * as main.c makes them ready. */
struct fh_opts {
	enum fh_scenario scenario;
	struct fh_list threads; /* hash: threads per run */
	struct fh_list parked;  /* parked: parked threads per run */
	const char *hash;       /* --hash as given; NULL: the scenario's default */
	unsigned futexes;
	unsigned hot;
	bool pin;
	double duration_s;
	unsigned repeat;
	const char *json;
	struct fh_size sizes[FH_MAX_SIZES];
	size_t nsizes;
};

/* "threads" (hash) or "parked": what a run's count is. */
static inline const char *fh_count_name(const struct fh_opts *o)
{
	return o->scenario == FH_HASH ? "threads" : "parked";
}

/* The parked experiment's own figures for one run. */
struct fh_parked {
	unsigned parked, mutexes, hot;
	uint64_t handovers;     /* acquisitions that followed the other thread's */
	uint64_t futex_calls;   /* hl_futex_stats_total over the run, all threads */
	uint64_t probes;        /* probe samples kept */
	double probe_mean_ns, probe_p50_ns, probe_p99_ns, probe_max_ns;
	uint64_t thr_handovers_min, thr_handovers_max;
	double park_s;          /* time for the P threads to park */
	double release_s;       /* time to release and join them */
};

/* A run's own figures: its sample's extra. */
struct fh_run {
	int slots_first;        /* kernel's size after the first thread (-1: unknown) */
	int slots_after;        /* after the run */
	struct fh_parked parked; /* parked only */
};

static inline const struct fh_run *fh_run_of(const struct bench_sample *s)
{
	return s->extra;
}

/* All runs of one (size, count). */
struct fh_cell {
	struct bench_sample *runs; /* [repeat] */
	unsigned n;             /* runs made */
	unsigned median;
};

/* The run a table shows for c; NULL when none was made. */
static inline const struct bench_sample *fh_cell_run(const struct fh_cell *c)
{
	return c->n ? &c->runs[c->median] : NULL;
}

/* options.c */
extern const struct bench_option fh_options[];
extern const struct fh_opts fh_defaults;
extern const char fh_about[];
void fh_help_more(FILE *f);
/* Parses o->hash (or the scenario's default) into o->sizes. */
void fh_parse_hash(struct fh_opts *o);

/* child.c: runs one (size, count) in a fresh child and fills out (its extra
 * a struct fh_run).  Returns false (with z marked skipped) when the kernel
 * did not take the size. */
bool fh_run_child(const struct fh_opts *o, struct fh_size *z, unsigned count,
		  struct bench_sample *out);
/* hash.c, parked.c: the child's run, the size set, into s (and x). */
void fh_child_hash(const struct fh_opts *o, const struct fh_size *z, unsigned threads,
		   struct bench_sample *s);
void fh_child_parked(const struct fh_opts *o, const struct fh_size *z, unsigned parked,
		     struct bench_sample *s, struct fh_parked *x);

/* tables.c: the notes under the tables (also --help's), the figures the
 * progress line, the tables and the JSON share, and the tables. */
extern const char fh_hash_note[], fh_parked_note[];
double fh_per_thread_avg(const struct bench_sample *s);
double fh_handovers_per_s(const struct bench_sample *s);
void fh_hash_tables(const struct fh_opts *o, const unsigned *counts, size_t ncounts,
		    const struct fh_cell *cells, unsigned full);
void fh_parked_tables(const struct fh_opts *o, const struct fh_cell *cells);

/* json.c */
void fh_write_json(const struct fh_opts *o, const unsigned *counts, size_t ncounts,
		   const struct fh_cell *cells);

#endif

/* SPDX-License-Identifier: MIT */
/* hotlock-bench: the wait time of lock acquisitions, sampled.
 *
 * What a wait is: the time from just before a thread calls lock to just
 * after the call returns, read with clock_gettime(CLOCK_MONOTONIC) (the
 * vDSO: no system call).  It includes the cost of one clock read, the
 * floor of every sample (bench_wait_clock_floor_ns measures it).
 *
 * Sampled: the clock is read around one acquisition in N per thread on
 * average (N = --wait-sample, 16 by default), so that the clock reads do not
 * change the throughput being measured.  The gap to the next timed
 * acquisition is drawn at random, uniform in 1 .. 2N-1, from a generator
 * seeded by the thread's index: the threads are not in lockstep, and the
 * sampling cannot fall in step with a period of the lock's own (a lock that
 * does something every 16th handover) or of the threads' order.
 *
 * Each thread records into its own histogram (struct bench_waits),
 * allocated and touched before the run, so the timed loop neither
 * allocates nor page-faults: log-linear buckets (HDR-style), exact below
 * 128 ns, then 64 buckets per power of two up to 2^34 ns (17 s; a longer
 * wait counts in the last bucket), so a bucket is at most 1/64 of its
 * lower bound wide and a percentile, reported as its bucket's midpoint, is
 * within 0.8% of the sample it stands for.  The longest sampled wait is
 * kept exactly beside the histogram.  After the run the threads'
 * histograms are merged and the percentiles read off (nearest rank).
 *
 * The percentiles and the maximum are over the sampled acquisitions only:
 * the maximum is the longest wait among them, not over every acquisition,
 * which only timing every call could give (--wait-sample 1 does, at the
 * cost of two clock reads per acquisition). */
#ifndef HOTLOCK_BENCH_WAITS_H
#define HOTLOCK_BENCH_WAITS_H

#include <stdint.h>
#include <time.h>

#include "harness.h"

#define BENCH_WAIT_SUB_BITS  7u   /* exact below 2^7 ns; 2^6 buckets per octave */
#define BENCH_WAIT_HALF      (1u << (BENCH_WAIT_SUB_BITS - 1))
#define BENCH_WAIT_TOP_BITS  34u  /* distinct up to 2^34 ns (17 s) */
#define BENCH_WAIT_BUCKETS \
	((BENCH_WAIT_TOP_BITS - BENCH_WAIT_SUB_BITS + 2u) * BENCH_WAIT_HALF)
#define BENCH_WAIT_SAMPLE_DEFAULT 16u  /* one acquisition in 16 timed */
#define BENCH_WAIT_SAMPLE_MAX     65536u

/* One thread's sampled waits, on cache lines of its own. */
struct bench_waits {
	uint64_t samples;
	uint64_t max_ns;        /* the longest, exact */
	uint64_t count[BENCH_WAIT_BUCKETS];
} __attribute__((aligned(BENCH_CACHELINE)));

/* What a run's merged waits say; the times in microseconds.  With no
 * sample, samples is 0 and the times NAN. */
struct bench_wait_stats {
	uint64_t samples;
	double p50_us, p99_us, p999_us, max_us;
};

/* CLOCK_MONOTONIC in nanoseconds (vDSO). */
static inline uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The bucket of a wait of ns nanoseconds. */
static inline unsigned bench_wait_bucket(uint64_t ns)
{
	unsigned msb, shift;

	if (ns < 2 * BENCH_WAIT_HALF)
		return (unsigned)ns;
	if (ns >> BENCH_WAIT_TOP_BITS)
		return BENCH_WAIT_BUCKETS - 1;
	msb = 63u - (unsigned)__builtin_clzll(ns);
	shift = msb - (BENCH_WAIT_SUB_BITS - 1);
	/* ns >> shift keeps the top SUB_BITS bits: HALF .. 2 HALF - 1. */
	return shift * BENCH_WAIT_HALF + (unsigned)(ns >> shift);
}

static inline void bench_waits_record(struct bench_waits *w, uint64_t ns)
{
	w->count[bench_wait_bucket(ns)]++;
	w->samples++;
	if (ns > w->max_ns)
		w->max_ns = ns;
}

/* Acquisitions until the next timed one: uniform in 1 .. 2 mean - 1 (mean
 * at least 1), from a bench_random state; by a multiply, not a division
 * (tens of cycles), the top 32 bits of the draw scaled to the range. */
static inline uint32_t bench_wait_gap(uint64_t *rng, uint32_t mean)
{
	const uint64_t range = 2 * (uint64_t)mean - 1;

	return 1 + (uint32_t)(((bench_random(rng) >> 32) * range) >> 32);
}

/* n threads' histograms, zeroed and touched (page-faulted in); free()
 * releases them.  Exits 1 when out of memory. */
struct bench_waits *bench_waits_alloc(unsigned n);
/* The merged figures of n threads' histograms. */
void bench_waits_stats(const struct bench_waits *w, unsigned n,
		       struct bench_wait_stats *out);
/* A run's waits, kept as its bench_sample.extra by a scenario that times
 * acquisitions: what the wait columns and bench_wait_json_run read. */
struct bench_wait_run {
	bool timed;                     /* false: no clock was read (not timed) */
	struct bench_wait_stats stats;
};

/* The wait columns of the run a table shows (its extra a bench_wait_run):
 * samples, p50-us, p99-us, p99.9-us, max-us; "-" where not timed or no
 * acquisition was sampled. */
#define BENCH_WAIT_NCOLUMNS 5
extern const struct bench_column bench_col_wait[BENCH_WAIT_NCOLUMNS];

/* One run's JSON members: wait_samples, wait_us_p50, wait_us_p99,
 * wait_us_p999, wait_us_max (all null when not timed; the times null for
 * a run without a sample). */
void bench_wait_json_run(struct bench_json *j, const struct bench_wait_run *w);

/* "wait_us_max_all_runs": the longest sampled wait of runs[0..n) (their
 * extras bench_wait_runs); null for runs NULL (not timed) or no sample. */
void bench_wait_json_longest(struct bench_json *j, const struct bench_sample *runs,
			     unsigned n);

/* The least time two back-to-back bench_now_ns reads are apart, in ns, over
 * a few thousand tries: what every sample includes beyond the lock call. */
uint64_t bench_wait_clock_floor_ns(void);

#endif

/* SPDX-License-Identifier: MIT */
/* hotlock-bench-schbench: what its files share (the design is at the top of
 * schbench.c): the command line's context, the latency histogram, the
 * threads of one run and what a run measured, the figures over the
 * repeats, the report. */
#ifndef HOTLOCK_BENCH_SCHBENCH_H
#define HOTLOCK_BENCH_SCHBENCH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <hotlock/swap.h>

#include "harness.h"

enum sb_mode { MODE_WAKE_WAIT, MODE_SWAP, NMODES };
extern const char *const sb_mode_names[NMODES];

/* The command line (schbench.c's options); json is the shared --json,
 * modes[] --modes parsed. */
struct sb_opts {
	unsigned m, t;                  /* message threads, workers per message thread */
	double runtime_s;
	unsigned long cputime_us, sleeptime_us;
	const char *modes_list;         /* --modes as given */
	unsigned repeat;
	const char *json;
	enum sb_mode modes[NMODES];
	unsigned nmodes;
};

/* ---- fio's latency histogram, as schbench keeps it (hist.c) --------------- */

#define PLAT_BITS 8
#define PLAT_VAL (1u << PLAT_BITS)
#define PLAT_GROUP_NR 19
#define PLAT_NR (PLAT_GROUP_NR * PLAT_VAL)

#define NPCT 7
#define PCT_P99 4                       /* the starred one */
extern const double sb_pct_list[NPCT];

/* What a histogram says of its samples. */
struct sb_latency {
	uint64_t n;
	uint64_t zeros;                 /* samples of 0 usec (schbench drops them) */
	uint64_t min, max;
	uint64_t pct[NPCT];             /* of sb_pct_list, by sb_hist_percentiles */
};

struct sb_hist {
	struct sb_latency lat;
	uint32_t plat[PLAT_NR];
};

void sb_hist_add(struct sb_hist *h, uint64_t us);
void sb_hist_merge(struct sb_hist *d, const struct sb_hist *s);
/* schbench's walk, into h->lat.pct: percentile j is the first bucket where
 * the running count reaches sb_pct_list[j]% of the samples.  No samples:
 * all 0. */
void sb_hist_percentiles(struct sb_hist *h);

/* ---- one run: the threads (threads.c) and the wake modes (wake.c) ---------- */

/* What a thread is doing, for the watchdog's report. */
enum { PH_START, PH_THINK, PH_POST, PH_WAIT, PH_RECORD, PH_WAKE, PH_SLEEP, PH_DONE };

struct sb_msg;

struct sb_worker {
	/* schbench keeps the wait word and the wake time on one cache line,
	 * the one the msg thread writes before the wake. */
	_Alignas(BENCH_CACHELINE) _Atomic(struct sb_worker *) next; /* on the msg list */
	_Atomic uint64_t wake_ns;
	_Atomic uint32_t word;          /* wake+wait */
	hl_swap_point_t point;          /* hl_swap */
	struct sb_msg *msg;
	_Alignas(BENCH_CACHELINE) _Atomic int phase;
	double think_cpu_s;             /* thread CPU time spent thinking */
	struct sb_hist hist;
};

struct sb_msg {
	_Alignas(BENCH_CACHELINE) _Atomic(struct sb_worker *) head;
	_Atomic uint32_t word;
	hl_swap_point_t point;
	_Alignas(BENCH_CACHELINE) _Atomic int phase;
	struct sb_worker *workers;      /* its T workers */
	uint64_t wakes;
	unsigned seed;
};

struct sb_run {
	enum sb_mode mode;
	const struct sb_opts *o;
	_Alignas(BENCH_CACHELINE) _Atomic bool stopping;
	_Alignas(BENCH_CACHELINE) struct sb_msg *msgs;  /* [m] */
	struct sb_worker *workers;                      /* [m * t] */
};

uint64_t sb_now_ns(void);               /* CLOCK_MONOTONIC */

static inline bool sb_stopping(struct sb_run *r)
{
	return atomic_load(&r->stopping);
}

static inline void sb_set_phase(_Atomic int *p, int v)
{
	/* Relaxed: read only by the watchdog's report. */
	atomic_store_explicit(p, v, memory_order_relaxed);
}

/* The wake modes (wake.c): a worker's wait state made ready before it
 * posts, its post and wait (worker step 3), the msg thread's wait state
 * made ready before its pass, its wait (step 4), and the wakes. */
void sb_worker_ready(struct sb_run *r, struct sb_worker *w);
int sb_worker_post_wait(struct sb_run *r, struct sb_worker *w, struct bench_thread *bt);
void sb_msg_ready(struct sb_run *r, struct sb_msg *msg);
void sb_msg_wait(struct sb_run *r, struct sb_msg *msg, struct bench_thread *bt);
/* hl_swap only: the msg thread wakes its last worker and waits, in one call. */
void sb_msg_swap(struct sb_msg *msg, struct sb_worker *w, struct bench_thread *bt);
void sb_wake_worker(struct sb_run *r, struct sb_worker *w);
void sb_wake_msg(struct sb_run *r, struct sb_msg *msg);

/* The bench_run_spec hooks (threads.c): threads 0 .. m-1 are the msg
 * threads, the rest the workers, T per msg thread in order. */
uint64_t sb_body(struct bench_thread *bt, void *arg);
void sb_on_stop(void *arg);
void sb_on_hang(void *arg);

/* ---- what one run measured (run.c) ----------------------------------------- */

struct sb_result {
	struct sb_latency lat;          /* of all workers; lat.n: the wake-ups */
	double wall_s, cpu_s, think_cpu_s;
	uint64_t futex_calls, csw;
	uint64_t wk_min, wk_max;        /* per worker wake-ups */
	double wk_avg;
	double other_cpus;
};

void sb_run_once(const struct sb_opts *o, enum sb_mode mode, struct sb_result *res);

/* ---- figures across the repeats (figures.c) --------------------------------- */

/* A figure of each run besides the latencies: its table row and JSON key. */
struct sb_fig {
	const char *head, *json;
	int width, prec;
	double (*value)(const struct sb_result *r);
};

extern const struct sb_fig sb_figs[];
extern const unsigned sb_nfigs;

/* The latency rows: the percentiles, then min and max. */
#define NROWS (NPCT + 2)

/* Row row's value in one run, and its name ("*99.0th" for the starred). */
double sb_row_value(const struct sb_result *r, unsigned row);
void sb_row_name(unsigned row, char *buf, size_t len);

/* Median (the lower one for an even count: a value that happened) and
 * range over the runs, NANs left out; NAN when none. */
struct spread {
	double med, lo, hi;
};

/* Of figure f over runs[0..n), or with f NULL of latency row row (the
 * runs without wake-ups left out). */
struct spread sb_spread(const struct sb_result *runs, unsigned n, const struct sb_fig *f,
			unsigned row);

/* ---- the report (report.c) ---------------------------------------------------- */

/* What the cost and fairness rows show: a heading (or headings: "thr-*")
 * and its text, under the table and in --help. */
#define SB_NLEGEND 7
extern const char *const sb_legend[SB_NLEGEND][2];

/* The seed's shape of one mode's latencies, from the medians of its runs. */
void sb_print_latencies(const struct sb_result *runs, unsigned n);
/* The tables over the modes, and their ratio where both ran. */
void sb_print_tables(const struct sb_opts *o, struct sb_result *const *runs);
void sb_write_json(const struct sb_opts *o, struct sb_result *const *runs);

#endif

/* SPDX-License-Identifier: MIT */
/* hotlock-bench cond: what the scenario's files share (its design is at the
 * top of scenario_cond.c): one configuration of a workload, a measurement
 * in progress, the figures of one run, the columns every table has, and
 * what each workload supplies (struct cond_workload): queue.c,
 * broadcast.c, pingpong.c.  run.c makes one measurement of any of them. */
#ifndef HOTLOCK_BENCH_COND_H
#define HOTLOCK_BENCH_COND_H

#include <stdbool.h>
#include <stdint.h>

#include "conds.h"
#include "harness.h"

enum cond_kind { COND_QUEUE, COND_BROADCAST, COND_PINGPONG, COND_NKINDS };

/* One configuration of a workload: a table.  The members of the other
 * workloads are 0. */
struct cond_shape {
	enum cond_kind kind;
	unsigned producers, consumers;  /* queue */
	unsigned long capacity;         /* queue: items the ring holds */
	unsigned waiters;               /* broadcast */
	unsigned long cs;               /* broadcast: pauses in a waiter's section */
};

/* What the threads share, protected by the mutex (plain fields). */
struct cond_shared {
	bool stopping;          /* set by on_stop: every loop ends */
	/* queue: a ring of capacity items, count of them from head */
	uint64_t head, count;
	/* broadcast */
	uint64_t gen;           /* bumped by every broadcast */
	unsigned done;          /* waiters through this round's section */
	double last_end;        /* when the last of them ended it */
	uint64_t sections;      /* critical sections run, all waiters */
	/* pingpong */
	unsigned turn;          /* the thread whose turn it is */
	uint64_t passes;
	uint64_t ring[];        /* queue: [capacity] */
};

/* One thread's results beyond its ops, written when its body ends. */
struct cond_thread {
	uint64_t sum;           /* queue: the items it pushed or popped, summed */
	const char *broken;     /* a check that failed, or NULL */
	/* The broadcaster's: */
	uint64_t bc_futex;      /* futex calls made inside its broadcast calls */
	uint64_t csw;           /* its voluntary context switches */
	double *lat;            /* round latencies, seconds */
	size_t nlat, cap;
} __attribute__((aligned(BENCH_CACHELINE)));

/* One measurement in progress. */
struct cond_run {
	const struct bench_cond *cv;
	struct cond_shape k;
	void *m;                /* the mutex, own cache line(s) */
	void *c[2];             /* the condvars, as each workload names them */
	struct cond_shared *sh;
	struct cond_thread *per;        /* [threads] */
	char label[96];
};

/* The figures of one run beyond the harness's (bench_sample.extra).  The
 * sample's total_ops and ops_per_sec count the workload's unit: items
 * consumed, broadcast rounds, round trips. */
struct cond_extra {
	struct cond_shape k;
	/* queue: per-thread items of the producers [0] and consumers [1] */
	uint64_t side_min[2], side_max[2], side_sum[2];
	uint64_t left;          /* items still in the ring at the end */
	/* broadcast */
	double lat_median_s, lat_p90_s; /* NAN without a whole round */
	bool futex_counted;
	uint64_t bc_futex;      /* in the broadcaster's broadcast calls */
	uint64_t bc_csw;        /* the broadcaster thread's */
	/* pingpong */
	uint64_t signals;
	/* Set on the median run once the repeats are in: (max - min) / median
	 * of the workload's measure over them; NAN for one run. */
	double spread;
};

/* What a workload supplies. */
struct cond_workload {
	const char *name;       /* --scenario's word, the JSON's "scenario" */
	const char *unit;       /* what total_ops counts: the JSON's "unit" */
	/* The measure a table's median run, spread and ratio go by: true, the
	 * median latency (shorter is faster); false, ops_per_sec. */
	bool by_latency;
	/* The progress line's result: the measure times scale, so printed. */
	const char *result_format;
	double result_scale;
	unsigned (*threads)(const struct cond_shape *k);
	uint64_t (*body)(struct bench_thread *t, struct cond_run *r);
	/* After the run: the checks (a failed one exits 1), x's figures and
	 * s->total_ops. */
	void (*collect)(const struct cond_run *r, struct bench_sample *s,
			struct cond_extra *x);
	/* The table's title ("producers=4 consumers=4") and the JSON's entry
	 * name after "CONDVAR/" ("queue-4p4c"), unique in the file. */
	void (*title)(char *buf, size_t len, const struct cond_shape *k);
	void (*entry)(char *buf, size_t len, const struct cond_shape *k);
	/* The first header line's text after "cond NAME: ", its newline
	 * included; base is the ratios' baseline. */
	void (*header)(const struct cond_shape *k, const char *base);
	/* Optional: a result's members that give its configuration. */
	void (*json_shape)(struct bench_json *j, const struct cond_shape *k);
	/* A run's members after "unit". */
	void (*json_sample)(struct bench_json *j, const struct bench_sample *s);
	/* Its table's columns, up to a NULL. */
	const struct bench_column *const *columns;
};

extern const struct cond_workload cond_queue, cond_broadcast, cond_pingpong;
/* By enum cond_kind. */
extern const struct cond_workload *const cond_workloads[COND_NKINDS];

/* The columns every table has: the spread of the measure over the repeats
 * and the ratio against the baseline. */
extern const struct bench_column cond_col_spread, cond_col_ratio;

/* What the command line asked for (suite.c). */
struct cond_suite {
	const struct bench_common *common;
	const struct bench_cond *conds[BENCH_MAX_LOCKS];
	const char *names[BENCH_MAX_LOCKS];
	size_t nconds;
	size_t base;            /* the ratios' baseline: glibc, else the first */
	/* The configurations, a workload's together, in the order of enum
	 * cond_kind: a table each. */
	const struct cond_shape *shapes;
	size_t nshapes;
};

/* Runs the suite: progress on stderr, the tables on stdout, the JSON if
 * asked.  Returns 0 (errors exit). */
int cond_suite_run(const struct cond_suite *s);

/* Runs r->cv in workload r->k (r->label set) for one measurement and fills
 * out, its extra a cond_extra.  Exits 1 when a check fails. */
void cond_measure(struct cond_run *r, double duration_s, struct bench_sample *out);
/* The measure a run's table goes by (see by_latency). */
double cond_measure_of(const struct bench_sample *s);
/* The JSON members of one run (bench_json_runs's members). */
void cond_json_run(const void *ctx, struct bench_json *j, const struct bench_sample *s);

/* Column values of the run a result shows: its extra; its rate in
 * thousands; its futex calls (NAN where not counted), voluntary context
 * switches and CPU us per op (the workload's unit); x per op. */
const struct cond_extra *cond_extra_of(const struct bench_result *r);
double cond_rate_k(const struct bench_result *r);
double cond_futex_per_op(const struct bench_result *r);
double cond_csw_per_op(const struct bench_result *r);
double cond_cpu_us_per_op(const struct bench_result *r);
double cond_per_op(const struct bench_result *r, double x);

/* The calls of the run's condvar and mutex. */
static inline int cond_lock(const struct cond_run *r)
{
	return r->cv->mutex->lock(r->m);
}

static inline int cond_unlock(const struct cond_run *r)
{
	return r->cv->mutex->unlock(r->m);
}

static inline int cond_wait(const struct cond_run *r, int k)
{
	return r->cv->wait(r->c[k], r->m);
}

static inline int cond_signal(const struct cond_run *r, int k)
{
	return r->cv->signal(r->c[k]);
}

/* Records a failed call (the harness reports it after the run); the thread
 * holds the mutex and lets it go.  Returns ops, for the body's return. */
uint64_t cond_fail_held(struct bench_thread *t, const struct cond_run *r,
			const char *what, int err, uint64_t ops);

#endif

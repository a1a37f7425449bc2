/* SPDX-License-Identifier: MIT */
/* hotlock-bench mutex: throughput, fairness and cost of a contended mutex.
 *
 * Each of T threads loops { lock; CS; unlock; NCS } until the stop flag.
 *   CS:  --cs iterations of { pause; increment a counter on shared line A and
 *        one on shared line B }: the critical section moves two cache lines
 *        between CPUs, as real ones do.
 *   NCS: --ncs iterations of { pause; increment a thread-private counter }.
 * After the run, both shared counters must equal cs times the ops counted:
 * a lost update means two threads were inside at once.
 *
 * The limit: with one thread per CPU and a perfect lock, critical sections
 * run back to back while the NCS runs in parallel, so the rate is at most
 * the 1-thread rate x (cs + ncs) / cs, and never more than cores x the
 * 1-thread rate.
 *
 * With a topology of more than one node, every critical section also notes
 * who held the lock before (bench_handoff_note), for the share of handoffs
 * that crossed nodes.
 *
 * Wait times (waits.h): each thread times about one acquisition in
 * --wait-sample (16), from just before lock to just after it returns, into
 * a histogram of its own; after the run they are merged into p50, p99,
 * p99.9 and the longest sampled wait.  The second clock read falls inside
 * the critical section (it follows lock's return), so a timed acquisition's
 * critical section is one clock read longer; the sample is recorded after
 * unlock.  --no-wait-times reads no clock, for the overhead's measure.
 *
 * --torture: the workload of the kernel's locktorture spinlock writer, and
 * the table of the CNA patches' cover letter (total ops per run, mean and
 * standard deviation over the runs, speedup over the first lock; by default
 * mcs, the stock queue lock, against hotlock-cna).  The critical section is
 * the one above with cs = 1 by default; outside it, instead of NCS, each
 * thread waits a random time (torture_delay).  locktorture's writer delays
 * while holding the lock; here the delays are outside it, so that the
 * critical section stays short and the handover between threads, which is
 * what a queue policy changes, decides the rate. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "locks.h"
#include "waits.h"

#define MUTEX_DEFAULT_LOCKS "hotlock,peers"
#define TORTURE_DEFAULT_LOCKS "mcs,hotlock-cna"
#define TORTURE_DEFAULT_CS 1ul

/* The delays outside the lock under --torture: each op one random draw, and
 *   0-15 pause iterations always (small, varied, so that the threads do not
 *   fall into lockstep);
 *   a 2 us spin in 1 op of 256 (locktorture's short udelay(2));
 *   a 100 us spin in 1 op of 65536 (locktorture's occasional long mdelay(100),
 *   a thousand times shorter, so that a run of a second sees several without
 *   one thread stalling it). */
#define TORTURE_TINY_MASK   15u      /* pause iterations: draw & mask */
#define TORTURE_SHORT_SHIFT 4        /* short delay when these 8 bits are 0 */
#define TORTURE_SHORT_MASK  0xffu
#define TORTURE_SHORT_S     2e-6
#define TORTURE_LONG_SHIFT  12       /* long delay when these 16 bits are 0 */
#define TORTURE_LONG_MASK   0xffffu
#define TORTURE_LONG_S      100e-6
#define TORTURE_DELAY_TEXT \
	"0-15 pauses, 2 us in 1 op of 256, 100 us in 1 op of 65536"

struct mutex_shared {
	_Alignas(BENCH_CACHELINE) volatile uint64_t a;  /* line A */
	/* On line A, which every critical section writes anyway, so noting the
	 * holder moves no extra cache line between CPUs. */
	struct bench_handoff handoff;
	_Alignas(BENCH_CACHELINE) volatile uint64_t b;  /* line B */
};

struct mutex_ctx {
	const struct bench_lock *locks[BENCH_MAX_LOCKS];
	unsigned long cs, ncs;
	bool torture;                   /* torture_delay instead of NCS */
	bool wait_times;                /* time acquisitions (no --no-wait-times) */
	unsigned wait_sample;           /* one in this many, on average */
	uint64_t wait_clock_floor_ns;   /* bench_wait_clock_floor_ns, at the start */
	unsigned repeat;                /* --repeat: runs per result */
	/* The run in progress. */
	const struct bench_lock *lock;
	void *obj;                      /* the lock object, own cache line(s) */
	struct mutex_shared *shared;
	struct bench_waits *waits;      /* [threads]; NULL: not timed */
	char label[96];
};

/* Spins, with pause, for s seconds of wall time: a delay that means the same
 * on every CPU, whatever a pause costs there. */
static void spin_for(double s)
{
	const double end = bench_now() + s;

	while (bench_now() < end)
		bench_pause();
}

/* The delay outside the lock under --torture (see TORTURE_TINY_MASK). */
static void torture_delay(uint64_t *rng)
{
	const uint64_t r = bench_random(rng);

	for (unsigned i = 0; i < (r & TORTURE_TINY_MASK); i++)
		bench_pause();
	if (((r >> TORTURE_SHORT_SHIFT) & TORTURE_SHORT_MASK) == 0)
		spin_for(TORTURE_SHORT_S);
	if (((r >> TORTURE_LONG_SHIFT) & TORTURE_LONG_MASK) == 0)
		spin_for(TORTURE_LONG_S);
}

static uint64_t mutex_body(struct bench_thread *t, void *arg)
{
	const struct mutex_ctx *c = arg;
	const struct bench_lock *lk = c->lock;
	void *obj = c->obj;
	volatile uint64_t *a = &c->shared->a, *b = &c->shared->b;
	struct bench_handoff *handoff = &c->shared->handoff;
	volatile uint64_t priv = 0;
	const unsigned long cs = c->cs, ncs = c->ncs;
	const bool torture = c->torture;
	/* Seeded by the thread's index (never 0): thread i draws the same
	 * delays under every lock. */
	uint64_t rng = 0x9E3779B97F4A7C15ull * ((uint64_t)t->id + 1);
	/* The wait sampling's own generator, so that the torture delays are
	 * the same with the sampling on or off; seeded by the index, so that
	 * the threads' first timed acquisitions differ (a random phase). */
	uint64_t wait_rng = 0xD1B54A32D192ED03ull * ((uint64_t)t->id + 1);
	struct bench_waits *waits = c->waits ? &c->waits[t->id] : NULL;
	const uint32_t wait_sample = c->wait_sample;
	uint32_t wait_left = waits ? bench_wait_gap(&wait_rng, wait_sample) : 0;
	uint64_t ops = 0, wait_ns = 0;
	bool timed;
	int err;

	while (!bench_should_stop(t)) {
		timed = waits && --wait_left == 0;
		if (timed) {
			const uint64_t t0 = bench_now_ns();

			err = lk->lock(obj);
			wait_ns = bench_now_ns() - t0;
		} else {
			err = lk->lock(obj);
		}
		if (err) {
			bench_thread_fail(t, "lock", err);
			break;
		}
		bench_handoff_note(t, handoff);
		for (unsigned long i = 0; i < cs; i++) {
			bench_pause();
			*a += 1;
			*b += 1;
		}
		if ((err = lk->unlock(obj))) {
			bench_thread_fail(t, "unlock", err);
			break;
		}
		ops++;
		if (timed) {    /* after unlock: out of the critical section */
			bench_waits_record(waits, wait_ns);
			wait_left = bench_wait_gap(&wait_rng, wait_sample);
		}
		if (torture)
			torture_delay(&rng);
		else
			for (unsigned long i = 0; i < ncs; i++) {
				bench_pause();
				priv += 1;
			}
	}
	(void)priv;
	return ops;
}

static void mutex_on_hang(void *arg)
{
	const struct mutex_ctx *c = arg;

	bench_print_lock_state(c->lock->name, c->lock->describe, c->obj);
}

static void mutex_run(void *ctx, size_t lock, unsigned threads, double duration_s,
		      struct bench_sample *out)
{
	struct mutex_ctx *c = ctx;
	const struct bench_lock *lk = c->locks[lock];
	struct bench_wait_run *x = bench_xcalloc(1, sizeof *x); /* the run's extra */
	struct bench_run_spec spec = {
		.label = c->label,
		.threads = threads,
		.duration_s = duration_s,
		.body = mutex_body,
		.arg = c,
		.futex_counted = lk->futex_counted,
		.notes_handoffs = true,
		.on_hang = mutex_on_hang,
	};
	uint64_t expect;

	snprintf(c->label, sizeof c->label, "mutex %s threads=%u", lk->name, threads);
	c->lock = lk;
	/* All-zero bytes: what a static initialiser gives; init runs anyway. */
	c->obj = bench_alloc_lines(lk->size);
	c->shared = bench_alloc_lines(sizeof *c->shared);
	bench_check(lk->init(c->obj), c->label);
	/* Before the run: no allocation or first touch in the timed loop. */
	c->waits = c->wait_times ? bench_waits_alloc(threads) : NULL;

	bench_run(&spec, out);

	x->timed = c->waits != NULL;
	bench_waits_stats(c->waits, c->waits ? threads : 0, &x->stats);
	out->extra = x;
	free(c->waits);
	c->waits = NULL;

	expect = out->total_ops * c->cs;
	if (c->shared->a != expect || c->shared->b != expect)
		bench_fatal("%s: MUTUAL EXCLUSION BROKEN: %llu ops x cs %lu = %llu, but "
			    "the shared counters read %llu and %llu",
			    c->label, (unsigned long long)out->total_ops, c->cs,
			    (unsigned long long)expect, (unsigned long long)c->shared->a,
			    (unsigned long long)c->shared->b);
	bench_check(lk->destroy(c->obj), c->label);
	free(c->obj);
	free(c->shared);
	c->obj = NULL;
	c->shared = NULL;
}

static void mutex_json_config(void *ctx, struct bench_json *j)
{
	const struct mutex_ctx *c = ctx;

	bench_json_bool(j, "torture", c->torture);
	bench_json_uint(j, "cs", c->cs);
	if (c->torture) {
		bench_json_null(j, "ncs");
		bench_json_string(j, "delay_outside", TORTURE_DELAY_TEXT);
	} else {
		bench_json_uint(j, "ncs", c->ncs);
	}
	bench_json_bool(j, "wait_times", c->wait_times);
	if (c->wait_times) {
		bench_json_uint(j, "wait_sample", c->wait_sample);
		bench_json_uint(j, "wait_clock_floor_ns", c->wait_clock_floor_ns);
	} else {
		bench_json_null(j, "wait_sample");
		bench_json_null(j, "wait_clock_floor_ns");
	}
}

/* One run's wait figures (bench_sample.extra is its bench_wait_run). */
static void mutex_json_sample(void *ctx, struct bench_json *j, const struct bench_sample *s)
{
	bench_wait_json_run(j, s->extra);
}

/* Over all the runs of a result: the longest sampled wait (the result's
 * own members are its median run's). */
static void mutex_json_result(void *ctx, struct bench_json *j, const struct bench_result *r)
{
	const struct mutex_ctx *c = ctx;

	bench_wait_json_longest(j, c->wait_times ? r->runs : NULL, c->repeat);
}

/* The mutex table's columns and the waits. */
static const struct bench_column *const mutex_wait_columns[] = {
	&bench_col_mops, &bench_col_thr_min, &bench_col_thr_avg, &bench_col_thr_max,
	&bench_col_fairness, &bench_col_futex, &bench_col_csw, &bench_col_cpu,
	&bench_col_ratio, &bench_col_limit,
	&bench_col_wait[0], &bench_col_wait[1], &bench_col_wait[2], &bench_col_wait[3],
	&bench_col_wait[4],
};

static void mutex_help_more(FILE *f)
{
	fprintf(f, "Locks:\n");
	bench_locks_print(f, "  ");
	fprintf(f, "\nColumns (one table per thread count; the run with the median ops/s;\n"
		"--torture: its own table, the rest in the JSON only):\n");
	bench_columns_help(f, mutex_wait_columns,
			   sizeof mutex_wait_columns / sizeof mutex_wait_columns[0]);
	bench_columns_help(f, (const struct bench_column *const[]){ &bench_col_xnode }, 1);
	fprintf(f, "The limit here: the first lock's 1-thread rate x min(cores, (cs + ncs) / cs).\n"
		"The header and the JSON give the topology in effect and its node count.\n"
		"\n"
		"Exit status: 0 ok, 1 a run failed (broken exclusion, a lock error, threads\n"
		"that did not stop within duration + 30 s) or --topology names a source\n"
		"this machine cannot provide, 2 bad command line.\n");
}

static int mutex_main(void *ctx, struct bench_common *common)
{
	static const char *const me = "mutex";
	struct mutex_ctx *c = ctx;
	struct bench_suite suite = {
		.scenario = me,
		.lock_role = bench_lock_role,
		.common = common,
		.run = mutex_run,
		.json_config = mutex_json_config,
		.json_sample = mutex_json_sample,
		.json_result = mutex_json_result,
		.ctx = c,
	};
	char params[160], formula[64];
	unsigned cores = bench_cores();
	double ratio;

	if (c->torture) {
		if (bench_option_given("--ncs"))
			bench_usage_error(me, "--ncs does not go with --torture, whose delays "
					  "outside the lock are random (see --help)");
		if (!bench_option_given("--cs"))
			c->cs = TORTURE_DEFAULT_CS;
		if (!bench_option_given("--locks"))
			common->locks = TORTURE_DEFAULT_LOCKS;
	}
	if (!c->wait_times && bench_option_given("--wait-sample"))
		bench_usage_error(me, "--wait-sample does not go with --no-wait-times");
	c->repeat = common->repeat;
	if (c->wait_times) {
		c->wait_clock_floor_ns = bench_wait_clock_floor_ns();
		suite.columns = mutex_wait_columns;
		suite.ncolumns = sizeof mutex_wait_columns / sizeof mutex_wait_columns[0];
	}
	suite.nlocks = bench_locks_parse(me, common->locks, c->locks, BENCH_MAX_LOCKS);
	for (size_t l = 0; l < suite.nlocks; l++)
		suite.lock_names[l] = c->locks[l]->name;

	if (c->torture) {
		/* No limit: the random delays have no closed-form one. */
		snprintf(params, sizeof params,
			 "torture cs=%lu delay-outside=(" TORTURE_DELAY_TEXT ")", c->cs);
		suite.params = params;
		suite.locktorture_table = true;
		return bench_suite_run(&suite);
	}
	ratio = (double)(c->cs + c->ncs) / (double)c->cs;
	suite.limit_factor = ratio < cores ? ratio : cores;
	snprintf(formula, sizeof formula, "min(%u, %lu/%lu)", cores, c->cs + c->ncs, c->cs);
	snprintf(params, sizeof params, "cs=%lu ncs=%lu", c->cs, c->ncs);
	suite.params = params;
	suite.limit_formula = formula;
	return bench_suite_run(&suite);
}

#define OPT(field) offsetof(struct mutex_ctx, field)

static const struct bench_option mutex_options[] = {
	{ "--cs", "N", BENCH_OPT_ULONG, OPT(cs), 1, 1e9, .help =
	  "pause iterations inside the lock" },
	{ "--ncs", "N", BENCH_OPT_ULONG, OPT(ncs), 0, 1e9, .help =
	  "pause iterations outside the lock" },
	{ "--torture", NULL, BENCH_OPT_FLAG, OPT(torture), .help =
	  "locktorture-style runs and the table of the CNA patches' cover letter: "
	  "a row per thread count, each lock's total ops per run (x10^6) as the "
	  "mean over the --repeat runs with the standard deviation in (), and "
	  "'/ speedup' = that mean over the first lock's.  Defaults: --locks "
	  TORTURE_DEFAULT_LOCKS " (the stock queue lock against CNA), --cs 1.  "
	  "Outside the lock, instead of NCS, a random delay (locktorture's "
	  "spinlock writer: mostly tiny, at times long): " TORTURE_DELAY_TEXT
	  ".  Not with --ncs" },
	{ "--wait-sample", "N", BENCH_OPT_UINT, OPT(wait_sample), 1, BENCH_WAIT_SAMPLE_MAX,
	  .help = "time about one acquisition in N per thread (1 times every one): "
	  "the wait columns" },
	{ "--no-wait-times", NULL, BENCH_OPT_UNFLAG, OPT(wait_times), .help =
	  "read no clock around lock: no wait column, the JSON's wait_* null (to "
	  "measure what the sampling costs)" },
	{ 0 },
};

static const struct mutex_ctx mutex_defaults = {
	.cs = 100, .ncs = 10,
	.wait_times = true, .wait_sample = BENCH_WAIT_SAMPLE_DEFAULT,
};

const struct bench_scenario bench_scenario_mutex = {
	.name = "mutex",
	.summary = "T threads lock, write two shared lines, unlock, think; throughput and fairness",
	.about =
	"T threads loop { lock; CS; unlock; NCS } for --duration seconds, started\n"
	"together.  CS = --cs x { pause; write two cache lines shared by all threads };\n"
	"NCS = --ncs x { pause; write thread-private data }.  Mutual exclusion is\n"
	"checked after each run (exit 1 if broken).",
	.options = mutex_options,
	.common = BENCH_COMMON_SUITE,
	.default_locks = MUTEX_DEFAULT_LOCKS,
	.ctx_size = sizeof(struct mutex_ctx),
	.ctx_init = &mutex_defaults,
	.help_more = mutex_help_more,
	.run = mutex_main,
};

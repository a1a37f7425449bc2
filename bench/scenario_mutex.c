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
 * 1-thread rate. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "locks.h"

#define MUTEX_DEFAULT_LOCKS "hotlock,glibc,glibc-adaptive,futex3,mcs"

struct mutex_shared {
	_Alignas(BENCH_CACHELINE) volatile uint64_t a;  /* line A */
	_Alignas(BENCH_CACHELINE) volatile uint64_t b;  /* line B */
};

struct mutex_ctx {
	const struct bench_lock *locks[BENCH_MAX_LOCKS];
	unsigned long cs, ncs;
	/* The run in progress. */
	const struct bench_lock *lock;
	void *obj;                      /* the lock object, own cache line(s) */
	struct mutex_shared *shared;
	char label[96];
};

static uint64_t mutex_body(struct bench_thread *t, void *arg)
{
	const struct mutex_ctx *c = arg;
	const struct bench_lock *lk = c->lock;
	void *obj = c->obj;
	volatile uint64_t *a = &c->shared->a, *b = &c->shared->b;
	volatile uint64_t priv = 0;
	const unsigned long cs = c->cs, ncs = c->ncs;
	uint64_t ops = 0;
	int err;

	while (!bench_should_stop(t)) {
		if ((err = lk->lock(obj))) {
			bench_thread_fail(t, "lock", err);
			break;
		}
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
	char buf[512];

	if (!c->lock->describe)
		return;
	c->lock->describe(c->obj, buf, sizeof buf);
	fprintf(stderr, "hotlock-bench: %s lock state: %s\n", c->lock->name, buf);
}

static void *alloc_lines(size_t size)
{
	size_t rounded = (size + BENCH_CACHELINE - 1) / BENCH_CACHELINE * BENCH_CACHELINE;
	void *p = aligned_alloc(BENCH_CACHELINE, rounded ? rounded : BENCH_CACHELINE);

	if (!p)
		bench_fatal("out of memory");
	/* All-zero bytes: what a static initialiser gives; init runs anyway. */
	memset(p, 0, rounded);
	return p;
}

static void mutex_run(void *ctx, size_t lock, unsigned threads, double duration_s,
		      struct bench_sample *out)
{
	struct mutex_ctx *c = ctx;
	const struct bench_lock *lk = c->locks[lock];
	struct bench_run_spec spec = {
		.label = c->label,
		.threads = threads,
		.duration_s = duration_s,
		.body = mutex_body,
		.arg = c,
		.futex_counted = lk->futex_counted,
		.on_hang = mutex_on_hang,
	};
	uint64_t expect;

	snprintf(c->label, sizeof c->label, "mutex %s threads=%u", lk->name, threads);
	c->lock = lk;
	c->obj = alloc_lines(lk->size);
	c->shared = alloc_lines(sizeof *c->shared);
	bench_check(lk->init(c->obj), c->label);

	bench_run(&spec, out);

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

	bench_json_uint(j, "cs", c->cs);
	bench_json_uint(j, "ncs", c->ncs);
}

static void mutex_help(FILE *f)
{
	fprintf(f,
		"Usage: hotlock-bench mutex [OPTIONS]\n"
		"\n"
		"T threads loop { lock; CS; unlock; NCS } for --duration seconds, started\n"
		"together.  CS = --cs x { pause; write two cache lines shared by all threads };\n"
		"NCS = --ncs x { pause; write thread-private data }.  Mutual exclusion is\n"
		"checked after each run (exit 1 if broken).\n"
		"\n"
		"Options:\n"
		"  --cs N             pause iterations inside the lock, at least 1 (default 100)\n"
		"  --ncs N            pause iterations outside the lock, 0 or more (default 10)\n");
	bench_common_help(f, MUTEX_DEFAULT_LOCKS);
	fprintf(f,
		"\n"
		"Locks:\n");
	bench_locks_print(f, "  ");
	fprintf(f,
		"\n"
		"Columns (one table per thread count; the run with the median ops/s):\n"
		"  Mops/s     all threads' lock/unlock pairs per second of wall time\n"
		"  thr-min/avg/max  per-thread rates, Mops/s; min/max = fairness (1 = fair)\n"
		"  futex/kop  futex syscalls per 1000 ops, summed over the threads' own\n"
		"             hl_futex_stats; '-' for glibc, whose futex calls are its own\n"
		"             and cannot be counted (JSON: null).  mcs makes none: 0\n"
		"  csw/kop    voluntary context switches per 1000 ops (getrusage)\n"
		"  cpu-s/Mop  CPU seconds (all threads) per million ops: spinning shows here\n"
		"  ratio      ops/s over the first lock's at the same thread count\n"
		"  limit%%     ops/s over the limit = the first lock's 1-thread rate x\n"
		"             min(cores, (cs + ncs) / cs); without 1 in --threads a short\n"
		"             1-thread calibration run of the first lock gives the rate\n"
		"\n"
		"Exit status: 0 ok, 1 a run failed (broken exclusion, a lock error, threads\n"
		"that did not stop within duration + 30 s), 2 bad command line.\n");
}

static int mutex_main(int argc, char **argv)
{
	static const char *const me = "mutex";
	struct mutex_ctx c = { .cs = 100, .ncs = 10 };
	struct bench_common common;
	struct bench_suite suite = {
		.scenario = me,
		.common = &common,
		.run = mutex_run,
		.json_config = mutex_json_config,
		.ctx = &c,
	};
	char params[64], formula[64];
	unsigned cores = bench_cores();
	double ratio;

	bench_common_defaults(&common, MUTEX_DEFAULT_LOCKS);
	for (int i = 1; i < argc; i++) {
		const char *v;

		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			mutex_help(stdout);
			return 0;
		}
		if (bench_common_option(&common, me, argc, argv, &i))
			continue;
		if ((v = bench_opt_value(me, argc, argv, &i, "--cs")))
			c.cs = bench_parse_ulong(me, "--cs", v, 1, 1000000000UL);
		else if ((v = bench_opt_value(me, argc, argv, &i, "--ncs")))
			c.ncs = bench_parse_ulong(me, "--ncs", v, 0, 1000000000UL);
		else if (argv[i][0] == '-')
			bench_usage_error(me, "unknown option '%s'", argv[i]);
		else
			bench_usage_error(me, "unexpected argument '%s'", argv[i]);
	}
	suite.nlocks = bench_locks_parse(me, common.locks, c.locks, BENCH_MAX_LOCKS);
	for (size_t l = 0; l < suite.nlocks; l++)
		suite.lock_names[l] = c.locks[l]->name;

	ratio = (double)(c.cs + c.ncs) / (double)c.cs;
	suite.limit_factor = ratio < cores ? ratio : cores;
	snprintf(formula, sizeof formula, "min(%u, %lu/%lu)", cores, c.cs + c.ncs, c.cs);
	snprintf(params, sizeof params, "cs=%lu ncs=%lu", c.cs, c.ncs);
	suite.params = params;
	suite.limit_formula = formula;
	return bench_suite_run(&suite);
}

const struct bench_scenario bench_scenario_mutex = {
	.name = "mutex",
	.summary = "T threads lock, write two shared lines, unlock, think; throughput and fairness",
	.main = mutex_main,
};

/* SPDX-License-Identifier: MIT */
/* hotlock-bench rwlock: throughput, fairness and futex cost of a contended
 * reader-writer lock; the tables of the TP-futex seed (reader grouping):
 *   (a) mixed threads at a reader percentage (--readers-pct, default 50):
 *       total ops, per-thread avg/min/max, futex calls by operation;
 *   (b) thread scaling (--threads): the per-thread average by thread count,
 *       after the tables;
 *   (c) 90/95/100% readers: --readers-pct 90, 95, 100, one invocation each;
 *   (d) --split R,W: R reader threads and W writer threads, --load L
 *       iterations of the critical section's work (1, 5, 50 in the seed),
 *       the reader and writer rates separately.
 * The workload and its checks are rwbench.c's; its columns and JSON
 * rwbench_report.c's. */
#include <string.h>

#include "locks.h"
#include "rwbench.h"

struct rwlock_ctx {
	const struct bench_rwlock *locks[BENCH_MAX_LOCKS];
	struct rw_workload w;
};

static void rwlock_run(void *ctx, size_t lock, unsigned threads, double duration_s,
		       struct bench_sample *out)
{
	struct rwlock_ctx *c = ctx;

	rw_measure(c->locks[lock], &c->w, threads, duration_s, out);
}

static void rwlock_json_config(void *ctx, struct bench_json *j)
{
	const struct rwlock_ctx *c = ctx;

	rw_json_workload(j, &c->w);
}

static void rwlock_help_more(FILE *f)
{
	static const struct bench_column *const help_columns[] = {
		&bench_col_mops, &rw_col_rd_mops, &rw_col_wr_mops,
		&bench_col_thr_min, &bench_col_thr_avg, &bench_col_thr_max,
		&bench_col_fairness,
		&rw_col_futex[RW_WRLOCK], &rw_col_futex[RW_WRUNLOCK],
		&rw_col_futex[RW_RDLOCK], &rw_col_futex[RW_RDUNLOCK],
		&bench_col_csw, &bench_col_cpu, &bench_col_ratio,
		&rw_col_side[RW_READ][0], &rw_col_side[RW_READ][1], &rw_col_side[RW_READ][2],
		&rw_col_side[RW_WRITE][0], &rw_col_side[RW_WRITE][1], &rw_col_side[RW_WRITE][2],
		&rw_col_wr_rd, &rw_col_thr_avg_k,
	};

	fprintf(f, "Locks (reader-writer):\n");
	bench_rwlocks_print(f, "  ");
	fprintf(f, "\nColumns (one table per thread count; the run with the median ops/s;\n"
		"--split: rd-* wr-* wr/rd instead of rd-/wr-Mops and thr-*):\n");
	bench_columns_help(f, help_columns, sizeof help_columns / sizeof help_columns[0]);
	fprintf(f, "\n");
	rw_help_common(f);
	fprintf(f,
		"\n"
		"Exit status: 0 ok, 1 a run failed (broken exclusion, a lock error, threads\n"
		"that did not stop within duration + 30 s), 2 bad command line.\n");
}

/* --split "R,W"; at is the workload. */
static void parse_split(void *at, const char *me, const char *v)
{
	struct rw_workload *w = at;
	const char *comma = strchr(v, ',');
	char r[32];

	if (!comma || strchr(comma + 1, ','))
		bench_usage_error(me, "--split: '%s' is not R,W (two whole numbers)", v);
	if ((size_t)(comma - v) >= sizeof r)
		bench_usage_error(me, "--split: '%s' is not R,W (two whole numbers)", v);
	memcpy(r, v, (size_t)(comma - v));
	r[comma - v] = '\0';
	w->readers = bench_parse_ulong(me, "--split (readers)", r, 0, BENCH_MAX_THREADS);
	w->writers = bench_parse_ulong(me, "--split (writers)", comma + 1, 0,
				       BENCH_MAX_THREADS);
	if (w->readers + w->writers == 0 || w->readers + w->writers > BENCH_MAX_THREADS)
		bench_usage_error(me, "--split: %u readers + %u writers: the total must be "
				  "1 to %u", w->readers, w->writers, BENCH_MAX_THREADS);
	w->split = true;
}

static const struct bench_column *const mixed_columns[] = {
	&bench_col_mops, &rw_col_rd_mops, &rw_col_wr_mops,
	&bench_col_thr_min, &bench_col_thr_avg, &bench_col_thr_max, &bench_col_fairness,
	&rw_col_futex[RW_WRLOCK], &rw_col_futex[RW_WRUNLOCK],
	&rw_col_futex[RW_RDLOCK], &rw_col_futex[RW_RDUNLOCK],
	&bench_col_csw, &bench_col_cpu, &bench_col_ratio,
};

static const struct bench_column *const split_columns[] = {
	&bench_col_mops,
	&rw_col_side[RW_READ][0], &rw_col_side[RW_READ][1], &rw_col_side[RW_READ][2],
	&rw_col_side[RW_WRITE][0], &rw_col_side[RW_WRITE][1], &rw_col_side[RW_WRITE][2],
	&rw_col_wr_rd,
	&rw_col_futex[RW_WRLOCK], &rw_col_futex[RW_WRUNLOCK],
	&rw_col_futex[RW_RDLOCK], &rw_col_futex[RW_RDUNLOCK],
	&bench_col_csw, &bench_col_cpu, &bench_col_ratio,
};

static const struct bench_column *const scaling_summary[] = { &rw_col_thr_avg_k };

static int rwlock_main(void *ctx, struct bench_common *common)
{
	static const char *const me = "rwlock";
	struct rwlock_ctx *c = ctx;
	struct bench_suite suite = {
		.scenario = me,
		.lock_role = bench_lock_role,
		.common = common,
		.run = rwlock_run,
		.json_config = rwlock_json_config,
		.json_sample = rw_json_sample,
		.ctx = c,
	};
	char params[128];

	if (c->w.split && bench_option_given("--readers-pct"))
		bench_usage_error(me, "--split and --readers-pct do not go together: with "
				  "--split every thread only reads or only writes");
	if (c->w.split && bench_option_given("--threads"))
		bench_usage_error(me, "--split R,W sets the thread count (R + W); leave "
				  "out --threads");
	suite.nlocks = bench_rwlocks_parse(me, common->locks, c->locks, BENCH_MAX_LOCKS);
	for (size_t l = 0; l < suite.nlocks; l++)
		suite.lock_names[l] = c->locks[l]->name;

	if (c->w.split) {
		common->threads[0] = c->w.readers + c->w.writers;
		common->nthreads = 1;
		suite.columns = split_columns;
		suite.ncolumns = sizeof split_columns / sizeof split_columns[0];
		snprintf(params, sizeof params, "split=%u,%u load=%lu ncs=%lu",
			 c->w.readers, c->w.writers, c->w.load, c->w.ncs);
	} else {
		suite.columns = mixed_columns;
		suite.ncolumns = sizeof mixed_columns / sizeof mixed_columns[0];
		if (common->nthreads > 1) {
			suite.summary = scaling_summary;
			suite.nsummary = 1;
		}
		snprintf(params, sizeof params, "readers=%u%% load=%lu ncs=%lu",
			 c->w.readers_pct, c->w.load, c->w.ncs);
	}
	suite.params = params;
	return bench_suite_run(&suite);
}

_Static_assert(BENCH_MAX_THREADS == 1024, "--split's help says 1 to 1024");

static const struct bench_option rwlock_options[] = {
	{ "--readers-pct", "P", BENCH_OPT_UINT, offsetof(struct rwlock_ctx, w.readers_pct),
	  0, 100, .help = "the chance that an op reads, %" },
	{ "--split", "R,W", BENCH_OPT_CALL, offsetof(struct rwlock_ctx, w),
	  .parse = parse_split, .help = "R reader and W writer threads (R + W = 1 to "
	  "1024); the run's thread count, so not with --threads, and not with "
	  "--readers-pct" },
	RW_WORKLOAD_OPTIONS(struct rwlock_ctx, w),
	{ 0 },
};

static const struct rwlock_ctx rwlock_defaults = {
	.w = { .readers_pct = 50, .load = 1, .ncs = 1 },
};

const struct bench_scenario bench_scenario_rwlock = {
	.name = "rwlock",
	.summary = "readers and writers, mixed or split; rates, fairness, futex calls by operation",
	.about =
	"T threads loop { read-lock or write-lock; CS; unlock; NCS } for --duration\n"
	"seconds, started together.  Each op is a read with probability\n"
	"--readers-pct (a per-thread random draw), or with --split R,W threads\n"
	"0..R-1 only read and the other W only write.  CS = --load x { pause; on\n"
	"two cache lines shared by all threads, a reader reads a counter and a\n"
	"writer increments it }; NCS = --ncs x { pause; write thread-private data }.\n"
	"The seed's tables: --readers-pct 50 (and --threads for its scaling table);\n"
	"--readers-pct 90, 95 and 100, one invocation each; --split R,W with\n"
	"--load 1, 5 and 50.  Its writer-preferring tables: the -writer locks.",
	.options = rwlock_options,
	.common = BENCH_COMMON_SUITE,
	.default_locks = BENCH_RWLOCK_DEFAULTS,
	.ctx_size = sizeof(struct rwlock_ctx),
	.ctx_init = &rwlock_defaults,
	.help_more = rwlock_help_more,
	.run = rwlock_main,
};

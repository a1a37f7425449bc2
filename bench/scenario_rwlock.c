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
 * The workload, its checks and its columns are rwbench.c's. */
#include <string.h>

#include "rwbench.h"

struct rwlock_ctx {
	const struct bench_rwlock *locks[BENCH_MAX_LOCKS];
	struct rw_workload w;
	bool pct_given;         /* --readers-pct was on the command line */
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

static void rwlock_help(FILE *f)
{
	fprintf(f,
		"Usage: hotlock-bench rwlock [OPTIONS]\n"
		"\n"
		"T threads loop { read-lock or write-lock; CS; unlock; NCS } for --duration\n"
		"seconds, started together.  Each op is a read with probability\n"
		"--readers-pct (a per-thread random draw), or with --split R,W threads\n"
		"0..R-1 only read and the other W only write.  CS = --load x { pause; on\n"
		"two cache lines shared by all threads, a reader reads a counter and a\n"
		"writer increments it }; NCS = --ncs x { pause; write thread-private data }.\n"
		"The seed's tables: --readers-pct 50 (and --threads for its scaling table);\n"
		"--readers-pct 90, 95 and 100, one invocation each; --split R,W with\n"
		"--load 1, 5 and 50.  Its writer-preferring tables: the -writer locks.\n"
		"\n"
		"Options:\n"
		"  --readers-pct P    the chance that an op reads, 0 to 100 %% (default 50)\n"
		"  --split R,W        R reader and W writer threads (R + W = 1 to %u); the\n"
		"                     run's thread count, so not with --threads, and not\n"
		"                     with --readers-pct\n",
		BENCH_MAX_THREADS);
	rw_workload_help(f);
	bench_common_help(f, BENCH_RWLOCK_DEFAULTS);
	fprintf(f,
		"\n"
		"Locks (reader-writer):\n");
	bench_rwlocks_print(f, "  ");
	fprintf(f,
		"\n"
		"Columns (one table per thread count; the run with the median ops/s):\n"
		"  Mops/s     all threads' lock/unlock pairs per second of wall time\n"
		"  rd-Mops, wr-Mops  the read and the write ops among them\n"
		"  thr-min/avg/max  per-thread rates, Mops/s; min/max = fairness (1 = fair)\n"
		"  fx-wl, fx-wu, fx-rl, fx-ru  futex calls per 1000 ops by operation\n"
		"  csw/kop    voluntary context switches per 1000 ops (getrusage)\n"
		"  cpu-s/Mop  CPU seconds (all threads) per million ops\n"
		"  ratio      ops/s over the first lock's at the same thread count\n"
		"With --split, instead of rd-/wr-Mops and thr-*:\n"
		"  rd-avg, rd-min, rd-max  the reader threads' average, slowest and\n"
		"             fastest rate, kops/s per thread (the seed's reader rate is\n"
		"             the average); wr-avg, wr-min, wr-max the same for writers\n"
		"  wr/rd      wr-avg over rd-avg: 0 where the writers starve\n"
		"With more than one thread count, a last table gives the per-thread\n"
		"average by thread count, kops/s (the seed's scaling table).\n");
	rw_help_common(f);
	fprintf(f,
		"\n"
		"Exit status: 0 ok, 1 a run failed (broken exclusion, a lock error, threads\n"
		"that did not stop within duration + 30 s), 2 bad command line.\n");
}

/* "R,W" */
static void parse_split(const char *me, const char *v, struct rw_workload *w)
{
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

/* The scenario's own options (bench_parse_args). */
static bool rwlock_option(void *ctx, int argc, char **argv, int *i)
{
	static const char *const me = "rwlock";
	struct rwlock_ctx *c = ctx;
	const char *v;

	if ((v = bench_opt_value(me, argc, argv, i, "--readers-pct"))) {
		c->w.readers_pct = bench_parse_ulong(me, "--readers-pct", v, 0, 100);
		c->pct_given = true;
	} else if ((v = bench_opt_value(me, argc, argv, i, "--split"))) {
		parse_split(me, v, &c->w);
	} else {
		return rw_workload_option(me, argc, argv, i, &c->w);
	}
	return true;
}

static int rwlock_main(int argc, char **argv)
{
	static const char *const me = "rwlock";
	struct rwlock_ctx c = { .w = { .readers_pct = 50, .load = 1, .ncs = 1 } };
	struct bench_common common;
	struct bench_suite suite = {
		.scenario = me,
		.common = &common,
		.run = rwlock_run,
		.json_config = rwlock_json_config,
		.json_sample = rw_json_sample,
		.ctx = &c,
	};
	char params[128];

	bench_common_defaults(&common, BENCH_RWLOCK_DEFAULTS);
	bench_parse_args(me, argc, argv, &common, rwlock_help, rwlock_option, &c);
	if (c.w.split && c.pct_given)
		bench_usage_error(me, "--split and --readers-pct do not go together: with "
				  "--split every thread only reads or only writes");
	if (c.w.split && common.threads_given)
		bench_usage_error(me, "--split R,W sets the thread count (R + W); leave "
				  "out --threads");
	suite.nlocks = bench_rwlocks_parse(me, common.locks, c.locks, BENCH_MAX_LOCKS);
	for (size_t l = 0; l < suite.nlocks; l++)
		suite.lock_names[l] = c.locks[l]->name;

	if (c.w.split) {
		common.threads[0] = c.w.readers + c.w.writers;
		common.nthreads = 1;
		suite.columns = split_columns;
		suite.ncolumns = sizeof split_columns / sizeof split_columns[0];
		snprintf(params, sizeof params, "split=%u,%u load=%lu ncs=%lu",
			 c.w.readers, c.w.writers, c.w.load, c.w.ncs);
	} else {
		suite.columns = mixed_columns;
		suite.ncolumns = sizeof mixed_columns / sizeof mixed_columns[0];
		if (common.nthreads > 1) {
			suite.summary = scaling_summary;
			suite.nsummary = 1;
		}
		snprintf(params, sizeof params, "readers=%u%% load=%lu ncs=%lu",
			 c.w.readers_pct, c.w.load, c.w.ncs);
	}
	suite.params = params;
	return bench_suite_run(&suite);
}

const struct bench_scenario bench_scenario_rwlock = {
	.name = "rwlock",
	.summary = "readers and writers, mixed or split; rates, fairness, futex calls by operation",
	.main = rwlock_main,
};

/* SPDX-License-Identifier: MIT */
/* hotlock-bench rwsem: the table of the rwsem seed (the owner merged into
 * the count): the total locking rate of writer-only threads (wlock) and of
 * equal numbers of reader and writer threads (mixed), by thread count, and
 * with --rt the same with the workers under SCHED_FIFO.
 *
 * The measurement is the rwlock scenario's (rwbench.c) with split threads:
 * wlock is T writers, mixed T/2 readers and T - T/2 writers (the odd thread
 * out writes, so 1 thread is one writer in both).  Each (lock, mode) pair is
 * one entry of the suite, so that the runs interleave across locks and modes
 * and the summary table has the seed's shape: a row per thread count, a
 * wlock and a mixed column per lock. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "locks.h"
#include "rwbench.h"

/* The workers' SCHED_FIFO priority under --rt, and the main thread's, above
 * them, so that it ends each run on time however the workers spin. */
#define RWSEM_RT_WORKER 1
#define RWSEM_RT_MAIN   2

enum rwsem_mode { RWSEM_WLOCK, RWSEM_MIXED, RWSEM_NMODES };
static const char *const mode_names[RWSEM_NMODES] = { "wlock", "mixed" };

struct rwsem_ctx {
	/* Entry e is lock e / 2 in mode e % 2. */
	const struct bench_rwlock *locks[BENCH_MAX_LOCKS / RWSEM_NMODES];
	char names[BENCH_MAX_LOCKS][48];
	struct rw_workload base;        /* --load, --ncs */
	bool rt;
};

static void rwsem_run(void *ctx, size_t entry, unsigned threads, double duration_s,
		      struct bench_sample *out)
{
	const struct rwsem_ctx *c = ctx;
	const enum rwsem_mode mode = (enum rwsem_mode)(entry % RWSEM_NMODES);
	const struct rw_workload w = {
		.mode = mode_names[mode],
		.split = true,
		.readers = mode == RWSEM_MIXED ? threads / 2 : 0,
		.writers = mode == RWSEM_MIXED ? threads - threads / 2 : threads,
		.load = c->base.load,
		.ncs = c->base.ncs,
		.fifo_priority = c->rt ? RWSEM_RT_WORKER : 0,
	};

	rw_measure(c->locks[entry / RWSEM_NMODES], &w, threads, duration_s, out);
}

static void rwsem_json_config(void *ctx, struct bench_json *j)
{
	const struct rwsem_ctx *c = ctx;
	bench_json_bool(j, "rt", c->rt);
	if (c->rt)
		bench_json_uint(j, "rt_priority", RWSEM_RT_WORKER);
	rw_json_workload(j, &c->base);
}

static void rwsem_help_more(FILE *f)
{
	fprintf(f, "At most %u locks: each is measured in both modes.\n"
		"\n"
		"Locks (reader-writer):\n", BENCH_MAX_LOCKS / RWSEM_NMODES);
	bench_rwlocks_print(f, "  ");
	fprintf(f,
		"\n"
		"Tables, a row per thread count and a column per lock and mode (the run\n"
		"with the median ops/s): the total locking rate in kops/s, then the\n"
		"per-thread min/max (fairness, 1 = fair).  The JSON has every run with\n"
		"the rwlock scenario's members; its \"lock\" is LOCK/MODE, with \"rwlock\"\n"
		"and \"mode\" apart, and its ratio is against the first column.\n"
		"\n");
	rw_help_common(f);
	fprintf(f,
		"\n"
		"Exit status: 0 ok (also --rt skipped), 1 a run failed, 2 bad command line.\n");
}

/* --rt: puts the calling (main) thread under SCHED_FIFO above the workers,
 * saving its old policy in *policy and *param.  Returns 0, or EPERM when
 * the process may not (other errors exit 1). */
static int rt_enter(int *policy, struct sched_param *param)
{
	struct sched_param sp = { .sched_priority = RWSEM_RT_MAIN };
	int err;

	bench_check(pthread_getschedparam(pthread_self(), policy, param),
		    "pthread_getschedparam");
	err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	if (err != EPERM)
		bench_check(err, "pthread_setschedparam(SCHED_FIFO)");
	return err;
}

/* The one line, and the JSON, of an --rt run the process may not make. */
static int rt_skipped(const struct bench_common *common)
{
	static const char why[] =
		"this process may not use SCHED_FIFO (pthread_setschedparam: "
		"Operation not permitted; it needs CAP_SYS_NICE, or RLIMIT_RTPRIO "
		"of at least 2: ulimit -r)";

	printf("rwsem --rt: skipped: %s\n", why);
	if (common->json) {
		struct bench_json *j = bench_json_open(common->json);

		bench_json_object(j, NULL);
		bench_json_string(j, "bench", "rwsem");
		bench_json_bool(j, "rt", true);
		bench_json_string(j, "skipped", why);
		bench_json_end(j);
		bench_json_close(j);
	}
	return 0;
}

static const struct bench_column *const rwsem_summary[] = {
	&rw_col_total_k, &bench_col_fairness,
};

static int rwsem_main(void *ctx, struct bench_common *common)
{
	static const char *const me = "rwsem";
	struct rwsem_ctx *c = ctx;
	struct bench_suite suite = {
		.scenario = me,
		.lock_role = bench_lock_role,
		.common = common,
		.run = rwsem_run,
		.json_config = rwsem_json_config,
		.json_sample = rw_json_sample,
		.summary = rwsem_summary,
		.nsummary = sizeof rwsem_summary / sizeof rwsem_summary[0],
		.summary_only = true,
		.ctx = c,
	};
	char params[160];
	size_t nlocks;
	int policy = SCHED_OTHER, ret;
	struct sched_param param = { 0 };

	nlocks = bench_rwlocks_parse(me, common->locks, c->locks, BENCH_MAX_LOCKS / RWSEM_NMODES);
	suite.nlocks = nlocks * RWSEM_NMODES;
	for (size_t e = 0; e < suite.nlocks; e++) {
		snprintf(c->names[e], sizeof c->names[e], "%s/%s",
			 c->locks[e / RWSEM_NMODES]->name, mode_names[e % RWSEM_NMODES]);
		suite.lock_names[e] = c->names[e];
	}
	snprintf(params, sizeof params, "wlock=T writers, mixed=T/2 readers + T-T/2 "
		 "writers, load=%lu ncs=%lu%s", c->base.load, c->base.ncs,
		 c->rt ? " rt=SCHED_FIFO" : "");
	suite.params = params;

	if (c->rt && rt_enter(&policy, &param) == EPERM)
		return rt_skipped(common);
	ret = bench_suite_run(&suite);
	if (c->rt)
		bench_check(pthread_setschedparam(pthread_self(), policy, &param),
			    "pthread_setschedparam (back)");
	return ret;
}

_Static_assert(RWSEM_RT_WORKER == 1 && RWSEM_RT_MAIN == 2, "--rt's help names them");

static const struct bench_option rwsem_options[] = {
	{ "--rt", NULL, BENCH_OPT_FLAG, offsetof(struct rwsem_ctx, rt), .help =
	  "the workers run under SCHED_FIFO (priority 1, the main thread at 2 to "
	  "end each run on time), as the seed's RT table.  Where the process may "
	  "not use SCHED_FIFO (no CAP_SYS_NICE, RLIMIT_RTPRIO below 2), one line "
	  "says it is skipped and why, and the exit status is 0 (with --json, a "
	  "JSON object saying so)" },
	RW_WORKLOAD_OPTIONS(struct rwsem_ctx, base),
	{ 0 },
};

static const struct rwsem_ctx rwsem_defaults = {
	.base = { .mode = "rwsem", .load = 1, .ncs = 1 },
};

const struct bench_scenario bench_scenario_rwsem = {
	.name = "rwsem",
	.summary = "writers only, and equal readers and writers, by thread count; --rt: SCHED_FIFO",
	.about =
	"The rwsem seed's table: for each thread count T and lock, the total rate\n"
	"of lock/unlock pairs of\n"
	"  wlock  T writer threads;\n"
	"  mixed  T/2 reader and T - T/2 writer threads (1 thread: one writer).\n"
	"Each thread loops { lock; CS; unlock; NCS } for --duration seconds, as in\n"
	"'hotlock-bench rwlock --split' (see its --help): CS = --load x { pause;\n"
	"read (reader) or increment (writer) a counter on each of two shared\n"
	"cache lines }, NCS = --ncs pauses.",
	.options = rwsem_options,
	.common = BENCH_COMMON_SUITE,
	.default_locks = BENCH_RWLOCK_DEFAULTS,
	.ctx_size = sizeof(struct rwsem_ctx),
	.ctx_init = &rwsem_defaults,
	.help_more = rwsem_help_more,
	.run = rwsem_main,
};

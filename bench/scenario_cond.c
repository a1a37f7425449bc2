/* SPDX-License-Identifier: MIT */
/* hotlock-bench cond: condition variables compared, each with the mutex it
 * comes with (conds.h): glibc's, hotlock's (wait morphing) and futex-cv (the
 * classic wake-all futex condvar).  Three workloads:
 *
 *   queue      P producer and C consumer threads pass items through a
 *              bounded ring (--capacity) under one mutex, with two condvars:
 *              a producer waits on not_full while the ring is full, pushes,
 *              signals not_empty; a consumer waits on not_empty while it is
 *              empty, pops, signals not_full; each signals with the mutex
 *              held and unlocks after every item.  Checked after the run:
 *              every item produced was consumed or is still in the ring
 *              (counts and sums).
 *   broadcast  one thread broadcasts to N waiters, which each take the
 *              mutex, run a short critical section (--cs pauses and an
 *              increment of a shared counter) and go back to waiting; the
 *              last of them signals the broadcaster on a second condvar.
 *              A round: under the mutex the broadcaster bumps a generation,
 *              reads the clock, broadcasts and waits for the N; the last
 *              waiter reads the clock at the end of its critical section.
 *              The latency of a round is the difference; a run reports the
 *              median and the 90th percentile over its rounds.  Checked:
 *              every waiter sees every generation once, and the counter
 *              equals the critical sections run.
 *   pingpong   two threads hand a turn back and forth through one mutex and
 *              two condvars: each waits on its own condvar until the turn is
 *              its, passes it and signals the other's, with the mutex held
 *              throughout but for its waits.  A round trip is two signals.
 *
 * Every run is one bench_run (harness.h): the threads start together, the
 * harness counts each one's futex calls, voluntary context switches and CPU
 * time; at the end of --duration its on_stop takes the mutex, sets a
 * stopping flag and broadcasts every condvar, so that no thread is left
 * asleep.  The runs interleave across condvars within each repeat, as the
 * suites' do; the table shows the run with the median of the workload's
 * measure (items/s, median latency, round trips/s) and its spread over the
 * repeats.
 *
 * This file: the command line and --help, and the configurations it asks
 * for.  cond/: a workload each (queue.c, broadcast.c, pingpong.c: its
 * bodies, checks, columns and JSON members), one measurement (run.c), the
 * runs of the configurations, their tables and JSON (suite.c). */
#include <stdlib.h>
#include <string.h>

#include "cond/cond.h"

#define COND_DEFAULT_PAIRS   "1,1:2,2:4,4:1,7:7,1"
#define COND_DEFAULT_WAITERS "2,4,8,16,32,64"
#define COND_MAX_CAPACITY    (1ul << 20)

const struct cond_workload *const cond_workloads[COND_NKINDS] = {
	[COND_QUEUE] = &cond_queue,
	[COND_BROADCAST] = &cond_broadcast,
	[COND_PINGPONG] = &cond_pingpong,
};

/* A queue configuration. */
struct cond_pair {
	unsigned producers, consumers;
};

struct cond_ctx {
	bool kind[COND_NKINDS]; /* --scenario */
	struct cond_pair pairs[BENCH_MAX_THREAD_COUNTS];    /* --threads */
	size_t npairs;
	unsigned waiters[BENCH_MAX_THREAD_COUNTS];          /* --waiters */
	size_t nwaiters;
	unsigned long capacity; /* --capacity: queue slots */
	unsigned long cs;       /* --cs: pauses in a broadcast waiter's section */
};

static void scenario_item(void *ctx, const char *name)
{
	bool *kind = ctx;
	int k;

	for (k = 0; k < COND_NKINDS && strcmp(name, cond_workloads[k]->name) != 0; k++)
		;
	if (k == COND_NKINDS)
		bench_usage_error("cond", "--scenario: unknown scenario '%s' (valid: queue, "
				  "broadcast, pingpong)", name);
	kind[k] = true;
}

/* --scenario "S,...": at is cond_ctx.kind. */
static void parse_scenarios(void *at, const char *me, const char *list)
{
	memset(at, 0, COND_NKINDS * sizeof(bool));
	bench_list_each(me, "--scenario", list, scenario_item, at);
}

/* --threads "P,C:P,C:..." into c->pairs, duplicates dropped; at is c. */
static void parse_pairs(void *at, const char *me, const char *list)
{
	struct cond_ctx *c = at;
	const char *p = list;

	c->npairs = 0;
	for (;;) {
		const size_t len = strcspn(p, ":");
		char entry[64], *comma;
		struct cond_pair pr;
		size_t i;

		if (len == 0 || len >= sizeof entry)
			bench_usage_error(me, "--threads: '%s' is not a list of P,C pairs "
					  "(producers,consumers) separated by ':', e.g. 1,1:4,4",
					  list);
		memcpy(entry, p, len);
		entry[len] = '\0';
		comma = strchr(entry, ',');
		if (!comma || strchr(comma + 1, ','))
			bench_usage_error(me, "--threads: '%s' is not P,C (producers,consumers); "
					  "pairs are separated by ':', e.g. 1,1:4,4", entry);
		*comma = '\0';
		pr.producers = bench_parse_ulong(me, "--threads (producers)", entry, 1,
						 BENCH_MAX_THREADS - 1);
		pr.consumers = bench_parse_ulong(me, "--threads (consumers)", comma + 1, 1,
						 BENCH_MAX_THREADS - 1);
		if (pr.producers + pr.consumers > BENCH_MAX_THREADS)
			bench_usage_error(me, "--threads: %u producers + %u consumers: at most %u "
					  "threads", pr.producers, pr.consumers, BENCH_MAX_THREADS);
		for (i = 0; i < c->npairs; i++)
			if (c->pairs[i].producers == pr.producers &&
			    c->pairs[i].consumers == pr.consumers)
				break;
		if (i == c->npairs) {
			if (c->npairs == BENCH_MAX_THREAD_COUNTS)
				bench_usage_error(me, "--threads: more than %u pairs",
						  BENCH_MAX_THREAD_COUNTS);
			c->pairs[c->npairs++] = pr;
		}
		if (p[len] == '\0')
			return;
		p += len + 1;
	}
}

static void waiters_item(void *ctx, const char *entry)
{
	struct cond_ctx *c = ctx;
	const unsigned n = bench_parse_ulong("cond", "--waiters", entry, 1,
					     BENCH_MAX_THREADS - 1);

	for (size_t i = 0; i < c->nwaiters; i++)
		if (c->waiters[i] == n)
			return;
	if (c->nwaiters == BENCH_MAX_THREAD_COUNTS)
		bench_usage_error("cond", "--waiters: more than %u entries",
				  BENCH_MAX_THREAD_COUNTS);
	c->waiters[c->nwaiters++] = n;
}

/* --waiters "N,...", duplicates dropped; at is the cond_ctx. */
static void parse_waiters(void *at, const char *me, const char *list)
{
	struct cond_ctx *c = at;

	c->nwaiters = 0;
	bench_list_each(me, "--waiters", list, waiters_item, c);
}

/* An option of a workload left out by --scenario: exit 2. */
static void check_used(const struct cond_ctx *c, const char *opt, enum cond_kind kind)
{
	if (bench_option_given(opt) && !c->kind[kind])
		bench_usage_error("cond", "%s is for the %s scenario, which --scenario "
				  "leaves out", opt, cond_workloads[kind]->name);
}

static int cond_main(void *ctx, struct bench_common *common)
{
	static const char *const me = "cond";
	struct cond_ctx *c = ctx;
	struct cond_suite suite = { .common = common };
	struct cond_shape *k;
	size_t nk = 0;
	int status;

	check_used(c, "--threads", COND_QUEUE);
	check_used(c, "--capacity", COND_QUEUE);
	check_used(c, "--waiters", COND_BROADCAST);
	check_used(c, "--cs", COND_BROADCAST);
	if (!bench_option_given("--threads"))
		parse_pairs(c, me, COND_DEFAULT_PAIRS);
	if (!bench_option_given("--waiters"))
		parse_waiters(c, me, COND_DEFAULT_WAITERS);
	suite.nconds = bench_conds_parse(me, common->locks, suite.conds, BENCH_MAX_LOCKS);
	for (size_t l = 0; l < suite.nconds; l++) {
		suite.names[l] = suite.conds[l]->name;
		if (strcmp(suite.names[l], "glibc") == 0)
			suite.base = l;
	}

	/* The configurations, in order: the queue's pairs, the waiter counts,
	 * pingpong. */
	k = bench_xcalloc(c->npairs + c->nwaiters + 1, sizeof *k);
	if (c->kind[COND_QUEUE])
		for (size_t i = 0; i < c->npairs; i++)
			k[nk++] = (struct cond_shape){ .kind = COND_QUEUE,
				.producers = c->pairs[i].producers,
				.consumers = c->pairs[i].consumers,
				.capacity = c->capacity };
	if (c->kind[COND_BROADCAST])
		for (size_t i = 0; i < c->nwaiters; i++)
			k[nk++] = (struct cond_shape){ .kind = COND_BROADCAST,
				.waiters = c->waiters[i], .cs = c->cs };
	if (c->kind[COND_PINGPONG])
		k[nk++] = (struct cond_shape){ .kind = COND_PINGPONG };
	suite.shapes = k;
	suite.nshapes = nk;
	status = cond_suite_run(&suite);
	free(k);
	return status;
}

_Static_assert(BENCH_MAX_THREADS == 1024, "--threads' and --waiters' help say 1024");

#define OPT(field) offsetof(struct cond_ctx, field)

static const struct bench_option cond_options[] = {
	{ "--scenario", "S,...", BENCH_OPT_CALL, OPT(kind), .parse = parse_scenarios,
	  .help = "the workloads, of queue, broadcast and pingpong; they run in that "
	  "order", .default_text = "all three" },
	{ "--threads", "P,C:P,C:...", BENCH_OPT_CALL, 0, .parse = parse_pairs, .help =
	  "queue: producer,consumer pairs, ':' between pairs, each count at least 1, "
	  "P + C at most 1024, run in the order given",
	  .default_text = COND_DEFAULT_PAIRS },
	{ "--capacity", "N", BENCH_OPT_ULONG, OPT(capacity), 1, COND_MAX_CAPACITY, .help =
	  "queue: items the ring holds" },
	{ "--waiters", "N,...", BENCH_OPT_CALL, 0, .parse = parse_waiters, .help =
	  "broadcast: waiter counts, 1 to 1023 each, run in the order given",
	  .default_text = COND_DEFAULT_WAITERS },
	{ "--cs", "N", BENCH_OPT_ULONG, OPT(cs), 0, 1e9, .help =
	  "broadcast: pause iterations in each waiter's critical section" },
	{ 0 },
};

static const struct cond_ctx cond_defaults = {
	.kind = { [COND_QUEUE] = true, [COND_BROADCAST] = true, [COND_PINGPONG] = true },
	.capacity = 16, .cs = 10,
};

/* A workload's columns but those every table has, under heading. */
static void workload_columns_help(FILE *f, const char *heading, const struct cond_workload *w)
{
	const struct bench_column *cols[32];
	size_t n = 0;

	for (size_t i = 0; w->columns[i] && n < sizeof cols / sizeof cols[0]; i++)
		if (w->columns[i] != &cond_col_spread && w->columns[i] != &cond_col_ratio)
			cols[n++] = w->columns[i];
	fprintf(f, "\n%s\n", heading);
	bench_columns_help(f, cols, n);
}

static void cond_help_more(FILE *f)
{
	static const struct bench_column *const every[] = {
		&cond_col_spread, &cond_col_ratio,
	};
	static const char *const heading[COND_NKINDS] = {
		[COND_QUEUE] = "queue (a table per P,C; the run with the median items/s):",
		[COND_BROADCAST] = "broadcast (a table per N; the run with the median latency):",
		[COND_PINGPONG] = "pingpong (the run with the median round trips/s):",
	};

	fprintf(f, "Condvars, each with its mutex (--locks; groups 'all' and 'peers'; the\n"
		"baseline of 'ratio' is glibc when listed, else the first):\n");
	bench_conds_print(f, "  ");
	fprintf(f, "\nColumns of every table:\n");
	bench_columns_help(f, every, sizeof every / sizeof every[0]);
	fprintf(f, "The futex, csw and cpu columns: all threads' futex syscalls as hotlock's\n"
		"futex layer counts them ('-' for glibc, whose calls are its own and cannot\n"
		"be counted: JSON null), voluntary context switches (getrusage) and CPU\n"
		"time, per op of the table's unit.\n");
	for (int kind = 0; kind < COND_NKINDS; kind++)
		workload_columns_help(f, heading[kind], cond_workloads[kind]);
	fprintf(f,
		"\n"
		"JSON: one file; each result's \"lock\" is CONDVAR/WORKLOAD-CONFIG\n"
		"(glibc/queue-4p4c, hotlock/broadcast-8w, futex-cv/pingpong), with \"cond\",\n"
		"\"scenario\" and its parameters apart; ops_per_sec is items/s, rounds/s or\n"
		"round trips/s, so that 'hotlock-bench compare' compares them; the\n"
		"queue's adds producer_/consumer_items_per_sec_min/avg/max, the\n"
		"broadcast's latency_us_median and _p90, broadcast_call_futex_calls_per_round\n"
		"and broadcaster_csw_per_round (the broadcaster thread's own context\n"
		"switches, its wait for the reply included: one in its broadcast call\n"
		"cannot be told apart without a syscall in the timed path).\n"
		"\n"
		"Exit status: 0 ok, 1 a run failed (a check, a condvar error, threads that\n"
		"did not stop within duration + 30 s), 2 bad command line.\n");
}

const struct bench_scenario bench_scenario_cond = {
	.name = "cond",
	.summary = "condition variables: a producer/consumer queue, a broadcast to N waiters, a ping-pong",
	.about =
	"Condition variables compared, each with its own mutex, in three workloads:\n"
	"  queue      P producers and C consumers pass items through a bounded ring\n"
	"             under one mutex, with condvars not_empty and not_full (wait\n"
	"             while full or empty, push or pop, signal the other side with\n"
	"             the mutex held, unlock); items lost or doubled exit 1\n"
	"  broadcast  one thread broadcasts (with the mutex held) to N waiters, which\n"
	"             each take the mutex, run a short critical section and wait\n"
	"             again; the last one signals the broadcaster on a second\n"
	"             condvar.  Latency: from just before the broadcast call to the\n"
	"             end of the last waiter's critical section\n"
	"  pingpong   two threads pass a turn through one mutex and two condvars\n"
	"Each (workload, configuration, condvar) runs --duration seconds, --repeat\n"
	"times, interleaved across condvars; at the end of a run the mutex is taken,\n"
	"a stop flag set and every condvar broadcast, so no thread is left asleep.",
	.options = cond_options,
	.common = BENCH_COMMON_SUITE & ~BENCH_COMMON_THREADS,
	.default_locks = BENCH_COND_DEFAULTS,
	.ctx_size = sizeof(struct cond_ctx),
	.ctx_init = &cond_defaults,
	.help_more = cond_help_more,
	.run = cond_main,
};

/* SPDX-License-Identifier: MIT */
/* The contention report's advice rules (tools/report.c's advise_lock and
 * advise_cond; docs/stats.md's table), each on synthetic records: the
 * report is made as hotlock-run's collector makes it, from a struct
 * stats_report built here, and its JSON read back with jansson.
 *
 *   stats_advice
 *
 * For every rule: it fires at its thresholds (each is inclusive: "at
 * least", "at most"), and its sentence holds the numbers that fired it; it
 * does not fire one step short of each threshold; no-action is there
 * exactly when nothing else fired; the rwlock rules never fire on a mutex;
 * use-cna needs two nodes and a queue that is not CNA already; the lock
 * rules but timeouts stay quiet on a lock waited for under 1% of the
 * thread time.  Then the
 * tables: locks by total wait (writes' and reads'), condvars as report.c
 * orders them, the top-N cut, ranks 1..n, locks_tracked and the required
 * keys; and the text report carries the same advice.
 * One line per failed check, exit 1; one line on success. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "stats.h"

static int failures, checks, reports;

__attribute__((format(printf, 1, 2)))
static void fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("FAIL: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	failures++;
}

#define CHECK(cond, ...) do { checks++; if (!(cond)) fail(__VA_ARGS__); } while (0)

/* ---- the input: one process, one main thread alive 10 s ---- */

#define S 1000000000ull
#define MS 1000000ull
#define US 1000ull
#define START_NS (5000 * S)     /* CLOCK_BOOTTIME */
#define RUN_NS (10 * S)         /* the thread time: 10 s */
#define FIRST_NS (700 * S)      /* CLOCK_MONOTONIC: a record's first contention */

static struct stats_rec recs[16];
static struct stats_thread thread;

static void input_init(struct stats_report *in, int nodes, int top)
{
	memset(recs, 0, sizeof(recs));
	memset(&thread, 0, sizeof(thread));
	thread.tid = 4242;
	snprintf(thread.name, sizeof(thread.name), "stats_advice");
	thread.start_ns = START_NS;
	*in = (struct stats_report){
		.pid = (int)getpid(), .end = "exit 0", .program = "stats_advice", .top = top,
		.start_ns = START_NS, .end_ns = START_NS + RUN_NS, .cpus = 8, .nodes = nodes,
		.recs = recs, .n_recs = 1, .threads = &thread, .n_threads = 1,
		.handoff_ns = 4000000, .spin_ns = 20000, .cna = false,
	};
}

/* A record at index i (index 0 is the shim's unused one). */
static struct stats_rec *rec_at(struct stats_report *in, size_t i, enum stats_obj obj, uint32_t type,
				uint64_t span_ns)
{
	struct stats_rec *r = &recs[i];
	r->addr = 0x5000 + 0x100 * i;
	r->obj = obj;
	r->type = type;
	r->objects = 1;
	r->first_ns = FIRST_NS;
	r->last_ns = FIRST_NS + span_ns;
	if (in->n_recs <= i)
		in->n_recs = i + 1;
	return r;
}

/* Runs the report; returns its JSON document (NULL after a failure), and
 * the text report in *text (free both). */
static json_t *run_report(const char *what, const struct stats_report *in, char **text)
{
	*text = NULL;
	reports++;
	char *json = NULL;
	size_t text_len = 0, json_len = 0;
	int rc = stats_report_make(in, text, &text_len, &json, &json_len);
	CHECK(rc == 0, "%s: stats_report_make returned %d", what, rc);
	CHECK(json && json_len && json[json_len - 1] == '\n' && !memchr(json, '\n', json_len - 1),
	      "%s: the JSON report is not one line", what);
	json_error_t err;
	json_t *doc = json ? json_loads(json, 0, &err) : NULL;
	free(json);
	if (!doc) {
		fail("%s: the JSON report does not parse: %s (line %d)", what, err.text, err.line);
		return NULL;
	}
	CHECK(*text && strstr(*text, "== hotlock lock report: pid ") && strstr(*text, "== end of hotlock lock report"),
	      "%s: no text report", what);
	return doc;
}

/* ---- the structure: the keys docs/stats.schema.json requires ---- */

static const char *const top_keys[] = {
	"hotlock_stats", "pid", "program", "end", "elapsed_s", "cpu", "cpus", "nodes", "threads",
	"thread_time_s", "lock_wait_s", "cond_wait_s", "lock_wait_share", "locks_tracked", "locks",
	"conds", NULL };
static const char *const lock_keys[] = {
	"rank", "address", "kind", "type", "objects", "stack", "acquisitions", "contended",
	"contended_share", "wait_s", "wait_mean_us", "wait_max_us", "hold_mean_us", "hold_max_us",
	"futex_waits", "futex_wakes", "handoffs", "spins", "spins_won", "cross_node",
	"cross_node_share", "trylock_busy", "timeouts", "advice", NULL };
static const char *const waits_keys[] = {
	"acquisitions", "contended", "contended_share", "wait_s", "wait_mean_us", "wait_max_us", NULL };
static const char *const cond_keys[] = {
	"rank", "address", "kind", "clock", "objects", "stack", "mutex", "waits", "wait_s", "signals",
	"broadcasts", "woken", "woken_per_broadcast", "rewaits", "rewait_share", "timeouts",
	"advice", NULL };
static const char *const thread_keys[] = {
	"tid", "name", "alive_s", "lock_wait_s", "cond_wait_s", "lock_wait_share", "cpu_s", "exited", NULL };
static const char *const codes_known[] = {
	"split-or-shorten", "handoff-threshold", "spinning-off", "use-cna", "writers-wait",
	"mostly-writes", "signal-no-waiter", "timeouts", "no-action", "not-analysed", NULL };

static void check_keys(const char *what, const char *obj, json_t *o, const char *const *keys)
{
	if (!json_is_object(o)) {
		fail("%s: %s is not an object", what, obj);
		return;
	}
	for (int i = 0; keys[i]; i++)
		CHECK(json_object_get(o, keys[i]), "%s: %s lacks \"%s\"", what, obj, keys[i]);
}

static bool in_list(const char *s, const char *const *list)
{
	for (int i = 0; list[i]; i++)
		if (!strcmp(s, list[i]))
			return true;
	return false;
}

/* The advice of one entry: well formed, no-action exactly when alone, and
 * each in the text report as "=> code: text". */
static void check_advice(const char *what, json_t *entry, const char *text)
{
	json_t *advice = json_object_get(entry, "advice");
	if (!json_is_array(advice)) {
		fail("%s: advice is not an array", what);
		return;
	}
	size_t n = json_array_size(advice), no_action = 0;
	CHECK(n >= 1, "%s: no advice at all (not even no-action)", what);
	for (size_t i = 0; i < n; i++) {
		json_t *a = json_array_get(advice, i);
		const char *code = json_string_value(json_object_get(a, "code"));
		const char *t = json_string_value(json_object_get(a, "text"));
		if (!code || !t || !*t) {
			fail("%s: advice %zu lacks its code or text", what, i);
			continue;
		}
		CHECK(in_list(code, codes_known), "%s: unknown advice code \"%s\"", what, code);
		no_action += !strcmp(code, "no-action");
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(code, json_string_value(json_object_get(json_array_get(advice, j), "code"))),
			      "%s: advice %s given twice", what, code);
		char *line = NULL;
		if (asprintf(&line, "=> %s: %s\n", code, t) >= 0) {
			CHECK(text && strstr(text, line), "%s: the text report lacks \"%.60s...\"", what, line);
			free(line);
		}
	}
	CHECK(no_action == 0 || n == 1, "%s: no-action given beside %zu other advice", what, n - 1);
}

static void check_doc(const char *what, json_t *doc, const char *text)
{
	check_keys(what, "the report", doc, top_keys);
	json_t *threads = json_object_get(doc, "threads");
	for (size_t i = 0; i < json_array_size(threads); i++)
		check_keys(what, "a thread", json_array_get(threads, i), thread_keys);
	for (int l = 0; l < 2; l++) {
		json_t *list = json_object_get(doc, l ? "conds" : "locks");
		if (!json_is_array(list)) {
			fail("%s: \"%s\" is not an array", what, l ? "conds" : "locks");
			continue;
		}
		for (size_t i = 0; i < json_array_size(list); i++) {
			json_t *e = json_array_get(list, i);
			check_keys(what, l ? "a cond" : "a lock", e, l ? cond_keys : lock_keys);
			json_int_t rank = json_integer_value(json_object_get(e, "rank"));
			CHECK(rank == (json_int_t)i + 1, "%s: %s %zu has rank %" JSON_INTEGER_FORMAT, what,
			      l ? "cond" : "lock", i + 1, rank);
			const char *kind = json_string_value(json_object_get(e, "kind"));
			bool rw = kind && !strcmp(kind, "rwlock");
			if (!l) {
				CHECK(kind && (rw || !strcmp(kind, "mutex")), "%s: lock kind %s", what, kind ? kind : "?");
				CHECK(!rw == !json_object_get(e, "read") && !rw == !json_object_get(e, "write"),
				      "%s: read/write waits %s on a %s", what, rw ? "missing" : "present", kind ? kind : "?");
				if (rw) {
					check_keys(what, "read", json_object_get(e, "read"), waits_keys);
					check_keys(what, "write", json_object_get(e, "write"), waits_keys);
				}
			}
			check_advice(what, e, text);
		}
	}
}

/* ---- the rules, one row per case ---- */

struct kv {
	int k1;                 /* stats_counter + 1; 0 ends the list */
	uint64_t v;
};
#define C(k, v) { (k) + 1, (v) }

struct row {
	const char *name;
	enum stats_obj obj;
	uint32_t type;          /* rwlock: 0 prefer-reader, 1 prefer-writer, 2 ...-nonrecursive */
	struct kv set[10];      /* counters, over the quiet base's */
	uint64_t span_ns;       /* last_ns - first_ns; 0: 1 s */
	int nodes;              /* 0: 1 */
	const char *env[2];     /* "VAR=value" for this report */
	const char *codes;      /* the advice expected, space separated, in report.c's order */
	const char *texts[4];   /* in the first code's text; "!..." must not be */
};

/* In a row's set: the thread time instead of RUN_NS, so that the row's
 * waits are at least 1% of it, the least at which the lock rules but
 * timeouts may fire.  SHORT_RUN: the quiet bases' waits (1 ms) are 1%. */
#define RUN_NS_KEY (STC_COUNT + 1)
#define SHORT_RUN { RUN_NS_KEY, 100 * MS }

/* The quiet bases: contended, but no rule fires.  A mutex: 1000
 * acquisitions, 20 waited 1 ms in all; 1000 timed holds of 100 us.  An
 * rwlock: 100 writes and 300 reads, 10 of each waited, 0.5 ms each kind.
 * A condvar: 100 waits, 90 woken by 90 signals. */
static void base(struct stats_rec *r)
{
	static const struct kv mutex[] = {
		C(STC_W_ACQ, 1000), C(STC_W_CONTENDED, 20), C(STC_W_WAIT_NS, 1 * MS),
		C(STC_W_WAIT_MAX_NS, 200 * US), C(STC_HOLD_NS, 100 * MS), C(STC_HOLDS, 1000),
		C(STC_HOLD_MAX_NS, 1 * MS), C(STC_FUTEX_WAITS, 20), C(STC_FUTEX_WAKES, 20), { 0, 0 } };
	static const struct kv rwlock[] = {
		C(STC_W_ACQ, 100), C(STC_W_CONTENDED, 10), C(STC_W_WAIT_NS, 500 * US),
		C(STC_W_WAIT_MAX_NS, 100 * US), C(STC_R_ACQ, 300), C(STC_R_CONTENDED, 10),
		C(STC_R_WAIT_NS, 500 * US), C(STC_R_WAIT_MAX_NS, 100 * US), C(STC_HOLD_NS, 10 * MS),
		C(STC_HOLDS, 100), C(STC_HOLD_MAX_NS, 1 * MS), { 0, 0 } };
	static const struct kv cond[] = {
		C(STC_C_WAITS, 100), C(STC_C_WAIT_NS, 100 * MS), C(STC_C_WOKEN, 90), C(STC_C_SIGNALS, 90),
		{ 0, 0 } };
	const struct kv *b = r->obj == ST_COND ? cond : r->obj == ST_RWLOCK ? rwlock : mutex;
	for (; b->k1; b++)
		r->c[b->k1 - 1] = b->v;
}

#define M ST_MUTEX
#define RW ST_RWLOCK
#define CV ST_COND

static const struct row rows[] = {
	/* no-action: the wait's share of thread time (10 s), and whether it
	 * is under 1% ("not worth changing"), or no rule found a cause. */
	{ "quiet mutex", M, 0, { { 0, 0 } }, 0, 0, { 0 }, "no-action",
	  { "threads waited 0.001 s for it, 0.01% of their time: not worth changing", "!no rule found" } },
	{ "quiet rwlock", RW, 0, { { 0, 0 } }, 0, 0, { 0 }, "no-action", { "0.001 s for it, 0.01% of" } },
	{ "no-action at 1% of thread time", M, 0, { C(STC_W_WAIT_NS, 100 * MS) }, 0, 0, { 0 }, "no-action",
	  { "0.100 s for it, 1.00% of their time (no rule found a cause)" } },
	{ "no-action under 1% of thread time", M, 0, { C(STC_W_WAIT_NS, 99 * MS) }, 0, 0, { 0 }, "no-action",
	  { "0.099 s for it, 0.99% of their time: not worth changing", "!no rule found" } },
	{ "quiet cond", CV, 0, { { 0, 0 } }, 0, 0, { 0 }, "no-action",
	  { "100 waits, 90 woken: nothing to change" } },

	/* A mutex glibc keeps: its waits stated, no rule applied, however
	 * its numbers look (here: split-or-shorten's, handoffs, spins). */
	{ "kept by glibc: not analysed", M, STATS_TYPE_GLIBC,
	  { C(STC_W_WAIT_NS, 2 * S), C(STC_HANDOFFS, 10), C(STC_SPINS, 200), C(STC_SPINS_WON, 1) }, 2 * S, 0,
	  { 0 }, "not-analysed", { "glibc keeps", "waited 2.000 s for it, 20.00% of their time, in 20 waits" } },

	/* split-or-shorten: >= 20 waits, total wait / span >= 1 thread. */
	{ "split: 20 waits, 1.0 thread waiting", M, 0, { C(STC_W_WAIT_NS, 2 * S) }, 2 * S, 0, { 0 },
	  "split-or-shorten",
	  { "on average 1.0 threads were waiting for it in the 2.00 s from its first contention",
	    "to its last (mean hold 100.0 us, max 1000.0 us; 2% of its 1000 acquisitions waited, "
	    "100000.0 us on average)", "!was held" } },
	{ "split: rwlock, writes' and reads' waits summed", RW, 0,
	  { C(STC_W_WAIT_NS, 1 * S), C(STC_R_WAIT_NS, 1 * S) }, 2 * S, 0, { 0 }, "split-or-shorten",
	  { "on average 1.0 threads", "of its 400 acquisitions waited" } },
	{ "split: 19 waits, 100 ms in all", M, 0, { C(STC_W_CONTENDED, 19), C(STC_W_WAIT_NS, 100 * MS) },
	  50 * MS, 0, { 0 }, "split-or-shorten", { "on average 2.0 threads were waiting for it in the 0.05 s" } },
	{ "split: 19 waits, under 100 ms", M, 0, { C(STC_W_CONTENDED, 19), C(STC_W_WAIT_NS, 100 * MS - 1) },
	  50 * MS, 0, { 0 }, "no-action", { 0 } },
	{ "split: just under 1 thread", M, 0, { C(STC_W_WAIT_NS, 2 * S - 2 * US) }, 2 * S, 0, { 0 },
	  "no-action", { 0 } },

	/* handoff-threshold: >= 20 waits, >= 30% of them handed over. */
	{ "handoff: 6 of 20", M, 0, { C(STC_HANDOFFS, 6), SHORT_RUN }, 0, 0, { 0 }, "handoff-threshold",
	  { "6 of 20 waits (30%) ended with the lock handed", "(hotlock-run --handoff-ns, now 4000000 ns)" } },
	{ "handoff: the HOTLOCK_HANDOFF_NS in use", M, 0, { C(STC_HANDOFFS, 6), SHORT_RUN }, 0, 0,
	  { "HOTLOCK_HANDOFF_NS=7000000" }, "handoff-threshold", { "now 7000000 ns" } },
	{ "handoff: 19 waits", M, 0, { C(STC_W_CONTENDED, 19), C(STC_HANDOFFS, 19), SHORT_RUN }, 0, 0, { 0 },
	  "no-action", { 0 } },
	{ "handoff: 29.9%", M, 0, { C(STC_W_CONTENDED, 1000), C(STC_HANDOFFS, 299), SHORT_RUN }, 0, 0, { 0 },
	  "no-action", { 0 } },

	/* spinning-off: >= 100 spin phases, <= 10% of them won. */
	{ "spinning: 10 of 100 won", M, 0, { C(STC_SPINS, 100), C(STC_SPINS_WON, 10), SHORT_RUN }, 0, 0, { 0 },
	  "spinning-off", { "only 10 of 100 spin phases (10%) got the lock", "--spin-ns 0" } },
	{ "spinning: 99 phases", M, 0, { C(STC_SPINS, 99), C(STC_SPINS_WON, 0), SHORT_RUN }, 0, 0, { 0 },
	  "no-action", { 0 } },
	{ "spinning: 10.1% won", M, 0, { C(STC_SPINS, 1000), C(STC_SPINS_WON, 101), SHORT_RUN }, 0, 0, { 0 },
	  "no-action", { 0 } },

	/* use-cna: 2+ nodes, >= 20 contended, >= 30% of them cross-node,
	 * and the queue not CNA already.  The rows name HOTLOCK_QUEUE=fifo:
	 * with it unset report.c advises CNA too, though the core's default
	 * queue on 2+ nodes is CNA already (docs/cna.md); not asserted here. */
	{ "cna: 6 of 20 cross-node on 2 nodes, fifo", M, 0, { C(STC_CROSS_NODE, 6), SHORT_RUN }, 0, 2,
	  { "HOTLOCK_QUEUE=fifo" }, "use-cna",
	  { "30% of contended acquisitions moved the lock to another NUMA node (2 nodes)", "--queue cna" } },
	{ "cna: rwlock, reads' and writes' contention summed", RW, 0, { C(STC_CROSS_NODE, 6), SHORT_RUN }, 0, 4,
	  { "HOTLOCK_QUEUE=fifo" }, "use-cna", { "30% of contended", "(4 nodes)" } },
	{ "cna: one node", M, 0, { C(STC_CROSS_NODE, 20), SHORT_RUN }, 0, 1, { "HOTLOCK_QUEUE=fifo" }, "no-action",
	  { 0 } },
	{ "cna: already HOTLOCK_QUEUE=cna", M, 0, { C(STC_CROSS_NODE, 20), SHORT_RUN }, 0, 2,
	  { "HOTLOCK_QUEUE=cna" }, "no-action", { 0 } },
	{ "cna: 19 contended", M, 0, { C(STC_W_CONTENDED, 19), C(STC_CROSS_NODE, 19), SHORT_RUN }, 0, 2,
	  { "HOTLOCK_QUEUE=fifo" }, "no-action", { 0 } },
	{ "cna: 29.9% cross-node", M, 0, { C(STC_W_CONTENDED, 1000), C(STC_CROSS_NODE, 299), SHORT_RUN }, 0, 2,
	  { "HOTLOCK_QUEUE=fifo" }, "no-action", { 0 } },

	/* writers-wait: a reader-preferring rwlock, (>= 20 writer waits or
	 * >= 10 ms of them), reads >= 4x writes, writers' mean wait >= 4x
	 * readers' (readers' taken as 1 us when they never waited). */
	{ "writers: 400 us against 100 us, 400 reads to 100 writes", RW, 0,
	  { C(STC_W_CONTENDED, 20), C(STC_W_WAIT_NS, 8 * MS), C(STC_W_WAIT_MAX_NS, 900 * US),
	    C(STC_R_ACQ, 400), C(STC_R_CONTENDED, 100), C(STC_R_WAIT_NS, 10 * MS), SHORT_RUN }, 0, 0, { 0 },
	  "writers-wait",
	  { "writers waited 400.0 us on average (max 900.0 us) against readers' 100.0 us",
	    "with 400 reads to 100 writes" } },
	{ "writers: prefer-writer (glibc: reader-preferring too)", RW, 1,
	  { C(STC_W_CONTENDED, 20), C(STC_W_WAIT_NS, 8 * MS), C(STC_R_ACQ, 400), C(STC_R_CONTENDED, 100),
	    C(STC_R_WAIT_NS, 10 * MS), SHORT_RUN }, 0, 0, { 0 }, "writers-wait", { "400.0 us on average" } },
	{ "writers: prefer-writer-nonrecursive", RW, 2,
	  { C(STC_W_CONTENDED, 20), C(STC_W_WAIT_NS, 8 * MS), C(STC_R_ACQ, 400), C(STC_R_CONTENDED, 100),
	    C(STC_R_WAIT_NS, 10 * MS), SHORT_RUN }, 0, 0, { 0 }, "no-action", { 0 } },
	{ "writers: 19 waits of 10 ms in all", RW, 0,
	  { C(STC_W_CONTENDED, 19), C(STC_W_WAIT_NS, 10 * MS), C(STC_R_ACQ, 400), C(STC_R_CONTENDED, 100),
	    C(STC_R_WAIT_NS, 10 * MS), SHORT_RUN }, 0, 0, { 0 }, "writers-wait",
	  { "writers waited 526.3 us on average" } },
	{ "writers: 19 waits, 10 ms less 1 ns", RW, 0,
	  { C(STC_W_CONTENDED, 19), C(STC_W_WAIT_NS, 10 * MS - 1), C(STC_R_ACQ, 400),
	    C(STC_R_CONTENDED, 100), C(STC_R_WAIT_NS, 10 * MS), SHORT_RUN }, 0, 0, { 0 }, "no-action", { 0 } },
	{ "writers: 399 reads to 100 writes", RW, 0,
	  { C(STC_W_CONTENDED, 20), C(STC_W_WAIT_NS, 8 * MS), C(STC_R_ACQ, 399), C(STC_R_CONTENDED, 100),
	    C(STC_R_WAIT_NS, 10 * MS), SHORT_RUN }, 0, 0, { 0 }, "no-action", { 0 } },
	{ "writers: 3.999x the readers' wait", RW, 0,
	  { C(STC_W_CONTENDED, 20), C(STC_W_WAIT_NS, 8 * MS - 20), C(STC_R_ACQ, 400),
	    C(STC_R_CONTENDED, 100), C(STC_R_WAIT_NS, 10 * MS), SHORT_RUN }, 0, 0, { 0 }, "no-action", { 0 } },
	{ "writers: readers never waited, writers 4 us", RW, 0,
	  { C(STC_W_CONTENDED, 20), C(STC_W_WAIT_NS, 80 * US), C(STC_R_ACQ, 400), C(STC_R_CONTENDED, 0),
	    C(STC_R_WAIT_NS, 0), { RUN_NS_KEY, 8 * MS } }, 0, 0, { 0 }, "writers-wait",
	  { "writers waited 4.0 us on average" } },
	{ "writers: readers never waited, writers 3.999 us", RW, 0,
	  { C(STC_W_CONTENDED, 20), C(STC_W_WAIT_NS, 80 * US - 20), C(STC_R_ACQ, 400),
	    C(STC_R_CONTENDED, 0), C(STC_R_WAIT_NS, 0), { RUN_NS_KEY, 8 * MS } }, 0, 0, { 0 }, "no-action", { 0 } },
	{ "writers: never on a mutex", M, 0,
	  { C(STC_W_ACQ, 100), C(STC_W_CONTENDED, 20), C(STC_W_WAIT_NS, 8 * MS), C(STC_R_ACQ, 400),
	    C(STC_R_CONTENDED, 100), C(STC_R_WAIT_NS, 10 * MS), SHORT_RUN }, 0, 0, { 0 }, "no-action", { 0 } },

	/* mostly-writes: an rwlock, >= 100 acquisitions, >= 80% writes. */
	{ "writes: 80 of 100", RW, 0, { C(STC_W_ACQ, 80), C(STC_R_ACQ, 20), SHORT_RUN }, 0, 0, { 0 },
	  "mostly-writes", { "80% of its 100 acquisitions were writes", "a mutex costs less" } },
	{ "writes: 80 of 99", RW, 0, { C(STC_W_ACQ, 80), C(STC_R_ACQ, 19), SHORT_RUN }, 0, 0, { 0 }, "no-action",
	  { 0 } },
	{ "writes: 79.9%", RW, 0, { C(STC_W_ACQ, 799), C(STC_R_ACQ, 201), SHORT_RUN }, 0, 0, { 0 }, "no-action",
	  { 0 } },
	{ "writes: never on a mutex (all writes)", M, 0, { C(STC_W_ACQ, 5000), SHORT_RUN }, 0, 0, { 0 }, "no-action",
	  { 0 } },

	/* timeouts (a lock): >= 10 timed out, >= 10% of waits (waited +
	 * timed out). */
	{ "lock timeouts: 10 of 100 waits", M, 0, { C(STC_W_CONTENDED, 90), C(STC_TIMEOUTS, 10) }, 0, 0,
	  { 0 }, "timeouts", { "10 timed waits timed out (10% of waits)", "(max hold 1000.0 us)" } },
	{ "lock timeouts: rwlock, reads' waits counted", RW, 0,
	  { C(STC_W_CONTENDED, 45), C(STC_R_CONTENDED, 45), C(STC_TIMEOUTS, 10) }, 0, 0, { 0 }, "timeouts",
	  { "10 timed waits timed out (10% of waits)" } },
	{ "lock timeouts: 9, no wait else", M, 0,
	  { C(STC_W_ACQ, 0), C(STC_W_CONTENDED, 0), C(STC_W_WAIT_NS, 0), C(STC_TIMEOUTS, 9) }, 0, 0, { 0 },
	  "no-action", { "threads waited 0.000 s" } },
	{ "lock timeouts: 9.99%", M, 0, { C(STC_W_CONTENDED, 901), C(STC_TIMEOUTS, 100) }, 0, 0, { 0 },
	  "no-action", { 0 } },

	/* The gate: at the default 10 s of thread time the quiet bases' waits
	 * are 0.01% of it, and the lock rules but timeouts (above: they fire
	 * there) stay quiet on numbers that fire them at SHORT_RUN. */
	{ "gate: split, 99 ms of waits (0.99%)", M, 0, { C(STC_W_WAIT_NS, 99 * MS) }, 50 * MS, 0, { 0 },
	  "no-action", { "0.099 s for it, 0.99% of their time: not worth changing" } },
	{ "gate: handoff, 20 of 20", M, 0, { C(STC_HANDOFFS, 20) }, 0, 0, { 0 }, "no-action",
	  { "0.01% of their time: not worth changing" } },
	{ "gate: spinning, 0 of 1000 won", M, 0, { C(STC_SPINS, 1000), C(STC_SPINS_WON, 0) }, 0, 0, { 0 },
	  "no-action", { 0 } },
	{ "gate: cna, 20 of 20 cross-node", M, 0, { C(STC_CROSS_NODE, 20) }, 0, 2, { "HOTLOCK_QUEUE=fifo" },
	  "no-action", { 0 } },
	{ "gate: writers, 400 us against 100 us", RW, 0,
	  { C(STC_W_CONTENDED, 20), C(STC_W_WAIT_NS, 8 * MS), C(STC_R_ACQ, 400), C(STC_R_CONTENDED, 100),
	    C(STC_R_WAIT_NS, 10 * MS) }, 0, 0, { 0 }, "no-action", { "0.018 s for it, 0.18% of their time" } },
	{ "gate: writes, 80 of 100", RW, 0, { C(STC_W_ACQ, 80), C(STC_R_ACQ, 20) }, 0, 0, { 0 }, "no-action",
	  { 0 } },

	/* Several rules on one lock: each gives its own sentence. */
	{ "lock: split, handoff, spinning, cna, timeouts at once", M, 0,
	  { C(STC_W_WAIT_NS, 2 * S), C(STC_HANDOFFS, 10), C(STC_SPINS, 200), C(STC_SPINS_WON, 1),
	    C(STC_CROSS_NODE, 10), C(STC_TIMEOUTS, 10) }, 1 * S, 2, { "HOTLOCK_QUEUE=fifo" },
	  "split-or-shorten handoff-threshold spinning-off use-cna timeouts", { "2.0 threads" } },

	/* Re-waits (woken, then waiting again with the mutex kept) draw no
	 * advice, however many: a generation broadcast whose every woken
	 * waiter has work re-waits so, and "signal one waiter" would
	 * deadlock it.  The old broadcast-storm rule fired here. */
	{ "broadcasts whose waiters all re-wait: no advice", CV, 0,
	  { C(STC_C_WAITS, 1000), C(STC_C_SIGNALS, 0), C(STC_C_BROADCASTS, 100),
	    C(STC_C_BROADCAST_WAITERS, 1000), C(STC_C_WOKEN, 1000), C(STC_C_REWAITS, 1000) }, 0, 0, { 0 },
	  "no-action", { "1000 waits, 1000 woken: nothing to change", "!futile" } },

	/* signal-no-waiter: >= 10000 signals found nobody, >= 90% of all. */
	{ "empty signals: 10000 of 11111", CV, 0, { C(STC_C_SIGNALS, 1111), C(STC_C_SIGNALS_EMPTY, 10000) },
	  0, 0, { 0 }, "signal-no-waiter", { "10000 of 11111 signals (90%) found nobody waiting" } },
	{ "empty signals: 9999", CV, 0, { C(STC_C_SIGNALS, 0), C(STC_C_SIGNALS_EMPTY, 9999) }, 0, 0, { 0 },
	  "no-action", { 0 } },
	{ "empty signals: 10000 of 11112", CV, 0, { C(STC_C_SIGNALS, 1112), C(STC_C_SIGNALS_EMPTY, 10000) },
	  0, 0, { 0 }, "no-action", { 0 } },

	/* timeouts (a condvar): >= 10 timed out, >= 10% of its waits. */
	{ "cond timeouts: 10 of 100", CV, 0, { C(STC_C_WOKEN, 90), C(STC_TIMEOUTS, 10) }, 0, 0, { 0 },
	  "timeouts", { "10 of 100 waits timed out (10%)" } },
	{ "cond timeouts: 9 of 9", CV, 0, { C(STC_C_WAITS, 9), C(STC_C_WOKEN, 0), C(STC_TIMEOUTS, 9) }, 0, 0,
	  { 0 }, "no-action", { 0 } },
	{ "cond timeouts: 10 of 101", CV, 0, { C(STC_C_WAITS, 101), C(STC_C_WOKEN, 91), C(STC_TIMEOUTS, 10) },
	  0, 0, { 0 }, "no-action", { 0 } },
	{ "cond timeouts beside re-waits: timeouts alone", CV, 0,
	  { C(STC_C_WAITS, 60), C(STC_C_SIGNALS, 0), C(STC_C_BROADCASTS, 10),
	    C(STC_C_BROADCAST_WAITERS, 40), C(STC_C_WOKEN, 40), C(STC_C_REWAITS, 20), C(STC_TIMEOUTS, 20) },
	  0, 0, { 0 }, "timeouts", { 0 } },
	{ "cond: re-waits and empty signals", CV, 0,
	  { C(STC_C_WAITS, 60), C(STC_C_SIGNALS, 0), C(STC_C_SIGNALS_EMPTY, 20000), C(STC_C_BROADCASTS, 10),
	    C(STC_C_BROADCAST_WAITERS, 40), C(STC_C_WOKEN, 40), C(STC_C_REWAITS, 40) }, 0, 0, { 0 },
	  "signal-no-waiter", { 0 } },
};

static void codes_of(json_t *entry, char *out, size_t len)
{
	out[0] = 0;
	json_t *advice = json_object_get(entry, "advice");
	size_t o = 0;
	for (size_t i = 0; i < json_array_size(advice) && o < len; i++) {
		const char *code = json_string_value(json_object_get(json_array_get(advice, i), "code"));
		o += (size_t)snprintf(out + o, len - o, "%s%s", i ? " " : "", code ? code : "?");
	}
}

static const char *advice_text(json_t *entry, const char *code)
{
	json_t *advice = json_object_get(entry, "advice");
	for (size_t i = 0; i < json_array_size(advice); i++) {
		json_t *a = json_array_get(advice, i);
		const char *c = json_string_value(json_object_get(a, "code"));
		if (c && !strcmp(c, code))
			return json_string_value(json_object_get(a, "text"));
	}
	return NULL;
}

static void run_row(const struct row *w)
{
	struct stats_report in;
	input_init(&in, w->nodes ? w->nodes : 1, 10);
	struct stats_rec *r = rec_at(&in, 1, w->obj, w->type, w->span_ns ? w->span_ns : 1 * S);
	base(r);
	for (const struct kv *p = w->set; p->k1; p++) {
		if (p->k1 == RUN_NS_KEY)
			in.end_ns = START_NS + p->v;
		else
			r->c[p->k1 - 1] = p->v;
	}
	if (w->obj == ST_COND) {
		r->cond_mutex = 0x4000;
		thread.cond_wait_ns = r->c[STC_C_WAIT_NS];
	} else {
		thread.lock_wait_ns = r->c[STC_W_WAIT_NS] + r->c[STC_R_WAIT_NS];
	}
	/* The policy in force, as the shim passes it (struct stats_report):
	 * a row names it as the setting that would give it. */
	for (int i = 0; i < 2 && w->env[i]; i++) {
		if (!strncmp(w->env[i], "HOTLOCK_QUEUE=", 14))
			in.cna = !strcmp(w->env[i] + 14, "cna");
		else if (!strncmp(w->env[i], "HOTLOCK_HANDOFF_NS=", 19))
			in.handoff_ns = strtoull(w->env[i] + 19, NULL, 10);
		else
			fail("%s: no policy field for %s", w->name, w->env[i]);
	}
	char *text;
	json_t *doc = run_report(w->name, &in, &text);
	if (!doc) {
		free(text);
		return;
	}
	check_doc(w->name, doc, text);
	json_t *list = json_object_get(doc, w->obj == ST_COND ? "conds" : "locks");
	json_t *other = json_object_get(doc, w->obj == ST_COND ? "locks" : "conds");
	CHECK(json_array_size(list) == 1 && json_array_size(other) == 0, "%s: %zu entries, %zu in the other table",
	      w->name, json_array_size(list), json_array_size(other));
	json_t *e = json_array_get(list, 0);
	if (e) {
		char got[256];
		codes_of(e, got, sizeof(got));
		CHECK(!strcmp(got, w->codes), "%s: advice [%s], expected [%s]", w->name, got, w->codes);
		char first[32];
		snprintf(first, sizeof(first), "%.*s", (int)strcspn(w->codes, " "), w->codes);
		const char *t = advice_text(e, first);
		for (int i = 0; i < 4 && w->texts[i] && t; i++) {
			bool neg = w->texts[i][0] == '!';
			const char *want = w->texts[i] + neg;
			CHECK((strstr(t, want) != NULL) != neg, "%s: %s's text %s \"%s\": %s", w->name, first,
			      neg ? "holds" : "lacks", want, t);
		}
	}
	json_decref(doc);
	free(text);
}

/* ---- the tables: order, top-N cut, what is left out ---- */

static void check_order(const char *what, json_t *doc, const char *key, const uint64_t *want, size_t n_want)
{
	json_t *list = json_object_get(doc, key);
	char got[256] = "", exp[256] = "";
	size_t o = 0;
	for (size_t i = 0; i < json_array_size(list) && o < sizeof(got); i++)
		o += (size_t)snprintf(got + o, sizeof(got) - o, "%s%s", i ? " " : "",
				      json_string_value(json_object_get(json_array_get(list, i), "address")));
	o = 0;
	for (size_t i = 0; i < n_want && o < sizeof(exp); i++)
		o += (size_t)snprintf(exp + o, sizeof(exp) - o, "%s0x%" PRIx64, i ? " " : "", want[i]);
	CHECK(!strcmp(got, exp), "%s: %s in the order [%s], expected [%s]", what, key, got, exp);
}

static void ranking(int top)
{
	struct stats_report in;
	input_init(&in, 1, top);
	/* Index 0 is the shim's unused record: never read, whatever it holds. */
	struct stats_rec *r = rec_at(&in, 0, ST_MUTEX, 0, S);
	r->c[STC_W_CONTENDED] = 1000; r->c[STC_W_WAIT_NS] = 1000 * S;
	/* Locks, by total wait: B (1 ms writes + 4 ms reads), C, A, F, E. */
	r = rec_at(&in, 1, ST_MUTEX, 0, S);                             /* A: 3 ms */
	r->c[STC_W_ACQ] = 100; r->c[STC_W_CONTENDED] = 20; r->c[STC_W_WAIT_NS] = 3 * MS;
	r = rec_at(&in, 2, ST_RWLOCK, 0, S);                            /* B: 5 ms, 3 objects */
	r->objects = 3;
	r->c[STC_W_ACQ] = 100; r->c[STC_W_CONTENDED] = 10; r->c[STC_W_WAIT_NS] = 1 * MS;
	r->c[STC_R_ACQ] = 300; r->c[STC_R_CONTENDED] = 10; r->c[STC_R_WAIT_NS] = 4 * MS;
	r = rec_at(&in, 3, ST_MUTEX, 0, S);                             /* free (addr 0): left out */
	r->addr = 0;
	r->c[STC_W_CONTENDED] = 1000; r->c[STC_W_WAIT_NS] = 1000 * S;
	r = rec_at(&in, 4, ST_COND, 1, S);                              /* X: 50 + 50 */
	r->c[STC_C_WAITS] = 50; r->c[STC_C_WOKEN] = 50;
	r = rec_at(&in, 5, ST_MUTEX, 1, S);                             /* C: 4 ms */
	r->c[STC_W_ACQ] = 100; r->c[STC_W_CONTENDED] = 20; r->c[STC_W_WAIT_NS] = 4 * MS;
	rec_at(&in, 6, ST_MUTEX, 0, S);                                 /* a condvar's, never contended */
	r = rec_at(&in, 7, ST_COND, 0, S);                              /* Y: 300 waits, all timed out */
	r->c[STC_C_WAITS] = 300; r->c[STC_TIMEOUTS] = 300;
	r = rec_at(&in, 8, ST_COND, 0, S);                              /* Z: 200 + 200 */
	r->c[STC_C_WAITS] = 200; r->c[STC_C_WOKEN] = 200;
	r = rec_at(&in, 9, ST_COND, 0, S);                              /* signalled, never waited on */
	r->c[STC_C_SIGNALS_EMPTY] = 50;
	r = rec_at(&in, 10, ST_MUTEX, 0, S);                            /* E: busy trylocks only */
	r->c[STC_TRY_BUSY] = 5;
	r = rec_at(&in, 11, ST_MUTEX, 2, S);                            /* F: 2 ms */
	r->c[STC_W_ACQ] = 100; r->c[STC_W_CONTENDED] = 20; r->c[STC_W_WAIT_NS] = 2 * MS;
	r = rec_at(&in, 12, ST_COND, 0, S);                             /* W: 120 + 120 */
	r->c[STC_C_WAITS] = 120; r->c[STC_C_WOKEN] = 120;
	thread.lock_wait_ns = 15 * MS;

	char what[64];
	snprintf(what, sizeof(what), "ranking, top %d", top);
	char *text;
	json_t *doc = run_report(what, &in, &text);
	if (!doc) {
		free(text);
		return;
	}
	check_doc(what, doc, text);
	/* report.c's orders: locks by c[W_WAIT_NS] + c[R_WAIT_NS]; condvars by
	 * c[C_WAITS] (Y's 300 waits, all timed out, before Z's 200). */
	static const uint64_t locks[] = { 0x5200, 0x5500, 0x5100, 0x5b00, 0x5a00 };
	static const uint64_t conds[] = { 0x5700, 0x5800, 0x5c00, 0x5400 };
	size_t nl = (size_t)top < 5 ? (size_t)top : 5, nc = (size_t)top < 4 ? (size_t)top : 4;
	check_order(what, doc, "locks", locks, nl);
	check_order(what, doc, "conds", conds, nc);
	/* Every record in use, listed or not, its objects counted. */
	json_int_t tracked = json_integer_value(json_object_get(doc, "locks_tracked"));
	CHECK(tracked == 13, "%s: locks_tracked %" JSON_INTEGER_FORMAT ", expected 13", what, tracked);
	/* B, the rwlock: its wait is its writes' and reads' together. */
	json_t *list = json_object_get(doc, "locks"), *b = NULL;
	for (size_t i = 0; i < json_array_size(list); i++) {
		const char *a = json_string_value(json_object_get(json_array_get(list, i), "address"));
		if (a && !strcmp(a, "0x5200"))
			b = json_array_get(list, i);
	}
	if (b) {
		double wait_s = json_real_value(json_object_get(b, "wait_s"));
		const char *kind = json_string_value(json_object_get(b, "kind"));
		CHECK(wait_s > 0.004999 && wait_s < 0.005001, "%s: the rwlock's wait_s %g, expected 0.005", what,
		      wait_s);
		CHECK(kind && !strcmp(kind, "rwlock"), "%s: the rwlock's kind %s", what, kind ? kind : "?");
		CHECK(json_integer_value(json_object_get(b, "objects")) == 3, "%s: the rwlock's objects", what);
	}
	json_decref(doc);
	free(text);
}

int main(int argc, char **argv)
{
	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "usage: stats_advice\n");
		return 2;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* The rules read these; each row sets its own. */

	size_t n_rows = sizeof(rows) / sizeof(rows[0]);
	for (size_t i = 0; i < n_rows; i++)
		run_row(&rows[i]);
	static const int tops[] = { 100, 5, 3, 1 };
	for (size_t i = 0; i < sizeof(tops) / sizeof(tops[0]); i++)
		ranking(tops[i]);

	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (failures) {
		printf("stats_advice: %d of %d checks failed\n", failures, checks);
		return 1;
	}
	printf("stats_advice: %zu rule cases and %zu tables, %d reports, %d checks passed in %.2f s\n", n_rows,
	       sizeof(tops) / sizeof(tops[0]), reports, checks, s);
	return 0;
}

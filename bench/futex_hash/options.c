/* SPDX-License-Identifier: MIT */
/* hotlock-bench-futex-hash: its options (parsed by bench_scenario_main), the
 * lists they take (--threads, --parked, --hash), and --help's text around
 * them. */
#include <stdlib.h>
#include <string.h>

#include "fh.h"

#define FH_HASH_SIZES   "global,default,4,8,16,32,64,128,256,512,1024,2048"
#define FH_PARKED_SIZES "global,default,16,256,4096,65536"

/* The help texts name these limits. */
_Static_assert(BENCH_MAX_THREADS == 1024, "--threads' help says 1 to 1024");
_Static_assert(BENCH_MAX_THREAD_COUNTS == 64, "the lists' help says 64 entries");
_Static_assert(FH_MAX_SLOTS == 1u << 20, "--hash's help says 2^20");

/* ---- the lists --------------------------------------------------------- */

struct list_parse {
	struct fh_list *l;
	const char *scenario, *opt;
	unsigned long min, max;
};

static void list_item(void *ctx, const char *e)
{
	struct list_parse *p = ctx;
	unsigned v = (unsigned)bench_parse_ulong(p->scenario, p->opt, e, p->min, p->max);

	if (p->l->n == BENCH_MAX_THREAD_COUNTS)
		bench_usage_error(p->scenario, "%s: more than %u entries", p->opt,
				  BENCH_MAX_THREAD_COUNTS);
	for (size_t i = 0; i < p->l->n; i++)
		if (p->l->v[i] == v)
			bench_usage_error(p->scenario, "%s: %u listed twice", p->opt, v);
	p->l->v[p->l->n++] = v;
}

/* A list of distinct whole numbers, min to max each, into l, ascending; a
 * second one replaces the first. */
static void list_parse(struct fh_list *l, const char *scenario, const char *opt,
		       const char *v, unsigned long min, unsigned long max)
{
	struct list_parse p = { l, scenario, opt, min, max };

	l->n = 0;
	bench_list_each(scenario, opt, v, list_item, &p);
	qsort(l->v, l->n, sizeof l->v[0], bench_cmp_unsigned);
}

static void parse_threads(void *at, const char *scenario, const char *v)
{
	list_parse(at, scenario, "--threads", v, 1, BENCH_MAX_THREADS);
}

static void parse_parked(void *at, const char *scenario, const char *v)
{
	list_parse(at, scenario, "--parked", v, 0, FH_MAX_PARKED);
}

static void parse_scenario(void *at, const char *scenario, const char *v)
{
	enum fh_scenario *sc = at;

	if (strcmp(v, "hash") == 0)
		*sc = FH_HASH;
	else if (strcmp(v, "parked") == 0)
		*sc = FH_PARKED;
	else
		bench_usage_error(scenario, "--scenario: unknown '%s'; valid: hash, parked", v);
}

static void hash_item(void *ctx, const char *e)
{
	struct fh_opts *o = ctx;
	struct fh_size s = { 0 };

	if (o->nsizes == FH_MAX_SIZES)
		bench_usage_error(FH_ME, "--hash: more than %u entries", FH_MAX_SIZES);
	if (strcmp(e, "global") == 0) {
		s.slots = FH_SIZE_GLOBAL;
	} else if (strcmp(e, "default") == 0) {
		s.slots = FH_SIZE_DEFAULT;
	} else if (e[0] >= '0' && e[0] <= '9') {
		unsigned long n = bench_parse_ulong(FH_ME, "--hash", e, 2, FH_MAX_SLOTS);

		if (n & (n - 1))
			bench_usage_error(FH_ME, "--hash: %lu is not a power of two", n);
		s.slots = (long)n;
	} else {
		bench_usage_error(FH_ME, "--hash: unknown size '%s'; valid: global, default, "
				  "or a power of two from 2 to %u", e, FH_MAX_SLOTS);
	}
	for (size_t i = 0; i < o->nsizes; i++)
		if (o->sizes[i].slots == s.slots)
			bench_usage_error(FH_ME, "--hash: '%s' listed twice", e);
	if (s.slots > 0)
		snprintf(s.name, sizeof s.name, "%ld", s.slots);
	else
		snprintf(s.name, sizeof s.name, "%s", e);
	o->sizes[o->nsizes++] = s;
}

void fh_parse_hash(struct fh_opts *o)
{
	const char *hash = o->hash;

	if (!hash)
		hash = o->scenario == FH_HASH ? FH_HASH_SIZES : FH_PARKED_SIZES;
	bench_list_each(FH_ME, "--hash", hash, hash_item, o);
}

/* ---- the table --------------------------------------------------------- */

#define OPT(field) offsetof(struct fh_opts, field)

const struct bench_option fh_options[] = {
	{ "--scenario", "NAME", BENCH_OPT_CALL, OPT(scenario), .parse = parse_scenario,
	  .default_text = "hash", .help =
	  "hash: perf bench futex hash: T threads, each FUTEX_WAITing with a value "
	  "that never matches on its N private futex words in turn (EAGAIN every "
	  "time; one op = one syscall, every one takes a bucket lock).  Prints the "
	  "seed's tables: per-thread average ops/s (perf's 'Averaged') by threads x "
	  "hash size and the ratio to global; 'the full run' (threads = CPUs online, "
	  "as perf's default and the seed's one process per node; run also when "
	  "--threads leaves it out); then per threads: total ops/s, per-thread "
	  "min/avg/max, CPU ns per op\n"
	  "parked: P threads parked in hl_mutex_lock (4 on each of P/4 held "
	  "mutexes: P futex words in the hash) while H hot threads hand one "
	  "hl_mutex back and forth, spinning off; every " FH_TEXT(FH_PROBE_EVERY)
	  "-th iteration a hot thread times a FUTEX_WAKE on a word nobody waits on "
	  "(a bucket lookup past the parked waiters that hash there).  Prints "
	  "handovers/s, futex calls per handover and the probe's mean/median/p99 ns" },
	{ "--threads", "LIST", BENCH_OPT_CALL, OPT(threads), .parse = parse_threads,
	  .default_text = "1,2,4,8,16", .help =
	  "hash: threads per run, 1 to 1024 each, at most 64 entries, none twice" },
	{ "--futexes", "N", BENCH_OPT_UINT, OPT(futexes), 1, FH_MAX_FUTEXES, .help =
	  "hash: futex words per thread; the default is perf's" },
	{ "--parked", "LIST", BENCH_OPT_CALL, OPT(parked), .parse = parse_parked,
	  .default_text = "256,1024", .help =
	  "parked: parked threads per run, 0 to " FH_TEXT(FH_MAX_PARKED) " each, at "
	  "most 64 entries, none twice" },
	{ "--hot", "H", BENCH_OPT_UINT, OPT(hot), 1, FH_MAX_HOT, .help =
	  "parked: hot threads" },
	{ "--hash", "LIST", BENCH_OPT_STRING, OPT(hash), .default_text =
	  "hash: " FH_HASH_SIZES "; parked: " FH_PARKED_SIZES, .help =
	  "the hash sizes, each run in a fresh process, of: global (the kernel's "
	  "shared table: hl_futex_hash_set(0)), default (nothing set: the kernel's "
	  "own private table, and hotlock's HOTLOCK_FUTEX_HASH policy, auto unless "
	  "set, which may grow it), and powers of two from 2 to 2^20 (a private "
	  "table of that many slots); none twice" },
	{ "--no-pin", NULL, BENCH_OPT_UNFLAG, OPT(pin), .help =
	  "hash: leave the threads unpinned (perf pins thread i to CPU i mod CPUs; "
	  "so does this by default)" },
	{ 0 },
};

const struct fh_opts fh_defaults = {
	.scenario = FH_HASH, .futexes = 1024, .hot = 2, .pin = true,
};

const char fh_about[] =
	"Seed 002 (a futex hash per process; PR_FUTEX_HASH, Linux 6.16+): what the\n"
	"size of the kernel's futex hash table costs.  Each (hash size, threads) run\n"
	"is made in a fresh child process that sets the size before it has a thread\n"
	"and checks with hl_futex_hash_get that the kernel took it (a size it does\n"
	"not take is skipped from then on, with a line that says why).  --repeat\n"
	"runs each (size, count) that often, the sizes interleaved within each\n"
	"repeat; the tables show the median run (by ops/s, parked: by handovers/s),\n"
	"the JSON keeps all.";

void fh_help_more(FILE *f)
{
	fprintf(f, "Columns of the table per count, as the note under the tables says:\n");
	bench_help_item(f, "--scenario hash", fh_hash_note);
	bench_help_item(f, "--scenario parked", fh_parked_note);
	fprintf(f,
		"\n"
		"The kernel's choice for a process that sets nothing: the global table until\n"
		"its first thread, then a private one of 16 slots (4 x min(threads, CPUs),\n"
		"at least 16).  The global table is shared with every process on the\n"
		"machine, so other load shows in its column.\n"
		"\n"
		"Exit status: 0 ok (sizes the kernel refused are skipped), 1 a run failed\n"
		"(a child that failed, was killed or did not answer within duration + 60 s\n"
		"(parked: + 120 s)), 2 bad command line.\n");
}

/* SPDX-License-Identifier: MIT */
/* hotlock-bench: parsing a scenario's declared options, and its --help
 * written from the same declarations (options.h). */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "options.h"

#define HELP_INDENT 21u /* where an option's text starts */
#define HELP_WIDTH  79u /* the last column a help line may use */
#define MAX_GIVEN   64u /* options a scenario and the shared ones have */

/* The shared options, over struct bench_common, in the order of their
 * BENCH_COMMON_* bits.  --threads and --topology
 * have parsers of their own (harness.c); --locks' default is the
 * scenario's. */
static void parse_threads(void *at, const char *scenario, const char *v)
{
	bench_common_threads(at, scenario, v);
}

static void parse_topology(void *at, const char *scenario, const char *v)
{
	bench_common_topology(at, scenario, v);
}

/* The help texts name these limits. */
_Static_assert(BENCH_MAX_THREADS == 1024, "--threads' help says 1 to 1024");
_Static_assert(HL_TOPOLOGY_MAX_NODES == 1024, "--topology's help says 1 to 1024");

#define COMMON(field) offsetof(struct bench_common, field)

static const struct bench_option common_options[] = {
	{ "--locks", "A,B,...", BENCH_OPT_STRING, COMMON(locks), .help =
	  "locks to compare, the first is the baseline of 'ratio' and 'limit%'.  "
	  "Groups: 'peers' (the locks a program would use instead, marked [peer] "
	  "below) and 'all'; a group skips locks already listed and peers this "
	  "build lacks (one line says which)" },
	{ "--threads", "N,M,...", BENCH_OPT_CALL, 0, .parse = parse_threads, .help =
	  "thread counts, 1 to 1024 each", .default_text = "1,2,4,8" },
	{ "--duration", "S", BENCH_OPT_SECONDS, COMMON(duration_s), 0, 86400, .help =
	  "seconds per run, may be fractional" },
	{ "--repeat", "R", BENCH_OPT_UINT, COMMON(repeat), 1, 1000, .help =
	  "runs of each measurement (a suite of locks interleaves them across "
	  "the locks); the tables show the median run, the JSON keeps all" },
	{ "--json", "FILE", BENCH_OPT_STRING, COMMON(json), .help =
	  "also write the results as JSON to FILE", .default_text = "" },
	{ "--topology", "SPEC", BENCH_OPT_CALL, 0, .parse = parse_topology, .help =
	  "the nodes hotlock's CNA queue sees (hl_topology_set): numa (NUMA "
	  "nodes), llc (last-level cache domains) or virtual:N (CPU c on node c "
	  "mod N, N = 1 to 1024).  With virtual:N, "
	  "worker i is placed on node i mod N (hl_topology_set_thread_node) "
	  "whatever CPU it runs on, so a queue policy can be studied with more "
	  "nodes than CPUs; with numa and llc a worker is on the node of the CPU "
	  "it runs on (no pinning)",
	  "the library's: HOTLOCK_TOPOLOGY, else numa" },
	{ "--busy", "N", BENCH_OPT_UINT, COMMON(busy), 0, BENCH_MAX_BUSY, .help =
	  "N CPU-bound processes beside the runs: forks of the bench spinning on "
	  "arithmetic at nice 0, SCHED_OTHER, no affinity of their own (named "
	  "hotlock-busy), started before the first run and killed after the last "
	  "(also on an error, SIGINT, SIGTERM).  Stated above the tables "
	  "('load:') and in the JSON (config busy, each run's busy_cpus); the "
	  "'other load' notes leave them out" },
};
#define NCOMMON (sizeof common_options / sizeof common_options[0])

static const struct bench_option *given[MAX_GIVEN];
static size_t ngiven;

bool bench_option_given(const char *name)
{
	for (size_t i = 0; i < ngiven; i++)
		if (strcmp(given[i]->name, name) == 0 ||
		    (given[i]->alias && strcmp(given[i]->alias, name) == 0))
			return true;
	return false;
}

/* The shared option o as scenario s takes it: its limits are s's. */
static struct bench_option common_as(const struct bench_scenario *s, size_t k)
{
	struct bench_option o = common_options[k];

	if ((1u << k) == BENCH_COMMON_DURATION && s->max_duration_s > 0)
		o.max = s->max_duration_s;
	if ((1u << k) == BENCH_COMMON_REPEAT && s->max_repeat > 0)
		o.max = s->max_repeat;
	return o;
}

/* ---- --help ------------------------------------------------------------ */

/* Writes text from column col on, wrapped at HELP_WIDTH, continuation lines
 * at HELP_INDENT; a '\n' in text starts a new line. */
static void wrap(FILE *f, const char *text, size_t col)
{
	const char *p = text;

	while (*p) {
		size_t room = HELP_WIDTH - col, len = strcspn(p, "\n");
		size_t cut = len;

		if (len > room) {
			cut = room;
			while (cut > 0 && p[cut] != ' ')
				cut--;
			if (cut == 0) /* one word longer than the line */
				cut = strcspn(p, " \n");
		}
		size_t shown = cut;

		while (shown > 0 && p[shown - 1] == ' ')
			shown--;
		fprintf(f, "%.*s\n", (int)shown, p);
		p += cut;
		while (*p == ' ')
			p++;
		if (*p == '\n')
			p++;
		if (*p)
			fprintf(f, "%*s", (int)HELP_INDENT, "");
		col = HELP_INDENT;
	}
}

void bench_help_item(FILE *f, const char *name, const char *text)
{
	int n = fprintf(f, "  %s", name);

	if (n < 0)
		return;
	if ((size_t)n + 1 > HELP_INDENT)
		fprintf(f, "\n%*s", (int)HELP_INDENT, "");
	else
		fprintf(f, "%*s", (int)HELP_INDENT - n, "");
	if (*text)
		wrap(f, text, HELP_INDENT);
	else
		fprintf(f, "\n");
}

/* The value of o in ctx, as its default. */
static void default_of(const struct bench_option *o, const void *ctx, char *buf, size_t len)
{
	const char *at = (const char *)ctx + o->offset;

	buf[0] = '\0';
	if (o->default_text) {
		snprintf(buf, len, "%s", o->default_text);
		return;
	}
	switch (o->kind) {
	case BENCH_OPT_UINT:
		snprintf(buf, len, "%u", *(const unsigned *)(const void *)at);
		break;
	case BENCH_OPT_ULONG:
		snprintf(buf, len, "%lu", *(const unsigned long *)(const void *)at);
		break;
	case BENCH_OPT_SECONDS:
		snprintf(buf, len, "%g", *(const double *)(const void *)at);
		break;
	case BENCH_OPT_STRING:
		if (*(const char *const *)(const void *)at)
			snprintf(buf, len, "%s", *(const char *const *)(const void *)at);
		break;
	default:
		break;
	}
}

static void option_help(FILE *f, const struct bench_option *o, const void *ctx)
{
	char head[64], def[128], text[2048];
	size_t n;

	snprintf(head, sizeof head, "%s%s%s%s%s", o->alias ? o->alias : "",
		 o->alias ? ", " : "", o->name, o->value_name ? " " : "",
		 o->value_name ? o->value_name : "");
	n = (size_t)snprintf(text, sizeof text, "%s", o->help);
	default_of(o, ctx, def, sizeof def);
	if (n < sizeof text) {
		if ((o->kind == BENCH_OPT_UINT || o->kind == BENCH_OPT_ULONG) &&
		    o->max >= 1e9) /* no bound a user meets: not worth a line */
			snprintf(text + n, sizeof text - n, " (at least %.0f%s%s)", o->min,
				 def[0] ? ", default " : "", def);
		else if (o->kind == BENCH_OPT_UINT || o->kind == BENCH_OPT_ULONG)
			snprintf(text + n, sizeof text - n, " (%.0f to %.0f%s%s)", o->min,
				 o->max, def[0] ? ", default " : "", def);
		else if (o->kind == BENCH_OPT_SECONDS)
			snprintf(text + n, sizeof text - n, " (at most %g%s%s)", o->max,
				 def[0] ? ", default " : "", def);
		else if (def[0])
			snprintf(text + n, sizeof text - n, " (default %s)", def);
	}
	bench_help_item(f, head, text);
}

static void help(const struct bench_scenario *s, const void *ctx,
		 const struct bench_common *c)
{
	printf("Usage: hotlock-bench %s [OPTIONS]\n\n%s\n\nOptions:\n", s->name, s->about);
	for (const struct bench_option *o = s->options; o && o->name; o++)
		option_help(stdout, o, ctx);
	for (size_t k = 0; k < NCOMMON; k++)
		if (s->common & (1u << k)) {
			struct bench_option o = common_as(s, k);

			option_help(stdout, &o, c);
		}
	bench_help_item(stdout, "--help", "this text");
	if (s->help_more) {
		printf("\n");
		s->help_more(stdout);
	}
}

/* ---- parsing ----------------------------------------------------------- */

static void take(const struct bench_option *o, void *ctx, const char *scenario,
		 const char *v)
{
	char *at = (char *)ctx + o->offset;

	switch (o->kind) {
	case BENCH_OPT_FLAG:
		*(bool *)(void *)at = true;
		break;
	case BENCH_OPT_UNFLAG:
		*(bool *)(void *)at = false;
		break;
	case BENCH_OPT_UINT:
		*(unsigned *)(void *)at = (unsigned)bench_parse_ulong(
			scenario, o->name, v, (unsigned long)o->min, (unsigned long)o->max);
		break;
	case BENCH_OPT_ULONG:
		*(unsigned long *)(void *)at = bench_parse_ulong(
			scenario, o->name, v, (unsigned long)o->min, (unsigned long)o->max);
		break;
	case BENCH_OPT_SECONDS:
		*(double *)(void *)at = bench_parse_seconds(scenario, o->name, v, o->max);
		break;
	case BENCH_OPT_STRING:
		if (!*v)
			bench_usage_error(scenario, "%s: empty value", o->name);
		*(const char **)(void *)at = v;
		break;
	case BENCH_OPT_CALL:
		o->parse(at, scenario, v);
		break;
	}
}

/* If argv[*i] is option o, takes it (and its value) and returns true. */
static bool try_option(const struct bench_option *o, void *ctx, const char *scenario,
		       int argc, char **argv, int *i)
{
	const char *v = NULL;

	if (o->value_name) {
		v = bench_opt_value(scenario, argc, argv, i, o->name);
		if (!v && o->alias)
			v = bench_opt_value(scenario, argc, argv, i, o->alias);
		if (!v)
			return false;
	} else if (strcmp(argv[*i], o->name) != 0 &&
		   !(o->alias && strcmp(argv[*i], o->alias) == 0)) {
		return false;
	}
	if (!bench_option_given(o->name)) /* each once: MAX_GIVEN bounds the table */
		given[ngiven++] = o;
	take(o, ctx, scenario, v);
	return true;
}

int bench_scenario_main(const struct bench_scenario *s, int argc, char **argv)
{
	struct bench_common c;
	struct bench_option common[NCOMMON];
	size_t ncommon = 0, nopts = 0;
	void *ctx = bench_xcalloc(1, s->ctx_size);

	if (s->ctx_init)
		memcpy(ctx, s->ctx_init, s->ctx_size);
	bench_common_defaults(&c, s->default_locks);
	if (s->default_duration_s > 0)
		c.duration_s = s->default_duration_s;
	if (s->default_repeat > 0)
		c.repeat = s->default_repeat;
	for (size_t k = 0; k < NCOMMON; k++)
		if (s->common & (1u << k))
			common[ncommon++] = common_as(s, k);
	for (const struct bench_option *o = s->options; o && o->name; o++)
		if (++nopts + ncommon > MAX_GIVEN)
			bench_fatal("%s declares more than %u options", s->name, MAX_GIVEN);

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			help(s, ctx, &c);
			exit(0);
		}
	for (int i = 1; i < argc; i++) {
		bool taken = false;

		for (const struct bench_option *o = s->options; !taken && o && o->name; o++)
			taken = try_option(o, ctx, s->name, argc, argv, &i);
		for (size_t k = 0; !taken && k < ncommon; k++)
			taken = try_option(&common[k], &c, s->name, argc, argv, &i);
		if (taken)
			continue;
		if (argv[i][0] == '-')
			bench_usage_error(s->name, "unknown option '%s'", argv[i]);
		bench_usage_error(s->name, "unexpected argument '%s'", argv[i]);
	}
	return s->run(ctx, &c);
}

/* SPDX-License-Identifier: MIT */
/* hotlock-bench: a scenario's command line, declared as data.
 *
 * A scenario lists its options in a table (struct bench_option) and names
 * the shared ones it takes (BENCH_COMMON_*); bench_scenario_main parses the
 * command line into the scenario's context and a struct bench_common, and
 * writes --help from the same tables: the usage line, the scenario's text,
 * an option per line with its value, range and default, and what the
 * scenario adds after them.  So the help cannot list an option the parser
 * does not take, nor a range or default other than the parser's. */
#ifndef HOTLOCK_BENCH_OPTIONS_H
#define HOTLOCK_BENCH_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct bench_common;

enum bench_option_kind {
	BENCH_OPT_FLAG,         /* no value: the bool at offset becomes true */
	BENCH_OPT_UNFLAG,       /* no value: the bool at offset becomes false */
	BENCH_OPT_UINT,         /* unsigned, a whole number min to max */
	BENCH_OPT_ULONG,        /* unsigned long, a whole number min to max */
	BENCH_OPT_SECONDS,      /* double, more than 0 and at most max */
	BENCH_OPT_STRING,       /* const char *, not empty */
	BENCH_OPT_CALL,         /* parse(at, scenario, value): at is the context
				 * at offset; value NULL when the option takes
				 * none (no value_name) */
};

struct bench_option {
	const char *name;       /* "--cs" */
	const char *value_name; /* "N" in --help; NULL: the option takes no value */
	enum bench_option_kind kind;
	size_t offset;          /* of the value in the context (offsetof) */
	double min, max;        /* BENCH_OPT_UINT/ULONG: the range; SECONDS: max */
	void (*parse)(void *at, const char *scenario, const char *value);
	/* What it does, one or more sentences without a final full stop; the
	 * help writer wraps it and adds "(min to max, default D)" from the
	 * range and the context's value before parsing.  A '\n' starts a new
	 * line at the same indent. */
	const char *help;
	/* The default as --help states it, where it is not the context's value
	 * (a CALL option, a computed default); "" states none. */
	const char *default_text;
	const char *alias;      /* another name for it ("-c"); NULL: none */
};

/* The options every scenario may share (struct bench_common). */
enum {
	BENCH_COMMON_LOCKS    = 1u << 0,
	BENCH_COMMON_THREADS  = 1u << 1,
	BENCH_COMMON_DURATION = 1u << 2,
	BENCH_COMMON_REPEAT   = 1u << 3,
	BENCH_COMMON_JSON     = 1u << 4,
	BENCH_COMMON_TOPOLOGY = 1u << 5,
	BENCH_COMMON_BUSY     = 1u << 6,
	/* What a suite of (lock, threads) runs takes. */
	BENCH_COMMON_SUITE    = 0x7fu,
	/* What a scenario that makes its own runs takes. */
	BENCH_COMMON_RUNS     = BENCH_COMMON_DURATION | BENCH_COMMON_REPEAT |
				BENCH_COMMON_JSON,
};

/* One scenario: what `hotlock-bench NAME` runs. */
struct bench_scenario {
	const char *name;
	const char *summary;    /* one line for hotlock-bench --help */
	/* --help between the usage line and the options: what a run does. */
	const char *about;
	const struct bench_option *options; /* ends with an entry whose name is NULL */
	unsigned common;        /* BENCH_COMMON_* it takes */
	const char *default_locks; /* --locks' default, with BENCH_COMMON_LOCKS */
	/* Overrides of the shared options' defaults and limits (0: the shared
	 * ones: duration 2 s, at most 86400; repeat 1, at most 1000). */
	double default_duration_s, max_duration_s;
	unsigned default_repeat, max_repeat;
	/* The context: ctx_size bytes, a copy of ctx_init (NULL: zeroed). */
	size_t ctx_size;
	const void *ctx_init;
	/* Optional: --help after the options (locks, columns, exit status). */
	void (*help_more)(FILE *f);
	/* Runs what the command line asked for; returns the exit status. */
	int (*run)(void *ctx, struct bench_common *c);
};

/* Parses argv (argv[0] is the scenario's name) and runs the scenario: --help
 * or -h anywhere prints the help and exits 0; a bad command line exits 2. */
int bench_scenario_main(const struct bench_scenario *s, int argc, char **argv);

/* Whether the option named name (or its alias) was on the command line
 * just parsed. */
bool bench_option_given(const char *name);

/* Writes "  NAME  TEXT" with TEXT wrapped under the help's option column:
 * for a scenario's own lists (locks, columns). */
void bench_help_item(FILE *f, const char *name, const char *text);

#endif

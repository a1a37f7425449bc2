/* SPDX-License-Identifier: MIT */
/* hotlock-bench: the command line entry.  Dispatches to a scenario
 * ("hotlock-bench mutex ...") or runs a benchmark program of its own
 * ("hotlock-bench apps ..." runs hotlock-bench-apps from this binary's
 * directory); --help and --list describe what there is. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "compare.h"
#include "conds.h"
#include "harness.h"
#include "locks.h"
#include "rwlocks.h"

static const struct bench_scenario *const scenarios[] = {
	&bench_scenario_mutex,
	&bench_scenario_wake,
	&bench_scenario_rwlock,
	&bench_scenario_rwsem,
	&bench_scenario_cond,
	&bench_scenario_swap,
};
#define NSCENARIOS (sizeof scenarios / sizeof scenarios[0])

/* The benchmarks that are programs of their own (hotlock-bench-NAME,
 * bench/CMakeLists.txt's hotlock_bench_program). */
static const struct program {
	const char *name;
	const char *summary;
} programs[] = {
	{ "apps", "real programs (sysbench, memcached, stress-ng) on glibc and under "
		  "hotlock-run, and the shim's own cost" },
	{ "schbench", "Chris Mason's schbench: wake-up latency percentiles, "
		      "futex wake+wait vs hl_swap (seed 003)" },
	{ "futex-hash", "seed 002: the kernel's futex hash size (PR_FUTEX_HASH): perf's "
	  "futex-hash loop, and a handover past parked hotlock waiters, a fresh process "
	  "per size" },
	{ NULL, NULL },
};

static void print_scenarios(FILE *f)
{
	for (size_t i = 0; i < NSCENARIOS; i++)
		fprintf(f, "  %-15s %s\n", scenarios[i]->name, scenarios[i]->summary);
	for (const struct program *p = programs; p->name; p++)
		fprintf(f, "  %-15s %s\n", p->name, p->summary);
}

/* Runs hotlock-bench-NAME from this binary's directory with argv[1..]. */
static _Noreturn void run_program(const struct program *p, int argc, char **argv)
{
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
	char *slash;

	(void)argc;
	if (n < 0)
		bench_fatal("%s: cannot find this binary's directory: readlink "
			    "/proc/self/exe: %s", p->name, strerror(errno));
	path[n] = '\0';
	slash = strrchr(path, '/');
	if (!slash || snprintf(slash + 1, sizeof path - (size_t)(slash + 1 - path),
			       "hotlock-bench-%s", p->name) >= (int)(sizeof path - (size_t)(slash + 1 - path)))
		bench_fatal("%s: the path of hotlock-bench-%s is too long", p->name, p->name);
	argv[0] = path;
	execv(path, argv);
	bench_fatal("%s is a program of its own: cannot run %s: %s", p->name, path,
		    strerror(errno));
}

static void help(FILE *f)
{
	fprintf(f,
		"Usage: hotlock-bench SCENARIO [OPTIONS]\n"
		"       hotlock-bench compare [OPTIONS] OLD NEW\n"
		"       hotlock-bench --list | --help\n"
		"\n"
		"Compares hotlock's locks with the locks programs use today, on this\n"
		"machine: throughput, per-thread fairness, futex syscalls, context switches\n"
		"and CPU time per operation.  Tables on stdout, progress on stderr,\n"
		"JSON with --json FILE.  'hotlock-bench SCENARIO --help' for its options.\n"
		"\n"
		"Scenarios:\n");
	print_scenarios(f);
	fprintf(f,
		"\n"
		"Comparing two runs:\n"
		"  compare OLD NEW  judges a change from the JSON of two runs (files or\n"
		"                   directories, e.g. results.old results); 'hotlock-bench\n"
		"                   compare --help'\n"
		"\n"
		"Locks (mutual exclusion; [peer]: the locks hotlock is judged against,\n"
		"--locks peers):\n");
	bench_locks_print(f, "  ");
	fprintf(f,
		"\n"
		"Locks (reader-writer; the rwlock and rwsem scenarios):\n");
	bench_rwlocks_print(f, "  ");
	fprintf(f,
		"\n"
		"Condition variables, each with its mutex (the cond scenario):\n");
	bench_conds_print(f, "  ");
	fprintf(f,
		"\n"
		"Futex syscalls are counted by hotlock's futex layer, so they are known for\n"
		"hotlock, futex3, ww-rw and futex-cv (and are 0 for mcs, which never\n"
		"sleeps); glibc and the peers make their own futex calls, which cannot be\n"
		"counted: tables show '-', JSON null.\n"
		"\n"
		"Exit status: 0 ok, 1 a run failed, 2 bad command line (compare: 0\n"
		"compared, 1 nothing in common, 2 bad command line or input).\n");
}

int main(int argc, char **argv)
{
	bench_set_command(argc, argv);
	if (argc < 2)
		bench_usage_error(NULL, "no scenario given");
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		help(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--list") == 0) {
		printf("scenarios:\n");
		print_scenarios(stdout);
		/* Before locks and rwlocks: tests/bench_smoke.sh reads the
		 * lines under those two up to the end as theirs. */
		printf("conds:\n");
		bench_conds_print(stdout, "  ");
		printf("locks:\n");
		bench_locks_print(stdout, "  ");
		printf("rwlocks:\n");
		bench_rwlocks_print(stdout, "  ");
		return 0;
	}
	if (strcmp(argv[1], "compare") == 0)
		return bench_compare_main(argc - 1, argv + 1);
	for (const struct program *p = programs; p->name; p++)
		if (strcmp(argv[1], p->name) == 0)
			run_program(p, argc - 1, argv + 1);
	for (size_t i = 0; i < NSCENARIOS; i++)
		if (strcmp(argv[1], scenarios[i]->name) == 0)
			return bench_scenario_main(scenarios[i], argc - 1, argv + 1);
	if (argv[1][0] == '-')
		bench_usage_error(NULL, "unknown option '%s'", argv[1]);
	bench_usage_error(NULL, "unknown scenario '%s'", argv[1]);
}

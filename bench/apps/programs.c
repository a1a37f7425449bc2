/* SPDX-License-Identifier: MIT */
/* hotlock-bench-apps: the programs it runs, found before the runs:
 * hotlock-run and hotlock-shim-pair beside this executable (or where the
 * command line says), the workloads' programs in $PATH (one missing: its
 * workloads skipped, with the Debian package to install) and their
 * versions, for the JSON. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apps.h"

static bool executable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* name in $PATH, into buf; false if absent. */
static bool in_path(const char *name, char *buf, size_t len)
{
	const char *p = getenv("PATH");

	if (!p || !*p)
		p = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin";
	while (*p) {
		size_t n = strcspn(p, ":");

		if (n > 0 && (size_t)snprintf(buf, len, "%.*s/%s", (int)n, p, name) < len &&
		    executable(buf))
			return true;
		p += n + (p[n] == ':');
	}
	buf[0] = '\0';
	return false;
}

/* The directory of this executable, into buf. */
static void self_dir(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	char *slash;

	if (n <= 0)
		bench_fatal("apps: readlink /proc/self/exe: %s", strerror(errno));
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	if (slash)
		*slash = '\0';
}

/* The first line `prog --version` prints, into buf, for the JSON. */
static void version_of(const char *prog, char *buf, size_t len)
{
	struct cmd argv = { .n = 0 };
	struct child c;
	struct output o;

	cmd_add(&argv, prog, "--version", NULL);
	spawn(&c, NULL, false, false, prog, &argv);
	reap(&c, true, 10);
	child_output(&c, &o);
	snprintf(buf, len, "%.*s", (int)strcspn(o.out, "\n"), o.out);
	output_free(&o);
}

/* Whether a workload that runs program p is wanted. */
static bool wanted(const struct apps *a, enum app_program p)
{
	for (int k = 0; k < APP_NPROGRAMS; k++)
		if (a->want[k] && app_info[k].program == p)
			return true;
	return false;
}

/* Every workload that runs program p is skipped, for why. */
static void skip_program(struct apps *a, enum app_program p, const char *why)
{
	for (int k = 0; k < APP_NPROGRAMS; k++)
		if (app_info[k].program == p)
			snprintf(a->skip[k], sizeof a->skip[0], "%s", why);
}

/* The path given for option opt (an executable, else exit 2), into buf. */
static void given_path(const char *opt, const char *path, char *buf, size_t len)
{
	if (!executable(path))
		bench_usage_error("apps", "%s: '%s' is not an executable file", opt, path);
	snprintf(buf, len, "%s", path);
}

/* hotlock-run: --hotlock-run's, else ../bin/hotlock-run or ./hotlock-run
 * beside this executable (exit 1 when neither is there); hotlock-shim-pair:
 * --shim-pair's, else beside it (the pair skipped when it is not). */
static void find_own(struct apps *a)
{
	char dir[PATH_MAX], first[PATH_MAX + 32], second[PATH_MAX + 32];

	self_dir(dir, sizeof dir);
	if (a->hotlock_run_opt) {
		given_path("--hotlock-run", a->hotlock_run_opt, a->hotlock_run,
			   sizeof a->hotlock_run);
	} else {
		snprintf(first, sizeof first, "%s/../bin/hotlock-run", dir);
		snprintf(second, sizeof second, "%s/hotlock-run", dir);
		if (executable(first) && realpath(first, a->hotlock_run))
			;
		else if (executable(second) && realpath(second, a->hotlock_run))
			;
		else
			bench_fatal("apps: hotlock-run not found: looked for %s and %s (build it "
				    "with the library, or give --hotlock-run PATH)", first, second);
	}
	if (a->shim_pair_opt) {
		given_path("--shim-pair", a->shim_pair_opt, a->shim_pair, sizeof a->shim_pair);
	} else if (a->want[APP_NPROGRAMS]) {
		snprintf(first, sizeof first, "%s/hotlock-shim-pair", dir);
		if (!executable(first) || !realpath(first, a->shim_pair)) {
			a->shim_pair[0] = '\0';
			snprintf(a->skip[APP_NPROGRAMS], sizeof a->skip[0],
				 "hotlock-shim-pair not found (looked for %s; it is built beside "
				 "hotlock-bench, or give --shim-pair PATH)", first);
		}
	}
}

void find_programs(struct apps *a)
{
	find_own(a);
	if (!in_path("sysbench", a->sysbench, sizeof a->sysbench))
		skip_program(a, PROG_SYSBENCH, "sysbench not installed (apt-get install sysbench)");
	else if (wanted(a, PROG_SYSBENCH))
		version_of(a->sysbench, a->sysbench_version, sizeof a->sysbench_version);
	/* Not needed to build or to run the default workloads. */
	if (!in_path("stress-ng", a->stress_ng, sizeof a->stress_ng))
		skip_program(a, PROG_STRESS_NG,
			     "stress-ng not installed (apt-get install stress-ng)");
	else if (wanted(a, PROG_STRESS_NG))
		version_of(a->stress_ng, a->stress_ng_version, sizeof a->stress_ng_version);
	if (!in_path("memcached", a->memcached, sizeof a->memcached))
		skip_program(a, PROG_MEMCACHED,
			     "memcached not installed (apt-get install memcached)");
	else if (!in_path("memaslap", a->memaslap, sizeof a->memaslap) &&
		 !in_path("memcaslap", a->memaslap, sizeof a->memaslap))
		skip_program(a, PROG_MEMCACHED, "memaslap (memcaslap) not installed "
			     "(apt-get install libmemcached-tools)");
	else if (wanted(a, PROG_MEMCACHED))
		version_of(a->memcached, a->memcached_version, sizeof a->memcached_version);
}

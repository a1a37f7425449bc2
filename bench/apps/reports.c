/* SPDX-License-Identifier: MIT */
/* hotlock-bench-apps: what the shim says of a run.  Its line at exit
 * (HOTLOCK_SHIM_STATS=1), which tells whether it was loaded, and, for
 * --stats-cost, the contention reports (hotlock-run --stats-json) the
 * report side's programs write into a directory made for the bench: each
 * run's read, checked and removed, the directory removed at exit and on
 * SIGINT, SIGTERM and SIGHUP. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <jansson.h>

#include "apps.h"

/* The shim's line at exit (HOTLOCK_SHIM_STATS=1), into r. */
void shim_stats(const char *err, struct app_run *r)
{
	const char *p = strstr(err, "hotlock-preload: pid ");
	unsigned long long w, k, woke, other;
	int pid;

	r->stats = false;
	r->fx_wait = r->fx_wake = 0;
	if (p && sscanf(p, "hotlock-preload: pid %d futex calls: wait %llu wake %llu "
			"(woke %llu) other %llu", &pid, &w, &k, &woke, &other) == 5) {
		r->stats = true;
		r->fx_wait = w;
		r->fx_wake = k;
	}
}

/* A shim run must have run on the shim, a glibc run must not have. */
void check_side(const struct apps *a, const char *label, enum side s,
		const struct app_run *r)
{
	if (side_shim(a, s) && !r->stats)
		bench_fatal("%s: the shim was not in effect: no 'hotlock-preload:' line at "
			    "exit with HOTLOCK_SHIM_STATS=1 (is libhotlock-preload.so beside "
			    "hotlock-run, in ../lib?)", label);
	if (!side_shim(a, s) && r->stats)
		bench_fatal("%s: the shim was loaded into the glibc run (is hotlock-bench "
			    "itself running under hotlock-run or LD_PRELOAD?)", label);
}

/* ---- the contention report (--stats-cost) -------------------------------- */

/* The report directory, for the atexit and signal handlers: its path and an
 * open descriptor (-1: none). */
static char report_dir[PATH_MAX];
static int report_fd = -1;
static struct sigaction report_old[BENCH_END_SIGNALS];

/* Removes every file in the report directory.  Async-signal-safe (a signal
 * handler calls it): getdents64 and unlinkat on the open directory. */
static void reports_clear(void)
{
	struct ent {
		uint64_t ino;
		int64_t off;
		unsigned short reclen;
		unsigned char type;
		char name[];
	};
	char buf[4096] __attribute__((aligned(8)));
	bool again = true;

	if (report_fd < 0)
		return;
	/* From the start again until a pass removes nothing. */
	while (again) {
		long n;

		again = false;
		if (lseek(report_fd, 0, SEEK_SET) != 0)
			return;
		while ((n = syscall(SYS_getdents64, report_fd, buf, sizeof buf)) > 0)
			for (long off = 0; off < n; ) {
				const struct ent *e = (const struct ent *)(buf + off);

				off += e->reclen;
				if (strcmp(e->name, ".") != 0 && strcmp(e->name, "..") != 0 &&
				    unlinkat(report_fd, e->name, 0) == 0)
					again = true;
			}
	}
}

/* Removes the report directory and its files. */
static void reports_remove(void)
{
	if (report_fd < 0)
		return;
	reports_clear();
	close(report_fd);
	report_fd = -1;
	rmdir(report_dir);
}

static void reports_on_signal(int sig)
{
	const int saved = errno;

	/* The children first: one that is ending writes its report. */
	kill_live();
	reports_remove();
	/* Then as before this handler (--busy's, or the default). */
	for (size_t i = 0; i < BENCH_END_SIGNALS; i++)
		if (bench_end_signals[i] == sig)
			sigaction(sig, &report_old[i], NULL);
	raise(sig);
	errno = saved;
}

/* Makes the report directory (in $TMPDIR, else /tmp) and a->stats_pattern,
 * a file per pid there; removed at exit and on SIGINT, SIGTERM and SIGHUP. */
void reports_start(struct apps *a)
{
	const char *tmp = getenv("TMPDIR");

	if (!tmp || !*tmp)
		tmp = "/tmp";
	if ((size_t)snprintf(report_dir, sizeof report_dir, "%s/hotlock-bench-stats.XXXXXX",
			     tmp) >= sizeof report_dir)
		bench_fatal("apps: --stats-cost: TMPDIR is too long");
	if (!mkdtemp(report_dir))
		bench_fatal("apps: --stats-cost: cannot make a directory for the reports "
			    "(%s): %s", report_dir, strerror(errno));
	report_fd = open(report_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (report_fd < 0) {
		const int err = errno;

		rmdir(report_dir);
		bench_fatal("apps: --stats-cost: %s: %s", report_dir, strerror(err));
	}
	if (atexit(reports_remove) != 0)
		bench_fatal("apps: atexit failed");
	bench_catch_end_signals(reports_on_signal, report_old);
	snprintf(a->stats_dir, sizeof a->stats_dir, "%s", report_dir);
	snprintf(a->stats_pattern, sizeof a->stats_pattern, "%s/stats-%%p.json", report_dir);
}

/* One report file of the run, read into r (a JSON document a line, each
 * a process's report), then removed. */
static void report_read(const struct apps *a, const char *label, const char *name,
			struct app_run *r)
{
	char path[PATH_MAX + 300];
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	unsigned lineno = 0;
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", a->stats_dir, name);
	f = fopen(path, "r");
	if (!f)
		bench_fatal("%s: the report %s: %s", label, path, strerror(errno));
	while ((len = getline(&line, &cap, f)) > 0) {
		json_error_t err;
		json_t *doc, *locks, *lock;
		size_t i;

		lineno++;
		r->report_bytes += (uint64_t)len;
		doc = json_loads(line, JSON_DISABLE_EOF_CHECK, &err);
		if (!doc || json_integer_value(json_object_get(doc, "hotlock_stats")) != 1 ||
		    !json_is_integer(json_object_get(doc, "locks_tracked")))
			bench_fatal("%s: the report %s: line %u is not a hotlock-run --stats-json "
				    "report (%s)", label, path, lineno,
				    doc ? "no hotlock_stats 1 or locks_tracked" : err.text);
		r->reports++;
		r->locks_tracked += (uint64_t)json_integer_value(json_object_get(doc, "locks_tracked"));
		locks = json_object_get(doc, "locks");
		json_array_foreach(locks, i, lock)
			r->acquisitions += (uint64_t)json_integer_value(
				json_object_get(lock, "acquisitions"));
		json_decref(doc);
	}
	free(line);
	fclose(f);
	if (unlink(path) != 0)
		bench_fatal("%s: removing the report %s: %s", label, path, strerror(errno));
}

/* The reports of a run on the report side: each of its n programs must
 * have written a report of its own (hotlock-run names the file by the
 * program's pid, which is not the pid started here, hotlock-run's), else
 * the run measured something else and the bench exits 1; n is 0 for a
 * program that never contends (the single-threaded pair), which writes
 * none.  Every file there is read into r (those of the programs' forks
 * too: stress-ng's worker) and removed, so that the directory is empty
 * for the next run. */
void reports_check(const struct apps *a, const char *label, enum side s, unsigned n,
		   struct app_run *r)
{
	DIR *d;
	struct dirent *de;

	r->reports = 0;
	r->report_bytes = r->locks_tracked = r->acquisitions = 0;
	if (!side_report(a, s))
		return;
	d = opendir(a->stats_dir);
	if (!d)
		bench_fatal("%s: %s: %s", label, a->stats_dir, strerror(errno));
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			report_read(a, label, de->d_name, r);
	closedir(d);
	/* readdir may miss a file removed while it reads: whatever is left. */
	reports_clear();
	r->locks_d = (double)r->locks_tracked;
	if (r->reports < n)
		bench_fatal("%s: the program wrote no contention report (%u reports for %u "
			    "programs in %s)", label, r->reports, n, a->stats_dir);
}

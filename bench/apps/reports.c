/* SPDX-License-Identifier: MIT */
/* hotlock-bench-apps: what the shim says of a run.  Its line at exit
 * (HOTLOCK_SHIM_STATS=1), which tells whether it was loaded, and, for
 * --cost, the reports that the report side's programs write into a
 * directory made for the bench (hotlock-run --stats-json, or
 * --deadlocks-file for --deadlocks and --lock-order): each run's read,
 * checked and removed, the directory removed at exit and on SIGINT,
 * SIGTERM and SIGHUP. */
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

/* ---- the reports of --cost ------------------------------------------------ */

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

/* Makes the report directory (in $TMPDIR, else /tmp), a->report_pattern,
 * a file per pid there, and a->report_argv, the words that send the report
 * of --cost there (issue 40's spec: --deadlocks-file takes %p as
 * --stats-json does, and --lock-order's reports go there too); removed at
 * exit and on SIGINT, SIGTERM and SIGHUP. */
void reports_start(struct apps *a)
{
	const struct cost_info *ci = &cost_info[a->cost];
	const char *tmp = getenv("TMPDIR");

	if (!tmp || !*tmp)
		tmp = "/tmp";
	if ((size_t)snprintf(report_dir, sizeof report_dir, "%s/hotlock-bench-%s.XXXXXX", tmp,
			     ci->name) >= sizeof report_dir)
		bench_fatal("apps: --cost=%s: TMPDIR is too long", ci->name);
	if (!mkdtemp(report_dir))
		bench_fatal("apps: --cost=%s: cannot make a directory for the reports "
			    "(%s): %s", ci->name, report_dir, strerror(errno));
	report_fd = open(report_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (report_fd < 0) {
		const int err = errno;

		rmdir(report_dir);
		bench_fatal("apps: --cost=%s: %s: %s", ci->name, report_dir, strerror(err));
	}
	if (atexit(reports_remove) != 0)
		bench_fatal("apps: atexit failed");
	bench_catch_end_signals(reports_on_signal, report_old);
	snprintf(a->report_dir, sizeof a->report_dir, "%s", report_dir);
	snprintf(a->report_pattern, sizeof a->report_pattern, "%s/%s", report_dir, ci->file);
	/* --stats-json PATH as before; --deadlocks-file=PATH as the spec
	 * writes it. */
	a->report_argv[0] = ci->option;
	a->report_argv[1] = a->report_pattern;
	if (a->cost != COST_STATS) {
		snprintf(a->report_file_arg, sizeof a->report_file_arg, "--deadlocks-file=%s",
			 a->report_pattern);
		a->report_argv[1] = a->report_file_arg;
	}
	a->report_argv[2] = NULL;
}

/* One report file of a stats run, read into r (a JSON document a line,
 * each a process's report). */
static void stats_read(const char *label, const char *path, FILE *f, struct app_run *r)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	unsigned lineno = 0;

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
}

/* What the warning quotes of a detection's report. */
#define HEAD_LINES 8
#define HEAD_BYTES 1024

/* One --deadlocks-file of a run, read into r: its bytes, its reports
 * (each starts with a line "== hotlock: "), and from the first file that
 * is not empty its first lines (cut at HEAD_BYTES) into r->report_head,
 * which is so not NULL once report_bytes is not 0.  A good program leaves
 * no such file, or only empty ones. */
static void detection_read(FILE *f, struct app_run *r)
{
	const bool quote = !r->report_head;
	char *line = NULL;
	size_t cap = 0, used = 0;
	ssize_t len;
	unsigned lines = 0;

	while ((len = getline(&line, &cap, f)) > 0) {
		r->report_bytes += (uint64_t)len;
		r->reports += strncmp(line, "== hotlock: ", 12) == 0;
		if (quote && lines < HEAD_LINES && used < HEAD_BYTES - 1) {
			const size_t n = (size_t)len < HEAD_BYTES - 1 - used ?
					 (size_t)len : HEAD_BYTES - 1 - used;

			if (!r->report_head)
				r->report_head = bench_xcalloc(HEAD_BYTES, 1);
			memcpy(r->report_head + used, line, n);
			used += n;
		}
		lines++;
	}
	r->report_files += lines > 0;
	free(line);
}

/* One report file of the run, read into r as its kind says, then removed. */
static void report_read(const struct apps *a, const char *label, const char *name,
			struct app_run *r)
{
	char path[PATH_MAX + 300];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", a->report_dir, name);
	f = fopen(path, "r");
	if (!f)
		bench_fatal("%s: the report %s: %s", label, path, strerror(errno));
	if (cost_info[a->cost].warns)
		detection_read(f, r);
	else
		stats_read(label, path, f, r);
	fclose(f);
	if (unlink(path) != 0)
		bench_fatal("%s: removing the report %s: %s", label, path, strerror(errno));
}

/* The reports of a run on the report side, every file in the directory
 * read into r (those of the programs' forks too: stress-ng's worker) and
 * removed, so that the directory is empty for the next run.  stats: each
 * of its n programs must have written a report of its own (hotlock-run
 * names the file by the program's pid, which is not the pid started here,
 * hotlock-run's), else the run measured something else and the bench
 * exits 1; n is 0 for a program that never contends (the single-threaded
 * pair), which writes none.  deadlocks, lock-order: a report is not an
 * error but a warning (reports_warn; r->report_head keeps its first
 * lines): the bench measures the cost, the tests judge the reports. */
void reports_check(const struct apps *a, const char *label, enum side s, unsigned n,
		   struct app_run *r)
{
	DIR *d;
	struct dirent *de;

	r->reports = r->report_files = 0;
	r->report_bytes = r->locks_tracked = r->acquisitions = 0;
	if (!side_report(a, s))
		return;
	d = opendir(a->report_dir);
	if (!d)
		bench_fatal("%s: %s: %s", label, a->report_dir, strerror(errno));
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			report_read(a, label, de->d_name, r);
	closedir(d);
	/* readdir may miss a file removed while it reads: whatever is left. */
	reports_clear();
	r->locks_d = (double)r->locks_tracked;
	if (!cost_info[a->cost].warns && r->reports < n)
		bench_fatal("%s: the program wrote no contention report (%u reports for %u "
			    "programs in %s)", label, r->reports, n, a->report_dir);
}

/* On stderr, after its progress line: a detection's run that made a report
 * (what: run_what's), with the report's first lines. */
void reports_warn(const struct apps *a, const char *what, const struct app_run *r)
{
	if (!cost_info[a->cost].warns || r->report_bytes == 0)
		return;
	bench_progress_clear();
	fprintf(stderr, "hotlock-bench: warning: apps %s: hotlock-run %s reported: %u "
		"report%s, %llu bytes in %u file%s (a real program should make none); the "
		"first lines:\n%s%s", what, cost_info[a->cost].option, r->reports,
		r->reports == 1 ? "" : "s", (unsigned long long)r->report_bytes,
		r->report_files, r->report_files == 1 ? "" : "s", r->report_head,
		r->report_head[strlen(r->report_head) - 1] == '\n' ? "" : "\n");
}

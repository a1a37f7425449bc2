/* SPDX-License-Identifier: MIT */
/* hotlock-bench apps: real programs on glibc's locks and on hotlock's, through
 * the pthread shim (hotlock-run, libhotlock-preload.so), and what the shim
 * itself costs.
 *
 * Workloads (Debian's programs; one missing is skipped with a line naming
 * the package):
 *   sysbench-mutex    sysbench mutex: T threads each take one of a few
 *                     mutexes (--mutex-num 4) a fixed number of times; the
 *                     total is fixed (it does not grow with T); measure: lock
 *                     acquisitions per second of sysbench's total time.
 *   sysbench-threads  sysbench threads: T threads lock one mutex, sched_yield
 *                     with it held and unlock, 100 times an event, for
 *                     --duration seconds; measure: events per second.
 *   memcached         memcached -t T on a free port of 127.0.0.1 (UDP off),
 *                     driven by libmemcached-tools' memaslap (memcaslap on
 *                     Debian 12): 2T connections, 90% get and 10% set, for
 *                     --duration seconds; measure: its operations per second.
 *                     The server is stopped with SIGTERM and reaped.
 *   stress-ng-mutex   stress-ng --mutex 1 --mutex-procs T: one worker
 *                     process whose T threads (2 to 64) each loop { take a
 *                     random SCHED_FIFO priority (EPERM unless root); lock
 *                     the one mutex; drop to the lowest; sched_yield;
 *                     unlock } for --duration seconds; measure: bogo ops
 *                     (loops) per second of real time, as stress-ng reports
 *                     it (--metrics-brief).  stress-ng 0.15 (Debian 12's)
 *                     runs 2 threads whatever --mutex-procs says: the
 *                     threads the worker ran are looked at in /proc and a
 *                     row says so when they are not T.  Opt-in; skipped
 *                     where stress-ng is not installed.
 *   the -x2 forms     sysbench-mutex-x2, sysbench-threads-x2,
 *                     stress-ng-mutex-x2: two instances of the program, each
 *                     with T threads, started together (both on glibc, or
 *                     both under hotlock-run); measure: the sum of the two
 *                     instances' rates, each over its own time.  Opt-in
 *                     (--workloads).
 * Each (workload, T) runs on glibc and under hotlock-run alternately, glibc
 * first, --repeat times; a row shows each side's median, its range over the
 * repeats, shim ÷ glibc (> 1: the shim is faster) and each side's CPU time
 * per run (user + sys of the program, from wait4: memcached's own for the
 * memcached rows, the load generator's apart in the JSON; the -x2 rows' both
 * instances together, each apart in the JSON).
 *
 * --busy N: N CPU-bound processes (the harness's, busy.c) run from before
 * the first run to after the last, beside the glibc and the shim runs alike.
 *
 * The shim's own cost: hotlock-shim-pair (bench/shim_pair.c, not linked with
 * hotlock) times uncontended pthread_mutex_lock + unlock pairs, best of 5
 * trials a run, in a single-threaded process and with a second, idle thread
 * alive (glibc's lock skips its atomic instruction while a process has one
 * thread), on glibc and under hotlock-run alternately, --repeat times.
 *
 * Every run sets HOTLOCK_SHIM_STATS=1: the shim, where loaded, prints its
 * futex calls at exit, which tells that it was (a shim run without that line,
 * or a glibc run with it, is an error), and how contended its locks were.
 * The old report variables (HOTLOCK_STATS, HOTLOCK_STATS_JSON,
 * HOTLOCK_STATS_TOP) are unset in every child, whatever the bench was given.
 *
 * --stats-cost: what the contention report (hotlock-run --stats-json,
 * src/preload/shim_stats.c and its collector, tools/collector.c) costs.
 * Both sides run under hotlock-run: the baseline ("shim") as above, the
 * other ("shim+stats") with --stats-json DIR/stats-%p.json, DIR a
 * directory made for the run (mkdtemp) and removed at exit, on an error
 * and on SIGINT, SIGTERM and SIGHUP.  Same workloads, same alternation
 * (shim first), same table; the ratio is shim+stats over shim.  After each
 * shim+stats run its programs must have left as many non-empty report
 * files as it started programs, whose lines are reports (hotlock_stats
 * 1), else the bench exits 1: a run without its report measured the
 * baseline twice.  The files are read (their
 * locks_tracked and the listed locks' acquisitions summed into the run's
 * JSON), then removed. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "harness.h"

static const char *const me = "apps";

/* What a run is: the programs (the workloads --workloads names, in the
 * order of the table), then the two forms of the pair. */
enum app_kind {
	APP_MUTEX, APP_THREADS, APP_MEMCACHED, APP_MUTEX_X2, APP_THREADS_X2,
	APP_STRESS, APP_STRESS_X2, PAIR_SINGLE, PAIR_IDLE, APP_NKINDS
};
#define APP_NPROGRAMS 7
#define APP_MAX_INSTANCES 2

/* The program a workload runs. */
enum app_program { PROG_SYSBENCH, PROG_MEMCACHED, PROG_STRESS_NG, PROG_PAIR };

static const struct app_info {
	const char *name;
	const char *unit;       /* the table's */
	double scale;           /* per second over this is the table's unit */
	const char *json_unit;  /* per second, in the JSON's ops_per_sec */
	enum app_program program;
	unsigned instances;     /* run at once, their rates summed */
	bool by_default;        /* without --workloads */
	enum app_kind single;   /* the one-instance form of the workload */
} app_info[APP_NKINDS] = {
	[APP_MUTEX] = { "sysbench-mutex", "Mlock/s", 1e6, "locks/s", PROG_SYSBENCH, 1, true, APP_MUTEX },
	[APP_THREADS] = { "sysbench-threads", "kevent/s", 1e3, "events/s", PROG_SYSBENCH, 1, true, APP_THREADS },
	[APP_MEMCACHED] = { "memcached", "kop/s", 1e3, "ops/s", PROG_MEMCACHED, 1, true, APP_MEMCACHED },
	[APP_MUTEX_X2] = { "sysbench-mutex-x2", "Mlock/s", 1e6, "locks/s", PROG_SYSBENCH, 2, false, APP_MUTEX },
	[APP_THREADS_X2] = { "sysbench-threads-x2", "kevent/s", 1e3, "events/s", PROG_SYSBENCH, 2, false, APP_THREADS },
	[APP_STRESS] = { "stress-ng-mutex", "kbogo/s", 1e3, "bogo-ops/s", PROG_STRESS_NG, 1, false, APP_STRESS },
	[APP_STRESS_X2] = { "stress-ng-mutex-x2", "kbogo/s", 1e3, "bogo-ops/s", PROG_STRESS_NG, 2, false, APP_STRESS },
	[PAIR_SINGLE] = { "single thread", "ns/pair", 1, "pairs/s", PROG_PAIR, 1, true, PAIR_SINGLE },
	[PAIR_IDLE] = { "idle 2nd thread", "ns/pair", 1, "pairs/s", PROG_PAIR, 1, true, PAIR_IDLE },
};
/* The JSON's names of the pair's forms. */
static const char *const pair_json[2] = { "mutex-pair-1thread", "mutex-pair-idle-thread" };

/* A row's two sides: the baseline, run first, and the side judged against
 * it (the ratio's numerator for rates).  Without --stats-cost: glibc and the
 * shim; with it: the shim without its contention report and the shim with
 * it (side_shim, side_report). */
enum side { BASE, TRIAL };
static const char *const side_names[2] = { "glibc", "shim" };
static const char *const cost_names[2] = { "shim", "shim+stats" };

/* The workloads' fixed parameters. */
#define MUTEX_NUM          4
#define MUTEX_LOOPS        100
#define MUTEX_LOCKS_PER_S  10000000ul   /* total locks per --duration second */
#define THREAD_YIELDS      100
#define THREAD_LOCKS       1
#define STRESS_MIN_THREADS 2            /* stress-ng's --mutex-procs range */
#define STRESS_MAX_THREADS 64
#define STRESS_T_WHY       "stress-ng's --mutex-procs takes 2 to 64 threads"
#define PAIR_TRIALS        5
#define APPS_DEFAULT_THREADS "2,4,8"
#define APPS_QUICK_THREADS   "2,4"

/* What one instance of a program measured (the -x2 forms run two). */
struct app_instance {
	double value;           /* per second, over its own work_s */
	double cpu_s;           /* user + sys */
	double wall_s;          /* spawn to reap */
	double work_s;          /* its own time (sysbench's total time...) */
	uint64_t ops;
	/* stress-ng: the threads its worker ran (its tasks less its main
	 * thread, seen while it ran); 0 unknown. */
	unsigned threads_seen;
};

/* One run of one side. */
struct app_run {
	double value;           /* per second (workloads: the instances' sum),
				 * ns per pair (the pair) */
	double cpu_s;           /* user + sys of the program (its instances) */
	double wall_s;          /* spawn to reap, as seen from here (the longest) */
	double work_s;          /* the program's own time: sysbench's total time,
				 * memaslap's run time, stress-ng's real time
				 * (the longest instance's); NAN for the pair */
	uint64_t ops;           /* locks, events, operations, bogo ops */
	double loadgen_cpu_s;   /* memcached: memaslap's; NAN otherwise */
	double other_cpus;      /* the rest of the machine, CPUs on average */
	double busy_cpus;       /* the --busy processes; NAN without */
	bool stats;             /* the shim's line at exit was seen */
	/* --stats-cost, the report side: the reports its processes wrote (one
	 * line each), their bytes, their locks_tracked summed, and the
	 * acquisitions of the locks they list (the top 10 of each). */
	unsigned reports;
	uint64_t report_bytes, locks_tracked, acquisitions;
	double locks_d;         /* locks_tracked, for median_of */
	uint64_t fx_wait, fx_wake;
	double trials_ns[PAIR_TRIALS];
	unsigned ninst;         /* instances (the -x2 forms: 2) */
	struct app_instance inst[APP_MAX_INSTANCES];
};

/* One (workload, T): both sides' runs and what the table shows. */
struct app_row {
	enum app_kind kind;
	unsigned threads;
	struct app_run *runs[2];        /* [repeat] each */
	double med[2], min[2], max[2], cpu[2];
	unsigned median[2];             /* the index of the median run */
	double ratio;                   /* > 1: TRIAL (the shim) is faster */
	double ci_lo, ci_hi;            /* ratio's 95% interval (ratio_interval) */
	double locks;                   /* --stats-cost: locks_tracked, the median */
	/* stress-ng: the fewest and most threads a worker ran (0: unknown). */
	unsigned seen_min, seen_max;
};

struct apps {
	unsigned threads[BENCH_MAX_THREAD_COUNTS];
	size_t nthreads;
	unsigned repeat;
	unsigned duration;              /* seconds */
	bool quick;
	const char *json;
	bool want[APP_NPROGRAMS + 1];   /* [APP_NPROGRAMS]: the pair */
	const char *queue, *spin_ns;    /* hotlock-run's options, or NULL */
	unsigned long pairs;
	char hotlock_run[PATH_MAX];
	char shim_pair[PATH_MAX];       /* "" when not found */
	char sysbench[PATH_MAX], memcached[PATH_MAX], memaslap[PATH_MAX];
	char stress_ng[PATH_MAX];
	char skip[APP_NPROGRAMS + 1][PATH_MAX + 256]; /* why a workload is left out */
	char sysbench_version[64], memcached_version[64], stress_ng_version[96];
	unsigned loadgen_threads;       /* memaslap -T, for each T: min(2T, cores) */
	unsigned busy;                  /* --busy */
	int namew;                      /* the table's workload column */
	/* --stats-cost: both sides on the shim, TRIAL with --stats-json
	 * set to stats_pattern, a file per pid in stats_dir (made by the
	 * scenario, emptied after every run and removed at exit). */
	bool stats_cost;
	char stats_dir[PATH_MAX];
	char stats_pattern[PATH_MAX + 32];
	/* (workload, T) left out: stress-ng takes 2 to 64 threads. */
	struct { enum app_kind kind; unsigned threads; } tskip[2 * BENCH_MAX_THREAD_COUNTS];
	size_t ntskip;
};

/* Whether side s runs under hotlock-run, and with the JSON report on. */
static bool side_shim(const struct apps *a, enum side s)
{
	return s == TRIAL || a->stats_cost;
}

static bool side_report(const struct apps *a, enum side s)
{
	return s == TRIAL && a->stats_cost;
}

static const char *side_name(const struct apps *a, enum side s)
{
	return (a->stats_cost ? cost_names : side_names)[s];
}

/* ---- children ------------------------------------------------------------ */

/* Children still running, killed at exit (bench_fatal's included). */
static pid_t live[2 * APP_MAX_INSTANCES];

static void live_set(pid_t pid, bool on)
{
	for (size_t i = 0; i < sizeof live / sizeof live[0]; i++)
		if (on ? live[i] == 0 : live[i] == pid) {
			live[i] = on ? pid : 0;
			return;
		}
	if (on)
		bench_fatal("apps: too many children");
}

static void kill_live(void)
{
	for (size_t i = 0; i < sizeof live / sizeof live[0]; i++)
		if (live[i] > 0) {
			kill(live[i], SIGKILL);
			(void)waitpid(live[i], NULL, 0);
			live[i] = 0;
		}
}

struct child {
	const char *what;       /* "memcached", for messages */
	pid_t pid;
	FILE *out, *err;        /* its stdout and stderr */
	double t0;
	int status;
	struct rusage ru;
	double wall_s;
};

static FILE *xtmpfile(void)
{
	FILE *f = tmpfile();

	if (!f)
		bench_fatal("apps: tmpfile: %s", strerror(errno));
	/* Not to be inherited by the next child. */
	(void)fcntl(fileno(f), F_SETFD, FD_CLOEXEC);
	return f;
}

/* Starts argv (NULL-terminated), under hotlock-run when shim, with stdout and
 * stderr into files of their own and stdin from /dev/null.  The contention
 * report is off, but for the JSON one into a->stats_pattern (hotlock-run
 * --stats-json) when report. */
static void spawn(struct child *c, const struct apps *a, bool shim, bool report,
		  const char *what, char *const *argv)
{
	const char *full[64];
	size_t n = 0;
	const pid_t parent = getpid();

	if (shim) {
		full[n++] = a->hotlock_run;
		if (a->queue) {
			full[n++] = "--queue";
			full[n++] = a->queue;
		}
		if (a->spin_ns) {
			full[n++] = "--spin-ns";
			full[n++] = a->spin_ns;
		}
		if (report) {
			full[n++] = "--stats-json";
			full[n++] = a->stats_pattern;
		}
		full[n++] = "--";
	}
	for (size_t i = 0; argv[i]; i++) {
		if (n + 2 > sizeof full / sizeof full[0])
			bench_fatal("apps: too many arguments for %s", what);
		full[n++] = argv[i];
	}
	full[n] = NULL;
	c->what = what;
	c->out = xtmpfile();
	c->err = xtmpfile();
	fflush(stdout);
	fflush(stderr);
	c->t0 = bench_now();
	c->pid = fork();
	if (c->pid < 0)
		bench_fatal("apps: fork: %s", strerror(errno));
	if (c->pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		/* Dies with hotlock-bench, however that ends. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		if (null < 0 || dup2(null, 0) < 0 || dup2(fileno(c->out), 1) < 0 ||
		    dup2(fileno(c->err), 2) < 0)
			_exit(127);
		setenv("HOTLOCK_SHIM_STATS", "1", 1);
		unsetenv("HOTLOCK_STATS");
		unsetenv("HOTLOCK_STATS_JSON");
		unsetenv("HOTLOCK_STATS_TOP");
		execv(full[0], (char *const *)full);
		dprintf(2, "cannot run %s: %s\n", full[0], strerror(errno));
		_exit(127);
	}
	live_set(c->pid, true);
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Reaps c if it has ended (wait: within timeout_s, then SIGKILL).  True when
 * it ended by itself. */
static bool reap(struct child *c, bool wait, double timeout_s)
{
	const double deadline = bench_now() + timeout_s;

	for (;;) {
		pid_t r = wait4(c->pid, &c->status, WNOHANG, &c->ru);

		if (r == c->pid)
			break;
		if (r < 0 && errno != EINTR)
			bench_fatal("apps: wait4 (%s): %s", c->what, strerror(errno));
		if (!wait)
			return false;
		if (bench_now() > deadline) {
			kill(c->pid, SIGKILL);
			while (wait4(c->pid, &c->status, 0, &c->ru) < 0 && errno == EINTR)
				;
			live_set(c->pid, false);
			c->wall_s = bench_now() - c->t0;
			return false;
		}
		sleep_s(0.002);
	}
	live_set(c->pid, false);
	c->wall_s = bench_now() - c->t0;
	return true;
}

static double child_cpu(const struct child *c)
{
	return (double)c->ru.ru_utime.tv_sec + (double)c->ru.ru_utime.tv_usec * 1e-6 +
	       (double)c->ru.ru_stime.tv_sec + (double)c->ru.ru_stime.tv_usec * 1e-6;
}

/* The whole of f, NUL-terminated (malloc'd). */
static char *slurp(FILE *f)
{
	long n;
	char *s;

	if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0)
		bench_fatal("apps: reading a child's output: %s", strerror(errno));
	s = bench_xcalloc((size_t)n + 1, 1);
	if (n > 0 && fread(s, 1, (size_t)n, f) != (size_t)n)
		bench_fatal("apps: reading a child's output: short read");
	return s;
}

struct output {
	char *out, *err;
};

static void child_output(struct child *c, struct output *o)
{
	o->out = slurp(c->out);
	o->err = slurp(c->err);
	fclose(c->out);
	fclose(c->err);
}

static void output_free(struct output *o)
{
	free(o->out);
	free(o->err);
}

/* The last lines of s, for an error message. */
static const char *tail(const char *s)
{
	size_t n = strlen(s);
	const char *p = s + n;
	int lines = 0;

	while (p > s && n - (size_t)(p - s) < 600) {
		if (p[-1] == '\n' && ++lines > 6 && p < s + n - 1)
			break;
		p--;
	}
	return p;
}

static void status_text(char *buf, size_t len, int status)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "was killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "ended with wait status %#x", status);
}

static _Noreturn void child_failed(const char *label, const struct child *c,
				   const struct output *o, const char *why)
{
	char st[96];

	status_text(st, sizeof st, c->status);
	bench_fatal("%s: %s %s\n--- its stderr (end) ---\n%s--- its stdout (end) ---\n%s",
		    label, c->what, why ? why : st, tail(o->err), tail(o->out));
}

/* The number after key in text (key included), or false. */
static bool find_number(const char *text, const char *key, double *v)
{
	const char *p = strstr(text, key);
	char *end;

	if (!p)
		return false;
	*v = strtod(p + strlen(key), &end);
	return end != p + strlen(key) && isfinite(*v);
}

/* The shim's line at exit (HOTLOCK_SHIM_STATS=1), into r. */
static void shim_stats(const char *err, struct app_run *r)
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
static void check_side(const struct apps *a, const char *label, enum side s,
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
static void reports_start(struct apps *a)
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
static void reports_check(const struct apps *a, const char *label, enum side s,
			  const pid_t *pids, unsigned n, struct app_run *r)
{
	DIR *d;
	struct dirent *de;

	(void)pids;
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

/* ---- the rest of the machine -------------------------------------------- */

struct mark {
	double busy_s, self_s, load_s, at_s;
};

static double self_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void mark(struct mark *m)
{
	m->busy_s = bench_machine_busy_s();
	m->self_s = self_cpu_s();
	m->load_s = bench_busy_cpu_s();
	m->at_s = bench_now();
}

/* Into r: the CPUs kept busy since m by others than us, our children
 * (children_s of CPU time) and the --busy processes, on average; and those
 * the --busy processes kept busy (NAN without). */
static void load_since(const struct mark *m, double children_s, struct app_run *r)
{
	struct mark now;
	double others;

	mark(&now);
	others = (now.busy_s - m->busy_s) - (now.self_s - m->self_s) - children_s -
		 (now.load_s - m->load_s);
	r->other_cpus = isnan(others) || now.at_s <= m->at_s ? NAN :
		fmax(others, 0) / (now.at_s - m->at_s);
	r->busy_cpus = bench_busy_count() == 0 || isnan(now.load_s - m->load_s) ||
		now.at_s <= m->at_s ? NAN : (now.load_s - m->load_s) / (now.at_s - m->at_s);
}

/* ---- one run of each workload -------------------------------------------- */

/* An argument of a command line into buf; one that does not fit is a bug
 * here, not a short argument to pass on. */
static void argf(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void argf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len)
		bench_fatal("apps: an argument does not fit its buffer (%s)", fmt);
}

static void run_label(const struct apps *a, char *buf, size_t len, enum app_kind k,
		      unsigned t, enum side s)
{
	if (k >= PAIR_SINGLE)
		snprintf(buf, len, "apps pair (%s) %s", app_info[k].name, side_name(a, s));
	else
		snprintf(buf, len, "apps %s T=%u %s", app_info[k].name, t, side_name(a, s));
}

/* Runs a program to its end (under hotlock-run when shim, with the JSON
 * report when report) and checks its exit status. */
static void run_to_end(const struct apps *a, const char *label, bool shim, bool report,
		       const char *what, char *const *argv, double timeout_s,
		       struct child *c, struct output *o)
{
	spawn(c, a, shim, report, what, argv);
	if (!reap(c, true, timeout_s)) {
		child_output(c, o);
		child_failed(label, c, o, "did not end in time and was killed");
	}
	child_output(c, o);
	if (!WIFEXITED(c->status) || WEXITSTATUS(c->status) != 0)
		child_failed(label, c, o, NULL);
}

/* Starts n instances of a program at once (one right after the other). */
static void spawn_together(const struct apps *a, enum side s, const char *what,
			   char *const *argv, unsigned n, struct child *c)
{
	for (unsigned i = 0; i < n; i++)
		spawn(&c[i], a, side_shim(a, s), side_report(a, s), what, argv);
}

/* Reaps the n instances as each ends (so that each one's wall time is its
 * own), within timeout_s of now, and checks their exit status.  On a
 * failure the others are killed at exit (kill_live). */
static void reap_together(const char *label, unsigned n, double timeout_s,
			  struct child *c, struct output *o)
{
	const double deadline = bench_now() + timeout_s;
	bool done[APP_MAX_INSTANCES] = { false };
	unsigned left = n;

	while (left > 0) {
		for (unsigned i = 0; i < n; i++)
			if (!done[i] && reap(&c[i], false, 0)) {
				done[i] = true;
				left--;
			}
		if (left == 0)
			break;
		if (bench_now() > deadline)
			for (unsigned i = 0; i < n; i++)
				if (!done[i]) {
					reap(&c[i], true, 0);   /* kills it */
					child_output(&c[i], &o[i]);
					child_failed(label, &c[i], &o[i],
						     "did not end in time and was killed");
				}
		sleep_s(0.002);
	}
	for (unsigned i = 0; i < n; i++) {
		child_output(&c[i], &o[i]);
		if (!WIFEXITED(c[i].status) || WEXITSTATUS(c[i].status) != 0)
			child_failed(label, &c[i], &o[i], NULL);
	}
}

/* The shim's lines at exit of every instance, into r: each must have (or,
 * on glibc, lack) one; the futex calls are summed. */
static void shim_stats_all(const struct apps *a, const char *label, enum side s,
			   const struct output *o, unsigned n, struct app_run *r)
{
	uint64_t wait = 0, wake = 0;

	for (unsigned i = 0; i < n; i++) {
		shim_stats(o[i].err, r);
		check_side(a, label, s, r);
		wait += r->fx_wait;
		wake += r->fx_wake;
	}
	r->fx_wait = wait;
	r->fx_wake = wake;
}

/* The reports of the n instances c (reports_check). */
static void reports_of(const struct apps *a, const char *label, enum side s,
		       const struct child *c, unsigned n, struct app_run *r)
{
	pid_t pids[APP_MAX_INSTANCES];

	for (unsigned i = 0; i < n; i++)
		pids[i] = c[i].pid;
	reports_check(a, label, s, pids, n, r);
}

/* r's totals from its instances: rates, CPU and ops summed, the longest
 * times. */
static void sum_instances(struct app_run *r)
{
	r->value = r->cpu_s = 0;
	r->wall_s = r->work_s = 0;
	r->ops = 0;
	for (unsigned i = 0; i < r->ninst; i++) {
		r->value += r->inst[i].value;
		r->cpu_s += r->inst[i].cpu_s;
		r->ops += r->inst[i].ops;
		r->wall_s = fmax(r->wall_s, r->inst[i].wall_s);
		r->work_s = fmax(r->work_s, r->inst[i].work_s);
	}
}

static void run_sysbench(const struct apps *a, enum app_kind k, unsigned t, enum side s,
			 struct app_run *r)
{
	const enum app_kind single = app_info[k].single;
	const unsigned n = app_info[k].instances;
	char label[128], threads[32], p1[48], p2[48], p3[48];
	char *argv[10];
	struct child c[APP_MAX_INSTANCES];
	struct output o[APP_MAX_INSTANCES];
	struct mark m;
	double total, events, timeout;
	uint64_t per_thread = 0;
	size_t na = 0;

	run_label(a, label, sizeof label, k, t, s);
	argf(threads, sizeof threads, "--threads=%u", t);
	argv[na++] = (char *)a->sysbench;
	if (single == APP_MUTEX) {
		/* The total is fixed: each thread's share of it. */
		per_thread = MUTEX_LOCKS_PER_S * a->duration / t;
		if (per_thread == 0)
			per_thread = 1;
		argv[na++] = "mutex";
		argv[na++] = threads;
		argf(p1, sizeof p1, "--mutex-num=%d", MUTEX_NUM);
		argf(p2, sizeof p2, "--mutex-locks=%llu", (unsigned long long)per_thread);
		argf(p3, sizeof p3, "--mutex-loops=%d", MUTEX_LOOPS);
		/* No time limit of sysbench's own (its default is 10 s). */
		argv[na++] = p1;
		argv[na++] = p2;
		argv[na++] = p3;
		argv[na++] = "--time=0";
		timeout = 60.0 * a->duration * n + 60;
	} else {
		argv[na++] = "threads";
		argv[na++] = threads;
		argf(p1, sizeof p1, "--thread-yields=%d", THREAD_YIELDS);
		argf(p2, sizeof p2, "--thread-locks=%d", THREAD_LOCKS);
		argf(p3, sizeof p3, "--time=%u", a->duration);
		argv[na++] = p1;
		argv[na++] = p2;
		argv[na++] = p3;
		timeout = a->duration + 60.0;
	}
	argv[na++] = "run";
	argv[na] = NULL;

	mark(&m);
	spawn_together(a, s, "sysbench", argv, n, c);
	reap_together(label, n, timeout, c, o);
	r->ninst = n;
	for (unsigned i = 0; i < n; i++) {
		struct app_instance *in = &r->inst[i];

		in->cpu_s = child_cpu(&c[i]);
		in->wall_s = c[i].wall_s;
		if (!find_number(o[i].out, "total time:", &total) || !(total > 0))
			child_failed(label, &c[i], &o[i], "printed no 'total time:'");
		in->work_s = total;
		if (single == APP_MUTEX) {
			in->ops = per_thread * t;
		} else {
			if (!find_number(o[i].out, "total number of events:", &events) ||
			    events < 0)
				child_failed(label, &c[i], &o[i],
					     "printed no 'total number of events:'");
			in->ops = (uint64_t)events;
		}
		in->value = (double)in->ops / total;
	}
	sum_instances(r);
	load_since(&m, r->cpu_s, r);
	r->loadgen_cpu_s = NAN;
	shim_stats_all(a, label, s, o, n, r);
	reports_of(a, label, s, c, n, r);
	for (unsigned i = 0; i < n; i++)
		output_free(&o[i]);
}

/* stress-ng's --metrics-brief line of the mutex stressor: "stress-ng:
 * metrc: [PID] mutex BOGO-OPS REAL-S USR-S SYS-S OPS/S-REAL OPS/S-CPU"
 * (stress-ng 0.15 writes it on stderr; the caller searches stdout too). */
static bool stress_metrics(const char *text, double *ops, double *real_s, double *rate)
{
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *q = strstr(p, "] mutex ");
		const char *eol = strchr(p, '\n');
		double usr, sys, rate_cpu;

		if (!q || (eol && q > eol))
			continue;
		if (sscanf(q + strlen("] mutex "), "%lf %lf %lf %lf %lf %lf", ops, real_s,
			   &usr, &sys, rate, &rate_cpu) == 6 && *real_s > 0)
			return true;
	}
	return false;
}

/* The first child of pid (/proc/PID/task/PID/children), or 0. */
static pid_t first_child(pid_t pid)
{
	char path[64];
	FILE *f;
	int child = 0;

	snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%d", &child) != 1)
		child = 0;
	fclose(f);
	return child;
}

/* Tasks (threads) of pid, 0 if it is gone. */
static unsigned task_count(pid_t pid)
{
	char path[64];
	struct dirent *de;
	unsigned n = 0;
	DIR *d;

	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Into seen[i]: the threads of the mutex worker that stress-ng instance
 * c[i] forked, its most tasks less its main thread over 5 looks 10 ms apart
 * once it is found (stress-ng 0.15 ignores --mutex-procs and runs 2); 0
 * when it cannot be seen within limit_s (no /proc/.../children, or it ended
 * first).  Counted in looks, not time: as root the worker's SCHED_FIFO
 * threads can starve this thread for long stretches. */
static void stress_threads(const struct child *c, unsigned n, double limit_s,
			   unsigned *seen)
{
	const double give_up = bench_now() + limit_s;
	pid_t worker[APP_MAX_INSTANCES] = { 0 };
	unsigned looks[APP_MAX_INSTANCES] = { 0 }, most[APP_MAX_INSTANCES] = { 0 };
	unsigned left = n;

	while (left > 0 && bench_now() < give_up) {
		for (unsigned i = 0; i < n; i++) {
			if (looks[i] == 5)
				continue;
			if (!worker[i])
				worker[i] = first_child(c[i].pid);
			if (worker[i]) {
				const unsigned t = task_count(worker[i]);

				most[i] = t > most[i] ? t : most[i];
				if (++looks[i] == 5)
					left--;
			}
		}
		sleep_s(0.01);
	}
	for (unsigned i = 0; i < n; i++)
		seen[i] = most[i] > 1 ? most[i] - 1 : 0;
}

static void run_stress(const struct apps *a, enum app_kind k, unsigned t, enum side s,
		       struct app_run *r)
{
	const unsigned n = app_info[k].instances;
	char label[128], procs[32], secs[32];
	char *argv[12];
	struct child c[APP_MAX_INSTANCES];
	struct output o[APP_MAX_INSTANCES];
	unsigned seen[APP_MAX_INSTANCES];
	struct mark m;
	size_t na = 0;

	run_label(a, label, sizeof label, k, t, s);
	argf(procs, sizeof procs, "%u", t);
	argf(secs, sizeof secs, "%us", a->duration);
	argv[na++] = (char *)a->stress_ng;
	argv[na++] = "--mutex";
	argv[na++] = "1";
	argv[na++] = "--mutex-procs";
	argv[na++] = procs;
	argv[na++] = "--timeout";
	argv[na++] = secs;
	argv[na++] = "--metrics-brief";
	argv[na] = NULL;

	mark(&m);
	spawn_together(a, s, "stress-ng", argv, n, c);
	/* While they run (--duration is a second at least). */
	stress_threads(c, n, a->duration, seen);
	for (unsigned i = 0; i < n; i++)
		r->inst[i].threads_seen = seen[i];
	reap_together(label, n, a->duration + 60.0, c, o);
	r->ninst = n;
	for (unsigned i = 0; i < n; i++) {
		struct app_instance *in = &r->inst[i];
		double ops, real_s, rate;

		if (!stress_metrics(o[i].err, &ops, &real_s, &rate) &&
		    !stress_metrics(o[i].out, &ops, &real_s, &rate))
			child_failed(label, &c[i], &o[i], "printed no metrics line of the "
				     "mutex stressor ('] mutex BOGO-OPS REAL-TIME ...')");
		in->cpu_s = child_cpu(&c[i]);
		in->wall_s = c[i].wall_s;
		in->work_s = real_s;
		in->ops = (uint64_t)ops;
		in->value = rate;
	}
	sum_instances(r);
	load_since(&m, r->cpu_s, r);
	r->loadgen_cpu_s = NAN;
	shim_stats_all(a, label, s, o, n, r);
	reports_of(a, label, s, c, n, r);
	for (unsigned i = 0; i < n; i++)
		output_free(&o[i]);
}

/* A TCP port of 127.0.0.1 nobody listens on now. */
static unsigned free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof sa;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) != 0)
		bench_fatal("apps: finding a free port: %s", strerror(errno));
	close(fd);
	return ntohs(sa.sin_port);
}

static bool accepts(unsigned port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok;

	if (fd < 0)
		bench_fatal("apps: socket: %s", strerror(errno));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ok = connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
	close(fd);
	return ok;
}

static void run_memcached(const struct apps *a, unsigned t, enum side s, struct app_run *r)
{
	char label[128], threads[32], port_s[32], server[64], lt[48], conc[48], secs[48];
	char *argv[12];
	struct child srv, gen;
	struct output so, go;
	struct mark m;
	const unsigned port = free_port();
	const unsigned loadgen = 2 * t < a->loadgen_threads ? 2 * t : a->loadgen_threads;
	/* 2T connections, a multiple of the load generator's threads. */
	const unsigned conns = (2 * t + loadgen - 1) / loadgen * loadgen;
	double tps, ops, run_s, t0;
	size_t n = 0;

	run_label(a, label, sizeof label, APP_MEMCACHED, t, s);
	argf(threads, sizeof threads, "%u", t);
	argf(port_s, sizeof port_s, "%u", port);
	argv[n++] = (char *)a->memcached;
	argv[n++] = "-l";
	argv[n++] = "127.0.0.1";
	argv[n++] = "-p";
	argv[n++] = port_s;
	argv[n++] = "-t";
	argv[n++] = threads;
	argv[n++] = "-U";
	argv[n++] = "0";
	if (geteuid() == 0) {
		argv[n++] = "-u";
		argv[n++] = "root";
	}
	argv[n] = NULL;

	mark(&m);
	spawn(&srv, a, side_shim(a, s), side_report(a, s), "memcached", argv);
	for (t0 = bench_now(); !accepts(port); sleep_s(0.01)) {
		if (reap(&srv, false, 0)) {
			child_output(&srv, &so);
			child_failed(label, &srv, &so, "ended before it accepted a connection");
		}
		if (bench_now() - t0 > 10) {
			reap(&srv, true, 0);
			child_output(&srv, &so);
			child_failed(label, &srv, &so, "did not accept connections within 10 s");
		}
	}

	argf(server, sizeof server, "--servers=127.0.0.1:%u", port);
	argf(lt, sizeof lt, "--threads=%u", loadgen);
	argf(conc, sizeof conc, "--concurrency=%u", conns);
	argf(secs, sizeof secs, "--time=%us", a->duration);
	n = 0;
	argv[n++] = (char *)a->memaslap;
	argv[n++] = server;
	argv[n++] = lt;
	argv[n++] = conc;
	argv[n++] = secs;
	argv[n] = NULL;
	/* The load generator runs on glibc either way. */
	run_to_end(a, label, false, false, strrchr(a->memaslap, '/') + 1, argv,
		   a->duration + 60.0, &gen, &go);
	if (!find_number(go.out, "TPS:", &tps) || !find_number(go.out, "Ops:", &ops) ||
	    !find_number(go.out, "Run time:", &run_s) || !(tps > 0))
		child_failed(label, &gen, &go, "printed no 'Run time: ... Ops: ... TPS: ...'");

	/* The server must still be up, then stops on SIGTERM (memcached ends
	 * its event loop within a second). */
	if (reap(&srv, false, 0)) {
		child_output(&srv, &so);
		child_failed(label, &srv, &so, "ended while it was being measured");
	}
	kill(srv.pid, SIGTERM);
	if (!reap(&srv, true, 15)) {
		fprintf(stderr, "hotlock-bench: %s: memcached did not end within 15 s of "
			"SIGTERM and was killed\n", label);
		srv.status = 0;
	}
	child_output(&srv, &so);
	if (!WIFEXITED(srv.status) || WEXITSTATUS(srv.status) != 0)
		child_failed(label, &srv, &so, NULL);

	r->value = tps;
	r->ops = (uint64_t)ops;
	r->work_s = run_s;
	r->cpu_s = child_cpu(&srv);
	r->loadgen_cpu_s = child_cpu(&gen);
	r->wall_s = srv.wall_s;
	load_since(&m, r->cpu_s + r->loadgen_cpu_s, r);
	shim_stats(so.err, r);
	output_free(&so);
	output_free(&go);
	check_side(a, label, s, r);
	reports_check(a, label, s, &srv.pid, 1, r);
}

static void run_pair(const struct apps *a, enum app_kind k, enum side s, struct app_run *r)
{
	char label[128], pairs[32], trials[16];
	char *argv[8];
	struct child c;
	struct output o;
	struct mark m;
	const char *p;
	size_t n = 0;

	run_label(a, label, sizeof label, k, 1, s);
	argf(pairs, sizeof pairs, "%lu", a->pairs);
	argf(trials, sizeof trials, "%d", PAIR_TRIALS);
	argv[n++] = (char *)a->shim_pair;
	if (k == PAIR_IDLE)
		argv[n++] = "--idle-thread";
	argv[n++] = "--pairs";
	argv[n++] = pairs;
	argv[n++] = "--trials";
	argv[n++] = trials;
	argv[n] = NULL;
	mark(&m);
	run_to_end(a, label, side_shim(a, s), side_report(a, s), "hotlock-shim-pair", argv,
		   120, &c, &o);
	r->cpu_s = child_cpu(&c);
	load_since(&m, r->cpu_s, r);
	r->wall_s = c.wall_s;
	r->work_s = r->loadgen_cpu_s = NAN;
	r->ops = a->pairs;
	if (!find_number(o.out, "ns_per_pair", &r->value) || !(r->value > 0))
		child_failed(label, &c, &o, "printed no 'ns_per_pair'");
	if ((p = strstr(o.out, "trials_ns")))
		for (int i = 0; i < PAIR_TRIALS; i++) {
			char *end;

			p += i == 0 ? strlen("trials_ns") : 0;
			r->trials_ns[i] = strtod(p, &end);
			if (end == p)
				r->trials_ns[i] = NAN;
			p = end;
		}
	p = strstr(o.out, "lock_from ");
	if (!p)
		child_failed(label, &c, &o, "printed no 'lock_from'");
	if ((strstr(p, "hotlock-preload") != NULL) != side_shim(a, s))
		bench_fatal("%s: pthread_mutex_lock came from %.*s, which is %sthe shim", label,
			    (int)strcspn(p + 10, "\n"), p + 10, side_shim(a, s) ? "not " : "");
	shim_stats(o.err, r);
	output_free(&o);
	check_side(a, label, s, r);
	reports_check(a, label, s, &c.pid, 0, r);     /* never contends */
}

static void run_one(const struct apps *a, enum app_kind k, unsigned t, enum side s,
		    struct app_run *r)
{
	memset(r, 0, sizeof *r);
	r->ninst = 1;
	if (app_info[k].program == PROG_MEMCACHED)
		run_memcached(a, t, s, r);
	else if (app_info[k].program == PROG_PAIR)
		run_pair(a, k, s, r);
	else if (app_info[k].program == PROG_STRESS_NG)
		run_stress(a, k, t, s, r);
	else
		run_sysbench(a, k, t, s, r);
}

/* ---- the rows ------------------------------------------------------------ */

/* The lower median of the runs' double at offset off; *idx (unless NULL): the
 * run that has it. */
static double median_of(const struct app_run *runs, unsigned n, size_t off, unsigned *idx)
{
	double *v = bench_xcalloc(n, sizeof *v), med;

	for (unsigned i = 0; i < n; i++)
		v[i] = *(const double *)((const char *)&runs[i] + off);
	if (idx)
		*idx = bench_median_index(v, n);
	med = bench_lower_median(v, n);
	free(v);
	return med;
}

/* The ratio of a row's medians as `ratio` orients it (the pair's inverted). */
static double oriented(enum app_kind k, double base, double trial)
{
	return k >= PAIR_SINGLE ? base / trial : trial / base;
}

#define RESAMPLES 2000

/* The lower median of n values drawn, with replacement, from runs' values,
 * by the generator *x (xorshift64). */
static double resampled_median(const struct app_run *runs, unsigned n, double *v, uint64_t *x)
{
	for (unsigned i = 0; i < n; i++) {
		*x ^= *x << 13;
		*x ^= *x >> 7;
		*x ^= *x << 17;
		v[i] = runs[*x % n].value;
	}
	return bench_lower_median(v, n);
}

/* The ratio's 95% interval by the bootstrap: each side's runs resampled
 * apart, RESAMPLES times, the ratio of the two medians each time; the
 * 2.5th and 97.5th percentiles.  On this noisy VM a ratio's runs spread
 * far (stress-ng's twofold): an interval that holds 1 says these runs do
 * not tell the sides apart.  A fixed seed: the same runs give the same
 * interval. */
static void ratio_interval(struct app_row *row, unsigned repeat)
{
	double *v = bench_xcalloc(repeat, sizeof *v);
	double *r = bench_xcalloc(RESAMPLES, sizeof *r);
	uint64_t x = 0x9e3779b97f4a7c15ull;

	for (unsigned i = 0; i < RESAMPLES; i++) {
		double base = resampled_median(row->runs[BASE], repeat, v, &x);
		double trial = resampled_median(row->runs[TRIAL], repeat, v, &x);

		r[i] = oriented(row->kind, base, trial);
	}
	qsort(r, RESAMPLES, sizeof *r, bench_cmp_double);
	row->ci_lo = r[RESAMPLES / 40];
	row->ci_hi = r[RESAMPLES - 1 - RESAMPLES / 40];
	free(r);
	free(v);
}

static void row_figures(struct app_row *row, unsigned repeat)
{
	for (int s = 0; s < 2; s++) {
		const struct app_run *r = row->runs[s];

		row->med[s] = median_of(r, repeat, offsetof(struct app_run, value), &row->median[s]);
		row->cpu[s] = median_of(r, repeat, offsetof(struct app_run, cpu_s), NULL);
		row->min[s] = row->max[s] = r[0].value;
		for (unsigned i = 1; i < repeat; i++) {
			row->min[s] = fmin(row->min[s], r[i].value);
			row->max[s] = fmax(row->max[s], r[i].value);
		}
	}
	for (int s = 0; s < 2; s++)
		for (unsigned i = 0; i < repeat; i++)
			for (unsigned k = 0; k < row->runs[s][i].ninst; k++) {
				const unsigned seen = row->runs[s][i].inst[k].threads_seen;

				if (seen && (!row->seen_min || seen < row->seen_min))
					row->seen_min = seen;
				if (seen > row->seen_max)
					row->seen_max = seen;
			}
	/* > 1: TRIAL (the shim; with --stats-cost the shim with the report) is
	 * faster. */
	row->ratio = oriented(row->kind, row->med[BASE], row->med[TRIAL]);
	ratio_interval(row, repeat);
	row->locks = median_of(row->runs[TRIAL], repeat, offsetof(struct app_run, locks_d), NULL);
}

/* 3 significant digits or so. */
static const char *num(char *buf, size_t len, double v)
{
	snprintf(buf, len, fabs(v) >= 100 ? "%.0f" : fabs(v) >= 10 ? "%.1f" : "%.2f", v);
	return buf;
}

static const char *cell(char *buf, size_t len, const struct app_row *row, int s)
{
	const double sc = app_info[row->kind].scale;
	char a[24], b[24], c[24];

	snprintf(buf, len, "%s [%s-%s]", num(a, sizeof a, row->med[s] / sc),
		 num(b, sizeof b, row->min[s] / sc), num(c, sizeof c, row->max[s] / sc));
	return buf;
}

/* A row's 95% interval of the ratio (ratio_interval), as "[lo-hi]". */
static const char *interval(char *buf, size_t len, const struct app_row *row)
{
	snprintf(buf, len, "[%.2f-%.2f]", row->ci_lo, row->ci_hi);
	return buf;
}

/* What the interval column means, under each table's header. */
static void print_interval_note(void)
{
	printf("95%% CI: the ratio's interval by the bootstrap (each side's runs resampled\n"
	       "apart, %d times); one that holds 1 means these runs do not tell the\n"
	       "sides apart\n", RESAMPLES);
}

static void print_pair_header(const struct apps *a)
{
	char b[48], t[48];

	if (a->stats_cost)
		printf("The report's cost on the shim's fast path: an uncontended\n"
		       "pthread_mutex_lock + unlock pair in hotlock-shim-pair under hotlock-run,\n"
		       "without and with the contention report (--stats-json) (%lu pairs,\n"
		       "best of %d trials a run; median [min-max] of %u runs; ratio = shim /\n"
		       "shim+stats, > 1: the report side is faster; locks: the locks its\n"
		       "report recorded, median)\n", a->pairs, PAIR_TRIALS, a->repeat);
	else
		printf("The shim's own cost: an uncontended pthread_mutex_lock + unlock pair in a\n"
		       "program not linked with hotlock (hotlock-shim-pair, %lu pairs, best of %d\n"
		       "trials a run; median [min-max] of %u runs; ratio = glibc / shim, > 1: the\n"
		       "shim is faster)\n", a->pairs, PAIR_TRIALS, a->repeat);
	print_interval_note();
	snprintf(b, sizeof b, "%s ns/pair", side_name(a, BASE));
	snprintf(t, sizeof t, "%s ns/pair", side_name(a, TRIAL));
	printf("%-17s %-26s %-26s %6s %-11s%s\n", "form", b, t, "ratio", "95% CI",
	       a->stats_cost ? "  locks" : "");
}

static void print_pair_row(const struct apps *a, const struct app_row *row)
{
	char g[96], h[96], ci[32];

	printf("%-17s %-26s %-26s %6.2f %-11s", app_info[row->kind].name,
	       cell(g, sizeof g, row, BASE), cell(h, sizeof h, row, TRIAL), row->ratio,
	       interval(ci, sizeof ci, row));
	if (a->stats_cost)
		printf(" %6.0f", row->locks);
	putchar('\n');
}

static void print_app_header(const struct apps *a, const struct app_row *rows, size_t nrows)
{
	bool x2 = false, stress = false;

	for (size_t i = 0; i < nrows; i++) {
		x2 |= app_info[rows[i].kind].instances > 1;
		stress |= app_info[rows[i].kind].program == PROG_STRESS_NG;
	}
	if (a->stats_cost)
		printf("Programs under hotlock-run without and with its contention report\n"
		       "(--stats-json: hotlock-run's JSON report of each process), alternately\n"
		       "(without first), median [min-max] of %u runs of about %u s; ratio =\n"
		       "shim+stats / shim, > 1: the report side is faster; cpu-s, cpu-st = user +\n"
		       "sys seconds of the program per run (median; memcached: the server's; the\n"
		       "report is hotlock-run's, after the end); locks: the locks the report\n"
		       "recorded (locks_tracked, median)\n", a->repeat, a->duration);
	else
		printf("Programs on glibc and under hotlock-run, alternately (glibc first), median\n"
		       "[min-max] of %u runs of about %u s; ratio = shim / glibc, > 1: the shim is\n"
		       "faster; cpu-s = user + sys seconds of the program per run (median;\n"
		       "memcached: the server's)\n", a->repeat, a->duration);
	if (x2)
		printf("-x2: two instances of the program at once, T threads each, both on\n"
		       "%s; their rates and CPU seconds summed\n", a->stats_cost ?
		       "the same side" : "glibc or both under hotlock-run");
	if (stress)
		printf("stress-ng: bogo ops per second of real time, as stress-ng reports it\n");
	print_interval_note();
	printf("%-*s %3s %-8s %-24s %-24s %6s %-11s %6s %6s%s\n", a->namew, "workload", "T", "unit",
	       side_name(a, BASE), side_name(a, TRIAL), "ratio", "95% CI",
	       a->stats_cost ? "cpu-s" : "cpu-g", a->stats_cost ? "cpu-st" : "cpu-s",
	       a->stats_cost ? "  locks" : "");
}

static void print_app_row(const struct apps *a, const struct app_row *row)
{
	char g[96], h[96], ci[32];

	printf("%-*s %3u %-8s %-24s %-24s %6.2f %-11s %6.2f %6.2f", a->namew,
	       app_info[row->kind].name, row->threads, app_info[row->kind].unit,
	       cell(g, sizeof g, row, BASE), cell(h, sizeof h, row, TRIAL), row->ratio,
	       interval(ci, sizeof ci, row), row->cpu[BASE], row->cpu[TRIAL]);
	if (a->stats_cost)
		printf(" %6.0f", row->locks);
	putchar('\n');
	/* A stress-ng that ignores --mutex-procs (0.15 runs 2 threads). */
	if (row->seen_max && (row->seen_min != row->threads || row->seen_max != row->threads)) {
		printf("  note: stress-ng's worker ran %u", row->seen_min);
		if (row->seen_max != row->seen_min)
			printf("-%u", row->seen_max);
		printf(" threads, not %u: this stress-ng ignores --mutex-procs\n", row->threads);
	}
}

/* ---- JSON ---------------------------------------------------------------- */

static void json_run(struct bench_json *j, const struct apps *a, enum app_kind k, enum side s,
		     const struct app_run *r)
{
	bench_json_object(j, NULL);
	if (k >= PAIR_SINGLE) {
		bench_json_number(j, "ns_per_pair", r->value);
		bench_json_number(j, "ops_per_sec", 1e9 / r->value);
		bench_json_array(j, "trials_ns");
		for (int i = 0; i < PAIR_TRIALS; i++)
			bench_json_number(j, NULL, r->trials_ns[i]);
		bench_json_end(j);
	} else {
		bench_json_number(j, "ops_per_sec", r->value);
		bench_json_uint(j, "ops", r->ops);
		bench_json_number(j, "work_s", r->work_s);
	}
	bench_json_number(j, "cpu_s", r->cpu_s);
	bench_json_number(j, "cpu_s_per_mop", r->ops ? r->cpu_s * 1e6 / (double)r->ops : NAN);
	if (k == APP_MEMCACHED)
		bench_json_number(j, "loadgen_cpu_s", r->loadgen_cpu_s);
	bench_json_number(j, "wall_s", r->wall_s);
	bench_json_number(j, "other_cpus", r->other_cpus);
	if (bench_busy_count() > 0)
		bench_json_number(j, "busy_cpus", r->busy_cpus);
	if (app_info[k].program == PROG_STRESS_NG && app_info[k].instances == 1) {
		if (r->inst[0].threads_seen)
			bench_json_uint(j, "threads_seen", r->inst[0].threads_seen);
		else
			bench_json_null(j, "threads_seen");
	}
	if (app_info[k].instances > 1) {
		bench_json_array(j, "instances");
		for (unsigned i = 0; i < r->ninst; i++) {
			const struct app_instance *in = &r->inst[i];

			bench_json_object(j, NULL);
			bench_json_number(j, "ops_per_sec", in->value);
			bench_json_uint(j, "ops", in->ops);
			bench_json_number(j, "work_s", in->work_s);
			bench_json_number(j, "cpu_s", in->cpu_s);
			bench_json_number(j, "wall_s", in->wall_s);
			if (app_info[k].program == PROG_STRESS_NG) {
				if (in->threads_seen)
					bench_json_uint(j, "threads_seen", in->threads_seen);
				else
					bench_json_null(j, "threads_seen");
			}
			bench_json_end(j);
		}
		bench_json_end(j);
	}
	/* stress-ng's worker, a fork that ends with _exit, prints no line of
	 * its own: the calls it made are unknown. */
	if (side_shim(a, s) && app_info[k].program != PROG_STRESS_NG) {
		bench_json_uint(j, "futex_wait", r->fx_wait);
		bench_json_uint(j, "futex_wake", r->fx_wake);
	} else {
		bench_json_null(j, "futex_wait");
		bench_json_null(j, "futex_wake");
	}
	/* The reports that were checked: a line per process. */
	if (side_report(a, s)) {
		bench_json_object(j, "stats_report");
		bench_json_uint(j, "reports", r->reports);
		bench_json_uint(j, "bytes", r->report_bytes);
		bench_json_uint(j, "locks_tracked", r->locks_tracked);
		bench_json_uint(j, "acquisitions_listed", r->acquisitions);
		bench_json_end(j);
	}
	bench_json_end(j);
}

static void json_row(struct bench_json *j, const struct apps *a, const struct app_row *row)
{
	const bool pair = row->kind >= PAIR_SINGLE;
	char name[96];

	for (int s = 0; s < 2; s++) {
		const char *wl = pair ? pair_json[row->kind - PAIR_SINGLE] : app_info[row->kind].name;

		snprintf(name, sizeof name, "%s/%s", side_name(a, (enum side)s), wl);
		bench_json_object(j, NULL);
		bench_json_string(j, "lock", name);
		bench_json_string(j, "side", side_name(a, (enum side)s));
		bench_json_string(j, "workload", wl);
		bench_json_uint(j, "threads", row->threads);
		if (!pair)
			bench_json_uint(j, "instances", app_info[row->kind].instances);
		if (pair) {
			bench_json_number(j, "ns_per_pair", row->med[s]);
			bench_json_number(j, "ns_per_pair_min", row->min[s]);
			bench_json_number(j, "ns_per_pair_max", row->max[s]);
			bench_json_number(j, "ops_per_sec", 1e9 / row->med[s]);
		} else {
			bench_json_string(j, "unit", app_info[row->kind].json_unit);
			bench_json_number(j, "ops_per_sec", row->med[s]);
			bench_json_number(j, "ops_per_sec_min", row->min[s]);
			bench_json_number(j, "ops_per_sec_max", row->max[s]);
		}
		bench_json_number(j, "spread", a->repeat > 1 ?
				  (row->max[s] - row->min[s]) / row->med[s] : NAN);
		bench_json_number(j, "cpu_s", row->cpu[s]);
		bench_json_number(j, a->stats_cost ? "ratio_stats_over_shim" :
				  "ratio_shim_over_glibc", row->ratio);
		bench_json_array(j, "ratio_ci95");
		bench_json_number(j, NULL, row->ci_lo);
		bench_json_number(j, NULL, row->ci_hi);
		bench_json_end(j);
		bench_json_uint(j, "median_run", row->median[s]);
		bench_json_array(j, "runs");
		for (unsigned i = 0; i < a->repeat; i++)
			json_run(j, a, row->kind, (enum side)s, &row->runs[s][i]);
		bench_json_end(j);
		bench_json_end(j);
	}
}

static void write_json(const struct apps *a, const struct app_row *rows, size_t nrows,
		       struct bench_json *j)
{
	bench_json_object(j, NULL);
	bench_json_string(j, "bench", me);
	bench_json_object(j, "config");
	bench_json_array(j, "workloads");
	for (int k = 0; k <= APP_NPROGRAMS; k++)
		if (a->want[k] && !a->skip[k][0])
			bench_json_string(j, NULL, k < APP_NPROGRAMS ? app_info[k].name : "mutex-pair");
	bench_json_end(j);
	bench_json_uint_array(j, "threads", a->threads, a->nthreads);
	bench_json_uint(j, "repeat", a->repeat);
	bench_json_number(j, "duration_s", a->duration);
	bench_json_bool(j, "quick", a->quick);
	bench_json_bool(j, "stats_cost", a->stats_cost);
	bench_json_array(j, "sides");
	bench_json_string(j, NULL, side_name(a, BASE));
	bench_json_string(j, NULL, side_name(a, TRIAL));
	bench_json_end(j);
	bench_json_string(j, "table", "median");
	bench_json_string(j, "hotlock_run", a->hotlock_run);
	bench_json_array(j, "hotlock_run_options");
	if (a->queue) {
		bench_json_string(j, NULL, "--queue");
		bench_json_string(j, NULL, a->queue);
	}
	if (a->spin_ns) {
		bench_json_string(j, NULL, "--spin-ns");
		bench_json_string(j, NULL, a->spin_ns);
	}
	bench_json_end(j);
	bench_json_uint(j, "cores", bench_cores());
	if (a->want[APP_NPROGRAMS] && a->shim_pair[0]) {
		bench_json_object(j, "mutex_pair");
		bench_json_string(j, "program", a->shim_pair);
		bench_json_uint(j, "pairs", a->pairs);
		bench_json_uint(j, "trials", PAIR_TRIALS);
		bench_json_end(j);
	}
	if (a->sysbench[0]) {
		bench_json_string(j, "sysbench_version", a->sysbench_version);
		bench_json_object(j, "sysbench_mutex");
		bench_json_uint(j, "mutex_num", MUTEX_NUM);
		bench_json_uint(j, "mutex_loops", MUTEX_LOOPS);
		bench_json_uint(j, "mutex_locks_total", MUTEX_LOCKS_PER_S * a->duration);
		bench_json_end(j);
		bench_json_object(j, "sysbench_threads");
		bench_json_uint(j, "thread_yields", THREAD_YIELDS);
		bench_json_uint(j, "thread_locks", THREAD_LOCKS);
		bench_json_end(j);
	}
	if (a->stress_ng[0] && (a->want[APP_STRESS] || a->want[APP_STRESS_X2])) {
		bench_json_object(j, "stress_ng_mutex");
		bench_json_string(j, "version", a->stress_ng_version);
		bench_json_uint(j, "workers", 1);
		bench_json_string(j, "threads_option", "--mutex-procs");
		bench_json_string(j, "measure", "bogo ops per second of real time (stress-ng "
				  "--metrics-brief)");
		bench_json_end(j);
	}
	if (a->memcached[0] && a->memaslap[0]) {
		bench_json_object(j, "memcached");
		bench_json_string(j, "version", a->memcached_version);
		bench_json_string(j, "loadgen", a->memaslap);
		bench_json_uint(j, "loadgen_threads_max", a->loadgen_threads);
		bench_json_uint(j, "connections_per_server_thread", 2);
		bench_json_number(j, "get_share", 0.9);
		bench_json_end(j);
	}
	bench_json_busy(j);
	bench_json_run_info(j);
	bench_json_end(j);
	bench_json_array(j, "skipped");
	for (int k = 0; k <= APP_NPROGRAMS; k++)
		if (a->want[k] && a->skip[k][0]) {
			bench_json_object(j, NULL);
			bench_json_string(j, "workload", k < APP_NPROGRAMS ? app_info[k].name : "mutex-pair");
			bench_json_string(j, "why", a->skip[k]);
			bench_json_end(j);
		}
	for (size_t i = 0; i < a->ntskip; i++) {
		bench_json_object(j, NULL);
		bench_json_string(j, "workload", app_info[a->tskip[i].kind].name);
		bench_json_uint(j, "threads", a->tskip[i].threads);
		bench_json_string(j, "why", STRESS_T_WHY);
		bench_json_end(j);
	}
	bench_json_end(j);
	bench_json_array(j, "results");
	for (size_t i = 0; i < nrows; i++)
		json_row(j, a, &rows[i]);
	bench_json_end(j);
	bench_json_end(j);
	bench_json_close(j);
}

/* ---- finding the programs ------------------------------------------------- */

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

/* Runs `argv[0] --version`-like commands for the JSON: the first line. */
static void version_of(const char *prog, const char *arg, char *buf, size_t len)
{
	char *argv[] = { (char *)prog, (char *)arg, NULL };
	struct apps none;
	struct child c;
	struct output o;

	memset(&none, 0, sizeof none);
	buf[0] = '\0';
	spawn(&c, &none, false, false, prog, argv);
	reap(&c, true, 10);
	child_output(&c, &o);
	snprintf(buf, len, "%.*s", (int)strcspn(o.out, "\n"), o.out);
	output_free(&o);
}

static void find_programs(struct apps *a, const char *hotlock_run, const char *shim_pair)
{
	char dir[PATH_MAX], first[PATH_MAX + 32], second[PATH_MAX + 32];

	self_dir(dir, sizeof dir);
	if (hotlock_run) {
		if (!executable(hotlock_run))
			bench_usage_error(me, "--hotlock-run: '%s' is not an executable file",
					  hotlock_run);
		snprintf(a->hotlock_run, sizeof a->hotlock_run, "%s", hotlock_run);
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
	if (shim_pair) {
		if (!executable(shim_pair))
			bench_usage_error(me, "--shim-pair: '%s' is not an executable file",
					  shim_pair);
		snprintf(a->shim_pair, sizeof a->shim_pair, "%s", shim_pair);
	} else if (a->want[APP_NPROGRAMS]) {
		snprintf(first, sizeof first, "%s/hotlock-shim-pair", dir);
		if (!executable(first) || !realpath(first, a->shim_pair)) {
			a->shim_pair[0] = '\0';
			snprintf(a->skip[APP_NPROGRAMS], sizeof a->skip[0],
				 "hotlock-shim-pair not found (looked for %s; it is built beside "
				 "hotlock-bench, or give --shim-pair PATH)", first);
		}
	}

	if (!in_path("sysbench", a->sysbench, sizeof a->sysbench))
		for (int k = 0; k < APP_NPROGRAMS; k++) {
			if (app_info[k].program == PROG_SYSBENCH)
				snprintf(a->skip[k], sizeof a->skip[0],
					 "sysbench not installed (apt-get install sysbench)");
		}
	else if (a->want[APP_MUTEX] || a->want[APP_THREADS] || a->want[APP_MUTEX_X2] ||
		 a->want[APP_THREADS_X2])
		version_of(a->sysbench, "--version", a->sysbench_version,
			   sizeof a->sysbench_version);
	/* Not needed to build or to run the default workloads. */
	if (!in_path("stress-ng", a->stress_ng, sizeof a->stress_ng))
		for (int k = APP_STRESS; k <= APP_STRESS_X2; k++)
			snprintf(a->skip[k], sizeof a->skip[0],
				 "stress-ng not installed (apt-get install stress-ng)");
	else if (a->want[APP_STRESS] || a->want[APP_STRESS_X2])
		version_of(a->stress_ng, "--version", a->stress_ng_version,
			   sizeof a->stress_ng_version);
	if (!in_path("memcached", a->memcached, sizeof a->memcached))
		snprintf(a->skip[APP_MEMCACHED], sizeof a->skip[0],
			 "memcached not installed (apt-get install memcached)");
	else if (!in_path("memaslap", a->memaslap, sizeof a->memaslap) &&
		 !in_path("memcaslap", a->memaslap, sizeof a->memaslap))
		snprintf(a->skip[APP_MEMCACHED], sizeof a->skip[0],
			 "memaslap (memcaslap) not installed (apt-get install libmemcached-tools)");
	else if (a->want[APP_MEMCACHED])
		version_of(a->memcached, "--version", a->memcached_version,
			   sizeof a->memcached_version);
}

/* ---- command line -------------------------------------------------------- */

static void apps_help(FILE *f)
{
	fprintf(f,
		"Usage: hotlock-bench apps [--quick] [--threads T,...] [--repeat R]\n"
		"                          [--duration S] [--workloads W,...] [--json FILE]\n"
		"                          [--pairs N] [--hotlock-run PATH] [--shim-pair PATH]\n"
		"                          [--queue fifo|cna] [--spin-ns N] [--busy N]\n"
		"                          [--stats-cost]\n"
		"\n"
		"Real programs on glibc's locks and on hotlock's through the pthread shim\n"
		"(hotlock-run, libhotlock-preload.so), and the shim's own cost:\n"
		"  sysbench-mutex    sysbench mutex --mutex-num=%d --mutex-loops=%d, %lu lock\n"
		"                    acquisitions per second of --duration in all, shared\n"
		"                    out among the T threads; Mlock/s of sysbench's total time\n"
		"  sysbench-threads  sysbench threads --thread-locks=%d --thread-yields=%d\n"
		"                    (lock, sched_yield, unlock) for --duration s; kevent/s\n"
		"  memcached         memcached -t T -U 0 on a free port of 127.0.0.1, driven by\n"
		"                    memaslap (memcaslap): 2T connections, 90%% get, for\n"
		"                    --duration s; kop/s (thousand operations per second)\n"
		"  pair              an uncontended pthread_mutex_lock + unlock in\n"
		"                    hotlock-shim-pair (not linked with hotlock), best of %d\n"
		"                    trials a run, single-threaded and with an idle second\n"
		"                    thread; ns per pair\n"
		"Only when named in --workloads:\n"
		"  stress-ng-mutex   stress-ng --mutex 1 --mutex-procs T --timeout S\n"
		"                    --metrics-brief: one worker whose T threads (2 to 64)\n"
		"                    each loop { take a random SCHED_FIFO priority (refused\n"
		"                    unless root); lock the one mutex; drop to the lowest;\n"
		"                    sched_yield; unlock }; kbogo/s, stress-ng's bogo ops\n"
		"                    per second of real time.  stress-ng 0.15 runs 2 threads\n"
		"                    whatever T: a note under the row says so\n"
		"  sysbench-mutex-x2, sysbench-threads-x2, stress-ng-mutex-x2\n"
		"                    two instances of that program at once, T threads each,\n"
		"                    both on glibc or both under hotlock-run: the sum of the\n"
		"                    two instances' rates (each over its own time), and\n"
		"                    their CPU seconds summed (each apart in the JSON)\n"
		"A workload whose program is missing is skipped with a line naming the\n"
		"Debian package (sysbench, memcached, libmemcached-tools, stress-ng).  Every\n"
		"(workload, T) runs on glibc and under hotlock-run alternately, R times; the\n"
		"table shows the median and [min-max] of each side, the ratio (> 1: the shim\n"
		"is faster), its 95%% interval by the bootstrap (one that holds 1: the runs\n"
		"do not tell the sides apart) and each side's CPU seconds per run (user +\n"
		"sys of the program, wait4).\n"
		"\n"
		"Options:\n"
		"  --quick            T = " APPS_QUICK_THREADS ", runs of 1 s, 4000000 pairs (about\n"
		"                     a minute on 2 cores); options given override it\n"
		"  --threads T,...    thread counts, 1 to %u (default " APPS_DEFAULT_THREADS ")\n"
		"  --repeat R         runs of each side, median shown (default 3)\n"
		"  --duration S       whole seconds per run, 1 to 600 (default 2)\n"
		"  --workloads W,...  of sysbench-mutex, sysbench-threads, memcached, pair,\n"
		"                     stress-ng-mutex, sysbench-mutex-x2, sysbench-threads-x2,\n"
		"                     stress-ng-mutex-x2 (default: the first four)\n"
		"  --pairs N          pairs per trial of the pair (default 10000000)\n"
		"  --json FILE        also write the results as JSON to FILE\n"
		"  --hotlock-run PATH hotlock-run (default: ../bin/hotlock-run, then\n"
		"                     ./hotlock-run, beside this executable)\n"
		"  --shim-pair PATH   hotlock-shim-pair (default: beside this executable)\n"
		"  --queue fifo|cna, --spin-ns N  passed to hotlock-run\n"
		"  --busy N           N CPU-bound processes (0 to %u) beside every run, glibc's\n"
		"                     and the shim's alike: forks of hotlock-bench spinning\n"
		"                     on arithmetic at nice 0, SCHED_OTHER, no affinity of\n"
		"                     their own (named hotlock-busy), from before the first\n"
		"                     run to after the last (killed on an error, SIGINT and\n"
		"                     SIGTERM too); stated as 'load:' above the tables and\n"
		"                     in the JSON (config busy, each run's busy_cpus), and\n"
		"                     left out of each run's other load (default 0)\n"
		"  --stats-cost       what hotlock-run's contention report costs: instead of\n"
		"                     glibc against the shim, the shim without the report\n"
		"                     (side 'shim') against the shim with it (side\n"
		"                     'shim+stats': --stats-json into a file per pid\n"
		"                     in a directory made for the run and removed after it,\n"
		"                     the text report off), alternately, R times, every\n"
		"                     workload and the pair alike; ratio = shim+stats /\n"
		"                     shim (pair: shim / shim+stats), > 1: the report side\n"
		"                     is faster; a column 'locks' gives the locks the report\n"
		"                     recorded.  Each program of a report run must have\n"
		"                     written its report (a JSON line per process, checked\n"
		"                     and removed after the run), else exit 1\n"
		"  --help             this text\n"
		"\n"
		"Progress on stderr, one line per run.  JSON: \"results\" has a member per\n"
		"(side, workload, T) named SIDE/WORKLOAD (glibc/memcached, shim/sysbench-mutex,\n"
		"glibc/mutex-pair-1thread), its ops_per_sec the median (pairs per second for\n"
		"the pair), every run under \"runs\" (an -x2 run's two instances under its\n"
		"\"instances\"), so that 'hotlock-bench compare' can compare two runs;\n"
		"\"skipped\" names what could not run and why.  With --stats-cost the sides\n"
		"are shim and shim+stats (shim+stats/memcached), the ratio is\n"
		"ratio_stats_over_shim, and each shim+stats run has a \"stats_report\"\n"
		"(reports, bytes, locks_tracked, acquisitions_listed).\n"
		"\n"
		"Exit status: 0 ok (skipped workloads included), 1 a run failed or\n"
		"hotlock-run was not found, 2 bad command line.\n",
		MUTEX_NUM, MUTEX_LOOPS, MUTEX_LOCKS_PER_S, THREAD_LOCKS, THREAD_YIELDS,
		PAIR_TRIALS, BENCH_MAX_THREADS, BENCH_MAX_BUSY);
}

static void threads_item(void *ctx, const char *entry)
{
	struct apps *a = ctx;
	unsigned t = (unsigned)bench_parse_ulong(me, "--threads", entry, 1, BENCH_MAX_THREADS);

	for (size_t i = 0; i < a->nthreads; i++)
		if (a->threads[i] == t)
			return;
	if (a->nthreads == BENCH_MAX_THREAD_COUNTS)
		bench_usage_error(me, "--threads: more than %u entries", BENCH_MAX_THREAD_COUNTS);
	a->threads[a->nthreads++] = t;
}

static void workload_item(void *ctx, const char *entry)
{
	struct apps *a = ctx;

	for (int k = 0; k < APP_NPROGRAMS; k++)
		if (strcmp(entry, app_info[k].name) == 0) {
			a->want[k] = true;
			return;
		}
	if (strcmp(entry, "pair") == 0) {
		a->want[APP_NPROGRAMS] = true;
		return;
	}
	bench_usage_error(me, "--workloads: unknown workload '%s' (valid: sysbench-mutex, "
			  "sysbench-threads, memcached, pair, stress-ng-mutex, sysbench-mutex-x2, "
			  "sysbench-threads-x2, stress-ng-mutex-x2)", entry);
}

/* ---- main ---------------------------------------------------------------- */

/* The command line as apps_main reads it: the options, those it resolves
 * after the whole line (--threads, --hotlock-run, --shim-pair) as given,
 * and whether --duration and --pairs were given. */
struct apps_parse {
	struct apps *a;
	const char *threads, *hotlock_run, *shim_pair;
	bool duration_given, pairs_given;
};

/* Consumes argv[*i] if it is one of apps' options (bench_parse_args). */
static bool apps_option(void *ctx, int argc, char **argv, int *i)
{
	struct apps_parse *p = ctx;
	struct apps *a = p->a;
	const char *v;

	if (strcmp(argv[*i], "--quick") == 0) {
		a->quick = true;
	} else if ((v = bench_opt_value(me, argc, argv, i, "--threads"))) {
		p->threads = v;
	} else if ((v = bench_opt_value(me, argc, argv, i, "--repeat"))) {
		a->repeat = (unsigned)bench_parse_ulong(me, "--repeat", v, 1, 100);
	} else if ((v = bench_opt_value(me, argc, argv, i, "--duration"))) {
		a->duration = (unsigned)bench_parse_ulong(me, "--duration", v, 1, 600);
		p->duration_given = true;
	} else if ((v = bench_opt_value(me, argc, argv, i, "--workloads"))) {
		memset(a->want, 0, sizeof a->want);
		bench_list_each(me, "--workloads", v, workload_item, a);
	} else if ((v = bench_opt_value(me, argc, argv, i, "--pairs"))) {
		a->pairs = bench_parse_ulong(me, "--pairs", v, 1, 1000000000000UL);
		p->pairs_given = true;
	} else if ((v = bench_opt_value(me, argc, argv, i, "--json"))) {
		a->json = v;
	} else if ((v = bench_opt_value(me, argc, argv, i, "--hotlock-run"))) {
		p->hotlock_run = v;
	} else if ((v = bench_opt_value(me, argc, argv, i, "--shim-pair"))) {
		p->shim_pair = v;
	} else if ((v = bench_opt_value(me, argc, argv, i, "--queue"))) {
		if (strcmp(v, "fifo") != 0 && strcmp(v, "cna") != 0)
			bench_usage_error(me, "--queue: '%s' is not fifo or cna", v);
		a->queue = v;
	} else if ((v = bench_opt_value(me, argc, argv, i, "--spin-ns"))) {
		bench_parse_ulong(me, "--spin-ns", v, 0, 10000000);
		a->spin_ns = v;
	} else if ((v = bench_opt_value(me, argc, argv, i, "--busy"))) {
		a->busy = bench_parse_busy(me, v);
	} else if (strcmp(argv[*i], "--stats-cost") == 0) {
		a->stats_cost = true;
	} else {
		return false;
	}
	return true;
}

static int apps_main(int argc, char **argv)
{
	struct apps a;
	struct apps_parse p = { .a = &a };
	struct app_row *rows;
	struct bench_json *json;
	size_t nrows = 0, npair = 0;
	unsigned total;

	memset(&a, 0, sizeof a);
	a.repeat = 3;
	for (int k = 0; k < APP_NPROGRAMS; k++)
		a.want[k] = app_info[k].by_default;
	a.want[APP_NPROGRAMS] = true;   /* the pair */
	bench_parse_args(me, argc, argv, NULL, apps_help, apps_option, &p);
	bench_list_each(me, "--threads", p.threads ? p.threads :
			a.quick ? APPS_QUICK_THREADS : APPS_DEFAULT_THREADS, threads_item, &a);
	if (!p.duration_given)
		a.duration = a.quick ? 1 : 2;
	if (!p.pairs_given)
		a.pairs = a.quick ? 4000000 : 10000000;
	a.loadgen_threads = bench_cores() < 2 ? 1 : bench_cores();

	atexit(kill_live);
	find_programs(&a, p.hotlock_run, p.shim_pair);

	/* The rows, in order: the pair's two forms, then each workload's T. */
	rows = bench_xcalloc(2 + APP_NPROGRAMS * a.nthreads, sizeof *rows);
	if (a.want[APP_NPROGRAMS] && !a.skip[APP_NPROGRAMS][0])
		for (int k = PAIR_SINGLE; k <= PAIR_IDLE; k++)
			rows[nrows++] = (struct app_row){ .kind = (enum app_kind)k, .threads = 1 };
	npair = nrows;
	a.namew = 16;
	for (int k = 0; k < APP_NPROGRAMS; k++)
		if (a.want[k] && !a.skip[k][0])
			for (size_t i = 0; i < a.nthreads; i++) {
				const unsigned t = a.threads[i];

				if (app_info[k].program == PROG_STRESS_NG &&
				    (t < STRESS_MIN_THREADS || t > STRESS_MAX_THREADS)) {
					a.tskip[a.ntskip].kind = (enum app_kind)k;
					a.tskip[a.ntskip++].threads = t;
					continue;
				}
				rows[nrows++] = (struct app_row){ .kind = (enum app_kind)k,
								  .threads = t };
				if ((int)strlen(app_info[k].name) > a.namew)
					a.namew = (int)strlen(app_info[k].name);
			}

	/* Opened first, so that an unwritable path fails before the runs. */
	json = a.json ? bench_json_open(a.json) : NULL;
	printf("apps: hotlock-run %s%s%s%s%s, %u cores\n", a.hotlock_run,
	       a.queue ? " --queue " : "", a.queue ? a.queue : "",
	       a.spin_ns ? " --spin-ns " : "", a.spin_ns ? a.spin_ns : "", bench_cores());
	for (int k = 0; k <= APP_NPROGRAMS; k++)
		if (a.want[k] && a.skip[k][0])
			printf("%s: skipped: %s\n", k < APP_NPROGRAMS ? app_info[k].name : "pair",
			       a.skip[k]);
	for (size_t i = 0; i < a.ntskip; i++)
		printf("%s T=%u: skipped: %s\n", app_info[a.tskip[i].kind].name,
		       a.tskip[i].threads, STRESS_T_WHY);
	/* Beside every run, glibc's and the shim's alike. */
	bench_busy_start(a.busy);
	bench_busy_note(stdout);
	/* After --busy's handlers, so that a signal removes the reports, then
	 * goes on to them. */
	if (a.stats_cost) {
		reports_start(&a);
		printf("--stats-cost: the shim without its contention report, then with it "
		       "(--stats-json %s)\n", a.stats_pattern);
	}
	fflush(stdout);

	total = (unsigned)nrows * 2 * a.repeat;
	bench_progress_start(total);
	for (size_t i = 0; i < nrows; i++) {
		struct app_row *row = &rows[i];

		for (int s = 0; s < 2; s++)
			row->runs[s] = bench_xcalloc(a.repeat, sizeof *row->runs[s]);
		for (unsigned rep = 0; rep < a.repeat; rep++)
			for (int s = 0; s < 2; s++) {
				struct app_run *r = &row->runs[s][rep];
				char result[160], cpu[96];

				if (row->kind >= PAIR_SINGLE)
					bench_progress_begin("pair (%s) %s, run %u/%u",
							     app_info[row->kind].name,
							     side_name(&a, (enum side)s),
							     rep + 1, a.repeat);
				else
					bench_progress_begin("%s T=%u %s, run %u/%u",
							     app_info[row->kind].name, row->threads,
							     side_name(&a, (enum side)s), rep + 1,
							     a.repeat);
				run_one(&a, row->kind, row->threads, (enum side)s, r);
				if (side_report(&a, (enum side)s))
					snprintf(cpu, sizeof cpu, ", cpu %.2f s, %llu locks recorded",
						 r->cpu_s, (unsigned long long)r->locks_tracked);
				else
					snprintf(cpu, sizeof cpu, ", cpu %.2f s", r->cpu_s);
				snprintf(result, sizeof result, "%.3g %s%s",
					 r->value / app_info[row->kind].scale,
					 app_info[row->kind].unit, cpu);
				bench_progress_end(result, r->other_cpus);
			}
		row_figures(row, a.repeat);
		bench_progress_clear();
		if (i == 0 && npair > 0) {
			putchar('\n');
			print_pair_header(&a);
		}
		if (i == npair) {
			putchar('\n');
			print_app_header(&a, rows + npair, nrows - npair);
		}
		if (row->kind >= PAIR_SINGLE)
			print_pair_row(&a, row);
		else
			print_app_row(&a, row);
		fflush(stdout);
	}
	bench_busy_stop();
	bench_progress_clear();
	if (json)
		write_json(&a, rows, nrows, json);
	for (size_t i = 0; i < nrows; i++)
		for (int s = 0; s < 2; s++)
			free(rows[i].runs[s]);
	free(rows);
	return 0;
}

const struct bench_scenario bench_scenario_apps = {
	.name = "apps",
	.summary = "real programs (sysbench, memcached, stress-ng) on glibc and under hotlock-run, and the shim's own cost",
	.main = apps_main,
};

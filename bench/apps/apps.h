/* SPDX-License-Identifier: MIT */
/* hotlock-bench-apps: what its files share (see main.c for the design):
 * the workloads, a run and a row, the options and the programs found, and
 * the functions of each file. */
#ifndef HOTLOCK_BENCH_APPS_H
#define HOTLOCK_BENCH_APPS_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "harness.h"

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

struct app_info {
	const char *name;
	const char *unit;       /* the table's */
	double scale;           /* per second over this is the table's unit */
	const char *json_unit;  /* per second, in the JSON's ops_per_sec */
	enum app_program program;
	unsigned instances;     /* run at once, their rates summed */
	bool by_default;        /* without --workloads */
	enum app_kind single;   /* the one-instance form of the workload */
};
extern const struct app_info app_info[APP_NKINDS];

/* A row's two sides: the baseline, run first, and the side judged against
 * it (the ratio's numerator for rates).  Without --cost: glibc and the
 * shim; with it: the shim alone and the shim with the report option that
 * --cost names (side_shim, side_report). */
enum side { BASE, TRIAL };

/* What --cost measures: nothing (glibc against the shim), or one of
 * hotlock-run's report options. */
enum cost { COST_NONE, COST_STATS, COST_DEADLOCKS, COST_LOCK_ORDER, COST_N };

struct cost_info {
	const char *name;       /* --cost's value; NULL for COST_NONE */
	const char *side;       /* TRIAL's name: "shim+stats" */
	const char *cpu_col;    /* TRIAL's CPU column: "cpu-st" */
	const char *ratio_key;  /* the JSON's ratio: "ratio_stats_over_shim" */
	const char *option;     /* hotlock-run's option measured, as the headers say */
	const char *what;       /* what the option makes, for the headers */
	const char *file;       /* a report file's name in the directory (%p: pid) */
	/* A good program makes no report: one is a warning, and nothing
	 * tells that the option was in effect but hotlock-run's refusing an
	 * option it does not know (exit 2).  Else (stats) every program that
	 * contends must leave its report. */
	bool warns;
};
extern const struct cost_info cost_info[COST_N];

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
#define RESAMPLES          2000         /* the bootstrap's (figures.c) */

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
	/* --cost, the report side: the reports its processes wrote (stats: a
	 * JSON line each; deadlocks, lock-order: "== hotlock:" lines, none on
	 * a good program), their bytes and the files that were not empty;
	 * stats: their locks_tracked summed, and the acquisitions of the locks
	 * they list (the top 10 of each). */
	unsigned reports, report_files;
	uint64_t report_bytes, locks_tracked, acquisitions;
	double locks_d;         /* locks_tracked, for median_of */
	/* deadlocks, lock-order: the first lines of the first file that was
	 * not empty (malloc'd), for the warning; NULL: every file was empty. */
	char *report_head;
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
	double locks;                   /* --cost=stats: locks_tracked, the median */
	/* stress-ng: the fewest and most threads a worker ran (0: unknown). */
	unsigned seen_min, seen_max;
};

/* The scenario's context: its options as parsed (main.c's table), then
 * what the run resolves from them and finds. */
struct apps {
	/* The command line. */
	const char *threads_list;       /* --threads as given, or NULL */
	unsigned duration;              /* seconds */
	bool quick;
	bool want[APP_NPROGRAMS + 1];   /* [APP_NPROGRAMS]: the pair */
	const char *hotlock_run_opt, *shim_pair_opt; /* as given, or NULL */
	const char *queue;              /* hotlock-run's --queue, or NULL */
	unsigned long spin_ns;          /* its --spin-ns, where given */
	unsigned long pairs;
	/* --cost (--stats-cost: COST_STATS): both sides on the shim, TRIAL
	 * with report_argv, whose report file is report_pattern, a file per
	 * pid in report_dir (made by the scenario, emptied after every run and
	 * removed at exit). */
	enum cost cost;

	/* Resolved by the run. */
	const unsigned *threads;        /* ascending, distinct */
	size_t nthreads;
	unsigned repeat;
	const char *json;
	unsigned busy;                  /* --busy */
	const char *spin_ns_text;       /* --spin-ns as passed on, or NULL */
	char spin_ns_buf[24];
	char hotlock_run[PATH_MAX];
	char shim_pair[PATH_MAX];       /* "" when not found */
	char sysbench[PATH_MAX], memcached[PATH_MAX], memaslap[PATH_MAX];
	char stress_ng[PATH_MAX];
	char skip[APP_NPROGRAMS + 1][PATH_MAX + 256]; /* why a workload is left out */
	char sysbench_version[64], memcached_version[64], stress_ng_version[96];
	unsigned loadgen_threads;       /* memaslap -T, for each T: min(2T, cores) */
	int namew;                      /* the table's workload column */
	char report_dir[PATH_MAX];
	char report_pattern[PATH_MAX + 32];
	char report_file_arg[PATH_MAX + 64];    /* "--deadlocks-file=PATTERN" */
	const char *report_argv[3];             /* hotlock-run's words, to NULL */
	/* (workload, T) left out: stress-ng takes 2 to 64 threads. */
	struct { enum app_kind kind; unsigned threads; } tskip[2 * BENCH_MAX_THREAD_COUNTS];
	size_t ntskip;
};

/* Whether side s runs under hotlock-run, and with --cost's option on. */
static inline bool side_shim(const struct apps *a, enum side s)
{
	return s == TRIAL || a->cost != COST_NONE;
}

static inline bool side_report(const struct apps *a, enum side s)
{
	return s == TRIAL && a->cost != COST_NONE;
}

const char *side_name(const struct apps *a, enum side s);
/* The workload's name in the JSON and the skip lines ("mutex-pair" for
 * k == APP_NPROGRAMS, the pair). */
const char *workload_name(int k);

/* ---- children.c: the programs' processes -------------------------------- */

/* A command line being built: its words (v[n] is NULL), those that
 * cmd_fmt made kept in text. */
struct cmd {
	const char *v[32];
	size_t n, used;
	char text[512];
};

/* Appends the words up to NULL. */
void cmd_add(struct cmd *c, ...) __attribute__((sentinel));
/* Appends a word made by printf. */
void cmd_fmt(struct cmd *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

struct child {
	const char *what;       /* "memcached", for messages */
	pid_t pid;
	FILE *out, *err;        /* its stdout and stderr */
	double t0;
	int status;
	struct rusage ru;
	double wall_s;
};

struct output {
	char *out, *err;
};

/* Kills and reaps the children still running (at exit, on a signal). */
void kill_live(void);
void spawn(struct child *c, const struct apps *a, bool shim, bool report,
	   const char *what, const struct cmd *argv);
bool reap(struct child *c, bool wait, double timeout_s);
double child_cpu(const struct child *c);
void child_output(struct child *c, struct output *o);
void output_free(struct output *o);
_Noreturn void child_failed(const char *label, const struct child *c,
			    const struct output *o, const char *why);
void run_to_end(const struct apps *a, const char *label, bool shim, bool report,
		const char *what, const struct cmd *argv, double timeout_s,
		struct child *c, struct output *o);
void spawn_together(const struct apps *a, enum side s, const char *what,
		    const struct cmd *argv, unsigned n, struct child *c);
void reap_together(const char *label, unsigned n, double timeout_s,
		   struct child *c, struct output *o);
void sleep_s(double s);
bool find_number(const char *text, const char *key, double *v);

/* ---- reports.c: the shim's line at exit, the reports of --cost ---------- */

void shim_stats(const char *err, struct app_run *r);
void check_side(const struct apps *a, const char *label, enum side s,
		const struct app_run *r);
void reports_start(struct apps *a);
void reports_check(const struct apps *a, const char *label, enum side s,
		   unsigned n, struct app_run *r);
void reports_warn(const struct apps *a, const char *what, const struct app_run *r);

/* ---- runs.c, sysbench.c, memcached.c: one run of each workload ---------- */

/* Into r: the CPUs kept busy since m by others than us, our children
 * (children_s of CPU time) and the --busy processes; and those the --busy
 * processes kept busy. */
void load_since(const struct bench_machine_mark *m, double children_s, struct app_run *r);
/* "sysbench-mutex T=2 glibc", "pair (single thread) shim". */
void run_what(const struct apps *a, char *buf, size_t len, enum app_kind k,
	      unsigned t, enum side s);
void run_label(const struct apps *a, char *buf, size_t len, enum app_kind k,
	       unsigned t, enum side s);
void instances_done(const struct apps *a, const char *label, enum side s,
		    const struct bench_machine_mark *m, struct output *o, unsigned n,
		    struct app_run *r);
void run_one(const struct apps *a, enum app_kind k, unsigned t, enum side s,
	     struct app_run *r);
void run_sysbench(const struct apps *a, enum app_kind k, unsigned t, enum side s,
		  struct app_run *r);
void run_stress(const struct apps *a, enum app_kind k, unsigned t, enum side s,
		struct app_run *r);
void run_memcached(const struct apps *a, unsigned t, enum side s, struct app_run *r);
void run_pair(const struct apps *a, enum app_kind k, enum side s, struct app_run *r);

/* ---- programs.c, figures.c, table.c, json.c, rows.c --------------------- */

void find_programs(struct apps *a);
void row_figures(struct app_row *row, unsigned repeat);
void print_pair_header(const struct apps *a);
void print_pair_row(const struct apps *a, const struct app_row *row);
void print_app_header(const struct apps *a, const struct app_row *rows, size_t nrows);
void print_app_row(const struct apps *a, const struct app_row *row);
void write_json(const struct apps *a, const struct app_row *rows, size_t nrows,
		struct bench_json *j);
int apps_run(struct apps *a);

#endif

/* SPDX-License-Identifier: MIT */
/* hotlock-bench-apps: the JSON (--json): "config" (the workloads, the
 * sides, hotlock-run and its options, each program's version and fixed
 * parameters, the machine), "skipped" (what could not run and why) and
 * "results", an object per (side, workload, T) named SIDE/WORKLOAD with its
 * medians and every run, so that 'hotlock-bench compare' can compare two
 * runs. */
#include <math.h>
#include <stdio.h>

#include "apps.h"

/* The JSON's names of the pair's forms. */
static const char *const pair_json[2] = { "mutex-pair-1thread", "mutex-pair-idle-thread" };

static void json_threads_seen(struct bench_json *j, unsigned seen)
{
	if (seen)
		bench_json_uint(j, "threads_seen", seen);
	else
		bench_json_null(j, "threads_seen");
}

static void json_instances(struct bench_json *j, enum app_kind k, const struct app_run *r)
{
	bench_json_array(j, "instances");
	for (unsigned i = 0; i < r->ninst; i++) {
		const struct app_instance *in = &r->inst[i];

		bench_json_object(j, NULL);
		bench_json_number(j, "ops_per_sec", in->value);
		bench_json_uint(j, "ops", in->ops);
		bench_json_number(j, "work_s", in->work_s);
		bench_json_number(j, "cpu_s", in->cpu_s);
		bench_json_number(j, "wall_s", in->wall_s);
		if (app_info[k].program == PROG_STRESS_NG)
			json_threads_seen(j, in->threads_seen);
		bench_json_end(j);
	}
	bench_json_end(j);
}

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
	if (app_info[k].program == PROG_STRESS_NG && app_info[k].instances == 1)
		json_threads_seen(j, r->inst[0].threads_seen);
	if (app_info[k].instances > 1)
		json_instances(j, k, r);
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
	if (side_report(a, s) && a->cost == COST_STATS) {
		bench_json_object(j, "stats_report");
		bench_json_uint(j, "reports", r->reports);
		bench_json_uint(j, "bytes", r->report_bytes);
		bench_json_uint(j, "locks_tracked", r->locks_tracked);
		bench_json_uint(j, "acquisitions_listed", r->acquisitions);
		bench_json_end(j);
	}
	/* What --deadlocks-file held: nothing, on a good program. */
	if (side_report(a, s) && cost_info[a->cost].warns) {
		bench_json_object(j, "deadlocks_report");
		bench_json_uint(j, "reports", r->reports);
		bench_json_uint(j, "bytes", r->report_bytes);
		bench_json_uint(j, "files", r->report_files);
		if (r->report_head)
			bench_json_string(j, "first_lines", r->report_head);
		else
			bench_json_null(j, "first_lines");
		bench_json_end(j);
	}
	bench_json_end(j);
}

static void json_row(struct bench_json *j, const struct apps *a, const struct app_row *row)
{
	const bool pair = row->kind >= PAIR_SINGLE;
	const char *wl = pair ? pair_json[row->kind - PAIR_SINGLE] : app_info[row->kind].name;
	char name[96];

	for (int s = 0; s < 2; s++) {
		snprintf(name, sizeof name, "%s/%s", side_name(a, (enum side)s), wl);
		bench_json_object(j, NULL);
		bench_json_string(j, "lock", name);
		bench_json_string(j, "side", side_name(a, (enum side)s));
		bench_json_string(j, "workload", wl);
		bench_json_uint(j, "threads", row->threads);
		if (pair) {
			bench_json_number(j, "ns_per_pair", row->med[s]);
			bench_json_number(j, "ns_per_pair_min", row->min[s]);
			bench_json_number(j, "ns_per_pair_max", row->max[s]);
			bench_json_number(j, "ops_per_sec", 1e9 / row->med[s]);
		} else {
			bench_json_uint(j, "instances", app_info[row->kind].instances);
			bench_json_string(j, "unit", app_info[row->kind].json_unit);
			bench_json_number(j, "ops_per_sec", row->med[s]);
			bench_json_number(j, "ops_per_sec_min", row->min[s]);
			bench_json_number(j, "ops_per_sec_max", row->max[s]);
		}
		bench_json_number(j, "spread", a->repeat > 1 ?
				  (row->max[s] - row->min[s]) / row->med[s] : NAN);
		bench_json_number(j, "cpu_s", row->cpu[s]);
		bench_json_number(j, cost_info[a->cost].ratio_key, row->ratio);
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

/* The programs' versions and fixed parameters, into "config". */
static void json_programs(struct bench_json *j, const struct apps *a)
{
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
}

static void json_skipped(struct bench_json *j, const char *workload, const unsigned *threads,
			 const char *why)
{
	bench_json_object(j, NULL);
	bench_json_string(j, "workload", workload);
	if (threads)
		bench_json_uint(j, "threads", *threads);
	bench_json_string(j, "why", why);
	bench_json_end(j);
}

void write_json(const struct apps *a, const struct app_row *rows, size_t nrows,
		struct bench_json *j)
{
	bench_json_object(j, NULL);
	bench_json_string(j, "bench", "apps");
	bench_json_object(j, "config");
	bench_json_array(j, "workloads");
	for (int k = 0; k <= APP_NPROGRAMS; k++)
		if (a->want[k] && !a->skip[k][0])
			bench_json_string(j, NULL, workload_name(k));
	bench_json_end(j);
	bench_json_uint_array(j, "threads", a->threads, a->nthreads);
	bench_json_uint(j, "repeat", a->repeat);
	bench_json_number(j, "duration_s", a->duration);
	bench_json_bool(j, "quick", a->quick);
	/* stats_cost: as --stats-cost wrote it before --cost, for its readers. */
	bench_json_bool(j, "stats_cost", a->cost == COST_STATS);
	if (a->cost != COST_NONE)
		bench_json_string(j, "cost", cost_info[a->cost].name);
	else
		bench_json_null(j, "cost");
	bench_json_array(j, "cost_options");
	for (size_t i = 0; a->cost != COST_NONE && a->report_argv[i]; i++)
		bench_json_string(j, NULL, a->report_argv[i]);
	bench_json_end(j);
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
	if (a->spin_ns_text) {
		bench_json_string(j, NULL, "--spin-ns");
		bench_json_string(j, NULL, a->spin_ns_text);
	}
	bench_json_end(j);
	bench_json_uint(j, "cores", bench_cores());
	json_programs(j, a);
	bench_json_busy(j);
	bench_json_run_info(j);
	bench_json_end(j);
	bench_json_array(j, "skipped");
	for (int k = 0; k <= APP_NPROGRAMS; k++)
		if (a->want[k] && a->skip[k][0])
			json_skipped(j, workload_name(k), NULL, a->skip[k]);
	for (size_t i = 0; i < a->ntskip; i++)
		json_skipped(j, app_info[a->tskip[i].kind].name, &a->tskip[i].threads,
			     STRESS_T_WHY);
	bench_json_end(j);
	/* Each run has ops_per_sec, the pair's too (1e9 / ns_per_pair). */
	bench_json_layout(j, (const char *const[]){ "lock", "threads" }, 2, "ops_per_sec",
			  false);
	bench_json_array(j, "results");
	for (size_t i = 0; i < nrows; i++)
		json_row(j, a, &rows[i]);
	bench_json_end(j);
	bench_json_end(j);
	bench_json_close(j);
}

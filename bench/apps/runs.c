/* SPDX-License-Identifier: MIT */
/* hotlock-bench-apps: the workloads and what every run of one shares: the
 * table of workloads, the sides, the rest of the machine's load during a
 * run, the instances' totals and checks; the pair's run, and run_one,
 * which runs any workload (sysbench.c, stress.c and memcached.c the
 * others). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>

#include "apps.h"

const struct app_info app_info[APP_NKINDS] = {
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

/* What each --cost measures; the words hotlock-run gets for it are
 * reports_start's.  COST_NONE's are glibc against the shim's. */
const struct cost_info cost_info[COST_N] = {
	[COST_NONE] = { NULL, "shim", "cpu-s", "ratio_shim_over_glibc", NULL, NULL, NULL,
			false },
	[COST_STATS] = { "stats", "shim+stats", "cpu-st", "ratio_stats_over_shim",
			 "--stats-json", "its contention report", "stats-%p.json", false },
	[COST_DEADLOCKS] = { "deadlocks", "shim+deadlocks", "cpu-sd",
			     "ratio_deadlocks_over_shim", "--deadlocks",
			     "its deadlock and hang detection", "deadlocks-%p.txt", true },
	[COST_LOCK_ORDER] = { "lock-order", "shim+lock-order", "cpu-so",
			      "ratio_lock_order_over_shim", "--lock-order",
			      "its lock-order inversion detection", "lock-order-%p.txt", true },
};

const char *side_name(const struct apps *a, enum side s)
{
	if (s == TRIAL)
		return cost_info[a->cost].side;
	return a->cost == COST_NONE ? "glibc" : "shim";
}

const char *workload_name(int k)
{
	return k < APP_NPROGRAMS ? app_info[k].name : "mutex-pair";
}

void run_what(const struct apps *a, char *buf, size_t len, enum app_kind k, unsigned t,
	      enum side s)
{
	if (k >= PAIR_SINGLE)
		snprintf(buf, len, "pair (%s) %s", app_info[k].name, side_name(a, s));
	else
		snprintf(buf, len, "%s T=%u %s", app_info[k].name, t, side_name(a, s));
}

/* The run's name in an error: "apps " and run_what's. */
void run_label(const struct apps *a, char *buf, size_t len, enum app_kind k, unsigned t,
	       enum side s)
{
	char what[112];

	run_what(a, what, sizeof what, k, t, s);
	snprintf(buf, len, "apps %s", what);
}

/* ---- the rest of the machine -------------------------------------------- */

void load_since(const struct bench_machine_mark *m, double children_s, struct app_run *r)
{
	struct bench_machine_mark now;

	bench_machine_mark(&now);
	r->other_cpus = bench_other_cpus(m, &now, children_s);
	r->busy_cpus = bench_busy_cpus(m, &now);
}

/* ---- the end of a run ---------------------------------------------------- */

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

/* After the n instances of a run that started at m ended, their output o
 * read into r->inst: r's totals and load; the shim's line at exit of each
 * instance, which each must have (or, on glibc, lack), their futex calls
 * summed; the reports (reports_check).  Frees o. */
void instances_done(const struct apps *a, const char *label, enum side s,
		    const struct bench_machine_mark *m, struct output *o, unsigned n,
		    struct app_run *r)
{
	uint64_t wait = 0, wake = 0;

	sum_instances(r);
	load_since(m, r->cpu_s, r);
	r->loadgen_cpu_s = NAN;
	for (unsigned i = 0; i < n; i++) {
		shim_stats(o[i].err, r);
		check_side(a, label, s, r);
		wait += r->fx_wait;
		wake += r->fx_wake;
	}
	r->fx_wait = wait;
	r->fx_wake = wake;
	reports_check(a, label, s, n, r);
	for (unsigned i = 0; i < n; i++)
		output_free(&o[i]);
}

/* ---- the pair ------------------------------------------------------------ */

void run_pair(const struct apps *a, enum app_kind k, enum side s, struct app_run *r)
{
	char label[128];
	struct cmd argv = { .n = 0 };
	struct child c;
	struct output o;
	struct bench_machine_mark m;
	const char *p;

	run_label(a, label, sizeof label, k, 1, s);
	cmd_add(&argv, a->shim_pair, NULL);
	if (k == PAIR_IDLE)
		cmd_add(&argv, "--idle-thread", NULL);
	cmd_add(&argv, "--pairs", NULL);
	cmd_fmt(&argv, "%lu", a->pairs);
	cmd_add(&argv, "--trials", NULL);
	cmd_fmt(&argv, "%d", PAIR_TRIALS);
	bench_machine_mark(&m);
	run_to_end(a, label, side_shim(a, s), side_report(a, s), "hotlock-shim-pair", &argv,
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
	reports_check(a, label, s, 0, r);       /* never contends */
}

void run_one(const struct apps *a, enum app_kind k, unsigned t, enum side s,
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

/* SPDX-License-Identifier: MIT */
/* hotlock-bench-apps: a run of stress-ng's mutex stressor (and its -x2
 * form): the command line, the threads its worker really ran (seen in
 * /proc while it runs: stress-ng 0.15 ignores --mutex-procs), and the rate
 * from its --metrics-brief line. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "apps.h"

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

void run_stress(const struct apps *a, enum app_kind k, unsigned t, enum side s,
		struct app_run *r)
{
	const unsigned n = app_info[k].instances;
	char label[128];
	struct cmd argv = { .n = 0 };
	struct child c[APP_MAX_INSTANCES];
	struct output o[APP_MAX_INSTANCES];
	unsigned seen[APP_MAX_INSTANCES];
	struct bench_machine_mark m;

	run_label(a, label, sizeof label, k, t, s);
	cmd_add(&argv, a->stress_ng, "--mutex", "1", "--mutex-procs", NULL);
	cmd_fmt(&argv, "%u", t);
	cmd_add(&argv, "--timeout", NULL);
	cmd_fmt(&argv, "%us", a->duration);
	cmd_add(&argv, "--metrics-brief", NULL);

	bench_machine_mark(&m);
	spawn_together(a, s, "stress-ng", &argv, n, c);
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
	instances_done(a, label, s, &m, o, n, r);
}

/* SPDX-License-Identifier: MIT */
/* hotlock-bench-apps: a run of sysbench mutex or sysbench threads (and
 * their -x2 forms, two instances at once): the command line, and the rate
 * from what sysbench prints. */
#include <math.h>

#include "apps.h"

void run_sysbench(const struct apps *a, enum app_kind k, unsigned t, enum side s,
		  struct app_run *r)
{
	const enum app_kind single = app_info[k].single;
	const unsigned n = app_info[k].instances;
	char label[128];
	struct cmd argv = { .n = 0 };
	struct child c[APP_MAX_INSTANCES];
	struct output o[APP_MAX_INSTANCES];
	struct bench_machine_mark m;
	double total, events, timeout;
	uint64_t per_thread = 0;

	run_label(a, label, sizeof label, k, t, s);
	cmd_add(&argv, a->sysbench, single == APP_MUTEX ? "mutex" : "threads", NULL);
	cmd_fmt(&argv, "--threads=%u", t);
	if (single == APP_MUTEX) {
		/* The total is fixed: each thread's share of it. */
		per_thread = MUTEX_LOCKS_PER_S * a->duration / t;
		if (per_thread == 0)
			per_thread = 1;
		cmd_fmt(&argv, "--mutex-num=%d", MUTEX_NUM);
		cmd_fmt(&argv, "--mutex-locks=%llu", (unsigned long long)per_thread);
		cmd_fmt(&argv, "--mutex-loops=%d", MUTEX_LOOPS);
		/* No time limit of sysbench's own (its default is 10 s). */
		cmd_add(&argv, "--time=0", NULL);
		timeout = 60.0 * a->duration * n + 60;
	} else {
		cmd_fmt(&argv, "--thread-yields=%d", THREAD_YIELDS);
		cmd_fmt(&argv, "--thread-locks=%d", THREAD_LOCKS);
		cmd_fmt(&argv, "--time=%u", a->duration);
		timeout = a->duration + 60.0;
	}
	cmd_add(&argv, "run", NULL);

	bench_machine_mark(&m);
	spawn_together(a, s, "sysbench", &argv, n, c);
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
	instances_done(a, label, s, &m, o, n, r);
}

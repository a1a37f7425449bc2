/* SPDX-License-Identifier: MIT */
/* hotlock-bench wake: what a handover between two threads costs when the
 * receiver sleeps on a futex, against when it spins, on different CPUs and on
 * one CPU.  The figures behind the waiting core's spin budget (docs/mutex.md)
 * and, later, hl_swap's choice between spinning and sleeping.
 *
 * Two threads ping-pong on two words: A sets a and wakes B, then waits for b;
 * B waits for a, clears it, sets b and wakes A.  One round trip is two
 * handovers.  Modes:
 *   futex-cross  the threads on two different CPUs, waiting with
 *                hl_futex_wait (each handover: a futex_wake, a wake-up);
 *   futex-same   both threads on one CPU, the same;
 *   spin-cross   two CPUs, waiting by spinning on the word (no syscall).
 * Each mode runs --rounds round trips, --repeat times (the median reported).
 * On a machine with one CPU the cross modes are skipped, with a line saying
 * so. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <hotlock/futex.h>

#include "harness.h"

enum wake_mode { FUTEX_CROSS, FUTEX_SAME, SPIN_CROSS, NMODES };
static const char *const mode_names[NMODES] = { "futex-cross", "futex-same", "spin-cross" };
static const char *const me = "wake";

struct pingpong {
	/* Each word on its own cache line.  Sequentially consistent atomics:
	 * this measures handovers, not memory orders. */
	_Alignas(BENCH_CACHELINE) _Atomic uint32_t a;
	_Alignas(BENCH_CACHELINE) _Atomic uint32_t b;
	_Alignas(BENCH_CACHELINE) unsigned long rounds;
	bool spin;
	int cpu_b;
	hl_futex_stats_t fx_b;
};

static void pin(int cpu)
{
	bench_check(bench_pin_self(cpu), "pthread_setaffinity_np");
}

/* Waits until *w is nonzero, then clears it. */
static void await(_Atomic uint32_t *w, bool spin)
{
	while (!atomic_load(w)) {
		if (spin)
			bench_pause();
		else
			hl_futex_wait((uint32_t *)w, 0, CLOCK_MONOTONIC, NULL);
	}
	atomic_store(w, 0);
}

static void post(_Atomic uint32_t *w, bool spin)
{
	atomic_store(w, 1);
	if (!spin)
		hl_futex_wake((uint32_t *)w, 1);
}

static void *side_b(void *arg)
{
	struct pingpong *p = arg;
	hl_futex_stats_t s0;
	pin(p->cpu_b);
	hl_futex_stats_thread(&s0);
	for (unsigned long i = 0; i < p->rounds; i++) {
		await(&p->a, p->spin);
		post(&p->b, p->spin);
	}
	hl_futex_stats_thread(&p->fx_b);
	p->fx_b.wait -= s0.wait;
	p->fx_b.wake -= s0.wake;
	p->fx_b.other -= s0.other;
	return NULL;
}

struct wake_sample {
	double round_trip_us;
	double futex_calls_per_round_trip;
};

static struct wake_sample run_mode(enum wake_mode mode, unsigned long rounds, int cpu_a, int cpu_b)
{
	struct pingpong *p = aligned_alloc(BENCH_CACHELINE, sizeof *p);
	pthread_t t;
	hl_futex_stats_t s0, s1;
	struct wake_sample out;
	cpu_set_t saved;

	if (!p)
		bench_fatal("out of memory");
	memset(p, 0, sizeof *p);
	p->rounds = rounds;
	p->spin = mode == SPIN_CROSS;
	p->cpu_b = cpu_b;
	bench_check(pthread_getaffinity_np(pthread_self(), sizeof saved, &saved), "pthread_getaffinity_np");
	pin(cpu_a);
	bench_check(pthread_create(&t, NULL, side_b, p), "pthread_create");
	hl_futex_stats_thread(&s0);
	double t0 = bench_now();
	for (unsigned long i = 0; i < rounds; i++) {
		post(&p->a, p->spin);
		await(&p->b, p->spin);
	}
	double t1 = bench_now();
	hl_futex_stats_thread(&s1);
	bench_check(pthread_join(t, NULL), "pthread_join");
	bench_check(pthread_setaffinity_np(pthread_self(), sizeof saved, &saved), "pthread_setaffinity_np");
	out.round_trip_us = (t1 - t0) * 1e6 / (double)rounds;
	out.futex_calls_per_round_trip =
		(double)(hl_futex_stats_calls(&s1) - hl_futex_stats_calls(&s0) +
			 hl_futex_stats_calls(&p->fx_b)) / (double)rounds;
	free(p);
	return out;
}

struct wake_opts {
	unsigned long rounds;
};

static int wake_main(void *ctx, struct bench_common *common)
{
	const unsigned long rounds = ((struct wake_opts *)ctx)->rounds;
	const unsigned long repeat = common->repeat;
	const char *const json_path = common->json;
	int cpus[2] = { -1, -1 };
	cpu_set_t set;

	/* The first two CPUs of our affinity mask. */
	bench_check(sched_getaffinity(0, sizeof set, &set) ? errno : 0, "sched_getaffinity");
	for (int c = 0, n = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;

	struct bench_json *j = json_path ? bench_json_open(json_path) : NULL;
	if (j) {
		bench_json_object(j, NULL);
		bench_json_string(j, "bench", me);
		bench_json_object(j, "config");
		bench_json_uint(j, "rounds", rounds);
		bench_json_uint(j, "repeat", repeat);
		bench_json_string(j, "futex_interface", hl_futex_interface());
		bench_json_run_info(j);
		bench_json_end(j);
		bench_json_layout(j, (const char *const[]){ "mode" }, 1, "round_trip_us", true);
		bench_json_array(j, "results");
	}
	printf("wake: two threads ping-pong, %lu round trips per run, median of %lu runs (futex interface %s)\n",
	       rounds, repeat, hl_futex_interface());
	printf("%-12s %-5s %14s %12s %14s\n", "mode", "cpus", "us/round-trip", "us/handover", "futex/round-trip");
	for (int m = 0; m < NMODES; m++) {
		int a = cpus[0], b = m == FUTEX_SAME ? cpus[0] : cpus[1];
		if (b < 0) {
			printf("%-12s skipped: this process may run on one CPU only\n", mode_names[m]);
			continue;
		}
		double *rt = bench_xcalloc(repeat, sizeof *rt);
		double calls = 0;
		for (unsigned long r = 0; r < repeat; r++) {
			fprintf(stderr, "[%d/%d] wake %s run %lu/%lu\n", m + 1, NMODES, mode_names[m], r + 1, repeat);
			struct wake_sample s = run_mode((enum wake_mode)m, rounds, a, b);
			rt[r] = s.round_trip_us;
			calls = s.futex_calls_per_round_trip;
		}
		double *sorted = bench_xcalloc(repeat, sizeof *sorted);
		memcpy(sorted, rt, repeat * sizeof *rt);
		qsort(sorted, repeat, sizeof *sorted, bench_cmp_double);
		/* For an even R, the upper of the middle two. */
		double med = sorted[repeat / 2];
		char cpustr[16];
		snprintf(cpustr, sizeof cpustr, "%d,%d", a, b);
		printf("%-12s %-5s %14.2f %12.2f %14.2f\n", mode_names[m], cpustr, med, med / 2, calls);
		if (j) {
			bench_json_object(j, NULL);
			bench_json_string(j, "mode", mode_names[m]);
			bench_json_array(j, "cpus");
			bench_json_uint(j, NULL, (uint64_t)a);
			bench_json_uint(j, NULL, (uint64_t)b);
			bench_json_end(j);
			bench_json_number(j, "round_trip_us", med);
			bench_json_number(j, "handover_us", med / 2);
			bench_json_number(j, "futex_calls_per_round_trip", calls);
			bench_json_array(j, "runs");
			for (unsigned long r = 0; r < repeat; r++) {
				bench_json_object(j, NULL);
				bench_json_number(j, "round_trip_us", rt[r]);
				bench_json_end(j);
			}
			bench_json_end(j);
			bench_json_end(j);
		}
		free(rt);
		free(sorted);
	}
	if (j) {
		bench_json_end(j);      /* results */
		bench_json_end(j);      /* the top-level object */
		bench_json_close(j);
	}
	return 0;
}

static const struct bench_option wake_options[] = {
	{ "--rounds", "N", BENCH_OPT_ULONG, offsetof(struct wake_opts, rounds), 1, 1e8,
	  .help = "round trips per run" },
	{ 0 },
};

static const struct wake_opts wake_defaults = { .rounds = 20000 };

const struct bench_scenario bench_scenario_wake = {
	.name = "wake",
	.summary = "two threads ping-pong: a handover to a sleeping (futex) or spinning thread, across CPUs and on one",
	.about =
	"What a handover between two threads costs: a ping-pong on two words,\n"
	"the receiver sleeping on a futex (on two CPUs, and both threads on one)\n"
	"or spinning (two CPUs).  Prints microseconds per round trip (two\n"
	"handovers) and futex calls per round trip; median of --repeat runs.",
	.options = wake_options,
	.common = BENCH_COMMON_REPEAT | BENCH_COMMON_JSON,
	.default_repeat = 3,
	.max_repeat = 100,
	.ctx_size = sizeof(struct wake_opts),
	.ctx_init = &wake_defaults,
	.run = wake_main,
};

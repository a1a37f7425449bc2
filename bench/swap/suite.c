/* SPDX-License-Identifier: MIT */
/* hotlock-bench swap: the suite (swap_main, see swap.h).  Each (placement,
 * load) pair is a block: every mode once per repeat, the modes interleaved,
 * then a row per mode with its median run's figures and the range of its
 * runs, and its JSON result.  The header lines and the JSON config say
 * what was skipped: uring where the kernel refuses it, cross on one CPU. */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <hotlock/config.h>
#include <hotlock/futex.h>

#include "swap.h"
#include "uring.h"

/* What the blocks share. */
struct suite {
	const struct bench_common *common;
	const struct swap_opts *o;
	enum swap_mode modes[NMODES];   /* the modes run, in mode order */
	unsigned nmodes;
	enum placement placements[NPLACEMENTS]; /* in the order given */
	size_t nplacements;
	int cpus[2];            /* the first two CPUs of the affinity mask; -1: none */
	bool uring_ok;          /* uring asked for, and the probe passed */
	char uring_why[256];    /* why not, when it was asked for */
	bool cross_skipped;     /* cross asked for, with one CPU */
	struct bench_json *j;   /* NULL: no --json */
	struct swap_run *runs;  /* [mode * repeat + r]: the block's runs */
};

/* The CPUs, the modes (uring only where the probe passes) and the
 * placements (cross only on two CPUs) to run. */
static void suite_setup(struct suite *s)
{
	const struct swap_opts *o = s->o;
	cpu_set_t set;

	s->cpus[0] = s->cpus[1] = -1;
	bench_check(sched_getaffinity(0, sizeof set, &set) ? errno : 0, "sched_getaffinity");
	for (int c = 0, n = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &set))
			s->cpus[n++] = c;

	if (o->mode[M_URING])
		s->uring_ok = swap_uring_probe(s->uring_why, sizeof s->uring_why) == 0;
	for (int m = 0; m < NMODES; m++)
		if (o->mode[m] && (m != M_URING || s->uring_ok))
			s->modes[s->nmodes++] = (enum swap_mode)m;

	for (size_t i = 0; i < o->nplacements; i++) {
		if (o->placements[i] == P_CROSS && s->cpus[1] < 0)
			s->cross_skipped = true;
		else
			s->placements[s->nplacements++] = o->placements[i];
	}
}

static const char one_cpu[] = "this process may run on one CPU only";

static void print_header(const struct suite *s)
{
	hl_config_t cfg;

	hl_config_get(&cfg);
	printf("swap: two threads ping-pong, %g s per run, median of %u runs, modes interleaved "
	       "(futex interface %s, HOTLOCK_SPIN_NS %llu, CPUs %d,%d, %u online)\n",
	       s->common->duration_s, s->common->repeat, hl_futex_interface(),
	       (unsigned long long)cfg.spin_ns, s->cpus[0], s->cpus[1], bench_cores());
	if (s->uring_ok)
		printf("uring: io_uring futex ops available (rings set up with %s)\n",
		       swap_uring_setup_flags());
	else if (s->uring_why[0])
		printf("uring: skipped: %s\n", s->uring_why);
	if (s->cross_skipped)
		printf("cross: skipped: %s\n", one_cpu);
	fflush(stdout);
}

/* The top-level object up to its "results" array, left open. */
static void json_start(const struct suite *s)
{
	struct bench_json *j = s->j;

	bench_json_object(j, NULL);
	bench_json_string(j, "bench", "swap");
	bench_json_object(j, "config");
	bench_json_array(j, "modes");
	for (unsigned m = 0; m < s->nmodes; m++)
		bench_json_string(j, NULL, swap_mode_names[s->modes[m]]);
	bench_json_end(j);
	bench_json_array(j, "placements");
	for (size_t i = 0; i < s->nplacements; i++)
		bench_json_string(j, NULL, swap_placement_names[s->placements[i]]);
	bench_json_end(j);
	bench_json_uint_array(j, "loads", s->o->loads, s->o->nloads);
	bench_json_number(j, "duration_s", s->common->duration_s);
	bench_json_uint(j, "repeat", s->common->repeat);
	bench_json_array(j, "cpus");
	for (int i = 0; i < 2; i++)
		if (s->cpus[i] >= 0)
			bench_json_uint(j, NULL, (uint64_t)s->cpus[i]);
	bench_json_end(j);
	bench_json_object(j, "uring");
	bench_json_bool(j, "available", s->uring_ok);
	if (s->uring_ok)
		bench_json_string(j, "setup_flags", swap_uring_setup_flags());
	else if (s->uring_why[0])
		bench_json_string(j, "skipped", s->uring_why);
	bench_json_end(j);
	if (s->cross_skipped)
		bench_json_string(j, "cross_skipped", one_cpu);
	bench_json_environment(j);
	bench_json_end(j);
	bench_json_layout(j, (const char *const[]){ "placement", "load", "mode" }, 3,
			  "ns_per_round_trip", true);
	bench_json_array(j, "results");
}

/* What a row shows of one mode's runs. */
struct row {
	enum swap_mode mode;
	const struct swap_run *runs;    /* [repeat] */
	unsigned median;                /* the run with the median ns per round trip */
	double lo, hi;                  /* ns per round trip over the runs that made one */
	double speedup;                 /* wake+wait's median ns over this one's */
};

/* The run with the lower median ns per round trip, a run that made none
 * (NAN) counting as the slowest; of runs with equal figures, the first. */
static unsigned median_run(const struct swap_run *runs, unsigned n)
{
	double *key = bench_xcalloc(n, sizeof *key);
	unsigned med;

	for (unsigned r = 0; r < n; r++)
		key[r] = isnan(runs[r].ns_rt) ? INFINITY : runs[r].ns_rt;
	med = bench_median_index(key, n);
	free(key);
	return med;
}

static struct row make_row(const struct suite *s, enum swap_mode m, double base)
{
	const unsigned repeat = s->common->repeat;
	struct row w = { .mode = m, .runs = &s->runs[(size_t)m * repeat],
			 .lo = INFINITY, .hi = -INFINITY };

	w.median = median_run(w.runs, repeat);
	for (unsigned r = 0; r < repeat; r++) {
		if (isnan(w.runs[r].ns_rt))
			continue;
		w.lo = fmin(w.lo, w.runs[r].ns_rt);
		w.hi = fmax(w.hi, w.runs[r].ns_rt);
	}
	w.speedup = base / w.runs[w.median].ns_rt;
	return w;
}

static void print_head(void)
{
	printf("%-9s %4s %-9s %11s %25s %11s %5s %8s %8s %8s\n", "placement", "load", "mode",
	       "ns/rt", "min..max ns/rt", "cpu-ns/rt", "cpus", "futex/rt", "enter/rt", "speedup");
}

static void print_row(enum placement pl, unsigned load, const struct row *w)
{
	const struct swap_run *s = &w->runs[w->median];
	char range[40];

	if (isinf(w->lo))
		snprintf(range, sizeof range, "-");
	else
		snprintf(range, sizeof range, "%.0f..%.0f", w->lo, w->hi);
	printf("%-9s %4u %-9s", swap_placement_names[pl], load, swap_mode_names[w->mode]);
	bench_print_cell(s->ns_rt, 11, 0);
	printf(" %25s", range);
	bench_print_cell(s->cpu_ns_rt, 11, 0);
	bench_print_cell(s->cpus, 5, 2);
	bench_print_cell(s->futex_rt, 8, 2);
	bench_print_cell(s->enters_rt, 8, 2);
	/* Spinning on one CPU can be thousands of times slower: an exponent
	 * then. */
	if (isnan(w->speedup))
		printf(" %8s\n", "-");
	else
		printf(w->speedup >= 0.01 ? " %8.2f\n" : " %8.1e\n", w->speedup);
}

/* The figures of a run's JSON object after "round_trips", in order; a
 * result's object repeats those marked from its median run. */
static const struct {
	const char *key;
	size_t offset;          /* of a double in struct swap_run */
	bool in_result;
} figures[] = {
	{ "loop_s", offsetof(struct swap_run, loop_s), false },
	{ "ns_per_round_trip", offsetof(struct swap_run, ns_rt), false },
	{ "cpu_ns_per_round_trip", offsetof(struct swap_run, cpu_ns_rt), true },
	{ "cpus_busy", offsetof(struct swap_run, cpus), true },
	{ "futex_calls_per_round_trip", offsetof(struct swap_run, futex_rt), true },
	{ "futex_waits_per_round_trip", offsetof(struct swap_run, futex_wait_rt), false },
	{ "futex_wakes_per_round_trip", offsetof(struct swap_run, futex_wake_rt), false },
	{ "uring_enters_per_round_trip", offsetof(struct swap_run, enters_rt), true },
	{ "other_cpus", offsetof(struct swap_run, other_cpus), false },
};

/* x's figures: all of them, or (result) those a result repeats. */
static void json_figures(struct bench_json *j, const struct swap_run *x, bool result)
{
	for (size_t i = 0; i < sizeof figures / sizeof figures[0]; i++)
		if (!result || figures[i].in_result)
			bench_json_number(j, figures[i].key,
					  *(const double *)((const char *)x + figures[i].offset));
}

/* One object of "results": the row's figures and each run's. */
static void json_row(const struct suite *s, enum placement pl, unsigned load,
		     const struct row *w)
{
	struct bench_json *j = s->j;
	const struct swap_run *m = &w->runs[w->median];

	bench_json_object(j, NULL);
	bench_json_string(j, "placement", swap_placement_names[pl]);
	bench_json_uint(j, "load", load);
	bench_json_string(j, "mode", swap_mode_names[w->mode]);
	bench_json_array(j, "pinned_cpus");
	if (pl != P_FREE) {
		bench_json_uint(j, NULL, (uint64_t)s->cpus[0]);
		bench_json_uint(j, NULL, (uint64_t)(pl == P_SAME ? s->cpus[0] : s->cpus[1]));
	}
	bench_json_end(j);
	bench_json_uint(j, "median_run", w->median);
	bench_json_number(j, "ns_per_round_trip", m->ns_rt);
	bench_json_number(j, "ns_per_round_trip_min", w->lo);
	bench_json_number(j, "ns_per_round_trip_max", w->hi);
	json_figures(j, m, true);
	bench_json_number(j, "speedup_over_wake_wait", w->speedup);
	bench_json_array(j, "runs");
	for (unsigned r = 0; r < s->common->repeat; r++) {
		bench_json_object(j, NULL);
		bench_json_uint(j, "round_trips", w->runs[r].rounds);
		json_figures(j, &w->runs[r], false);
		bench_json_end(j);
	}
	bench_json_end(j);
	bench_json_end(j);
}

/* One (placement, load) block: its runs, then its rows (after the table's
 * heading, for the first block). */
static void run_block(struct suite *s, enum placement pl, unsigned load, bool first)
{
	const unsigned repeat = s->common->repeat;

	for (unsigned r = 0; r < repeat; r++) {
		for (unsigned mi = 0; mi < s->nmodes; mi++) {
			enum swap_mode m = s->modes[mi];
			struct swap_run *x = &s->runs[(size_t)m * repeat + r];
			char result[64];

			bench_progress_begin("swap %s load=%u %s run %u/%u",
					     swap_placement_names[pl], load, swap_mode_names[m],
					     r + 1, repeat);
			*x = swap_run_once(m, pl, load, s->cpus, s->common->duration_s);
			if (isnan(x->ns_rt))
				snprintf(result, sizeof result, "no round trip");
			else
				snprintf(result, sizeof result, "%.0f ns/round-trip", x->ns_rt);
			bench_progress_end(result, x->other_cpus);
		}
	}
	/* wake+wait's median, for the speed-ups. */
	double base = NAN;
	if (s->o->mode[M_WAKE_WAIT]) {
		const struct swap_run *b = &s->runs[(size_t)M_WAKE_WAIT * repeat];
		base = b[median_run(b, repeat)].ns_rt;
	}
	bench_progress_clear();
	if (first)
		print_head();
	for (unsigned mi = 0; mi < s->nmodes; mi++) {
		struct row w = make_row(s, s->modes[mi], base);

		print_row(pl, load, &w);
		if (s->j)
			json_row(s, pl, load, &w);
	}
	fflush(stdout);
}

int swap_main(void *ctx, struct bench_common *common)
{
	struct suite s = { .common = common, .o = ctx };
	const struct swap_opts *o = s.o;

	suite_setup(&s);
	print_header(&s);
	s.j = common->json ? bench_json_open(common->json) : NULL;
	if (s.j)
		json_start(&s);
	bench_progress_start((unsigned)(s.nplacements * o->nloads * common->repeat * s.nmodes));
	s.runs = bench_xcalloc((size_t)NMODES * common->repeat, sizeof *s.runs);
	for (size_t pi = 0; pi < s.nplacements; pi++)
		for (size_t li = 0; li < o->nloads; li++)
			run_block(&s, s.placements[pi], o->loads[li], pi == 0 && li == 0);
	free(s.runs);
	if (s.j) {
		bench_json_end(s.j);    /* results */
		bench_json_end(s.j);    /* the top-level object */
		bench_json_close(s.j);
	}
	return 0;
}

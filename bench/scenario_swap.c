/* SPDX-License-Identifier: MIT */
/* hotlock-bench swap: seed 003's FUTEX_SWAP benchmark ("wake that thread and
 * wait" in one call, claimed 5-10x faster than FUTEX_WAKE + FUTEX_WAIT),
 * against hl_swap, our user-space swap.
 *
 * Two threads ping-pong: T1 wakes T2 and waits, T2 wakes T1 and waits; one
 * round trip is two handovers.  Modes:
 *   wake+wait  each thread has its own 32-bit word; the waker sets the
 *              peer's word and calls hl_futex_wake, then hl_futex_wait on
 *              its own word until it is set, and clears it (the seed's
 *              baseline: two futex calls per handover);
 *   hl_swap    each thread has an hl_swap_point_t: hl_swap(peer, self);
 *   spin       the words, spun on: no syscall (the lower bound);
 *   uring      io_uring's FUTEX_WAKE linked to FUTEX_WAIT, one
 *              io_uring_enter per handover (swap_uring.c; Linux 6.7+).
 * Placements: cross (the two threads on the first two CPUs of the affinity
 * mask), same (both on the first), free (not pinned); and --load N busy
 * threads, not pinned, competing for the CPUs during the measurement.
 *
 * A run lasts --duration; the first thread counts round trips.  Each
 * (placement, load) pair runs every mode once per repeat, the modes
 * interleaved, and reports per mode the median run's figures with the
 * range of the runs: ns per round trip (the first thread's loop time over
 * its round trips), CPU ns per round trip (both ping-pong threads'
 * CLOCK_THREAD_CPUTIME_ID, the load threads excluded), futex syscalls per
 * round trip (hl_futex_stats_total around the run), io_uring_enter calls
 * per round trip (uring), and the speed-up, wake+wait's ns over the mode's.
 *
 * Stopping: the harness sets the stop flag after --duration.  A thread that
 * sees it leaves its loop and wakes its peer once more (in spin mode a
 * spinner also gives up on the flag); the peer, woken by that wake, reads
 * the flag as set (read-read coherence: its waker read it before the
 * release that the peer's acquire saw) and leaves too.  No wake is added
 * from outside the pair, so a wake that hl_swap lost would leave the pair
 * stuck: the harness's watchdog (duration + 30 s) then prints both sides'
 * state and exits 1. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hotlock/config.h>
#include <hotlock/futex.h>
#include <hotlock/swap.h>

#include "harness.h"
#include "swap_uring.h"

enum swap_mode { M_WAKE_WAIT, M_HL_SWAP, M_SPIN, M_URING, NMODES };
static const char *const mode_names[NMODES] = { "wake+wait", "hl_swap", "spin", "uring" };

enum placement { P_CROSS, P_SAME, P_FREE, NPLACEMENTS };
static const char *const placement_names[NPLACEMENTS] = { "cross", "same", "free" };

#define MAX_LOADS 16u
#define MAX_LOAD_THREADS 256u

static const char *const me = "swap";

/* ---- one run --------------------------------------------------------------- */

/* What one ping-pong thread waits on: its word (wake+wait, spin, uring) or
 * its swap point (hl_swap), on a cache line of their own.  Sequentially
 * consistent atomics on the words: this measures handovers, not memory
 * orders. */
struct side {
	_Alignas(BENCH_CACHELINE) _Atomic uint32_t word;
	hl_swap_point_t point;
};

/* What one ping-pong thread measured, written by it alone, read after the
 * join. */
struct side_stats {
	_Alignas(BENCH_CACHELINE) uint64_t rounds;
	uint64_t enters;        /* io_uring_enter calls (uring) */
	double t0, t1;          /* CLOCK_MONOTONIC around its loop */
	double cpu_s;           /* CLOCK_THREAD_CPUTIME_ID over the loop */
};

struct pingpong {
	struct side side[2];
	struct side_stats stats[2];
	enum swap_mode mode;
	int cpu[2];             /* the CPU each side is pinned to; -1: not pinned */
};

/* The handover primitives of each mode.  They return 0, an errno value
 * (the run fails), or -1: stop seen while spinning. */

static int spin_wait(struct bench_thread *t, _Atomic uint32_t *self)
{
	while (!atomic_load(self)) {
		if (bench_should_stop(t))
			return -1;
		bench_pause();
	}
	atomic_store(self, 0);
	return 0;
}

static int futex_await(_Atomic uint32_t *self)
{
	while (!atomic_load(self)) {
		int err = hl_futex_wait((uint32_t *)self, 0, CLOCK_MONOTONIC, NULL);
		if (err && err != EAGAIN && err != EINTR)
			return err;
	}
	atomic_store(self, 0);
	return 0;
}

static void futex_post(_Atomic uint32_t *peer)
{
	atomic_store(peer, 1);
	hl_futex_wake((uint32_t *)peer, 1);
}

struct side_ctx {
	struct bench_thread *t;
	struct pingpong *p;
	struct side *self, *peer;
	struct swap_ring *ring;
	const char *what;       /* the failed step */
};

static int handover(struct side_ctx *c)
{
	switch (c->p->mode) {
	case M_WAKE_WAIT:
		futex_post(&c->peer->word);
		c->what = "hl_futex_wait";
		return futex_await(&c->self->word);
	case M_HL_SWAP:
		c->what = "hl_swap";
		return hl_swap(&c->peer->point, &c->self->point);
	case M_SPIN:
		atomic_store(&c->peer->word, 1);
		return spin_wait(c->t, &c->self->word);
	case M_URING:
		return swap_ring_swap(c->ring, &c->peer->word, &c->self->word, &c->what);
	default:
		return EINVAL;
	}
}

static int first_wait(struct side_ctx *c)
{
	switch (c->p->mode) {
	case M_WAKE_WAIT:
		c->what = "hl_futex_wait";
		return futex_await(&c->self->word);
	case M_HL_SWAP:
		c->what = "hl_wait_self";
		return hl_wait_self(&c->self->point);
	case M_SPIN:
		return spin_wait(c->t, &c->self->word);
	case M_URING:
		return swap_ring_wait(c->ring, &c->self->word, &c->what);
	default:
		return EINVAL;
	}
}

/* The wake a thread leaves with, so that its peer sees the stop flag.  Not
 * through the ring (which may be what failed): one futex call, counted, per
 * run. */
static void last_wake(struct side_ctx *c)
{
	if (c->p->mode == M_HL_SWAP)
		hl_wake(&c->peer->point);
	else if (c->p->mode == M_SPIN)
		atomic_store(&c->peer->word, 1);
	else
		futex_post(&c->peer->word);
}

static uint64_t load_body(struct bench_thread *t)
{
	uint64_t n = 0;

	while (!bench_should_stop(t)) {
		for (int i = 0; i < 256; i++)
			bench_pause();
		n++;
	}
	return n;
}

/* Thread 0 starts each round trip and counts them; thread 1 answers;
 * threads 2.. are the load. */
static uint64_t swap_body(struct bench_thread *t, void *arg)
{
	struct pingpong *p = arg;

	if (t->id >= 2)
		return load_body(t);

	const unsigned id = t->id;
	struct side_ctx c = { .t = t, .p = p, .self = &p->side[id], .peer = &p->side[1 - id] };
	struct side_stats *st = &p->stats[id];
	int err = 0;

	if (p->cpu[id] >= 0 && (err = bench_pin_self(p->cpu[id])) != 0) {
		c.what = "pthread_setaffinity_np";
		goto out;
	}
	if (p->mode == M_URING) {
		char why[160];
		if ((err = swap_ring_open(&c.ring, why, sizeof why)) != 0) {
			c.what = "io_uring setup";
			goto out;
		}
	}
	double cpu0 = bench_thread_cpu_s();
	st->t0 = bench_now();
	if (id == 0) {
		while (!bench_should_stop(t) && (err = handover(&c)) == 0)
			st->rounds++;
	} else if ((err = first_wait(&c)) == 0) {
		while (!bench_should_stop(t) && (err = handover(&c)) == 0)
			;
	}
	st->t1 = bench_now();
	st->cpu_s = bench_thread_cpu_s() - cpu0;
out:
	last_wake(&c);
	if (c.ring) {
		st->enters = swap_ring_enters(c.ring);
		swap_ring_close(c.ring);
	}
	if (err > 0)
		bench_thread_fail(t, c.what ? c.what : "handover", err);
	return st->rounds;
}

static void swap_on_hang(void *arg)
{
	const struct pingpong *p = arg;

	for (int i = 0; i < 2; i++) {
		const struct side *s = &p->side[i];
		const uint32_t *pt = (const uint32_t *)&s->point;
		fprintf(stderr,
			"hotlock-bench: swap %s thread %d: word %u, swap point state %u cpu %u spin %#x\n",
			mode_names[p->mode], i, (unsigned)atomic_load(&s->word), pt[0], pt[1], pt[2]);
	}
}

/* One run's figures. */
struct swap_run {
	uint64_t rounds;
	double loop_s;          /* thread 0's loop */
	double ns_rt;           /* NAN when no round trip was made */
	double cpu_ns_rt;       /* both ping-pong threads */
	double cpus;            /* their CPU time over the loop time: CPUs kept busy */
	double futex_rt, futex_wait_rt, futex_wake_rt;
	double enters_rt;       /* NAN unless uring */
	double other_cpus;      /* the rest of the machine, from the harness */
};

static struct swap_run run_once(enum swap_mode mode, enum placement pl, unsigned load,
				const int cpus[2], double duration_s)
{
	struct pingpong *p = bench_alloc_lines(sizeof *p);
	struct bench_sample sample;
	hl_futex_stats_t f0, f1;
	char label[96];
	struct swap_run out;

	p->mode = mode;
	p->cpu[0] = pl == P_FREE ? -1 : cpus[0];
	p->cpu[1] = pl == P_FREE ? -1 : pl == P_SAME ? cpus[0] : cpus[1];
	snprintf(label, sizeof label, "swap %s load=%u %s", placement_names[pl], load, mode_names[mode]);
	struct bench_run_spec spec = {
		.label = label,
		.threads = 2 + load,
		.duration_s = duration_s,
		.body = swap_body,
		.arg = p,
		.futex_counted = true,
		.on_hang = swap_on_hang,
	};
	hl_futex_stats_total(&f0);
	bench_run(&spec, &sample);
	hl_futex_stats_total(&f1);

	const struct side_stats *a = &p->stats[0], *b = &p->stats[1];
	double rounds = (double)a->rounds;
	out.rounds = a->rounds;
	out.loop_s = a->t1 - a->t0;
	out.ns_rt = a->rounds ? out.loop_s * 1e9 / rounds : NAN;
	out.cpu_ns_rt = a->rounds ? (a->cpu_s + b->cpu_s) * 1e9 / rounds : NAN;
	out.cpus = out.loop_s > 0 ? (a->cpu_s + b->cpu_s) / out.loop_s : NAN;
	out.futex_rt = a->rounds ? (double)(hl_futex_stats_calls(&f1) - hl_futex_stats_calls(&f0)) / rounds : NAN;
	out.futex_wait_rt = a->rounds ? (double)(f1.wait - f0.wait) / rounds : NAN;
	out.futex_wake_rt = a->rounds ? (double)(f1.wake - f0.wake) / rounds : NAN;
	out.enters_rt = mode == M_URING && a->rounds ? (double)(a->enters + b->enters) / rounds : NAN;
	out.other_cpus = sample.other_cpus;
	bench_sample_free(&sample);
	free(p);
	return out;
}

/* ---- command line ---------------------------------------------------------- */

struct swap_opts {
	bool mode[NMODES];
	enum placement placements[NPLACEMENTS];
	size_t nplacements;
	unsigned loads[MAX_LOADS];
	size_t nloads;
};

static void mode_item(void *ctx, const char *e)
{
	struct swap_opts *o = ctx;

	for (int m = 0; m < NMODES; m++) {
		if (strcmp(e, mode_names[m]) == 0) {
			if (o->mode[m])
				bench_usage_error(me, "--modes: '%s' listed twice", e);
			o->mode[m] = true;
			return;
		}
	}
	bench_usage_error(me, "--modes: unknown mode '%s'; valid: wake+wait, hl_swap, spin, uring", e);
}

static void placement_item(void *ctx, const char *e)
{
	struct swap_opts *o = ctx;

	for (int pl = 0; pl < NPLACEMENTS; pl++) {
		if (strcmp(e, placement_names[pl]) == 0) {
			for (size_t i = 0; i < o->nplacements; i++)
				if (o->placements[i] == (enum placement)pl)
					bench_usage_error(me, "--placements: '%s' listed twice", e);
			o->placements[o->nplacements++] = (enum placement)pl;
			return;
		}
	}
	bench_usage_error(me, "--placements: unknown placement '%s'; valid: cross, same, free", e);
}

static void load_item(void *ctx, const char *e)
{
	struct swap_opts *o = ctx;
	unsigned n = (unsigned)bench_parse_ulong(me, "--load", e, 0, MAX_LOAD_THREADS);

	if (o->nloads == MAX_LOADS)
		bench_usage_error(me, "--load: more than %u entries", MAX_LOADS);
	for (size_t i = 0; i < o->nloads; i++)
		if (o->loads[i] == n)
			bench_usage_error(me, "--load: %u listed twice", n);
	o->loads[o->nloads++] = n;
}

/* The list options; each replaces its default (swap_defaults). */
static void parse_modes(void *at, const char *scenario, const char *v)
{
	struct swap_opts *o = at;

	memset(o->mode, 0, sizeof o->mode);
	bench_list_each(scenario, "--modes", v, mode_item, o);
}

static void parse_placements(void *at, const char *scenario, const char *v)
{
	struct swap_opts *o = at;

	o->nplacements = 0;
	bench_list_each(scenario, "--placements", v, placement_item, o);
}

static void parse_loads(void *at, const char *scenario, const char *v)
{
	struct swap_opts *o = at;

	o->nloads = 0;
	bench_list_each(scenario, "--load", v, load_item, o);
}

/* ---- the suite --------------------------------------------------------------- */

/* NAN (no round trip) sorts last. */
static double sort_key(double x)
{
	return isnan(x) ? INFINITY : x;
}

/* The run with the median ns per round trip (the lower median for an even
 * count: a run that happened). */
static unsigned median_run(const struct swap_run *runs, unsigned n)
{
	unsigned idx[100];

	for (unsigned i = 0; i < n; i++)
		idx[i] = i;
	for (unsigned i = 1; i < n; i++)
		for (unsigned k = i; k > 0 && sort_key(runs[idx[k - 1]].ns_rt) > sort_key(runs[idx[k]].ns_rt); k--) {
			unsigned x = idx[k];
			idx[k] = idx[k - 1];
			idx[k - 1] = x;
		}
	return idx[(n - 1) / 2];
}

static int swap_main(void *ctx, struct bench_common *common)
{
	struct swap_opts o = *(struct swap_opts *)ctx;
	int cpus[2] = { -1, -1 };
	cpu_set_t set;
	char uring_why[256] = "";
	bool uring_ok = false;
	hl_config_t cfg;

	bench_check(sched_getaffinity(0, sizeof set, &set) ? errno : 0, "sched_getaffinity");
	for (int c = 0, n = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;

	if (o.mode[M_URING]) {
		uring_ok = swap_uring_probe(uring_why, sizeof uring_why) == 0;
		if (!uring_ok)
			o.mode[M_URING] = false;
	}
	enum swap_mode modes[NMODES];
	unsigned nmodes = 0;
	for (int m = 0; m < NMODES; m++)
		if (o.mode[m])
			modes[nmodes++] = (enum swap_mode)m;

	enum placement placements[NPLACEMENTS];
	size_t nplacements = 0;
	bool cross_skipped = false;
	for (size_t i = 0; i < o.nplacements; i++) {
		if (o.placements[i] == P_CROSS && cpus[1] < 0)
			cross_skipped = true;
		else
			placements[nplacements++] = o.placements[i];
	}

	hl_config_get(&cfg);
	printf("swap: two threads ping-pong, %g s per run, median of %u runs, modes interleaved "
	       "(futex interface %s, HOTLOCK_SPIN_NS %llu, CPUs %d,%d, %u online)\n",
	       common->duration_s, common->repeat, hl_futex_interface(), (unsigned long long)cfg.spin_ns,
	       cpus[0], cpus[1], bench_cores());
	if (uring_ok)
		printf("uring: io_uring futex ops available (rings set up with %s)\n", swap_uring_setup_flags());
	else if (uring_why[0])
		printf("uring: skipped: %s\n", uring_why);
	if (cross_skipped)
		printf("cross: skipped: this process may run on one CPU only\n");
	fflush(stdout);

	struct bench_json *j = common->json ? bench_json_open(common->json) : NULL;
	if (j) {
		bench_json_object(j, NULL);
		bench_json_string(j, "bench", me);
		bench_json_object(j, "config");
		bench_json_array(j, "modes");
		for (unsigned m = 0; m < nmodes; m++)
			bench_json_string(j, NULL, mode_names[modes[m]]);
		bench_json_end(j);
		bench_json_array(j, "placements");
		for (size_t i = 0; i < nplacements; i++)
			bench_json_string(j, NULL, placement_names[placements[i]]);
		bench_json_end(j);
		bench_json_array(j, "loads");
		for (size_t i = 0; i < o.nloads; i++)
			bench_json_uint(j, NULL, o.loads[i]);
		bench_json_end(j);
		bench_json_number(j, "duration_s", common->duration_s);
		bench_json_uint(j, "repeat", common->repeat);
		bench_json_array(j, "cpus");
		for (int i = 0; i < 2; i++)
			if (cpus[i] >= 0)
				bench_json_uint(j, NULL, (uint64_t)cpus[i]);
		bench_json_end(j);
		bench_json_object(j, "uring");
		bench_json_bool(j, "available", uring_ok);
		if (uring_ok)
			bench_json_string(j, "setup_flags", swap_uring_setup_flags());
		else if (uring_why[0])
			bench_json_string(j, "skipped", uring_why);
		bench_json_end(j);
		if (cross_skipped)
			bench_json_string(j, "cross_skipped", "this process may run on one CPU only");
		bench_json_environment(j);
		bench_json_end(j);
		bench_json_layout(j, (const char *const[]){ "placement", "load", "mode" }, 3,
				  "ns_per_round_trip", true);
		bench_json_array(j, "results");
	}

	bench_progress_start((unsigned)(nplacements * o.nloads * common->repeat * nmodes));
	static const char head_fmt[] = "%-9s %4s %-9s %11s %25s %11s %5s %8s %8s %8s\n";
	bool header_done = false;
	struct swap_run *runs = bench_xcalloc((size_t)NMODES * common->repeat, sizeof *runs);

	for (size_t pi = 0; pi < nplacements; pi++) {
		for (size_t li = 0; li < o.nloads; li++) {
			enum placement pl = placements[pi];
			unsigned load = o.loads[li];
			for (unsigned r = 0; r < common->repeat; r++) {
				for (unsigned mi = 0; mi < nmodes; mi++) {
					enum swap_mode m = modes[mi];
					bench_progress_begin("swap %s load=%u %s run %u/%u", placement_names[pl],
							     load, mode_names[m], r + 1, common->repeat);
					struct swap_run *s = &runs[(size_t)m * common->repeat + r];
					*s = run_once(m, pl, load, cpus, common->duration_s);
					char result[64];
					if (isnan(s->ns_rt))
						snprintf(result, sizeof result, "no round trip");
					else
						snprintf(result, sizeof result, "%.0f ns/round-trip", s->ns_rt);
					bench_progress_end(result, s->other_cpus);
				}
			}
			/* wake+wait's median, for the speed-ups. */
			double base = NAN;
			if (o.mode[M_WAKE_WAIT]) {
				const struct swap_run *b = &runs[(size_t)M_WAKE_WAIT * common->repeat];
				base = b[median_run(b, common->repeat)].ns_rt;
			}
			bench_progress_clear();
			if (!header_done) {
				printf(head_fmt, "placement", "load", "mode", "ns/rt", "min..max ns/rt",
				       "cpu-ns/rt", "cpus", "futex/rt", "enter/rt", "speedup");
				header_done = true;
			}
			for (unsigned mi = 0; mi < nmodes; mi++) {
				enum swap_mode m = modes[mi];
				const struct swap_run *mr = &runs[(size_t)m * common->repeat];
				unsigned med = median_run(mr, common->repeat);
				const struct swap_run *s = &mr[med];
				double lo = INFINITY, hi = -INFINITY;
				for (unsigned r = 0; r < common->repeat; r++) {
					if (isnan(mr[r].ns_rt))
						continue;
					lo = fmin(lo, mr[r].ns_rt);
					hi = fmax(hi, mr[r].ns_rt);
				}
				char range[40];
				if (isinf(lo))
					snprintf(range, sizeof range, "-");
				else
					snprintf(range, sizeof range, "%.0f..%.0f", lo, hi);
				double speedup = base / s->ns_rt;
				printf("%-9s %4u %-9s", placement_names[pl], load, mode_names[m]);
				bench_print_cell(s->ns_rt, 11, 0);
				printf(" %25s", range);
				bench_print_cell(s->cpu_ns_rt, 11, 0);
				bench_print_cell(s->cpus, 5, 2);
				bench_print_cell(s->futex_rt, 8, 2);
				bench_print_cell(s->enters_rt, 8, 2);
				/* Spinning on one CPU can be thousands of
				 * times slower: an exponent then. */
				if (isnan(speedup))
					printf(" %8s\n", "-");
				else
					printf(speedup >= 0.01 ? " %8.2f\n" : " %8.1e\n", speedup);
				if (j) {
					bench_json_object(j, NULL);
					bench_json_string(j, "placement", placement_names[pl]);
					bench_json_uint(j, "load", load);
					bench_json_string(j, "mode", mode_names[m]);
					bench_json_array(j, "pinned_cpus");
					if (pl != P_FREE) {
						bench_json_uint(j, NULL, (uint64_t)cpus[0]);
						bench_json_uint(j, NULL, (uint64_t)(pl == P_SAME ? cpus[0] : cpus[1]));
					}
					bench_json_end(j);
					bench_json_uint(j, "median_run", med);
					bench_json_number(j, "ns_per_round_trip", s->ns_rt);
					bench_json_number(j, "ns_per_round_trip_min", lo);
					bench_json_number(j, "ns_per_round_trip_max", hi);
					bench_json_number(j, "cpu_ns_per_round_trip", s->cpu_ns_rt);
					bench_json_number(j, "cpus_busy", s->cpus);
					bench_json_number(j, "futex_calls_per_round_trip",
							  s->futex_rt);
					bench_json_number(j, "uring_enters_per_round_trip",
							  s->enters_rt);
					bench_json_number(j, "speedup_over_wake_wait", speedup);
					bench_json_array(j, "runs");
					for (unsigned r = 0; r < common->repeat; r++) {
						const struct swap_run *x = &mr[r];
						bench_json_object(j, NULL);
						bench_json_uint(j, "round_trips", x->rounds);
						bench_json_number(j, "loop_s", x->loop_s);
						bench_json_number(j, "ns_per_round_trip", x->ns_rt);
						bench_json_number(j, "cpu_ns_per_round_trip",
								  x->cpu_ns_rt);
						bench_json_number(j, "cpus_busy", x->cpus);
						bench_json_number(j, "futex_calls_per_round_trip",
								  x->futex_rt);
						bench_json_number(j, "futex_waits_per_round_trip",
								  x->futex_wait_rt);
						bench_json_number(j, "futex_wakes_per_round_trip",
								  x->futex_wake_rt);
						bench_json_number(j, "uring_enters_per_round_trip",
								  x->enters_rt);
						bench_json_number(j, "other_cpus", x->other_cpus);
						bench_json_end(j);
					}
					bench_json_end(j);
					bench_json_end(j);
				}
			}
			fflush(stdout);
		}
	}
	free(runs);
	if (j) {
		bench_json_end(j);      /* results */
		bench_json_end(j);      /* the top-level object */
		bench_json_close(j);
	}
	return 0;
}

_Static_assert(MAX_LOAD_THREADS == 256, "--load's help says 0 to 256");

static const struct bench_option swap_options[] = {
	{ "--modes", "LIST", BENCH_OPT_CALL, 0, .parse = parse_modes, .help =
	  "of wake+wait (set the peer's word, futex wake, futex wait on the own "
	  "word), hl_swap, spin (no syscall), uring (io_uring FUTEX_WAKE linked to "
	  "FUTEX_WAIT, one io_uring_enter; Linux 6.7+, skipped with a line where "
	  "refused)", .default_text = "all, in that order" },
	{ "--placements", "LIST", BENCH_OPT_CALL, 0, .parse = parse_placements, .help =
	  "of cross (the threads on the first two CPUs of the affinity mask; "
	  "skipped with one CPU), same (both on the first), free (not pinned)",
	  .default_text = "cross,same,free" },
	{ "--load", "LIST", BENCH_OPT_CALL, 0, .parse = parse_loads, .help =
	  "busy-loop threads (not pinned) competing for the CPUs during each run, "
	  "0 to 256 each", .default_text = "0,4" },
	{ 0 },
};

static const struct swap_opts swap_defaults = {
	.mode = { [M_WAKE_WAIT] = true, [M_HL_SWAP] = true, [M_SPIN] = true, [M_URING] = true },
	.placements = { P_CROSS, P_SAME, P_FREE },
	.nplacements = NPLACEMENTS,
	.loads = { 0, 4 },
	.nloads = 2,
};

const struct bench_scenario bench_scenario_swap = {
	.name = "swap",
	.summary = "seed 003: two threads ping-pong through wake+wait, hl_swap, spinning and io_uring, on two CPUs, one, or free, with and without load",
	.about =
	"Seed 003 (FUTEX_SWAP): two threads ping-pong, each waking the other and\n"
	"waiting, in one call (hl_swap, io_uring) or two (futex wake + wait).\n"
	"Prints per (placement, load, mode): ns per round trip (median run, and the\n"
	"range of the runs), CPU ns per round trip of the two threads (load threads\n"
	"excluded) and the CPUs that keeps busy, futex syscalls and io_uring_enter\n"
	"calls per round trip, and the speed-up over wake+wait.  --duration: round\n"
	"trips are counted for that long; --repeat: runs per mode, the modes\n"
	"interleaved within each repeat.",
	.options = swap_options,
	.common = BENCH_COMMON_RUNS,
	.default_duration_s = 1,
	.max_duration_s = 3600,
	.default_repeat = 3,
	.max_repeat = 100,
	.ctx_size = sizeof(struct swap_opts),
	.ctx_init = &swap_defaults,
	.run = swap_main,
};

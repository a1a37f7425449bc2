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
 *              io_uring_enter per handover (swap/uring.c; Linux 6.7+).
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
 * The files: bench/swap/swap.h (what they share), modes.c (one run: the
 * ping-pong of each mode, the load threads, and how a run stops), suite.c
 * (the blocks, the table, the JSON), uring.c (mode uring).  This one is the
 * command line. */
#include <string.h>

#include "swap/swap.h"

static const char *const me = "swap";

/* ---- command line ---------------------------------------------------------- */

static void mode_item(void *ctx, const char *e)
{
	struct swap_opts *o = ctx;

	for (int m = 0; m < NMODES; m++) {
		if (strcmp(e, swap_mode_names[m]) == 0) {
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
		if (strcmp(e, swap_placement_names[pl]) == 0) {
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
	unsigned n = (unsigned)bench_parse_ulong(me, "--load", e, 0, SWAP_MAX_LOAD_THREADS);

	if (o->nloads == SWAP_MAX_LOADS)
		bench_usage_error(me, "--load: more than %u entries", SWAP_MAX_LOADS);
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

_Static_assert(SWAP_MAX_LOAD_THREADS == 256, "--load's help says 0 to 256");

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

/* SPDX-License-Identifier: MIT */
/* hotlock-bench swap: what the scenario's files share (its design is at the
 * top of scenario_swap.c): the modes and placements, the options, and the
 * figures of one run.  modes.c makes one run (the ping-pong of each mode
 * and the load threads), suite.c runs them all and writes the table and
 * the JSON, uring.c is mode uring's io_uring swap. */
#ifndef HOTLOCK_BENCH_SWAP_H
#define HOTLOCK_BENCH_SWAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "harness.h"

enum swap_mode { M_WAKE_WAIT, M_HL_SWAP, M_SPIN, M_URING, NMODES };
enum placement { P_CROSS, P_SAME, P_FREE, NPLACEMENTS };

/* "wake+wait", ...; "cross", ...: the names on the command line, in the
 * table and in the JSON. */
extern const char *const swap_mode_names[NMODES];
extern const char *const swap_placement_names[NPLACEMENTS];

#define SWAP_MAX_LOADS          16u     /* entries in --load */
#define SWAP_MAX_LOAD_THREADS   256u    /* each entry's most */

/* The command line: the modes asked for, the placements and loads in the
 * order given (distinct). */
struct swap_opts {
	bool mode[NMODES];
	enum placement placements[NPLACEMENTS];
	size_t nplacements;
	unsigned loads[SWAP_MAX_LOADS];
	size_t nloads;
};

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

/* One run of mode with load threads beside it; cpus: the first two CPUs of
 * the affinity mask (cpus[1] < 0: one only, then pl is not P_CROSS).  Exits
 * 1 on failure. */
struct swap_run swap_run_once(enum swap_mode mode, enum placement pl, unsigned load,
			      const int cpus[2], double duration_s);

/* The scenario's run: ctx is a struct swap_opts. */
int swap_main(void *ctx, struct bench_common *common);

#endif

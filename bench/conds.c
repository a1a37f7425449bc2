/* SPDX-License-Identifier: MIT */
/* hotlock-bench: the registry of condition variable adapters (conds.h);
 * parsing and listing are the shared registry code of locks.c. */
#include "conds.h"

#include "harness.h"

const struct bench_cond *const bench_conds[] = {
	&bench_cond_glibc,
	&bench_cond_hotlock,
	&bench_cond_futex_cv,
};
static const struct bench_missing missing_conds[] = {
	{ NULL, NULL },
};
BENCH_REGISTRY_DEFINE(bench_cond, bench_conds, missing_conds, bench_nconds,
		      bench_cond_registry, bench_conds_parse, bench_conds_print)

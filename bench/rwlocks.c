/* SPDX-License-Identifier: MIT */
/* hotlock-bench: the registry of reader-writer lock adapters (rwlocks.h);
 * parsing and listing are the shared registry code of locks.c. */
#include "rwlocks.h"

#include "harness.h"
#include "locks.h"

const struct bench_rwlock *const bench_rwlocks[] = {
	&bench_rwlock_hotlock,
	&bench_rwlock_hotlock_reader,
	&bench_rwlock_hotlock_yields,
	&bench_rwlock_hotlock_fair,
	&bench_rwlock_glibc,
	&bench_rwlock_glibc_writer,
	&bench_rwlock_ww,
	&bench_rwlock_ww_writer,
#ifdef HOTLOCK_BENCH_RUST_PEERS
	&bench_rwlock_parking_lot,
	&bench_rwlock_rust_std,
#endif
#ifdef HOTLOCK_BENCH_ABSL
	&bench_rwlock_absl,
#endif
};
static const struct bench_missing missing_rwlocks[] = {
#ifndef HOTLOCK_BENCH_RUST_PEERS
	{ "parking_lot-rw", HOTLOCK_BENCH_RUST_MISSING },
	{ "rust-std-rw", HOTLOCK_BENCH_RUST_MISSING },
#endif
#ifndef HOTLOCK_BENCH_ABSL
	{ "absl-rw", HOTLOCK_BENCH_ABSL_MISSING },
#endif
	{ NULL, NULL },
};
BENCH_REGISTRY_DEFINE(bench_rwlock, bench_rwlocks, missing_rwlocks, bench_nrwlocks,
		      bench_rwlock_registry, bench_rwlocks_parse, bench_rwlocks_print)

/* hotlock-bench: the registry of reader-writer lock adapters (rwlocks.h);
 * parsing and listing are the shared registry code of locks.c. */
#include "rwlocks.h"

#include "harness.h"
#include "locks.h"

const struct bench_rwlock *const bench_rwlocks[] = {
	&bench_rwlock_hotlock,
	&bench_rwlock_glibc,
	&bench_rwlock_glibc_writer,
	&bench_rwlock_ww,
	&bench_rwlock_ww_writer,
};
BENCH_REGISTRY_DEFINE(bench_rwlock, bench_rwlocks, bench_nrwlocks, rwlock_registry,
		      bench_rwlocks_parse, bench_rwlocks_print)

/* SPDX-License-Identifier: MIT */
/* hotlock-bench adapters: hotlock-rw, hotlock's own hl_rwlock_t (one 64-bit
 * state word with the writer's TID, reader count and flags; readers and
 * writers steal until the queue head is due a handoff; readers queued behind
 * writers granted together), in its default (writer-preferring) kind, and
 * hotlock-rw-fair, hotlock-rw-reader and hotlock-rw-yields, its fair,
 * reader-preferring and writer-yields kinds.  Its futex syscalls go through the library's
 * counted futex layer.  The memory orders are the library's; this file only
 * forwards. */
#include <hotlock/rwlock.h>

#include "rwlocks.h"

static int hotlock_rw_init(void *l)
{
	return hl_rwlock_init(l);
}

static int hotlock_rw_init_reader(void *l)
{
	return hl_rwlock_init_kind(l, HL_RWLOCK_PREFER_READER);
}

static int hotlock_rw_init_yields(void *l)
{
	return hl_rwlock_init_kind(l, HL_RWLOCK_WRITER_YIELDS);
}

static int hotlock_rw_init_fair(void *l)
{
	return hl_rwlock_init_kind(l, HL_RWLOCK_FAIR);
}

static int hotlock_rw_destroy(void *l)
{
	return hl_rwlock_destroy(l);
}

static int hotlock_rw_rdlock(void *l)
{
	return hl_rwlock_rdlock(l);
}

static int hotlock_rw_wrlock(void *l)
{
	return hl_rwlock_wrlock(l);
}

static int hotlock_rw_unlock(void *l)
{
	return hl_rwlock_unlock(l);
}

static int hotlock_rw_describe(const void *l, char *buf, size_t len)
{
	return hl_rwlock_describe(l, buf, len);
}

#define HOTLOCK_RW(var, name_, summary_, init_)                               \
	const struct bench_rwlock var = {                                    \
		.name = name_,                                               \
		.summary = summary_,                                         \
		.size = sizeof(hl_rwlock_t),                                 \
		.init = init_,                                               \
		.destroy = hotlock_rw_destroy,                               \
		.rdlock = hotlock_rw_rdlock,                                 \
		.wrlock = hotlock_rw_wrlock,                                 \
		.rdunlock = hotlock_rw_unlock,                               \
		.wrunlock = hotlock_rw_unlock,                               \
		.describe = hotlock_rw_describe,                             \
		.futex_counted = true,                                       \
	}

HOTLOCK_RW(bench_rwlock_hotlock, "hotlock-rw",
	   "hl_rwlock_t (default: writer-preferring): one state word, TP stealing, queued handoff",
	   hotlock_rw_init);
HOTLOCK_RW(bench_rwlock_hotlock_fair, "hotlock-rw-fair",
	   "hl_rwlock_t, fair kind: readers steal until a writer is due (4 ms), reader grouping",
	   hotlock_rw_init_fair);
HOTLOCK_RW(bench_rwlock_hotlock_reader, "hotlock-rw-reader",
	   "hl_rwlock_t, reader-preferring kind (glibc's default semantics)", hotlock_rw_init_reader);
HOTLOCK_RW(bench_rwlock_hotlock_yields, "hotlock-rw-yields",
	   "hl_rwlock_t, writer-yields kind: writer-preferring, the claim yields after 10 ms",
	   hotlock_rw_init_yields);


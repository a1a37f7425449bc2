/* SPDX-License-Identifier: MIT */
/* hotlock-bench adapters: hotlock's own locks, hl_mutex_t, hl_rwlock_t and
 * hl_cond_t, each kind and policy an adapter.  Their futex syscalls go
 * through the library's counted futex layer.  The memory orders are the
 * library's; this file only forwards. */
#include <hotlock/cond.h>
#include <hotlock/mutex.h>
#include <hotlock/rwlock.h>

#include "conds.h"
#include "locks.h"
#include "rwlocks.h"

/* ---- hl_mutex_t --------------------------------------------------------- */

/* hotlock's own hl_mutex_t (TP protocol: owner TID in the lock word, queued
 * waiters that spin briefly and then park on their own futex word, stealing
 * until the queue head is due a handoff), once per waiter-queue policy:
 *   hotlock       HL_QUEUE_DEFAULT: HOTLOCK_QUEUE if set, else CNA when the
 *                 topology has more than one node and FIFO otherwise;
 *   hotlock-fifo  HL_QUEUE_FIFO: waiters served in arrival order;
 *   hotlock-cna   HL_QUEUE_CNA: waiters on the holder's node first, bounded
 *                 by HOTLOCK_CNA_THRESHOLD_NS (docs/cna.md).
 * The three differ in their init only. */

/* hl_mutex_init, then the queue policy, before the mutex is shared. */
static int hotlock_init_queue(void *l, hl_queue_policy_t policy)
{
	int err = hl_mutex_init(l);

	return err ? err : hl_mutex_set_queue(l, policy);
}

static int hotlock_fifo_init(void *l)
{
	return hotlock_init_queue(l, HL_QUEUE_FIFO);
}

static int hotlock_cna_init(void *l)
{
	return hotlock_init_queue(l, HL_QUEUE_CNA);
}

BENCH_FORWARD(hotlock_init, hl_mutex_init) /* HL_QUEUE_DEFAULT */
BENCH_FORWARD(hotlock_destroy, hl_mutex_destroy)
BENCH_FORWARD(hotlock_lock, hl_mutex_lock)
BENCH_FORWARD(hotlock_unlock, hl_mutex_unlock)

static int hotlock_describe(const void *l, char *buf, size_t len)
{
	return hl_mutex_describe(l, buf, len);
}

/* The three adapters differ in their name and queue policy only. */
#define HOTLOCK_ADAPTER(name_, summary_, init_) {		\
	.name = name_,						\
	.summary = summary_,					\
	.size = sizeof(hl_mutex_t),				\
	.init = init_,						\
	.destroy = hotlock_destroy,				\
	.lock = hotlock_lock,					\
	.unlock = hotlock_unlock,				\
	.describe = hotlock_describe,				\
	.futex_counted = true,					\
}

const struct bench_lock bench_lock_hotlock = HOTLOCK_ADAPTER("hotlock",
	"hl_mutex_t: TP protocol, spin then park; default queue (CNA if >1 node, else FIFO)",
	hotlock_init);

const struct bench_lock bench_lock_hotlock_fifo = HOTLOCK_ADAPTER("hotlock-fifo",
	"hl_mutex_t with a FIFO waiter queue (HL_QUEUE_FIFO)",
	hotlock_fifo_init);

const struct bench_lock bench_lock_hotlock_cna = HOTLOCK_ADAPTER("hotlock-cna",
	"hl_mutex_t with the NUMA-aware CNA waiter queue (HL_QUEUE_CNA)",
	hotlock_cna_init);

/* ---- hl_rwlock_t -------------------------------------------------------- */

/* hotlock-rw, hotlock's own hl_rwlock_t (one 64-bit state word with the
 * writer's TID, reader count and flags; readers and writers steal until the
 * queue head is due a handoff; readers queued behind writers granted
 * together), in its default (writer-preferring) kind, and hotlock-rw-fair,
 * hotlock-rw-reader and hotlock-rw-yields, its fair, reader-preferring and
 * writer-yields kinds.  The four differ in their init only. */

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

BENCH_FORWARD(hotlock_rw_init, hl_rwlock_init) /* HL_RWLOCK_PREFER_WRITER */
BENCH_FORWARD(hotlock_rw_destroy, hl_rwlock_destroy)
BENCH_FORWARD(hotlock_rw_rdlock, hl_rwlock_rdlock)
BENCH_FORWARD(hotlock_rw_wrlock, hl_rwlock_wrlock)
BENCH_FORWARD(hotlock_rw_unlock, hl_rwlock_unlock)

static int hotlock_rw_describe(const void *l, char *buf, size_t len)
{
	return hl_rwlock_describe(l, buf, len);
}

/* hl_rwlock_unlock finds out itself which side it releases. */
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

/* ---- hl_cond_t ---------------------------------------------------------- */

/* hotlock's hl_cond_t with the hotlock mutex adapter's hl_mutex_t (default
 * queue policy).  hl_cond_t morphs its waits: a signal or a broadcast moves
 * its waiters, still asleep, onto the mutex's waiter queue, whose unlocks
 * then wake them one at a time (see include/hotlock/cond.h). */

static int hotlock_cond_wait(void *c, void *m)
{
	return hl_cond_wait(c, m);
}

BENCH_FORWARD(hotlock_cond_init, hl_cond_init)
BENCH_FORWARD(hotlock_cond_destroy, hl_cond_destroy)
BENCH_FORWARD(hotlock_cond_signal, hl_cond_signal)
BENCH_FORWARD(hotlock_cond_broadcast, hl_cond_broadcast)

const struct bench_cond bench_cond_hotlock = {
	.name = "hotlock",
	.summary = "hl_cond_t with an hl_mutex_t: signal and broadcast move waiters onto the mutex queue",
	.mutex = &bench_lock_hotlock,
	.size = sizeof(hl_cond_t),
	.init = hotlock_cond_init,
	.destroy = hotlock_cond_destroy,
	.wait = hotlock_cond_wait,
	.signal = hotlock_cond_signal,
	.broadcast = hotlock_cond_broadcast,
	.futex_counted = true,
};

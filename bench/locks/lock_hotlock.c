/* SPDX-License-Identifier: MIT */
/* hotlock-bench adapters: hotlock's own hl_mutex_t (TP protocol: owner TID in
 * the lock word, queued waiters that spin briefly and then park on their own
 * futex word, stealing until the queue head is due a handoff), once per
 * waiter-queue policy:
 *   hotlock       HL_QUEUE_DEFAULT: HOTLOCK_QUEUE if set, else CNA when the
 *                 topology has more than one node and FIFO otherwise;
 *   hotlock-fifo  HL_QUEUE_FIFO: waiters served in arrival order;
 *   hotlock-cna   HL_QUEUE_CNA: waiters on the holder's node first, bounded
 *                 by HOTLOCK_CNA_THRESHOLD_NS (docs/cna.md).
 * The three differ in their init only.  Their futex syscalls go through the
 * library's counted futex layer.  The memory orders are the library's; this
 * file only forwards. */
#include <hotlock/mutex.h>

#include "locks.h"

/* hl_mutex_init, then the queue policy, before the mutex is shared. */
static int hotlock_init_queue(void *l, hl_queue_policy_t policy)
{
	int err = hl_mutex_init(l);

	return err ? err : hl_mutex_set_queue(l, policy);
}

static int hotlock_init(void *l)
{
	return hotlock_init_queue(l, HL_QUEUE_DEFAULT);
}

static int hotlock_fifo_init(void *l)
{
	return hotlock_init_queue(l, HL_QUEUE_FIFO);
}

static int hotlock_cna_init(void *l)
{
	return hotlock_init_queue(l, HL_QUEUE_CNA);
}

static int hotlock_destroy(void *l)
{
	return hl_mutex_destroy(l);
}

static int hotlock_lock(void *l)
{
	return hl_mutex_lock(l);
}

static int hotlock_unlock(void *l)
{
	return hl_mutex_unlock(l);
}

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

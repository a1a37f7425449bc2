/* hotlock-bench adapter: hotlock-rw, hotlock's own hl_rwlock_t (one 64-bit
 * state word with the writer's TID, reader count and flags; readers and
 * writers steal until the queue head is due a handoff; readers queued behind
 * writers granted together).  Its futex syscalls go through the library's
 * counted futex layer.  The memory orders are the library's; this file only
 * forwards. */
#include <hotlock/rwlock.h>

#include "rwlocks.h"

static int hotlock_rw_init(void *l)
{
	return hl_rwlock_init(l);
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

const struct bench_rwlock bench_rwlock_hotlock = {
	.name = "hotlock-rw",
	.summary = "hl_rwlock_t: one state word, TP stealing until a handoff, reader grouping",
	.size = sizeof(hl_rwlock_t),
	.init = hotlock_rw_init,
	.destroy = hotlock_rw_destroy,
	.rdlock = hotlock_rw_rdlock,
	.wrlock = hotlock_rw_wrlock,
	.rdunlock = hotlock_rw_unlock,
	.wrunlock = hotlock_rw_unlock,
	.describe = hotlock_rw_describe,
	.futex_counted = true,
};

/* hotlock-bench adapter: hotlock's own hl_mutex_t (TP protocol: owner TID in
 * the lock word, queued waiters that spin briefly and then park on their own
 * futex word, stealing until the queue head is due a handoff).  Its futex
 * syscalls go through the library's counted futex layer.  The memory orders
 * are the library's; this file only forwards. */
#include <hotlock/mutex.h>

#include "locks.h"

static int hotlock_init(void *l)
{
	return hl_mutex_init(l);
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

const struct bench_lock bench_lock_hotlock = {
	.name = "hotlock",
	.summary = "hl_mutex_t: TP protocol, bounded spin then park, handoff after a bound",
	.size = sizeof(hl_mutex_t),
	.init = hotlock_init,
	.destroy = hotlock_destroy,
	.lock = hotlock_lock,
	.unlock = hotlock_unlock,
	.describe = hotlock_describe,
	.futex_counted = true,
};

/* SPDX-License-Identifier: MIT */
/* A library that makes its own lock fork-safe the usual way, for
 * posix_suite's fork_library_handlers case: its constructor registers
 * pthread_atfork(prepare: lock, parent: unlock, child: unlock).  Linked
 * into posix_suite (not preloaded), so under the shim its constructor, and
 * its atfork registration, come before the shim's: in a fork child its
 * unlock runs before the shim's own child handler. */
#include <pthread.h>
#include <time.h>

static pthread_mutex_t lib_lock = PTHREAD_MUTEX_INITIALIZER;
static long lib_count;

static void prepare(void) { pthread_mutex_lock(&lib_lock); }
static void parent(void) { pthread_mutex_unlock(&lib_lock); }
static void child(void) { pthread_mutex_unlock(&lib_lock); }

__attribute__((constructor)) static void atfork_lib_init(void)
{
	pthread_atfork(prepare, parent, child);
}

/* One call of the library: its lock held for hold_us microseconds. */
long atfork_lib_call(long hold_us)
{
	pthread_mutex_lock(&lib_lock);
	long n = ++lib_count;
	if (hold_us > 0) {
		struct timespec ts = { 0, hold_us * 1000 };
		nanosleep(&ts, NULL);
	}
	pthread_mutex_unlock(&lib_lock);
	return n;
}

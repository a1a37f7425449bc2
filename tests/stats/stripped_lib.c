/* SPDX-License-Identifier: MIT */
/* libhotspots-stripped.so: a library as distributions ship one, its symbol
 * table stripped (linked with -s), so that only its exported functions
 * have names.  stripped_update takes the library's mutex through a static
 * helper, as SQLite takes its mutexes; in the report the helper is an
 * address (libhotspots-stripped.so+0x...), and the site must be
 * stripped_update, the named function that called it (stats_report.py, J). */
#include <pthread.h>

static pthread_mutex_t lib_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long lib_sink;

/* Not inlined, and not a tail call (the store after the lock): its own
 * frame in the stack. */
__attribute__((noinline)) static void lib_enter(void)
{
	pthread_mutex_lock(&lib_lock);
	lib_sink++;
}

__attribute__((visibility("default"))) void stripped_update(void)
{
	lib_enter();
	for (int k = 0; k < 2000; k++)
		lib_sink++;
	pthread_mutex_unlock(&lib_lock);
}

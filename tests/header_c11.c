/* SPDX-License-Identifier: MIT */
/* The public headers compile as strict ISO C11 (-std=c11 -pedantic, no
 * _GNU_SOURCE or POSIX feature macros), as a program that includes them
 * first may be built, and the API links and runs from such a file. */
#undef _GNU_SOURCE
#include <hotlock/hotlock.h>

#include <stdio.h>

static hl_mutex_t lock = HL_MUTEX_INIT;
static hl_rwlock_t rwlock = HL_RWLOCK_INIT;

int main(void)
{
	hl_config_t cfg;
	hl_futex_stats_t st;
	int fails = 0;
	hl_config_get(&cfg);
	fails += hl_mutex_lock(&lock) != 0;
	fails += hl_mutex_trylock(&lock) == 0;
	fails += hl_mutex_unlock(&lock) != 0;
	fails += hl_mutex_destroy(&lock) != 0;
	fails += hl_rwlock_rdlock(&rwlock) != 0;
	fails += hl_rwlock_trywrlock(&rwlock) == 0;
	fails += hl_rwlock_unlock(&rwlock) != 0;
	fails += hl_rwlock_wrlock(&rwlock) != 0;
	fails += hl_rwlock_unlock(&rwlock) != 0;
	fails += hl_rwlock_destroy(&rwlock) != 0;
	hl_futex_stats_thread(&st);
	fails += hl_futex_stats_calls(&st) != 0;
	printf("strict C11 header test: %s\n", fails ? "FAILED" : "ok");
	return fails != 0;
}

/* SPDX-License-Identifier: MIT */
/* A program built against an installed hotlock (tests/install/install.sh):
 * an hl_mutex_t and an hl_rwlock_t shared by two threads.  Prints "ok". */
#include <hotlock/hotlock.h>
#include <pthread.h>
#include <stdio.h>

static hl_mutex_t m = HL_MUTEX_INIT;
static hl_rwlock_t l = HL_RWLOCK_INIT;
static long counter, written;

static void *work(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100000; i++) {
		hl_mutex_lock(&m);
		counter++;
		hl_mutex_unlock(&m);
		if (i % 10 == 0) {
			hl_rwlock_wrlock(&l);
			written++;
			hl_rwlock_unlock(&l);
		} else {
			hl_rwlock_rdlock(&l);
			hl_rwlock_unlock(&l);
		}
	}
	return NULL;
}

int main(void)
{
	pthread_t t;
	pthread_create(&t, NULL, work, NULL);
	work(NULL);
	pthread_join(t, NULL);
	if (counter != 200000 || written != 20000) {
		printf("FAIL: counter %ld written %ld\n", counter, written);
		return 1;
	}
	printf("ok\n");
	return 0;
}

/* SPDX-License-Identifier: MIT */
/* Whether this program's pthread locks are hotlock's (the shim is in use)
 * or glibc's, told from the bytes of locked objects, which the two lay out
 * differently:
 *   mutex, locked:            hotlock: the owner's TID at byte 0;
 *                             glibc: 1 at byte 0, the TID at byte 8
 *   rwlock, one reader:       hotlock: 1 << 32 in the first 8 bytes;
 *                             glibc: __readers (byte 0) = 1 << 3 | flags
 *   condvar, one waiter:      hotlock: the first waiter's node at byte 4;
 *                             glibc: __wseq at byte 0, 0 at byte 4
 * Then contends on a mutex and a condvar so that the shim's futex counters
 * move (shim_active.sh checks them in the shim's report at exit).
 *
 *   shim_active --expect hotlock|glibc
 * Exit 0 when every object is what was expected. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int ready, go;

static uint32_t u32_at(const void *p, size_t off)
{
	uint32_t v;
	memcpy(&v, (const char *)p + off, sizeof(v));
	return v;
}

static void *waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	ready = 1;
	while (!go)
		pthread_cond_wait(&c, &m);
	pthread_mutex_unlock(&m);
	return NULL;
}

static long counter;
static void *contender(void *arg)
{
	(void)arg;
	for (int i = 0; i < 2000; i++) {
		pthread_mutex_lock(&m);
		counter++;
		if (i % 100 == 0) {
			struct timespec ts = { 0, 200000 };
			nanosleep(&ts, NULL);   /* holds it: the others park */
		}
		pthread_mutex_unlock(&m);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3 || strcmp(argv[1], "--expect") ||
	    (strcmp(argv[2], "hotlock") && strcmp(argv[2], "glibc"))) {
		fprintf(stderr, "usage: shim_active --expect hotlock|glibc\n");
		return 2;
	}
	const char *expect = argv[2];
	int bad = 0;

	pthread_mutex_lock(&m);
	uint32_t tid = (uint32_t)gettid(), word = u32_at(&m, 0);
	const char *mutex_is = word == tid ? "hotlock" : word == 1 ? "glibc" : "?";
	pthread_mutex_unlock(&m);
	printf("mutex:   %s (word 0x%x, tid %u)\n", mutex_is, word, tid);
	bad |= strcmp(mutex_is, expect) != 0;

	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	pthread_rwlock_rdlock(&l);
	uint64_t w;
	memcpy(&w, &l, sizeof(w));
	const char *rw_is = w == 1ull << 32 ? "hotlock" : (w & 0xffffffffu) >> 3 == 1 ? "glibc" : "?";
	pthread_rwlock_unlock(&l);
	printf("rwlock:  %s (first word 0x%llx)\n", rw_is, (unsigned long long)w);
	bad |= strcmp(rw_is, expect) != 0;

	pthread_t t;
	pthread_create(&t, NULL, waiter, NULL);
	for (int i = 0; i < 5000; i++) {
		pthread_mutex_lock(&m);
		int r = ready;
		pthread_mutex_unlock(&m);
		if (r)
			break;
		usleep(1000);
	}
	/* The waiter holds the mutex until its wait has listed it, so once
	 * we hold the mutex after `ready`, it waits. */
	pthread_mutex_lock(&m);
	uint32_t b0 = u32_at(&c, 0), b4 = u32_at(&c, 4);
	const char *cond_is = b4 != 0 ? "hotlock" : b0 != 0 ? "glibc" : "?";
	go = 1;
	pthread_cond_signal(&c);
	pthread_mutex_unlock(&m);
	pthread_join(t, NULL);
	printf("condvar: %s (bytes 0-7: 0x%x 0x%x)\n", cond_is, b0, b4);
	bad |= strcmp(cond_is, expect) != 0;

	pthread_t ts[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&ts[i], NULL, contender, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(ts[i], NULL);
	if (counter != 8000) {
		printf("lost updates: %ld of 8000\n", counter);
		bad = 1;
	}
	printf("%s: expected %s\n", bad ? "FAIL" : "ok", expect);
	return bad;
}

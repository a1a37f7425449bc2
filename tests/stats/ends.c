/* SPDX-License-Identifier: MIT */
/* ends: programs that end, or run, the ways a debugging tool is kept for,
 * for stats_faults.py: under hotlock-run --stats each must end exactly as
 * it does without it (docs/stats.md, "What the program sees").
 *
 *   ends MODE [ARG]
 *
 * Every mode first makes its mutex contended (contend(): 4 threads, 50 ms),
 * so that the process has a record and its report is due.  Then:
 *
 *   heap-corrupt  a heap-corrupting write, then malloc: glibc finds the
 *                 corruption inside malloc, with the arena's lock held,
 *                 and aborts (SIGABRT)
 *   double-free   free twice: glibc aborts (SIGABRT)
 *   segv          a write to address 0x10: SIGSEGV, whose core must say so
 *                 (si_code SEGV_MAPERR, si_addr 0x10), not a raise
 *   malloc-loop   threads allocate and free without end, until a signal
 *                 ends the process (the test sends SIGTERM)
 *   exit-handler  as malloc-loop, with a SIGTERM handler that calls
 *                 _exit(7) (a program's own crash or shutdown handler)
 *   fork-walk     a thread walks the loaded modules without end
 *                 (dl_iterate_phdr, whose callback sleeps with the loader's
 *                 lock held) while 30 forks each _exit(0) at once; prints
 *                 "forks N ok"
 *   fd2 FILE      closes fd 2, opens FILE (fd 2 again: a daemon's data
 *                 file), writes 18 bytes to it, contends, exits 0
 *   lines         prints 1000 lines on stdout, exits 0
 *   chdir DIR     chdir(DIR) after contending, exits 0
 *   hold          two threads keep a mutex of its own (held) 1 ms or a
 *                 little more at a time (by the clock, spinning), each
 *                 waiting for the other's, and print the mean hold they
 *                 saw ("hold mean N us"): the report's mean must be that
 *                 one
 *   generation    a generation broadcast: 4 workers wait for the next
 *                 generation with the mutex held, each does its share of
 *                 the work under the mutex and waits again: every woken
 *                 worker has work (no wake-up is futile)
 *   many-statics  20,000 static mutexes, each contended twice: more
 *                 classes than a process's records
 *   name          two threads contend for 50 ms, then one names itself
 *                 with bytes that are not UTF-8 (pthread_setname_np), the
 *                 other "by-prctl" (prctl(PR_SET_NAME)), and each ends at
 *                 once: the collector's reads of /proc saw the names they
 *                 started with, and the report must have the new ones
 *   vfork         a thread started and joined (the process's slot is
 *                 taken, not yet LIVE), a vfork child that ends by
 *                 _exit(3), then contends and exits 0: the report is the
 *                 process's, with its contention and its end, exit 0 (the
 *                 child, which runs in its memory, gave nothing back)
 *   pshared       a process-shared mutex (glibc keeps it), contended by 4
 *                 threads for 100 ms
 *   many-hot S    16 threads take, for S seconds, random ones of 10,000
 *                 static mutexes, two at a time's worth of contention
 *                 (hotlock-top's live view measured on it)
 *   quiet         nothing contended (the mutex stays free), exits 0 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "thread_state.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Through pointers the compiler cannot see through: it may not pair a
 * malloc with its free, or drop either. */
static void *(*volatile alloc)(size_t) = malloc;
static void (*volatile release)(void *) = free;
static atomic_bool stop;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *contender(void *arg)
{
	double end = now() + 0.05;
	(void)arg;
	while (now() < end) {
		pthread_mutex_lock(&lock);
		for (volatile int i = 0; i < 200; i++)
			;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

static void contend(void)
{
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, contender, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
}

static void *allocator(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		void *p = malloc(64 + (size_t)(rand() & 4095));
		free(p);
	}
	return NULL;
}

static void on_term(int sig)
{
	(void)sig;
	_exit(7);
}

static int slow_walk(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info;
	(void)size;
	(void)arg;
	usleep(200);            /* the loader's lock held meanwhile */
	return 0;
}

static void *walker(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop))
		dl_iterate_phdr(slow_walk, NULL);
	return NULL;
}

/* hold's mutex: each hold of it is at least 1 ms by the clock; held_s
 * sums the holds as the program sees them (under the mutex).  Every
 * acquisition but the first and the last waits, so that the report times
 * every hold (none is sampled): a holder keeps it until the other thread
 * has asked for it and sleeps in the kernel, and a releaser asks again
 * only once the other holds it. */
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static double held_s;
static int holds;
static _Atomic long holder_tid[2];
static atomic_bool holder_asks[2], holder_done[2];
static atomic_int held_by = -1;

static void *holder(void *arg)
{
	int me = (int)(intptr_t)arg, other = !me;
	atomic_store(&holder_tid[me], (long)syscall(SYS_gettid));
	for (int i = 0; i < 150; i++) {
		atomic_store(&holder_asks[me], true);
		pthread_mutex_lock(&held);
		atomic_store(&holder_asks[me], false);
		atomic_store(&held_by, me);
		double start = now(), end = start + 0.001;
		while (now() < end)
			;
		while (!atomic_load(&holder_done[other]) &&
		       !(atomic_load(&holder_asks[other]) &&
			 thread_state(atomic_load(&holder_tid[other])) == 'S'))
			usleep(50);
		held_s += now() - start;
		holds++;
		pthread_mutex_unlock(&held);
		usleep(100);
		while (!atomic_load(&holder_done[other]) && atomic_load(&held_by) == me)
			usleep(50);
	}
	atomic_store(&holder_done[me], true);
	return NULL;
}

/* generation: the mutex guards gen and work; each worker takes one item
 * per generation and waits for the next. */
static pthread_cond_t gen_cond = PTHREAD_COND_INITIALIZER;
static unsigned gen, work, done_items;

static void *gen_worker(void *arg)
{
	unsigned seen = 0;
	(void)arg;
	pthread_mutex_lock(&lock);
	for (;;) {
		while (gen == seen && !atomic_load(&stop))
			pthread_cond_wait(&gen_cond, &lock);
		if (atomic_load(&stop))
			break;
		seen = gen;
		work--;         /* its share, under the mutex */
		done_items++;
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

static pthread_mutex_t statics[20000];
static atomic_int want = -1, ack = -1;

/* many-statics' helper: asks for each static mutex while main holds it. */
static void *static_contender(void *arg)
{
	(void)arg;
	for (int i = 0; i < 20000; i++) {
		while (atomic_load(&want) != i)
			;
		atomic_store(&ack, i);
		pthread_mutex_lock(&statics[i]);
		pthread_mutex_unlock(&statics[i]);
	}
	return NULL;
}

static void *idle(void *arg)
{
	return arg;
}

static void *named(void *arg)
{
	contender(NULL);
	if (arg)
		prctl(PR_SET_NAME, (unsigned long)"by-prctl", 0, 0, 0);
	else
		pthread_setname_np(pthread_self(), "caf\xe9-\xff\xfe");
	return NULL;
}

static pthread_mutex_t shared_lock;

static void *shared_contender(void *arg)
{
	double end = now() + 0.1;
	(void)arg;
	while (now() < end) {
		pthread_mutex_lock(&shared_lock);
		for (volatile int i = 0; i < 2000; i++)
			;
		pthread_mutex_unlock(&shared_lock);
	}
	return NULL;
}

static double many_hot_s;

static void *many_hot(void *arg)
{
	unsigned x = (unsigned)(uintptr_t)arg * 2654435761u + 1;
	double end = now() + many_hot_s;
	while (now() < end)
		for (int i = 0; i < 1000; i++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			pthread_mutex_t *m = &statics[x % 10000];
			pthread_mutex_lock(m);
			for (volatile int k = 0; k < 100; k++)
				;
			pthread_mutex_unlock(m);
		}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	const char *arg = argc > 2 ? argv[2] : "";
	if (!strcmp(mode, "quiet")) {
		pthread_mutex_lock(&lock);
		pthread_mutex_unlock(&lock);
		return 0;
	}
	if (!strcmp(mode, "fd2")) {
		close(2);
		int fd = open(arg, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd != 2 || write(fd, "daemon's own data\n", 18) != 18)
			return 1;
	}
	if (!strcmp(mode, "pshared")) {
		pthread_mutexattr_t a;
		pthread_mutexattr_init(&a);
		pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
		pthread_mutex_init(&shared_lock, &a);
		pthread_t t[4];
		for (int i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, shared_contender, NULL);
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
		return 0;
	}
	if (!strcmp(mode, "many-hot")) {
		many_hot_s = atof(arg);
		pthread_t t[16];
		for (int i = 0; i < 16; i++)
			pthread_create(&t[i], NULL, many_hot, (void *)(uintptr_t)(i + 1));
		for (int i = 0; i < 16; i++)
			pthread_join(t[i], NULL);
		return 0;
	}
	if (!strcmp(mode, "name")) {
		pthread_t t[2];
		for (int i = 0; i < 2; i++)
			pthread_create(&t[i], NULL, named, (void *)(uintptr_t)i);
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		return 0;
	}
	if (!strcmp(mode, "vfork")) {
		pthread_t t;
		pthread_create(&t, NULL, idle, NULL);
		pthread_join(t, NULL);
		pid_t child = vfork();
		if (child == 0)
			_exit(3);
		int status = 0;
		if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 3)
			return 1;
		contend();
		return 0;
	}
	contend();
	if (!strcmp(mode, "heap-corrupt")) {
		/* A chunk in the unsorted bin whose size is overwritten: the next
		 * malloc that scans the bin finds it, inside _int_malloc, with
		 * the arena locked. */
		size_t *big = alloc(0x500);
		void *guard = alloc(0x20);
		release(big);
		big[-1] = 0x10;
		void *again = alloc(0x600);
		printf("not detected %p %p\n", guard, again);
		return 0;
	}
	if (!strcmp(mode, "double-free")) {
		char *p = alloc(24);
		release(p);
		release(p);
		return 0;
	}
	if (!strcmp(mode, "segv")) {
		*(volatile int *)0x10 = 1;
		return 0;
	}
	if (!strcmp(mode, "malloc-loop") || !strcmp(mode, "exit-handler")) {
		if (!strcmp(mode, "exit-handler"))
			signal(SIGTERM, on_term);
		pthread_t t[3];
		for (int i = 0; i < 3; i++)
			pthread_create(&t[i], NULL, allocator, NULL);
		printf("allocating\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	if (!strcmp(mode, "fork-walk")) {
		pthread_t w;
		pthread_create(&w, NULL, walker, NULL);
		usleep(20000);
		int ok = 0;
		for (int i = 0; i < 30; i++) {
			pid_t p = fork();
			if (p == 0)
				_exit(0);
			int st;
			if (p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 0)
				ok++;
		}
		atomic_store(&stop, true);
		pthread_join(w, NULL);
		printf("forks %d ok\n", ok);
		return ok == 30 ? 0 : 1;
	}
	if (!strcmp(mode, "lines")) {
		for (int i = 0; i < 1000; i++)
			printf("line %d\n", i);
		return 0;
	}
	if (!strcmp(mode, "chdir"))
		return chdir(arg) == 0 ? 0 : 1;
	if (!strcmp(mode, "hold")) {
		pthread_t h, w;
		pthread_create(&h, NULL, holder, (void *)0);
		pthread_create(&w, NULL, holder, (void *)1);
		pthread_join(h, NULL);
		pthread_join(w, NULL);
		printf("hold mean %.0f us\n", held_s / holds * 1e6);
		return 0;
	}
	if (!strcmp(mode, "generation")) {
		pthread_t t[4];
		for (int i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, gen_worker, NULL);
		for (int g = 0; g < 300; g++) {
			pthread_mutex_lock(&lock);
			gen++;
			work += 4;
			pthread_cond_broadcast(&gen_cond);
			pthread_mutex_unlock(&lock);
			usleep(300);
		}
		atomic_store(&stop, true);
		pthread_mutex_lock(&lock);
		pthread_cond_broadcast(&gen_cond);
		pthread_mutex_unlock(&lock);
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
		printf("generation items %u\n", done_items);
		return 0;
	}
	if (!strcmp(mode, "many-statics")) {
		/* Each contended twice: main holds it while the helper asks. */
		for (int round = 0; round < 2; round++) {
			pthread_t t;
			atomic_store(&want, -1);
			atomic_store(&ack, -1);
			pthread_create(&t, NULL, static_contender, NULL);
			for (int i = 0; i < 20000; i++) {
				pthread_mutex_lock(&statics[i]);
				atomic_store(&want, i);
				while (atomic_load(&ack) != i)
					;
				double end = now() + 20e-6;
				while (now() < end)
					;
				pthread_mutex_unlock(&statics[i]);
			}
			pthread_join(t, NULL);
		}
		return 0;
	}
	return 0;
}

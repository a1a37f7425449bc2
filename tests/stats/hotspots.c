/* SPDX-License-Identifier: MIT */
/* hotspots: a program with known hot and cold locks in named functions, for
 * the contention report's test (stats_report.py): what the report must find.
 *
 *   hotspots [--seconds S] [--pin] [--fork] [--live] [--count]
 *            [--stripped] [--end exit|_exit|sigterm]
 *
 * Three phases, one after the other, each about S/3 seconds (default 1.5 s
 * in all), so that each object's numbers are its own:
 *  1. hot_counter_update: 8 threads take one mutex (through a wrapper,
 *     app_mutex_lock, which the report must look past) and hold it for
 *     about 20 us, with almost no work outside: threads queue for it (the
 *     report's "split-or-shorten").
 *  2. config_read / config_write: 4 readers hold an rwlock (the default,
 *     reader-preferring kind) for about 200 us each, overlapping; one writer
 *     asks for it every millisecond and waits for a gap ("writers-wait");
 *     the readers go on until 0.1 s after the writer's first try.  Both
 *     take it through inlined wrappers (config_lock_shared, _exclusive).
 *  3. ticket_wait / ticket_advance: 6 threads wait on one condvar for their
 *     own ticket; the dispatcher calls each ticket in turn with a
 *     broadcast, so every broadcast wakes the waiters, of which only the
 *     called one proceeds (the others re-wait: counted, no advice).
 * cold_path takes a fourth mutex from one thread only: never contended,
 * it must not appear.
 * --pin: phase 1's workers each on one CPU (i mod the CPUs it may use), so
 * that on a virtual topology of CPU mod N nodes the lock moves between
 * nodes.
 * --fork: then a child process runs phase 1 again (child_counter_update,
 * a mutex of its own) and ends with _exit: its report is its own.
 * --live: then 4 threads take two mutexes of their own in turn
 * (destroyed_counter_update, kept_counter_update) for S/3 seconds and stay
 * alive, idle, to the end; the main thread destroys the first mutex
 * meanwhile.  What those threads counted is theirs until the destruction
 * takes it (the first mutex) and the report at exit does (the second).
 * --count: then 8 threads take a mutex of their own (counted_update)
 * 200,000 times each, mostly without a wait, after one wait that makes
 * it tracked; the line "hotspots: counted N" gives the acquisitions (the
 * report's count of the others is sampled).
 * --stripped: then 4 threads call stripped_update in
 * libhotspots-stripped.so, which takes the library's mutex through a
 * static helper that the stripped library leaves without a name.
 * --end: how the process ends after printing its line (default: return
 * from main): _exit(0), or SIGTERM at its default action.  Compiled with -O1 -fno-inline -g so that the
 * functions keep their names and lines. */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double phase_s = 0.5;
static pthread_mutex_t hot = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cold = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t config = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t ticket_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ticket_cond = PTHREAD_COND_INITIALIZER;
static volatile unsigned long sink;
static unsigned long hot_count, config_value;
static int ticket = -1, next_ticket, stop_tickets;      /* ticket -1: none called */
static long tickets_served;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void busy_us(double us)
{
	double end = now() + us / 1e6;
	while (now() < end)
		sink++;
}

/* A wrapper, as programs have (a Mutex::Lock): the report must point past
 * it, at its caller. */
__attribute__((noinline)) static void app_mutex_lock(pthread_mutex_t *m)
{
	pthread_mutex_lock(m);
}

__attribute__((noinline)) static void hot_counter_update(void)
{
	app_mutex_lock(&hot);
	hot_count++;
	busy_us(20);
	pthread_mutex_unlock(&hot);
}

static int pin;                 /* --pin: hot workers on CPUs i mod CPUs */

static void *hot_worker(void *arg)
{
	if (pin) {
		cpu_set_t all, one;
		CPU_ZERO(&one);
		if (sched_getaffinity(0, sizeof(all), &all) == 0 && CPU_COUNT(&all) > 0) {
			int want = (int)(long)arg % CPU_COUNT(&all), cpu = 0;
			for (int seen = -1; cpu < CPU_SETSIZE; cpu++)
				if (CPU_ISSET(cpu, &all) && ++seen == want)
					break;
			CPU_SET(cpu, &one);
			sched_setaffinity(0, sizeof(one), &one);
		}
	}
	double end = now() + phase_s;
	while (now() < end)
		hot_counter_update();
	return arg;
}

/* Wrappers inlined even at -fno-inline, as a C++ program's lock_guard is:
 * the report must name them from debug information and look past them. */
static inline __attribute__((always_inline)) void config_lock_shared(void)
{
	pthread_rwlock_rdlock(&config);
}

static inline __attribute__((always_inline)) void config_lock_exclusive(void)
{
	pthread_rwlock_wrlock(&config);
}

__attribute__((noinline)) static unsigned long config_read(void)
{
	config_lock_shared();
	unsigned long v = config_value;
	busy_us(200);
	pthread_rwlock_unlock(&config);
	return v;
}

__attribute__((noinline)) static void config_write(void)
{
	config_lock_exclusive();
	config_value++;
	pthread_rwlock_unlock(&config);
}

/* When the writer first asked for the lock: readers go on for at least
 * 0.1 s after it, however late a loaded machine runs the writer. */
static _Atomic double writer_started;

static void *reader(void *arg)
{
	double end = now() + phase_s;
	while (now() < end || !writer_started || now() < writer_started + 0.1)
		sink += config_read();
	return arg;
}

static void *writer(void *arg)
{
	double end = now() + phase_s;
	writer_started = now();
	while (now() < end) {
		config_write();
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
	}
	return arg;
}

/* Waits until the ticket is `mine`; returns 0 once the dispatcher stops. */
__attribute__((noinline)) static int ticket_wait(int mine)
{
	pthread_mutex_lock(&ticket_lock);
	while (ticket != mine && !stop_tickets)
		pthread_cond_wait(&ticket_cond, &ticket_lock);
	int go = !stop_tickets;
	if (go) {
		ticket = -1;            /* served: the dispatcher calls the next */
		tickets_served++;
	}
	pthread_mutex_unlock(&ticket_lock);
	return go;
}

static void *ticket_holder(void *arg)
{
	int mine = (int)(long)arg;
	while (ticket_wait(mine))
		;
	return NULL;
}

__attribute__((noinline)) static void ticket_advance(void)
{
	pthread_mutex_lock(&ticket_lock);
	ticket = next_ticket;
	next_ticket = (next_ticket + 1) % 6;
	pthread_cond_broadcast(&ticket_cond);
	pthread_mutex_unlock(&ticket_lock);
}

static pthread_mutex_t child_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) static void child_counter_update(void)
{
	pthread_mutex_lock(&child_lock);
	hot_count++;
	busy_us(20);
	pthread_mutex_unlock(&child_lock);
}

static void *child_worker(void *arg)
{
	double end = now() + phase_s;
	while (now() < end)
		child_counter_update();
	return arg;
}

__attribute__((noinline)) static void cold_path(void)
{
	pthread_mutex_lock(&cold);
	sink++;
	pthread_mutex_unlock(&cold);
}

static void run(void *(*fn)(void *), int n, void *(*fn2)(void *), int n2)
{
	pthread_t t[16];
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, fn, (void *)(long)i);
	for (int i = 0; i < n2; i++)
		pthread_create(&t[n + i], NULL, fn2, (void *)(long)i);
	for (int i = 0; i < n + n2; i++)
		pthread_join(t[i], NULL);
}

/* --live (see the top). */
static pthread_mutex_t *live_a, *live_b;
static atomic_int live_done;

__attribute__((noinline)) static void destroyed_counter_update(void)
{
	pthread_mutex_lock(live_a);
	hot_count++;
	busy_us(20);
	pthread_mutex_unlock(live_a);
}

__attribute__((noinline)) static void kept_counter_update(void)
{
	pthread_mutex_lock(live_b);
	hot_count++;
	busy_us(20);
	pthread_mutex_unlock(live_b);
}

static void *live_worker(void *arg)
{
	double end = now() + phase_s;
	while (now() < end) {
		destroyed_counter_update();
		kept_counter_update();
	}
	atomic_fetch_add(&live_done, 1);
	for (;;)
		pause();
	return arg;
}

static int run_live(void)
{
	live_a = malloc(sizeof(*live_a));
	live_b = malloc(sizeof(*live_b));
	if (!live_a || !live_b || pthread_mutex_init(live_a, NULL) || pthread_mutex_init(live_b, NULL))
		return -1;
	for (long i = 0; i < 4; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, live_worker, (void *)i) || pthread_detach(t))
			return -1;
	}
	while (atomic_load(&live_done) < 4) {
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
	}
	if (pthread_mutex_destroy(live_a))
		return -1;
	free(live_a);
	return 0;
}

/* --count (see the top). */
static pthread_mutex_t counted = PTHREAD_MUTEX_INITIALIZER;
static unsigned long counted_n;

__attribute__((noinline)) static void counted_update(void)
{
	pthread_mutex_lock(&counted);
	counted_n++;
	for (int k = 0; k < 100; k++)
		sink++;
	pthread_mutex_unlock(&counted);
}

static void *count_worker(void *arg)
{
	for (int i = 0; i < 200000; i++)
		counted_update();
	return arg;
}

static void run_count(void)
{
	/* Held while the workers start: their first calls wait, which
	 * gives the mutex its record. */
	pthread_mutex_lock(&counted);
	pthread_t t[8];
	for (long i = 0; i < 8; i++)
		pthread_create(&t[i], NULL, count_worker, (void *)i);
	struct timespec ms = { 0, 20000000 };
	nanosleep(&ms, NULL);
	pthread_mutex_unlock(&counted);
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	printf("hotspots: counted %lu\n", counted_n);
}

/* --stripped: 4 threads take libhotspots-stripped.so's mutex. */
void stripped_update(void);

static void *stripped_worker(void *arg)
{
	for (int i = 0; i < 3000; i++)
		stripped_update();
	return arg;
}

int main(int argc, char **argv)
{
	int fork_child = 0, live = 0, count = 0, stripped = 0;
	const char *end_how = "exit";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
			phase_s = atof(argv[++i]) / 3;
		} else if (!strcmp(argv[i], "--pin")) {
			pin = 1;
		} else if (!strcmp(argv[i], "--fork")) {
			fork_child = 1;
		} else if (!strcmp(argv[i], "--live")) {
			live = 1;
		} else if (!strcmp(argv[i], "--count")) {
			count = 1;
		} else if (!strcmp(argv[i], "--stripped")) {
			stripped = 1;
		} else if (!strcmp(argv[i], "--end") && i + 1 < argc) {
			end_how = argv[++i];
		} else {
			fprintf(stderr, "usage: hotspots [--seconds S] [--pin] [--fork] [--live] [--count] "
				"[--stripped] [--end exit|_exit|sigterm]\n");
			return 2;
		}
	}
	for (int i = 0; i < 1000; i++)
		cold_path();
	run(hot_worker, 8, NULL, 0);
	run(reader, 4, writer, 1);
	/* Phase 3: the dispatcher calls the tickets in turn, each with a
	 * broadcast that wakes every holder waiting; the one called takes
	 * it, the others wait again. */
	pthread_t t[6];
	for (long i = 0; i < 6; i++)
		pthread_create(&t[i], NULL, ticket_holder, (void *)i);
	double end = now() + phase_s;
	while (now() < end) {
		ticket_advance();
		struct timespec us = { 0, 50000 };
		nanosleep(&us, NULL);
	}
	pthread_mutex_lock(&ticket_lock);
	stop_tickets = 1;
	pthread_cond_broadcast(&ticket_cond);
	pthread_mutex_unlock(&ticket_lock);
	for (int i = 0; i < 6; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 1000; i++)
		cold_path();
	if (count)
		run_count();
	if (stripped)
		run(stripped_worker, 4, NULL, 0);
	if (live && run_live()) {
		fprintf(stderr, "hotspots: --live failed\n");
		return 1;
	}
	if (fork_child) {
		pid_t pid = fork();
		if (pid == 0) {
			run(child_worker, 4, NULL, 0);
			_exit(0);
		}
		int status;
		waitpid(pid, &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "hotspots: the child failed\n");
			return 1;
		}
	}
	printf("hotspots: done\n");
	fflush(stdout);
	if (!strcmp(end_how, "_exit"))
		_exit(0);
	if (!strcmp(end_how, "sigterm"))
		raise(SIGTERM);
	return 0;
}

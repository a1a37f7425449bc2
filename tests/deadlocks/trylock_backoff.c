/* SPDX-License-Identifier: MIT */
/* trylock_backoff: two threads take two mutexes in opposite orders, the
 * second with a trylock, and back off when it is busy (tests/deadlocks.sh,
 * docs/deadlocks.md).
 *
 *   trylock_backoff [ROUNDS]       (200)
 *
 * Each round, thread tb-ab takes a (tb_ab_takes_a), then tries b
 * (tb_ab_tries_b); thread tb-ba takes b (tb_ba_takes_b), then tries a
 * (tb_ba_tries_a).  A trylock that finds its mutex busy (EBUSY) releases
 * the first mutex, sleeps a little (a different time in each thread) and
 * starts over; a thread that has both does a round's work and releases
 * them.  At each round's first attempt, each thread waits until the other
 * holds its first mutex before it tries: at least one of them then finds
 * its second mutex busy and backs off, so every round goes through the
 * back-off (the program checks it, and says "trylock_backoff: R rounds,
 * B back-offs").  The threads start each round together (a barrier).
 *
 * The opposite orders cannot deadlock: a trylock never waits.  Neither
 * hotlock-run --deadlocks nor --lock-order reports anything (a trylock
 * records no lock-order edge); the program ends with status 0. */
#include "dl.h"

#include <stdatomic.h>

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t round_start;
static int rounds = 200;
static atomic_int holds_first[2];       /* the round in which each holds its first mutex */
static atomic_long backoffs;
static long work;                       /* what a round does with both mutexes held */

DL_SITE static void tb_ab_takes_a(void)
{
	dl_check(pthread_mutex_lock(&a), "ab: a");
}

/* 0, or EBUSY: b is held (by tb-ba). */
DL_SITE static int tb_ab_tries_b(void)
{
	int err = pthread_mutex_trylock(&b);
	if (err != EBUSY)
		dl_check(err, "ab: try b");
	return err;
}

DL_SITE static void tb_ba_takes_b(void)
{
	dl_check(pthread_mutex_lock(&b), "ba: b");
}

DL_SITE static int tb_ba_tries_a(void)
{
	int err = pthread_mutex_trylock(&a);
	if (err != EBUSY)
		dl_check(err, "ba: try a");
	return err;
}

struct side {
	int me;
	const char *name;
	pthread_mutex_t *first, *second;
	void (*take_first)(void);
	int (*try_second)(void);
};

static void *worker(void *arg)
{
	const struct side *s = arg;
	dl_name("trylock_backoff", s->name);
	for (int r = 1; r <= rounds; r++) {
		pthread_barrier_wait(&round_start);
		for (int attempt = 0;; attempt++) {
			s->take_first();
			if (attempt == 0) {
				atomic_store(&holds_first[s->me], r);
				while (atomic_load(&holds_first[!s->me]) != r)
					sched_yield();
			}
			if (s->try_second() == 0)
				break;
			dl_check(pthread_mutex_unlock(s->first), "back-off: unlock");
			atomic_fetch_add(&backoffs, 1);
			/* Back off for a time of this side's own: 50 or 100 us, and
			 * longer at each attempt, so that one side gets both. */
			long ns = (s->me + 1) * 50000 + (attempt < 50 ? attempt : 50) * 10000;
			struct timespec ts = { 0, ns };
			nanosleep(&ts, NULL);
		}
		work++;
		dl_check(pthread_mutex_unlock(s->second), "unlock second");
		dl_check(pthread_mutex_unlock(s->first), "unlock first");
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		rounds = atoi(argv[1]);
	if (rounds < 1)
		dl_fail("usage: trylock_backoff [ROUNDS]");
	dl_say("trylock_backoff: pid %d", getpid());
	dl_check(pthread_barrier_init(&round_start, NULL, 2), "pthread_barrier_init");
	static const struct side ab = { 0, "tb-ab", &a, &b, tb_ab_takes_a, tb_ab_tries_b };
	static const struct side ba = { 1, "tb-ba", &b, &a, tb_ba_takes_b, tb_ba_tries_a };
	pthread_t t1 = dl_start(worker, (void *)&ab), t2 = dl_start(worker, (void *)&ba);
	dl_join(t1);
	dl_join(t2);
	long n = atomic_load(&backoffs);
	dl_say("trylock_backoff: %d rounds, %ld back-offs", rounds, n);
	if (work != 2L * rounds || n < rounds)
		dl_fail("trylock_backoff: a round did its work twice, or never backed off");
	return 0;
}
